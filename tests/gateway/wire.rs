//! The frames of the socket protocol against the real daemon: hello, an
//! op and its numbered events, the refusals, the socket file's life.

use std::os::unix::fs::PermissionsExt;

use serde_json::json;
use tokio::io::AsyncWriteExt;

use super::daemon::{Daemon, Raw, deltas, increasing_seqs};
use crate::support::fake_llama::{FakeLlama, Reply};

#[tokio::test]
async fn a_client_says_hello_and_reads_its_answer_as_numbered_events() {
    let llama = FakeLlama::start().await;
    let daemon = Daemon::start(&llama, &[]).await;
    let mode = std::fs::metadata(&daemon.socket)
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600, "{mode:o}");

    let (mut raw, hello) = Raw::hello(&daemon.socket, None).await;
    assert_eq!(hello["version"], 1);
    assert_eq!(hello["mode"], "serve");
    assert_eq!(hello["pid"], daemon.pid());
    assert_eq!(hello["model"], "fake");
    let start = hello["seq"].as_u64().unwrap();

    llama.push_reply(Reply::text("the daemon answers"));
    raw.say("raw-1", "cli-wire", "hello daemon").await;
    let events = raw.events_until_end("raw-1").await;
    increasing_seqs(&events, start);
    assert_eq!(deltas(&events), "the daemon answers");
    let finals: Vec<_> = events
        .iter()
        .filter(|f| f["event"]["type"] == "final")
        .collect();
    assert_eq!(finals.len(), 1, "{events:?}");
    assert_eq!(finals[0]["event"]["submission"], "raw-1");
    assert_eq!(finals[0]["event"]["session"], "cli-wire");

    // A second client sees the session in its hello.
    let (_second, hello) = Raw::hello(&daemon.socket, None).await;
    assert!(hello["seq"].as_u64().unwrap() >= events.last().unwrap()["seq"].as_u64().unwrap());
    assert_eq!(hello["sessions"][0]["id"], "cli-wire");
    assert_eq!(hello["sessions"][0]["busy"], false);

    let socket = daemon.socket.clone();
    let (status, lines, _dir) = daemon.stop().await;
    assert!(status.success(), "{lines:?}");
    assert!(!socket.exists(), "the socket outlived the daemon");
}

#[tokio::test]
async fn a_first_frame_that_is_not_a_compatible_hello_is_refused() {
    let llama = FakeLlama::start().await;
    let daemon = Daemon::start(&llama, &[]).await;

    let mut raw = Raw::connect(&daemon.socket).await;
    raw.say("x", "s", "no hello first").await;
    let error = raw.recv().await;
    assert_eq!(error["frame"], "error", "{error}");
    assert!(raw.try_recv().await.is_none(), "the connection stayed open");

    let mut raw = Raw::connect(&daemon.socket).await;
    raw.send(&json!({"frame": "hello", "version": 99, "client": "future"}))
        .await;
    let error = raw.recv().await;
    assert_eq!(error["frame"], "error", "{error}");
    assert!(
        error["message"].as_str().unwrap().contains("version"),
        "{error}"
    );
    assert!(raw.try_recv().await.is_none());

    // A line without end past the bound: refused, the daemon unharmed.
    let mut raw = Raw::connect(&daemon.socket).await;
    let long = vec![b'x'; 5 * 1024 * 1024];
    let _ = raw_write(&mut raw, &long).await;
    let error = raw.recv().await;
    assert_eq!(error["frame"], "error", "{error}");
    assert!(raw.try_recv().await.is_none());

    let (_ok, hello) = Raw::hello(&daemon.socket, None).await;
    assert_eq!(hello["frame"], "hello");
}

/// Writes bytes as they are (the server may close before reading them all).
async fn raw_write(raw: &mut Raw, bytes: &[u8]) -> std::io::Result<()> {
    raw.writer_mut().write_all(bytes).await
}

#[tokio::test]
async fn an_op_in_a_bot_s_name_or_malformed_is_rejected_and_the_connection_stays() {
    let llama = FakeLlama::start().await;
    let daemon = Daemon::start(&llama, &[]).await;
    let (mut raw, hello) = Raw::hello(&daemon.socket, None).await;

    let op = json!({"frame": "op", "id": "fake-discord", "op": {
        "type": "user_message", "session": "s", "origin": "discord:1", "text": "hi"}});
    raw.send(&op).await;
    let rejected = raw.recv().await;
    assert_eq!(rejected["frame"], "rejected", "{rejected}");
    assert_eq!(rejected["id"], "fake-discord");

    let decision = json!({"frame": "op", "id": "fake-cron", "op": {
        "type": "approval_decision", "id": "a1", "decision": "approved_once", "by": "cron:job"}});
    raw.send(&decision).await;
    let rejected = raw.recv().await;
    assert_eq!(rejected["frame"], "rejected", "{rejected}");
    assert_eq!(rejected["id"], "fake-cron");

    raw.send_line(r#"{"frame": "op", "id": "bad", "op": {"type": "shutdown"}}"#)
        .await;
    let rejected = raw.recv().await;
    assert_eq!(rejected["frame"], "rejected", "{rejected}");
    assert_eq!(rejected["id"], "bad");
    raw.send_line("not json").await;
    assert_eq!(raw.recv().await["frame"], "rejected");

    // Still connected: a good op is answered.
    llama.push_reply(Reply::text("still here"));
    raw.say("good", "cli-still", "are you there").await;
    let events = raw.events_until_end("good").await;
    increasing_seqs(&events, hello["seq"].as_u64().unwrap());
    assert_eq!(deltas(&events), "still here");
    assert_eq!(llama.requests_to("/v1/chat/completions").len(), 1);
}
