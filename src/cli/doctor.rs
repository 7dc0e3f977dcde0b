//! `egirl doctor`: one line per check, exit 0 when egirl can work.

use super::Environment;
use crate::config::expand_home;
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
        println!("{mark} {what}: {detail}");
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
    if failed {
        super::EXIT_FAILURE
    } else {
        super::EXIT_OK
    }
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
