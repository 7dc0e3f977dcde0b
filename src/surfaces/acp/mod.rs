//! `egirl acp`: egirl as an Agent Client Protocol agent over stdio, for
//! editors (Zed, JetBrains, Neovim, Emacs: docs/acp.md). A surface like
//! the others: prompts become `Op::UserMessage`, the core's events become
//! `session/update` notifications, its approval requests become
//! `session/request_permission`, `session/cancel` becomes `Op::Interrupt`.
//!
//! stdout carries nothing but ACP frames (`crate::jsonrpc`'s writer owns
//! it); logs go to the log file, notices to stderr. The message types are
//! the `agent-client-protocol` crate's schema; the framing is
//! `crate::jsonrpc` (one line per message, shared with the `delegate`
//! tool's client side), so every request runs as a task of its own and a
//! prompt in flight never holds up a `session/cancel`.

mod commands;
mod content;
mod files;
mod permission;
mod prompt;
mod replay;
mod session;
mod updates;

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};

use crate::jsonrpc::{Connection, Incoming, RpcError, Started};
use crate::link::CoreLink;
use crate::protocol::Op;
use crate::stop_signals::StopSignals;
use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::schema::{
    AgentCapabilities, Implementation, InitializeRequest, InitializeResponse, McpCapabilities,
    PromptCapabilities, SessionCapabilities, SessionListCapabilities,
};
use serde_json::Value;

/// How the client's frames are read: a prompt may embed images and
/// resources, so a line may be large, but not without bound.
const FRAMING: crate::jsonrpc::Options = crate::jsonrpc::Options {
    max_line: 64 * 1024 * 1024,
    gone: "the client closed the connection",
};

/// What the surface needs beyond the core.
pub struct AcpOptions {
    /// The workspace (canonical): replays show its files absolute.
    pub workspace: PathBuf,
    /// `[tools] allowed_paths` (canonical): with the workspace, where a
    /// client's `cwd` may lie.
    pub allowed_paths: Vec<PathBuf>,
    /// User-invocable skills become commands.
    pub skills: Option<Arc<crate::skills::Registry>>,
}

/// The agent: the core, the client, and the sessions this client opened.
pub struct Acp {
    link: CoreLink,
    peer: Connection,
    options: AcpOptions,
    sessions: Mutex<HashMap<String, OpenSession>>,
    /// What the client's `initialize` offered: it reads and writes files
    /// for the file tools (its unsaved buffers).
    client_files: Mutex<ClientFiles>,
}

/// The client's `fs` capabilities.
#[derive(Clone, Copy, Default)]
struct ClientFiles {
    read: bool,
    write: bool,
}

/// A session this client opened or loaded.
#[derive(Default)]
struct OpenSession {
    /// Set by `session/cancel` while a prompt runs: it ends `cancelled`.
    cancelled: Option<Arc<AtomicBool>>,
    /// The client's project (canonical): where the session's relative
    /// paths and commands start.
    cwd: PathBuf,
    /// The client brought MCP servers for it: stopped when it goes.
    brought_mcp: bool,
}

/// Serves the client on stdin/stdout until it closes stdin or a signal
/// comes; a prompt still running is interrupted.
pub async fn run(link: CoreLink, options: AcpOptions) {
    let Started {
        connection,
        mut incoming,
        writer,
    } = Connection::start(tokio::io::stdin(), tokio::io::stdout(), FRAMING);
    let acp = Arc::new(Acp {
        link,
        peer: connection,
        options,
        sessions: Mutex::new(HashMap::new()),
        client_files: Mutex::new(ClientFiles::default()),
    });
    acp.link.start_mcp();
    let mut stop = StopSignals::watch();
    loop {
        tokio::select! {
            message = incoming.recv() => match message {
                Some(message) => acp.receive(message),
                None => break,
            },
            () = stop.next() => break,
        }
    }
    let open: Vec<(String, bool)> = acp
        .lock()
        .iter()
        .map(|(id, s)| (id.clone(), s.brought_mcp))
        .collect();
    for (session, brought_mcp) in open {
        acp.link.submit(Op::Interrupt {
            session: session.clone(),
        });
        // A daemon's core outlives this client: its servers must not.
        // Waited for, so the op is through before this process ends.
        if brought_mcp {
            let stopped = session::connect_mcp(&acp, &session, Vec::new());
            let _ = tokio::time::timeout(std::time::Duration::from_secs(5), stopped).await;
        }
    }
    acp.peer.close();
    drop(acp);
    // The frames already queued still go out.
    let _ = tokio::time::timeout(std::time::Duration::from_secs(2), writer).await;
}

impl Acp {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, OpenSession>> {
        self.sessions.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// One message from the client (answers to our requests went to
    /// their waiter already).
    fn receive(self: &Arc<Self>, message: Incoming) {
        match message {
            Incoming::Request { id, method, params } => {
                let acp = self.clone();
                tokio::spawn(async move { acp.request(id, &method, params).await });
            }
            Incoming::Notification { method, params } => self.notification(&method, &params),
            Incoming::Invalid { id, why } => {
                tracing::warn!("acp: {why}");
                let error = RpcError::new(crate::jsonrpc::PARSE_ERROR, why);
                self.peer.respond(id, Err(error));
            }
        }
    }

    async fn request(self: Arc<Self>, id: Value, method: &str, params: Value) {
        let result = match method {
            "initialize" => {
                self.remember_client(&params);
                Ok(initialize())
            }
            // A local agent needs no sign-in: `initialize` lists no method.
            "authenticate" => Ok(serde_json::json!({})),
            "session/new" => return session::new(&self, id, params).await,
            "session/load" => return session::load(&self, id, params).await,
            "session/list" => session::list(&self, params).await,
            "session/set_config_option" => session::set_config_option(&self, params).await,
            "session/prompt" => prompt::run(&self, params).await,
            other => Err(RpcError::no_method(format!(
                "egirl does not implement `{other}`"
            ))),
        };
        self.peer.respond(id, result);
    }

    fn notification(&self, method: &str, params: &Value) {
        match method {
            "session/cancel" => {
                let Some(session) = params.get("sessionId").and_then(Value::as_str) else {
                    return;
                };
                if let Some(open) = self.lock().get(session)
                    && let Some(flag) = &open.cancelled
                {
                    flag.store(true, std::sync::atomic::Ordering::SeqCst);
                    self.link.submit(Op::Interrupt {
                        session: session.to_string(),
                    });
                }
            }
            other => tracing::debug!("acp: ignoring the notification `{other}`"),
        }
    }

    /// Keeps what the client offers to do with files.
    fn remember_client(&self, params: &Value) {
        let Ok(request) = serde_json::from_value::<InitializeRequest>(params.clone()) else {
            return;
        };
        let fs = &request.client_capabilities.fs;
        *self.client_files.lock().unwrap_or_else(|e| e.into_inner()) = ClientFiles {
            read: fs.read_text_file,
            write: fs.write_text_file,
        };
    }

    /// Opens `session` here, working in `cwd` (the core's tools start
    /// there); when the client serves files, the core's file tools use it
    /// for this session from now on.
    fn open(&self, session: &str, cwd: PathBuf) {
        if cwd != self.options.workspace {
            self.link.submit(Op::Command {
                session: session.to_string(),
                command: crate::protocol::Command::WorkIn {
                    dir: cwd.display().to_string(),
                },
            });
        }
        self.lock().entry(session.to_string()).or_default().cwd = cwd;
        let files = *self.client_files.lock().unwrap_or_else(|e| e.into_inner());
        if files.read || files.write {
            self.link.submit(Op::Command {
                session: session.to_string(),
                command: crate::protocol::Command::ClientFiles {
                    read: files.read,
                    write: files.write,
                },
            });
        }
    }

    /// Whether the client brought MCP servers for `session`.
    fn brought_mcp(&self, session: &str) -> bool {
        self.lock().get(session).is_some_and(|s| s.brought_mcp)
    }

    fn set_brought_mcp(&self, session: &str, brought: bool) {
        if let Some(open) = self.lock().get_mut(session) {
            open.brought_mcp = brought;
        }
    }

    /// Where `session`'s relative paths start (the workspace until open).
    fn cwd(&self, session: &str) -> PathBuf {
        self.lock()
            .get(session)
            .map(|s| s.cwd.clone())
            .unwrap_or_else(|| self.options.workspace.clone())
    }

    /// Sends `update` for `session` to the client.
    fn update(&self, session: &str, update: agent_client_protocol::v1::schema::SessionUpdate) {
        let note = agent_client_protocol::v1::schema::SessionNotification::new(
            session.to_string(),
            update,
        );
        self.peer.notify("session/update", note);
    }
}

/// What `initialize` answers: protocol 1, sessions that load and list,
/// text, images and resources in prompts, no sign-in.
fn initialize() -> Value {
    let capabilities = AgentCapabilities::new()
        .load_session(true)
        .prompt_capabilities(PromptCapabilities::new().image(true).embedded_context(true))
        .mcp_capabilities(McpCapabilities::new().http(true))
        .session_capabilities(SessionCapabilities::new().list(SessionListCapabilities::new()));
    let response = InitializeResponse::new(ProtocolVersion::V1)
        .agent_capabilities(capabilities)
        .agent_info(
            Implementation::new("egirl", env!("CARGO_PKG_VERSION")).title("egirl".to_string()),
        )
        .auth_methods(Vec::new());
    serde_json::to_value(response).unwrap_or(Value::Null)
}
