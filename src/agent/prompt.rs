//! The prompt as it is sent (the system prompt and the redacted history)
//! and its size: an upper bound from its bytes, the server's exact count,
//! or an estimate message by message.

use std::sync::atomic::Ordering;

use super::shared::Shared;
use crate::chat::ChatMessage;
use crate::providers::llamacpp::LlamaCpp;
use crate::providers::{ChatRequest, ProviderError};
use crate::redact;
use crate::redact::Redactor;

/// Per-message template overhead when counting message by message
/// (`<|im_start|>role\n` ... `<|im_end|>\n`); the exact total comes from the server.
const MESSAGE_OVERHEAD_TOKENS: u64 = 6;

/// The system prompt and the history as sent. The history was redacted as
/// it was pushed; this guards the system prompt (workspace files, MEMORY.md)
/// and transcripts written before redaction existed.
pub(super) fn prompt_messages(
    redactor: &Redactor,
    system: &str,
    history: &[ChatMessage],
) -> Vec<ChatMessage> {
    let mut messages = Vec::with_capacity(history.len() + 1);
    messages.push(ChatMessage::system(redactor.redact(system)));
    messages.extend(history.iter().cloned());
    for message in &mut messages[1..] {
        redact::message(redactor, message);
    }
    messages
}

/// An upper bound on the prompt's tokens: its bytes plus the template's
/// special tokens per message, and `image_tokens` per image.
pub(super) fn byte_bound(request: &ChatRequest, image_tokens: u64) -> u64 {
    let messages: usize = request
        .messages
        .iter()
        .map(|m| {
            m.content.len()
                + m.tool_calls
                    .iter()
                    .map(|c| c.name.len() + c.arguments.to_string().len() + 32)
                    .sum::<usize>()
                + 16
        })
        .sum();
    let tools: usize = request
        .tools
        .iter()
        .map(|t| t.to_openai_json().to_string().len())
        .sum();
    let images: u64 = request.messages.iter().map(|m| m.images.len() as u64).sum();
    // The Qwen3 tools block adds its instructions around the tool list.
    (messages + tools + 1024) as u64 + images * image_tokens
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

pub(super) fn tools_text(specs: &[crate::chat::ToolSpec]) -> String {
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
}
