//! JSON-RPC 2.0 over stdio, one message per line (the framing ACP uses):
//! one writer task owns stdout, so nothing but whole frames reaches it;
//! the agent's own requests to the client (`session/request_permission`)
//! wait here for their answer by id.

use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use serde::Serialize;
use serde_json::{Value, json};
use tokio::io::AsyncWriteExt;
use tokio::sync::{mpsc, oneshot};

/// JSON-RPC error codes ACP uses.
pub const INVALID_PARAMS: i64 = -32602;
pub const METHOD_NOT_FOUND: i64 = -32601;
pub const INTERNAL_ERROR: i64 = -32603;
/// ACP's "resource not found" (an unknown session).
pub const RESOURCE_NOT_FOUND: i64 = -32002;

/// An error answer: its code and one line for the user.
#[derive(Debug, Clone, PartialEq)]
pub struct RpcError {
    pub code: i64,
    pub message: String,
}

impl RpcError {
    pub fn invalid(message: impl Into<String>) -> Self {
        Self {
            code: INVALID_PARAMS,
            message: message.into(),
        }
    }
    pub fn internal(message: impl Into<String>) -> Self {
        Self {
            code: INTERNAL_ERROR,
            message: message.into(),
        }
    }
    pub fn not_found(message: impl Into<String>) -> Self {
        Self {
            code: RESOURCE_NOT_FOUND,
            message: message.into(),
        }
    }
}

/// One line read from the client, sorted.
#[derive(Debug, PartialEq)]
pub enum Incoming {
    Request {
        id: Value,
        method: String,
        params: Value,
    },
    Notification {
        method: String,
        params: Value,
    },
    /// The answer to one of the agent's own requests.
    Response {
        id: Value,
        outcome: Result<Value, String>,
    },
}

/// Sorts a line; `Err` with the id (when it had one) for a line that is
/// not a JSON-RPC message.
pub fn parse(line: &str) -> Result<Incoming, (Value, String)> {
    let value: Value =
        serde_json::from_str(line).map_err(|e| (Value::Null, format!("parse error: {e}")))?;
    let id = value.get("id").cloned();
    let params = value.get("params").cloned().unwrap_or(Value::Null);
    match (value.get("method").and_then(Value::as_str), id) {
        (Some(method), Some(id)) => Ok(Incoming::Request {
            id,
            method: method.to_string(),
            params,
        }),
        (Some(method), None) => Ok(Incoming::Notification {
            method: method.to_string(),
            params,
        }),
        (None, Some(id)) => {
            let outcome = match value.get("error") {
                Some(error) => Err(error
                    .get("message")
                    .and_then(Value::as_str)
                    .unwrap_or("error without a message")
                    .to_string()),
                None => Ok(value.get("result").cloned().unwrap_or(Value::Null)),
            };
            Ok(Incoming::Response { id, outcome })
        }
        (None, None) => Err((Value::Null, "not a JSON-RPC message".into())),
    }
}

/// The client at the other end of stdio: what the agent sends it.
pub struct Peer {
    out: mpsc::UnboundedSender<String>,
    next_id: AtomicU64,
    waiting: Mutex<HashMap<u64, oneshot::Sender<Result<Value, String>>>>,
}

impl Peer {
    /// A peer whose frames go to `out` (the writer task's queue).
    pub fn new(out: mpsc::UnboundedSender<String>) -> Self {
        Self {
            out,
            next_id: AtomicU64::new(1),
            waiting: Mutex::new(HashMap::new()),
        }
    }

    fn send(&self, frame: Value) {
        // A frame always serializes; a closed writer means the client left.
        if let Ok(line) = serde_json::to_string(&frame) {
            let _ = self.out.send(line);
        }
    }

    pub fn notify(&self, method: &str, params: impl Serialize) {
        let params = serde_json::to_value(params).unwrap_or(Value::Null);
        self.send(json!({"jsonrpc": "2.0", "method": method, "params": params}));
    }

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

    /// Sends a request to the client and waits for its answer (`Err`: the
    /// client answered with an error, or left).
    pub async fn request(&self, method: &str, params: impl Serialize) -> Result<Value, String> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        self.lock().insert(id, tx);
        let params = serde_json::to_value(params).unwrap_or(Value::Null);
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        rx.await
            .unwrap_or_else(|_| Err("the client closed the connection".into()))
    }

    /// Hands a response to the request that waits for it.
    pub fn answered(&self, id: &Value, outcome: Result<Value, String>) {
        let waiter = id.as_u64().and_then(|id| self.lock().remove(&id));
        match waiter {
            Some(waiter) => {
                let _ = waiter.send(outcome);
            }
            None => tracing::debug!(%id, "acp: a response to no request of ours"),
        }
    }

    /// Fails every request still waiting (the client left).
    pub fn close(&self) {
        self.lock().clear();
    }

    fn lock(
        &self,
    ) -> std::sync::MutexGuard<'_, HashMap<u64, oneshot::Sender<Result<Value, String>>>> {
        self.waiting.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Writes each frame of `frames` to stdout as one line until the queue
/// closes or stdout does.
pub async fn write_frames(mut frames: mpsc::UnboundedReceiver<String>) {
    let mut stdout = tokio::io::stdout();
    while let Some(line) = frames.recv().await {
        let mut bytes = line.into_bytes();
        bytes.push(b'\n');
        if stdout.write_all(&bytes).await.is_err() || stdout.flush().await.is_err() {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_sort_into_requests_notifications_and_responses() {
        let request = parse(r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}"#);
        assert!(
            matches!(request, Ok(Incoming::Request { ref method, .. }) if method == "initialize")
        );
        let note =
            parse(r#"{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s"}}"#);
        assert!(
            matches!(note, Ok(Incoming::Notification { ref method, .. }) if method == "session/cancel")
        );
        let answer = parse(r#"{"jsonrpc":"2.0","id":3,"error":{"code":-1,"message":"no"}}"#);
        assert_eq!(
            answer,
            Ok(Incoming::Response {
                id: json!(3),
                outcome: Err("no".into())
            })
        );
        assert!(parse("not json").is_err());
        assert!(parse("{}").is_err());
    }

    #[tokio::test]
    async fn a_request_gets_the_answer_with_its_id() {
        let (tx, mut rx) = mpsc::unbounded_channel();
        let peer = std::sync::Arc::new(Peer::new(tx));
        let asking = {
            let peer = peer.clone();
            tokio::spawn(async move { peer.request("session/request_permission", json!({})).await })
        };
        let sent: Value = serde_json::from_str(&rx.recv().await.unwrap()).unwrap();
        assert_eq!(sent["method"], "session/request_permission");
        peer.answered(
            &sent["id"],
            Ok(json!({"outcome": {"outcome": "cancelled"}})),
        );
        let got = asking.await.unwrap().unwrap();
        assert_eq!(got["outcome"]["outcome"], "cancelled");
    }
}
