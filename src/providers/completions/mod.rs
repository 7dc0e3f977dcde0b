//! The OpenAI chat-completions wire format, spoken by llama-server, vLLM,
//! Ollama, OpenAI and Azure OpenAI alike: native message rendering and the
//! stream accumulator, shared by the `llamacpp` and `openai` providers.

pub(crate) mod stream;

use serde_json::{Value, json};

use super::tool_call_text;
use crate::chat::{ChatMessage, ToolCall};
use crate::protocol::Role;

/// History as plain OpenAI messages: `tool_calls` on assistant messages and
/// one `tool` message per result. An assistant message that holds Qwen3
/// `<tool_call>` blocks in its text (a local reply) is sent with the blocks
/// taken out, its calls as native `tool_calls`.
pub(crate) fn native_messages(messages: &[ChatMessage]) -> Vec<Value> {
    messages
        .iter()
        .map(|message| match message.role {
            Role::System => json!({ "role": "system", "content": message.content }),
            Role::User => json!({ "role": "user", "content": message.content }),
            Role::Assistant if message.content.contains("<tool_call>") => {
                native_assistant(&ChatMessage {
                    content: visible_text(&message.content),
                    ..message.clone()
                })
            }
            Role::Assistant => native_assistant(message),
            Role::Tool => tool_message(message),
        })
        .collect()
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
        let wire = native_messages(&[local, ChatMessage::tool_result(&call, "hello")]);
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
