//! Paths the model must not change, and files it must not read.
//!
//! A model that can rewrite what egirl or an allowed program reads can widen
//! what it may run: `.git/config` (`core.fsmonitor`, hooks) runs code on the
//! next rule-allowed `git status`, the config file can set
//! `approval = "full"`, a `.env` can plant `BASH_ENV`, a forged transcript is
//! sent back as history. So these are read-only for the file tools,
//! `create_skill` and sandboxed commands:
//!
//! - `.git/` anywhere under a root (a nested repository is as dangerous),
//! - `<workspace>/.egirl/` (approvals, cron jobs, the memory index),
//! - `<workspace>/sessions/` (transcripts),
//! - the config file in use and every `.env` egirl read at start-up,
//! - any file named `.env` or `.env.<something>`.
//!
//! `.env` files hold secrets: the file tools may not read them either.
//! Sandboxed commands read the loaded ones as empty (`/dev/null` bound over
//! them); other `.env` files they may read, and what they print is redacted.

use std::ffi::OsStr;
use std::path::{Component, Path, PathBuf};

#[derive(Clone, Debug, Default)]
pub struct ProtectedPaths {
    /// Absolute, canonical where they exist: never written by the model.
    read_only: Vec<PathBuf>,
    /// The `.env` files egirl loaded (canonical): never read by file tools.
    env_files: Vec<PathBuf>,
    /// Every config and `.env` egirl looks for at start-up (canonical),
    /// existing or not; also in `read_only`.
    start_up: Vec<PathBuf>,
    /// Directories of secrets (the gateway's tokens): never read by file
    /// tools; commands read their files as empty.
    secret_dirs: Vec<PathBuf>,
    /// Every other agent's workspace (canonical, existing or not), with
    /// its agent: neither read nor written by file tools, read-only for
    /// commands.
    other_workspaces: Vec<(String, PathBuf)>,
}

impl ProtectedPaths {
    /// `workspace` canonical; `config_file` the config in use (if any);
    /// `env_files` the `.env` files loaded at start-up.
    pub fn new(workspace: &Path, config_file: Option<&Path>, env_files: &[PathBuf]) -> Self {
        let mut read_only: Vec<PathBuf> = [".git", ".egirl", "sessions"]
            .iter()
            .map(|name| canonical(&workspace.join(name)))
            .collect();
        read_only.extend(config_file.map(canonical));
        let env_files: Vec<PathBuf> = env_files.iter().map(|p| canonical(p)).collect();
        read_only.extend(env_files.iter().cloned());
        read_only.dedup();
        Self {
            read_only,
            env_files,
            start_up: Vec::new(),
            secret_dirs: Vec::new(),
            other_workspaces: Vec::new(),
        }
    }

    /// Adds what is egirl's in another workspace (`.git`, `.egirl`,
    /// `sessions`): the paths of an agent's own workspace, for an agent
    /// whose protection was built on the default one.
    pub fn with_workspace(mut self, workspace: &Path) -> Self {
        for name in [".git", ".egirl", "sessions"] {
            let path = canonical(&workspace.join(name));
            if !self.read_only.contains(&path) {
                self.read_only.push(path);
            }
        }
        self
    }

    /// Adds the workspaces of the other agents (as configured, existing
    /// or not): an agent's file tools neither read nor write them, even
    /// through an allowed path that contains them, and its commands see
    /// them read-only.
    pub fn with_other_workspaces<'a>(
        mut self,
        workspaces: impl IntoIterator<Item = (&'a str, &'a Path)>,
    ) -> Self {
        for (agent, workspace) in workspaces {
            let path = canonical(workspace);
            if !self.read_only.contains(&path) {
                self.read_only.push(path.clone());
            }
            self.other_workspaces.push((agent.to_string(), path));
        }
        self
    }

    /// The other agents' workspaces (commands see them empty).
    pub fn other_workspaces(&self) -> Vec<PathBuf> {
        self.other_workspaces
            .iter()
            .map(|(_, path)| path.clone())
            .collect()
    }

    /// The agent whose workspace holds `path`, when it is another's.
    fn other_agent(&self, path: &Path) -> Option<&str> {
        self.other_workspaces
            .iter()
            .find(|(_, workspace)| path.starts_with(workspace))
            .map(|(agent, _)| agent.as_str())
    }

    /// Adds a directory of secrets (`config::gateway::secrets_dir`): read
    /// by neither the file tools nor commands.
    pub fn with_secret_dir(mut self, dir: PathBuf) -> Self {
        self.secret_dirs.push(canonical(&dir));
        self
    }

    /// The files in the secret directories now, for commands to read as
    /// empty (the tokens are made while egirl runs, so listed per command).
    pub fn secret_files(&self) -> Vec<PathBuf> {
        self.secret_dirs
            .iter()
            .filter_map(|dir| std::fs::read_dir(dir).ok())
            .flatten()
            .filter_map(Result::ok)
            .map(|entry| entry.path())
            .collect()
    }

    /// Adds the files egirl would read at its next start (every config and
    /// `.env` it looks for, existing or not): a model that planted one would
    /// choose the next run's approvals and sandbox.
    pub fn with_start_up_files(mut self, files: impl IntoIterator<Item = PathBuf>) -> Self {
        for file in files {
            let file = canonical(&file);
            if !self.read_only.contains(&file) {
                self.read_only.push(file.clone());
            }
            self.start_up.push(file);
        }
        self
    }

    /// The files egirl looks for at start-up, existing or not (the
    /// existing ones are bound read-only for commands; a missing one a
    /// command creates is never loaded untrusted).
    pub fn start_up_files(&self) -> &[PathBuf] {
        &self.start_up
    }

    /// The fixed read-only paths (they may not exist yet); the sandbox
    /// mounts the existing ones read-only for commands.
    pub fn read_only(&self) -> &[PathBuf] {
        &self.read_only
    }

    /// The `.env` files egirl loaded (commands lose their variables).
    pub fn env_files(&self) -> &[PathBuf] {
        &self.env_files
    }

    /// Why a write to `path` (canonical, from `paths::resolve`) is refused,
    /// as one line for the model; None when it may be written.
    pub fn write_refusal(&self, path: &Path, shown: &str) -> Option<String> {
        if let Some(agent) = self.other_agent(path) {
            return Some(another_agents(shown, agent));
        }
        if let Some(root) = self.read_only.iter().find(|p| path.starts_with(p)) {
            let what = describe(root);
            return Some(format!(
                "`{shown}` is protected ({what}); the model may not change it"
            ));
        }
        if has_git_component(path) {
            return Some(format!(
                "`{shown}` is inside a .git directory, which is protected (git runs what its config and hooks say); the model may not change it"
            ));
        }
        if is_env_file(path) {
            return Some(format!(
                "`{shown}` is a .env file (secrets and start-up environment); the model may not change it"
            ));
        }
        None
    }

    /// Why reading `path` is refused; None when it may be read.
    pub fn read_refusal(&self, path: &Path, shown: &str) -> Option<String> {
        if let Some(agent) = self.other_agent(path) {
            return Some(another_agents(shown, agent));
        }
        if self.secret_dirs.iter().any(|dir| path.starts_with(dir)) {
            return Some(format!(
                "`{shown}` holds the gateway's tokens; file tools may not read it"
            ));
        }
        if is_env_file(path) || self.env_files.iter().any(|p| p == path) {
            return Some(format!(
                "`{shown}` is a .env file; it holds secrets and file tools may not read it"
            ));
        }
        None
    }
}

fn another_agents(shown: &str, agent: &str) -> String {
    format!("`{shown}` is in agent `{agent}`'s workspace; each agent's files are its own")
}

/// `.env`, `.env.local`, `.env.production`...: the dotenv family. Any
/// case: on a case-insensitive filesystem (macOS) `.ENV` is `.env`.
pub fn is_env_file(path: &Path) -> bool {
    path.file_name()
        .and_then(OsStr::to_str)
        .map(str::to_ascii_lowercase)
        .is_some_and(|name| name == ".env" || name.starts_with(".env."))
}

/// A `.git` directory anywhere in the path, in any case (`.GIT/config` is
/// git's config on a case-insensitive filesystem).
fn has_git_component(path: &Path) -> bool {
    path.components().any(|c| {
        matches!(c, Component::Normal(name) if name.to_str().is_some_and(|n| n.eq_ignore_ascii_case(".git")))
    })
}

fn describe(root: &Path) -> &'static str {
    match root.file_name().and_then(OsStr::to_str) {
        Some(".git") => "git's config and hooks run code",
        Some(".egirl") => "egirl's own state: approvals, cron jobs, the memory index",
        Some("sessions") => "session transcripts, sent back to the model as history",
        // `$XDG_CONFIG_HOME/egirl` (`config::trust::state_dir`).
        Some("egirl") => "egirl's trust store: the start-up files the next start loads",
        _ if is_env_file(root) => "a .env file egirl reads at start-up",
        _ => "egirl's config file",
    }
}

/// Canonical when it exists; else its deepest existing ancestor, canonical,
/// joined with the missing rest, so a protected path created later (even
/// with its directory, `~/.egirl/egirl.toml`) still compares equal.
pub(crate) fn canonical(path: &Path) -> PathBuf {
    let path = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let mut missing = Vec::new();
    let mut existing = path.as_path();
    loop {
        if let Ok(c) = std::fs::canonicalize(existing) {
            return missing.iter().rev().fold(c, |acc, name| acc.join(name));
        }
        match (existing.parent(), existing.file_name()) {
            (Some(parent), Some(name)) => {
                missing.push(name);
                existing = parent;
            }
            _ => return path.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn setup() -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().join("ws");
        std::fs::create_dir_all(ws.join(".git")).unwrap();
        (dir, std::fs::canonicalize(ws).unwrap())
    }

    #[test]
    fn state_git_transcripts_config_and_env_are_read_only() {
        let (_dir, ws) = setup();
        let config = ws.join("egirl.toml");
        std::fs::write(&config, "").unwrap();
        let env = ws.join("conf/.env");
        let p = ProtectedPaths::new(&ws, Some(&config), std::slice::from_ref(&env));
        for blocked in [
            ".git/config",
            ".git/hooks/pre-commit",
            ".egirl/approvals.toml",
            "sessions/tui.jsonl",
            "egirl.toml",
            "conf/.env",
            "sub/.env.local",
            "vendor/lib/.git/config",
            ".GIT/config",
            "sub/.Env",
        ] {
            assert!(
                p.write_refusal(&ws.join(blocked), blocked).is_some(),
                "{blocked}"
            );
        }
        for fine in [
            "notes.md",
            "src/git.rs",
            ".gitignore",
            "session.md",
            "env.md",
        ] {
            assert!(p.write_refusal(&ws.join(fine), fine).is_none(), "{fine}");
        }
        let why = p
            .write_refusal(&ws.join(".git/config"), ".git/config")
            .unwrap();
        assert!(why.contains("`.git/config` is protected"), "{why}");
    }

    #[test]
    fn env_files_are_unreadable_and_the_rest_readable() {
        let (dir, ws) = setup();
        let outside = dir.path().join("secrets.env");
        let p = ProtectedPaths::new(&ws, None, std::slice::from_ref(&outside));
        assert!(p.read_refusal(&ws.join(".env"), ".env").is_some());
        assert!(
            p.read_refusal(&ws.join("a/.env.prod"), "a/.env.prod")
                .is_some()
        );
        assert!(p.read_refusal(&outside, "x").is_some());
        assert!(p.read_refusal(&ws.join(".git/config"), "x").is_none());
        assert!(p.read_refusal(&ws.join("environment.md"), "x").is_none());
    }

    #[test]
    fn the_gateway_secrets_are_read_by_no_tool() {
        let (dir, ws) = setup();
        let secrets = dir.path().join("config/egirl/gateway");
        std::fs::create_dir_all(&secrets).unwrap();
        std::fs::write(secrets.join("token"), "egt_x").unwrap();
        let p = ProtectedPaths::new(&ws, None, &[]).with_secret_dir(secrets.clone());
        let token = std::fs::canonicalize(secrets.join("token")).unwrap();
        assert!(p.read_refusal(&token, "token").is_some());
        assert_eq!(p.secret_files(), vec![token]);
        assert!(p.read_refusal(&ws.join("notes.md"), "x").is_none());
    }
}
