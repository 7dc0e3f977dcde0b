use egirl::protocol::{ContextTrimmed, EventKind};

use super::{final_text, start};
use crate::support::fake_llama::{self, FakeLlama, Reply};

/// Prompt tokens of a recorded request, counted the way the fake server does.
fn prompt_tokens(request: &serde_json::Value) -> u64 {
    fake_llama::count_tokens(&fake_llama::render_prompt(request), true)
}

#[tokio::test]
async fn fixed_prompt_fits_a_4096_token_window() {
    let fake = FakeLlama::start().await;
    fake.set_n_ctx(4096);
    let mut h = start(&fake, |_| {});
    h.send("w", "hi");
    assert_eq!(final_text(&h.turn("w").await).as_deref(), Some("ok"));
    let request = &fake.requests()[0];
    let mut fixed = request.clone();
    // Only the system prompt and the tool list: what egirl sends before the first user word.
    if let Some(messages) = fixed["messages"].as_array_mut() {
        messages.truncate(1);
    }
    let tokens = prompt_tokens(&fixed);
    eprintln!("fixed prompt: {tokens} tokens (fake tokenizer: 4 chars a token)");
    assert!(tokens < 1500, "{tokens}");
    assert!(request["max_tokens"].as_u64().unwrap_or(0) + prompt_tokens(request) <= 4096);
}

#[tokio::test]
async fn long_history_is_trimmed_to_the_window_by_whole_turns() {
    let fake = FakeLlama::start().await;
    fake.set_n_ctx(4096);
    // The window's own drop, as with compaction off (and its fallback).
    let mut h = start(&fake, |c| {
        c.local.max_tokens = 256;
        c.agent.compact_at = 0.0;
    });
    let filler = "lorem ipsum dolor sit amet ".repeat(30); // ~200 tokens a message
    let mut trims = 0;
    for i in 0..14 {
        fake.push_reply(Reply::text(&format!("answer {i}: {filler}")));
        h.send("w", &format!("question {i}: {filler}"));
        let events = h.turn("w").await;
        trims += events.iter().filter(|e| matches!(e, EventKind::ContextTrimmed(ContextTrimmed { dropped_messages, .. }) if *dropped_messages > 0)).count();
    }
    fake.push_reply(Reply::tool_calls(&[("glob", r#"{"pattern": "*.md"}"#)]));
    fake.push_reply(Reply::text("final"));
    h.send("w", "last question");
    let events = h.turn("w").await;
    assert_eq!(final_text(&events).as_deref(), Some("final"));
    // The last turn may trim too (it did once the fixed prompt shrank).
    trims += events.iter().filter(|e| matches!(e, EventKind::ContextTrimmed(ContextTrimmed { dropped_messages, .. }) if *dropped_messages > 0)).count();
    assert!(trims > 0, "the window never trimmed");
    // After a trim the window refills below the budget, so the cut point
    // (and the server's cached prefix) holds for several requests in a row.
    let requests = fake.requests();
    let firsts: Vec<String> = requests
        .iter()
        .map(|r| r["messages"][1]["content"].to_string())
        .collect();
    let moves = firsts.windows(2).filter(|w| w[0] != w[1]).count();
    assert!(
        moves <= trims && moves * 3 < requests.len(),
        "the window moved {moves} times in {} requests",
        requests.len()
    );
    for request in requests {
        let tokens = prompt_tokens(&request);
        assert!(
            tokens + request["max_tokens"].as_u64().unwrap_or(0) <= 4096,
            "{tokens}"
        );
        let messages = request["messages"].as_array().cloned().unwrap_or_default();
        // Whole turns: after the system prompt comes a user message.
        assert_eq!(messages[1]["role"], "user");
        // A tool result always follows its call.
        for (i, m) in messages.iter().enumerate() {
            if m["role"] == "tool" {
                assert!(messages[..i].iter().any(|p| p["tool_calls"].is_array()));
            }
        }
    }
}

#[tokio::test]
async fn context_overflow_from_the_server_trims_and_retries_once() {
    let fake = FakeLlama::start().await;
    let mut h = start(&fake, |_| {});
    for i in 0..4 {
        h.send("o", &format!("message {i}"));
        h.turn("o").await;
    }
    fake.push_replies([Reply::context_overflow(), Reply::text("fits now")]);
    h.send("o", "one more");
    let events = h.turn("o").await;
    assert_eq!(
        final_text(&events).as_deref(),
        Some("fits now"),
        "{events:?}"
    );
    let requests = fake.requests();
    let n = requests.len();
    let before = requests[n - 2]["messages"].as_array().map_or(0, Vec::len);
    let after = requests[n - 1]["messages"].as_array().map_or(0, Vec::len);
    assert!(after < before, "{before} -> {after}");

    // A second overflow in a row is an error, not a loop.
    fake.push_replies([Reply::context_overflow(), Reply::context_overflow()]);
    h.send("o", "again");
    let events = h.turn("o").await;
    let error = super::error_text(&events).expect("an error");
    assert!(error.contains("context"), "{error}");
}

#[tokio::test]
async fn a_server_without_a_tokenizer_is_estimated_and_not_asked_again() {
    let fake = FakeLlama::start().await;
    fake.set_n_ctx(4096);
    fake.set_token_endpoints(false);
    let mut h = start(&fake, |c| c.local.max_tokens = 256);
    let filler = "lorem ipsum dolor sit amet ".repeat(30);
    for i in 0..10 {
        fake.push_reply(Reply::text(&format!("answer {i}: {filler}")));
        h.send("v", &format!("question {i}: {filler}"));
        let events = h.turn("v").await;
        assert!(final_text(&events).is_some(), "{events:?}");
    }
    // Asked once, then estimated: no failing round trip per message.
    assert!(
        fake.hits("/apply-template") <= 1,
        "{}",
        fake.hits("/apply-template")
    );
    assert!(fake.hits("/tokenize") == 0, "{}", fake.hits("/tokenize"));
}

/// Turns that are far from the window's edge ask the server to count
/// nothing: the prompt's bytes already say it fits.
#[tokio::test]
async fn a_prompt_far_under_the_window_is_never_counted_on_the_server() {
    let fake = FakeLlama::start().await;
    fake.set_n_ctx(32768);
    let mut h = start(&fake, |_| {});
    for i in 0..3 {
        h.send("w", &format!("question {i}"));
        assert_eq!(final_text(&h.turn("w").await).as_deref(), Some("ok"));
    }
    assert_eq!(fake.hits("/apply-template"), 0);
    assert_eq!(fake.hits("/tokenize"), 0);
}

/// Where the bytes alone do not say it fits, the server counts the first
/// prompt; later turns add their new messages to the count it reported
/// with its answer, until the fixed part changes (here MEMORY.md).
#[tokio::test]
async fn later_turns_add_their_new_messages_to_the_servers_last_count() {
    let fake = FakeLlama::start().await;
    // The fixed prompt's bytes pass the compaction bar (0.75 of 4096);
    // its tokens (a quarter of them) do not.
    fake.set_n_ctx(4096);
    let mut h = start(&fake, |_| {});
    h.send("w", "first question");
    assert_eq!(final_text(&h.turn("w").await).as_deref(), Some("ok"));
    let first = fake.hits("/apply-template");
    assert!(first >= 1, "the first prompt was not counted");
    for i in 0..3 {
        h.send("w", &format!("question {i}"));
        assert_eq!(final_text(&h.turn("w").await).as_deref(), Some("ok"));
    }
    assert_eq!(
        fake.hits("/apply-template"),
        first,
        "counted again far from the edge"
    );
    std::fs::write(h.workspace.join("MEMORY.md"), "the user likes tea\n").expect("memory");
    h.send("w", "and now?");
    assert_eq!(final_text(&h.turn("w").await).as_deref(), Some("ok"));
    assert!(
        fake.hits("/apply-template") > first,
        "a new system prompt was sized from the old count"
    );
}
