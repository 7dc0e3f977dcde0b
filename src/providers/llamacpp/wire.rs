//! The JSON egirl sends to the server: history rendered for the configured
//! tool format. Rendering is a pure function of the messages, so earlier
//! turns re-send byte for byte and the server's prefix cache holds.

use serde_json::{Value, json};

use super::ChatRequest;
use crate::chat::{ChatMessage, ToolCall, ToolSpec};
use crate::config::ToolFormat;
use crate::protocol::Role;
use crate::providers::Inlined;
use crate::providers::completions::{native_assistant, tool_images, tool_message, user_content};
use crate::providers::tool_call_text;

/// The body of `/v1/chat/completions`.
pub fn chat_body(req: &ChatRequest, model: &str, format: ToolFormat) -> Value {
    let mut body = json!({
        "model": model,
        "messages": messages(&req.messages, &req.tools, format, &req.images),
    });
    if let Some(tools) = native_tools(&req.tools, format) {
        body["tools"] = tools;
    }
    body["stream"] = json!(true);
    body["stream_options"] = json!({ "include_usage": true });
    body["cache_prompt"] = json!(true);
    body["max_tokens"] = json!(req.max_tokens);
    if let Some(slot) = req.slot {
        body["id_slot"] = json!(slot);
    }
    body["timings_per_token"] = json!(false);
    body
}

/// The body of `/apply-template`: what the chat body renders to, without
/// the generation settings. Images are their one-line notes here: the
/// template takes no pictures, and their tokens are counted apart (see
/// `images::tokens`).
pub fn template_body(req: &ChatRequest, format: ToolFormat) -> Value {
    let no_images = Inlined::default();
    let mut body = json!({ "messages": messages(&req.messages, &req.tools, format, &no_images) });
    if let Some(tools) = native_tools(&req.tools, format) {
        body["tools"] = tools;
    }
    body
}

fn native_tools(tools: &[ToolSpec], format: ToolFormat) -> Option<Value> {
    if format == ToolFormat::Qwen3 || tools.is_empty() {
        return None;
    }
    Some(Value::Array(
        tools.iter().map(ToolSpec::to_openai_json).collect(),
    ))
}

/// History in the wire shape of `format`.
///
/// qwen3: the tools block is appended to the first system message, assistant
/// messages carry their `<tool_call>` blocks in the content, and each run of
/// tool results becomes one user message of `<tool_response>` blocks in call
/// order. native/auto: OpenAI `tool_calls` and `tool` messages, except (auto)
/// an assistant message whose content holds `<tool_call>` blocks, which was a
/// Qwen3-style reply and is re-sent the same way with its results.
/// Images are content parts of the user message they belong to (a tool
/// result's: of the message after its run, see `completions::tool_images`).
pub fn messages(
    messages: &[ChatMessage],
    tools: &[ToolSpec],
    format: ToolFormat,
    inlined: &Inlined,
) -> Vec<Value> {
    let mut tools_block = (format == ToolFormat::Qwen3 && !tools.is_empty())
        .then(|| tool_call_text::tools_system_block(tools));
    let mut out = Vec::with_capacity(messages.len() + 1);
    if tools_block.is_some() && !messages.iter().any(|m| m.role == Role::System) {
        out.push(json!({ "role": "system", "content": tools_block.take() }));
    }
    let mut calls_in_content = false;
    let mut last_calls: &[ToolCall] = &[];
    let mut i = 0;
    while i < messages.len() {
        let message = &messages[i];
        i += 1;
        match message.role {
            Role::System => {
                let content = match tools_block.take() {
                    Some(block) if message.content.is_empty() => block,
                    Some(block) => format!("{}\n\n{block}", message.content),
                    None => message.content.clone(),
                };
                out.push(json!({ "role": "system", "content": content }));
            }
            Role::User => out.push(json!({
                "role": "user",
                "content": user_content(&message.content, &message.images, inlined),
            })),
            Role::Assistant => {
                last_calls = &message.tool_calls;
                calls_in_content =
                    format == ToolFormat::Qwen3 || message.content.contains("<tool_call>");
                if calls_in_content {
                    let content = tool_call_text::render_assistant_content(message);
                    out.push(json!({ "role": "assistant", "content": content }));
                } else {
                    out.push(native_assistant(message));
                }
            }
            Role::Tool if calls_in_content || format == ToolFormat::Qwen3 => {
                let mut run = vec![message];
                while i < messages.len() && messages[i].role == Role::Tool {
                    run.push(&messages[i]);
                    i += 1;
                }
                let ordered = in_call_order(last_calls, run);
                let content = tool_call_text::render_tool_responses(
                    ordered.iter().map(|m| m.content.as_str()),
                );
                let images: Vec<_> = ordered.iter().flat_map(|m| m.images.clone()).collect();
                let content = user_content(&content, &images, inlined);
                out.push(json!({ "role": "user", "content": content }));
            }
            Role::Tool => {
                let start = i - 1;
                while i < messages.len() && messages[i].role == Role::Tool {
                    i += 1;
                }
                out.extend(messages[start..i].iter().map(tool_message));
                out.extend(tool_images(&messages[start..i], inlined));
            }
        }
    }
    out
}

/// Results matched to calls by position: sorted into the order of the calls
/// they answer (the agent may finish them in any order); unknown ids keep
/// their place at the end.
fn in_call_order<'a>(calls: &[ToolCall], mut run: Vec<&'a ChatMessage>) -> Vec<&'a ChatMessage> {
    let position = |m: &ChatMessage| {
        m.tool_call_id
            .as_deref()
            .and_then(|id| calls.iter().position(|c| c.id == id))
            .unwrap_or(usize::MAX)
    };
    run.sort_by_key(|m| position(m));
    run
}
