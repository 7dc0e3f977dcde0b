//! The doctor's security lines: the trust store, secrets and redaction,
//! literal MCP secrets, and start-up files that lie inside the workspace.

use std::path::{Path, PathBuf};

use super::super::Environment;
use super::Report;

/// What the trust store holds: start-up files the model could have
/// written load only while listed there (docs/security.md).
pub(super) fn trust_summary() -> String {
    match crate::config::trust::TrustStore::open() {
        Ok(store) => format!(
            "{} start-up file(s) trusted in {} (`egirl trust --list`); a config or .env the model could have written loads only while trusted",
            store.entries().len(),
            store.path().display()
        ),
        Err(e) => format!("the trust store cannot be read: {e}"),
    }
}

/// Which secret variables are set, and what redaction hides.
pub(super) fn secrets_and_redaction(env: &Environment, report: &mut Report) {
    for (var, present) in env.secrets.presence() {
        report.line(
            None,
            var,
            if present {
                "set".into()
            } else {
                "not set".into()
            },
        );
    }
    report.line(
        None,
        "redaction",
        if env.redactor.is_empty() {
            "no secret values found to redact".to_string()
        } else {
            format!(
                "the values of {} are shown as [redacted:NAME] wherever egirl shows, stores or sends text",
                env.redactor.names().join(", ")
            )
        },
    );
}

/// One note per MCP `env`/`headers` entry whose name marks a secret and
/// whose value is written out in the config (never the value itself):
/// `${NAME}` keeps it out of a file that is read, copied and shared.
pub(super) fn mcp_literal_secrets(mcp: &crate::config::McpConfig, report: &mut Report) {
    for (server, name, kind) in mcp.literal_secrets() {
        let var = crate::config::mcp::suggested_var(server, name, kind);
        report.line(
            None,
            &format!("mcp {server}"),
            format!(
                "{kind} `{name}` is written literally in the config; write \"${{{var}}}\" there and set {var} in the environment or a .env (it is redacted either way)"
            ),
        );
    }
}

/// What this machine's sandbox keeps from commands (both false with the
/// sandbox off): the config read-only needs every piece of it, a loaded
/// `.env` read as empty needs the mount namespace.
#[derive(Clone, Copy)]
pub(super) struct CommandLimits {
    pub(super) config_read_only: bool,
    pub(super) env_hidden: bool,
}

/// The files egirl read at start-up that lie inside the workspace, each
/// with what that means: the model's file tools may not touch them, a
/// sandboxed command as far as `commands` says, and a command the user
/// lets run outside the sandbox can.
pub(super) fn exposed_in_workspace(
    workspace: &Path,
    config: Option<&Path>,
    env_files: &[PathBuf],
    commands: CommandLimits,
) -> Vec<String> {
    let root = workspace
        .canonicalize()
        .unwrap_or_else(|_| workspace.to_path_buf());
    let inside = |p: &Path| p.canonicalize().is_ok_and(|c| c.starts_with(&root));
    let mut out = Vec::new();
    if let Some(config) = config.filter(|c| inside(c)) {
        let who = if commands.config_read_only {
            "file tools and sandboxed commands may not change it, but a command you let run outside the sandbox can"
        } else {
            "file tools may not change it, but an approved command can (the sandbox is off or incomplete here; approval = \"full\" is one line away)"
        };
        out.push(format!(
            "holds the config file {}: {who}; keep the config outside the workspace and point [workspace] path at it",
            config.display()
        ));
    }
    let reader = if commands.env_hidden {
        "sandboxed commands read it as empty, but a command you let run outside the sandbox can read it"
    } else {
        "an approved command can read it"
    };
    // The .env next to the config and ./.env are one file when egirl runs
    // in the config's directory: name it once.
    let mut seen = Vec::new();
    for file in env_files.iter().filter(|f| inside(f)) {
        let canonical = file.canonicalize().unwrap_or_else(|_| file.clone());
        if seen.contains(&canonical) {
            continue;
        }
        seen.push(canonical);
        out.push(format!(
            "holds {}, loaded at start-up: file tools may neither read nor change it; {reader} (what it prints is redacted); keep secrets outside the workspace",
            file.display()
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_config_and_env_inside_the_workspace_are_named() {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().join("ws");
        std::fs::create_dir_all(&ws).unwrap();
        let inside = ws.join("egirl.toml");
        let outside = dir.path().join("egirl.toml");
        let env_in = ws.join(".env");
        let env_out = dir.path().join(".env");
        for f in [&inside, &outside, &env_in, &env_out] {
            std::fs::write(f, "").unwrap();
        }
        let both = [env_in.clone(), env_out.clone()];
        let confined = CommandLimits {
            config_read_only: true,
            env_hidden: true,
        };
        let open = CommandLimits {
            config_read_only: false,
            env_hidden: false,
        };
        let twice = [env_in.clone(), ws.join("./.env"), env_out.clone()];
        assert_eq!(
            exposed_in_workspace(&ws, None, &twice, confined).len(),
            1,
            "one .env named twice is one line"
        );
        let found = exposed_in_workspace(&ws, Some(&inside), &both, confined);
        assert_eq!(found.len(), 2, "{found:?}");
        assert!(found[0].contains("holds the config file"), "{found:?}");
        assert!(found[0].contains("sandboxed commands may not"), "{found:?}");
        assert!(found[1].contains(".env, loaded at start-up"), "{found:?}");
        assert!(found[1].contains("read it as empty"), "{found:?}");
        let unconfined = exposed_in_workspace(&ws, Some(&inside), &both, open);
        assert!(
            unconfined[0].contains("an approved command can")
                && unconfined[1].contains("an approved command can read it"),
            "{unconfined:?}"
        );
        assert!(exposed_in_workspace(&ws, Some(&outside), &[env_out], confined).is_empty());
        assert!(exposed_in_workspace(&ws, None, &[], confined).is_empty());
    }
}
