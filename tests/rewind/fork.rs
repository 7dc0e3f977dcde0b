//! `egirl --session ID --fork`: a new session with the same history.

use super::{sent_user_messages, transcript_lines};
use crate::support::cli::{Cli, stderr};
use crate::support::fake_llama::{FakeLlama, Reply};

#[tokio::test]
async fn a_fork_copies_the_transcript_names_its_source_and_resumes() {
    let fake = FakeLlama::start().await;
    fake.push_replies([
        Reply::text("first answer"),
        Reply::text("answer in the fork"),
    ]);
    let cli = Cli::new(&fake, "");
    let out = cli
        .run(&["-m", "remember the word heliotrope", "--session", "src"])
        .await;
    assert!(out.status.success(), "{}", stderr(&out));

    let out = cli.run(&["--session", "src", "--fork"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let id = String::from_utf8_lossy(&out.stdout).trim().to_string();
    assert!(id.starts_with("fork-"), "printed {id:?}");

    let ws = cli.workspace();
    let source = std::fs::read_to_string(ws.join("sessions/src.jsonl")).unwrap();
    let forked = std::fs::read_to_string(ws.join(format!("sessions/{id}.jsonl"))).unwrap();
    // A forked_from mark, then the source's lines byte for byte.
    let (mark, rest) = forked.split_once('\n').unwrap();
    let mark: serde_json::Value = serde_json::from_str(mark).unwrap();
    assert_eq!(mark["mark"], "forked_from");
    assert_eq!(mark["session"], "src");
    assert_eq!(rest, source);

    // The fork resumes with the source's history; the source is untouched.
    let out = cli.run(&["-m", "which word?", "--session", &id]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "answer in the fork\n");
    let sent = sent_user_messages(&fake.requests());
    assert_eq!(sent.len(), 2, "{sent:?}");
    assert!(sent[0].contains("heliotrope"), "{sent:?}");
    assert_eq!(
        std::fs::read_to_string(ws.join("sessions/src.jsonl")).unwrap(),
        source
    );
    assert_eq!(transcript_lines(&ws, &id).len(), 1 + 2 + 2);
}

#[tokio::test]
async fn forking_an_unknown_session_fails_with_one_line() {
    let fake = FakeLlama::start().await;
    let cli = Cli::new(&fake, "");
    let out = cli.run(&["--session", "nope", "--fork"]).await;
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(err.contains("no session `nope`"), "{err}");
    // --fork without --session is bad usage.
    let out = cli.run(&["--fork"]).await;
    assert_eq!(out.status.code(), Some(2));
}
