//! `session/new`, `session/load`, `session/list` and the model selector
//! (`session/set_config_option`): sessions are egirl's own, by id, their
//! transcripts in the workspace's `sessions/`.

use std::path::{Path, PathBuf};
use std::time::Duration;

use agent_client_protocol::v1::schema::{
    ListSessionsResponse, LoadSessionRequest, LoadSessionResponse, McpServer, NewSessionRequest,
    NewSessionResponse, SessionConfigOption, SessionConfigOptionCategory,
    SessionConfigSelectOption, SessionInfo, SetSessionConfigOptionRequest,
    SetSessionConfigOptionResponse,
};
use serde_json::Value;

use super::{Acp, commands, replay};
use crate::jsonrpc::RpcError;
use crate::protocol::{Command, ErrorEvent, EventKind, Models, Op, SessionMcpServer, Submission};
use crate::sessions::{self, Transcript};

/// The id of the model selector among the session's config options.
const MODEL_OPTION: &str = "model";
/// How long the core may take to answer a command (it may first open the
/// session from its transcript).
const CORE_ANSWER: Duration = Duration::from_secs(60);
/// At most this many sessions are listed, newest first.
const MAX_LISTED: usize = 200;

pub async fn new(acp: &Acp, id: Value, params: Value) {
    let result = async {
        let request: NewSessionRequest = parse(params)?;
        let cwd = check_cwd(acp, &request.cwd)?;
        let servers = mcp_servers(&request.mcp_servers, &cwd)?;
        let session = sessions::new_id("acp");
        acp.open(&session, cwd);
        if !servers.is_empty() {
            connect_mcp(acp, &session, servers).await?;
        }
        let options = model_options(acp, &session).await?;
        Ok((session, options))
    }
    .await;
    match result {
        Ok((session, options)) => {
            let response = NewSessionResponse::new(session.clone()).config_options(options);
            acp.peer.respond(id, to_value(response));
            commands::announce(acp, &session);
        }
        Err(error) => acp.peer.respond(id, Err(error)),
    }
}

pub async fn load(acp: &Acp, id: Value, params: Value) {
    let result = async {
        let request: LoadSessionRequest = parse(params)?;
        let cwd = check_cwd(acp, &request.cwd)?;
        let servers = mcp_servers(&request.mcp_servers, &cwd)?;
        let session = request.session_id.0.to_string();
        sessions::validate_id(&session).map_err(|e| RpcError::invalid(e.to_string()))?;
        let path = Transcript::path(&acp.options.workspace, &session);
        if !path.exists() {
            return Err(RpcError::not_found(format!(
                "no session `{session}` in {}",
                path.display()
            )));
        }
        let records = sessions::load(&path).map_err(|e| RpcError::internal(format!("{e:#}")))?;
        // The history goes out before the answer, as the protocol asks.
        replay::send(acp, &session, &records, &cwd);
        acp.open(&session, cwd);
        // In place of what an earlier load here brought, if anything.
        if !servers.is_empty() || acp.brought_mcp(&session) {
            connect_mcp(acp, &session, servers).await?;
        }
        let options = model_options(acp, &session).await?;
        Ok((session, options))
    }
    .await;
    match result {
        Ok((session, options)) => {
            acp.peer.respond(
                id,
                to_value(LoadSessionResponse::new().config_options(options)),
            );
            commands::announce(acp, &session);
        }
        Err(error) => acp.peer.respond(id, Err(error)),
    }
}

/// egirl's sessions, newest first, each titled by its first message.
pub async fn list(acp: &Acp, _params: Value) -> Result<Value, RpcError> {
    let workspace = acp.options.workspace.clone();
    let infos = tokio::task::spawn_blocking(move || listed(&workspace))
        .await
        .map_err(|e| RpcError::internal(e.to_string()))?;
    to_value(ListSessionsResponse::new(infos))
}

fn listed(workspace: &Path) -> Vec<SessionInfo> {
    let Ok(dir) = std::fs::read_dir(workspace.join("sessions")) else {
        return Vec::new();
    };
    let mut found: Vec<(std::time::SystemTime, String, PathBuf)> = dir
        .filter_map(Result::ok)
        .filter_map(|entry| {
            let path = entry.path();
            let id = path
                .file_name()?
                .to_str()?
                .strip_suffix(".jsonl")?
                .to_string();
            let modified = entry.metadata().ok()?.modified().ok()?;
            Some((modified, id, path))
        })
        .collect();
    found.sort_by_key(|f| std::cmp::Reverse(f.0));
    found
        .into_iter()
        .take(MAX_LISTED)
        .map(|(modified, id, path)| {
            let updated = chrono::DateTime::<chrono::Utc>::from(modified).to_rfc3339();
            SessionInfo::new(id, workspace.to_path_buf())
                .title(title(&path))
                .updated_at(updated)
        })
        .collect()
}

/// The first thing the user typed in the session, on one line.
fn title(path: &Path) -> Option<String> {
    let records = sessions::load(path).ok()?;
    let first = records
        .iter()
        .find(|r| r.message.role == crate::protocol::Role::User)?;
    let text = first.typed.as_deref().unwrap_or(&first.message.content);
    let line: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    Some(line.chars().take(80).collect())
}

/// Pins the session to the model picked (`pin_model`), and answers with
/// the selector as it now stands.
pub async fn set_config_option(acp: &Acp, params: Value) -> Result<Value, RpcError> {
    let request: SetSessionConfigOptionRequest = parse(params)?;
    if request.config_id.0.as_ref() != MODEL_OPTION {
        return Err(RpcError::invalid(format!(
            "egirl has no option `{}` (only `{MODEL_OPTION}`)",
            request.config_id.0
        )));
    }
    let Some(model) = request.value.as_value_id() else {
        return Err(RpcError::invalid(
            "the model is one of the selector's values",
        ));
    };
    let session = request.session_id.0.to_string();
    let command = Command::PinModel {
        model: model.0.to_string(),
    };
    ask_core(acp, &session, command, |kind| match kind {
        EventKind::ModelPinned(_) => Some(Ok(())),
        EventKind::Error(ErrorEvent { message }) => Some(Err(message.clone())),
        _ => None,
    })
    .await
    .and_then(|r| r)
    .map_err(RpcError::invalid)?;
    let options = model_options(acp, &session).await?;
    to_value(SetSessionConfigOptionResponse::new(options))
}

/// The model selector: `auto` (the router decides), then what `/model`
/// offers (the local roles and remote models), the pin selected.
async fn model_options(acp: &Acp, session: &str) -> Result<Vec<SessionConfigOption>, RpcError> {
    let models = ask_core(acp, session, Command::ListModels, |kind| match kind {
        EventKind::Models(models) => Some(models.clone()),
        _ => None,
    })
    .await
    .map_err(RpcError::internal)?;
    Ok(vec![model_selector(&models)])
}

fn model_selector(models: &Models) -> SessionConfigOption {
    let mut options = vec![
        SessionConfigSelectOption::new("auto", "auto")
            .description("the router picks local or remote per turn".to_string()),
    ];
    for choice in models.choices.iter().filter(|c| c.id != "auto") {
        let mut option = SessionConfigSelectOption::new(choice.id.clone(), choice.label.clone());
        if !choice.detail.is_empty() {
            option = option.description(choice.detail.clone());
        }
        options.push(option);
    }
    SessionConfigOption::select(MODEL_OPTION, "Model", models.pinned.clone(), options)
        .category(SessionConfigOptionCategory::Model)
        .description("the model this session runs on".to_string())
}

/// Submits `command` for `session` and waits for the event of its
/// submission that `answer` picks.
pub async fn ask_core<T>(
    acp: &Acp,
    session: &str,
    command: Command,
    answer: impl Fn(&EventKind) -> Option<T>,
) -> Result<T, String> {
    let mut events = acp.link.subscribe();
    let submission = Submission::new(Op::Command {
        session: session.to_string(),
        command,
    });
    let id = submission.id.clone();
    acp.link.submit_with(submission);
    let wait = async {
        while let Some(event) = events.recv().await {
            // An event emitted from a task of its own carries no id: the
            // session's.
            let ours = event.submission.as_ref().is_none_or(|s| *s == id);
            if event.session != session || !ours {
                continue;
            }
            if let Some(found) = answer(&event.kind) {
                return Ok(found);
            }
            if let EventKind::Error(ErrorEvent { message }) = &event.kind {
                return Err(message.clone());
            }
        }
        Err("the core stopped".to_string())
    };
    tokio::time::timeout(CORE_ANSWER, wait)
        .await
        .unwrap_or_else(|_| Err("the core did not answer in time".into()))
}

/// The client's working directory must be the workspace or lie inside
/// it or one of `[tools] allowed_paths`: where the file tools may work.
/// The directory, canonical.
fn check_cwd(acp: &Acp, cwd: &Path) -> Result<PathBuf, RpcError> {
    let options = &acp.options;
    let canonical = std::fs::canonicalize(cwd)
        .map_err(|e| RpcError::invalid(format!("cwd {}: {e}", cwd.display())))?;
    let mut roots = std::iter::once(&options.workspace).chain(&options.allowed_paths);
    if roots.any(|root| canonical.starts_with(root)) {
        return Ok(canonical);
    }
    let shown: Vec<String> = std::iter::once(&options.workspace)
        .chain(&options.allowed_paths)
        .map(|p| p.display().to_string())
        .collect();
    Err(RpcError::invalid(format!(
        "{} is outside egirl's workspace and allowed paths ({}); open one of those, or add it to [tools] allowed_paths in egirl.toml",
        cwd.display(),
        shown.join(", ")
    )))
}

/// The MCP servers the client passes, as the core takes them: stdio
/// ones start in the session's project; SSE is refused (`initialize`
/// offers stdio and HTTP).
fn mcp_servers(servers: &[McpServer], cwd: &Path) -> Result<Vec<SessionMcpServer>, RpcError> {
    let pairs = |pairs: Vec<(&String, &String)>| {
        pairs
            .into_iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect()
    };
    servers
        .iter()
        .map(|server| match server {
            McpServer::Stdio(stdio) => Ok(SessionMcpServer {
                name: stdio.name.clone(),
                command: Some(stdio.command.display().to_string()),
                args: stdio.args.clone(),
                env: pairs(stdio.env.iter().map(|v| (&v.name, &v.value)).collect()),
                cwd: Some(cwd.display().to_string()),
                ..SessionMcpServer::default()
            }),
            McpServer::Http(http) => Ok(SessionMcpServer {
                name: http.name.clone(),
                url: Some(http.url.clone()),
                headers: pairs(http.headers.iter().map(|h| (&h.name, &h.value)).collect()),
                ..SessionMcpServer::default()
            }),
            _ => Err(RpcError::invalid(
                "egirl connects MCP servers over stdio and HTTP only (initialize says so)",
            )),
        })
        .collect()
}

/// Hands the session's MCP servers to the core (none: stops those it
/// had); what connects goes to stderr, a list over egirl's bounds fails
/// the request with the core's line.
pub async fn connect_mcp(
    acp: &Acp,
    session: &str,
    servers: Vec<SessionMcpServer>,
) -> Result<(), RpcError> {
    let brought = !servers.is_empty();
    let command = Command::SessionMcp { servers };
    let answer = ask_core(acp, session, command, |kind| match kind {
        EventKind::Notice(notice) => Some(notice.message.clone()),
        _ => None,
    })
    .await
    .map_err(RpcError::invalid)?;
    acp.set_brought_mcp(session, brought);
    if brought {
        crate::print::err(format_args!("egirl: {answer}"));
    }
    Ok(())
}

fn parse<T: serde::de::DeserializeOwned>(params: Value) -> Result<T, RpcError> {
    serde_json::from_value(params).map_err(|e| RpcError::invalid(format!("bad params: {e}")))
}

fn to_value(value: impl serde::Serialize) -> Result<Value, RpcError> {
    serde_json::to_value(value).map_err(|e| RpcError::internal(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::ModelChoice;

    #[test]
    fn the_selector_offers_auto_then_the_models_with_the_pin_selected() {
        let models = Models {
            choices: vec![
                ModelChoice {
                    id: "local".into(),
                    label: "local · qwen".into(),
                    detail: String::new(),
                },
                ModelChoice {
                    id: "local.fast".into(),
                    label: "local.fast · small".into(),
                    detail: "serves small".into(),
                },
            ],
            pinned: "local.fast".into(),
        };
        let value = serde_json::to_value(model_selector(&models)).unwrap();
        assert_eq!(value["type"], "select");
        assert_eq!(value["currentValue"], "local.fast");
        let ids: Vec<&str> = value["options"]
            .as_array()
            .unwrap()
            .iter()
            .map(|o| o["value"].as_str().unwrap())
            .collect();
        assert_eq!(ids, ["auto", "local", "local.fast"]);
    }
}
