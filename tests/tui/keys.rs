//! Keys and events drive the state; effects say what reaches the core.

use std::time::{Duration, Instant};

use crossterm::event::{Event as TermEvent, KeyCode, KeyEvent, KeyModifiers};
use egirl::protocol::{
    AnswerDelta, ApprovalDecision, ApprovalRequest, Command, EventKind, Op, Origin, ReviewDecision,
    Target, ToolCallEvent, ToolResultEvent, TurnEnded, TurnStarted,
};
use egirl::surfaces::tui::{Effect, Focus, Overlay, Pane};

use super::*;

fn with(code: KeyCode, modifiers: KeyModifiers) -> KeyEvent {
    KeyEvent::new(code, modifiers)
}

fn ctrl(c: char) -> KeyEvent {
    with(KeyCode::Char(c), KeyModifiers::CONTROL)
}

fn approval(id: &str, command: &str) -> EventKind {
    EventKind::ApprovalRequest(ApprovalRequest {
        id: id.into(),
        tool: "exec".into(),
        command: command.into(),
        cwd: "/home/me/ws".into(),
        rule: egirl::tools::approval::approval_prefix(command),
        rule_covers: None,
        sandbox: None,
        escalation: None,
    })
}

#[test]
fn enter_sends_the_message_to_the_tui_session() {
    let mut app = app();
    type_text(&mut app, "hello there");
    let sent = ops(press(&mut app, key(KeyCode::Enter)));
    match sent.as_slice() {
        [
            Op::UserMessage {
                session,
                origin,
                text,
                ..
            },
        ] => {
            assert_eq!(session, SESSION);
            assert_eq!(*origin, Origin::Tui);
            assert_eq!(text, "hello there");
        }
        other => panic!("unexpected ops {other:?}"),
    }
    assert!(app.input.is_empty());
    // An empty box sends nothing.
    assert!(press(&mut app, key(KeyCode::Enter)).is_empty());
}

#[test]
fn shift_enter_alt_enter_and_ctrl_j_insert_newlines() {
    let mut app = app();
    type_text(&mut app, "a");
    assert!(press(&mut app, with(KeyCode::Enter, KeyModifiers::SHIFT)).is_empty());
    type_text(&mut app, "b");
    assert!(press(&mut app, with(KeyCode::Enter, KeyModifiers::ALT)).is_empty());
    type_text(&mut app, "c");
    press(&mut app, ctrl('j'));
    type_text(&mut app, "d");
    assert_eq!(app.input.text(), "a\nb\nc\nd");
    let sent = ops(press(&mut app, key(KeyCode::Enter)));
    assert!(matches!(&sent[..], [Op::UserMessage { text, .. }] if text == "a\nb\nc\nd"));
}

#[test]
fn paste_keeps_newlines_and_does_not_send() {
    let mut app = app();
    let effects = app.handle_event(TermEvent::Paste("line 1\r\nline 2".into()), Instant::now());
    assert!(effects.is_empty());
    assert_eq!(app.input.text(), "line 1\nline 2");
}

#[test]
fn up_and_down_recall_history_only_when_empty() {
    let mut app = app();
    for text in ["first", "second"] {
        type_text(&mut app, text);
        press(&mut app, key(KeyCode::Enter));
    }
    press(&mut app, key(KeyCode::Up));
    assert_eq!(app.input.text(), "second");
    press(&mut app, key(KeyCode::Up));
    assert_eq!(app.input.text(), "first");
    press(&mut app, key(KeyCode::Down));
    assert_eq!(app.input.text(), "second");
    press(&mut app, key(KeyCode::Down));
    assert!(app.input.is_empty());
    // With text typed, Up moves the cursor instead of replacing the text.
    type_text(&mut app, "draft");
    press(&mut app, key(KeyCode::Up));
    assert_eq!(app.input.text(), "draft");
}

#[test]
fn approval_keys_send_the_right_decision() {
    // `p` remembers a rule for good: it takes Enter after it.
    let cases: [(&[KeyCode], ReviewDecision); 5] = [
        (&[KeyCode::Char('y')], ReviewDecision::ApprovedOnce),
        (&[KeyCode::Char('a')], ReviewDecision::ApprovedForSession),
        (
            &[KeyCode::Char('p'), KeyCode::Enter],
            ReviewDecision::ApprovedAlways,
        ),
        (&[KeyCode::Char('n')], ReviewDecision::Denied),
        (&[KeyCode::Esc], ReviewDecision::Denied),
    ];
    for (codes, expected) in cases {
        let mut app = app();
        let effects = app.apply(ev(approval("ap-1", "ls -la")));
        assert!(matches!(effects.as_slice(), [Effect::Bell]), "{effects:?}");
        arm(&mut app);
        let sent: Vec<Op> = codes
            .iter()
            .flat_map(|code| ops(press(&mut app, key(*code))))
            .collect();
        match sent.as_slice() {
            [Op::ApprovalDecision { id, decision, by }] => {
                assert_eq!(id, "ap-1");
                assert_eq!(*decision, expected, "{codes:?}");
                assert_eq!(*by, Origin::Tui);
            }
            other => panic!("{codes:?}: unexpected ops {other:?}"),
        }
        assert!(app.approvals.is_empty());
    }
}

#[test]
fn the_modal_takes_every_key_and_queues_requests() {
    let mut app = app();
    app.apply(ev(approval("ap-1", "make")));
    app.apply(ev_from(
        "discord-1",
        Origin::Discord("general".into()),
        approval("ap-2", "rm -rf build"),
    ));
    assert_eq!(app.approvals.len(), 2);
    arm(&mut app);
    // Tab, zoom keys and Enter do nothing while it is open; a letter that
    // decides nothing is typing resumed, and goes to the input box.
    for k in [
        key(KeyCode::Tab),
        key(KeyCode::F(3)),
        key(KeyCode::Enter),
        key(KeyCode::Char('x')),
        key(KeyCode::Char('?')),
    ] {
        assert!(press(&mut app, k).is_empty());
    }
    assert_eq!(app.input.text(), "x?");
    assert_eq!(app.focus, Focus::Input);
    assert_eq!(app.zoom, None);
    assert_eq!(app.overlay, None);
    // Typing disarmed it: `y` is text until the keyboard was quiet again.
    assert!(press(&mut app, key(KeyCode::Char('y'))).is_empty());
    assert_eq!(app.input.text(), "x?y");
    arm(&mut app);
    let first = ops(press(&mut app, key(KeyCode::Char('y'))));
    assert!(matches!(&first[..], [Op::ApprovalDecision { id, .. }] if id == "ap-1"));
    // The next request shows; it came from Discord. It waits for its own
    // frame and quiet period: a second `y` right away is text.
    assert_eq!(
        app.approvals.current().map(|r| r.request.id.as_str()),
        Some("ap-2")
    );
    assert!(press(&mut app, key(KeyCode::Char('y'))).is_empty());
    arm(&mut app);
    let second = ops(press(&mut app, key(KeyCode::Char('n'))));
    assert!(
        matches!(&second[..], [Op::ApprovalDecision { id, decision: ReviewDecision::Denied, .. }] if id == "ap-2")
    );
    assert_eq!(app.input.text(), "x?yy");
}

#[test]
fn typing_when_a_request_arrives_stays_in_the_input_and_decides_nothing() {
    let mut app = app();
    type_text(&mut app, "anything else");
    app.apply(ev(approval("ap-1", "touch pwned.txt")));
    // Read before any frame showed the modal, then just after it.
    type_text(&mut app, " you");
    app.frame_drawn(Instant::now());
    type_text(&mut app, " need");
    assert!(app.approvals.len() == 1, "a key decided the request");
    assert_eq!(app.input.text(), "anything else you need");
    let s = screen(&app, 100, 30);
    assert!(s.contains("wait…"), "{s}");
}

#[test]
fn a_paste_under_the_modal_goes_to_the_input() {
    let mut app = app();
    app.apply(ev(approval("ap-1", "make")));
    arm(&mut app);
    let effects = app.handle_event(TermEvent::Paste("yes please".into()), Instant::now());
    assert!(effects.is_empty());
    assert_eq!(app.input.text(), "yes please");
    assert!(
        !app.approvals.is_armed(),
        "a paste restarts the quiet period"
    );
    assert_eq!(app.approvals.len(), 1);
}

#[test]
fn an_approval_decided_elsewhere_closes_quietly() {
    let mut app = app();
    app.apply(ev(approval("ap-1", "make")));
    let effects = app.apply(ev(EventKind::ApprovalDecision(ApprovalDecision {
        id: "ap-1".into(),
        decision: ReviewDecision::ApprovedOnce,
        by: "discord:general".into(),
    })));
    assert!(effects.is_empty());
    assert!(app.approvals.is_empty());
    // Keys work normally again.
    type_text(&mut app, "y");
    assert_eq!(app.input.text(), "y");
}

#[test]
fn ctrl_c_interrupts_a_running_turn_and_twice_quits() {
    let mut app = app();
    app.apply(ev(EventKind::TurnStarted(TurnStarted {
        text: "hi".into(),
        ..Default::default()
    })));
    let t0 = Instant::now();
    let first = app.handle_event(TermEvent::Key(ctrl('c')), t0);
    assert!(matches!(&ops(first)[..], [Op::Interrupt { session }] if session == SESSION));
    assert!(app.quit_armed());
    let second = app.handle_event(TermEvent::Key(ctrl('c')), t0 + Duration::from_millis(600));
    assert!(matches!(second.as_slice(), [Effect::Quit]));
}

#[test]
fn one_ctrl_c_never_quits_and_clears_the_input() {
    let mut app = app();
    type_text(&mut app, "half a thought");
    let t0 = Instant::now();
    assert!(app.handle_event(TermEvent::Key(ctrl('c')), t0).is_empty());
    assert!(app.input.is_empty());
    // The quit window closes after a second; the deadline says when.
    assert_eq!(app.next_deadline(), Some(t0 + Duration::from_secs(1)));
    app.tick(t0 + Duration::from_millis(1100));
    assert!(!app.quit_armed());
    assert_eq!(app.next_deadline(), None);
    let late = app.handle_event(TermEvent::Key(ctrl('c')), t0 + Duration::from_millis(1200));
    assert!(late.is_empty(), "a press after the window must not quit");
}

#[test]
fn slash_commands_become_ops_or_notices() {
    let mut app = app();
    let run = |app: &mut egirl::surfaces::tui::App, line: &str| {
        type_text(app, line);
        press(app, key(KeyCode::Enter))
    };
    let clear = ops(run(&mut app, "/clear"));
    assert!(
        matches!(&clear[..], [Op::Command { command: Command::Clear, session }] if session == SESSION)
    );
    let local = ops(run(&mut app, "/local"));
    assert!(matches!(
        &local[..],
        [Op::Command {
            command: Command::ForceTarget {
                target: Target::Local
            },
            ..
        }]
    ));
    let remote = ops(run(&mut app, "/remote"));
    assert!(matches!(
        &remote[..],
        [Op::Command {
            command: Command::ForceTarget {
                target: Target::Remote
            },
            ..
        }]
    ));
    // `/model` alone asks the core for the choices; `/model NAME` pins.
    let list = ops(run(&mut app, "/model"));
    assert!(matches!(
        &list[..],
        [Op::Command {
            command: Command::ListModels,
            ..
        }]
    ));
    let pin = ops(run(&mut app, "/model local.fast"));
    assert!(matches!(
        &pin[..],
        [Op::Command { command: Command::PinModel { model }, .. }] if model == "local.fast"
    ));
    // A command that is not implemented is not listed either.
    assert!(run(&mut app, "/frobnicate").is_empty());
    let last = app.conversation.entries.last().map(|e| e.text.clone());
    assert_eq!(
        last.as_deref(),
        Some(
            "unknown command /frobnicate: //frobnicate sends it as a message (or start with a space); /help lists the commands"
        )
    );
    // Nothing typed is lost: the unknown command stays in the box.
    assert_eq!(app.input.text(), "/frobnicate");
    app.input.clear();
    run(&mut app, "/help");
    assert_eq!(app.overlay, Some(Overlay::Help));
    press(&mut app, key(KeyCode::Esc));
    assert_eq!(app.overlay, None);
    let new = run(&mut app, "/new");
    assert!(new.is_empty());
    assert!(app.session.starts_with("tui-") && app.session != SESSION);
    assert!(matches!(run(&mut app, "/quit").as_slice(), [Effect::Quit]));
}

#[test]
fn tab_completes_commands_and_otherwise_cycles_focus() {
    let mut app = app();
    type_text(&mut app, "/the");
    press(&mut app, key(KeyCode::Tab));
    assert_eq!(app.input.text(), "/theme ");
    assert_eq!(app.focus, Focus::Input);
    app.input.clear();
    press(&mut app, key(KeyCode::Tab));
    assert_eq!(app.focus, Focus::Pane(Pane::Conversation));
    press(&mut app, key(KeyCode::Tab));
    assert_eq!(app.focus, Focus::Pane(Pane::Routing));
    press(&mut app, key(KeyCode::BackTab));
    press(&mut app, key(KeyCode::BackTab));
    assert_eq!(app.focus, Focus::Input);
    // Typing in a pane goes back to the input.
    press(&mut app, key(KeyCode::Tab));
    type_text(&mut app, "x");
    assert_eq!(app.focus, Focus::Input);
    assert_eq!(app.input.text(), "x");
}

#[test]
fn f_keys_and_alt_digits_zoom_and_unzoom() {
    let mut app = app();
    press(&mut app, key(KeyCode::F(3)));
    assert_eq!(app.zoom, Some(Pane::Tools));
    press(&mut app, key(KeyCode::F(3)));
    assert_eq!(app.zoom, None);
    press(&mut app, with(KeyCode::Char('5'), KeyModifiers::ALT));
    assert_eq!(app.zoom, Some(Pane::Stats));
    press(&mut app, key(KeyCode::Esc));
    assert_eq!(app.zoom, None);
}

#[test]
fn f12_toggles_mouse_capture() {
    let mut app = app();
    let off = press(&mut app, key(KeyCode::F(12)));
    assert!(matches!(off.as_slice(), [Effect::SetMouseCapture(false)]));
    let on = press(&mut app, key(KeyCode::F(12)));
    assert!(matches!(on.as_slice(), [Effect::SetMouseCapture(true)]));
}

#[test]
fn scrolling_up_unpins_and_end_pins_again() {
    let mut app = app();
    for i in 0..30 {
        apply_all(
            &mut app,
            turn(&format!("question {i}"), &format!("answer {i}")),
        );
    }
    let bottom = screen(&app, 80, 24);
    assert!(bottom.contains("answer 29"), "{bottom}");
    assert!(app.conversation_scroll.is_pinned());

    press(&mut app, key(KeyCode::PageUp));
    assert!(!app.conversation_scroll.is_pinned());
    let scrolled = screen(&app, 80, 24);
    assert!(!scrolled.contains("answer 29"), "{scrolled}");

    // A new message while scrolled up does not move the view; the
    // indicator says there is more below.
    apply_all(&mut app, turn("one more", "the newest answer"));
    let still = screen(&app, 80, 24);
    assert!(!still.contains("the newest answer"));
    assert!(still.contains("new messages below"), "{still}");

    press(&mut app, key(KeyCode::End));
    assert!(app.conversation_scroll.is_pinned());
    let back = screen(&app, 80, 24);
    assert!(back.contains("the newest answer"));
    assert!(!back.contains("new messages below"));

    // Sending always returns to the bottom.
    press(&mut app, key(KeyCode::PageUp));
    type_text(&mut app, "hi");
    press(&mut app, key(KeyCode::Enter));
    assert!(app.conversation_scroll.is_pinned());
}

#[test]
fn a_long_transcript_keeps_few_rendered_entries_and_scrolls_through_all() {
    let mut app = app();
    for i in 0..300 {
        let answer = format!("answer {i}\n\n```rust\nfn f{i}() {{}}\n```\n\nend of {i}");
        apply_all(&mut app, turn(&format!("question {i}"), &answer));
    }
    let bottom = screen(&app, 80, 24);
    assert!(bottom.contains("end of 299"), "{bottom}");
    // Pinned, only the entries at the bottom were rendered (of 600).
    let kept = app.conversation.entries_with_lines();
    assert!(kept <= 40, "{kept} entries hold lines");

    // Paging up measures the whole transcript; paging back down lands
    // on the same bottom screen.
    for _ in 0..5 {
        press(&mut app, key(KeyCode::PageUp));
        screen(&app, 80, 24);
    }
    let up = screen(&app, 80, 24);
    assert!(
        !up.contains("end of 299") && up.contains("answer 29"),
        "{up}"
    );
    for _ in 0..5 {
        press(&mut app, key(KeyCode::PageDown));
        screen(&app, 80, 24);
    }
    assert!(app.conversation_scroll.is_pinned());
    assert_eq!(screen(&app, 80, 24), bottom);

    // Home shows the first message, End the last; lines stay bounded.
    press(&mut app, key(KeyCode::Home));
    let top = screen(&app, 80, 24);
    assert!(
        top.contains("question 0") && top.contains("answer 0"),
        "{top}"
    );
    let kept = app.conversation.entries_with_lines();
    assert!(kept <= 40, "{kept} entries hold lines");
    press(&mut app, key(KeyCode::End));
    assert_eq!(screen(&app, 80, 24), bottom);
}

#[test]
fn streaming_mirrors_every_session_with_its_origin() {
    let mut app = app();
    let discord = Origin::Discord("general".into());
    app.apply(ev(EventKind::TurnStarted(TurnStarted {
        text: "local q".into(),
        ..Default::default()
    })));
    app.apply(ev_from(
        "discord-1",
        discord.clone(),
        EventKind::TurnStarted(TurnStarted {
            text: "discord q".into(),
            ..Default::default()
        }),
    ));
    // Deltas of two sessions interleave; each lands in its own message.
    for (s, o, t) in [
        (SESSION, Origin::Tui, "tui "),
        ("discord-1", discord.clone(), "dis"),
        (SESSION, Origin::Tui, "answer"),
        ("discord-1", discord.clone(), "cord answer"),
    ] {
        app.apply(ev_from(
            s,
            o,
            EventKind::Delta(AnswerDelta { text: t.into() }),
        ));
    }
    let texts: Vec<&str> = app
        .conversation
        .entries
        .iter()
        .map(|e| e.text.as_str())
        .collect();
    assert_eq!(
        texts,
        ["local q", "discord q", "tui answer", "discord answer"]
    );
    let shown = screen(&app, 100, 30);
    assert!(shown.contains("Discord #general"), "{shown}");
    // The Discord turn does not make the TUI session look busy... but
    // the TUI's own turn does.
    assert!(app.busy());
    app.apply(ev(EventKind::TurnEnded(TurnEnded { interrupted: true })));
    assert!(!app.busy());
    assert_eq!(
        app.conversation.entries.last().map(|e| e.text.as_str()),
        Some("interrupted")
    );
}

#[test]
fn ctrl_o_expands_tool_calls() {
    let mut app = app();
    apply_all(
        &mut app,
        [
            ev(EventKind::ToolCall(ToolCallEvent {
                id: "c1".into(),
                name: "read_file".into(),
                arguments: serde_json::json!({"path": "notes.md"}),
                sandbox: None,
            })),
            ev(EventKind::ToolResult(ToolResultEvent {
                id: "c1".into(),
                name: "read_file".into(),
                success: true,
                output: "line one\nline two\nline three\nline four".into(),
                duration_ms: 3,
                diff: None,
            })),
        ],
    );
    let collapsed = screen(&app, 100, 30);
    assert!(
        collapsed.contains("read_file notes.md · ✓ ok · 3 ms"),
        "{collapsed}"
    );
    assert!(!collapsed.contains("line four"));
    press(&mut app, ctrl('o'));
    let expanded = screen(&app, 100, 30);
    assert!(expanded.contains("line four"), "{expanded}");
}
