//! A small DevTools protocol client: commands by id (to the browser or to
//! one attached target's session, flattened on one connection), their
//! answers routed back, and events handed to one receiver in order.
//!
//! The connection is the pipe pair of `--remote-debugging-pipe` (JSON
//! messages ended by a NUL byte), never a TCP port: any process of this
//! machine could connect to a port and drive the browser, which runs
//! outside the exec sandbox (read `file://` pages, download anywhere).

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::unix::pipe;
use tokio::sync::{mpsc, oneshot};

/// An answer not back in this long is an error (a hung renderer).
const COMMAND_TIMEOUT: Duration = Duration::from_secs(30);
/// The longest message read from the browser (a screenshot is a few MB).
const MAX_MESSAGE: u64 = 64 * 1024 * 1024;

/// An event: its method, params and the session it came from.
pub struct CdpEvent {
    pub method: String,
    pub params: Value,
    pub session: Option<String>,
}

type Pending = Arc<std::sync::Mutex<HashMap<u64, oneshot::Sender<Result<Value, String>>>>>;

/// The connection; cheap to clone.
#[derive(Clone)]
pub struct Cdp {
    out: mpsc::UnboundedSender<String>,
    pending: Pending,
    next_id: Arc<AtomicU64>,
}

impl Cdp {
    /// Talks to the browser over its DevTools pipes (`to` its fd 3, `from`
    /// its fd 4); events arrive on the receiver until the browser closes
    /// its end.
    pub fn connect(
        to: pipe::Sender,
        from: pipe::Receiver,
    ) -> (Cdp, mpsc::UnboundedReceiver<CdpEvent>) {
        let (out, mut outgoing) = mpsc::unbounded_channel::<String>();
        let (events_tx, events) = mpsc::unbounded_channel();
        let pending: Pending = Arc::default();
        tokio::spawn(async move {
            let mut to = to;
            while let Some(message) = outgoing.recv().await {
                if to.write_all(message.as_bytes()).await.is_err()
                    || to.write_all(b"\0").await.is_err()
                {
                    return;
                }
            }
        });
        let routes = pending.clone();
        tokio::spawn(async move {
            let mut from = BufReader::new(from);
            let mut message = Vec::new();
            loop {
                message.clear();
                let read = tokio::io::AsyncReadExt::take(&mut from, MAX_MESSAGE)
                    .read_until(0, &mut message)
                    .await;
                // Closed, failed, or a message past the bound: the end.
                if !matches!(read, Ok(n) if n > 0 && message.last() == Some(&0)) {
                    break;
                }
                message.pop();
                if let Ok(value) = serde_json::from_slice::<Value>(&message) {
                    route(value, &routes, &events_tx);
                }
            }
            // The browser is gone: every caller still waiting hears it.
            let waiting: Vec<_> = match routes.lock() {
                Ok(mut map) => map.drain().map(|(_, tx)| tx).collect(),
                Err(_) => Vec::new(),
            };
            for tx in waiting {
                let _ = tx.send(Err("the browser closed its DevTools connection".into()));
            }
        });
        let cdp = Cdp {
            out,
            pending,
            next_id: Arc::new(AtomicU64::new(1)),
        };
        (cdp, events)
    }

    /// Sends `method` (to `session`, or the browser) and waits for its result.
    pub async fn call(
        &self,
        method: &str,
        params: Value,
        session: Option<&str>,
    ) -> Result<Value, String> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let mut message = json!({"id": id, "method": method, "params": params});
        if let Some(session) = session {
            message["sessionId"] = json!(session);
        }
        let (tx, rx) = oneshot::channel();
        if let Ok(mut map) = self.pending.lock() {
            map.insert(id, tx);
        }
        if self.out.send(message.to_string()).is_err() {
            return Err("the browser's DevTools connection is closed".into());
        }
        match tokio::time::timeout(COMMAND_TIMEOUT, rx).await {
            Ok(Ok(answer)) => answer.map_err(|e| format!("{method}: {e}")),
            Ok(Err(_)) => Err("the browser's DevTools connection is closed".into()),
            Err(_) => {
                if let Ok(mut map) = self.pending.lock() {
                    map.remove(&id);
                }
                Err(format!(
                    "{method}: no answer from the browser in {}s",
                    COMMAND_TIMEOUT.as_secs()
                ))
            }
        }
    }

    /// Sends `method` without waiting for its answer.
    pub fn send(&self, method: &str, params: Value, session: Option<&str>) {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let mut message = json!({"id": id, "method": method, "params": params});
        if let Some(session) = session {
            message["sessionId"] = json!(session);
        }
        let _ = self.out.send(message.to_string());
    }
}

/// An answer to its caller, an event to the receiver.
fn route(value: Value, pending: &Pending, events: &mpsc::UnboundedSender<CdpEvent>) {
    if let Some(id) = value.get("id").and_then(Value::as_u64) {
        let waiting = pending.lock().ok().and_then(|mut map| map.remove(&id));
        if let Some(tx) = waiting {
            let answer = match value.get("error") {
                Some(error) => Err(error
                    .get("message")
                    .and_then(Value::as_str)
                    .unwrap_or("failed")
                    .to_string()),
                None => Ok(value.get("result").cloned().unwrap_or(Value::Null)),
            };
            let _ = tx.send(answer);
        }
        return;
    }
    let Some(method) = value.get("method").and_then(Value::as_str) else {
        return;
    };
    let _ = events.send(CdpEvent {
        method: method.to_string(),
        params: value.get("params").cloned().unwrap_or(Value::Null),
        session: value
            .get("sessionId")
            .and_then(Value::as_str)
            .map(str::to_string),
    });
}
