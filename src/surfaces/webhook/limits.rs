//! What one client may hold of the webhook: a bounded number of
//! connections, and a connection that reads too slowly is closed.
//!
//! axum's server has no read timeouts, so an unauthenticated client that
//! sends its headers a byte at a time held a connection (and a task) for
//! as long as it liked. Here every accepted connection takes a slot (over
//! the cap it is answered 503 and closed) and its reads run against a
//! deadline: the request head must arrive within `header_timeout` of the
//! connection opening or of the previous response (an idle keep-alive
//! connection counts as a slow head), and the body within `body_timeout`
//! of the head's end. The head's end is the first blank line (`\r\n\r\n`)
//! seen in what the client sent.

use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::time::{Instant, Sleep};

/// The bounds of the webhook's connections.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    pub header_timeout: Duration,
    pub body_timeout: Duration,
    pub max_connections: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            header_timeout: Duration::from_secs(10),
            body_timeout: Duration::from_secs(30),
            max_connections: 64,
        }
    }
}

/// The TCP listener with a slot per connection.
pub struct BoundedListener {
    inner: TcpListener,
    slots: Arc<Semaphore>,
    limits: Limits,
}

impl BoundedListener {
    pub fn new(inner: TcpListener, limits: Limits) -> Self {
        Self {
            inner,
            slots: Arc::new(Semaphore::new(limits.max_connections.max(1))),
            limits,
        }
    }
}

impl axum::serve::Listener for BoundedListener {
    type Io = Guarded;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (Guarded, SocketAddr) {
        loop {
            let (stream, addr) = match self.inner.accept().await {
                Ok(accepted) => accepted,
                Err(e) => {
                    // Out of file descriptors and the like: wait, not spin.
                    tracing::warn!("webhook: accept failed: {e}");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                }
            };
            match self.slots.clone().try_acquire_owned() {
                Ok(slot) => return (Guarded::new(stream, slot, self.limits), addr),
                Err(_) => {
                    tracing::warn!(%addr, "webhook: too many connections; refused one");
                    tokio::spawn(refuse(stream));
                }
            }
        }
    }

    fn local_addr(&self) -> std::io::Result<SocketAddr> {
        self.inner.local_addr()
    }
}

/// Answers a connection over the cap with 503 and closes it.
async fn refuse(mut stream: TcpStream) {
    let reply =
        b"HTTP/1.1 503 Service Unavailable\r\ncontent-length: 0\r\nconnection: close\r\n\r\n";
    let _ = tokio::time::timeout(Duration::from_secs(1), stream.write_all(reply)).await;
}

/// Where a connection is in its current request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    /// Reading the head; how many bytes of `\r\n\r\n` were just seen.
    Head(usize),
    Body,
}

/// A connection whose reads fail with `TimedOut` past their deadline
/// (hyper then closes it); it frees its slot when dropped.
pub struct Guarded {
    io: TcpStream,
    _slot: OwnedSemaphorePermit,
    limits: Limits,
    phase: Phase,
    deadline: Pin<Box<Sleep>>,
}

impl Guarded {
    fn new(io: TcpStream, slot: OwnedSemaphorePermit, limits: Limits) -> Self {
        Self {
            io,
            _slot: slot,
            limits,
            phase: Phase::Head(0),
            deadline: Box::pin(tokio::time::sleep(limits.header_timeout)),
        }
    }

    /// Follows what the client sent: at the head's end the body's deadline
    /// starts.
    fn saw(&mut self, bytes: &[u8]) {
        let Phase::Head(mut matched) = self.phase else {
            return;
        };
        for &b in bytes {
            matched = match (matched, b) {
                (0 | 2, b'\r') => matched + 1,
                (1 | 3, b'\n') => matched + 1,
                (_, b'\r') => 1,
                _ => 0,
            };
            if matched == 4 {
                self.phase = Phase::Body;
                let due = Instant::now() + self.limits.body_timeout;
                self.deadline.as_mut().reset(due);
                return;
            }
        }
        self.phase = Phase::Head(matched);
    }

    fn late(&self) -> std::io::Error {
        let what = match self.phase {
            Phase::Head(_) => "the request head",
            Phase::Body => "the request body",
        };
        std::io::Error::new(
            std::io::ErrorKind::TimedOut,
            format!("{what} did not arrive in time"),
        )
    }

    /// A response went out: the next request's head is due.
    fn answered(&mut self) {
        self.phase = Phase::Head(0);
        let due = Instant::now() + self.limits.header_timeout;
        self.deadline.as_mut().reset(due);
    }
}

impl AsyncRead for Guarded {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let this = self.get_mut();
        if this.deadline.is_elapsed() {
            return Poll::Ready(Err(this.late()));
        }
        let before = buf.filled().len();
        match Pin::new(&mut this.io).poll_read(cx, buf) {
            Poll::Ready(Ok(())) => {
                let fresh = buf.filled()[before..].to_vec();
                this.saw(&fresh);
                Poll::Ready(Ok(()))
            }
            Poll::Ready(Err(e)) => Poll::Ready(Err(e)),
            // Waiting for the client: only until the deadline (polled here,
            // so it wakes this read when it passes).
            Poll::Pending => match this.deadline.as_mut().poll(cx) {
                Poll::Ready(()) => Poll::Ready(Err(this.late())),
                Poll::Pending => Poll::Pending,
            },
        }
    }
}

impl AsyncWrite for Guarded {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        let this = self.get_mut();
        let written = Pin::new(&mut this.io).poll_write(cx, buf);
        if matches!(written, Poll::Ready(Ok(n)) if n > 0) {
            this.answered();
        }
        written
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.get_mut().io).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.get_mut().io).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_head_ends_at_the_first_blank_line() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async {
            let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
            let addr = listener.local_addr().unwrap();
            let _client = TcpStream::connect(addr).await.unwrap();
            let (stream, _) = listener.accept().await.unwrap();
            let slot = Arc::new(Semaphore::new(1)).try_acquire_owned().unwrap();
            let mut conn = Guarded::new(stream, slot, Limits::default());
            conn.saw(b"POST / HTTP/1.1\r\nHost: x\r\n\r");
            assert_eq!(conn.phase, Phase::Head(3));
            conn.saw(b"\n{\"a\":1}");
            assert_eq!(conn.phase, Phase::Body);
            conn.answered();
            conn.saw(b"GET / HTTP/1.1\r\n\r\r\n");
            assert_eq!(conn.phase, Phase::Head(2));
        });
    }
}
