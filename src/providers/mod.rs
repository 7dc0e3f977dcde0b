//! Model providers. Three providers are three files; they share the
//! message types below, the chat-completions wire format (`completions`,
//! llamacpp and openai) and the error helpers (`http`).

pub mod anthropic;
pub mod bounds;
mod completions;
pub mod endpoints;
mod http;
pub mod llamacpp;
pub mod managed;
pub mod openai;
pub mod qwen3;
pub mod remote;
pub mod server_kind;
pub mod sse;

use serde::{Deserialize, Serialize};

/// Who said a message; defined with the protocol, where surfaces read it.
pub use crate::protocol::Role;

/// One message of a conversation, in the shape the agent keeps and persists.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ChatMessage {
    pub role: Role,
    pub content: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCall>,
    /// For `Role::Tool`: the call this is the result of.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
    /// For `Role::Tool`: the tool's name (some templates want it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

impl ChatMessage {
    pub fn system(content: impl Into<String>) -> Self {
        Self::plain(Role::System, content)
    }
    pub fn user(content: impl Into<String>) -> Self {
        Self::plain(Role::User, content)
    }
    pub fn assistant(content: impl Into<String>) -> Self {
        Self::plain(Role::Assistant, content)
    }
    pub fn tool_result(call: &ToolCall, content: impl Into<String>) -> Self {
        Self {
            role: Role::Tool,
            content: content.into(),
            tool_calls: Vec::new(),
            tool_call_id: Some(call.id.clone()),
            name: Some(call.name.clone()),
        }
    }
    fn plain(role: Role, content: impl Into<String>) -> Self {
        Self {
            role,
            content: content.into(),
            tool_calls: Vec::new(),
            tool_call_id: None,
            name: None,
        }
    }
}

/// A tool call as the model asked for it. When the arguments were not valid
/// JSON (even after repair) `arguments_error` says why and the agent reports
/// that back to the model instead of running the tool.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    pub id: String,
    pub name: String,
    pub arguments: serde_json::Value,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments_error: Option<String>,
}

/// A tool offered to the model.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ToolSpec {
    pub name: &'static str,
    pub description: &'static str,
    pub parameters: serde_json::Value,
}

impl ToolSpec {
    /// The OpenAI / Qwen3 `{"type":"function","function":{...}}` form.
    pub fn to_openai_json(&self) -> serde_json::Value {
        serde_json::json!({
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": self.parameters,
            }
        })
    }
}

/// One model request, the same for every provider.
#[derive(Clone, Debug, Default)]
pub struct ChatRequest {
    pub messages: Vec<ChatMessage>,
    pub tools: Vec<ToolSpec>,
    /// Tokens the local server may generate; remote providers use their own
    /// `[remote.*] max_tokens` instead (a local budget is too small there).
    pub max_tokens: u64,
    /// llama-server slot (`id_slot`), so sessions keep separate KV caches;
    /// remote providers ignore it.
    pub slot: Option<u32>,
}

/// Token accounting for one request, as the server reported it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Usage {
    /// Prompt tokens in total (evaluated + reused from the cache).
    pub input_tokens: u64,
    pub output_tokens: u64,
    /// Prompt tokens reused from the server's KV cache (llama.cpp `timings.cache_n`).
    pub cached_tokens: u64,
    /// Prompt tokens the server evaluated (llama.cpp `timings.prompt_n`).
    pub evaluated_tokens: u64,
    /// Prompt tokens written to the provider's prompt cache (Anthropic
    /// `cache_creation_input_tokens`), billed above the input rate; part of
    /// `input_tokens`.
    #[serde(default)]
    pub cache_write_tokens: u64,
    pub prompt_ms: f64,
    pub predicted_ms: f64,
}

impl Usage {
    pub fn tokens_per_sec(&self) -> Option<f64> {
        (self.predicted_ms > 0.0 && self.output_tokens > 0)
            .then(|| self.output_tokens as f64 * 1000.0 / self.predicted_ms)
    }
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
