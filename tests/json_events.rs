//! The `--json` lines today's binary writes, checked against the protocol's
//! types: each line deserializes into an `Event` and serializes back to the
//! same JSON value. With `EGIRL_WRITE_JSON_FIXTURE=1` the lines are written
//! to `tests/data/json_events_v<PROTOCOL_VERSION>.jsonl`: that is how
//! `json_events_v0.jsonl` was made, by the binary of wire version 0 (before
//! `submission`); a later version writes a file of its own.

use serde_json::Value;

use crate::support::cli::{Cli, stderr};
use crate::support::fake_llama::{FakeLlama, Reply};

/// One `-m` run per scenario, covering as many event kinds as a scripted
/// model can reach headless.
async fn captured_lines() -> Vec<String> {
    let fake = FakeLlama::start().await;
    let exec = || Reply::tool_calls(&[("exec", r#"{"command": "echo from-exec"}"#)]);
    let mut lines = Vec::new();
    let runs: Vec<(Vec<Reply>, Vec<&str>)> = vec![
        (
            vec![Reply::text("plain answer").with_reasoning("thinking first")],
            vec!["-m", "hi", "--json"],
        ),
        (
            vec![exec(), Reply::text("denied then")],
            vec!["-m", "run echo", "--json"],
        ),
        (
            vec![exec(), Reply::text("ran it")],
            vec!["-m", "run echo", "--json", "--approve-exec"],
        ),
        (
            vec![
                Reply::tool_calls(&[(
                    "write_file",
                    r#"{"path": "fresh.txt", "content": "a\nb\n"}"#,
                )]),
                Reply::text("done"),
            ],
            vec!["-m", "write a file", "--json"],
        ),
        (
            vec![Reply::context_overflow(), Reply::text("fits now")],
            vec!["-m", "long", "--json"],
        ),
        (
            vec![Reply::status(500, "boom"), Reply::status(500, "boom")],
            vec!["-m", "fail", "--json"],
        ),
    ];
    let cli = Cli::new(&fake, "");
    for (replies, args) in runs {
        fake.push_replies(replies);
        let out = cli.run(&args).await;
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(!stdout.is_empty(), "{args:?}: {}", stderr(&out));
        // Every event of the run answers its one submission (the message).
        let ids: std::collections::HashSet<String> = stdout
            .lines()
            .map(|l| {
                serde_json::from_str::<Value>(l).expect("a JSON line")["submission"].to_string()
            })
            .collect();
        assert_eq!(ids.len(), 1, "{args:?}: {stdout}");
        assert!(!ids.contains("null"), "{args:?}: {stdout}");
        lines.extend(stdout.lines().map(str::to_string));
    }
    lines
}

#[tokio::test]
async fn json_lines_of_the_binary_round_trip_through_event() {
    let lines = captured_lines().await;
    if std::env::var_os("EGIRL_WRITE_JSON_FIXTURE").is_some() {
        // A fixture per wire version: the lines of an older version are
        // what clients of that version wrote, so they are never rewritten.
        let path = format!(
            "{}/tests/data/json_events_v{}.jsonl",
            env!("CARGO_MANIFEST_DIR"),
            egirl::protocol::PROTOCOL_VERSION
        );
        std::fs::write(&path, lines.join("\n") + "\n").expect("write fixture");
    }
    for line in &lines {
        let value: Value = serde_json::from_str(line).expect("a JSON line");
        let event: egirl::protocol::Event =
            serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}"));
        let back = serde_json::to_value(&event).expect("serialize");
        assert_eq!(back, value, "{line}");
    }
}
