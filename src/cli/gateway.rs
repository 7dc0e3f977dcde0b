//! The socket of the process that holds the services lock
//! (`<workspace>/.egirl/egirl.sock`): `egirl serve`, or the TUI that
//! started first, serves its core to other processes (docs/protocol.md),
//! and on TCP + WebSocket when `[gateway] listen` is set.

use super::Environment;
use crate::config;
use crate::link::CoreLink;
use crate::link::client::socket_path;
use crate::surfaces::gateway::auth::secret;
use crate::surfaces::gateway::tcp::{self, TcpServer};
use crate::surfaces::gateway::unix::{self, UnixServer};
use crate::surfaces::gateway::{Bounds, Gateway, HelloFacts};

/// Overrides the replay ring's event count (a tuning and test knob; the
/// byte bound stays).
const RING_EVENTS_VAR: &str = "EGIRL_GATEWAY_RING_EVENTS";

/// The listeners serving this process's core to other processes; one
/// [`Gateway`] (one numbered stream) behind all of them.
pub struct Listeners {
    /// For a further listener to serve the same stream, and for `serve`'s
    /// notify command to know whether a client is attached.
    pub gateway: Gateway,
    pub socket: UnixServer,
    /// `[gateway] listen`'s WebSocket listener, when set.
    pub tcp: Option<TcpServer>,
}

impl Listeners {
    /// Closes every connection and removes the socket file.
    pub async fn stop(self) {
        if let Some(tcp) = self.tcp {
            tcp.stop().await;
        }
        self.socket.stop().await;
    }
}

/// Starts serving `link` on the workspace's socket (and TCP when
/// configured); `mode` is `serve` or `tui`. Err is one line saying why not.
pub fn start(env: &Environment, link: &CoreLink, mode: &str) -> Result<Listeners, String> {
    let facts = HelloFacts {
        server: format!("egirl {}", env!("CARGO_PKG_VERSION")),
        mode: mode.to_string(),
        workspace: env.workspace.clone(),
        capabilities: Vec::new(),
        model: env.config.local.model.clone(),
        context_length: env.config.local.context_length,
    };
    let mut bounds = Bounds::default();
    if let Some(events) = std::env::var(RING_EVENTS_VAR)
        .ok()
        .and_then(|v| v.parse::<usize>().ok())
    {
        bounds.events = events.max(1);
    }
    let gateway = Gateway::start(link.clone(), facts, bounds);
    let path = socket_path(&env.workspace);
    let token = secret::ensure_token(&config::gateway::token_path())
        .map_err(|e| format!("{e}; other processes cannot attach"))?;
    let socket = unix::listen(gateway.clone(), &path, token)
        .map_err(|e| format!("{e:#}; other processes cannot attach"))?;
    let tcp = tcp::start(&env.config.gateway, &gateway)?;
    Ok(Listeners {
        gateway,
        socket,
        tcp,
    })
}

/// The gateway token this user's clients present on the workspace's
/// socket; None when there is none yet (no core has listened).
pub fn socket_token() -> Option<String> {
    let text = secret::read_private(&config::gateway::token_path()).ok()??;
    Some(text.trim().to_string()).filter(|t| !t.is_empty())
}
