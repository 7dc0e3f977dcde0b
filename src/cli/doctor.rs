//! `egirl doctor`: one line per check, exit 0 when egirl can work.

use std::path::{Path, PathBuf};

use super::Environment;
use crate::config::expand_home;
use crate::print;
use crate::providers::llamacpp::LlamaCpp;

pub async fn run(env: &Environment) -> u8 {
    let mut failed = false;
    let mut line = |ok: Option<bool>, what: &str, detail: String| {
        let mark = match ok {
            Some(true) => "ok  ",
            Some(false) => "FAIL",
            None => "note",
        };
        if ok == Some(false) {
            failed = true;
        }
        // A closed stdout only ends the report; the exit code still says.
        let _ = print::out(&format!("{mark} {what}: {detail}\n"));
    };

    line(
        Some(true),
        "config",
        env.config_path
            .as_ref()
            .map_or("built-in defaults (no egirl.toml found)".into(), |p| {
                p.display().to_string()
            }),
    );
    let missing: Vec<&str> = crate::workspace::TEMPLATES
        .iter()
        .map(|(name, _)| *name)
        .filter(|name| !env.workspace.join(name).exists())
        .collect();
    line(
        Some(true),
        "workspace",
        if missing.is_empty() {
            env.workspace.display().to_string()
        } else {
            format!(
                "{} (missing {})",
                env.workspace.display(),
                missing.join(", ")
            )
        },
    );
    let exec = &env.config.tools.exec;
    // Under "required" a kernel that lacks a piece refuses every command,
    // so the protected paths hold either way.
    let confined = exec.sandbox == crate::config::ExecSandbox::Required
        || (exec.sandbox != crate::config::ExecSandbox::Off
            && crate::tools::sandbox::gaps(exec).is_empty());
    for exposure in exposed_in_workspace(
        &env.workspace,
        env.config_path.as_deref(),
        &env.env_files,
        confined,
    ) {
        line(None, "workspace", exposure);
    }

    let sandbox = crate::tools::sandbox::describe(exec);
    match crate::tools::sandbox::notice(exec) {
        None => line(Some(true), "exec sandbox", sandbox),
        Some(why) => line(
            (exec.sandbox == crate::config::ExecSandbox::Required).then_some(false),
            "exec sandbox",
            why,
        ),
    }

    let local = &env.config.local;
    let provider = LlamaCpp::new(local);
    match provider.health().await {
        Ok(()) => {
            line(Some(true), "local /health", local.endpoint.clone());
            match provider.props().await {
                Ok(props) => line(
                    Some(true),
                    "local /props",
                    format!(
                        "n_ctx {}, {} slot(s), model {}, {}",
                        props.n_ctx.map_or("?".into(), |n| n.to_string()),
                        props.total_slots.unwrap_or(1),
                        props.model_path.as_deref().unwrap_or("?"),
                        match props.supports_tools {
                            Some(false) =>
                                "template has no tool support (tools go in the system prompt)",
                            Some(true) => "native tool calls",
                            None => "tool support unknown",
                        }
                    ),
                ),
                Err(e) => line(
                    None,
                    "local /props",
                    format!("{e} (not llama-server? using [local] context_length)"),
                ),
            }
        }
        Err(e) => match &local.server {
            Some(server) => {
                let binary = expand_home(&server.binary);
                let model = expand_home(&server.model);
                let ready = binary.is_file() && model.is_file();
                line(
                    Some(ready),
                    "local server",
                    if ready {
                        format!(
                            "not running at {}; egirl will start {}",
                            local.endpoint,
                            binary.display()
                        )
                    } else {
                        format!(
                            "not running at {} and the managed server is missing ({} or {}); run scripts/install-llama.sh",
                            local.endpoint,
                            binary.display(),
                            model.display()
                        )
                    },
                );
            }
            None => line(Some(false), "local /health", e.to_string()),
        },
    }
    if let Some(emb) = &local.embeddings {
        let probe = crate::config::LocalConfig {
            endpoint: emb.endpoint.clone(),
            ..local.clone()
        };
        match LlamaCpp::new(&probe).health().await {
            Ok(()) => line(Some(true), "embeddings", emb.endpoint.clone()),
            Err(e) => line(
                None,
                "embeddings",
                format!("{e} (memory search falls back to full-text)"),
            ),
        }
    }
    let skills = crate::skills::Registry::load(&env.config.skills, &env.workspace).snapshot();
    let usable = skills.skills.iter().filter(|s| s.available()).count();
    line(
        if skills.broken.is_empty() {
            Some(true)
        } else {
            None
        },
        "skills",
        format!(
            "{usable} available, {} unavailable, {} broken (details: egirl skills list)",
            skills.skills.len() - usable,
            skills.broken.len()
        ),
    );
    let remote =
        crate::providers::remote::RemoteProviders::from_config(&env.config.remote, &env.secrets);
    let memory = crate::memory::Memory::new(&env.workspace, &env.config, &remote);
    match memory.counts().await {
        Ok((files, chunks, vectors)) => {
            let search = if memory.has_embedder() {
                ""
            } else {
                " (no embeddings configured: full-text search)"
            };
            let state = if files == 0 {
                "not built yet (egirl builds it at start; or egirl memory reindex)".to_string()
            } else {
                format!("{files} files, {chunks} chunks, {vectors} vectors")
            };
            line(Some(true), "memory index", format!("{state}{search}"));
        }
        Err(e) => line(
            None,
            "memory index",
            format!("{e:#} (rebuilt from the files on next use)"),
        ),
    }
    line(None, "services", services_owner(&env.workspace));
    for (var, present) in env.secrets.presence() {
        line(
            None,
            var,
            if present {
                "set".into()
            } else {
                "not set".into()
            },
        );
    }
    line(
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
    if failed {
        super::EXIT_FAILURE
    } else {
        super::EXIT_OK
    }
}

/// The files egirl read at start-up that lie inside the workspace, each
/// with what that means: the model's file tools may not touch them; a
/// command can change the config only outside a complete sandbox
/// (`commands_confined` false: sandbox off or missing a piece here), or
/// when the user lets it run outside the sandbox.
fn exposed_in_workspace(
    workspace: &Path,
    config: Option<&Path>,
    env_files: &[PathBuf],
    commands_confined: bool,
) -> Vec<String> {
    let root = workspace
        .canonicalize()
        .unwrap_or_else(|_| workspace.to_path_buf());
    let inside = |p: &Path| p.canonicalize().is_ok_and(|c| c.starts_with(&root));
    let mut out = Vec::new();
    if let Some(config) = config.filter(|c| inside(c)) {
        let who = if commands_confined {
            "file tools and sandboxed commands may not change it, but a command you let run outside the sandbox can"
        } else {
            "file tools may not change it, but an approved command can (the sandbox is off or incomplete here; approval = \"full\" is one line away)"
        };
        out.push(format!(
            "holds the config file {}: {who}; keep the config outside the workspace and point [workspace] path at it",
            config.display()
        ));
    }
    for file in env_files.iter().filter(|f| inside(f)) {
        out.push(format!(
            "holds {}, loaded at start-up: file tools may neither read nor change it, but an approved command can read it (what it prints is redacted); keep secrets outside the workspace",
            file.display()
        ));
    }
    out
}

/// Who runs Discord, heartbeat, cron and the webhook for this workspace.
fn services_owner(workspace: &std::path::Path) -> String {
    let path = super::services::lock_path(workspace);
    match crate::lockfile::FileLock::try_acquire(&path) {
        Ok(Some(_free)) => "not running (the next egirl or egirl serve runs them)".into(),
        Ok(None) => {
            let holder = crate::lockfile::read_note(&path);
            if holder.is_empty() {
                "run by another egirl process".into()
            } else {
                format!("run by {holder}")
            }
        }
        Err(e) => format!("{e:#}"),
    }
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
        let found = exposed_in_workspace(&ws, Some(&inside), &both, true);
        assert_eq!(found.len(), 2, "{found:?}");
        assert!(found[0].contains("holds the config file"), "{found:?}");
        assert!(found[0].contains("sandboxed commands may not"), "{found:?}");
        assert!(found[1].contains(".env, loaded at start-up"), "{found:?}");
        let unconfined = exposed_in_workspace(&ws, Some(&inside), &both, false);
        assert!(
            unconfined[0].contains("an approved command can"),
            "{unconfined:?}"
        );
        assert!(exposed_in_workspace(&ws, Some(&outside), &[env_out], true).is_empty());
        assert!(exposed_in_workspace(&ws, None, &[], true).is_empty());
    }
}
