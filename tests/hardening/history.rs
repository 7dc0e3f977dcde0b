//! A transcript written before a secret was known (or by an older egirl)
//! holds its raw value: every way a session is opened reads it redacted,
//! so the value reaches neither the screen, the `--json` stream, a rewind's
//! report nor the model.

use serde_json::json;

use crate::support::cli::{Cli, stderr};
use crate::support::fake_llama::{FakeLlama, Reply};

const SECRET: &str = "old-transcript-secret-5c81e2";
const ENV: [(&str, &str); 1] = [("LEGACY_TOKEN", SECRET)];

/// A user message (typed as shown), a tool call and its result, and an
/// answer: each holding the raw value.
fn legacy_transcript() -> String {
    let at = "2026-01-01T00:00:00Z";
    [
        json!({"ts": at, "origin": "cli", "typed": format!("my token is {SECRET}"),
               "role": "user", "content": format!("my token is {SECRET}")}),
        json!({"ts": at, "origin": "cli", "role": "assistant", "content": "",
               "tool_calls": [{"id": "c1", "name": "memory_save",
                               "arguments": {"text": format!("token {SECRET}")}}]}),
        json!({"ts": at, "origin": "cli", "role": "tool", "tool_call_id": "c1",
               "name": "memory_save", "content": format!("saved token {SECRET}")}),
        json!({"ts": at, "origin": "cli", "role": "assistant",
               "content": format!("noted: {SECRET}")}),
    ]
    .iter()
    .map(|l| format!("{l}\n"))
    .collect()
}

async fn with_legacy_session(fake: &FakeLlama) -> Cli {
    let cli = Cli::new(fake, "");
    let sessions = cli.workspace().join("sessions");
    std::fs::create_dir_all(&sessions).unwrap();
    std::fs::write(sessions.join("legacy.jsonl"), legacy_transcript()).unwrap();
    cli
}

#[tokio::test]
async fn a_resumed_legacy_transcript_shows_and_sends_no_raw_value() {
    let fake = FakeLlama::start().await;
    fake.push_reply(Reply::text("carrying on"));
    let cli = with_legacy_session(&fake).await;
    let out = cli
        .run_with_env(&["-m", "go on", "--json", "--session", "legacy"], &ENV)
        .await;
    assert!(out.status.success(), "{}", stderr(&out));
    let shown = format!("{}{}", String::from_utf8_lossy(&out.stdout), stderr(&out));
    assert!(!shown.contains(SECRET), "{shown}");
    let sent = serde_json::to_string(&fake.requests()).unwrap();
    assert!(!sent.contains(SECRET), "{sent}");
    // The history was sent, with the marker where the value was.
    assert!(sent.contains("noted: [redacted:LEGACY_TOKEN]"), "{sent}");
    assert!(sent.contains("token [redacted:LEGACY_TOKEN]"), "{sent}");
}

#[tokio::test]
async fn rewinding_a_legacy_transcript_reports_its_message_redacted() {
    let fake = FakeLlama::start().await;
    let cli = with_legacy_session(&fake).await;
    let out = cli
        .run_with_env(&["--session", "legacy", "--rewind", "1"], &ENV)
        .await;
    assert!(out.status.success(), "{}", stderr(&out));
    let said = format!("{}{}", String::from_utf8_lossy(&out.stdout), stderr(&out));
    assert!(!said.contains(SECRET), "{said}");
    assert!(
        said.contains("message 1 was: my token is [redacted:LEGACY_TOKEN]"),
        "{said}"
    );
}
