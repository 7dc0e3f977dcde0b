//! A session with nothing to do is let go (`[agent] session_idle_release`)
//! and opened again from its transcript at its next op, keeping what the
//! transcript does not hold; no message sent meanwhile is lost.

use std::time::Duration;

use egirl::config::ConfigDuration;
use egirl::protocol::{Command, EventKind, Op, Routing, Target};

use super::escalation::remote;
use super::{Harness, final_text, start, start_with_remote};
use crate::support::fake_llama::{FakeLlama, Reply};
use crate::support::fake_openai::{FakeOpenAi, Reply as RemoteReply};

/// Let go after 50 ms of nothing to do; the router asks no model.
fn releasing_after(ms: u64) -> impl FnOnce(&mut egirl::config::Config) {
    move |config| {
        config.agent.session_idle_release = ConfigDuration(Duration::from_millis(ms));
        config.routing.classify = false;
    }
}

/// Well past the release (a loaded machine's timers fire late).
async fn let_go() {
    tokio::time::sleep(Duration::from_millis(800)).await;
}

/// The user messages of the chat request number `n`.
fn user_texts(fake: &FakeLlama, n: usize) -> Vec<String> {
    let requests = fake.requests();
    requests[n]["messages"]
        .as_array()
        .expect("messages")
        .iter()
        .filter(|m| m["role"] == "user")
        .map(|m| m["content"].as_str().unwrap_or_default().to_string())
        .collect()
}

/// `/remote` for `session`.
fn remote_for(h: &Harness, session: &str) {
    assert!(h.agent.submit(Op::Command {
        session: session.into(),
        command: Command::ForceTarget {
            target: Target::Remote
        },
    }));
}

async fn first_turn(h: &mut Harness, fake: &FakeLlama) {
    fake.push_reply(Reply::text("noted"));
    h.send("s1", "remember the apples");
    h.turn("s1").await;
}

#[tokio::test]
async fn a_released_session_answers_with_its_whole_history() {
    let fake = FakeLlama::start().await;
    let mut h = start(&fake, releasing_after(50));
    first_turn(&mut h, &fake).await;
    let_go().await;
    fake.push_reply(Reply::text("apples"));
    h.send("s1", "what did I ask you to remember?");
    let events = h.turn("s1").await;
    assert_eq!(final_text(&events).as_deref(), Some("apples"));
    let users = user_texts(&fake, 1);
    assert_eq!(users.len(), 2, "{users:?}");
    assert!(users[0].contains("remember the apples"), "{users:?}");
    // The transcript goes on in the same file.
    let typed: Vec<_> = h
        .transcript("s1")
        .iter()
        .filter_map(|r| r["typed"].as_str().map(str::to_string))
        .collect();
    assert_eq!(
        typed,
        ["remember the apples", "what did I ask you to remember?"]
    );
}

/// The history is read again from the file once the session was let go,
/// and only then: a file emptied by hand shows in the next request.
#[tokio::test]
async fn the_history_comes_from_the_transcript_after_a_release_only() {
    for (release_ms, history_kept) in [(50, false), (0, true)] {
        let fake = FakeLlama::start().await;
        let mut h = start(&fake, releasing_after(release_ms));
        first_turn(&mut h, &fake).await;
        let_go().await;
        let file = h.workspace.join("sessions").join("s1.jsonl");
        std::fs::write(&file, "").expect("emptied");
        fake.push_reply(Reply::text("ok"));
        h.send("s1", "and now?");
        h.turn("s1").await;
        let users = user_texts(&fake, 1);
        let kept = users.iter().any(|u| u.contains("remember the apples"));
        assert_eq!(kept, history_kept, "release {release_ms} ms: {users:?}");
    }
}

#[tokio::test]
async fn remote_asked_for_before_a_release_still_holds_after_it() {
    let local = FakeLlama::start().await;
    let cloud = FakeOpenAi::start().await;
    let mut h = start_with_remote(&local, remote(&cloud), releasing_after(50));
    remote_for(&h, "s1");
    let_go().await;
    // A new session's worker starts: the ended one's handle gives way to
    // what its session held.
    local.push_reply(Reply::text("hello"));
    h.send("s2", "hi");
    h.turn("s2").await;
    cloud.push(RemoteReply::text(&["from the cloud"]));
    h.send("s1", "hi");
    let events = h.turn("s1").await;
    let target = events.iter().find_map(|e| match e {
        EventKind::Routing(Routing { route, .. }) => Some(route.target()),
        _ => None,
    });
    assert_eq!(target, Some(Target::Remote), "{events:?}");
    assert_eq!(final_text(&events).as_deref(), Some("from the cloud"));
}

/// A session that cannot be opened again (its transcript unreadable)
/// says so in one line and keeps what it held for the next try.
#[tokio::test]
async fn a_failed_reopen_keeps_what_the_session_held() {
    let local = FakeLlama::start().await;
    let cloud = FakeOpenAi::start().await;
    let mut h = start_with_remote(&local, remote(&cloud), releasing_after(50));
    remote_for(&h, "s1");
    let_go().await;
    // A folder where the transcript goes: the open fails.
    let file = h.workspace.join("sessions").join("s1.jsonl");
    std::fs::create_dir_all(&file).expect("a folder in the way");
    h.send("s1", "hi");
    let events = h.turn("s1").await;
    assert!(
        events.iter().any(|e| matches!(e, EventKind::Error(_))),
        "{events:?}"
    );
    std::fs::remove_dir(&file).expect("out of the way again");
    cloud.push(RemoteReply::text(&["from the cloud"]));
    h.send("s1", "hi again");
    let events = h.turn("s1").await;
    assert_eq!(
        final_text(&events).as_deref(),
        Some("from the cloud"),
        "{events:?}"
    );
}

/// Messages sent as the worker lets go (a 1 ms release; each sent 0 to
/// 3 ms after the last turn ended, some while the next is queued) each
/// get their turn, in the order sent.
#[tokio::test]
async fn no_message_is_lost_while_a_session_is_let_go() {
    let fake = FakeLlama::start().await;
    let mut h = start(&fake, releasing_after(1));
    let sent: Vec<String> = (0..30).map(|i| format!("message {i}")).collect();
    fake.push_replies(sent.iter().map(|_| Reply::text("ok")));
    let mut ended = 0;
    for (i, text) in sent.iter().enumerate() {
        h.send("s1", text);
        // Every third message goes in behind a running turn.
        if i % 3 != 1 {
            while ended <= i {
                let events = h.turn("s1").await;
                assert_eq!(final_text(&events).as_deref(), Some("ok"), "{events:?}");
                ended += 1;
            }
            let pause = Duration::from_micros(((i * 7) % 4) as u64 * 1000);
            tokio::time::sleep(pause).await;
        }
    }
    while ended < sent.len() {
        h.turn("s1").await;
        ended += 1;
    }
    let typed: Vec<_> = h
        .transcript("s1")
        .iter()
        .filter_map(|r| r["typed"].as_str().map(str::to_string))
        .collect();
    assert_eq!(typed, sent);
}
