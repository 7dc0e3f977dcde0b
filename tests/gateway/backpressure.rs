//! A slow client against the real daemon: it reads nothing while a long
//! answer streams, falls out of the replay ring, and is told (`resync`
//! lagged) and given the approval still open; another client and the
//! daemon's memory do not notice.

use serde_json::Value;

use super::daemon::{Daemon, Raw, deltas};
use crate::support::fake_llama::{FakeLlama, Reply};

/// The daemon's memory must stay far below what the stream would hold if
/// a slow client's backlog were kept (a generous bound, not a measure).
const RSS_BOUND_KIB: u64 = 768 * 1024;

#[tokio::test]
async fn a_slow_client_is_resynced_with_the_open_approval_and_others_are_not_slowed() {
    let llama = FakeLlama::start().await;
    let daemon = Daemon::start(&llama, &[("EGIRL_GATEWAY_RING_EVENTS", "2048")]).await;
    let (mut slow, _) = Raw::hello(&daemon.socket, None).await;
    let (mut fast, _) = Raw::hello(&daemon.socket, None).await;

    // An exec call that waits for a decision: the approval stays open.
    llama.push_reply(Reply::tool_calls(&[(
        "exec",
        r#"{"command": "touch made-by-exec"}"#,
    )]));
    fast.say("a-1", "cli-approve", "run it").await;
    let request = loop {
        let frame = fast.recv().await;
        if frame["event"]["type"] == "approval_request" {
            break frame;
        }
    };

    let words: Vec<String> = (0..20_000).map(|i| format!("word{i} ")).collect();
    llama.push_reply(Reply::chunks(&words));
    fast.say("b-1", "cli-long", "stream a lot").await;
    let streamed = fast.events_until_end("b-1").await;
    // Every byte, in order (the core holds back the trailing space).
    let text = deltas(&streamed);
    let want = words.concat();
    assert!(
        text == want.trim_end(),
        "{} of {} bytes",
        text.len(),
        want.len()
    );
    assert!(!streamed.iter().any(|f| f["frame"] == "resync"));
    let rss = daemon.rss_kib();
    assert!(rss < RSS_BOUND_KIB, "daemon RSS {rss} KiB");

    // The slow client reads at last: what its socket held, then resync.
    let resync = loop {
        let frame = slow.recv().await;
        if frame["frame"] == "resync" {
            break frame;
        }
        assert_eq!(frame["frame"], "event", "{frame}");
    };
    assert_eq!(resync["reason"], "lagged", "{resync}");
    let again: Value = slow.recv().await;
    assert_eq!(again["frame"], "event", "{again}");
    assert_eq!(again["event"]["type"], "approval_request");
    assert_eq!(again["event"]["id"], request["event"]["id"]);
    assert_eq!(again["seq"], request["seq"]);
}
