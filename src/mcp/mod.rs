//! MCP servers (Model Context Protocol): their lifecycle and their tools.
//!
//! Each configured server runs under a supervisor task started in the
//! background (start-up never waits for one), is restarted with backoff
//! when it fails or exits, and is stopped with its whole process group
//! when egirl exits. The tools of the connected servers are called
//! `mcp__<server>__<tool>` and go through `tools::mcp` (the same approval,
//! redaction and trimming as the built-ins). The prompt lists them by
//! name only, grouped by server; the model fetches a schema on demand.

pub mod naming;
mod resolve;
pub mod result;
pub mod schema;
mod server;
mod session;
mod spawner;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;
use tokio::sync::watch;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::bus::EventBus;
use crate::config::{McpApproval, McpConfig};
use crate::protocol::{EventKind, McpServerInfo, Notice, Origin};
use server::{Launch, Reporter, Server, lock};

/// The longest a deferred start waits for `open`.
const DEFER_MAX: Duration = Duration::from_secs(2);

/// The session MCP notices are filed under: none (they belong to no
/// conversation; a named one became a session users could pick and write to).
pub const NOTICE_SESSION: &str = crate::protocol::NO_SESSION;

/// A server's state as `/mcp`, `egirl doctor` and the status line show it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum State {
    #[default]
    Starting,
    Ready,
    Failed,
}

impl State {
    pub fn as_str(self) -> &'static str {
        match self {
            State::Starting => "starting",
            State::Ready => "ready",
            State::Failed => "failed",
        }
    }
}

/// One tool of a connected server.
#[derive(Clone, Debug, PartialEq)]
pub struct McpTool {
    /// `mcp__<server>__<tool>`: what the model calls.
    pub full_name: String,
    pub server: String,
    /// The name the server knows it by.
    pub name: String,
    pub description: String,
    /// Its input schema (JSON Schema).
    pub schema: Value,
    /// The server annotated it `readOnlyHint: true`.
    pub read_only: bool,
}

/// The configured servers and their supervisors.
pub struct McpManager {
    servers: Vec<Arc<Server>>,
    /// Opened when the servers may start (see `start_deferred`).
    gate: Arc<watch::Sender<bool>>,
    status: watch::Sender<Vec<McpServerInfo>>,
    stop: CancellationToken,
    tasks: Mutex<Vec<JoinHandle<()>>>,
    /// How a stdio server starts (the session servers' too).
    launch: Arc<Launch>,
    /// Where a session server's notices go.
    bus: Option<EventBus>,
    /// The servers each session's client brought (`egirl acp`), by session.
    sessions: Mutex<HashMap<String, session::SessionServers>>,
}

/// Publishes the servers' state and their notices.
struct Publisher {
    manager: std::sync::Weak<McpManager>,
    bus: EventBus,
}

impl Reporter for Publisher {
    fn changed(&self) {
        if let Some(manager) = self.manager.upgrade() {
            manager.status.send_replace(manager.infos());
        }
    }
    fn notice(&self, message: String) {
        self.bus.emit(
            NOTICE_SESSION,
            &Origin::Tui,
            EventKind::Notice(Notice { message }),
        );
    }
}

impl McpManager {
    /// No servers (tests, and configs without `[mcp]`).
    pub fn none() -> Arc<Self> {
        Arc::new(Self::unstarted(Vec::new(), None, Launch::default(), true))
    }

    /// `servers` not started yet; the gate `open` or not.
    fn unstarted(
        servers: Vec<Arc<Server>>,
        bus: Option<EventBus>,
        launch: Launch,
        open: bool,
    ) -> Self {
        Self {
            servers,
            gate: Arc::new(watch::channel(open).0),
            status: watch::channel(Vec::new()).0,
            stop: CancellationToken::new(),
            tasks: Mutex::new(Vec::new()),
            launch: Arc::new(launch),
            bus,
            sessions: Mutex::new(HashMap::new()),
        }
    }

    /// Starts a supervisor per enabled server on the current runtime and
    /// returns at once. `base_env`: egirl's environment without its secrets.
    pub fn start(
        config: &McpConfig,
        workspace: &std::path::Path,
        base_env: Vec<(std::ffi::OsString, std::ffi::OsString)>,
        bus: EventBus,
    ) -> Arc<Self> {
        let manager = Self::start_deferred(config, workspace, base_env, bus);
        manager.open();
        manager
    }

    /// As `start`, but the servers are spawned only once `open` is called
    /// (the TUI calls it after its first frame: spawning and handshaking
    /// compete with that frame for the CPU), or after `DEFER_MAX` at most.
    pub fn start_deferred(
        config: &McpConfig,
        workspace: &std::path::Path,
        base_env: Vec<(std::ffi::OsString, std::ffi::OsString)>,
        bus: EventBus,
    ) -> Arc<Self> {
        let servers: Vec<Arc<Server>> = config
            .enabled()
            .map(|(name, server)| Arc::new(Server::new(name, server.clone())))
            .collect();
        let launch = Launch {
            workspace: workspace.to_path_buf(),
            base_env,
        };
        let manager = Arc::new(Self::unstarted(servers, Some(bus.clone()), launch, false));
        let launch = manager.launch.clone();
        manager.status.send_replace(manager.infos());
        let report: Arc<dyn Reporter> = Arc::new(Publisher {
            manager: Arc::downgrade(&manager),
            bus,
        });
        let tasks = manager
            .servers
            .iter()
            .map(|s| {
                let mut gate = manager.gate.subscribe();
                let supervise =
                    s.clone()
                        .supervise(launch.clone(), report.clone(), manager.stop.clone());
                tokio::spawn(async move {
                    let _ = tokio::time::timeout(DEFER_MAX, gate.wait_for(|open| *open)).await;
                    supervise.await
                })
            })
            .collect();
        *lock(&manager.tasks) = tasks;
        manager
    }

    /// Lets the servers start (at once when already open).
    pub fn open(&self) {
        self.gate.send_replace(true);
    }

    /// Every server's state, in name order.
    pub fn infos(&self) -> Vec<McpServerInfo> {
        self.servers
            .iter()
            .map(|s| {
                let inner = lock(&s.inner);
                McpServerInfo {
                    name: s.name.clone(),
                    transport: if s.config.url.is_some() {
                        "http"
                    } else {
                        "stdio"
                    }
                    .into(),
                    state: inner.state.as_str().into(),
                    tools: inner.tools.iter().map(|t| t.name.clone()).collect(),
                    last_error: inner.last_error.clone(),
                }
            })
            .collect()
    }

    /// Follows `infos` as it changes (the TUI's status line and `/mcp`).
    pub fn watch(&self) -> watch::Receiver<Vec<McpServerInfo>> {
        self.status.subscribe()
    }

    pub fn is_empty(&self) -> bool {
        self.servers.is_empty()
    }

    /// The tools of the connected servers, by server then tool name.
    pub fn tools(&self) -> Vec<McpTool> {
        self.servers
            .iter()
            .flat_map(|s| lock(&s.inner).tools.clone())
            .collect()
    }

    /// The tools `session`'s turns are offered: the configured servers',
    /// then those its client brought.
    pub fn tools_for(&self, session: &str) -> Vec<McpTool> {
        self.servers_for(session)
            .iter()
            .flat_map(|s| lock(&s.inner).tools.clone())
            .collect()
    }

    /// Calls a tool with arguments already checked; Ok(result as JSON) or
    /// Err(one line for the model). A server that goes away mid-call fails
    /// the call at once (its supervisor restarts it).
    pub async fn call(
        &self,
        session: &str,
        tool: &McpTool,
        arguments: serde_json::Map<String, Value>,
        cancel: &CancellationToken,
    ) -> Result<Value, String> {
        let servers = self.servers_for(session);
        let Some(server) = servers.iter().find(|s| s.name == tool.server) else {
            return Err(format!("no MCP server `{}`", tool.server));
        };
        let Some(peer) = lock(&server.inner).peer.clone() else {
            return Err(format!("MCP server `{}` is not connected", tool.server));
        };
        let timeout: Duration = server.config.tool_timeout.0;
        let params =
            rmcp::model::CallToolRequestParams::new(tool.name.clone()).with_arguments(arguments);
        let result = tokio::select! {
            _ = cancel.cancelled() => return Err("interrupted".into()),
            r = tokio::time::timeout(timeout, peer.call_tool(params)) => r,
        };
        match result {
            Err(_) => Err(format!(
                "`{}` did not answer within {}s ([mcp.servers.{}] tool_timeout)",
                tool.full_name,
                timeout.as_secs(),
                tool.server
            )),
            Ok(Err(e)) => Err(format!("MCP server `{}` failed the call: {e}", tool.server)),
            Ok(Ok(result)) => serde_json::to_value(&result)
                .map_err(|e| format!("unreadable result from `{}`: {e}", tool.server)),
        }
    }

    /// Stops every server: supervisors cancelled, stdio process groups
    /// killed (no orphans), waiting at most a moment for them.
    pub async fn shutdown(&self) {
        self.stop.cancel();
        self.stop_sessions();
        let tasks: Vec<JoinHandle<()>> = lock(&self.tasks).drain(..).collect();
        let _ = tokio::time::timeout(
            Duration::from_secs(2),
            futures_util::future::join_all(tasks),
        )
        .await;
        for server in &self.servers {
            server.kill_group();
        }
    }
}

impl Drop for McpManager {
    /// A last guard when egirl exits without `shutdown` (a panic, an early
    /// return): the groups still get SIGKILL.
    fn drop(&mut self) {
        let sessions = lock(&self.sessions);
        let brought = sessions.values().flat_map(|s| s.servers.iter());
        for server in self.servers.iter().chain(brought) {
            if let Some(group) = server.group().filter(|g| *g > 1) {
                // SAFETY: a process group egirl created.
                unsafe {
                    libc::kill(-group, libc::SIGKILL);
                }
            }
        }
    }
}

/// The compact listing the prompt carries: one line per server, tool names
/// only (`everything: echo, get-sum, ...`). Sorted, so it is byte-identical
/// while the same tools are connected.
pub fn listing(tools: &[McpTool]) -> String {
    let mut lines: Vec<String> = Vec::new();
    let mut current: Option<&str> = None;
    for tool in tools {
        if current != Some(tool.server.as_str()) {
            current = Some(&tool.server);
            lines.push(format!("{}: {}", tool.server, tool.name));
        } else if let Some(line) = lines.last_mut() {
            line.push_str(", ");
            line.push_str(&tool.name);
        }
    }
    lines.join("\n")
}

impl McpManager {
    /// A server's `approval` (`ask` for an unknown one, and for every
    /// server a session's client brought).
    pub fn approval(&self, session: &str, server: &str) -> McpApproval {
        self.servers_for(session)
            .iter()
            .find(|s| s.name == server)
            .map_or(McpApproval::Ask, |s| s.config.approval)
    }
}

impl McpManager {
    /// Waits until no server is still starting (each gets at most its
    /// `startup_timeout`): a headless run's first request, or a call that
    /// came before its server was up, sees the tools of every server that
    /// could connect.
    pub async fn settled(&self) {
        let longest = self
            .servers
            .iter()
            .map(|s| s.config.startup_timeout.0)
            .max()
            .unwrap_or_default();
        let mut status = self.watch();
        let _ = tokio::time::timeout(
            longest + Duration::from_millis(500),
            status.wait_for(|infos| infos.iter().all(|i| i.state != State::Starting.as_str())),
        )
        .await;
    }
}

impl McpManager {
    /// `name` is a configured server: its tools, one line each (full name,
    /// first sentence of the purpose, read-only or not), or why there are
    /// none. None when `name` is no server.
    pub fn server_listing(&self, session: &str, name: &str) -> Option<String> {
        let servers = self.servers_for(session);
        let server = servers.iter().find(|s| s.name == name)?;
        let inner = lock(&server.inner);
        if inner.state != State::Ready {
            let why = inner.last_error.as_deref().unwrap_or("still starting");
            return Some(format!(
                "MCP server `{name}` is {} ({why})",
                inner.state.as_str()
            ));
        }
        let lines: Vec<String> = inner
            .tools
            .iter()
            .map(|t| {
                let purpose = one_line(&t.description);
                let ro = if t.read_only { " [read-only]" } else { "" };
                format!("{}__{}{ro}: {purpose}", t.server, t.name)
            })
            .collect();
        Some(format!(
            "{}\n(mcp {{\"name\": \"{name}__<tool>\"}} gives a tool's arguments)",
            lines.join("\n")
        ))
    }
}

/// The first sentence or line of a description, at most 100 characters.
fn one_line(text: &str) -> String {
    let line = text.lines().next().unwrap_or("").trim();
    let sentence = match line.find(". ") {
        Some(end) => &line[..=end],
        None => line,
    };
    if sentence.chars().count() <= 100 {
        return sentence.to_string();
    }
    let cut: String = sentence.chars().take(99).collect();
    format!("{cut}…")
}

#[cfg(test)]
impl McpManager {
    /// Servers that are `ready` with these tools and no connection (a
    /// call that gets past the checks fails as "not connected").
    pub fn with_tools(tools: Vec<McpTool>) -> Arc<Self> {
        let mut names: Vec<String> = tools.iter().map(|t| t.server.clone()).collect();
        names.dedup();
        let servers = names
            .iter()
            .map(|name| {
                let server = Server::new(name, crate::config::McpServerConfig::default());
                server.set(|i| {
                    i.state = State::Ready;
                    i.tools = tools
                        .iter()
                        .filter(|t| &t.server == name)
                        .cloned()
                        .collect();
                });
                Arc::new(server)
            })
            .collect();
        Arc::new(Self::unstarted(servers, None, Launch::default(), true))
    }
}
