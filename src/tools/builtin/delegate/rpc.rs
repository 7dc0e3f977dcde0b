//! JSON-RPC 2.0 over the agent's stdio, one JSON object a line (ACP's
//! framing): requests egirl sends wait for their answer by id; what the
//! agent sends (its requests and notifications) arrives on a channel.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::process::{ChildStdin, ChildStdout};
use tokio::sync::{mpsc, oneshot};

/// The longest line read from the agent: a larger one ends the connection.
const MAX_LINE: usize = 8 * 1024 * 1024;

/// The requests waiting for their answer, by id; None once the agent's
/// stdout closed (no answer will come).
type Waiting = Arc<std::sync::Mutex<Option<HashMap<u64, oneshot::Sender<Result<Value, String>>>>>>;

/// What the agent sent that is not an answer: a request (with its id) or
/// a notification.
pub struct Incoming {
    pub id: Option<Value>,
    pub method: String,
    pub params: Value,
}

/// The sending half, cheap to clone.
#[derive(Clone)]
pub struct Connection {
    out: mpsc::UnboundedSender<String>,
    waiting: Waiting,
    next_id: Arc<AtomicU64>,
}

impl Connection {
    /// Wires the agent's stdio: a writer task, a reader task, and the
    /// channel of what it sends (closed when its stdout closes).
    pub fn start(stdin: ChildStdin, stdout: ChildStdout) -> (Self, mpsc::Receiver<Incoming>) {
        let (out, mut lines) = mpsc::unbounded_channel::<String>();
        let waiting: Waiting = Arc::new(std::sync::Mutex::new(Some(HashMap::new())));
        tokio::spawn(async move {
            let mut stdin = stdin;
            while let Some(line) = lines.recv().await {
                if stdin.write_all(line.as_bytes()).await.is_err()
                    || stdin.write_all(b"\n").await.is_err()
                    || stdin.flush().await.is_err()
                {
                    break;
                }
            }
        });
        let (incoming_tx, incoming) = mpsc::channel(256);
        tokio::spawn(read_loop(stdout, waiting.clone(), incoming_tx));
        let conn = Connection {
            out,
            waiting,
            next_id: Arc::new(AtomicU64::new(0)),
        };
        (conn, incoming)
    }

    /// Sends a request and waits for its result (Err: the agent's error
    /// message, or that it went away).
    pub async fn request(&self, method: &str, params: Value) -> Result<Value, String> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        match self.waiting.lock().as_deref_mut() {
            Ok(Some(waiting)) => {
                waiting.insert(id, tx);
            }
            _ => return Err("the agent closed its connection".into()),
        }
        let frame = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        if self.out.send(frame.to_string()).is_err() {
            return Err("the agent closed its connection".into());
        }
        rx.await
            .unwrap_or_else(|_| Err("the agent closed its connection".into()))
    }

    pub fn notify(&self, method: &str, params: Value) {
        let frame = json!({"jsonrpc": "2.0", "method": method, "params": params});
        let _ = self.out.send(frame.to_string());
    }

    /// Answers one of the agent's requests: a result, or an error
    /// (code, message).
    pub fn respond(&self, id: Value, answer: Result<Value, (i64, String)>) {
        let frame = match answer {
            Ok(result) => json!({"jsonrpc": "2.0", "id": id, "result": result}),
            Err((code, message)) => {
                json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
            }
        };
        let _ = self.out.send(frame.to_string());
    }
}

async fn read_loop(stdout: ChildStdout, waiting: Waiting, incoming: mpsc::Sender<Incoming>) {
    let mut reader = BufReader::new(stdout);
    let mut line = Vec::new();
    loop {
        line.clear();
        match (&mut reader)
            .take(MAX_LINE as u64)
            .read_until(b'\n', &mut line)
            .await
        {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        // Not JSON (a stray log line on stdout): skipped, as ACP clients do.
        let Ok(frame) = serde_json::from_slice::<Value>(&line) else {
            continue;
        };
        if let Some(method) = frame["method"].as_str() {
            let message = Incoming {
                id: frame.get("id").cloned(),
                method: method.to_string(),
                params: frame.get("params").cloned().unwrap_or(Value::Null),
            };
            if incoming.send(message).await.is_err() {
                break;
            }
            continue;
        }
        let Some(id) = frame["id"].as_u64() else {
            continue;
        };
        let waiter = waiting
            .lock()
            .ok()
            .and_then(|mut w| w.as_mut().and_then(|w| w.remove(&id)));
        if let Some(waiter) = waiter {
            let answer = match frame.get("error") {
                Some(err) => Err(err["message"]
                    .as_str()
                    .unwrap_or("an error without a message")
                    .to_string()),
                None => Ok(frame.get("result").cloned().unwrap_or(Value::Null)),
            };
            let _ = waiter.send(answer);
        }
    }
    // Whoever still waits, or asks later, learns the agent is gone.
    if let Ok(mut w) = waiting.lock() {
        *w = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn answers_reach_their_request_and_a_gone_agent_fails_what_is_asked_next() {
        // Reads one request, answers it after a log line and a
        // notification, then exits.
        let script = r#"read line; echo "a log line"; echo '{"jsonrpc":"2.0","method":"session/update","params":{"n":1}}'; echo '{"jsonrpc":"2.0","id":0,"result":{"ok":true}}'"#;
        let mut child = tokio::process::Command::new("sh")
            .args(["-c", script])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let (stdin, stdout) = (child.stdin.take().unwrap(), child.stdout.take().unwrap());
        let (conn, mut incoming) = Connection::start(stdin, stdout);
        let answer = conn.request("initialize", json!({})).await;
        assert_eq!(answer, Ok(json!({"ok": true})));
        let note = incoming.recv().await.unwrap();
        assert_eq!((note.method.as_str(), note.id), ("session/update", None));
        assert!(incoming.recv().await.is_none());
        let _ = child.wait().await;
        let late = conn.request("session/new", json!({})).await;
        assert_eq!(late, Err("the agent closed its connection".into()));
    }
}
