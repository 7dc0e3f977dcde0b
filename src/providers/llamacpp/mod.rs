//! llama.cpp server (and any OpenAI-compatible local server).
//!
//! Streams `/v1/chat/completions`, and uses llama-server's extras where they
//! exist: `/health`, `/props` (n_ctx, slots), `/tokenize` and
//! `/apply-template` (exact prompt token counts), `timings` (cache hits),
//! `cache_prompt` and `id_slot` (prefix-cache reuse per session), and
//! `/slots/{id}?action=save|restore` (a session's cache kept across restarts).

mod wire;

use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::StreamExt;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::bounds;
use super::completions::stream;
use super::http::{excerpt, http_error, root_cause};
use super::server_kind::ServerKind;
use super::sse::{SseEvent, SseParser};
use super::{ChatResponse, ProviderError, StreamChunk};
use crate::config::{LocalConfig, ToolFormat};

/// The request every provider takes; re-exported where the agent first found it.
pub use super::ChatRequest;

const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// /health and /props answer at once on a live server; `egirl doctor`
/// should not wait the whole generation timeout on a dead one.
const QUICK_TIMEOUT: Duration = Duration::from_secs(10);
/// Token counts kept in memory; the cache is simply cleared when full
/// (counts are cheap to redo, and a session re-counts the same few texts).
const TOKEN_CACHE_MAX: usize = 4096;

/// What `/props` says about the server; every field may be missing.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ServerProps {
    pub n_ctx: Option<u64>,
    pub total_slots: Option<u32>,
    pub model_path: Option<String>,
    pub has_chat_template: bool,
    /// `chat_template_caps.supports_tools`: whether native `tools` reach the
    /// prompt at all (SmolLM2's template drops them silently).
    pub supports_tools: Option<bool>,
    /// `modalities.vision`: the server was started with a projector
    /// (`--mmproj`) and takes images.
    pub vision: Option<bool>,
}

/// What llama-server reports for a slot save or restore.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SlotFile {
    /// Tokens of cache written or read (`n_saved` / `n_restored`).
    pub tokens: u64,
    /// Bytes of the file (`n_written` / `n_read`).
    pub bytes: u64,
    /// The server's own time for it (`timings.save_ms` / `restore_ms`).
    pub ms: f64,
}

#[derive(Clone, Debug)]
pub struct LlamaCpp {
    client: reqwest::Client,
    /// Base URL without a trailing `/` or `/v1`.
    endpoint: String,
    model: String,
    tool_format: ToolFormat,
    /// The longest wait for the next byte (not for the whole reply:
    /// generation may legitimately run for minutes).
    idle_timeout: Duration,
    token_counts: Arc<Mutex<HashMap<u64, u64>>>,
    /// Ask for the sampled tokens' logprobs (the escalation check's
    /// confidence); off when nothing could escalate.
    logprobs: bool,
    /// The server behind the endpoint (see `server_kind`): vLLM counts
    /// tokens with its own `/tokenize` body.
    kind: ServerKind,
}

impl LlamaCpp {
    pub fn new(cfg: &LocalConfig) -> Self {
        let client = reqwest::Client::builder()
            .connect_timeout(CONNECT_TIMEOUT)
            .build()
            .unwrap_or_default();
        let endpoint = cfg.endpoint.trim_end_matches('/');
        let endpoint = endpoint.strip_suffix("/v1").unwrap_or(endpoint);
        // "0" in the config means no limit.
        let idle_timeout = if cfg.timeout.is_zero() {
            Duration::from_secs(365 * 24 * 3600)
        } else {
            cfg.timeout.0
        };
        Self {
            client,
            endpoint: endpoint.to_string(),
            model: cfg.model.clone(),
            tool_format: cfg.tool_format,
            idle_timeout,
            token_counts: Arc::default(),
            logprobs: false,
            kind: ServerKind::LlamaCpp,
        }
    }

    /// The same endpoint, known to be `kind` (found by `probe::discover`).
    pub fn with_kind(&self, kind: ServerKind) -> Self {
        Self {
            kind,
            ..self.clone()
        }
    }

    pub fn kind(&self) -> ServerKind {
        self.kind
    }

    /// The model name sent with each request.
    pub fn model(&self) -> &str {
        &self.model
    }

    /// With `logprobs`, replies carry a `confidence` (one top logprob per
    /// token is the least llama-server sends; the rest of the frame is
    /// unchanged, and the prompt, so the prefix cache, is not affected).
    pub fn with_logprobs(&self, logprobs: bool) -> Self {
        Self {
            logprobs,
            ..self.clone()
        }
    }

    pub fn endpoint(&self) -> &str {
        &self.endpoint
    }

    pub fn tool_format(&self) -> ToolFormat {
        self.tool_format
    }

    /// The same server spoken to in another tool format (sharing the token cache).
    pub fn with_tool_format(&self, tool_format: ToolFormat) -> Self {
        Self {
            tool_format,
            ..self.clone()
        }
    }

    /// Ok when the server answers `/health` with 200 (a 503 "Loading model"
    /// is not healthy yet).
    pub async fn health(&self) -> Result<(), ProviderError> {
        // Only the status counts: vLLM answers 200 with an empty body.
        let request = self
            .client
            .get(self.url("/health"))
            .timeout(QUICK_TIMEOUT.min(self.idle_timeout));
        let response = request.send().await.map_err(|e| self.transport_error(&e))?;
        self.check_status(response).await.map(|_| ())
    }

    /// `/props`; an error where the server has none (vLLM, Ollama): the
    /// caller falls back to the configured context length.
    pub async fn props(&self) -> Result<ServerProps, ProviderError> {
        let request = self.client.get(self.url("/props"));
        let props = self.send_json(request, QUICK_TIMEOUT).await?;
        let settings = &props["default_generation_settings"];
        Ok(ServerProps {
            n_ctx: settings["n_ctx"]
                .as_u64()
                .or_else(|| props["n_ctx"].as_u64()),
            total_slots: props["total_slots"]
                .as_u64()
                .and_then(|n| u32::try_from(n).ok()),
            model_path: props["model_path"].as_str().map(String::from),
            has_chat_template: props["chat_template"]
                .as_str()
                .is_some_and(|t| !t.is_empty()),
            supports_tools: props["chat_template_caps"]["supports_tools"].as_bool(),
            vision: props["modalities"]["vision"].as_bool(),
        })
    }

    /// Tokens in `text` by the server's own tokenizer (no BOS), cached.
    pub async fn count_tokens(&self, text: &str) -> Result<u64, ProviderError> {
        self.tokenize(text, false).await
    }

    /// Exact tokens of the prompt `req` renders to: the server's chat
    /// template applied to the same wire messages, then tokenized.
    ///
    /// `/apply-template` strips the template's leading BOS and the
    /// completion path then tokenizes with `add_special` (which puts it
    /// back), so counting with `add_special: true` matches the server's
    /// `prompt_n + cache_n`.
    pub async fn count_prompt(&self, req: &ChatRequest) -> Result<u64, ProviderError> {
        if self.kind == ServerKind::Vllm {
            // vLLM's /tokenize applies the chat template itself.
            let mut body = wire::template_body(req, self.tool_format);
            body["model"] = json!(self.model);
            body["add_generation_prompt"] = json!(true);
            let reply = self.post_json("/tokenize", &body).await?;
            return token_count(&reply)
                .ok_or_else(|| self.bad_reply("/tokenize answered without a count"));
        }
        let prompt = self.render_prompt(req).await?;
        self.tokenize(&prompt, true).await
    }

    /// The prompt text `req` renders to (`/apply-template`, no leading BOS):
    /// what the server tokenizes for the same chat request.
    pub async fn render_prompt(&self, req: &ChatRequest) -> Result<String, ProviderError> {
        let body = wire::template_body(req, self.tool_format);
        let request = self.client.post(self.url("/apply-template")).json(&body);
        let reply = self.send_json(request, self.idle_timeout).await?;
        match reply["prompt"].as_str() {
            Some(prompt) => Ok(prompt.to_string()),
            None => Err(self.bad_reply("/apply-template answered without a \"prompt\"")),
        }
    }

    /// Writes `slot`'s KV cache to `filename` in the server's
    /// `--slot-save-path` (`POST /slots/{id}?action=save`). A server
    /// started without that option answers 501: an error here.
    pub async fn save_slot(&self, slot: u32, filename: &str) -> Result<SlotFile, ProviderError> {
        self.slot_action(slot, "save", filename, "n_saved", "n_written")
            .await
    }

    /// Loads `filename` from the server's `--slot-save-path` into `slot`
    /// (`POST /slots/{id}?action=restore`), replacing what the slot held; a
    /// missing or unreadable file is an error (and may leave the slot empty).
    pub async fn restore_slot(&self, slot: u32, filename: &str) -> Result<SlotFile, ProviderError> {
        self.slot_action(slot, "restore", filename, "n_restored", "n_read")
            .await
    }

    /// Tokens `slot` holds, by `GET /slots` (`n_prompt_tokens` of its last
    /// task; 0 for a slot that has served nothing since the server started).
    pub async fn slot_tokens(&self, slot: u32) -> Result<u64, ProviderError> {
        let request = self.client.get(self.url("/slots"));
        let reply = self.send_json(request, QUICK_TIMEOUT).await?;
        let Some(entry) = reply
            .as_array()
            .and_then(|slots| slots.iter().find(|s| s["id"].as_u64() == Some(slot.into())))
        else {
            return Err(self.bad_reply(&format!("/slots lists no slot {slot}")));
        };
        Ok(entry["n_prompt_tokens"].as_u64().unwrap_or(0))
    }

    async fn slot_action(
        &self,
        slot: u32,
        action: &str,
        filename: &str,
        tokens_key: &str,
        bytes_key: &str,
    ) -> Result<SlotFile, ProviderError> {
        let url = self.url(&format!("/slots/{slot}?action={action}"));
        let request = self.client.post(url).json(&json!({ "filename": filename }));
        // A big model's cache is gigabytes: the whole generation timeout.
        let reply = self.send_json(request, self.idle_timeout).await?;
        let Some(tokens) = reply[tokens_key].as_u64() else {
            return Err(self.bad_reply(&format!(
                "/slots {action} answered without \"{tokens_key}\": {}",
                excerpt(&reply.to_string())
            )));
        };
        Ok(SlotFile {
            tokens,
            bytes: reply[bytes_key].as_u64().unwrap_or(0),
            ms: reply["timings"][format!("{action}_ms")]
                .as_f64()
                .unwrap_or(0.0),
        })
    }

    async fn tokenize(&self, text: &str, add_special: bool) -> Result<u64, ProviderError> {
        let key = cache_key(text, add_special);
        if let Some(&n) = self.lock_counts().get(&key) {
            return Ok(n);
        }
        let body = match self.kind {
            // vLLM: `{"count": N, "max_model_len": M, "tokens": [...]}`.
            ServerKind::Vllm => json!({
                "model": self.model, "prompt": text, "add_special_tokens": add_special,
            }),
            _ => json!({ "content": text, "add_special": add_special, "parse_special": true }),
        };
        let reply = self.post_json("/tokenize", &body).await?;
        let Some(n) = token_count(&reply) else {
            return Err(self.bad_reply("/tokenize answered without \"tokens\""));
        };
        let mut counts = self.lock_counts();
        if counts.len() >= TOKEN_CACHE_MAX {
            counts.clear();
        }
        counts.insert(key, n);
        Ok(n)
    }

    fn lock_counts(&self) -> std::sync::MutexGuard<'_, HashMap<u64, u64>> {
        // A panic elsewhere while holding the lock leaves plain numbers behind: still usable.
        self.token_counts
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Streams one reply. Visible text and reasoning go to `on_chunk` as
    /// they arrive (never a partial tag); the finished reply comes back.
    pub async fn chat(
        &self,
        req: &ChatRequest,
        cancel: &CancellationToken,
        on_chunk: &mut (dyn FnMut(StreamChunk) + Send),
    ) -> Result<ChatResponse, ProviderError> {
        let mut body = wire::chat_body(req, &self.model, self.tool_format);
        if self.logprobs {
            body["logprobs"] = serde_json::json!(true);
            body["top_logprobs"] = serde_json::json!(1);
        }
        let send = self
            .client
            .post(self.url("/v1/chat/completions"))
            .json(&body)
            .send();
        // Dropping the response (on cancel or error) closes the connection,
        // which is how llama-server learns to stop generating.
        let response = tokio::select! {
            biased;
            _ = cancel.cancelled() => return Err(ProviderError::Interrupted),
            sent = tokio::time::timeout(self.idle_timeout, send) => match sent {
                Err(_) => return Err(self.timeout_error()),
                Ok(result) => result.map_err(|e| self.transport_error(&e))?,
            },
        };
        let response = self.check_status(response).await?;
        let mut bytes = response.bytes_stream();
        let mut parser = SseParser::new();
        let mut acc = stream::Accumulator::new(&self.endpoint, self.tool_format);
        loop {
            let next = tokio::select! {
                biased;
                _ = cancel.cancelled() => return Err(ProviderError::Interrupted),
                next = tokio::time::timeout(self.idle_timeout, bytes.next()) => next,
            };
            let (events, ended) = match next {
                Err(_) => return Err(self.timeout_error()),
                Ok(None) => (parser.finish(), true),
                Ok(Some(Err(e))) => {
                    return Err(ProviderError::Truncated {
                        endpoint: self.endpoint.clone(),
                        detail: root_cause(&e),
                    });
                }
                Ok(Some(Ok(chunk))) => (parser.feed(&chunk), false),
            };
            for event in events {
                match event {
                    SseEvent::Data(data) => acc.frame(&data, on_chunk)?,
                    SseEvent::Done => acc.done = true,
                    SseEvent::OverCap => acc.cut(),
                    SseEvent::Error(text) => {
                        let error = serde_json::from_str(&text).unwrap_or(Value::String(text));
                        return Err(stream::stream_error(&self.endpoint, &error));
                    }
                }
                if acc.is_cut() {
                    break;
                }
            }
            // A cut reply ends here: returning drops the connection, which
            // stops the server generating.
            if ended || acc.done || acc.is_cut() {
                break;
            }
        }
        acc.finish()
    }

    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.endpoint)
    }

    /// `GET path`, its JSON answer within the quick timeout (probes).
    pub(crate) async fn get_json(&self, path: &str) -> Result<Value, ProviderError> {
        let request = self.client.get(self.url(path));
        self.send_json(request, QUICK_TIMEOUT).await
    }

    /// `POST path` with a JSON body, its JSON answer.
    pub(crate) async fn post_json(&self, path: &str, body: &Value) -> Result<Value, ProviderError> {
        let request = self.client.post(self.url(path)).json(body);
        self.send_json(request, self.idle_timeout).await
    }

    /// Sends a small request and reads its JSON answer within `limit`.
    async fn send_json(
        &self,
        request: reqwest::RequestBuilder,
        limit: Duration,
    ) -> Result<Value, ProviderError> {
        let limit = limit.min(self.idle_timeout);
        let response = request
            .timeout(limit)
            .send()
            .await
            .map_err(|e| self.transport_error(&e))?;
        let response = self.check_status(response).await?;
        let body = bounds::read_body(response, bounds::MAX_ANSWER_BYTES)
            .await
            .map_err(|e| self.transport_error(&e))?;
        if body.cut {
            return Err(bounds::answer_too_large(&self.endpoint));
        }
        let text = body.text;
        serde_json::from_str(&text)
            .map_err(|_| self.bad_reply(&format!("expected JSON, got: {}", excerpt(&text))))
    }

    /// Non-2xx answers become errors, with the server's message.
    async fn check_status(
        &self,
        response: reqwest::Response,
    ) -> Result<reqwest::Response, ProviderError> {
        let status = response.status();
        if status.is_success() {
            return Ok(response);
        }
        let read = bounds::read_body(response, bounds::MAX_ERROR_BODY_BYTES);
        let body = match tokio::time::timeout(self.idle_timeout.min(QUICK_TIMEOUT), read).await {
            Ok(Ok(body)) => body.text,
            _ => String::new(),
        };
        Err(http_error(&self.endpoint, status.as_u16(), &body))
    }

    fn transport_error(&self, e: &reqwest::Error) -> ProviderError {
        if e.is_timeout() {
            return self.timeout_error();
        }
        ProviderError::Unreachable {
            endpoint: self.endpoint.clone(),
            detail: root_cause(e),
        }
    }

    fn timeout_error(&self) -> ProviderError {
        ProviderError::Timeout {
            endpoint: self.endpoint.clone(),
            // Rounded up: a sub-second test timeout should not read "0s".
            secs: self.idle_timeout.as_secs_f64().ceil() as u64,
        }
    }

    fn bad_reply(&self, detail: &str) -> ProviderError {
        ProviderError::BadReply {
            endpoint: self.endpoint.clone(),
            detail: detail.to_string(),
        }
    }
}

/// `count` (vLLM) or the length of `tokens` (llama-server, vLLM).
fn token_count(reply: &Value) -> Option<u64> {
    reply["count"]
        .as_u64()
        .or_else(|| reply["tokens"].as_array().map(|t| t.len() as u64))
}

fn cache_key(text: &str, add_special: bool) -> u64 {
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    text.hash(&mut hasher);
    add_special.hash(&mut hasher);
    hasher.finish()
}
