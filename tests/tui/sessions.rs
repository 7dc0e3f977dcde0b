//! Sessions in the TUI: the picker (origin, last activity, unread) points
//! the input at a Discord conversation, Ctrl+T filters the conversation,
//! and a resumed or picked transcript shows as it was.

use std::time::{Duration, SystemTime};

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use egirl::chat::{ChatMessage, ToolCall};
use egirl::protocol::{EventKind, FinalAnswer, Op, Origin, TurnEnded, TurnStarted};
use egirl::sessions::{Record, Transcript};
use egirl::surfaces::tui::Overlay;

use super::*;

fn ctrl(c: char) -> KeyEvent {
    KeyEvent::new(KeyCode::Char(c), KeyModifiers::CONTROL)
}

fn discord() -> Origin {
    Origin::Discord("general".into())
}

/// A Discord question answered, and a cron job that ran.
fn other_sessions(app: &mut App) {
    apply_all(
        app,
        [
            ev_from(
                "discord-general",
                discord(),
                EventKind::TurnStarted(TurnStarted {
                    text: "is the build green?".into(),
                    ..Default::default()
                }),
            ),
            ev_from(
                "discord-general",
                discord(),
                EventKind::Final(FinalAnswer {
                    text: "Yes: 141 tests passed.".into(),
                }),
            ),
            ev_from(
                "discord-general",
                discord(),
                EventKind::TurnEnded(TurnEnded { interrupted: false }),
            ),
            ev_from(
                "cron-daily",
                Origin::Cron("daily".into()),
                EventKind::Final(FinalAnswer {
                    text: "Daily summary written.".into(),
                }),
            ),
        ],
    );
}

fn select(app: &mut App, id: &str) {
    press(app, key(KeyCode::Home));
    for _ in 0..app.picker.rows.len() {
        if app.picker.rows[app.picker.selected].id == id {
            return;
        }
        press(app, key(KeyCode::Down));
    }
    panic!("{id} is not in the picker: {:?}", app.picker.rows);
}

#[test]
fn the_picker_points_the_input_at_a_discord_conversation() {
    let mut app = app();
    apply_all(&mut app, turn("hello", "Hi!"));
    other_sessions(&mut app);
    press(&mut app, ctrl('s'));
    assert_eq!(app.overlay, Some(Overlay::Sessions));
    let row = |app: &App, id: &str| {
        app.picker
            .rows
            .iter()
            .find(|r| r.id == id)
            .cloned()
            .expect("row")
    };
    assert_eq!(app.picker.rows.len(), 3);
    let d = row(&app, "discord-general");
    assert_eq!((d.origin.clone(), d.unread, d.live), (discord(), 2, true));
    assert_eq!(row(&app, SESSION).unread, 0);

    // Fixed times so the snapshot does not depend on the clock.
    let now = SystemTime::now();
    for (i, r) in app.picker.rows.iter_mut().enumerate() {
        r.last_activity = Some(now - Duration::from_secs(60 * (5 * i as u64 + 1)));
    }
    insta::assert_snapshot!("session_picker", screen(&app, 120, 30));

    select(&mut app, "discord-general");
    press(&mut app, key(KeyCode::Enter));
    assert_eq!(app.overlay, None);
    assert_eq!(app.session, "discord-general");
    assert_eq!(app.sessions["discord-general"].unread, 0);
    // The status line says where the input goes.
    let shown = screen(&app, 160, 30);
    assert!(
        shown.contains("→ Discord #general · discord-general"),
        "{shown}"
    );

    type_text(&mut app, "on it, deploying now");
    let sent = ops(press(&mut app, key(KeyCode::Enter)));
    assert!(
        matches!(sent.as_slice(), [Op::UserMessage { session, origin: Origin::Tui, text, .. }]
            if session == "discord-general" && text == "on it, deploying now"),
        "{sent:?}"
    );
    // Ctrl+C now interrupts the Discord turn the user started.
    app.apply(ev_from(
        "discord-general",
        discord(),
        EventKind::TurnStarted(TurnStarted {
            text: "on it, deploying now".into(),
            ..Default::default()
        }),
    ));
    let interrupt = ops(press(&mut app, ctrl('c')));
    assert!(
        matches!(interrupt.as_slice(), [Op::Interrupt { session }] if session == "discord-general"),
        "{interrupt:?}"
    );
}

#[test]
fn esc_closes_the_picker_and_slash_sessions_opens_it() {
    let mut app = app();
    type_text(&mut app, "/sessions");
    press(&mut app, key(KeyCode::Enter));
    assert_eq!(app.overlay, Some(Overlay::Sessions));
    // Keys move the selection, they do not reach the input.
    press(&mut app, key(KeyCode::Char('x')));
    press(&mut app, key(KeyCode::Esc));
    assert_eq!(app.overlay, None);
    assert_eq!(app.session, SESSION);
    assert!(app.input.is_empty());
}

/// Ctrl+T shows only the session the input goes to, or all of them; which
/// one that is, the picker decides, and the view follows it (issue 33,
/// defect 3: the view and the input never point at different sessions).
#[test]
fn ctrl_t_shows_the_inputs_session_or_all() {
    let mut app = app();
    apply_all(&mut app, turn("hello", "Hi from the desk!"));
    other_sessions(&mut app);
    let all = screen(&app, 120, 30);
    assert!(all.contains("Hi from the desk!") && all.contains("141 tests passed"));
    assert!(all.contains("all 3 sessions"), "{all}");

    press(&mut app, ctrl('t'));
    assert_eq!(app.filter(), Some(&SESSION.to_string()));
    let shown = screen(&app, 120, 30);
    assert!(
        shown.contains(&format!("only TUI · {SESSION} · Ctrl+T")),
        "{shown}"
    );
    assert!(shown.contains("Hi from the desk!") && !shown.contains("141 tests passed"));

    // Pointing the input at Discord moves the view with it.
    press(&mut app, ctrl('s'));
    select(&mut app, "discord-general");
    press(&mut app, key(KeyCode::Enter));
    assert_eq!(app.filter(), Some(&"discord-general".to_string()));
    let shown = screen(&app, 120, 30);
    assert!(shown.contains("141 tests passed") && !shown.contains("Hi from the desk!"));
    press(&mut app, ctrl('t'));
    assert_eq!(app.filter(), None);
    assert_eq!(app.session, "discord-general", "Ctrl+T moves only the view");

    // A message in a hidden session does not move the view or claim to be
    // new below; it counts as unread.
    press(&mut app, ctrl('t'));
    let before = app.sessions["cron-daily"].unread;
    app.apply(ev_from(
        "cron-daily",
        Origin::Cron("daily".into()),
        EventKind::Final(FinalAnswer {
            text: "later".into(),
        }),
    ));
    assert!(!app.conversation_scroll.unseen);
    assert_eq!(app.sessions["cron-daily"].unread, before + 1);
}

fn record(origin: Origin, message: ChatMessage) -> Record {
    Record {
        ts: chrono::Utc::now(),
        origin,
        typed: None,
        provider: None,
        message,
        compaction: None,
        details: Default::default(),
    }
}

/// A transcript with a question, a tool call and its result, the answer.
fn write_transcript(dir: &std::path::Path, id: &str, origin: Origin) {
    let (mut t, _) = Transcript::open(dir, id).expect("open transcript");
    let call = ToolCall {
        id: "call-1".into(),
        name: "read_file".into(),
        arguments: serde_json::json!({"path": "notes/todo.md"}),
        arguments_error: None,
    };
    let mut asks = ChatMessage::assistant("");
    asks.tool_calls = vec![call.clone()];
    for m in [
        ChatMessage::user("what is on my list?"),
        asks,
        ChatMessage::tool_result(&call, "- renew passport\n- call mom"),
        ChatMessage::assistant("Two things: **renew your passport** and call your mom."),
    ] {
        t.append(&record(origin.clone(), m)).expect("append");
    }
}

#[test]
fn a_resumed_session_shows_its_transcript() {
    let dir = tempfile::tempdir().expect("tempdir");
    write_transcript(dir.path(), SESSION, Origin::Tui);
    let records =
        egirl::sessions::load(&Transcript::path(dir.path(), SESSION)).expect("load transcript");
    let mut app = app();
    app.load_history(SESSION, &records);
    let shown = screen(&app, 120, 30);
    for want in [
        "what is on my list?",
        "read_file",
        "notes/todo.md",
        "Two things: renew your passport and call your mom.",
        "resumed tui-test: 4 messages",
    ] {
        assert!(shown.contains(want), "{want}: {shown}");
    }
    // The tool's saved output is there for the expanded view.
    let tool = app.tools.iter().next().expect("tool record");
    assert_eq!(tool.output, "- renew passport\n- call mom");
}

#[test]
fn picking_a_transcript_on_disk_loads_it_and_sends_there() {
    let dir = tempfile::tempdir().expect("tempdir");
    write_transcript(dir.path(), "discord-old", discord());
    let mut app = app();
    app.sessions_dir = Some(dir.path().join("sessions"));
    press(&mut app, ctrl('s'));
    let row = app
        .picker
        .rows
        .iter()
        .find(|r| r.id == "discord-old")
        .cloned()
        .expect("the transcript on disk is listed");
    assert_eq!((row.origin, row.live), (discord(), false));
    select(&mut app, "discord-old");
    press(&mut app, key(KeyCode::Enter));
    assert_eq!(app.session, "discord-old");
    assert_eq!(app.sessions["discord-old"].origin, discord());
    assert!(screen(&app, 120, 30).contains("renew your passport"));
    type_text(&mut app, "done both");
    let sent = ops(press(&mut app, key(KeyCode::Enter)));
    assert!(
        matches!(sent.as_slice(), [Op::UserMessage { session, .. }] if session == "discord-old"),
        "{sent:?}"
    );
}
