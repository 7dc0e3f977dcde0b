//! Compaction through the real binary against the scripted fake server:
//! a session that passes `[agent] compact_at` is summarized once (after a
//! silent memory flush), keeps every original in its transcript and
//! resumes from the summary; a failed summary falls back to dropping the
//! oldest turns; `--session ID --compact` and `/compact` compact on demand.

mod auto;
mod fenced;
mod manual;

use serde_json::Value;

use crate::support::cli::{Cli, events, stderr};
use crate::support::fake_llama::{FakeLlama, Reply};

/// The instruction the summary request ends with.
pub const SUMMARY_ASK: &str = "Summarize the conversation above";
/// The instruction the memory flush ends with.
pub const FLUSH_ASK: &str = "about to be replaced by a short summary";

/// A user message of about 2,100 fake tokens (4 characters a token).
pub fn big(n: usize) -> String {
    format!("question {n}: {}", "lorem ipsum ".repeat(700))
}

/// One headless turn in `session`; returns its events.
pub async fn turn(cli: &Cli, session: &str, text: &str) -> Vec<Value> {
    let out = cli.run(&["-m", text, "--json", "--session", session]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    events(&out)
}

/// Whether a chat request ends with this instruction.
pub fn asks(request: &Value, instruction: &str) -> bool {
    request["messages"]
        .as_array()
        .and_then(|m| m.last())
        .and_then(|m| m["content"].as_str())
        .is_some_and(|c| c.contains(instruction))
}

/// Whether any message of a request contains `text`.
pub fn sends(request: &Value, text: &str) -> bool {
    request["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|m| m["content"].as_str().is_some_and(|c| c.contains(text)))
}

/// The user-role messages of a request that contain `text`.
pub fn user_messages_holding(request: &Value, text: &str) -> Vec<String> {
    request["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|m| m["role"] == "user")
        .filter_map(|m| m["content"].as_str())
        .filter(|c| c.contains(text))
        .map(str::to_string)
        .collect()
}

/// The transcript's records.
pub fn transcript(cli: &Cli, session: &str) -> Vec<Value> {
    crate::agent::read_jsonl(
        &cli.workspace()
            .join("sessions")
            .join(format!("{session}.jsonl")),
    )
}

/// A fake with an 8,192-token window and a CLI keeping one recent turn:
/// two turns of `big` fit under 0.75 of the window, a third does not.
pub async fn setup(extra: &str) -> (FakeLlama, Cli) {
    let fake = FakeLlama::start().await;
    fake.set_n_ctx(8192);
    let cli = Cli::new(&fake, &format!("[agent]\nkeep_recent = 1\n{extra}"));
    (fake, cli)
}

/// Two big turns answered "answer 1", "answer 2", neither compacting.
pub async fn two_turns(fake: &FakeLlama, cli: &Cli, session: &str) {
    for n in 1..=2 {
        fake.push_reply(Reply::text(&format!("answer {n}")));
        let ev = turn(cli, session, &big(n)).await;
        assert!(
            ev.iter().all(|e| e["type"] != "compaction"),
            "turn {n} compacted already: {ev:?}"
        );
    }
}
