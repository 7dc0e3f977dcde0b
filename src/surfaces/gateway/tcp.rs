//! The TCP + WebSocket listener (`[gateway] listen`, off by default): the
//! same protocol as the Unix socket for other machines and the browser,
//! one frame per WebSocket text message at `GET /ws`; the web page at `/`
//! (`super::web`).
//!
//! Auth is always on here ([`super::auth`]): a token in `hello`, as
//! `Authorization: Bearer` on the upgrade or as the web page's device
//! cookie (a wrong one there is answered 401), or a pairing code for a
//! new device. A browser's upgrade (it has an `Origin`) must come from a
//! page of this listener (`web::host`: else 403: a web page the user
//! visits must not reach the core through the user's browser) and carry
//! the cookie or a bearer (else 401). A client without `Origin` (not a
//! browser) is fine.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use axum::Router;
use axum::extract::ws::{Message, WebSocket, WebSocketUpgrade};
use axum::extract::{ConnectInfo, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use futures_util::future::BoxFuture;
use futures_util::stream::{SplitSink, SplitStream};
use futures_util::{SinkExt, StreamExt};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use super::Gateway;
use super::admission::Admitted;
use super::auth::GatewayAuth;
use super::tcp_accept::{self, BoundedListener, Peer};
use super::web::{self, Web, host::HostRules};
use crate::config::GatewayConfig;
use crate::config::gateway::{self as gateway_config, TcpPlan};
use crate::link::frames::{FrameReader, FrameWriter, Framed};
use crate::protocol::wire::MAX_CLIENT_FRAME;

/// WebSocket connections served at once; more are answered 503.
pub const MAX_CONNECTIONS: usize = 64;

/// The running listener.
pub struct TcpServer {
    /// Where it listens (the real port when `listen` asked for 0).
    pub addr: SocketAddr,
    stop: CancellationToken,
    task: Option<JoinHandle<()>>,
}

impl TcpServer {
    /// `ws://addr/ws`, as clients dial it.
    pub fn url(&self) -> String {
        format!("ws://{}/ws", self.addr)
    }

    /// Closes the listener and its connections.
    pub async fn stop(mut self) {
        self.stop.cancel();
        if let Some(task) = self.task.take() {
            let _ = tokio::time::timeout(Duration::from_secs(5), task).await;
        }
    }
}

impl Drop for TcpServer {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

/// What every request of the listener shares.
struct Listener {
    gateway: Gateway,
    auth: Arc<GatewayAuth>,
    /// The web page's state: the `Host`/`Origin` rules, the cookie's auth.
    web: Arc<Web>,
    open: AtomicUsize,
    stop: CancellationToken,
}

/// Starts the listener `[gateway]` asks for, serving `gateway`: None when
/// it is off; the error is one line.
pub fn start(config: &GatewayConfig, gateway: &Gateway) -> Result<Option<TcpServer>, String> {
    let Some(plan) = config.plan(gateway_config::auth_off_by_environment())? else {
        return Ok(None);
    };
    let auth = if plan.auth_off {
        tracing::warn!(
            addr = %plan.addr,
            "gateway: auth is off ({}=1); loopback only",
            gateway_config::NO_AUTH_VAR
        );
        GatewayAuth::without_auth(&gateway_config::secrets_dir())
    } else {
        GatewayAuth::open().map_err(|e| format!("[gateway] {e}"))?
    };
    listen(gateway.clone(), &plan, Arc::new(auth)).map(Some)
}

/// Binds `plan`'s address and serves `gateway` there; the error is one
/// line (the address is in use, not ours...).
/// (In a Tokio runtime.)
pub fn listen(
    gateway: Gateway,
    plan: &TcpPlan,
    auth: Arc<GatewayAuth>,
) -> Result<TcpServer, String> {
    let cannot = |e: std::io::Error| format!("[gateway] cannot listen on {}: {e}", plan.addr);
    let listener = std::net::TcpListener::bind(plan.addr).map_err(cannot)?;
    listener.set_nonblocking(true).map_err(cannot)?;
    let listener = tokio::net::TcpListener::from_std(listener).map_err(cannot)?;
    let addr = listener
        .local_addr()
        .map_err(|e| format!("[gateway] no local address: {e}"))?;
    let listener = BoundedListener::new(listener);
    let stop = CancellationToken::new();
    let web = Arc::new(Web {
        auth: auth.clone(),
        hosts: HostRules::new(addr.port(), plan.hosts.clone()),
    });
    let state = Arc::new(Listener {
        gateway,
        auth,
        web,
        open: AtomicUsize::new(0),
        stop: stop.clone(),
    });
    let task = tokio::spawn(tcp_accept::serve(listener, router(state), stop.clone()));
    tracing::info!(%addr, "gateway: listening on TCP");
    Ok(TcpServer {
        addr,
        stop,
        task: Some(task),
    })
}

/// The listener's routes: the WebSocket at `/ws` beside the web page's,
/// every response with the page's security headers.
fn router(state: Arc<Listener>) -> Router {
    let page = web::router(state.web.clone());
    Router::new()
        .route("/ws", get(upgrade))
        .with_state(state)
        .merge(page)
        .layer(axum::middleware::from_fn(web::secure_headers))
}

async fn upgrade(
    State(state): State<Arc<Listener>>,
    ConnectInfo(Peer(peer)): ConnectInfo<Peer>,
    headers: HeaderMap,
    ws: WebSocketUpgrade,
) -> Response {
    let browser = headers.contains_key(header::ORIGIN);
    if browser && let Err(why) = state.web.hosts.check(&headers, true) {
        tracing::warn!(%peer, "gateway: refused a WebSocket: {}", why.message());
        return web::forbidden(why);
    }
    let presented = bearer(&headers).map(|token| state.auth.check(token));
    let bearer = match presented.or_else(|| state.web.cookie_admits(&headers)) {
        None => None,
        Some(Ok(who)) => Some(who),
        Some(Err(why)) => {
            tracing::warn!(%peer, "gateway: refused a WebSocket: {why}");
            return (StatusCode::UNAUTHORIZED, format!("{why}\n")).into_response();
        }
    };
    if browser && bearer.is_none() && state.auth.auth_on() {
        tracing::warn!(%peer, "gateway: refused a browser's WebSocket without a device cookie");
        let why = "sign in first: this browser has no device cookie\n";
        return (StatusCode::UNAUTHORIZED, why).into_response();
    }
    if state.open.fetch_add(1, Ordering::SeqCst) >= MAX_CONNECTIONS {
        state.open.fetch_sub(1, Ordering::SeqCst);
        return (StatusCode::SERVICE_UNAVAILABLE, "too many connections\n").into_response();
    }
    let slot = Slot(state.clone());
    ws.max_message_size(MAX_CLIENT_FRAME)
        .max_frame_size(MAX_CLIENT_FRAME)
        .on_upgrade(move |socket| serve_socket(slot, socket, peer, bearer))
}

/// A connection's place under [`MAX_CONNECTIONS`], given back when it ends.
struct Slot(Arc<Listener>);

impl Drop for Slot {
    fn drop(&mut self) {
        self.0.open.fetch_sub(1, Ordering::SeqCst);
    }
}

async fn serve_socket(slot: Slot, socket: WebSocket, peer: SocketAddr, bearer: Option<Admitted>) {
    let state = slot.0.clone();
    let admission = state.auth.connection(Some(peer.ip()), bearer);
    tokio::select! {
        () = state.gateway.serve(framed(socket), admission) => {}
        () = state.stop.cancelled() => {}
    }
    drop(slot);
}

/// `Authorization: Bearer <token>`'s token.
fn bearer(headers: &HeaderMap) -> Option<&str> {
    headers
        .get(header::AUTHORIZATION)?
        .to_str()
        .ok()?
        .strip_prefix("Bearer ")
        .map(str::trim)
}

/// A WebSocket as frames: one text message each.
fn framed(socket: WebSocket) -> Framed {
    let (sink, stream) = socket.split();
    Framed {
        reader: Box::new(WsReader(stream)),
        writer: Box::new(WsWriter(sink)),
    }
}

struct WsReader(SplitStream<WebSocket>);

impl FrameReader for WsReader {
    fn read_frame(&mut self) -> BoxFuture<'_, std::io::Result<Option<String>>> {
        Box::pin(async move {
            loop {
                match self.0.next().await {
                    None | Some(Ok(Message::Close(_))) => return Ok(None),
                    Some(Ok(Message::Text(text))) => return Ok(Some(text.as_str().to_owned())),
                    Some(Ok(Message::Binary(_))) => {
                        return Err(std::io::Error::new(
                            std::io::ErrorKind::InvalidData,
                            "a frame is a text message, not binary",
                        ));
                    }
                    // Pings are answered by the WebSocket itself.
                    Some(Ok(Message::Ping(_) | Message::Pong(_))) => continue,
                    Some(Err(e)) => return Err(std::io::Error::other(e)),
                }
            }
        })
    }
}

struct WsWriter(SplitSink<WebSocket, Message>);

impl FrameWriter for WsWriter {
    fn write_frame<'a>(&'a mut self, frame: &'a str) -> BoxFuture<'a, std::io::Result<()>> {
        Box::pin(async move {
            self.0
                .feed(Message::Text(frame.into()))
                .await
                .map_err(std::io::Error::other)
        })
    }

    fn flush(&mut self) -> BoxFuture<'_, std::io::Result<()>> {
        Box::pin(async move { self.0.flush().await.map_err(std::io::Error::other) })
    }
}
