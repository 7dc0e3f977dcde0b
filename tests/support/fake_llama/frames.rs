//! The wire form of a scripted reply: llama-server's SSE frames (with
//! timings and usage), or one JSON answer when `stream` is false.

use std::convert::Infallible;
use std::pin::Pin;
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use futures_util::{Stream, StreamExt, stream};
use serde_json::{Value, json};

use super::count_tokens;
use super::reply::{Piece, Reply, StreamEnd};

/// Token counts of one chat request, the way llama-server reports them.
pub(super) struct PromptCounts {
    pub(super) prompt_n: u64,
    pub(super) cache_n: u64,
}

fn finish_reason(reply: &Reply, pieces: &[Piece]) -> String {
    let has_calls = pieces.iter().any(|p| matches!(p, Piece::Call { .. }));
    reply
        .finish_reason
        .clone()
        .unwrap_or_else(|| if has_calls { "tool_calls" } else { "stop" }.to_string())
}

fn timings(counts: &PromptCounts, predicted_n: u64) -> Value {
    json!({
        "cache_n": counts.cache_n,
        "prompt_n": counts.prompt_n,
        "prompt_ms": counts.prompt_n as f64 * 0.5,
        "prompt_per_token_ms": 0.5,
        "prompt_per_second": 2000.0,
        "predicted_n": predicted_n,
        "predicted_ms": predicted_n as f64 * 10.0,
        "predicted_per_token_ms": 10.0,
        "predicted_per_second": 100.0,
    })
}

fn usage(counts: &PromptCounts, predicted_n: u64) -> Value {
    let prompt_tokens = counts.prompt_n + counts.cache_n;
    json!({
        "completion_tokens": predicted_n,
        "prompt_tokens": prompt_tokens,
        "total_tokens": prompt_tokens + predicted_n,
        "prompt_tokens_details": { "cached_tokens": counts.cache_n },
    })
}

fn chunk_frame(model: &str, choices: Value) -> Value {
    json!({
        "choices": choices,
        "created": 1_700_000_000,
        "id": "chatcmpl-fake",
        "model": model,
        "system_fingerprint": "fake",
        "object": "chat.completion.chunk",
    })
}

fn delta_frame(model: &str, delta: Value) -> Value {
    chunk_frame(
        model,
        json!([{ "index": 0, "delta": delta, "finish_reason": null }]),
    )
}

pub(super) fn stream_frames(
    reply: &Reply,
    pieces: &[Piece],
    model: &str,
    counts: &PromptCounts,
    include_usage: bool,
) -> Vec<Bytes> {
    let mut frames = vec![delta_frame(
        model,
        json!({ "role": "assistant", "content": null }),
    )];
    for piece in pieces {
        match piece {
            Piece::Content(text) => frames.push(delta_frame(model, json!({ "content": text }))),
            Piece::Reasoning(text) => {
                frames.push(delta_frame(model, json!({ "reasoning_content": text })))
            }
            Piece::Call {
                index,
                id,
                name,
                fragments,
            } => {
                frames.push(delta_frame(
                    model,
                    json!({ "tool_calls": [{ "index": index, "id": id, "type": "function",
                        "function": { "name": name, "arguments": "" } }] }),
                ));
                for fragment in fragments {
                    frames.push(delta_frame(
                        model,
                        json!({ "tool_calls": [{ "index": index, "function": { "arguments": fragment } }] }),
                    ));
                }
            }
        }
    }
    let mut bytes: Vec<Bytes> = frames.iter().map(sse_data).collect();
    if reply.end != StreamEnd::Done {
        return bytes;
    }
    let predicted_n = count_tokens(&reply.generated_text(), false);
    let mut last = chunk_frame(
        model,
        json!([{ "index": 0, "delta": {}, "finish_reason": finish_reason(reply, pieces) }]),
    );
    last["timings"] = timings(counts, predicted_n);
    bytes.push(sse_data(&last));
    if include_usage {
        let mut usage_frame = chunk_frame(model, json!([]));
        usage_frame["usage"] = usage(counts, predicted_n);
        usage_frame["timings"] = timings(counts, predicted_n);
        bytes.push(sse_data(&usage_frame));
    }
    bytes.push(Bytes::from_static(b"data: [DONE]\n\n"));
    bytes
}

fn sse_data(frame: &Value) -> Bytes {
    Bytes::from(format!("data: {frame}\n\n"))
}

/// The same content frame until `up_to` bytes were sent.
pub(super) fn endless_response(model: &str, piece: &str, up_to: usize) -> Response {
    let frame = sse_data(&delta_frame(model, json!({ "content": piece })));
    let count = up_to / frame.len().max(1);
    sse_response(None, StreamEnd::Truncated, vec![frame; count])
}

type FrameStream = Pin<Box<dyn Stream<Item = Result<Bytes, Infallible>> + Send>>;

pub(super) fn sse_response(
    delay: Option<Duration>,
    end: StreamEnd,
    frames: Vec<Bytes>,
) -> Response {
    let mut body: FrameStream = match delay {
        Some(delay) => Box::pin(stream::iter(frames).then(move |frame| async move {
            tokio::time::sleep(delay).await;
            Ok(frame)
        })),
        None => Box::pin(stream::iter(frames.into_iter().map(Ok))),
    };
    if end == StreamEnd::Stall {
        body = Box::pin(body.chain(stream::pending()));
    }
    Response::builder()
        .header(header::CONTENT_TYPE, "text/event-stream")
        .header(header::CACHE_CONTROL, "no-cache")
        .body(Body::from_stream(body))
        .unwrap_or_else(|_| StatusCode::INTERNAL_SERVER_ERROR.into_response())
}

/// The non-streamed answer (`stream: false`).
pub(super) fn whole_reply(
    reply: &Reply,
    pieces: &[Piece],
    model: &str,
    counts: &PromptCounts,
) -> Value {
    let mut content = String::new();
    let mut reasoning = String::new();
    let mut calls = Vec::new();
    for piece in pieces {
        match piece {
            Piece::Content(text) => content.push_str(text),
            Piece::Reasoning(text) => reasoning.push_str(text),
            Piece::Call {
                id,
                name,
                fragments,
                ..
            } => calls.push(json!({
                "id": id, "type": "function",
                "function": { "name": name, "arguments": fragments.concat() },
            })),
        }
    }
    let mut message = json!({ "role": "assistant", "content": content });
    if !reasoning.is_empty() {
        message["reasoning_content"] = json!(reasoning);
    }
    if !calls.is_empty() {
        message["tool_calls"] = Value::Array(calls);
    }
    let predicted_n = count_tokens(&reply.generated_text(), false);
    json!({
        "choices": [{ "index": 0, "message": message, "finish_reason": finish_reason(reply, pieces) }],
        "created": 1_700_000_000,
        "id": "chatcmpl-fake",
        "model": model,
        "object": "chat.completion",
        "usage": usage(counts, predicted_n),
        "timings": timings(counts, predicted_n),
    })
}
