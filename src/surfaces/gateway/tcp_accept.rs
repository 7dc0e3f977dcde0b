//! The TCP listener's accept side: bounds on the raw connections, before
//! any HTTP or auth. An unauthenticated peer that opens connections and
//! sends nothing must not take the process's file descriptors (the core,
//! the bots and their files share them) nor every place of the listener:
//! at most [`MAX_SOCKETS`] connections at once (the next wait in the
//! kernel's backlog), at most [`MAX_PER_PEER`] from one address (an IPv6
//! peer by its /64, which one host has whole), and a connection must send
//! its first bytes within [`FIRST_BYTES_WITHIN`].

use std::collections::HashMap;
use std::io;
use std::net::{IpAddr, SocketAddr};
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::extract::connect_info::Connected;
use axum::serve::{IncomingStream, Listener};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::time::Sleep;

/// Raw connections open at once (WebSockets are bounded lower, by
/// `tcp::MAX_CONNECTIONS`).
pub const MAX_SOCKETS: usize = 128;
/// Raw connections open at once from one peer.
pub const MAX_PER_PEER: usize = 16;
/// How long a new connection may stay silent.
pub const FIRST_BYTES_WITHIN: Duration = Duration::from_secs(10);

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

impl Connected<IncomingStream<'_, BoundedListener>> for Peer {
    fn connect_info(stream: IncomingStream<'_, BoundedListener>) -> Self {
        *stream.remote_addr()
    }
}

impl Listener for BoundedListener {
    type Io = BoundedStream;
    type Addr = Peer;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
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
                _permit: permit,
                _slot: slot,
            };
            return (stream, Peer(addr));
        }
    }

    fn local_addr(&self) -> io::Result<Self::Addr> {
        self.inner.local_addr().map(Peer)
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

impl AsyncWrite for BoundedStream {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.stream).poll_write(cx, buf)
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
        Pin::new(&mut self.stream).poll_write_vectored(cx, bufs)
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
