//! `/fork` and `/rewind` as the TUI sends them: `Op::Command` to the
//! running core, answered with `forked` / `rewound`; the session's next
//! turn runs on the rewound history without restarting anything.

use egirl::protocol::{Command, ErrorEvent, EventKind, Forked, Op, Rewound};
use serde_json::json;

use super::{calls, sent_user_messages};
use crate::agent::{Harness, start};
use crate::support::fake_llama::{FakeLlama, Reply};

async fn answer(h: &mut Harness, session: &str) -> EventKind {
    loop {
        let event = h.next().await;
        if event.session == session
            && matches!(
                event.kind,
                EventKind::Forked(_) | EventKind::Rewound(_) | EventKind::Error(_)
            )
        {
            return event.kind;
        }
    }
}

#[tokio::test]
async fn the_core_rewinds_a_live_session_and_its_next_turn_starts_from_there() {
    let fake = FakeLlama::start().await;
    fake.push_replies([
        Reply::text("first answer"),
        calls(&[(
            "write_file",
            json!({"path": "notes.md", "content": "draft"}),
        )]),
        Reply::text("wrote it"),
        Reply::text("after the rewind"),
    ]);
    let mut h = start(&fake, |_| {});
    h.send("s", "just talk");
    h.turn("s").await;
    h.send("s", "write the notes");
    h.turn("s").await;
    assert!(h.workspace.join("notes.md").exists());

    h.agent.submit(Op::Command {
        session: "s".into(),
        command: Command::Rewind { turn: 2 },
    });
    match answer(&mut h, "s").await {
        EventKind::Rewound(Rewound {
            turn,
            text,
            dropped_messages,
            removed,
            untracked,
            ..
        }) => {
            assert_eq!(
                (turn, text.as_str(), dropped_messages),
                (2, "write the notes", 4)
            );
            assert_eq!(removed, ["notes.md"]);
            assert_eq!(untracked, None);
        }
        other => panic!("{other:?}"),
    }
    assert!(!h.workspace.join("notes.md").exists());

    // The worker kept its session and read the history again.
    h.send("s", "something else");
    h.turn("s").await;
    let sent = sent_user_messages(&fake.requests());
    assert_eq!(sent.len(), 2, "{sent:?}");
    assert!(sent[1].contains("something else"), "{sent:?}");

    h.agent.submit(Op::Command {
        session: "s".into(),
        command: Command::Rewind { turn: 9 },
    });
    match answer(&mut h, "s").await {
        EventKind::Error(ErrorEvent { message }) => {
            assert!(message.contains("cannot rewind"), "{message}")
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn the_core_forks_a_session_into_a_new_transcript() {
    let fake = FakeLlama::start().await;
    fake.push_replies([Reply::text("hi")]);
    let mut h = start(&fake, |_| {});
    h.send("s", "hello");
    h.turn("s").await;
    h.agent.submit(Op::Command {
        session: "s".into(),
        command: Command::Fork,
    });
    let EventKind::Forked(Forked { new_session }) = answer(&mut h, "s").await else {
        panic!("no forked event");
    };
    let copy =
        egirl::sessions::load(&h.workspace.join(format!("sessions/{new_session}.jsonl"))).unwrap();
    let source = egirl::sessions::load(&h.workspace.join("sessions/s.jsonl")).unwrap();
    assert_eq!(copy, source);
}
