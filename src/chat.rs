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

/// The tool that lists the rarely used built-ins by name (`tools::catalog`):
/// `{name}` gives a tool's schema, `{name, arguments}` runs it.
pub const CATALOG_TOOL: &str = "more_tools";

impl ToolCall {
    /// The call this one stands for: a catalog call with a tool's `name`
    /// and its `arguments` (an object, or the object as a JSON string as
    /// small models send it) is that tool's call under the same id, so
    /// approvals, hooks, events and the webhook check see the real tool.
    /// Anything else (a schema request, the catalog naming itself, any
    /// other tool) is itself.
    pub fn resolved(&self) -> std::borrow::Cow<'_, ToolCall> {
        use serde_json::Value;
        use std::borrow::Cow;
        if self.name != CATALOG_TOOL || self.arguments_error.is_some() {
            return Cow::Borrowed(self);
        }
        let name = match self.arguments.get("name").and_then(Value::as_str) {
            Some(name) if !name.trim().is_empty() && name.trim() != CATALOG_TOOL => name.trim(),
            _ => return Cow::Borrowed(self),
        };
        let (arguments, arguments_error) = match self.arguments.get("arguments") {
            None | Some(Value::Null) => return Cow::Borrowed(self),
            Some(Value::String(text)) if text.trim().is_empty() => (serde_json::json!({}), None),
            Some(Value::String(text)) => match serde_json::from_str(text) {
                Ok(arguments) => (arguments, None),
                Err(e) => (Value::Null, Some(format!("`arguments` is not JSON: {e}"))),
            },
            Some(arguments) => (arguments.clone(), None),
        };
        Cow::Owned(ToolCall {
            id: self.id.clone(),
            name: name.to_string(),
            arguments,
            arguments_error,
        })
    }
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

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn call(name: &str, arguments: serde_json::Value) -> ToolCall {
        ToolCall {
            id: "c1".into(),
            name: name.into(),
            arguments,
            arguments_error: None,
        }
    }

    #[test]
    fn a_catalog_call_with_arguments_stands_for_the_named_tools_call() {
        let sent = call(
            "more_tools",
            json!({"name": " cron_list ", "arguments": {"a": 1}}),
        );
        assert_eq!(*sent.resolved(), call("cron_list", json!({"a": 1})));
        // As a JSON string, or an empty one, as small models send them.
        let text = call(
            "more_tools",
            json!({"name": "cron_list", "arguments": "{\"a\": 1}"}),
        );
        assert_eq!(*text.resolved(), call("cron_list", json!({"a": 1})));
        let empty = call("more_tools", json!({"name": "cron_list", "arguments": ""}));
        assert_eq!(*empty.resolved(), call("cron_list", json!({})));
        let broken = call(
            "more_tools",
            json!({"name": "cron_list", "arguments": "{a"}),
        );
        let resolved = broken.resolved();
        assert_eq!(resolved.name, "cron_list");
        assert!(
            resolved
                .arguments_error
                .as_deref()
                .unwrap()
                .contains("not JSON")
        );
    }

    #[test]
    fn anything_else_is_itself() {
        for sent in [
            call("more_tools", json!({"name": "cron_add"})),
            call("more_tools", json!({"name": "more_tools", "arguments": {}})),
            call("more_tools", json!({"arguments": {}})),
            call("exec", json!({"name": "x", "arguments": {}})),
        ] {
            assert_eq!(*sent.resolved(), sent);
        }
    }
}
