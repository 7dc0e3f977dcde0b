//! Resuming after a cut connection, against the real daemon: the daemon
//! keeps streaming while the client is away, and the client gets every
//! event once, or a `resync` when what it missed is no longer kept.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use egirl::link::LinkState;
use egirl::link::client::{self, ConnectOptions, Dialer};
use egirl::link::frames;
use egirl::protocol::{EventKind, Op, Origin, Submission};
use serde_json::Value;

use super::daemon::{Daemon, Raw, deltas, increasing_seqs};
use crate::support::fake_llama::{FakeLlama, Reply};

/// A reply of `n` numbered words, streamed one a frame, `delay` apart.
fn long_reply(n: usize, delay: Duration) -> (Reply, String) {
    let words: Vec<String> = (0..n).map(|i| format!("w{i} ")).collect();
    (Reply::chunks(&words).frame_delay(delay), words.concat())
}

#[tokio::test]
async fn a_client_that_reconnects_with_resume_after_gets_every_event_once() {
    let llama = FakeLlama::start().await;
    let daemon = Daemon::start(&llama, &[]).await;
    let (reply, text) = long_reply(300, Duration::from_millis(5));
    llama.push_reply(reply);

    let (mut first, hello) = Raw::hello(&daemon.socket, None).await;
    let start = hello["seq"].as_u64().unwrap();
    first.say("r-1", "cli-replay", "stream a lot").await;
    let mut seen: Vec<Value> = Vec::new();
    while seen
        .iter()
        .filter(|f| f["event"]["type"] == "delta")
        .count()
        < 20
    {
        let frame = first.recv().await;
        assert_eq!(frame["frame"], "event", "{frame}");
        seen.push(frame);
    }
    // Cut: the daemon streams on while nobody reads.
    drop(first);
    tokio::time::sleep(Duration::from_millis(300)).await;
    let last = seen.last().unwrap()["seq"].as_u64().unwrap();
    let (mut second, hello) = Raw::hello(&daemon.socket, Some(last)).await;
    assert!(hello["seq"].as_u64().unwrap() > last, "{hello}");
    seen.extend(second.events_until_end("r-1").await);

    increasing_seqs(&seen, start);
    // The core holds back trailing whitespace of an answer.
    let got = deltas(&seen);
    assert!(
        got == text.trim_end(),
        "{} of {} bytes",
        got.len(),
        text.len()
    );
    let finals = seen
        .iter()
        .filter(|f| f["event"]["type"] == "final")
        .count();
    assert_eq!(finals, 1);
}

#[tokio::test]
async fn a_resume_from_before_the_ring_gets_resync_gap() {
    let llama = FakeLlama::start().await;
    let daemon = Daemon::start(&llama, &[("EGIRL_GATEWAY_RING_EVENTS", "16")]).await;
    let (reply, _) = long_reply(100, Duration::from_millis(1));
    llama.push_reply(reply);
    let (mut raw, _) = Raw::hello(&daemon.socket, None).await;
    raw.say("g-1", "cli-gap", "stream").await;
    // A ring of 16 may drop this reader too (a `resync`): only the end counts.
    loop {
        let frame = raw.recv().await;
        let event = &frame["event"];
        if event["type"] == "turn_ended" && event["submission"] == "g-1" {
            break;
        }
    }

    for after in [1, 1_000_000_000] {
        let (mut late, hello) = Raw::hello(&daemon.socket, Some(after)).await;
        let resync = late.recv().await;
        assert_eq!(resync["frame"], "resync", "{resync}");
        assert_eq!(resync["reason"], "gap");
        assert_eq!(resync["seq"], hello["seq"]);
    }
}

/// Dials the daemon through a pipe the test can cut.
fn cuttable(socket: std::path::PathBuf) -> (Dialer, Arc<Mutex<Vec<tokio::task::JoinHandle<()>>>>) {
    let pipes = Arc::new(Mutex::new(Vec::new()));
    let held = pipes.clone();
    let dial: Dialer = Arc::new(move || {
        let socket = socket.clone();
        let held = held.clone();
        Box::pin(async move {
            let mut daemon = tokio::net::UnixStream::connect(&socket).await?;
            let (mut near, far) = tokio::io::duplex(1 << 16);
            let pipe = tokio::spawn(async move {
                let _ = tokio::io::copy_bidirectional(&mut near, &mut daemon).await;
            });
            held.lock().unwrap().push(pipe);
            let (read, write) = tokio::io::split(far);
            Ok(frames::lines(read, write, client::MAX_SERVER_FRAME))
        })
    });
    (dial, pipes)
}

#[tokio::test]
async fn the_client_library_reconnects_and_shows_every_event_once() {
    let llama = FakeLlama::start().await;
    let daemon = Daemon::start(&llama, &[]).await;
    let (reply, text) = long_reply(300, Duration::from_millis(5));
    llama.push_reply(reply);
    let (dial, pipes) = cuttable(daemon.socket.clone());
    let options = ConnectOptions {
        client: "replay-test".into(),
        token: Some(super::daemon::gateway_token(daemon.dir.path())),
        ..ConnectOptions::default()
    };
    let (link, hello) = client::attach(dial, options).await.unwrap();
    assert_eq!(
        link.attached.as_deref(),
        Some(&*format!("serve pid {}", hello.pid))
    );
    let mut state = link.connection.clone().unwrap();
    let mut events = link.subscribe();
    let submission = Submission::new(Op::UserMessage {
        images: Vec::new(),
        session: "cli-lib".into(),
        origin: Origin::Cli,
        text: "stream a lot".into(),
    });
    assert!(link.submit_with(submission));

    let mut got = Vec::new();
    let mut cut = false;
    loop {
        let event = tokio::time::timeout(Duration::from_secs(60), events.recv())
            .await
            .expect("an event within 60 s")
            .unwrap();
        let ended = matches!(event.kind, EventKind::TurnEnded(_));
        got.push(event);
        if ended {
            break;
        }
        if !cut && got.len() > 20 {
            cut = true;
            for pipe in pipes.lock().unwrap().drain(..) {
                pipe.abort();
            }
            state
                .wait_for(|s| matches!(s, LinkState::Reconnecting { .. }))
                .await
                .unwrap();
        }
    }
    assert!(cut, "the turn ended before the cut");
    let streamed: String = got
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::Delta(d) => Some(d.text.as_str()),
            _ => None,
        })
        .collect();
    assert!(
        streamed == text.trim_end(),
        "{} of {} bytes",
        streamed.len(),
        text.len()
    );
    let finals = got
        .iter()
        .filter(|e| matches!(e.kind, EventKind::Final(_)))
        .count();
    assert_eq!(finals, 1);
    assert!(
        matches!(*state.borrow(), LinkState::Connected { resyncs: 0, .. }),
        "{:?}",
        *state.borrow()
    );
}
