//! The attached [`CoreLink`]: a surface in this process, the core in the
//! process that owns the workspace, reached over its socket
//! (docs/protocol.md). Events from `event` frames go into a local
//! [`EventBus`] exactly once (by `seq`), `status` frames into the status
//! watch, and ops go out as `op` frames. A lost connection is retried with
//! backoff and resumed from the last `seq` applied; ops submitted
//! meanwhile wait (up to [`MAX_QUEUED_OPS`]) and go out on reconnect.
//!
//! The transport is a [`Dialer`]: anything that opens a fresh [`Framed`]
//! connection (the Unix socket here: [`unix_dialer`]; a WebSocket with
//! its token elsewhere), so reconnecting works the same for all.

mod driver;

use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, anyhow};
use futures_util::future::BoxFuture;
use tokio::sync::{mpsc, watch};

use super::frames::{self, Framed};
use super::{CoreLink, LinkState};
use crate::bus::EventBus;
use crate::protocol::wire::{
    ClientFrame, ClientHello, CoreStatus, ServerFrame, ServerHello, WIRE_VERSION,
};

/// Opens a fresh connection to the server (called again on each reconnect).
pub type Dialer = Arc<dyn Fn() -> BoxFuture<'static, io::Result<Framed>> + Send + Sync>;

/// Ops that wait for a connection at most; one more is refused (`submit`
/// returns false) rather than growing without bound.
pub const MAX_QUEUED_OPS: usize = 1024;

/// The longest frame a client reads: a server frame carries at most one
/// event, and events are bounded by the reply and tool-output caps.
pub const MAX_SERVER_FRAME: usize = 64 * 1024 * 1024;

/// How long `probe` and each dial-and-hello may take.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(5);

/// Who the client is, for `hello`.
#[derive(Clone, Debug, Default)]
pub struct ConnectOptions {
    /// The client's name and version (`egirl-tui 0.1.0`), for the
    /// server's log.
    pub client: String,
    /// A device or gateway token (TCP only); never logged.
    pub token: Option<String>,
    /// What the status line shows; default `<mode> pid <pid>` from the
    /// server's `hello`.
    pub label: Option<String>,
}

/// The socket of the process that owns `workspace`'s core.
pub fn socket_path(workspace: &Path) -> PathBuf {
    workspace.join(".egirl").join("egirl.sock")
}

/// Dials the Unix socket at `path`.
pub fn unix_dialer(path: PathBuf) -> Dialer {
    Arc::new(move || {
        let path = path.clone();
        Box::pin(async move {
            let stream = tokio::net::UnixStream::connect(&path).await?;
            // `hello` carries the gateway token: never to a socket another
            // user listens on (one planted where a workspace is shared, or
            // named to `egirl attach`).
            let owner = stream.peer_cred()?.uid();
            // SAFETY: geteuid has no preconditions and cannot fail.
            let me = unsafe { libc::geteuid() };
            if owner != me {
                return Err(io::Error::new(
                    io::ErrorKind::PermissionDenied,
                    format!(
                        "the socket at {} belongs to another user (uid {owner})",
                        path.display()
                    ),
                ));
            }
            let (read, write) = stream.into_split();
            Ok(frames::lines(read, write, MAX_SERVER_FRAME))
        })
    })
}

/// Attaches to the core serving on the Unix socket at `path`; `token` is
/// the gateway token the socket asks for.
pub async fn connect_unix(path: &Path, client: &str, token: &str) -> anyhow::Result<CoreLink> {
    Ok(attach_unix(path, client, token).await?.0)
}

/// As [`connect_unix`], with the server's `hello` (its model, workspace,
/// live sessions...).
pub async fn attach_unix(
    path: &Path,
    client: &str,
    token: &str,
) -> anyhow::Result<(CoreLink, ServerHello)> {
    let options = ConnectOptions {
        client: client.to_string(),
        token: Some(token.to_string()),
        ..ConnectOptions::default()
    };
    attach(unix_dialer(path.to_path_buf()), options)
        .await
        .with_context(|| format!("attaching to {}", path.display()))
}

/// Connects through `dial`, says `hello`, and returns the link with the
/// server's `hello`; Err when the first connection fails or is refused.
pub async fn attach(
    dial: Dialer,
    options: ConnectOptions,
) -> anyhow::Result<(CoreLink, ServerHello)> {
    let hello = ClientHello {
        version: WIRE_VERSION,
        client: options.client.clone(),
        token: options.token.clone(),
        resume_after: None,
    };
    let (framed, server) = match dial_and_hello(&dial, &hello).await {
        Ok(connected) => connected,
        Err(Handshake::Refused(why)) => return Err(anyhow!("refused: {why}")),
        Err(Handshake::Failed(why)) => return Err(anyhow!(why)),
    };
    let label = options
        .label
        .clone()
        .unwrap_or_else(|| driver::label_of(&server));
    let bus = EventBus::new();
    let (status_tx, status) = watch::channel(CoreStatus::default());
    let (state_tx, state) = watch::channel(LinkState::Connected {
        resyncs: 0,
        label: label.clone(),
    });
    let (outbox_tx, outbox) = mpsc::channel(MAX_QUEUED_OPS);
    // Before the driver reads on: the open approvals that follow `hello`.
    let first = bus.subscribe();
    let driver = driver::Driver::new(driver::Parts {
        dial,
        hello,
        bus: bus.clone(),
        status: status_tx,
        state: state_tx,
        outbox,
        last: server.seq,
        server: server.clone(),
        label: options.label,
    });
    tokio::spawn(driver.run(framed));
    let mut link = CoreLink::new(
        Arc::new(move |submission| outbox_tx.try_send(submission).is_ok()),
        bus,
        status,
        Arc::new(|| {}),
        Some(label),
    );
    link.connection = Some(state);
    Ok((link.with_first_subscriber(first), server))
}

/// Whether a core answers on the socket at `path` and takes `token`: its
/// `hello`, or None (no socket, nothing listening, refused, or no answer
/// within 5 s).
pub async fn probe(path: &Path, token: &str) -> Option<ServerHello> {
    let hello = ClientHello {
        version: WIRE_VERSION,
        client: format!("egirl-probe {}", env!("CARGO_PKG_VERSION")),
        token: Some(token.to_string()),
        ..ClientHello::default()
    };
    let dial = unix_dialer(path.to_path_buf());
    dial_and_hello(&dial, &hello).await.ok().map(|(_, h)| h)
}

/// Why a connection did not get as far as the server's `hello`.
enum Handshake {
    /// The server said `error` (a wrong token, a version it does not
    /// speak): retrying will not help.
    Refused(String),
    /// No connection, or it broke: worth retrying.
    Failed(String),
}

async fn dial_and_hello(
    dial: &Dialer,
    hello: &ClientHello,
) -> Result<(Framed, ServerHello), Handshake> {
    let attempt = async {
        let mut framed = dial().await.map_err(|e| Handshake::Failed(e.to_string()))?;
        let line = serde_json::to_string(&ClientFrame::Hello(hello.clone()))
            .map_err(|e| Handshake::Failed(e.to_string()))?;
        let wrote = framed.writer.write_frame(&line).await;
        wrote
            .and(framed.writer.flush().await)
            .map_err(|e| Handshake::Failed(e.to_string()))?;
        let first = framed
            .reader
            .read_frame()
            .await
            .map_err(|e| Handshake::Failed(e.to_string()))?
            .ok_or_else(|| Handshake::Failed("the server closed the connection".into()))?;
        match serde_json::from_str::<ServerFrame>(&first) {
            Ok(ServerFrame::Hello(server)) => Ok((framed, server)),
            Ok(ServerFrame::Error(e)) => Err(Handshake::Refused(e.message)),
            Ok(_) => Err(Handshake::Failed(
                "the server did not start with hello".into(),
            )),
            Err(e) => Err(Handshake::Failed(format!(
                "not a frame from the server: {e}"
            ))),
        }
    };
    match tokio::time::timeout(HANDSHAKE_TIMEOUT, attempt).await {
        Ok(result) => result,
        Err(_) => Err(Handshake::Failed(
            "no hello from the server within 5 s".into(),
        )),
    }
}
