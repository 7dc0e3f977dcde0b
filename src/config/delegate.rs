//! `[delegate.claude_code]`: handing a coding task to Claude Code (the
//! `delegate_claude_code` tool).

use serde::Deserialize;

use super::ConfigDuration;

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct DelegateConfig {
    pub claude_code: ClaudeCodeConfig,
}

/// Who answers Claude Code's own permission requests.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ClaudePermissions {
    /// egirl's approval modal, with Claude Code's tool and input.
    #[default]
    Ask,
    /// The local model decides; its reason is shown and logged.
    LocalModel,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ClaudeCodeConfig {
    /// The `claude` executable: a name looked up on PATH, or a path.
    pub binary: String,
    pub permissions: ClaudePermissions,
    /// Claude Code tools allowed without asking (its `--allowedTools`).
    pub allowed_tools: Vec<String>,
    /// How long a delegation may run before its process group is killed.
    pub timeout: ConfigDuration,
}

impl Default for ClaudeCodeConfig {
    fn default() -> Self {
        Self {
            binary: "claude".into(),
            permissions: ClaudePermissions::Ask,
            allowed_tools: Vec::new(),
            timeout: ConfigDuration::from_secs(30 * 60),
        }
    }
}

impl ClaudeCodeConfig {
    /// A zero timeout would stop every delegation at once: (key, why).
    pub fn check(&self) -> Result<(), (String, String)> {
        if self.timeout.is_zero() {
            return Err((
                "delegate.claude_code.timeout".into(),
                "must be more than 0".into(),
            ));
        }
        Ok(())
    }

    /// The executable to run, or why there is none (said by `doctor`; the
    /// tool is then not offered).
    pub fn executable(&self) -> Result<std::path::PathBuf, String> {
        let name = self.binary.trim();
        if name.contains('/') {
            let path = std::path::PathBuf::from(name);
            return if is_executable(&path) {
                Ok(path)
            } else {
                Err(format!("{name} is not an executable file"))
            };
        }
        std::env::var_os("PATH")
            .iter()
            .flat_map(std::env::split_paths)
            .map(|dir| dir.join(name))
            .find(|p| is_executable(p))
            .ok_or_else(|| format!("`{name}` is not on PATH (install Claude Code, or set [delegate.claude_code] binary)"))
    }
}

fn is_executable(path: &std::path::Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}
