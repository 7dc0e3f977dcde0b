//! The doctor's local-model lines: every endpoint egirl would use, for
//! each role (`[local]` and `[local.fast]`), and the embeddings server.
//!
//! Only what is configured is checked: with `[local] endpoints` the
//! replicas, never the single `endpoint` those replace (its default
//! would fail on a machine whose server listens elsewhere).

use super::Report;
use crate::config::{LocalConfig, ManagedServerConfig, expand_home};
use crate::protocol::LocalRole;
use crate::providers::llamacpp::LlamaCpp;
use crate::providers::probe;

/// Each role's endpoints, then the embeddings server.
pub(super) async fn local_servers(local: &LocalConfig, report: &mut Report) {
    let mut roles = vec![(LocalRole::Main, local.clone())];
    if let Some(fast) = local.fast_role() {
        roles.push((LocalRole::Fast, fast));
    }
    for (role, config) in &roles {
        for (index, endpoint) in config.endpoint_list().into_iter().enumerate() {
            // The managed server, when configured, is started on the first.
            let managed = config.server.as_ref().filter(|_| index == 0);
            check_endpoint(role.as_str(), config, endpoint, managed, report).await;
        }
    }
    if let Some(emb) = &local.embeddings {
        let probe = LocalConfig {
            endpoint: emb.endpoint.clone(),
            ..local.clone()
        };
        match LlamaCpp::new(&probe).health().await {
            Ok(()) => report.line(Some(true), "embeddings", emb.endpoint.clone()),
            Err(e) => report.line(
                None,
                "embeddings",
                format!("{e} (memory search falls back to full-text)"),
            ),
        }
    }
}

/// One endpoint: whether it answers (`/health`, or the probes that find
/// vLLM and Ollama, which may have no `/health`), the server kind found
/// and, for llama-server, its `/props`. Not answering fails, unless egirl
/// would start the managed server there and it is installed.
async fn check_endpoint(
    role: &str,
    config: &LocalConfig,
    endpoint: String,
    managed: Option<&ManagedServerConfig>,
    report: &mut Report,
) {
    let server = LlamaCpp::new(&LocalConfig {
        endpoint: endpoint.clone(),
        ..config.clone()
    });
    let health = server.health().await;
    let found = probe::discover(&server).await;
    match (&health, &found) {
        (Err(e), Err(_)) => {
            match managed {
                Some(managed) => managed_server(role, &endpoint, managed, report),
                None => {
                    // The error names the URL already, as a rule.
                    let e = e.to_string();
                    let what = match e.contains(&endpoint) {
                        true => e,
                        false => format!("{endpoint}: {e}"),
                    };
                    report.line(
                        Some(false),
                        &format!("{role} /health"),
                        format!(
                            "{what} (start the server there, or change [local] endpoint/endpoints)"
                        ),
                    )
                }
            }
            return;
        }
        (Ok(()), _) => report.line(Some(true), &format!("{role} /health"), endpoint.clone()),
        (Err(_), Ok(_)) => {}
    }
    match found {
        Ok(info) => {
            let ctx = info
                .n_ctx
                .map_or("context from the config".to_string(), |n| {
                    format!("n_ctx {n}")
                });
            report.line(
                Some(true),
                &format!("{role} {endpoint}"),
                format!("{}, {ctx}, {}", info.kind.name(), info.kind.capabilities()),
            );
            if info.kind == crate::providers::server_kind::ServerKind::LlamaCpp {
                local_props(role, &server, report).await;
            }
        }
        Err(e) => report.line(None, &format!("{role} {endpoint}"), e.to_string()),
    }
}

/// What a healthy llama-server says about its context, slots, model and
/// tool support.
async fn local_props(role: &str, server: &LlamaCpp, report: &mut Report) {
    match server.props().await {
        Ok(props) => report.line(
            Some(true),
            &format!("{role} /props"),
            format!(
                "{}: n_ctx {}, {} slot(s), model {}, {}, {}",
                server.endpoint(),
                props.n_ctx.map_or("?".into(), |n| n.to_string()),
                props.total_slots.unwrap_or(1),
                props.model_path.as_deref().unwrap_or("?"),
                match props.supports_tools {
                    Some(false) => "template has no tool support (tools go in the system prompt)",
                    Some(true) => "native tool calls",
                    None => "tool support unknown",
                },
                match props.vision {
                    Some(true) => "sees images",
                    _ => "no image input per /props (vision = true overrides)",
                }
            ),
        ),
        Err(e) => report.line(
            None,
            &format!("{role} /props"),
            format!("{e} (not llama-server? using [local] context_length)"),
        ),
    }
}

/// With no server answering where egirl would start its own: whether
/// that managed server is installed.
fn managed_server(role: &str, endpoint: &str, server: &ManagedServerConfig, report: &mut Report) {
    let binary = expand_home(&server.binary);
    let model = expand_home(&server.model);
    let ready = binary.is_file() && model.is_file();
    report.line(
        Some(ready),
        &format!("{role} server"),
        if ready {
            format!("not running at {endpoint}; egirl will start {}", binary.display())
        } else {
            format!(
                "not running at {endpoint} and the managed server is missing ({} or {}): fix binary/model in its [local.server] section, or start your own server at {endpoint}",
                binary.display(),
                model.display()
            )
        },
    );
}
