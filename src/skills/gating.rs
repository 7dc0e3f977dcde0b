//! Whether a skill can work on this machine, decided once at load from
//! `metadata.openclaw` (or its legacy names): every `requires.bins` on PATH,
//! one of `requires.anyBins`, every `requires.env` set, the OS in `os`;
//! `always: true` skips the checks. A skill that fails is listed with the
//! reason and never offered to the model.

use std::path::{Path, PathBuf};

use serde_json::Value;

/// What a skill needs, as its metadata says.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Requirements {
    pub bins: Vec<String>,
    pub any_bins: Vec<String>,
    pub env: Vec<String>,
    /// Normalized OS names (`macos`, `linux`, `windows`, ...); empty: any.
    pub os: Vec<String>,
    pub always: bool,
}

impl Requirements {
    /// From the `metadata.openclaw` object (missing keys: no requirement).
    /// `requires.os` is read too: some skills put it there.
    pub fn from_metadata(openclaw: &Value) -> Self {
        let requires = &openclaw["requires"];
        let mut os = strings(&openclaw["os"]);
        os.extend(strings(&requires["os"]));
        Self {
            bins: strings(&requires["bins"]),
            any_bins: strings(&requires["anyBins"]),
            env: strings(&requires["env"]),
            os: os.iter().map(|o| normalize_os(o)).collect(),
            always: truthy(&openclaw["always"]),
        }
    }
}

/// The machine the checks run against; tests build their own.
pub struct Host {
    /// `std::env::consts::OS` spelling.
    pub os: String,
    pub path: Vec<PathBuf>,
    pub env_is_set: Box<dyn Fn(&str) -> bool + Send + Sync>,
}

impl Host {
    pub fn current() -> Self {
        Self {
            os: std::env::consts::OS.to_string(),
            path: std::env::var_os("PATH")
                .map(|p| std::env::split_paths(&p).collect())
                .unwrap_or_default(),
            env_is_set: Box::new(|name| std::env::var_os(name).is_some_and(|v| !v.is_empty())),
        }
    }

    pub fn has_bin(&self, name: &str) -> bool {
        // A name with a slash is a path, never looked up (nor run) here.
        if name.is_empty() || name.contains('/') {
            return false;
        }
        self.path.iter().any(|dir| is_executable(&dir.join(name)))
    }
}

/// Why the skill cannot be used here; `None` when it can. Names only: an
/// environment variable's value never appears.
pub fn check(requirements: &Requirements, host: &Host) -> Option<String> {
    if requirements.always {
        return None;
    }
    let mut reasons = Vec::new();
    if !requirements.os.is_empty() && !requirements.os.contains(&normalize_os(&host.os)) {
        reasons.push(format!(
            "only for {} (this is {})",
            requirements.os.join(", "),
            host.os
        ));
    }
    let missing: Vec<&str> = requirements
        .bins
        .iter()
        .filter(|b| !host.has_bin(b))
        .map(String::as_str)
        .collect();
    if !missing.is_empty() {
        reasons.push(format!("missing on PATH: {}", missing.join(", ")));
    }
    if !requirements.any_bins.is_empty() && !requirements.any_bins.iter().any(|b| host.has_bin(b)) {
        reasons.push(format!(
            "needs one of: {}",
            requirements.any_bins.join(", ")
        ));
    }
    let unset: Vec<&str> = requirements
        .env
        .iter()
        .filter(|name| !(host.env_is_set)(name))
        .map(String::as_str)
        .collect();
    if !unset.is_empty() {
        reasons.push(format!(
            "environment variable not set: {}",
            unset.join(", ")
        ));
    }
    (!reasons.is_empty()).then(|| reasons.join("; "))
}

/// OpenClaw writes Node's names (`darwin`, `win32`); Rust says `macos`, `windows`.
pub fn normalize_os(name: &str) -> String {
    match name.trim().to_ascii_lowercase().as_str() {
        "darwin" | "macos" | "mac" | "osx" => "macos".into(),
        "win32" | "win" | "windows" => "windows".into(),
        other => other.to_string(),
    }
}

/// A list of strings, or one string (comma-separated lists allowed).
pub fn strings(value: &Value) -> Vec<String> {
    match value {
        Value::Array(items) => items
            .iter()
            .filter_map(|v| v.as_str())
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
            .collect(),
        Value::String(s) => s
            .split(',')
            .map(|p| p.trim().to_string())
            .filter(|p| !p.is_empty())
            .collect(),
        _ => Vec::new(),
    }
}

/// `true`, or the strings "true"/"yes" that hand-written YAML ends up with.
pub fn truthy(value: &Value) -> bool {
    match value {
        Value::Bool(b) => *b,
        Value::String(s) => matches!(s.trim().to_ascii_lowercase().as_str(), "true" | "yes"),
        _ => false,
    }
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn host(path: Vec<PathBuf>, env: &'static [&'static str]) -> Host {
        Host {
            os: "linux".into(),
            path,
            env_is_set: Box::new(move |name| env.contains(&name)),
        }
    }

    fn bin_dir(names: &[&str]) -> tempfile::TempDir {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        for name in names {
            let p = dir.path().join(name);
            std::fs::write(&p, "#!/bin/sh\n").unwrap();
            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        // Present but not executable: not a binary.
        std::fs::write(dir.path().join("notes"), "").unwrap();
        dir
    }

    #[test]
    fn bins_any_bins_env_and_os() {
        let bins = bin_dir(&["gh", "podman"]);
        let h = host(vec![bins.path().to_path_buf()], &["GITHUB_TOKEN"]);
        let req = |m: serde_json::Value| Requirements::from_metadata(&m);

        assert_eq!(check(&req(json!({"requires": {"bins": ["gh"]}})), &h), None);
        let r = check(
            &req(json!({"requires": {"bins": ["gh", "jq", "notes"]}})),
            &h,
        )
        .unwrap();
        assert_eq!(r, "missing on PATH: jq, notes");
        assert_eq!(
            check(
                &req(json!({"requires": {"anyBins": ["docker", "podman"]}})),
                &h
            ),
            None
        );
        let r = check(&req(json!({"requires": {"anyBins": ["docker"]}})), &h).unwrap();
        assert_eq!(r, "needs one of: docker");
        assert_eq!(
            check(&req(json!({"requires": {"env": ["GITHUB_TOKEN"]}})), &h),
            None
        );
        let r = check(
            &req(json!({"requires": {"env": "SPOTIFY_ID, GITHUB_TOKEN"}})),
            &h,
        )
        .unwrap();
        assert_eq!(r, "environment variable not set: SPOTIFY_ID");
        let r = check(&req(json!({"os": ["darwin"]})), &h).unwrap();
        assert_eq!(r, "only for macos (this is linux)");
        assert_eq!(check(&req(json!({"os": ["darwin", "linux"]})), &h), None);
    }

    #[test]
    fn always_skips_every_check_and_reasons_combine() {
        let h = host(Vec::new(), &[]);
        let m = json!({"always": true, "os": "win32", "requires": {"bins": ["x"]}});
        assert_eq!(check(&Requirements::from_metadata(&m), &h), None);
        let m = json!({"os": "win32", "requires": {"bins": ["x"], "env": ["K"]}});
        let r = check(&Requirements::from_metadata(&m), &h).unwrap();
        assert_eq!(
            r,
            "only for windows (this is linux); missing on PATH: x; environment variable not set: K"
        );
    }

    #[test]
    fn a_path_is_never_a_bin() {
        let h = host(vec![PathBuf::from("/")], &[]);
        assert!(!h.has_bin("bin/sh"));
        assert!(!h.has_bin(""));
    }
}
