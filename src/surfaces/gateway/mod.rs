//! The gateway: the protocol on a socket. The process that owns the core
//! serves it to other processes (an attached TUI, a script, the web page)
//! over `.egirl/egirl.sock` and, when configured, TCP + WebSocket. Every
//! connection is a client of the same core: it reads the core's events in
//! order, numbered, and sends ops as the in-process surfaces do.
//!
//! One [`Gateway`] per core: it numbers the core's events into a bounded
//! ring (`ring`), and [`Gateway::serve`] runs one connection over any
//! [`Framed`] transport with the listener's [`Admission`] rule
//! (`connection`). `unix` is the Unix socket's listener, `tcp` the
//! WebSocket one, `auth` who may use it, `web` the page served beside it.

pub mod admission;
pub mod auth;
mod budget;
mod connection;
mod merge;
mod queries;
pub mod ring;
pub mod tcp;
mod tcp_accept;
pub mod unix;
pub mod web;

use std::sync::Arc;

use crate::link::CoreLink;
use crate::link::frames::Framed;
use crate::protocol::wire::{ServerHello, WIRE_VERSION};
use admission::Admission;
use ring::Stream;

/// What `hello` says about this server besides the stream's state.
#[derive(Clone, Debug, Default)]
pub struct HelloFacts {
    /// `egirl 0.1.0`.
    pub server: String,
    /// `serve` or `tui`.
    pub mode: String,
    /// The workspace the core works in: `hello` names it, queries read its
    /// transcripts, cron jobs and usage log.
    pub workspace: std::path::PathBuf,
    pub capabilities: Vec<String>,
    pub model: String,
    pub context_length: u64,
}

/// The ring's bounds (see `ring::RING_EVENTS`, `ring::RING_BYTES`).
#[derive(Clone, Copy, Debug)]
pub struct Bounds {
    pub events: usize,
    pub bytes: usize,
}

impl Default for Bounds {
    fn default() -> Self {
        Bounds {
            events: ring::RING_EVENTS,
            bytes: ring::RING_BYTES,
        }
    }
}

/// The server side of one core: cheap to clone, one per listener.
#[derive(Clone)]
pub struct Gateway {
    shared: Arc<Shared>,
}

/// Connections served at once over every listener of one core; past it
/// a client is told so and closed. A local process (a command the model
/// runs included) that opens socket after socket and says nothing holds
/// each for the hello timeout only, and never more than this many.
pub const MAX_CLIENTS: usize = 256;

struct Shared {
    link: CoreLink,
    /// Places under [`MAX_CLIENTS`].
    clients: Arc<tokio::sync::Semaphore>,
    stream: Arc<Stream>,
    facts: HelloFacts,
    /// `hello.instance`: this gateway's run, told apart from the next.
    instance: String,
    sequencer: tokio::task::JoinHandle<()>,
}

impl Drop for Shared {
    fn drop(&mut self) {
        self.sequencer.abort();
    }
}

impl Gateway {
    /// Subscribes to the core's events and numbers them from now on.
    pub fn start(link: CoreLink, facts: HelloFacts, bounds: Bounds) -> Self {
        let stream = Arc::new(Stream::new(bounds.events, bounds.bytes));
        let mut events = link.subscribe();
        let sequenced = stream.clone();
        // The core is never slowed by a client: this task only appends.
        let sequencer = tokio::spawn(async move {
            while let Some(event) = events.recv().await {
                sequenced.append(event);
            }
        });
        Gateway {
            shared: Arc::new(Shared {
                link,
                clients: Arc::new(tokio::sync::Semaphore::new(MAX_CLIENTS)),
                stream,
                facts,
                instance: uuid::Uuid::new_v4().simple().to_string(),
                sequencer,
            }),
        }
    }

    /// Runs one connection until the client goes or is refused.
    pub async fn serve(&self, framed: Framed, admission: Arc<dyn Admission>) {
        let Ok(_place) = self.shared.clients.clone().try_acquire_owned() else {
            tracing::warn!("gateway: refused a client: {MAX_CLIENTS} are connected");
            connection::refuse_busy(framed).await;
            return;
        };
        connection::serve(self.shared.clone(), framed, admission).await;
    }

    /// Connections open now (over every listener of this core).
    pub fn clients(&self) -> usize {
        MAX_CLIENTS.saturating_sub(self.shared.clients.available_permits())
    }

    /// `hello` as a client connecting now would get it.
    pub fn hello(&self) -> ServerHello {
        let state = self.shared.stream.lock();
        self.shared
            .hello(state.ring.newest(), state.tracker.sessions())
    }
}

impl Shared {
    fn hello(&self, seq: u64, sessions: Vec<crate::protocol::wire::LiveSession>) -> ServerHello {
        let facts = &self.facts;
        ServerHello {
            version: WIRE_VERSION,
            events: crate::protocol::PROTOCOL_VERSION,
            server: facts.server.clone(),
            pid: std::process::id(),
            instance: self.instance.clone(),
            mode: facts.mode.clone(),
            workspace: facts.workspace.display().to_string(),
            capabilities: facts.capabilities.clone(),
            seq,
            sessions,
            model: facts.model.clone(),
            context_length: facts.context_length,
        }
    }
}

#[cfg(test)]
mod limit_tests;
#[cfg(test)]
mod tests;
