//! A surface's connection to the agent core, wherever the core runs: in
//! this process (`AgentHandle::link`) or in another one that owns the
//! workspace, reached over its socket (`client`). A surface that holds a
//! [`CoreLink`] submits ops and reads events the same way in both cases,
//! so the TUI and the headless turn attach to a daemon without knowing it.

pub mod client;
pub mod frames;
pub mod ws;

use std::sync::Arc;

use tokio::sync::watch;

use crate::bus::{EventBus, EventReceiver};
use crate::protocol::wire::CoreStatus;
use crate::protocol::{BotStatus, McpServerInfo, Submission};

/// Hands a submission to the core; false when the core (or the
/// connection to it) is gone for good.
pub type SubmitFn = Arc<dyn Fn(Submission) -> bool + Send + Sync>;

/// What a surface holds to talk to the core.
#[derive(Clone)]
pub struct CoreLink {
    submit: SubmitFn,
    /// The core's events; a surface subscribes before it submits.
    pub bus: EventBus,
    /// The bots, MCP servers and local health as the core's process sees
    /// them (in process: filled by whoever runs them). One receiver shared
    /// by every clone of the link: a surface that shows the status takes
    /// its own with [`CoreLink::watch_status`], and only while one is held
    /// are the local endpoints probed (an idle daemon holds clones of the
    /// link, and would otherwise probe every 10 s with nobody looking).
    pub status: Arc<watch::Receiver<CoreStatus>>,
    /// Told when a surface takes a status receiver of its own, so the
    /// task that keeps the status probes only while someone looks.
    watchers: Arc<tokio::sync::Notify>,
    /// Lets the MCP servers start once the surface is up (in process;
    /// a no-op when attached: the daemon started them).
    start_mcp: Arc<dyn Fn() + Send + Sync>,
    /// `None` in process; else what the status line shows (`serve pid
    /// 1234`, `ws://host:7420`).
    pub attached: Option<String>,
    /// The connection's state when attached (`None` in process).
    pub connection: Option<watch::Receiver<LinkState>>,
    /// Attached: a queue subscribed before the first event arrived (the
    /// open approvals follow `hello` at once), handed to the first
    /// `subscribe` so the surface misses none of them.
    first: Arc<std::sync::Mutex<Option<EventReceiver>>>,
}

/// An attached link's connection, as the surface shows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LinkState {
    /// Connected; `resyncs` counts the times the view had to be reloaded
    /// from the transcripts (the server's `resync`, or a reconnect that
    /// found the core's process restarted): a surface that sees it grow
    /// reloads what it shows. `label` is what the status line says it is
    /// attached to (`serve pid 1234`: the new pid after a restart).
    Connected { resyncs: u64, label: String },
    /// The connection was lost; the link retries (attempt N, after why).
    Reconnecting { attempt: u32, why: String },
    /// Given up for good (the server refused this client): why.
    Closed(String),
}

impl CoreLink {
    pub fn new(
        submit: SubmitFn,
        bus: EventBus,
        status: watch::Receiver<CoreStatus>,
        start_mcp: Arc<dyn Fn() + Send + Sync>,
        attached: Option<String>,
    ) -> Self {
        CoreLink {
            submit,
            bus,
            status: Arc::new(status),
            watchers: Arc::default(),
            start_mcp,
            attached,
            connection: None,
            first: Arc::default(),
        }
    }

    /// A receiver of the status of one's own, for a surface that shows it.
    pub fn watch_status(&self) -> watch::Receiver<CoreStatus> {
        let status = (*self.status).clone();
        self.watchers.notify_one();
        status
    }

    /// Woken by [`CoreLink::watch_status`] (a permit is kept when nobody
    /// waits): for whoever keeps the status.
    pub fn status_watchers(&self) -> Arc<tokio::sync::Notify> {
        self.watchers.clone()
    }

    /// Keeps `events` (subscribed before any event could arrive) for the
    /// first `subscribe`.
    pub fn with_first_subscriber(self, events: EventReceiver) -> Self {
        if let Ok(mut first) = self.first.lock() {
            *first = Some(events);
        }
        self
    }

    /// Sends an op under a fresh id; false when the core is gone.
    pub fn submit(&self, op: crate::protocol::Op) -> bool {
        self.submit_with(Submission::new(op))
    }

    /// Sends a submission under the id its events will carry.
    pub fn submit_with(&self, submission: Submission) -> bool {
        (self.submit)(submission)
    }

    pub fn subscribe(&self) -> EventReceiver {
        let first = self.first.lock().ok().and_then(|mut first| first.take());
        first.unwrap_or_else(|| self.bus.subscribe())
    }

    pub fn start_mcp(&self) {
        (self.start_mcp)()
    }

    /// The MCP servers' state now.
    pub fn mcp(&self) -> Vec<McpServerInfo> {
        self.status.borrow().mcp.clone()
    }

    /// The Discord bot's state now, when the core's process runs one.
    pub fn discord(&self) -> Option<BotStatus> {
        self.status.borrow().discord.clone()
    }
}
