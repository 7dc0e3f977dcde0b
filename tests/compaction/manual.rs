//! Compaction on demand: `egirl --session ID --compact` and `/compact`.

use egirl::protocol::{Command, Compacted, ErrorEvent, EventKind, Op, Origin};

use super::*;
use crate::support::fake_llama::Reply;

#[tokio::test]
async fn compact_flag_prints_the_summary_and_resume_uses_it() {
    let fake = FakeLlama::start().await;
    let cli = Cli::new(&fake, "[agent]\nmemory_flush = false\nkeep_recent = 1\n");
    for n in 1..=2 {
        fake.push_reply(Reply::text(&format!("answer {n}")));
        turn(&cli, "m", &format!("short question {n}")).await;
    }
    let before = fake.requests().len();
    fake.push_reply(Reply::text("SUMMARY-ABC: two short questions."));
    let out = cli.run(&["--session", "m", "--compact"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "SUMMARY-ABC: two short questions.\n"
    );
    // memory_flush = false: the summary request is the only one.
    let requests = fake.requests()[before..].to_vec();
    assert_eq!(requests.len(), 1);
    assert!(asks(&requests[0], SUMMARY_ASK));
    assert!(sends(&requests[0], "short question 1") && !sends(&requests[0], "short question 2"));
    let records = transcript(&cli, "m");
    assert_eq!(
        records
            .iter()
            .filter(|r| r["compaction"].is_object())
            .count(),
        1
    );

    fake.push_reply(Reply::text("answer 3"));
    turn(&cli, "m", "short question 3").await;
    let resumed = fake.requests().last().cloned().unwrap_or_default();
    assert!(sends(&resumed, "SUMMARY-ABC") && !sends(&resumed, "short question 1"));
    assert!(sends(&resumed, "short question 2"));
}

#[tokio::test]
async fn compact_flag_needs_a_session_that_exists() {
    let fake = FakeLlama::start().await;
    let cli = Cli::new(&fake, "");
    let out = cli.run(&["--session", "nope", "--compact"]).await;
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("no session `nope`"),
        "{}",
        stderr(&out)
    );
    assert_eq!(fake.requests().len(), 0);
}

/// `/compact KEEP` sends this op (tests/tui covers the command line); the
/// core puts KEEP in the summary request and answers with `compaction`.
#[tokio::test]
async fn compact_command_keeps_what_the_user_asked_for() {
    let fake = FakeLlama::start().await;
    let mut h = crate::agent::start(&fake, |c| c.agent.memory_flush = false);
    h.send("t", "where did I put the keys");
    h.turn("t").await;
    fake.push_reply(Reply::text("SUMMARY: keys are in the drawer"));
    assert!(h.agent.submit(Op::Command {
        session: "t".into(),
        command: Command::Compact {
            focus: Some("the file names".into()),
            origin: Origin::Tui,
        },
    }));
    let summary = loop {
        let event = h.next().await;
        match event.kind {
            EventKind::Compaction(Compacted {
                summary,
                summarized_messages,
                ..
            }) => {
                assert_eq!(summarized_messages, 2);
                break summary;
            }
            EventKind::Error(ErrorEvent { message }) => panic!("{message}"),
            _ => {}
        }
    };
    assert_eq!(summary, "SUMMARY: keys are in the drawer");
    let request = fake.requests().last().cloned().unwrap_or_default();
    assert!(asks(&request, "Keep in particular: the file names"));
    assert!(sends(&request, "where did I put the keys"));
}
