//! The fake as another server kind: vLLM or Ollama, in their documented
//! shapes. Neither has `/props`, `/apply-template` or slots; vLLM has
//! `GET /version`, `GET /v1/models` (with `max_model_len`) and its own
//! `POST /tokenize` (`{"count", "max_model_len", "tokens"}`); Ollama has
//! `GET /api/version` and `POST /api/show` (`model_info` with
//! `<arch>.context_length`), and no tokenizer endpoint.

use axum::body::Bytes;
use axum::extract::State;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde_json::{Value, json};

use super::{
    FakeLlama, Shared, count_tokens, error_response, lock, parse_body, record, render_prompt,
};

/// Which server the fake plays.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Kind {
    #[default]
    LlamaCpp,
    Vllm,
    Ollama,
}

pub(super) fn routes(router: Router<Shared>) -> Router<Shared> {
    router
        .route("/version", get(version))
        .route("/v1/models", get(models))
        .route("/api/version", get(api_version))
        .route("/api/show", post(api_show))
}

impl FakeLlama {
    /// Plays vLLM or Ollama from now on (llama.cpp by default).
    pub fn set_kind(&self, kind: Kind) {
        self.lock().kind = kind;
    }
}

fn not_found() -> Response {
    error_response(404, "Not Found", "not_found_error")
}

/// vLLM's `POST /tokenize`: a prompt (`add_special_tokens`, default true) or
/// chat messages rendered with the template (`add_generation_prompt`).
pub(super) fn vllm_tokenize(state: &Shared, body: &Value) -> Response {
    let n_ctx = lock(state).n_ctx;
    let count = match body["prompt"].as_str() {
        Some(prompt) => count_tokens(prompt, body["add_special_tokens"].as_bool().unwrap_or(true)),
        None => count_tokens(&render_prompt(body), true),
    };
    let tokens: Vec<u64> = (0..count).map(|i| 2 + i).collect();
    Json(json!({ "count": count, "max_model_len": n_ctx, "tokens": tokens })).into_response()
}

async fn version(State(state): State<Shared>) -> Response {
    record(&state, "/version", &Value::Null);
    match lock(&state).kind {
        Kind::Vllm => Json(json!({ "version": "0.6.3" })).into_response(),
        _ => not_found(),
    }
}

async fn models(State(state): State<Shared>) -> Response {
    record(&state, "/v1/models", &Value::Null);
    let state = lock(&state);
    let id = state
        .served_model
        .clone()
        .unwrap_or_else(|| "fake-model".into());
    let mut model = json!({ "id": id, "object": "model", "owned_by": "fake" });
    if state.kind == Kind::Vllm {
        model["max_model_len"] = json!(state.n_ctx);
    }
    Json(json!({ "object": "list", "data": [model] })).into_response()
}

async fn api_version(State(state): State<Shared>) -> Response {
    record(&state, "/api/version", &Value::Null);
    match lock(&state).kind {
        Kind::Ollama => Json(json!({ "version": "0.5.7" })).into_response(),
        _ => not_found(),
    }
}

async fn api_show(State(state): State<Shared>, bytes: Bytes) -> Response {
    let body = parse_body(&bytes);
    record(&state, "/api/show", &body);
    let state = lock(&state);
    if state.kind != Kind::Ollama {
        return not_found();
    }
    Json(json!({
        "modelfile": "FROM fake",
        "parameters": "stop \"<|im_end|>\"",
        "template": "{{ .Prompt }}",
        "details": { "format": "gguf", "family": "qwen2" },
        "model_info": {
            "general.architecture": "qwen2",
            "general.parameter_count": 494032768,
            "qwen2.context_length": state.n_ctx,
        },
    }))
    .into_response()
}
