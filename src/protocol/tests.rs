use super::*;

#[test]
fn event_json_has_type_first_then_session_and_origin() {
    let event = Event {
        agent: None,
        submission: None,
        session: "s1".into(),
        origin: Origin::Discord("123".into()),
        kind: EventKind::Delta(AnswerDelta { text: "hi".into() }),
    };
    let line = serde_json::to_string(&event).unwrap();
    assert_eq!(
        line,
        r#"{"type":"delta","session":"s1","origin":"discord:123","text":"hi"}"#
    );
    let back: Event = serde_json::from_str(&line).unwrap();
    assert_eq!(back, event);
}

#[test]
fn origins_round_trip() {
    for s in [
        "tui",
        "cli",
        "web",
        "webhook",
        "heartbeat",
        "discord:42",
        "cron:daily",
        "telegram:-1001234",
    ] {
        assert_eq!(s.parse::<Origin>().unwrap().to_string(), s);
    }
    assert!("discord:".parse::<Origin>().is_err());
    assert!("telegram:".parse::<Origin>().is_err());
    // A phone may never press the button: Telegram's approvals time out.
    assert!(Origin::Telegram("1".into()).approval_times_out());
    assert!(!Origin::Telegram("1".into()).is_unattended());
    assert!(!Origin::Tui.approval_times_out());
    assert!("smoke".parse::<Origin>().is_err());
}

#[test]
fn a_hit_shows_its_best_line_or_its_first_content() {
    let mut hit = MemoryHit {
        path: "MEMORY.md".into(),
        start_line: 23,
        end_line: 43,
        score: 1.0,
        snippet: "## Tools\nMy favorite shell is fish.\nMy favorite text editor is Helix.".into(),
        snippet_start_line: 41,
        snippet_end_line: 43,
        best_line: 43,
    };
    assert_eq!(hit.matched_line(), "My favorite text editor is Helix.");
    hit.best_line = 0;
    assert_eq!(hit.matched_line(), "My favorite shell is fish.");
    hit.snippet = "### 18:02 · user · tui\n\nGave Ana the key.".into();
    assert_eq!(hit.matched_line(), "Gave Ana the key.");
    hit.snippet = "# Only a heading".into();
    assert_eq!(hit.matched_line(), "# Only a heading");
}

/// Lines written by the binary (and by hand for kinds a headless run cannot
/// reach) before the protocol got payload structs: see
/// `tests/data/json_events.md`. The wire shape must not change.
#[test]
fn version_0_json_lines_round_trip() {
    let lines = concat!(
        include_str!("../../tests/data/json_events_v0.jsonl"),
        include_str!("../../tests/data/json_events_v0_more.jsonl")
    );
    for line in lines.lines().filter(|l| !l.trim().is_empty()) {
        let value: serde_json::Value = serde_json::from_str(line).unwrap();
        let event: Event = serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}"));
        let back = serde_json::to_value(&event).unwrap();
        assert_eq!(back, value, "{line}");
        // Byte for byte too: a client may compare lines, or rely on the
        // order of the fields.
        assert_eq!(serde_json::to_string(&event).unwrap(), line);
    }
}

#[test]
fn an_escalations_ends_are_written_back_as_they_were_read() {
    for text in [
        "llamacpp/",
        "llamacpp/local",
        "anthropic",
        "openrouter/anthropic/claude",
    ] {
        let routed = RoutedModel::from(text);
        assert_eq!(routed.to_string(), text);
    }
    assert_eq!(
        RoutedModel::from("llamacpp/qwen3").route,
        Route::Local(LocalRole::Main)
    );
    assert_eq!(
        RoutedModel::from("openrouter/anthropic/claude")
            .model
            .as_deref(),
        Some("anthropic/claude")
    );
}

/// Every event is as large as the largest kind, and the TUI keeps a long
/// session's events: a text added to a large payload costs 24 bytes per
/// event unless it stays within this size (a `Box<str>` or a `Box` of the
/// payload). 168 bytes is what the kinds needed when this was written.
#[test]
fn an_event_kind_stays_within_168_bytes() {
    assert!(
        std::mem::size_of::<EventKind>() <= 168,
        "EventKind grew to {} bytes",
        std::mem::size_of::<EventKind>()
    );
}

#[test]
fn queries_and_answers_have_the_documented_shapes() {
    use wire::{Answer, Ask, ClientFrame, Reply, ServerFrame, TranscriptItem, TranscriptReply};
    let line = r#"{"frame":"query","id":"q2","ask":{"kind":"transcript","session":"s1"}}"#;
    let ClientFrame::Query(query) = serde_json::from_str(line).unwrap() else {
        panic!("not a query");
    };
    assert_eq!(
        query.ask,
        Ask::Transcript {
            session: "s1".into()
        }
    );
    assert_eq!(
        serde_json::to_string(&ClientFrame::Query(query)).unwrap(),
        line
    );
    let sessions = r#"{"frame":"query","id":"q1","ask":{"kind":"sessions"}}"#;
    assert!(serde_json::from_str::<ClientFrame>(sessions).is_ok());

    let ts = chrono::DateTime::parse_from_rfc3339("2026-11-26T04:00:00Z")
        .unwrap()
        .to_utc();
    let answer = ServerFrame::Answer(Answer {
        id: "q2".into(),
        reply: Reply::Transcript(TranscriptReply {
            session: "s1".into(),
            truncated: false,
            items: vec![TranscriptItem::Rewound { ts, turn: 2 }],
        }),
    });
    assert_eq!(
        serde_json::to_string(&answer).unwrap(),
        r#"{"frame":"answer","id":"q2","reply":{"kind":"transcript","session":"s1","truncated":false,"items":[{"item":"rewound","ts":"2026-11-26T04:00:00Z","turn":2}]}}"#
    );
    let failed = ServerFrame::Answer(Answer {
        id: "q9".into(),
        reply: Reply::Failed {
            message: "no".into(),
        },
    });
    assert_eq!(
        serde_json::to_string(&failed).unwrap(),
        r#"{"frame":"answer","id":"q9","reply":{"kind":"failed","message":"no"}}"#
    );
}
