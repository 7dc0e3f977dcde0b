//! JSON-RPC 2.0 over a pair of pipes, one message a line (the framing the
//! Agent Client Protocol uses both ways: `egirl acp` on its stdio, the
//! `delegate` tool on an agent's). One writer task owns the outgoing pipe,
//! so nothing but whole frames reaches it; one reader task sorts what
//! comes in: answers go to the request that waits for them by id, the
//! peer's own requests and notifications arrive on a channel. When the
//! incoming pipe closes, every request still waiting, and any asked later,
//! fails with one line saying the peer left.

mod frame;

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use serde::Serialize;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::{mpsc, oneshot};

pub use frame::{
    Frame, INTERNAL_ERROR, INVALID_PARAMS, Incoming, METHOD_NOT_FOUND, PARSE_ERROR,
    RESOURCE_NOT_FOUND, RpcError, parse,
};

/// How a connection reads and what it says when the peer is gone.
#[derive(Clone, Copy, Debug)]
pub struct Options {
    /// The longest line read: a longer one ends the connection.
    pub max_line: usize,
    /// The error a request gets once the peer closed its end.
    pub gone: &'static str,
}

/// An answer to one of our requests: its result, or the peer's error
/// message (or that it left).
type Answer = Result<Value, String>;

/// The requests waiting for their answer, by id; None once the incoming
/// pipe closed (no answer will come).
type Waiting = Arc<Mutex<Option<HashMap<u64, oneshot::Sender<Answer>>>>>;

/// The sending half, cheap to clone.
#[derive(Clone)]
pub struct Connection {
    out: mpsc::UnboundedSender<String>,
    waiting: Waiting,
    next_id: Arc<AtomicU64>,
    gone: &'static str,
}

/// What [`Connection::start`] hands back besides the connection.
pub struct Started {
    pub connection: Connection,
    /// The peer's requests and notifications (and lines that were not
    /// JSON-RPC), in order; closed when the incoming pipe closes.
    pub incoming: mpsc::Receiver<Incoming>,
    /// The writer task: it ends once every [`Connection`] is dropped and
    /// what was queued went out, or when the pipe closes.
    pub writer: tokio::task::JoinHandle<()>,
}

impl Connection {
    /// Wires `reader` and `writer`: a writer task, a reader task, and the
    /// channel of what the peer sends.
    pub fn start<R, W>(reader: R, writer: W, options: Options) -> Started
    where
        R: AsyncRead + Unpin + Send + 'static,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        let (out, lines) = mpsc::unbounded_channel::<String>();
        let waiting: Waiting = Arc::new(Mutex::new(Some(HashMap::new())));
        let writer = tokio::spawn(write_frames(writer, lines));
        let (incoming_tx, incoming) = mpsc::channel(256);
        tokio::spawn(read_frames(reader, options, waiting.clone(), incoming_tx));
        let connection = Connection {
            out,
            waiting,
            next_id: Arc::new(AtomicU64::new(0)),
            gone: options.gone,
        };
        Started {
            connection,
            incoming,
            writer,
        }
    }

    /// Sends a request and waits for its result (Err: the peer's error
    /// message, or that it went away).
    pub async fn request(&self, method: &str, params: impl Serialize) -> Result<Value, String> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        match lock(&self.waiting).as_mut() {
            Some(waiting) => {
                waiting.insert(id, tx);
            }
            None => return Err(self.gone.into()),
        }
        let params = serde_json::to_value(params).unwrap_or(Value::Null);
        if !self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})) {
            return Err(self.gone.into());
        }
        rx.await.unwrap_or_else(|_| Err(self.gone.into()))
    }

    pub fn notify(&self, method: &str, params: impl Serialize) {
        let params = serde_json::to_value(params).unwrap_or(Value::Null);
        self.send(json!({"jsonrpc": "2.0", "method": method, "params": params}));
    }

    /// Answers one of the peer's requests: a result, or an error.
    pub fn respond(&self, id: Value, result: Result<Value, RpcError>) {
        let frame = match result {
            Ok(result) => json!({"jsonrpc": "2.0", "id": id, "result": result}),
            Err(RpcError { code, message }) => json!({
                "jsonrpc": "2.0",
                "id": id,
                "error": {"code": code, "message": message},
            }),
        };
        self.send(frame);
    }

    /// Fails every request still waiting, and any asked later (we are
    /// leaving).
    pub fn close(&self) {
        *lock(&self.waiting) = None;
    }

    /// Queues one frame; false when the writer is gone.
    fn send(&self, frame: Value) -> bool {
        self.out.send(frame.to_string()).is_ok()
    }
}

fn lock(
    waiting: &Waiting,
) -> std::sync::MutexGuard<'_, Option<HashMap<u64, oneshot::Sender<Answer>>>> {
    waiting.lock().unwrap_or_else(|e| e.into_inner())
}

/// Writes each frame as one line until the queue closes or the pipe does.
async fn write_frames<W: AsyncWrite + Unpin>(
    mut pipe: W,
    mut frames: mpsc::UnboundedReceiver<String>,
) {
    while let Some(line) = frames.recv().await {
        let mut bytes = line.into_bytes();
        bytes.push(b'\n');
        if pipe.write_all(&bytes).await.is_err() || pipe.flush().await.is_err() {
            return;
        }
    }
}

/// Reads lines until the pipe closes, a line is too long, or nobody
/// listens; answers go to their waiter, the rest to `incoming`.
async fn read_frames<R: AsyncRead + Unpin>(
    pipe: R,
    options: Options,
    waiting: Waiting,
    incoming: mpsc::Sender<Incoming>,
) {
    let mut reader = BufReader::new(pipe);
    let mut line = Vec::new();
    loop {
        line.clear();
        let limit = options.max_line as u64 + 1;
        match (&mut reader).take(limit).read_until(b'\n', &mut line).await {
            Ok(0) => break,
            Ok(_) => {}
            Err(e) => {
                tracing::warn!("jsonrpc: cannot read: {e}");
                break;
            }
        }
        let body = line.strip_suffix(b"\n").unwrap_or(&line);
        if body.len() > options.max_line {
            tracing::warn!("jsonrpc: a line over {} bytes: closing", options.max_line);
            break;
        }
        if body.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let message = match parse(body) {
            Ok(Frame::Response { id, outcome }) => {
                answered(&waiting, &id, outcome);
                continue;
            }
            Ok(Frame::Incoming(message)) => message,
            Err((id, why)) => Incoming::Invalid { id, why },
        };
        if incoming.send(message).await.is_err() {
            break;
        }
    }
    // Whoever still waits, or asks later, learns the peer is gone.
    *lock(&waiting) = None;
}

/// Hands an answer to the request that waits for it.
fn answered(waiting: &Waiting, id: &Value, outcome: Answer) {
    let waiter = id
        .as_u64()
        .and_then(|id| lock(waiting).as_mut().and_then(|w| w.remove(&id)));
    match waiter {
        Some(waiter) => {
            let _ = waiter.send(outcome);
        }
        None => tracing::debug!(%id, "jsonrpc: an answer to no request of ours"),
    }
}

#[cfg(test)]
mod tests;
