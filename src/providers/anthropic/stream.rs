//! The Messages API's event stream, turned into chunks for the screen and,
//! at `message_stop`, one `ChatResponse`.
//!
//! Events: `message_start` (model, prompt usage), `content_block_start`
//! (text, tool_use with id and name, thinking), `content_block_delta`
//! (`text_delta`, `input_json_delta`, `thinking_delta`), `content_block_stop`,
//! `message_delta` (stop_reason, usage), `message_stop`, `ping`, `error`.
//!
//! Bounded like the chat-completions stream (`providers::bounds`): more
//! than `MAX_CONTENT_BLOCKS` blocks fail the reply; past `MAX_REPLY_BYTES`
//! the reply is cut as at `max_tokens` and reading stops.

use std::collections::BTreeMap;
use std::time::Instant;

use serde_json::Value;

use crate::chat::{ChatMessage, ToolCall, Usage};
use crate::providers::bounds::{self, MAX_CONTENT_BLOCKS, ReplyBudget};
use crate::providers::http::{excerpt, http_error};
use crate::providers::remote_api::transport::Flow;
use crate::providers::sse::SseEvent;
use crate::providers::{ChatResponse, ProviderError, StreamChunk};

#[derive(Debug)]
enum Block {
    Text,
    ToolUse {
        id: String,
        name: String,
        json: String,
    },
    /// Thinking, redacted thinking, server tools: nothing egirl keeps.
    Other,
}

/// Token counts as the API reports them: `input_tokens` excludes the
/// cached parts.
#[derive(Debug, Default)]
struct WireUsage {
    input: u64,
    output: u64,
    cache_read: u64,
    cache_write: u64,
}

impl WireUsage {
    /// `message_start` carries all four; `message_delta` the final output
    /// count and, on newer API versions, the prompt counts again.
    fn update(&mut self, usage: &Value) {
        let set = |field: &mut u64, key: &str| {
            if let Some(n) = usage.get(key).and_then(Value::as_u64) {
                *field = n;
            }
        };
        set(&mut self.input, "input_tokens");
        set(&mut self.output, "output_tokens");
        set(&mut self.cache_read, "cache_read_input_tokens");
        set(&mut self.cache_write, "cache_creation_input_tokens");
    }
}

pub(crate) struct Accumulator {
    endpoint: String,
    blocks: BTreeMap<u64, Block>,
    content: String,
    reasoning: String,
    /// The current text block has shown nothing yet (blocks are separated
    /// by a blank line once both have text).
    block_is_fresh: bool,
    model: String,
    usage: WireUsage,
    stop_reason: Option<String>,
    stopped: bool,
    first_event: Option<Instant>,
    sent_at: Instant,
    budget: ReplyBudget,
    /// The block the last piece went to: the one a cut leaves incomplete.
    last_block: Option<u64>,
}

impl Accumulator {
    /// `sent_at`: when the request went out (for the latency figures).
    pub(crate) fn new(endpoint: &str, sent_at: Instant) -> Self {
        Self {
            endpoint: endpoint.to_string(),
            blocks: BTreeMap::new(),
            content: String::new(),
            reasoning: String::new(),
            block_is_fresh: true,
            model: String::new(),
            usage: WireUsage::default(),
            stop_reason: None,
            stopped: false,
            first_event: None,
            sent_at,
            budget: ReplyBudget::default(),
            last_block: None,
        }
    }

    pub(crate) fn event(
        &mut self,
        event: SseEvent,
        on_chunk: &mut (dyn FnMut(StreamChunk) + Send),
    ) -> Result<Flow, ProviderError> {
        self.first_event.get_or_insert_with(Instant::now);
        let data = match event {
            SseEvent::Data(data) => data,
            SseEvent::Done => return Ok(Flow::Done),
            // Past a cap of the SSE reader: cut, stop reading.
            SseEvent::OverCap => {
                self.budget.cut = true;
                return Ok(Flow::Done);
            }
            SseEvent::Error(text) => {
                let error = serde_json::from_str(&text).unwrap_or(Value::String(text));
                return Err(self.stream_error(&error));
            }
        };
        let event: Value = serde_json::from_str(&data).map_err(|e| ProviderError::BadReply {
            endpoint: self.endpoint.clone(),
            detail: format!("an event is not JSON ({e}): {}", excerpt(&data)),
        })?;
        let index = event["index"].as_u64().unwrap_or(0);
        match event["type"].as_str().unwrap_or_default() {
            "message_start" => {
                let message = &event["message"];
                if let Some(model) = message["model"].as_str() {
                    self.model = model.to_string();
                }
                self.usage.update(&message["usage"]);
            }
            "content_block_start" => {
                if self.blocks.len() >= MAX_CONTENT_BLOCKS && !self.blocks.contains_key(&index) {
                    return Err(ProviderError::BadReply {
                        endpoint: self.endpoint.clone(),
                        detail: format!(
                            "the stream opened more than {MAX_CONTENT_BLOCKS} content blocks"
                        ),
                    });
                }
                self.start_block(index, &event["content_block"], on_chunk)
            }
            "content_block_delta" => self.delta(index, &event["delta"], on_chunk),
            "message_delta" => {
                if let Some(reason) = event["delta"]["stop_reason"].as_str() {
                    self.stop_reason = Some(reason.to_string());
                }
                self.usage.update(&event["usage"]);
            }
            "message_stop" => {
                self.stopped = true;
                return Ok(Flow::Done);
            }
            "error" => return Err(self.stream_error(&event["error"])),
            // `ping`, `content_block_stop`, and events newer than this code.
            _ => {}
        }
        // A cut reply stops the reading: the connection is dropped.
        Ok(if self.budget.cut {
            Flow::Done
        } else {
            Flow::More
        })
    }

    fn start_block(
        &mut self,
        index: u64,
        block: &Value,
        on_chunk: &mut (dyn FnMut(StreamChunk) + Send),
    ) {
        let str_len = |key: &str| block[key].as_str().map_or(0, str::len);
        if !self.budget.take(str_len("id") + str_len("name")) {
            return;
        }
        self.last_block = Some(index);
        let kind = match block["type"].as_str().unwrap_or_default() {
            "text" => Block::Text,
            "tool_use" => Block::ToolUse {
                id: block["id"].as_str().unwrap_or_default().to_string(),
                name: block["name"].as_str().unwrap_or_default().to_string(),
                json: String::new(),
            },
            _ => Block::Other,
        };
        let is_text = matches!(kind, Block::Text);
        self.blocks.insert(index, kind);
        if is_text {
            self.block_is_fresh = true;
            if let Some(text) = block["text"].as_str() {
                self.text(text, on_chunk);
            }
        } else if block["type"] == "thinking"
            && let Some(thinking) = block["thinking"].as_str()
        {
            self.thinking(thinking, on_chunk);
        }
    }

    fn delta(&mut self, index: u64, delta: &Value, on_chunk: &mut (dyn FnMut(StreamChunk) + Send)) {
        match delta["type"].as_str().unwrap_or_default() {
            "text_delta" => self.text(delta["text"].as_str().unwrap_or_default(), on_chunk),
            "thinking_delta" => {
                self.thinking(delta["thinking"].as_str().unwrap_or_default(), on_chunk)
            }
            "input_json_delta" => {
                let piece = delta["partial_json"].as_str().unwrap_or_default();
                if let Some(Block::ToolUse { json, .. }) = self.blocks.get_mut(&index)
                    && self.budget.take(piece.len())
                {
                    json.push_str(piece);
                    self.last_block = Some(index);
                }
            }
            // `signature_delta`, `citations_delta`: nothing to keep.
            _ => {}
        }
    }

    fn text(&mut self, text: &str, on_chunk: &mut (dyn FnMut(StreamChunk) + Send)) {
        if text.is_empty() || !self.budget.take(text.len() + 2) {
            return;
        }
        if self.block_is_fresh && !self.content.is_empty() {
            self.content.push_str("\n\n");
            on_chunk(StreamChunk::Text("\n\n".into()));
        }
        self.block_is_fresh = false;
        self.content.push_str(text);
        on_chunk(StreamChunk::Text(text.to_string()));
    }

    fn thinking(&mut self, text: &str, on_chunk: &mut (dyn FnMut(StreamChunk) + Send)) {
        if !text.is_empty() && self.budget.take(text.len()) {
            self.reasoning.push_str(text);
            on_chunk(StreamChunk::Reasoning(text.to_string()));
        }
    }

    /// `{"type": "overloaded_error", "message": ...}` with the status the
    /// same error has as an HTTP answer.
    fn stream_error(&self, error: &Value) -> ProviderError {
        let status = match error["type"].as_str().unwrap_or_default() {
            "invalid_request_error" => 400,
            "authentication_error" => 401,
            "permission_error" => 403,
            "not_found_error" => 404,
            "request_too_large" => 413,
            "rate_limit_error" => 429,
            "overloaded_error" => 529,
            _ => 500,
        };
        http_error(&self.endpoint, status, &error.to_string())
    }

    pub(crate) fn finish(mut self, configured_model: &str) -> Result<ChatResponse, ProviderError> {
        let cut = self.budget.cut.then(|| bounds::cut_notice(&self.endpoint));
        if cut.is_some() {
            // As if the API had stopped at max_tokens.
            self.stop_reason = Some("max_tokens".into());
        } else if !self.stopped {
            return Err(ProviderError::Truncated {
                endpoint: self.endpoint,
                detail: "the connection closed before message_stop".into(),
            });
        }
        let usage = self.usage_figures();
        let tool_calls: Vec<ToolCall> = self
            .blocks
            .into_iter()
            .filter_map(|(index, block)| match block {
                // The block the cut fell in is incomplete: never run a
                // prefix of its input.
                Block::ToolUse { id, name, .. } if cut.is_some() && self.last_block == Some(index) => {
                    Some(ToolCall {
                        id,
                        name,
                        arguments: Value::Null,
                        arguments_error: Some(
                            "the reply was cut at egirl's size cap before this call's input was complete"
                                .into(),
                        ),
                    })
                }
                Block::ToolUse { id, name, json } => Some(tool_call(id, name, &json)),
                _ => None,
            })
            .collect();
        let message = ChatMessage {
            tool_calls: tool_calls.clone(),
            ..ChatMessage::assistant(self.content.clone())
        };
        Ok(ChatResponse {
            content: self.content,
            reasoning: self.reasoning.trim().to_string(),
            tool_calls,
            message,
            finish_reason: self.stop_reason.map(|r| finish_reason(&r)),
            usage,
            model: if self.model.is_empty() {
                configured_model.to_string()
            } else {
                self.model
            },
            confidence: None,
            cut,
        })
    }

    fn usage_figures(&self) -> Usage {
        let u = &self.usage;
        let now = Instant::now();
        let first = self.first_event.unwrap_or(now);
        Usage {
            input_tokens: u.input + u.cache_read + u.cache_write,
            output_tokens: u.output,
            cached_tokens: u.cache_read,
            evaluated_tokens: u.input + u.cache_write,
            cache_write_tokens: u.cache_write,
            // Measured here: until the first event, then to the end.
            prompt_ms: first.duration_since(self.sent_at).as_secs_f64() * 1000.0,
            predicted_ms: now.duration_since(first).as_secs_f64() * 1000.0,
        }
    }
}

/// The API's stop reasons in the OpenAI words the agent already knows.
fn finish_reason(stop_reason: &str) -> String {
    match stop_reason {
        "end_turn" | "stop_sequence" => "stop",
        "max_tokens" => "length",
        "tool_use" => "tool_calls",
        other => other,
    }
    .to_string()
}

/// A call whose input arrived in `input_json_delta` pieces; a call without
/// arguments sends none at all.
fn tool_call(id: String, name: String, json: &str) -> ToolCall {
    if json.trim().is_empty() {
        return ToolCall {
            id,
            name,
            arguments: serde_json::json!({}),
            arguments_error: None,
        };
    }
    match serde_json::from_str::<Value>(json) {
        Ok(arguments) => ToolCall {
            id,
            name,
            arguments,
            arguments_error: None,
        },
        Err(e) => ToolCall {
            id,
            name,
            arguments: Value::Null,
            arguments_error: Some(format!("the arguments are not valid JSON ({e})")),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::providers::bounds::MAX_REPLY_BYTES;
    use serde_json::json;

    fn send(acc: &mut Accumulator, event: Value) -> Result<Flow, ProviderError> {
        acc.event(SseEvent::Data(event.to_string()), &mut |_| {})
    }

    #[test]
    fn too_many_content_blocks_fail_the_reply() {
        let mut acc = Accumulator::new("http://x", Instant::now());
        let start = |index: usize| {
            json!({"type": "content_block_start", "index": index,
                   "content_block": {"type": "tool_use", "id": "t", "name": "exec", "input": {}}})
        };
        for index in 0..MAX_CONTENT_BLOCKS {
            send(&mut acc, start(index)).unwrap();
        }
        let err = send(&mut acc, start(4_000_000_000)).unwrap_err();
        assert!(err.to_string().contains("content blocks"), "{err}");
    }

    #[test]
    fn a_reply_past_the_cap_is_cut_and_its_open_tool_input_not_run() {
        let mut acc = Accumulator::new("http://x", Instant::now());
        let text = "t".repeat(64 * 1024);
        send(&mut acc, json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}})).unwrap();
        send(&mut acc, json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": text}})).unwrap();
        send(
            &mut acc,
            json!({"type": "content_block_start", "index": 1,
            "content_block": {"type": "tool_use", "id": "t1", "name": "exec", "input": {}}}),
        )
        .unwrap();
        let piece = json!({"type": "content_block_delta", "index": 1,
            "delta": {"type": "input_json_delta", "partial_json": "x".repeat(64 * 1024)}});
        let mut flow = Flow::More;
        for _ in 0..(MAX_REPLY_BYTES / (64 * 1024)) {
            flow = send(&mut acc, piece.clone()).unwrap();
        }
        assert_eq!(flow, Flow::Done, "a cut reply stops the reading");
        let reply = acc.finish("claude").unwrap();
        assert_eq!(reply.finish_reason.as_deref(), Some("length"));
        assert!(reply.cut.unwrap().contains("reply cap"));
        assert_eq!(reply.content.len(), 64 * 1024);
        assert_eq!(reply.tool_calls.len(), 1);
        assert!(reply.tool_calls[0].arguments_error.is_some());
    }

    #[test]
    fn over_cap_from_the_reader_cuts_the_reply() {
        let mut acc = Accumulator::new("http://x", Instant::now());
        let flow = acc.event(SseEvent::OverCap, &mut |_| {}).unwrap();
        assert_eq!(flow, Flow::Done);
        assert!(acc.finish("claude").unwrap().cut.is_some());
    }
}
