//! The prompt as it is sent (the system prompt and the redacted history)
//! and its size: an upper bound from its bytes, the server's exact count,
//! or an estimate message by message.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use super::shared::Shared;
use crate::chat::{ChatMessage, ToolSpec};
use crate::providers::llamacpp::LlamaCpp;
use crate::providers::{ChatRequest, ProviderError};
use crate::redact::Redactor;

/// Per-message template overhead when counting message by message
/// (`<|im_start|>role\n` ... `<|im_end|>\n`); the exact total comes from the server.
const MESSAGE_OVERHEAD_TOKENS: u64 = 6;

/// The system prompt and the history as sent. The history is redacted
/// once, as a message joins it (`Session::push`) and as a session is
/// opened (a transcript written before a secret was known), never again
/// per request; this guards the system prompt (workspace files, MEMORY.md).
/// A message added to a request only (a hand-off note, a compaction's
/// instruction) is redacted by whoever adds it.
pub(super) fn prompt_messages(
    redactor: &Redactor,
    system: &str,
    history: &[ChatMessage],
) -> Vec<ChatMessage> {
    let mut messages = Vec::with_capacity(history.len() + 1);
    messages.push(ChatMessage::system(redactor.redact(system)));
    messages.extend(history.iter().cloned());
    messages
}

/// An upper bound on the prompt's tokens: its bytes plus the template's
/// special tokens per message, and `image_tokens` per image.
pub(super) fn byte_bound(request: &ChatRequest, image_tokens: u64) -> u64 {
    let messages: u64 = request
        .messages
        .iter()
        .map(|m| message_bound(m, image_tokens))
        .sum();
    messages + tools_bound(&request.tools)
}

/// A message's share of `byte_bound`.
pub(super) fn message_bound(message: &ChatMessage, image_tokens: u64) -> u64 {
    let calls: usize = message
        .tool_calls
        .iter()
        .map(|c| c.name.len() + c.arguments.to_string().len() + 32)
        .sum();
    (message.content.len() + calls + 16) as u64 + message.images.len() as u64 * image_tokens
}

/// The tool list's share of `byte_bound`, with the template's tools block.
pub(super) fn tools_bound(specs: &[ToolSpec]) -> u64 {
    let tools: usize = specs
        .iter()
        .map(|t| t.to_openai_json().to_string().len())
        .sum();
    // The Qwen3 tools block adds its instructions around the tool list.
    (tools + 1024) as u64
}

/// An estimate of the prompt's tokens without the server: about four
/// bytes a token, as the window is fitted when the server cannot count
/// (the byte bound, a token a byte, is only for "surely fits").
pub(super) fn estimated_prompt(request: &ChatRequest, image_tokens: u64) -> u64 {
    let messages: u64 = request
        .messages
        .iter()
        .map(|m| estimate_tokens(m) + m.images.len() as u64 * image_tokens)
        .sum();
    messages + (tools_text(&request.tools).len() as u64).div_ceil(4)
}

/// The server's exact count; a server without the endpoints (vLLM, Ollama)
/// is not asked again.
pub(super) async fn count_prompt(
    shared: &Shared,
    local: &LlamaCpp,
    request: &ChatRequest,
) -> Option<u64> {
    if !shared.server_counts_tokens.load(Ordering::Relaxed) {
        return None;
    }
    match local.count_prompt(request).await {
        // The template counted each image as its note; the projector's
        // tokens are the configured estimate.
        Ok(n) => Some(n + super::vision::request_local_tokens(shared, request)),
        Err(e) => {
            if matches!(
                e,
                ProviderError::Http {
                    status: 404 | 405 | 501,
                    ..
                } | ProviderError::BadReply { .. }
            ) {
                tracing::info!(
                    "the local server cannot count tokens ({e}); estimating from here on"
                );
                shared.server_counts_tokens.store(false, Ordering::Relaxed);
            }
            None
        }
    }
}

pub(super) fn tools_text(specs: &[ToolSpec]) -> String {
    specs
        .iter()
        .map(|s| s.to_openai_json().to_string())
        .collect::<Vec<_>>()
        .join("\n")
}

pub(super) async fn message_tokens(shared: &Shared, message: &ChatMessage) -> u64 {
    let mut n = text_tokens(shared, &message.content).await
        + MESSAGE_OVERHEAD_TOKENS
        + super::vision::local_tokens(shared, message);
    for call in &message.tool_calls {
        let text = format!(
            "{{\"name\": \"{}\", \"arguments\": {}}}",
            call.name, call.arguments
        );
        n += text_tokens(shared, &text).await + 4;
    }
    n
}

/// About four bytes a token, with the template's overhead: the size of a
/// message without asking the server (the context meter's reply part).
pub(super) fn estimate_tokens(message: &ChatMessage) -> u64 {
    let calls: u64 = message
        .tool_calls
        .iter()
        .map(|c| (c.name.len() + c.arguments.to_string().len() + 24) as u64 / 4 + 4)
        .sum();
    (message.content.len() as u64).div_ceil(4) + MESSAGE_OVERHEAD_TOKENS + calls
}

/// Exact via /tokenize when the server has it, else about four characters a token.
pub(super) async fn text_tokens(shared: &Shared, text: &str) -> u64 {
    if !shared.server_counts_tokens.load(Ordering::Relaxed) {
        return (text.len() as u64).div_ceil(4);
    }
    match shared.main.server_for(None).count_tokens(text).await {
        Ok(n) => n,
        Err(_) => (text.len() as u64).div_ceil(4),
    }
}

/// What every request of a turn starts with, the system prompt and the
/// tool list, with what sizing a prompt needs of them, worked out once a
/// turn rather than once a request.
pub(super) struct Fixed {
    pub system: String,
    /// Shared with the agent's kept list (`tool_list`) and every request.
    pub specs: Arc<[ToolSpec]>,
    /// Tells two turns' fixed parts apart: equal parts, equal values.
    pub fingerprint: u64,
    /// `tools_bound` of `specs`.
    pub tools_bound: u64,
}

impl Fixed {
    pub fn new(system: String, specs: Arc<[ToolSpec]>) -> Self {
        use std::hash::{Hash, Hasher};
        let (tools_fingerprint, tools_bound) = tools_facts(&specs);
        let mut h = std::collections::hash_map::DefaultHasher::new();
        system.hash(&mut h);
        tools_fingerprint.hash(&mut h);
        Self {
            fingerprint: h.finish(),
            tools_bound,
            system,
            specs,
        }
    }

    /// `byte_bound` of a request of these parts and `history`.
    pub fn bound_with(&self, history: &[ChatMessage], image_tokens: u64) -> u64 {
        let messages: u64 = history.iter().map(|m| message_bound(m, image_tokens)).sum();
        // The system message's share as `message_bound` counts it.
        (self.system.len() + 16) as u64 + messages + self.tools_bound
    }
}

/// The tool list's fingerprint and `tools_bound`, kept for the last list
/// seen: every turn of every session offers the same list until the
/// config's tools or the MCP servers' change, and serializing it to size
/// it costs more than comparing it (the same list, `tool_list`'s, costs
/// nothing to compare).
fn tools_facts(specs: &Arc<[ToolSpec]>) -> (u64, u64) {
    type Last = Option<(Arc<[ToolSpec]>, u64, u64)>;
    static LAST: std::sync::Mutex<Last> = std::sync::Mutex::new(None);
    let mut last = LAST.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((seen, fingerprint, bound)) = last.as_ref()
        && (Arc::ptr_eq(seen, specs) || seen[..] == specs[..])
    {
        return (*fingerprint, *bound);
    }
    let facts = (tools_fingerprint(specs), tools_bound(specs));
    *last = Some((specs.clone(), facts.0, facts.1));
    facts
}

/// Tells two tool lists apart (names, descriptions, schemas): equal lists
/// give equal values.
fn tools_fingerprint(specs: &[ToolSpec]) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    specs.len().hash(&mut h);
    for spec in specs {
        spec.name.hash(&mut h);
        spec.description.hash(&mut h);
        hash_json(&spec.parameters, &mut h);
    }
    h.finish()
}

fn hash_json(value: &serde_json::Value, h: &mut impl std::hash::Hasher) {
    use serde_json::Value;
    use std::hash::Hash;
    match value {
        Value::Null => 0u8.hash(h),
        Value::Bool(b) => (1u8, b).hash(h),
        Value::Number(n) => (2u8, n.to_string()).hash(h),
        Value::String(s) => (3u8, s).hash(h),
        Value::Array(items) => {
            (4u8, items.len()).hash(h);
            items.iter().for_each(|v| hash_json(v, h));
        }
        Value::Object(map) => {
            (5u8, map.len()).hash(h);
            for (key, v) in map {
                key.hash(h);
                hash_json(v, h);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chat::ImagePart;

    #[test]
    fn the_window_counts_each_image_at_the_configured_estimate() {
        let plain = ChatRequest {
            messages: vec![ChatMessage::user("look")],
            ..ChatRequest::default()
        };
        let part = ImagePart {
            sha256: "0".repeat(64),
            media_type: "image/png".into(),
            width: 1280,
            height: 720,
            bytes: 1000,
            source: None,
        };
        let pictured = ChatRequest {
            messages: vec![ChatMessage::user("look").with_images(vec![part])],
            ..ChatRequest::default()
        };
        assert_eq!(byte_bound(&pictured, 768), byte_bound(&plain, 768) + 768);
        assert_eq!(
            estimated_prompt(&pictured, 500),
            estimated_prompt(&plain, 500) + 500
        );
    }

    #[test]
    fn the_fingerprint_changes_with_the_system_prompt_or_a_schema() {
        let fingerprint = |system: &str, specs: &[ToolSpec]| {
            Fixed::new(system.to_string(), specs.into()).fingerprint
        };
        let specs = crate::tools::specs();
        let base = fingerprint("system", &specs);
        assert_eq!(base, fingerprint("system", &crate::tools::specs()));
        assert_ne!(base, fingerprint("system.", &specs));
        let mut changed = specs.clone();
        changed[0].parameters["properties"]["extra"] = serde_json::json!({"type": "string"});
        assert_ne!(base, fingerprint("system", &changed));
        assert_ne!(base, fingerprint("system", &specs[1..]));
        // The last list's facts are kept; a list seen before is sized anew.
        assert_eq!(base, fingerprint("system", &specs));
        let fixed = Fixed::new("system".into(), changed.as_slice().into());
        assert_eq!(fixed.tools_bound, tools_bound(&changed));
        // The same list again (one `Arc`) is known without comparing it.
        let shared: Arc<[ToolSpec]> = specs.into();
        let first = Fixed::new("system".into(), shared.clone());
        assert_eq!(first.fingerprint, base);
        assert_eq!(Fixed::new("system".into(), shared).fingerprint, base);
    }

    #[test]
    fn the_fixed_parts_bound_is_the_requests_byte_bound() {
        let specs = crate::tools::specs();
        let history = vec![ChatMessage::user("hello"), ChatMessage::assistant("hi")];
        let fixed = Fixed::new("system prompt".into(), specs.as_slice().into());
        let mut messages = vec![ChatMessage::system("system prompt")];
        messages.extend(history.iter().cloned());
        let request = ChatRequest {
            messages,
            tools: specs.into(),
            ..ChatRequest::default()
        };
        assert_eq!(fixed.bound_with(&history, 768), byte_bound(&request, 768));
    }
}
