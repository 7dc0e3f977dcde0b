//! `[delegate.claude_code]`: handing a coding task to Claude Code (the
//! `delegate_claude_code` tool); `[delegate.agents.NAME]`: any agent that
//! speaks the Agent Client Protocol (the `delegate` tool).

use std::collections::BTreeMap;

use serde::Deserialize;

use super::ConfigDuration;

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct DelegateConfig {
    pub claude_code: ClaudeCodeConfig,
    /// ACP agents the `delegate` tool can start, by the name the model
    /// gives.
    pub agents: BTreeMap<String, DelegateAgent>,
}

/// One ACP agent: how to start it and who answers its permission requests.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DelegateAgent {
    /// The program (a name on PATH or a path), speaking ACP on its stdio.
    pub command: String,
    #[serde(default)]
    pub args: Vec<String>,
    /// Names of egirl's environment variables passed on to it (its API key,
    /// its base URL); every other variable is left out.
    #[serde(default)]
    pub env: Vec<String>,
    /// Who answers its `session/request_permission`.
    #[serde(default)]
    pub permissions: ClaudePermissions,
    /// How long one delegation may run before it is cancelled and killed.
    #[serde(default = "default_agent_timeout")]
    pub timeout: ConfigDuration,
    /// What it is good at, shown to the model next to its name.
    #[serde(default)]
    pub description: String,
}

fn default_agent_timeout() -> ConfigDuration {
    ConfigDuration::from_secs(30 * 60)
}

impl DelegateConfig {
    /// Each part's own check: (key, why).
    pub fn check(&self) -> Result<(), (String, String)> {
        self.claude_code.check()?;
        for (name, agent) in &self.agents {
            let key = |leaf: &str| format!("delegate.agents.{name}.{leaf}");
            if agent.command.trim().is_empty() {
                return Err((key("command"), "must name a program".into()));
            }
            if agent.timeout.is_zero() {
                return Err((key("timeout"), "must be more than 0".into()));
            }
            if let Some(bad) = agent.env.iter().find(|v| v.is_empty() || v.contains('=')) {
                return Err((
                    key("env"),
                    format!(
                        "`{bad}` is not a variable name (env lists names; values come from egirl's environment)"
                    ),
                ));
            }
        }
        Ok(())
    }
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
        find_executable(&self.binary).map_err(|why| match self.binary.contains('/') {
            true => why,
            false => format!("{why} (install Claude Code, or set [delegate.claude_code] binary)"),
        })
    }
}

impl DelegateAgent {
    /// The program to start, or why there is none (said by `doctor`).
    pub fn executable(&self) -> Result<std::path::PathBuf, String> {
        find_executable(
            &super::expand_home(self.command.trim())
                .display()
                .to_string(),
        )
    }
}

/// `name` as a path (when it holds a `/`) or looked up on PATH.
fn find_executable(name: &str) -> Result<std::path::PathBuf, String> {
    let name = name.trim();
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
        .ok_or_else(|| format!("`{name}` is not on PATH"))
}

fn is_executable(path: &std::path::Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}
