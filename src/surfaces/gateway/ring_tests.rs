use super::*;
use crate::protocol::{
    AnswerDelta, ApprovalDecision, ApprovalRequest, Origin, ReviewDecision, TurnEnded, TurnStarted,
};

fn ev(session: &str, kind: EventKind) -> Event {
    Event {
        agent: None,
        submission: None,
        session: session.into(),
        origin: Origin::Tui,
        kind,
    }
}

fn delta(text: &str) -> Event {
    ev("a", EventKind::Delta(AnswerDelta { text: text.into() }))
}

fn request(id: &str) -> Event {
    ev(
        "a",
        EventKind::ApprovalRequest(ApprovalRequest {
            id: id.into(),
            tool: "exec".into(),
            command: "ls".into(),
            cwd: ".".into(),
            rule: None,
            rule_covers: None,
            sandbox: None,
            escalation: None,
        }),
    )
}

#[test]
fn the_ring_numbers_events_and_replays_after_a_cursor() {
    let mut ring = Ring::new(4, usize::MAX);
    for i in 0..3 {
        assert_eq!(ring.push(Arc::new(delta(&i.to_string()))), i + 1);
    }
    let got = ring.after(1, 10).unwrap();
    assert_eq!(got.iter().map(|(s, _)| *s).collect::<Vec<_>>(), vec![2, 3]);
    assert!(ring.after(3, 10).unwrap().is_empty());
    assert_eq!(ring.after(0, 1).unwrap().len(), 1);
}

#[test]
fn a_cursor_behind_the_ring_or_ahead_of_it_is_lost() {
    let mut ring = Ring::new(2, usize::MAX);
    for i in 0..5 {
        ring.push(Arc::new(delta(&i.to_string())));
    }
    // Holds 4 and 5: a client that applied 3 can go on, one at 2 cannot.
    assert!(ring.holds_after(3));
    assert_eq!(ring.after(2, 10), Err(Lost));
    // A number this ring never gave (a restarted server) is lost too.
    assert_eq!(ring.after(9, 10), Err(Lost));
    assert!(Ring::new(2, 10).holds_after(0));
}

#[test]
fn the_ring_is_bounded_in_bytes() {
    let mut ring = Ring::new(1000, 10_000);
    for _ in 0..100 {
        ring.push(Arc::new(delta(&"x".repeat(1000))));
    }
    assert!(ring.bytes <= 10_000, "{}", ring.bytes);
    assert!(ring.events.len() < 10);
    assert_eq!(ring.newest(), 100);
    // One event larger than the bound is still kept until the next.
    ring.push(Arc::new(delta(&"y".repeat(50_000))));
    assert_eq!(ring.events.len(), 1);
}

#[test]
fn the_tracker_knows_open_approvals_and_busy_sessions() {
    let mut tracker = Tracker::default();
    let events = [
        ev(
            "a",
            EventKind::TurnStarted(TurnStarted {
                text: "hi".into(),
                ..TurnStarted::default()
            }),
        ),
        request("r1"),
        request("r2"),
        ev(
            "a",
            EventKind::ApprovalDecision(ApprovalDecision {
                id: "r1".into(),
                decision: ReviewDecision::Denied,
                by: "tui".into(),
            }),
        ),
        ev("b", EventKind::TurnEnded(TurnEnded { interrupted: false })),
    ];
    for (i, event) in events.into_iter().enumerate() {
        tracker.observe(i as u64 + 1, &Arc::new(event));
    }
    let open = tracker.approvals();
    assert_eq!(open.len(), 1);
    assert_eq!(open[0].0, 3);
    let sessions = tracker.sessions();
    assert_eq!(sessions.len(), 2);
    assert!(sessions[0].busy && sessions[0].id == "a" && sessions[0].origin == "tui");
    assert!(!sessions[1].busy);
}

#[test]
fn the_tracker_names_each_sessions_agent() {
    let mut tracker = Tracker::default();
    let mut event = ev("w", EventKind::TurnEnded(TurnEnded { interrupted: false }));
    event.agent = Some("work".into());
    tracker.observe(1, &Arc::new(event));
    tracker.observe(2, &Arc::new(delta("x")));
    let agents: Vec<_> = tracker.sessions().into_iter().map(|s| s.agent).collect();
    assert_eq!(agents, [None, Some("work".to_string())]);
}

#[test]
fn stream_append_wakes_watchers() {
    let stream = Stream::new(8, usize::MAX);
    let mut watch = stream.watch();
    stream.append(delta("x"));
    assert!(watch.has_changed().unwrap());
    assert_eq!(*watch.borrow_and_update(), 1);
}
