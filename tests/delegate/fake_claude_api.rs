//! An in-process fake of the Anthropic Messages API as Claude Code uses it
//! (`POST /v1/messages`, streamed): Claude Code's agent turn (a request
//! offering its `Write` tool) is scripted to write `target` (or to make the
//! tool uses given to [`FakeClaudeApi::scripted`], one per turn), then to
//! finish with a text that quotes every tool result; its side requests (no
//! tools) get a short text. With `hang`, no request is ever answered.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::header;
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

#[derive(Clone)]
struct Script {
    /// The tool uses to make, in order: (name, input).
    uses: Vec<(&'static str, Value)>,
    hang: bool,
    bodies: Arc<Mutex<Vec<Value>>>,
}

pub struct FakeClaudeApi {
    pub url: String,
    bodies: Arc<Mutex<Vec<Value>>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for FakeClaudeApi {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl FakeClaudeApi {
    pub async fn start(target: PathBuf, hang: bool) -> FakeClaudeApi {
        let write = json!({"file_path": target, "content": "hi from claude\n"});
        Self::serve(vec![("Write", write)], hang).await
    }

    /// Claude Code is made to use these tools, one per turn, in order.
    pub async fn scripted(uses: Vec<(&'static str, Value)>) -> FakeClaudeApi {
        Self::serve(uses, false).await
    }

    async fn serve(uses: Vec<(&'static str, Value)>, hang: bool) -> FakeClaudeApi {
        let bodies = Arc::new(Mutex::new(Vec::new()));
        let script = Script {
            uses,
            hang,
            bodies: bodies.clone(),
        };
        let app = Router::new().fallback(answer).with_state(script);
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        FakeClaudeApi { url, bodies, task }
    }

    /// The JSON bodies Claude Code sent, oldest first.
    pub fn bodies(&self) -> Vec<Value> {
        self.bodies.lock().unwrap().clone()
    }
}

enum Block {
    Text(String),
    ToolUse(String, &'static str, Value),
}

async fn answer(State(script): State<Script>, body: Bytes) -> Response {
    let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    script.bodies.lock().unwrap().push(body.clone());
    if script.hang {
        std::future::pending::<()>().await;
    }
    let offers_write = body["tools"]
        .as_array()
        .is_some_and(|tools| tools.iter().any(|t| t["name"] == "Write"));
    let results: Vec<String> = body["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|m| m["content"].as_array())
        .flatten()
        .filter(|b| b["type"] == "tool_result")
        .map(|b| match &b["content"] {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        })
        .collect();
    let next = script.uses.get(results.len());
    let (blocks, stop) = match (offers_write, next) {
        (true, Some((name, input))) => (
            vec![
                Block::Text(format!("Using {name}.")),
                Block::ToolUse(
                    format!("toolu_fake_{}", results.len() + 1),
                    name,
                    input.clone(),
                ),
            ],
            "tool_use",
        ),
        (true, None) => (
            vec![Block::Text(format!("Finished: {}", results.join("\n")))],
            "end_turn",
        ),
        (false, _) => (vec![Block::Text("ok".into())], "end_turn"),
    };
    let frames = sse(&blocks, stop);
    if body["stream"] == true {
        Response::builder()
            .header(header::CONTENT_TYPE, "text/event-stream")
            .body(Body::from(frames))
            .unwrap()
    } else {
        let content: Vec<Value> = blocks
            .iter()
            .map(|b| match b {
                Block::Text(t) => json!({"type": "text", "text": t}),
                Block::ToolUse(id, name, input) => {
                    json!({"type": "tool_use", "id": id, "name": name, "input": input})
                }
            })
            .collect();
        axum::Json(json!({
            "id": "msg_fake", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
            "content": content, "stop_reason": stop, "stop_sequence": null,
            "usage": {"input_tokens": 10, "output_tokens": 5}
        }))
        .into_response()
    }
}

fn sse(blocks: &[Block], stop: &str) -> String {
    let mut events = vec![json!({"type": "message_start", "message": {
        "id": "msg_fake", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
        "content": [], "stop_reason": null, "stop_sequence": null,
        "usage": {"input_tokens": 1000, "output_tokens": 1}
    }})];
    for (i, block) in blocks.iter().enumerate() {
        match block {
            Block::Text(text) => {
                events.push(json!({"type": "content_block_start", "index": i, "content_block": {"type": "text", "text": ""}}));
                events.push(json!({"type": "content_block_delta", "index": i, "delta": {"type": "text_delta", "text": text}}));
            }
            Block::ToolUse(id, name, input) => {
                events.push(json!({"type": "content_block_start", "index": i, "content_block": {"type": "tool_use", "id": id, "name": name, "input": {}}}));
                events.push(json!({"type": "content_block_delta", "index": i, "delta": {"type": "input_json_delta", "partial_json": input.to_string()}}));
            }
        }
        events.push(json!({"type": "content_block_stop", "index": i}));
    }
    events.push(json!({"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": null}, "usage": {"output_tokens": 200}}));
    events.push(json!({"type": "message_stop"}));
    events
        .iter()
        .map(|e| format!("event: {}\ndata: {e}\n\n", e["type"].as_str().unwrap_or("")))
        .collect()
}
