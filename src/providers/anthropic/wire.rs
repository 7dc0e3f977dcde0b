//! The body of `POST /v1/messages`: our history in the Messages API's shape.
//!
//! System messages go to the top-level `system`; tools are `{name,
//! description, input_schema}`; an assistant's calls are `tool_use` blocks
//! after its text; each run of tool results is one user message of
//! `tool_result` blocks in call order; consecutive messages of one role are
//! merged, as the API requires alternation. Two cache breakpoints: the
//! system block (which caches the tools before it) and the last block of
//! the history, so each request reads what the one before it wrote.

use std::collections::{HashMap, HashSet};

use serde_json::{Value, json};

use crate::chat::{ChatMessage, ImagePart, ToolCall, ToolSpec};
use crate::protocol::Role;
use crate::providers::completions::visible_text;
use crate::providers::remote_api::history;
use crate::providers::{ChatRequest, Inlined, missing_image_note};

pub(crate) fn messages_body(req: &ChatRequest, model: &str, max_tokens: u64) -> Value {
    let history = history::paired(&req.messages);
    let system: Vec<&str> = history
        .iter()
        .filter(|m| m.role == Role::System && !m.content.is_empty())
        .map(|m| m.content.as_str())
        .collect();
    let mut body = json!({ "model": model, "max_tokens": max_tokens, "stream": true });
    if !system.is_empty() {
        body["system"] = json!([{
            "type": "text",
            "text": system.join("\n\n"),
            "cache_control": { "type": "ephemeral" },
        }]);
    }
    body["messages"] = Value::Array(messages(&history, &req.images));
    if !req.tools.is_empty() {
        body["tools"] = Value::Array(req.tools.iter().map(tool).collect());
    }
    body
}

fn tool(spec: &ToolSpec) -> Value {
    json!({
        "name": spec.name,
        "description": spec.description,
        "input_schema": spec.parameters,
    })
}

/// The `messages` array (system messages left out: they are in `system`).
/// Images are `image` blocks with base64 sources: after a user message's
/// text, and inside a tool result's `content` (the API takes them there).
pub(crate) fn messages(history: &[ChatMessage], inlined: &Inlined) -> Vec<Value> {
    let mut out = Turns::default();
    let mut ids = WireIds::default();
    for message in history {
        match message.role {
            Role::System => {}
            Role::User => out.push(
                "user",
                with_images(&message.content, &message.images, inlined),
            ),
            Role::Assistant => {
                let text = if message.content.contains("<tool_call>") {
                    visible_text(&message.content)
                } else {
                    message.content.clone()
                };
                let mut blocks: Vec<Value> = text_block(&text).into_iter().collect();
                ids.start_message();
                blocks.extend(
                    message
                        .tool_calls
                        .iter()
                        .map(|call| tool_use(call, &mut ids)),
                );
                out.push("assistant", blocks);
            }
            Role::Tool => {
                let id = ids.for_result(message.tool_call_id.as_deref().unwrap_or_default());
                let mut block = json!({ "type": "tool_result", "tool_use_id": id });
                if !message.images.is_empty() {
                    block["content"] =
                        json!(with_images(&message.content, &message.images, inlined));
                } else if !message.content.is_empty() {
                    block["content"] = json!(message.content);
                }
                out.push("user", vec![block]);
            }
        }
    }
    out.finish()
}

/// Text then image blocks; an image with no bytes in the request is a
/// note in the text instead.
fn with_images(text: &str, images: &[ImagePart], inlined: &Inlined) -> Vec<Value> {
    let mut text = text.to_string();
    let mut blocks = Vec::new();
    for part in images {
        match inlined.get(&part.sha256) {
            Some(inline) => blocks.push(json!({
                "type": "image",
                "source": { "type": "base64", "media_type": inline.media_type, "data": inline.data },
            })),
            None => {
                text.push_str(if text.is_empty() { "" } else { "\n" });
                text.push_str(&missing_image_note(part));
            }
        }
    }
    let mut out: Vec<Value> = text_block(&text).into_iter().collect();
    out.extend(blocks);
    out
}

/// The API refuses empty text blocks: empty text is no block.
fn text_block(text: &str) -> Option<Value> {
    (!text.is_empty()).then(|| json!({ "type": "text", "text": text }))
}

fn tool_use(call: &ToolCall, ids: &mut WireIds) -> Value {
    // `input` must be an object; arguments that failed to parse are sent empty.
    let input = match &call.arguments {
        Value::Object(_) => call.arguments.clone(),
        _ => json!({}),
    };
    json!({ "type": "tool_use", "id": ids.for_call(&call.id), "name": call.name, "input": input })
}

/// Messages under construction, same-role neighbours merged.
#[derive(Default)]
struct Turns {
    turns: Vec<(&'static str, Vec<Value>)>,
}

impl Turns {
    fn push(&mut self, role: &'static str, blocks: impl IntoIterator<Item = Value>) {
        let blocks: Vec<Value> = blocks.into_iter().collect();
        if blocks.is_empty() {
            return;
        }
        match self.turns.last_mut() {
            Some((last, existing)) if *last == role => existing.extend(blocks),
            _ => self.turns.push((role, blocks)),
        }
    }

    fn finish(mut self) -> Vec<Value> {
        if let Some(("user", blocks)) = self.turns.last_mut()
            && let Some(last) = blocks.last_mut()
        {
            last["cache_control"] = json!({ "type": "ephemeral" });
        }
        self.turns
            .into_iter()
            .map(|(role, content)| json!({ "role": role, "content": content }))
            .collect()
    }
}

/// Tool-use ids as the API accepts them: `[A-Za-z0-9_-]+`, unique in the
/// conversation. Local replies number their calls `call_0`, `call_1`… in
/// every turn, so a repeated id gets a suffix, and its result follows it.
#[derive(Default)]
struct WireIds {
    used: HashSet<String>,
    /// Our id → the wire id, for the calls of the latest assistant message.
    current: HashMap<String, String>,
}

impl WireIds {
    fn start_message(&mut self) {
        self.current.clear();
    }

    fn for_call(&mut self, id: &str) -> String {
        let base = sanitize(id);
        let base = if base.is_empty() {
            format!("toolu_{}", self.used.len())
        } else {
            base
        };
        let mut wire = base.clone();
        let mut n = 1;
        while self.used.contains(&wire) {
            wire = format!("{base}_{n}");
            n += 1;
        }
        self.used.insert(wire.clone());
        self.current.insert(id.to_string(), wire.clone());
        wire
    }

    fn for_result(&self, id: &str) -> String {
        self.current
            .get(id)
            .cloned()
            .unwrap_or_else(|| sanitize(id))
    }
}

fn sanitize(id: &str) -> String {
    id.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(id: &str, path: &str) -> ToolCall {
        ToolCall {
            id: id.into(),
            name: "read_file".into(),
            arguments: json!({ "path": path }),
            arguments_error: None,
        }
    }

    #[test]
    fn repeated_local_call_ids_stay_unique_and_paired() {
        let first = call("call_0", "a.md");
        let second = call("call_0", "b.md");
        let history = vec![
            ChatMessage::user("read a"),
            ChatMessage {
                tool_calls: vec![first.clone()],
                ..ChatMessage::assistant("")
            },
            ChatMessage::tool_result(&first, "A"),
            ChatMessage {
                tool_calls: vec![second.clone()],
                ..ChatMessage::assistant("")
            },
            ChatMessage::tool_result(&second, "B"),
        ];
        let wire = messages(&history, &Inlined::default());
        assert_eq!(wire[1]["content"][0]["id"], "call_0");
        assert_eq!(wire[2]["content"][0]["tool_use_id"], "call_0");
        assert_eq!(wire[3]["content"][0]["id"], "call_0_1");
        assert_eq!(wire[4]["content"][0]["tool_use_id"], "call_0_1");
    }

    #[test]
    fn odd_ids_and_unparsed_arguments_are_made_acceptable() {
        let broken = ToolCall {
            id: "call:7/x".into(),
            name: "exec".into(),
            arguments: Value::Null,
            arguments_error: Some("not JSON".into()),
        };
        let history = vec![
            ChatMessage::user("go"),
            ChatMessage {
                tool_calls: vec![broken.clone()],
                ..ChatMessage::assistant("Running it.")
            },
            ChatMessage::tool_result(&broken, ""),
        ];
        let wire = messages(&history, &Inlined::default());
        assert_eq!(
            wire[1]["content"],
            json!([
                { "type": "text", "text": "Running it." },
                { "type": "tool_use", "id": "call_7_x", "name": "exec", "input": {} },
            ])
        );
        assert_eq!(
            wire[2]["content"],
            json!([{ "type": "tool_result", "tool_use_id": "call_7_x", "cache_control": { "type": "ephemeral" } }])
        );
    }

    #[test]
    fn same_role_neighbours_merge_and_empty_messages_vanish() {
        let history = vec![
            ChatMessage::user("one"),
            ChatMessage::user("two"),
            ChatMessage::assistant(""),
            ChatMessage::user("three"),
        ];
        let wire = messages(&history, &Inlined::default());
        assert_eq!(wire.len(), 1);
        assert_eq!(wire[0]["content"].as_array().map(Vec::len), Some(3));
    }
}
