//! The accumulator's bounds: tool-call index and count, the reply byte cap.

use super::*;
use crate::providers::bounds::MAX_REPLY_BYTES;

fn feed(acc: &mut Accumulator, frame: Value) -> Result<(), ProviderError> {
    acc.frame(&frame.to_string(), &mut |_| {})
}

fn call_frame(index: u64, id: Option<&str>, arguments: &str) -> Value {
    serde_json::json!({"choices": [{"delta": {"tool_calls": [
        {"index": index, "id": id, "function": {"name": "exec", "arguments": arguments}}
    ]}}]})
}

#[test]
fn a_huge_tool_call_index_fails_the_reply_without_allocating() {
    let mut acc = Accumulator::new("http://x", ToolFormat::Native);
    let err = feed(&mut acc, call_frame(4_000_000_000, Some("c"), "{}")).unwrap_err();
    assert!(err.to_string().contains("tool call 4000000000"), "{err}");
    assert!(acc.calls.capacity() < MAX_TOOL_CALLS);
    let mut acc = Accumulator::new("http://x", ToolFormat::Native);
    feed(
        &mut acc,
        call_frame(MAX_TOOL_CALLS as u64 - 1, Some("c"), "{}"),
    )
    .unwrap();
    let err = feed(&mut acc, call_frame(MAX_TOOL_CALLS as u64, Some("d"), "{}"));
    assert!(err.is_err());
}

#[test]
fn calls_without_index_are_counted_too() {
    let mut acc = Accumulator::new("http://x", ToolFormat::Native);
    let frame = serde_json::json!({"choices": [{"delta": {"tool_calls": [
        {"id": "c", "function": {"name": "exec", "arguments": "{}"}}
    ]}}]});
    for _ in 0..MAX_TOOL_CALLS {
        feed(&mut acc, frame.clone()).unwrap();
    }
    assert!(feed(&mut acc, frame).is_err());
}

#[test]
fn a_reply_past_the_byte_cap_is_cut_and_keeps_what_arrived() {
    let mut acc = Accumulator::new("http://x", ToolFormat::Native);
    let piece = "x".repeat(64 * 1024);
    let frame = serde_json::json!({"choices": [{"delta": {"content": piece}}]});
    let mut shown = 0;
    while !acc.is_cut() {
        acc.frame(&frame.to_string(), &mut |chunk| {
            if let StreamChunk::Text(t) = chunk {
                shown += t.len();
            }
        })
        .unwrap();
    }
    assert_eq!(acc.content.len(), MAX_REPLY_BYTES);
    assert_eq!(shown, MAX_REPLY_BYTES);
    let reply = acc.finish().unwrap();
    assert_eq!(reply.finish_reason.as_deref(), Some("length"));
    assert_eq!(reply.content.len(), MAX_REPLY_BYTES);
    assert!(reply.cut.unwrap().contains("reply cap"));
}

#[test]
fn the_call_a_cut_falls_in_is_not_run() {
    let mut acc = Accumulator::new("http://x", ToolFormat::Native);
    feed(&mut acc, call_frame(0, Some("a"), r#"{"command": "ls"}"#)).unwrap();
    feed(
        &mut acc,
        call_frame(1, Some("b"), r#"{"command": "rm -rf /tm"#),
    )
    .unwrap();
    let big = "p".repeat(MAX_REPLY_BYTES);
    feed(&mut acc, call_frame(1, None, &big)).unwrap();
    assert!(acc.is_cut());
    let reply = acc.finish().unwrap();
    assert_eq!(reply.tool_calls.len(), 2);
    assert!(reply.tool_calls[0].arguments_error.is_none());
    assert_eq!(reply.tool_calls[0].arguments["command"], "ls");
    let cut = &reply.tool_calls[1];
    assert_eq!(cut.arguments, Value::Null);
    assert!(cut.arguments_error.as_deref().unwrap().contains("cut"));
}

#[test]
fn an_open_qwen3_call_at_the_cut_is_not_run() {
    let mut acc = Accumulator::new("http://x", ToolFormat::Qwen3);
    let text = "<tool_call>\n{\"name\": \"exec\", \"arguments\": {\"command\": \"rm -rf /tm";
    let frame = serde_json::json!({"choices": [{"delta": {"content": text}}]});
    feed(&mut acc, frame).unwrap();
    acc.cut();
    let reply = acc.finish().unwrap();
    assert_eq!(reply.tool_calls.len(), 1, "{reply:?}");
    assert!(reply.tool_calls[0].arguments_error.is_some());
}
