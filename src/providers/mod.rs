//! Model providers. Three providers are three files; they share the
//! request and reply types below (the messages themselves are in
//! `crate::chat`), the chat-completions wire format (`completions`,
//! llamacpp and openai) and the error helpers (`http`).

pub mod anthropic;
pub mod bounds;
mod completions;
pub mod endpoints;
mod http;
pub mod llamacpp;
pub mod managed;
pub mod openai;
pub mod placement;
pub mod probe;
pub mod remote;
pub mod remote_api;
pub mod server_kind;
pub mod sse;
pub mod tool_call_text;

use crate::chat::{ChatMessage, ToolCall, ToolSpec, Usage};

/// One model request, the same for every provider.
#[derive(Clone, Debug, Default)]
pub struct ChatRequest {
    pub messages: Vec<ChatMessage>,
    /// Shared, not copied: a turn's requests all carry its one list.
    pub tools: std::sync::Arc<[ToolSpec]>,
    /// Tokens the local server may generate; remote providers use their own
    /// `[remote.*] max_tokens` instead (a local budget is too small there).
    pub max_tokens: u64,
    /// llama-server slot (`id_slot`), so sessions keep separate KV caches;
    /// remote providers ignore it.
    pub slot: Option<u32>,
    /// The bytes of the images `messages` name, by hash, read from the
    /// store as the request was built (and gone with it). An image not
    /// here is sent as a one-line note instead (see `images::note`).
    pub images: Inlined,
}

/// Images ready for the wire, by the SHA-256 their `ImagePart` names.
pub type Inlined = std::collections::HashMap<String, std::sync::Arc<crate::images::Inline>>;

/// What a request says in place of an image it carries no bytes for (a
/// summary or classification request, which sends no pictures).
pub(crate) fn missing_image_note(part: &crate::chat::ImagePart) -> String {
    format!("[image {}: not shown]", crate::images::describe(part))
}

/// What a provider streams while a reply is generated.
#[derive(Clone, Debug, PartialEq)]
pub enum StreamChunk {
    /// Visible answer text (never a partial `<tool_call>` or `<think>` tag).
    Text(String),
    /// Model reasoning (`<think>` or `reasoning_content`).
    Reasoning(String),
}

/// A finished reply.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ChatResponse {
    /// Visible text, tool-call blocks and reasoning removed.
    pub content: String,
    pub reasoning: String,
    pub tool_calls: Vec<ToolCall>,
    /// The assistant message to keep in history, byte for byte as it must be
    /// re-sent (in Qwen3 mode this holds the `<tool_call>` blocks).
    pub message: ChatMessage,
    pub finish_reason: Option<String>,
    pub usage: Usage,
    pub model: String,
    /// Geometric-mean probability of the reply's tokens, when the server
    /// sent logprobs (llama.cpp asked with `with_logprobs`); escalation
    /// compares it with `[routing] escalation_threshold`.
    pub confidence: Option<f64>,
    /// Set when egirl cut the reply at a cap of [`bounds`] (the server
    /// kept streaming past `max_tokens`): what to tell the user.
    pub cut: Option<String>,
}

#[derive(Debug, thiserror::Error)]
pub enum ProviderError {
    #[error("cannot reach {endpoint}: {detail}")]
    Unreachable { endpoint: String, detail: String },
    #[error("{endpoint} did not answer within {secs}s")]
    Timeout { endpoint: String, secs: u64 },
    /// The request does not fit the server's context window.
    #[error("the prompt does not fit the server's context window: {0}")]
    ContextOverflow(String),
    #[error("{endpoint} answered HTTP {status}: {body}")]
    Http {
        endpoint: String,
        status: u16,
        body: String,
    },
    #[error("the stream from {endpoint} ended early: {detail}")]
    Truncated { endpoint: String, detail: String },
    #[error("bad reply from {endpoint}: {detail}")]
    BadReply { endpoint: String, detail: String },
    /// A remote API refused the credentials (401/403). Names the variable
    /// to check, never the key.
    #[error("{provider} refused the API key (HTTP {status}: {detail}); check {key_var}")]
    Auth {
        provider: String,
        status: u16,
        key_var: &'static str,
        detail: String,
    },
    /// The provider lacks a setting this call needs (e.g. no embeddings model).
    #[error("{0}")]
    NotConfigured(String),
    #[error("interrupted")]
    Interrupted,
}
