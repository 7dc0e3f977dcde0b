//! The OpenAI chat-completions wire format, spoken by llama-server, vLLM,
//! Ollama, OpenAI and Azure OpenAI alike: native message rendering and the
//! stream accumulator, shared by the `llamacpp` and `openai` providers.

pub(crate) mod stream;

use serde_json::{Value, json};

use super::{Inlined, missing_image_note, tool_call_text};
use crate::chat::{ChatMessage, ImagePart, ToolCall};
use crate::protocol::Role;

/// History as plain OpenAI messages: `tool_calls` on assistant messages and
/// one `tool` message per result. An assistant message that holds Qwen3
/// `<tool_call>` blocks in its text (a local reply) is sent with the blocks
/// taken out, its calls as native `tool_calls`. Images go as `image_url`
/// content parts (see [`user_content`] and [`tool_images`]).
pub(crate) fn native_messages(messages: &[ChatMessage], inlined: &Inlined) -> Vec<Value> {
    let mut out = Vec::with_capacity(messages.len());
    let mut i = 0;
    while i < messages.len() {
        let message = &messages[i];
        i += 1;
        match message.role {
            Role::System => out.push(json!({ "role": "system", "content": message.content })),
            Role::User => out.push(json!({
                "role": "user",
                "content": user_content(&message.content, &message.images, inlined),
            })),
            Role::Assistant if message.content.contains("<tool_call>") => {
                out.push(native_assistant(&ChatMessage {
                    content: visible_text(&message.content),
                    ..message.clone()
                }))
            }
            Role::Assistant => out.push(native_assistant(message)),
            Role::Tool => {
                let start = i - 1;
                while i < messages.len() && messages[i].role == Role::Tool {
                    i += 1;
                }
                let run = &messages[start..i];
                out.extend(run.iter().map(tool_message));
                out.extend(tool_images(run, inlined));
            }
        }
    }
    out
}

/// A user message's `content`: the text alone, or with images the text
/// part then one `image_url` part (a data URI) per image. An image with no
/// bytes in the request is a note in the text instead.
pub(crate) fn user_content(text: &str, images: &[ImagePart], inlined: &Inlined) -> Value {
    let mut text = text.to_string();
    let mut parts = Vec::new();
    for part in images {
        match inlined.get(&part.sha256) {
            Some(inline) => parts.push(json!({
                "type": "image_url",
                "image_url": { "url": inline.data_uri() },
            })),
            None => {
                text.push_str(if text.is_empty() { "" } else { "\n" });
                text.push_str(&missing_image_note(part));
            }
        }
    }
    if parts.is_empty() {
        return json!(text);
    }
    parts.insert(0, json!({ "type": "text", "text": text }));
    Value::Array(parts)
}

/// The images of a run of tool results, as one user message after the
/// run. Chat-completions servers take only text in `tool` messages
/// (llama-server and vLLM refuse or drop image parts there, OpenAI refuses
/// them), and the results of one assistant message must follow it
/// unbroken: so the pictures follow the whole run, labelled with the tool
/// that produced them.
pub(crate) fn tool_images(run: &[ChatMessage], inlined: &Inlined) -> Option<Value> {
    let with_images: Vec<&ChatMessage> = run.iter().filter(|m| !m.images.is_empty()).collect();
    if with_images.is_empty() {
        return None;
    }
    let label = with_images
        .iter()
        .map(|m| format!("[the image(s) of the {} result above]", tool_name(m)))
        .collect::<Vec<_>>()
        .join(" ");
    let images: Vec<ImagePart> = with_images
        .iter()
        .flat_map(|m| m.images.iter().cloned())
        .collect();
    Some(json!({ "role": "user", "content": user_content(&label, &images, inlined) }))
}

fn tool_name(message: &ChatMessage) -> &str {
    message.name.as_deref().unwrap_or("tool")
}

/// The text of a Qwen3-style reply without its `<tool_call>` blocks.
pub(crate) fn visible_text(content: &str) -> String {
    tool_call_text::parse_reply(content, true).text
}

pub(crate) fn native_assistant(message: &ChatMessage) -> Value {
    let mut value = json!({ "role": "assistant", "content": message.content });
    if !message.tool_calls.is_empty() {
        let calls: Vec<Value> = message
            .tool_calls
            .iter()
            .map(|call| {
                json!({
                    "id": call.id,
                    "type": "function",
                    "function": { "name": call.name, "arguments": arguments_string(call) },
                })
            })
            .collect();
        value["tool_calls"] = Value::Array(calls);
    }
    value
}

pub(crate) fn tool_message(message: &ChatMessage) -> Value {
    json!({
        "role": "tool",
        "tool_call_id": message.tool_call_id.as_deref().unwrap_or_default(),
        "content": message.content,
    })
}

/// OpenAI sends arguments as a JSON string. A call whose arguments could not
/// be parsed is sent as `{}`: templates iterate the arguments, and `null`
/// would make the server fail to render the prompt.
fn arguments_string(call: &ToolCall) -> String {
    match &call.arguments {
        Value::Null => "{}".into(),
        arguments => arguments.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn qwen3_blocks_become_native_calls() {
        let call = ToolCall {
            id: "call_0".into(),
            name: "read_file".into(),
            arguments: json!({"path": "a.md"}),
            arguments_error: None,
        };
        let local = ChatMessage {
            tool_calls: vec![call.clone()],
            ..ChatMessage::assistant(
                "Let me look.\n<tool_call>\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"a.md\"}}\n</tool_call>",
            )
        };
        let wire = native_messages(
            &[local, ChatMessage::tool_result(&call, "hello")],
            &Inlined::default(),
        );
        assert_eq!(
            wire,
            vec![
                json!({"role": "assistant", "content": "Let me look.", "tool_calls": [
                    {"id": "call_0", "type": "function", "function": {"name": "read_file", "arguments": "{\"path\":\"a.md\"}"}}
                ]}),
                json!({"role": "tool", "tool_call_id": "call_0", "content": "hello"}),
            ]
        );
    }
}
