//! An in-process fake llama-server for tests.
//!
//! Start one per test with [`FakeLlama::start`] (127.0.0.1, port 0), point
//! `[local] endpoint` at [`FakeLlama::url`], script the model's replies with
//! [`FakeLlama::push_reply`], and assert on what egirl sent with
//! [`FakeLlama::requests`]. When the script is empty the model answers "ok".
//!
//! It serves `/v1/chat/completions` (streamed SSE like llama-server, or one
//! JSON object when `stream` is false), `/health`, `/props`, `/tokenize`,
//! `/apply-template`, `/v1/embeddings` and `/slots/{id}` (save/restore,
//! see [`slots`]).
//!
//! Tokens, so counts are easy to predict in tests: a text is one token per
//! 4 characters (rounded up), plus 1 for BOS when `add_special` is set. A
//! chat prompt is the messages rendered ChatML-style ([`render_prompt`],
//! also what `/apply-template` returns) and counted with BOS, so
//! `prompt_n + cache_n` of a reply equals `count_prompt` of its request.
//! `cache_n` is the prefix shared with the slot's previous prompt plus its
//! generated reply (BOS + whole 4-character pieces, at most all but one
//! token), like llama-server's prefix cache. A prompt of `n_ctx` tokens or
//! more gets llama-server's `exceed_context_size_error` (the scripted
//! reply stays queued for the retry).

#![allow(dead_code)] // each test module uses a different part

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard};

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde_json::{Value, json};
use tokio::task::JoinHandle;

mod embeddings;
mod frames;
mod kinds;
mod reply;
pub mod slots;

use embeddings::embeddings;
use frames::{PromptCounts, endless_response, sse_response, stream_frames, whole_reply};
pub use kinds::Kind;
pub use reply::Reply;
use reply::{ReplyBody, StreamEnd};

/// `/health` answers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Health {
    Ok,
    /// 503 "Loading model", as llama-server while it loads.
    Loading,
}

/// A request the fake received.
#[derive(Clone, Debug)]
pub struct Recorded {
    pub path: String,
    /// The JSON body (`Value::Null` for GET or a body that is not JSON).
    pub body: Value,
}

struct FakeState {
    script: VecDeque<Reply>,
    recorded: Vec<Recorded>,
    n_ctx: u64,
    total_slots: u32,
    supports_tools: bool,
    /// Whether /tokenize and /apply-template exist (vLLM and Ollama lack them).
    token_endpoints: bool,
    health: Health,
    embedding_dims: usize,
    /// Words embedded as another word (a synonym the vectors know and
    /// full-text search does not).
    embedding_synonyms: HashMap<String, String>,
    next_call_id: u64,
    /// Per slot: the last prompt plus what was generated after it.
    cache: HashMap<u64, String>,
    /// `--slot-save-path` given: `/slots` save and restore answer.
    slot_save: bool,
    /// Saved slot files: name to the slot's cached text.
    slot_files: HashMap<String, String>,
    /// The model a reply names; None: the one asked for.
    served_model: Option<String>,
    /// The server it plays (see `kinds`).
    kind: Kind,
    /// Dead: chat and /health answer 503 (see [`FakeLlama::set_down`]).
    down: bool,
    /// `/props` says `modalities.vision` (a server started with `--mmproj`).
    vision: bool,
}

type Shared = Arc<Mutex<FakeState>>;

pub struct FakeLlama {
    url: String,
    state: Shared,
    task: JoinHandle<()>,
}

impl Drop for FakeLlama {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl FakeLlama {
    /// Starts on 127.0.0.1 with a free port: n_ctx 32768, 1 slot, healthy,
    /// 64-dimensional embeddings.
    pub async fn start() -> FakeLlama {
        let state: Shared = Arc::new(Mutex::new(FakeState {
            script: VecDeque::new(),
            recorded: Vec::new(),
            n_ctx: 32768,
            total_slots: 1,
            supports_tools: true,
            token_endpoints: true,
            health: Health::Ok,
            embedding_dims: 64,
            embedding_synonyms: HashMap::new(),
            next_call_id: 0,
            cache: HashMap::new(),
            slot_save: false,
            slot_files: HashMap::new(),
            served_model: None,
            kind: Kind::LlamaCpp,
            down: false,
            vision: false,
        }));
        let app = Router::new()
            .route("/v1/chat/completions", post(chat))
            .route("/chat/completions", post(chat))
            .route("/health", get(health))
            .route("/props", get(props))
            .route("/tokenize", post(tokenize))
            .route("/apply-template", post(apply_template))
            .route("/v1/embeddings", post(embeddings))
            .route("/embeddings", post(embeddings));
        let app = kinds::routes(slots::routes(app)).with_state(state.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind 127.0.0.1:0");
        let addr = listener.local_addr().expect("local address");
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        FakeLlama {
            url: format!("http://{addr}"),
            state,
            task,
        }
    }

    /// `http://127.0.0.1:<port>`, for `[local] endpoint`.
    pub fn url(&self) -> String {
        self.url.clone()
    }

    /// Queues the answer to the next chat request.
    pub fn push_reply(&self, reply: Reply) {
        self.lock().script.push_back(reply);
    }

    pub fn push_replies(&self, replies: impl IntoIterator<Item = Reply>) {
        self.lock().script.extend(replies);
    }

    /// Scripted replies not used yet.
    pub fn pending_replies(&self) -> usize {
        self.lock().script.len()
    }

    /// Bodies of the chat requests received, oldest first.
    pub fn requests(&self) -> Vec<Value> {
        self.requests_to("/v1/chat/completions")
    }

    /// Bodies of the requests to `path`, oldest first.
    pub fn requests_to(&self, path: &str) -> Vec<Value> {
        let state = self.lock();
        state
            .recorded
            .iter()
            .filter(|r| r.path == path)
            .map(|r| r.body.clone())
            .collect()
    }

    /// Every request, all endpoints, oldest first.
    pub fn recorded(&self) -> Vec<Recorded> {
        self.lock().recorded.clone()
    }

    /// How many requests `path` received.
    pub fn hits(&self, path: &str) -> usize {
        self.lock()
            .recorded
            .iter()
            .filter(|r| r.path == path)
            .count()
    }

    /// Replies name this model whatever was asked for, as llama-server
    /// names the path of the GGUF it loaded.
    pub fn set_served_model(&self, model: &str) {
        self.lock().served_model = Some(model.to_string());
    }

    pub fn set_n_ctx(&self, n_ctx: u64) {
        self.lock().n_ctx = n_ctx;
    }

    /// `chat_template_caps.supports_tools` in /props (SmolLM2's template: false).
    pub fn set_supports_tools(&self, supports: bool) {
        self.lock().supports_tools = supports;
    }

    /// Without /tokenize and /apply-template (404), like vLLM or Ollama.
    pub fn set_token_endpoints(&self, present: bool) {
        self.lock().token_endpoints = present;
    }

    /// `/props` `modalities.vision`: whether the model takes images.
    pub fn set_vision(&self, vision: bool) {
        self.lock().vision = vision;
    }

    pub fn set_total_slots(&self, slots: u32) {
        self.lock().total_slots = slots;
    }

    pub fn set_health(&self, health: Health) {
        self.lock().health = health;
    }

    /// A dead server (chat and /health answer 503) or a live one again.
    pub fn set_down(&self, down: bool) {
        self.lock().down = down;
    }

    pub fn set_embedding_dims(&self, dims: usize) {
        self.lock().embedding_dims = dims.max(1);
    }

    /// Embeds `word` as `means` (e.g. "feline" as "cat").
    pub fn set_embedding_synonym(&self, word: &str, means: &str) {
        self.lock()
            .embedding_synonyms
            .insert(word.to_lowercase(), means.to_lowercase());
    }

    /// Texts embedded so far, over all `/v1/embeddings` requests.
    pub fn embedded_texts(&self) -> Vec<String> {
        self.requests_to("/v1/embeddings")
            .iter()
            .flat_map(|body| match &body["input"] {
                Value::String(s) => vec![s.clone()],
                Value::Array(items) => items
                    .iter()
                    .map(|i| i.as_str().unwrap_or("").to_string())
                    .collect(),
                _ => Vec::new(),
            })
            .collect()
    }

    fn lock(&self) -> MutexGuard<'_, FakeState> {
        lock(&self.state)
    }
}

fn lock(state: &Shared) -> MutexGuard<'_, FakeState> {
    state
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn record(state: &Shared, path: &str, body: &Value) {
    lock(state).recorded.push(Recorded {
        path: path.to_string(),
        body: body.clone(),
    });
}

fn parse_body(bytes: &Bytes) -> Value {
    serde_json::from_slice(bytes).unwrap_or(Value::Null)
}

/// Token count of the fake tokenizer (see the module docs).
pub fn count_tokens(text: &str, add_special: bool) -> u64 {
    (text.chars().count() as u64).div_ceil(4) + u64::from(add_special)
}

/// The fake chat template: ChatML, tools (when sent) in a system block
/// first, native tool calls rendered as `<tool_call>` blocks, and the
/// assistant generation prompt at the end.
pub fn render_prompt(body: &Value) -> String {
    let mut out = String::new();
    if let Some(tools) = body["tools"].as_array().filter(|t| !t.is_empty()) {
        out.push_str("<|im_start|>system\n# Tools\n");
        for tool in tools {
            out.push_str(&tool.to_string());
            out.push('\n');
        }
        out.push_str("<|im_end|>\n");
    }
    for message in body["messages"].as_array().into_iter().flatten() {
        let role = message["role"].as_str().unwrap_or("user");
        out.push_str(&format!(
            "<|im_start|>{role}\n{}",
            content_text(&message["content"])
        ));
        for call in message["tool_calls"].as_array().into_iter().flatten() {
            let function = &call["function"];
            out.push_str(&format!(
                "\n<tool_call>\n{{\"name\": {}, \"arguments\": {}}}\n</tool_call>",
                function["name"],
                function["arguments"].as_str().unwrap_or("{}")
            ));
        }
        out.push_str("<|im_end|>\n");
    }
    out.push_str("<|im_start|>assistant\n");
    out
}

/// A message's text: the string, or its `text` parts (an image part
/// renders as llama-server's media marker).
fn content_text(content: &Value) -> String {
    match content {
        Value::String(text) => text.clone(),
        Value::Array(parts) => parts
            .iter()
            .map(|p| match p["type"].as_str() {
                Some("text") => p["text"].as_str().unwrap_or("").to_string(),
                _ => "<__media__>".to_string(),
            })
            .collect(),
        _ => String::new(),
    }
}

async fn health(State(state): State<Shared>) -> Response {
    record(&state, "/health", &Value::Null);
    if lock(&state).down {
        return error_response(503, "Service Unavailable", "unavailable_error");
    }
    match lock(&state).health {
        Health::Ok => Json(json!({ "status": "ok" })).into_response(),
        Health::Loading => error_response(503, "Loading model", "unavailable_error"),
    }
}

async fn props(State(state): State<Shared>) -> Response {
    record(&state, "/props", &Value::Null);
    let state = lock(&state);
    if state.kind != Kind::LlamaCpp {
        return error_response(404, "Not Found", "not_found_error");
    }
    Json(json!({
        "default_generation_settings": { "id": 0, "n_ctx": state.n_ctx, "is_processing": false },
        "total_slots": state.total_slots,
        "model_path": "/models/fake-model.gguf",
        "chat_template": "{% for message in messages %}<|im_start|>{{ message.role }}...{% endfor %}",
        "chat_template_caps": { "supports_tools": state.supports_tools, "supports_tool_calls": state.supports_tools },
        "build_info": "fake",
        "modalities": { "vision": state.vision, "audio": false },
    }))
    .into_response()
}

async fn tokenize(State(state): State<Shared>, bytes: Bytes) -> Response {
    let body = parse_body(&bytes);
    record(&state, "/tokenize", &body);
    let kind = lock(&state).kind;
    match kind {
        Kind::Vllm => return kinds::vllm_tokenize(&state, &body),
        Kind::Ollama => return error_response(404, "Not Found", "not_found_error"),
        Kind::LlamaCpp => {}
    }
    if !lock(&state).token_endpoints {
        return error_response(404, "File Not Found", "not_found_error");
    }
    let content = body["content"].as_str().unwrap_or("");
    let add_special = body["add_special"].as_bool().unwrap_or(false);
    let mut tokens: Vec<u64> = Vec::new();
    if add_special {
        tokens.push(1);
    }
    let chars: Vec<char> = content.chars().collect();
    for piece in chars.chunks(4) {
        tokens.push(2 + piece.iter().map(|c| *c as u64).sum::<u64>() % 50_000);
    }
    Json(json!({ "tokens": tokens })).into_response()
}

async fn apply_template(State(state): State<Shared>, bytes: Bytes) -> Response {
    let body = parse_body(&bytes);
    record(&state, "/apply-template", &body);
    let kind = lock(&state).kind;
    if !lock(&state).token_endpoints || kind != Kind::LlamaCpp {
        return error_response(404, "File Not Found", "not_found_error");
    }
    Json(json!({ "prompt": render_prompt(&body) })).into_response()
}

fn error_response(status: u16, message: &str, kind: &str) -> Response {
    let body = json!({ "error": { "code": status, "message": message, "type": kind } });
    let status = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    (status, Json(body)).into_response()
}

fn overflow_response(n_prompt: u64, n_ctx: u64) -> Response {
    let message = format!(
        "request ({n_prompt} tokens) exceeds the available context size ({n_ctx} tokens), try increasing it"
    );
    let body = json!({ "error": {
        "code": 400, "message": message, "type": "exceed_context_size_error",
        "n_prompt_tokens": n_prompt, "n_ctx": n_ctx,
    }});
    (StatusCode::BAD_REQUEST, Json(body)).into_response()
}

async fn chat(State(state): State<Shared>, bytes: Bytes) -> Response {
    let body = parse_body(&bytes);
    record(&state, "/v1/chat/completions", &body);
    if lock(&state).down {
        return error_response(503, "Service Unavailable", "unavailable_error");
    }
    let prompt = render_prompt(&body);
    let total = count_tokens(&prompt, true);
    let slot = body["id_slot"].as_u64().unwrap_or(0);
    let (reply, counts) = {
        let mut state = lock(&state);
        if total >= state.n_ctx {
            return overflow_response(total, state.n_ctx);
        }
        let mut reply = state
            .script
            .pop_front()
            .unwrap_or_else(|| Reply::text("ok"));
        reply.assign_call_ids(&mut state.next_call_id);
        let cache_n = match state.cache.get(&slot) {
            Some(previous) => (1 + common_prefix_chars(previous, &prompt) / 4).min(total - 1),
            None => 0,
        };
        if matches!(reply.body, ReplyBody::Stream(_)) {
            state
                .cache
                .insert(slot, format!("{prompt}{}", reply.generated_text()));
        }
        let counts = PromptCounts {
            prompt_n: total - cache_n,
            cache_n,
        };
        (reply, counts)
    };
    let served = lock(&state).served_model.clone();
    let model =
        served.unwrap_or_else(|| body["model"].as_str().unwrap_or("fake-model").to_string());
    match &reply.body {
        ReplyBody::Hang => std::future::pending().await,
        ReplyBody::Status { status, body } => {
            let status = StatusCode::from_u16(*status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
            (
                status,
                [(header::CONTENT_TYPE, "application/json")],
                body.clone(),
            )
                .into_response()
        }
        ReplyBody::ContextOverflow => overflow_response(total, total.saturating_sub(1).max(1)),
        ReplyBody::RawSse(text) => sse_response(
            reply.frame_delay,
            StreamEnd::Done,
            vec![Bytes::from(text.clone())],
        ),
        ReplyBody::Endless { piece, up_to } => endless_response(&model, piece, *up_to),
        ReplyBody::Stream(pieces) if body["stream"].as_bool() == Some(true) => {
            let include_usage = body["stream_options"]["include_usage"].as_bool() == Some(true);
            let frames = stream_frames(&reply, pieces, &model, &counts, include_usage);
            sse_response(reply.frame_delay, reply.end, frames)
        }
        ReplyBody::Stream(pieces) => {
            Json(whole_reply(&reply, pieces, &model, &counts)).into_response()
        }
    }
}

fn common_prefix_chars(a: &str, b: &str) -> u64 {
    a.chars().zip(b.chars()).take_while(|(x, y)| x == y).count() as u64
}
