//! The TCP listener's accept side: bounds on the raw connections, before
//! any HTTP or auth. An unauthenticated peer that opens connections and
//! sends nothing must not take the process's file descriptors (the core,
//! the bots and their files share them) nor every place of the listener:
//! at most [`MAX_SOCKETS`] connections at once (the next wait in the
//! kernel's backlog), at most [`MAX_PER_PEER`] from one address (an IPv6
//! peer by its /64, which one host has whole), and a connection must send
//! its first bytes within [`FIRST_BYTES_WITHIN`], and each request's head
//! within [`HEAD_WITHIN`] of when the connection waits for it (a header
//! line now and then, slowloris, or an idle kept-alive connection gives
//! its place back: on loopback every client is one peer, and one that
//! held its share locked the owner's browser out); a write that waits on
//! a peer reading nothing fails after [`WRITE_STALL_WITHIN`].

use std::collections::HashMap;
use std::io;
use std::net::{IpAddr, SocketAddr};
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::Router;
use axum::extract::ConnectInfo;
use hyper::body::Incoming;
use hyper::service::Service;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::task::JoinSet;
use tokio::time::Sleep;
use tokio_util::sync::CancellationToken;

/// Raw connections open at once (WebSockets are bounded lower, by
/// `tcp::MAX_CONNECTIONS`).
pub const MAX_SOCKETS: usize = 128;
/// Raw connections open at once from one peer.
pub const MAX_PER_PEER: usize = 16;
/// How long a new connection may stay silent.
pub const FIRST_BYTES_WITHIN: Duration = Duration::from_secs(10);
/// How long a request's head may take, from when the connection waits
/// for it (after the previous response, on a kept-alive connection).
pub const HEAD_WITHIN: Duration = Duration::from_secs(10);
/// How long a write may wait on a peer that reads nothing (requests
/// pipelined by the thousand, their responses never read; a WebSocket
/// client gone silent) before the connection is dropped.
pub const WRITE_STALL_WITHIN: Duration = Duration::from_secs(30);

/// A TCP listener that applies the bounds above.
pub struct BoundedListener {
    inner: TcpListener,
    sockets: Arc<Semaphore>,
    peers: Arc<Mutex<HashMap<IpAddr, usize>>>,
}

impl BoundedListener {
    pub fn new(inner: TcpListener) -> Self {
        Self {
            inner,
            sockets: Arc::new(Semaphore::new(MAX_SOCKETS)),
            peers: Arc::default(),
        }
    }
}

/// The peer's address, for `ConnectInfo`.
#[derive(Clone, Copy, Debug)]
pub struct Peer(pub SocketAddr);

impl BoundedListener {
    /// The next connection within the bounds (waiting while they are full).
    async fn accept(&mut self) -> (BoundedStream, Peer) {
        loop {
            let Ok(permit) = self.sockets.clone().acquire_owned().await else {
                // Never closed; wait as if full.
                std::future::pending::<()>().await;
                continue;
            };
            let (stream, addr) = match self.inner.accept().await {
                Ok(accepted) => accepted,
                Err(e) => {
                    // Out of descriptors, most likely: give them time back.
                    tracing::warn!("gateway: accept failed: {e}");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                }
            };
            let Some(slot) = PeerSlot::take(&self.peers, addr.ip()) else {
                tracing::warn!(peer = %addr, "gateway: too many connections from one peer");
                continue;
            };
            let _ = stream.set_nodelay(true);
            let stream = BoundedStream {
                stream,
                silent: Some(Box::pin(tokio::time::sleep(FIRST_BYTES_WITHIN))),
                stalled: None,
                _permit: permit,
                _slot: slot,
            };
            return (stream, Peer(addr));
        }
    }
}

/// Serves `app` on `listener`'s connections (HTTP/1.1 and the WebSocket
/// upgrade) until `stop`, then waits for the open ones to end. By hand,
/// not `axum::serve`: that one gives hyper no timer, and without one
/// hyper waits for a request head for ever.
pub async fn serve(mut listener: BoundedListener, app: Router, stop: CancellationToken) {
    let mut open = JoinSet::new();
    loop {
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => accepted,
            Some(_) = open.join_next(), if !open.is_empty() => continue,
            () = stop.cancelled() => break,
        };
        open.spawn(connection(stream, peer, app.clone(), stop.clone()));
    }
    while open.join_next().await.is_some() {}
}

/// One connection: its requests, each handed `ConnectInfo(peer)`.
async fn connection(stream: BoundedStream, peer: Peer, app: Router, stop: CancellationToken) {
    let app = TowerToHyperService::new(app);
    let service = hyper::service::service_fn(move |mut request: hyper::Request<Incoming>| {
        request.extensions_mut().insert(ConnectInfo(peer));
        app.call(request)
    });
    let served = hyper::server::conn::http1::Builder::new()
        .timer(TokioTimer::new())
        .header_read_timeout(HEAD_WITHIN)
        .serve_connection(TokioIo::new(stream), service)
        .with_upgrades();
    let mut served = std::pin::pin!(served);
    tokio::select! {
        _ = served.as_mut() => {}
        () = stop.cancelled() => {
            served.as_mut().graceful_shutdown();
            let _ = served.await;
        }
    }
}

/// A peer's count of open connections, given back when one closes.
struct PeerSlot {
    peers: Arc<Mutex<HashMap<IpAddr, usize>>>,
    key: IpAddr,
}

impl PeerSlot {
    fn take(peers: &Arc<Mutex<HashMap<IpAddr, usize>>>, ip: IpAddr) -> Option<Self> {
        let key = peer_key(ip);
        let mut open = peers.lock().unwrap_or_else(|e| e.into_inner());
        let count = open.entry(key).or_default();
        if *count >= MAX_PER_PEER {
            return None;
        }
        *count += 1;
        Some(Self {
            peers: peers.clone(),
            key,
        })
    }
}

impl Drop for PeerSlot {
    fn drop(&mut self) {
        let mut open = self.peers.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(count) = open.get_mut(&self.key) {
            *count = count.saturating_sub(1);
            if *count == 0 {
                open.remove(&self.key);
            }
        }
    }
}

/// One peer's key: its IPv4 address, or its IPv6 /64 (an IPv4-mapped
/// address as the IPv4 one).
fn peer_key(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V4(_) => ip,
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => IpAddr::V4(v4),
            None => {
                let prefix = u128::from(v6) & !((1u128 << 64) - 1);
                IpAddr::V6(prefix.into())
            }
        },
    }
}

/// An accepted connection holding its places; silent too long, it reads
/// as timed out (and the connection is dropped).
pub struct BoundedStream {
    stream: TcpStream,
    /// Until the first bytes arrive.
    silent: Option<Pin<Box<Sleep>>>,
    /// Since a write has been waiting on the peer.
    stalled: Option<Pin<Box<Sleep>>>,
    _permit: OwnedSemaphorePermit,
    _slot: PeerSlot,
}

impl AsyncRead for BoundedStream {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        let read = Pin::new(&mut self.stream).poll_read(cx, buf);
        match read {
            Poll::Ready(Ok(())) if buf.filled().len() > before => self.silent = None,
            Poll::Pending => {
                if let Some(silent) = self.silent.as_mut()
                    && silent.as_mut().poll(cx).is_ready()
                {
                    return Poll::Ready(Err(io::Error::new(
                        io::ErrorKind::TimedOut,
                        "no request in time",
                    )));
                }
            }
            _ => {}
        }
        read
    }
}

impl BoundedStream {
    /// `written`, unless the write has waited on the peer longer than
    /// [`WRITE_STALL_WITHIN`]: then an error (and the connection drops).
    fn unless_stalled(
        &mut self,
        cx: &mut Context<'_>,
        written: Poll<io::Result<usize>>,
    ) -> Poll<io::Result<usize>> {
        if written.is_ready() {
            self.stalled = None;
            return written;
        }
        let stalled = self
            .stalled
            .get_or_insert_with(|| Box::pin(tokio::time::sleep(WRITE_STALL_WITHIN)));
        if stalled.as_mut().poll(cx).is_ready() {
            return Poll::Ready(Err(io::Error::new(
                io::ErrorKind::TimedOut,
                "the peer reads nothing",
            )));
        }
        Poll::Pending
    }
}

impl AsyncWrite for BoundedStream {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let written = Pin::new(&mut self.stream).poll_write(cx, buf);
        self.unless_stalled(cx, written)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_shutdown(cx)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let written = Pin::new(&mut self.stream).poll_write_vectored(cx, bufs);
        self.unless_stalled(cx, written)
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_v6_peer_is_its_64_and_a_mapped_v4_is_the_v4() {
        let a: IpAddr = "2001:db8:1:2:aaaa::1".parse().unwrap();
        let b: IpAddr = "2001:db8:1:2:bbbb::9".parse().unwrap();
        assert_eq!(peer_key(a), peer_key(b));
        let mapped: IpAddr = "::ffff:10.0.0.2".parse().unwrap();
        assert_eq!(peer_key(mapped), "10.0.0.2".parse::<IpAddr>().unwrap());
    }

    #[test]
    fn one_peer_has_at_most_its_share() {
        let peers = Arc::default();
        let ip: IpAddr = "10.0.0.2".parse().unwrap();
        let held: Vec<_> = (0..MAX_PER_PEER)
            .map(|_| PeerSlot::take(&peers, ip).unwrap())
            .collect();
        assert!(PeerSlot::take(&peers, ip).is_none());
        assert!(PeerSlot::take(&peers, "10.0.0.3".parse().unwrap()).is_some());
        drop(held);
        assert!(PeerSlot::take(&peers, ip).is_some());
        assert!(peers.lock().unwrap().len() <= 1);
    }
}
