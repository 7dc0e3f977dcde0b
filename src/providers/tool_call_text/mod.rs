//! Tool calls written as text: the `<tool_call>` format of Qwen3's chat
//! template (and the Hermes-style templates that share it), for servers
//! whose template ignores native tools (docs/design.md §6). A wire
//! format, not a provider.
//!
//! Tools go in the system prompt inside `<tools>`, the model answers with
//! `<tool_call>\n{json}\n</tool_call>` blocks, and results go back as one
//! user message of `<tool_response>` blocks, matched to calls by position.
//! JSON is written the way Qwen3's chat template writes it (Python's
//! `json.dumps`: `", "` and `": "` separators, non-ASCII kept), so prompts
//! and fine-tuning exports match what the model was trained on.
//!
//! `<think>` blocks are reasoning only: a `<tool_call>` inside one is not
//! run. The think block is the model's scratchpad; it often drafts a call
//! there and then decides otherwise, and running a draft would execute side
//! effects the model never committed to. Qwen3's own template and
//! llama-server's parser also extract calls from the content after the
//! reasoning, never from inside it. A model that meant the call repeats it
//! after `</think>`.

mod repair;
mod splitter;

pub use repair::parse_lenient;
pub use splitter::{RawBlock, StreamSplitter};

use serde::Serialize;
use serde_json::{Map, Value};

use crate::chat::{ChatMessage, ToolCall, ToolSpec};

const TOOLS_HEADER: &str = "# Tools\n\n\
    You may call one or more functions to assist with the user query.\n\n\
    You are provided with function signatures within <tools></tools> XML tags:\n\
    <tools>\n";

const TOOLS_FOOTER: &str = "</tools>\n\n\
    For each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:\n\
    <tool_call>\n\
    {\"name\": <function-name>, \"arguments\": <args-json-object>}\n\
    </tool_call>";

/// The tools section for the system prompt (appended after a blank line).
/// Byte-stable for the same tools, so the server's prefix cache holds.
pub fn tools_system_block(tools: &[ToolSpec]) -> String {
    let mut block = String::from(TOOLS_HEADER);
    for tool in tools {
        block.push_str(&spaced_json(&tool.to_openai_json()));
        block.push('\n');
    }
    block.push_str(TOOLS_FOOTER);
    block
}

/// JSON on one line with Python's default separators (`", "`, `": "`).
pub fn spaced_json(value: &Value) -> String {
    let mut out = Vec::new();
    let mut serializer = serde_json::Serializer::with_formatter(&mut out, PythonSpacing);
    // Writing a `Value` into memory cannot fail.
    if value.serialize(&mut serializer).is_err() {
        return value.to_string();
    }
    String::from_utf8(out).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

struct PythonSpacing;

impl serde_json::ser::Formatter for PythonSpacing {
    fn begin_array_value<W: ?Sized + std::io::Write>(
        &mut self,
        writer: &mut W,
        first: bool,
    ) -> std::io::Result<()> {
        if first {
            Ok(())
        } else {
            writer.write_all(b", ")
        }
    }
    fn begin_object_key<W: ?Sized + std::io::Write>(
        &mut self,
        writer: &mut W,
        first: bool,
    ) -> std::io::Result<()> {
        if first {
            Ok(())
        } else {
            writer.write_all(b", ")
        }
    }
    fn begin_object_value<W: ?Sized + std::io::Write>(
        &mut self,
        writer: &mut W,
    ) -> std::io::Result<()> {
        writer.write_all(b": ")
    }
}

/// One call as the model is trained to write it.
pub fn render_tool_call(call: &ToolCall) -> String {
    let json = serde_json::json!({ "name": call.name, "arguments": call.arguments });
    format!("<tool_call>\n{}\n</tool_call>", spaced_json(&json))
}

/// An assistant message's content on the wire. A message parsed from a
/// Qwen3 reply already holds its `<tool_call>` blocks and is sent byte for
/// byte (the server's prefix cache and the model's own words); otherwise
/// (calls from native `tool_calls`) the blocks are rendered after the text.
pub fn render_assistant_content(message: &ChatMessage) -> String {
    if message.tool_calls.is_empty() || message.content.contains("<tool_call>") {
        return message.content.clone();
    }
    let mut content = message.content.trim_end().to_string();
    for call in &message.tool_calls {
        if !content.is_empty() {
            content.push('\n');
        }
        content.push_str(&render_tool_call(call));
    }
    content
}

/// Tool results, in call order, as the content of one user message.
pub fn render_tool_responses<'a>(results: impl IntoIterator<Item = &'a str>) -> String {
    let blocks: Vec<String> = results
        .into_iter()
        .map(|result| format!("<tool_response>\n{result}\n</tool_response>"))
        .collect();
    blocks.join("\n")
}

/// A finished reply, taken apart.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ParsedReply {
    /// What the user sees: reasoning and tool-call blocks removed, trimmed.
    pub text: String,
    pub reasoning: String,
    pub calls: Vec<ToolCall>,
    /// The reply minus its reasoning, `<tool_call>` blocks kept: the copy
    /// kept in history and re-sent byte for byte.
    pub history: String,
}

/// Finds every `<tool_call>` block (outside `<think>`), including one cut
/// off at max_tokens, and repairs what it can. Ids are `call_0`, `call_1`…
/// by position, so transcripts are stable.
pub fn parse_tool_calls(text: &str) -> ParsedReply {
    parse_reply(text, true)
}

/// As `parse_tool_calls`; with `detect_calls` false (native format) only
/// `<think>` is separated and `<tool_call>` stays ordinary text.
pub fn parse_reply(text: &str, detect_calls: bool) -> ParsedReply {
    let mut splitter = StreamSplitter::new(detect_calls);
    if starts_inside_think(text) {
        splitter = splitter.starting_in_think();
    }
    let mut parsed = ParsedReply::default();
    for chunk in splitter.push(text) {
        match chunk {
            super::StreamChunk::Text(t) => parsed.text.push_str(&t),
            super::StreamChunk::Reasoning(r) => parsed.reasoning.push_str(&r),
        }
    }
    parsed.history = splitter.raw_without_reasoning().trim().to_string();
    parsed.reasoning = parsed.reasoning.trim().to_string();
    let blocks = splitter.finish();
    parsed.calls = blocks
        .iter()
        .enumerate()
        .map(|(i, block)| parse_call_block(block, i))
        .collect();
    parsed
}

/// Templates that open `<think>` in the prompt leave only `</think>` in the reply.
fn starts_inside_think(text: &str) -> bool {
    match (text.find("</think>"), text.find("<think>")) {
        (Some(close), Some(open)) => close < open,
        (Some(_), None) => true,
        _ => false,
    }
}

/// The stable id of the call at `index` within one reply.
pub fn call_id(index: usize) -> String {
    format!("call_{index}")
}

fn parse_call_block(block: &RawBlock, index: usize) -> ToolCall {
    let body = strip_code_fence(block.body.trim());
    let failed = |name: Option<String>, reason: String| ToolCall {
        id: call_id(index),
        name: name.unwrap_or_else(|| "unknown".into()),
        arguments: Value::Null,
        arguments_error: Some(reason),
    };
    if body.is_empty() {
        return failed(
            None,
            "the <tool_call> block is empty (the reply was probably cut off at max_tokens)".into(),
        );
    }
    let object = match parse_lenient(body) {
        Ok(Value::Object(object)) => object,
        Ok(other) => {
            return failed(
                None,
                format!(
                    "a tool call must be {{\"name\": ..., \"arguments\": {{...}}}}, got {}",
                    kind(&other)
                ),
            );
        }
        Err(reason) if !block.closed => {
            return failed(
                repair::recover_name(body),
                format!(
                    "the tool call was cut off before </tool_call> (max_tokens reached?): {reason}"
                ),
            );
        }
        Err(reason) => {
            return failed(
                repair::recover_name(body),
                format!("the tool call is not valid JSON: {reason}"),
            );
        }
    };
    // Some models wrap the call OpenAI-style: {"type": "function", "function": {...}}.
    let object = match object.get("function") {
        Some(Value::Object(inner)) if !object.contains_key("name") => inner.clone(),
        _ => object,
    };
    let Some(name) = object
        .get("name")
        .and_then(Value::as_str)
        .filter(|n| !n.is_empty())
    else {
        return failed(None, "the tool call has no \"name\"".into());
    };
    let arguments = object.get("arguments").or_else(|| object.get("parameters"));
    match arguments_value(arguments) {
        Ok(arguments) => ToolCall {
            id: call_id(index),
            name: name.to_string(),
            arguments,
            arguments_error: None,
        },
        Err(reason) => failed(Some(name.to_string()), reason),
    }
}

fn arguments_value(arguments: Option<&Value>) -> Result<Value, String> {
    match arguments {
        None | Some(Value::Null) => Ok(Value::Object(Map::new())),
        Some(Value::Object(object)) => Ok(Value::Object(object.clone())),
        // Double-encoded: the arguments object written as a JSON string.
        Some(Value::String(text)) => parse_arguments(text),
        Some(other) => Err(format!(
            "the arguments must be a JSON object, got {}",
            kind(other)
        )),
    }
}

/// Arguments given as a JSON string (OpenAI `tool_calls`, or a
/// double-encoded Qwen3 call), repaired when broken. An empty string means
/// no arguments.
pub fn parse_arguments(raw: &str) -> Result<Value, String> {
    let raw = raw.trim();
    if raw.is_empty() {
        return Ok(Value::Object(Map::new()));
    }
    match parse_lenient(raw) {
        Ok(Value::Object(object)) => Ok(Value::Object(object)),
        // Encoded twice over: a string holding the JSON text.
        Ok(Value::String(inner)) => match parse_lenient(&inner) {
            Ok(Value::Object(object)) => Ok(Value::Object(object)),
            _ => Err("the arguments are a string, not a JSON object".into()),
        },
        Ok(other) => Err(format!(
            "the arguments must be a JSON object, got {}",
            kind(&other)
        )),
        Err(reason) => Err(format!("the arguments are not valid JSON: {reason}")),
    }
}

fn strip_code_fence(body: &str) -> &str {
    let Some(rest) = body.strip_prefix("```") else {
        return body;
    };
    let rest = rest.strip_prefix("json").unwrap_or(rest);
    rest.strip_suffix("```").unwrap_or(rest).trim()
}

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests;
