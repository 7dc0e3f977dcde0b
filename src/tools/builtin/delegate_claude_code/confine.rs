//! What bounds a delegated Claude Code: the exec sandbox, a state dir of
//! its own, and deny rules for `.env` files.
//!
//! Claude Code reads and greps its directory without asking, and with
//! `permissions = "local-model"` the local model approves its shell
//! commands: unbounded, it would be a way around everything that bounds
//! an approved `exec` (docs/design.md §11: nothing the model writes may
//! widen what it can run or read). So it runs in the same sandbox as exec
//! (`[tools.exec] sandbox`; writable: the workspace rules, a private temp
//! dir and its state dir; the protected paths read-only), except that it
//! always has the
//! network: it must reach the Anthropic API and egirl's permission server.
//!
//! Every `.env` / `.env.*` under its directory reads as empty, not only
//! the ones egirl loaded: egirl never knew those values, so redaction could
//! not catch them in what Claude Code sends its API or prints.
//!
//! Its own state (`.claude.json`, sessions, shell snapshots) goes to
//! `CLAUDE_CONFIG_DIR` = `~/.cache/egirl/claude-code/home` (2.1.197 keeps
//! `.claude.json` there too when the variable is set), so the user's home
//! stays read-only for it. Only egirl's flags configure it
//! (`--setting-sources ""`): a settings file the model wrote, in that dir
//! or in the workspace's `.claude/`, cannot allow it more.

use std::path::{Path, PathBuf};

use crate::config::{ExecConfig, ExecSandbox};
use crate::tools::ToolContext;
use crate::tools::sandbox::{self, Prepared, Widening};

/// Where Claude Code keeps its state, egirl's and not the user's.
pub const STATE_DIR: &str = "~/.cache/egirl/claude-code/home";

/// Deny rules passed with `--settings`: the file tools never read a
/// `.env` (the sandbox also hides them from its shell).
pub const DENY_SETTINGS: &str = r#"{"permissions":{"deny":["Read(./.env)","Read(./.env.*)","Read(**/.env)","Read(**/.env.*)"]}}"#;

/// Directories not searched for `.env` files (large, and not the
/// project's own).
const SKIPPED_DIRS: [&str; 3] = [".git", "node_modules", "target"];

/// At most this many directories are searched for `.env` files.
const MAX_DIRS: usize = 5000;

/// The state dir, created (0700) when missing.
pub fn state_dir() -> Result<PathBuf, String> {
    private_dir(
        &crate::config::expand_home(STATE_DIR),
        "Claude Code's state dir",
    )
}

/// `dir` (`what` names it in the error), created 0700 when missing, made
/// canonical: a delegated agent's own writable state.
pub fn private_dir(dir: &Path, what: &str) -> Result<PathBuf, String> {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .map_err(|e| format!("cannot create {what} {}: {e}", dir.display()))?;
    Ok(std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf()))
}

/// The sandbox for a delegation in `dir` (Claude Code's, and any ACP
/// agent's: the same bounds) with `state` writable: Ok(None) when
/// `[tools.exec] sandbox = "off"`, Err(one line) when it must not start.
pub fn prepare(ctx: &ToolContext, dir: &Path, state: &Path) -> Result<Option<Prepared>, String> {
    let exec = ExecConfig {
        network: true,
        ..ctx.exec.clone()
    };
    if exec.sandbox == ExecSandbox::Off {
        return Ok(None);
    }
    let extra = Widening {
        writable: vec![state.to_path_buf()],
        hidden: env_files_under(dir),
    };
    sandbox::prepare_with(ctx, &exec, &extra)
}

/// Every `.env` / `.env.*` file under `dir` (bounded; symlinks not
/// followed).
fn env_files_under(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    let mut seen = 0;
    while let Some(d) = stack.pop() {
        seen += 1;
        if seen > MAX_DIRS {
            break;
        }
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            let name = entry.file_name();
            if kind.is_dir() {
                if !SKIPPED_DIRS.iter().any(|s| name == *s) {
                    stack.push(path);
                }
            } else if kind.is_file() && sandbox::protected::is_env_file(&path) {
                found.push(path);
            }
        }
    }
    found
}

/// What `egirl doctor` says of the delegation's sandbox.
pub fn describe(exec: &ExecConfig) -> String {
    let exec = ExecConfig {
        network: true,
        ..exec.clone()
    };
    sandbox::describe(&exec)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn env_files_are_found_below_the_dir_but_not_in_skipped_dirs() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("app/node_modules/x")).unwrap();
        std::fs::create_dir_all(root.join(".git")).unwrap();
        for f in [
            ".env",
            "app/.env.local",
            "app/node_modules/x/.env",
            ".git/.env",
            "app/env.txt",
        ] {
            std::fs::write(root.join(f), "A=1\n").unwrap();
        }
        let mut found = env_files_under(root);
        found.sort();
        assert_eq!(found, [root.join(".env"), root.join("app/.env.local")]);
    }
}
