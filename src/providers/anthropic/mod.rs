//! Anthropic's Messages API (`POST {base_url}/v1/messages`), streamed.
//!
//! The key goes in `x-api-key` with `anthropic-version: 2023-06-01`. Text
//! streams to the screen as it arrives, thinking as reasoning; tool calls
//! are assembled from their `input_json_delta` pieces. Failures before the
//! reply starts are retried (see `remote_api::RetryPolicy`); a refused key is
//! one line naming `ANTHROPIC_API_KEY`.

mod stream;
pub(crate) mod wire;

use std::time::Instant;

use reqwest::header::{HeaderMap, HeaderValue};
use secrecy::SecretString;
use tokio_util::sync::CancellationToken;

use super::remote_api::RetryPolicy;
use super::remote_api::transport::{KeyHeader, Transport};
use super::{ChatRequest, ChatResponse, ProviderError, StreamChunk};
use crate::config::AnthropicConfig;

pub const API_VERSION: &str = "2023-06-01";
pub const KEY_VAR: &str = "ANTHROPIC_API_KEY";

#[derive(Clone, Debug)]
pub struct Anthropic {
    transport: Transport,
    /// Without a trailing `/` or `/v1`.
    base_url: String,
    model: String,
    max_tokens: u64,
}

impl Anthropic {
    pub fn new(cfg: &AnthropicConfig, key: SecretString) -> Self {
        let base_url = cfg.base_url.trim_end_matches('/');
        let base_url = base_url.strip_suffix("/v1").unwrap_or(base_url);
        Self {
            transport: Transport::new(
                "anthropic",
                KEY_VAR,
                key,
                KeyHeader::XApiKey,
                base_url,
                cfg.timeout,
            ),
            base_url: base_url.to_string(),
            model: cfg.model.clone(),
            max_tokens: cfg.max_tokens,
        }
    }

    /// Retries other than the default (tests use short waits).
    pub fn with_retry_policy(mut self, policy: RetryPolicy) -> Self {
        self.transport.retry = policy;
        self
    }

    /// Most tokens one reply may have (what a spend cap must allow for).
    pub fn max_tokens(&self) -> u64 {
        self.max_tokens
    }

    pub fn model(&self) -> &str {
        &self.model
    }

    pub fn endpoint(&self) -> &str {
        &self.base_url
    }

    /// Streams one reply: text and thinking go to `on_chunk` as they
    /// arrive; the finished reply comes back. `req.max_tokens` and
    /// `req.slot` are ignored (`[remote.anthropic] max_tokens` applies).
    pub async fn chat(
        &self,
        req: &ChatRequest,
        cancel: &CancellationToken,
        on_chunk: &mut (dyn FnMut(StreamChunk) + Send),
    ) -> Result<ChatResponse, ProviderError> {
        let body = wire::messages_body(req, &self.model, self.max_tokens);
        let mut headers = HeaderMap::new();
        headers.insert("anthropic-version", HeaderValue::from_static(API_VERSION));
        let url = format!("{}/v1/messages", self.base_url);
        let sent_at = Instant::now();
        let response = self.transport.post(&url, &headers, &body, cancel).await?;
        let mut acc = stream::Accumulator::new(&self.transport.endpoint, sent_at);
        let mut on_event = |event| acc.event(event, &mut *on_chunk);
        self.transport
            .read_sse(response, cancel, &mut on_event)
            .await?;
        acc.finish(&self.model)
    }
}
