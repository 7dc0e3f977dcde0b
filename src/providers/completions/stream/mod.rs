//! Turns the frames of a streamed chat completion into chunks for the
//! screen and, at the end, one `ChatResponse`. llama-server's extras
//! (`timings`, `<tool_call>` text) are handled here too; OpenAI and Azure
//! simply never send them.
//!
//! Bounded (see `providers::bounds`): a tool-call index past
//! `MAX_TOOL_CALLS` fails the reply; past `MAX_REPLY_BYTES` of text,
//! reasoning and calls the reply is cut (`cut`, finish_reason "length")
//! and the caller stops reading.

use serde::Deserialize;
use serde_json::Value;

use crate::chat::{ChatMessage, ToolCall, Usage};
use crate::config::ToolFormat;
use crate::providers::bounds::{self, MAX_TOOL_CALLS, ReplyBudget};
use crate::providers::http::{excerpt, http_error};
use crate::providers::tool_call_text::{self, StreamSplitter};
use crate::providers::{ChatResponse, ProviderError, StreamChunk};

/// One `data:` frame. Every field is optional: servers differ.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Frame {
    choices: Option<Vec<Choice>>,
    model: Option<String>,
    usage: Option<WireUsage>,
    timings: Option<Timings>,
    error: Option<Value>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Choice {
    delta: Option<Delta>,
    finish_reason: Option<String>,
    logprobs: Option<ChoiceLogprobs>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct ChoiceLogprobs {
    content: Option<Vec<TokenLogprob>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct TokenLogprob {
    logprob: Option<f64>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Delta {
    content: Option<String>,
    reasoning_content: Option<String>,
    tool_calls: Option<Vec<CallDelta>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct CallDelta {
    index: Option<usize>,
    id: Option<String>,
    function: Option<FunctionDelta>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct FunctionDelta {
    name: Option<String>,
    arguments: Option<String>,
}

/// Numbers as f64: some servers write counts as `12.0`.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct WireUsage {
    prompt_tokens: Option<f64>,
    completion_tokens: Option<f64>,
    prompt_tokens_details: Option<PromptDetails>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct PromptDetails {
    cached_tokens: Option<f64>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Timings {
    prompt_n: Option<f64>,
    cache_n: Option<f64>,
    predicted_n: Option<f64>,
    prompt_ms: Option<f64>,
    predicted_ms: Option<f64>,
}

/// A native tool call being assembled from fragments.
#[derive(Debug, Default)]
struct PartialCall {
    id: Option<String>,
    name: String,
    arguments: String,
}

pub struct Accumulator {
    endpoint: String,
    format: ToolFormat,
    splitter: StreamSplitter,
    content: String,
    reasoning: String,
    calls: Vec<PartialCall>,
    finish_reason: Option<String>,
    model: String,
    usage: Option<WireUsage>,
    timings: Option<Timings>,
    /// Sum and count of the sampled tokens' logprobs, when sent.
    logprob_sum: f64,
    logprob_count: usize,
    pub done: bool,
    /// Bytes kept of this reply; `budget.cut` once it is full.
    budget: ReplyBudget,
    /// The call the last fragment went to: the one a cut leaves incomplete.
    last_call: Option<usize>,
}

impl Accumulator {
    pub fn new(endpoint: &str, format: ToolFormat) -> Self {
        Self {
            endpoint: endpoint.to_string(),
            format,
            splitter: StreamSplitter::new(format != ToolFormat::Native),
            content: String::new(),
            reasoning: String::new(),
            calls: Vec::new(),
            finish_reason: None,
            model: String::new(),
            usage: None,
            timings: None,
            logprob_sum: 0.0,
            logprob_count: 0,
            done: false,
            budget: ReplyBudget::default(),
            last_call: None,
        }
    }

    /// Whether the reply was cut at a cap: the caller stops reading.
    pub fn is_cut(&self) -> bool {
        self.budget.cut
    }

    /// The stream went past a cap of the SSE reader (`SseEvent::OverCap`).
    pub fn cut(&mut self) {
        self.budget.cut = true;
    }

    /// Takes one `data:` payload.
    pub fn frame(
        &mut self,
        data: &str,
        on_chunk: &mut (dyn FnMut(StreamChunk) + Send),
    ) -> Result<(), ProviderError> {
        let frame: Frame = serde_json::from_str(data).map_err(|e| ProviderError::BadReply {
            endpoint: self.endpoint.clone(),
            detail: format!("a stream frame is not JSON ({e}): {}", excerpt(data)),
        })?;
        if let Some(error) = frame.error {
            return Err(stream_error(&self.endpoint, &error));
        }
        if let Some(model) = frame.model.filter(|m| !m.is_empty()) {
            self.model = model;
        }
        if frame.usage.is_some() {
            self.usage = frame.usage;
        }
        if frame.timings.is_some() {
            self.timings = frame.timings;
        }
        // One choice is asked for; a server that sends more is ignored past the first.
        let Some(choice) = frame.choices.and_then(|c| c.into_iter().next()) else {
            return Ok(());
        };
        for token in choice.logprobs.and_then(|l| l.content).unwrap_or_default() {
            if let Some(lp) = token.logprob.filter(|lp| lp.is_finite()) {
                self.logprob_sum += lp;
                self.logprob_count += 1;
            }
        }
        if let Some(reason) = choice.finish_reason {
            self.finish_reason = Some(reason);
        }
        let Some(delta) = choice.delta else {
            return Ok(());
        };
        if let Some(reasoning) = delta.reasoning_content.filter(|r| !r.is_empty())
            && self.budget.take(reasoning.len())
        {
            self.reasoning.push_str(&reasoning);
            on_chunk(StreamChunk::Reasoning(reasoning));
        }
        if let Some(content) = delta.content.filter(|c| !c.is_empty())
            && self.budget.take(content.len())
        {
            self.content.push_str(&content);
            for chunk in self.splitter.push(&content) {
                on_chunk(chunk);
            }
        }
        for fragment in delta.tool_calls.unwrap_or_default() {
            self.merge_call(fragment)?;
        }
        Ok(())
    }

    /// Fragments of one call share an `index`; id and name come first, the
    /// arguments string arrives in pieces. The index is checked before
    /// anything is stored under it.
    fn merge_call(&mut self, fragment: CallDelta) -> Result<(), ProviderError> {
        let index = fragment.index.unwrap_or(match fragment.id {
            Some(_) => self.calls.len(),
            None => self.calls.len().saturating_sub(1),
        });
        if index >= MAX_TOOL_CALLS {
            return Err(ProviderError::BadReply {
                endpoint: self.endpoint.clone(),
                detail: format!(
                    "the stream named tool call {index}; a reply may hold at most {MAX_TOOL_CALLS}"
                ),
            });
        }
        let size = |s: &Option<String>| s.as_ref().map_or(0, String::len);
        let function = fragment.function.as_ref();
        let bytes = size(&fragment.id) + function.map_or(0, |f| size(&f.name) + size(&f.arguments));
        if !self.budget.take(bytes) {
            return Ok(());
        }
        if self.calls.len() <= index {
            self.calls.resize_with(index + 1, PartialCall::default);
        }
        self.last_call = Some(index);
        let call = &mut self.calls[index];
        if let Some(id) = fragment.id.filter(|id| !id.is_empty()) {
            call.id = Some(id);
        }
        if let Some(function) = fragment.function {
            if let Some(name) = function.name {
                call.name.push_str(&name);
            }
            if let Some(arguments) = function.arguments {
                call.arguments.push_str(&arguments);
            }
        }
        Ok(())
    }

    /// The stream ended (with `[DONE]` or not).
    pub fn finish(mut self) -> Result<ChatResponse, ProviderError> {
        let cut = self.budget.cut.then(|| bounds::cut_notice(&self.endpoint));
        if cut.is_some() {
            // As if the server had stopped at max_tokens.
            self.finish_reason = Some("length".into());
        } else if !self.done && self.finish_reason.is_none() {
            return Err(ProviderError::Truncated {
                endpoint: self.endpoint,
                detail: "no finish_reason and no [DONE] before the connection closed".into(),
            });
        }
        let usage = usage(self.timings.as_ref(), self.usage.as_ref());
        let unfinished = self.last_call.filter(|_| cut.is_some());
        let native_calls: Vec<ToolCall> = self
            .calls
            .into_iter()
            .enumerate()
            .map(|(index, call)| match Some(index) == unfinished {
                // Its arguments stop where the cut fell: never run a
                // "repaired" prefix of them.
                true => cut_call(index, call),
                false => native_call((index, call)),
            })
            .collect();
        let detect = self.format != ToolFormat::Native;
        // The final split is redone on the whole content: it also catches a
        // reply that opened inside `<think>` (only `</think>` in the output).
        let parsed = tool_call_text::parse_reply(&self.content, detect);
        let reasoning = join_reasoning(self.reasoning.trim(), &parsed.reasoning);
        let (tool_calls, history) = if native_calls.is_empty() && !parsed.calls.is_empty() {
            let mut calls = parsed.calls;
            // A `<tool_call>` block the cut left open is not run either.
            let open = self.content.rfind("<tool_call>") > self.content.rfind("</tool_call>");
            if cut.is_some()
                && open
                && let Some(last) = calls.pop()
            {
                let index = calls.len();
                calls.push(cut_call(
                    index,
                    PartialCall {
                        id: Some(last.id),
                        name: last.name,
                        arguments: String::new(),
                    },
                ));
            }
            (calls, parsed.history)
        } else {
            (native_calls, parsed.text.clone())
        };
        let message = ChatMessage {
            tool_calls: tool_calls.clone(),
            ..ChatMessage::assistant(history)
        };
        Ok(ChatResponse {
            content: parsed.text,
            reasoning,
            tool_calls,
            message,
            finish_reason: self.finish_reason,
            usage,
            model: self.model,
            confidence: (self.logprob_count > 0).then(|| {
                (self.logprob_sum / self.logprob_count as f64)
                    .exp()
                    .clamp(0.0, 1.0)
            }),
            cut,
        })
    }
}

fn cut_call(index: usize, call: PartialCall) -> ToolCall {
    ToolCall {
        id: call.id.unwrap_or_else(|| tool_call_text::call_id(index)),
        name: if call.name.is_empty() {
            "unknown".into()
        } else {
            call.name
        },
        arguments: Value::Null,
        arguments_error: Some(
            "the reply was cut at egirl's size cap before this call's arguments were complete"
                .into(),
        ),
    }
}

fn native_call((index, call): (usize, PartialCall)) -> ToolCall {
    let id = call.id.unwrap_or_else(|| tool_call_text::call_id(index));
    if call.name.is_empty() {
        return ToolCall {
            id,
            name: "unknown".into(),
            arguments: Value::Null,
            arguments_error: Some("the server sent a tool call without a name".into()),
        };
    }
    match tool_call_text::parse_arguments(&call.arguments) {
        Ok(arguments) => ToolCall {
            id,
            name: call.name,
            arguments,
            arguments_error: None,
        },
        Err(reason) => ToolCall {
            id,
            name: call.name,
            arguments: Value::Null,
            arguments_error: Some(reason),
        },
    }
}

fn join_reasoning(streamed: &str, parsed: &str) -> String {
    match (streamed.is_empty(), parsed.is_empty()) {
        (_, true) => streamed.to_string(),
        (true, false) => parsed.to_string(),
        (false, false) => format!("{streamed}\n{parsed}"),
    }
}

/// llama-server's `timings` when present (exact split of cached and
/// evaluated prompt tokens), else OpenAI `usage`.
fn usage(timings: Option<&Timings>, usage: Option<&WireUsage>) -> Usage {
    let n = |v: Option<f64>| v.unwrap_or(0.0).max(0.0) as u64;
    let mut out = Usage::default();
    if let Some(u) = usage {
        out.input_tokens = n(u.prompt_tokens);
        out.output_tokens = n(u.completion_tokens);
        out.cached_tokens = n(u
            .prompt_tokens_details
            .as_ref()
            .and_then(|d| d.cached_tokens));
        out.evaluated_tokens = out.input_tokens.saturating_sub(out.cached_tokens);
    }
    if let Some(t) = timings {
        out.evaluated_tokens = n(t.prompt_n);
        out.cached_tokens = n(t.cache_n);
        out.input_tokens = out.evaluated_tokens + out.cached_tokens;
        if t.predicted_n.is_some() {
            out.output_tokens = n(t.predicted_n);
        }
        out.prompt_ms = t.prompt_ms.unwrap_or(0.0);
        out.predicted_ms = t.predicted_ms.unwrap_or(0.0);
    }
    out
}

/// An error the server reported inside the stream (`{"error": {...}}`).
pub fn stream_error(endpoint: &str, error: &Value) -> ProviderError {
    let status = error.get("code").and_then(Value::as_u64).unwrap_or(500) as u16;
    http_error(endpoint, status, &error.to_string())
}

#[cfg(test)]
mod tests;
