//! Tool-call parser throughput: a 64 KiB reply with 20
//! `<tool_call>` blocks between prose, and one `<think>` block, parsed whole
//! (`tool_call_text::parse_tool_calls`) and streamed through `tool_call_text::StreamSplitter`
//! in 16-byte deltas, as the provider sees it arrive.
//!
//! `cargo bench --bench tool_parser` (figures in docs/benchmarks.md).

use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use egirl::providers::tool_call_text::{StreamSplitter, parse_tool_calls};
use serde_json::json;

const REPLY_BYTES: usize = 64 * 1024;
const CALLS: usize = 20;
const DELTA_BYTES: usize = 16;

const PROSE: &str = "Let me look at this step by step. The config loader reads the file, \
    then checks every key against the schema; if a < b the window is fitted first, \
    and the <div> in the template is only markup, not a tag we care about. \
    Caf\u{e9} au lait \u{2014} and a few more words so the paragraph reads like a real answer. \
    Next I will open the file the user named and compare it with what the tests expect. ";

/// One call's JSON, varied the way real replies are: short reads, globs and
/// commands, and file writes with a kilobyte of escaped content (quotes,
/// newlines, and a `<tool_call>` inside a JSON string, which is data).
fn call_json(i: usize) -> String {
    let value = match i % 5 {
        0 => {
            json!({ "name": "read_file", "arguments": { "path": format!("src/module_{i}.rs"), "start_line": 1, "end_line": 200 } })
        }
        1 => {
            let mut content = String::new();
            for line in 0..24 {
                content.push_str(&format!(
                    "fn item_{line}() -> &'static str {{ \"value {line} <tool_call> is data\" }}\n"
                ));
            }
            json!({ "name": "write_file", "arguments": { "path": format!("notes/file_{i:02}.md"), "content": content } })
        }
        2 => {
            json!({ "name": "exec", "arguments": { "command": format!("cargo test --lib module_{i} -- --nocapture 2>&1 | tail -n 40") } })
        }
        3 => {
            json!({ "name": "edit_file", "arguments": { "path": format!("src/lib_{i}.rs"), "old": "let x = 1;\n", "new": "let x = compute(\"input\", 2);\n" } })
        }
        _ => json!({ "name": "glob", "arguments": { "pattern": format!("src/**/part_{i}*.rs") } }),
    };
    serde_json::to_string_pretty(&value).expect("json")
}

/// The reply: a `<think>` block, then prose and 20 calls, padded with prose
/// to exactly 64 KiB.
fn reply() -> String {
    let mut text = String::from("<think>\n");
    for _ in 0..4 {
        text.push_str(
            "The user wants the module fixed; I should read it first, then write the notes. ",
        );
    }
    text.push_str("\n</think>\n\n");
    let calls: Vec<String> = (0..CALLS).map(call_json).collect();
    let calls_len: usize = calls.iter().map(|c| c.len() + 26).sum();
    let prose_each = (REPLY_BYTES - text.len() - calls_len) / (CALLS + 1);
    let paragraph = |len: usize| -> String {
        let mut p = String::new();
        while p.len() < len {
            p.push_str(PROSE);
        }
        let mut cut = len;
        while !p.is_char_boundary(cut) {
            cut -= 1;
        }
        p.truncate(cut);
        p
    };
    for call in &calls {
        text.push_str(&paragraph(prose_each.saturating_sub(2)));
        text.push_str("\n\n<tool_call>\n");
        text.push_str(call);
        text.push_str("\n</tool_call>\n\n");
    }
    let rest = REPLY_BYTES.saturating_sub(text.len());
    text.push_str(&paragraph(rest));
    while text.len() < REPLY_BYTES {
        text.push('.');
    }
    text
}

/// ~16-byte deltas, cut on char boundaries.
fn deltas(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    while start < text.len() {
        let mut end = (start + DELTA_BYTES).min(text.len());
        while !text.is_char_boundary(end) {
            end += 1;
        }
        out.push(&text[start..end]);
        start = end;
    }
    out
}

fn check(text: &str, pieces: &[&str]) {
    assert_eq!(text.len(), REPLY_BYTES);
    let parsed = parse_tool_calls(text);
    assert_eq!(parsed.calls.len(), CALLS, "calls found");
    for call in &parsed.calls {
        assert!(call.arguments_error.is_none(), "{call:?}");
    }
    assert!(!parsed.reasoning.is_empty());
    let mut splitter = StreamSplitter::new(true);
    for piece in pieces {
        splitter.push(piece);
    }
    let blocks = splitter.finish();
    assert_eq!(blocks.len(), CALLS, "streamed blocks");
    assert!(blocks.iter().all(|b| b.closed));
}

fn parser(c: &mut Criterion) {
    let text = reply();
    let pieces = deltas(&text);
    check(&text, &pieces);
    let mut group = c.benchmark_group("tool_parser_64KiB_20_calls");
    group.throughput(Throughput::Bytes(text.len() as u64));
    group.bench_function("parse_tool_calls", |b| {
        b.iter(|| parse_tool_calls(black_box(&text)))
    });
    group.bench_function("stream_splitter_16B_deltas", |b| {
        b.iter(|| {
            let mut splitter = StreamSplitter::new(true);
            for piece in &pieces {
                black_box(splitter.push(black_box(piece)));
            }
            splitter.finish()
        })
    });
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .sample_size(50)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(5));
    targets = parser
}
criterion_main!(benches);
