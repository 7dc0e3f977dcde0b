//! The conversation as the agent keeps it: messages, the tool calls in
//! them, the tools offered to the model and the tokens a request used.
//! Plain data, below the providers, so the tools, the sessions and the
//! usage log can name a message without importing a provider. `Role` is
//! defined with the protocol, where surfaces read it.

use serde::{Deserialize, Serialize};

pub use crate::protocol::ImagePart;
use crate::protocol::Role;

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
    /// Images that are part of this message (a user's, or a tool result's
    /// such as a screenshot), by file; see [`ImagePart`].
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub images: Vec<ImagePart>,
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
            images: Vec::new(),
        }
    }
    /// This message, carrying `images`.
    pub fn with_images(mut self, images: Vec<ImagePart>) -> Self {
        self.images = images;
        self
    }
    fn plain(role: Role, content: impl Into<String>) -> Self {
        Self {
            role,
            content: content.into(),
            tool_calls: Vec::new(),
            tool_call_id: None,
            name: None,
            images: Vec::new(),
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
