//! `/rewind`, `/fork` and search in the TUI: the picker lists the
//! session's user messages from its transcript and sends the one chosen;
//! the core's `rewound` reloads the conversation and gives the message
//! back to the input box; `forked` moves the input to the copy; `/find`
//! and Ctrl+F highlight matches, n / N jump, Esc leaves.

use std::path::Path;

use chrono::{Duration as Minutes, Utc};
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use egirl::chat::ChatMessage;
use egirl::protocol::{Command, Event, EventKind, Forked, Op, Origin, Rewound, SubmissionId};
use egirl::sessions::{Mark, Record, Transcript};
use egirl::surfaces::tui::Focus;
use insta::assert_snapshot;

use super::*;

const ASKED: [&str; 3] = [
    "rename the config loader",
    "now add a test for the theme switch",
    "run the formatter",
];

/// A transcript of three turns, written five and a half minutes ago (so
/// the picker's "ago" column reads 5m however long the test takes).
fn write_session(dir: &Path, id: &str) {
    let (mut t, _) = Transcript::open(dir, id).unwrap();
    let at = Utc::now() - Minutes::seconds(330);
    for (i, asked) in ASKED.iter().enumerate() {
        for (typed, message) in [
            (
                Some(asked.to_string()),
                ChatMessage::user(format!("[time] {asked}")),
            ),
            (
                None,
                ChatMessage::assistant(format!("done with step {}", i + 1)),
            ),
        ] {
            t.append(&Record {
                ts: at,
                origin: Origin::Tui,
                typed,
                provider: None,
                message,
                compaction: None,
                details: Default::default(),
            })
            .unwrap();
        }
    }
}

fn resumed(dir: &Path) -> App {
    write_session(dir, SESSION);
    let mut app = app();
    app.sessions_dir = Some(dir.join("sessions"));
    let records = egirl::sessions::load(&Transcript::path(dir, SESSION)).unwrap();
    app.load_history(SESSION, &records);
    app
}

fn ctrl(c: char) -> KeyEvent {
    KeyEvent::new(KeyCode::Char(c), KeyModifiers::CONTROL)
}

#[test]
fn the_rewind_picker_lists_user_messages_and_sends_the_chosen_turn() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = resumed(dir.path());
    type_text(&mut app, "/rewind");
    assert!(ops(press(&mut app, key(KeyCode::Enter))).is_empty());
    assert!(app.rewind.is_some());
    assert_snapshot!("rewind_picker", screen(&app, 100, 30));
    // Typing does not reach the input box while it is open.
    press(&mut app, key(KeyCode::Char('x')));
    assert!(app.input.is_empty());
    press(&mut app, key(KeyCode::Up));
    let sent = ops(press(&mut app, key(KeyCode::Enter)));
    assert!(app.rewind.is_none());
    match sent.as_slice() {
        [
            Op::Command {
                session,
                command: Command::Rewind { turn: 2 },
            },
        ] => assert_eq!(session, SESSION),
        other => panic!("{other:?}"),
    }
    // Esc closes without sending.
    type_text(&mut app, "/rewind");
    press(&mut app, key(KeyCode::Enter));
    assert!(ops(press(&mut app, key(KeyCode::Esc))).is_empty());
    assert!(app.rewind.is_none());
}

#[test]
fn rewound_reloads_the_conversation_and_gives_the_message_back() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = resumed(dir.path());
    // The core's rewind: a mark in the transcript, then the event.
    let (mut t, _) = Transcript::open(dir.path(), SESSION).unwrap();
    t.append_mark(Mark::Rewound { keep: 2, turn: 2 }).unwrap();
    apply_all(
        &mut app,
        [ev(EventKind::Rewound(Rewound {
            turn: 2,
            text: ASKED[1].into(),
            dropped_messages: 4,
            restored: vec!["src/config.rs".into()],
            removed: vec!["tests/theme.rs".into()],
            not_restored: Vec::new(),
            untracked: Some("1 command ran since; commands' changes are not undone".into()),
            not_kept: None,
        }))],
    );
    assert_eq!(app.input.text(), ASKED[1]);
    let screen = screen(&app, 100, 30);
    assert!(screen.contains(ASKED[0]), "{screen}");
    assert!(!screen.contains(ASKED[2]), "{screen}");
    assert_snapshot!("rewound_notice", screen);
}

#[test]
fn fork_sends_the_command_and_forked_moves_the_input_to_the_copy() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = resumed(dir.path());
    type_text(&mut app, "/fork");
    let sent = ops(press(&mut app, key(KeyCode::Enter)));
    assert!(
        matches!(sent.as_slice(), [Op::Command { command: Command::Fork, session }] if session == SESSION),
        "{sent:?}"
    );
    egirl::sessions::fork(dir.path(), SESSION, "fork-1").unwrap();
    apply_all(
        &mut app,
        [ev(EventKind::Forked(Forked {
            new_session: "fork-1".into(),
        }))],
    );
    assert_eq!(app.session, "fork-1");
    let screen = screen(&app, 100, 30);
    assert!(screen.contains("forked tui-test into fork-1"), "{screen}");
}

#[test]
fn find_highlights_matches_and_n_jumps_between_them() {
    let mut app = app();
    for (i, asked) in ASKED.iter().enumerate() {
        apply_all(
            &mut app,
            turn(asked, &format!("Step {} of the Theme work.", i + 1)),
        );
    }
    // Ctrl+F starts the command in the input box.
    press(&mut app, ctrl('f'));
    assert_eq!(app.input.text(), "/find ");
    type_text(&mut app, "theme");
    press(&mut app, key(KeyCode::Enter));
    let search = app.search.clone().expect("a search");
    // Four messages hold it (a question and three answers): the newest is current.
    assert_eq!(search.hits.len(), 4);
    assert_eq!(search.current, 3);
    let buf = buffer(&app, 100, 30);
    assert_snapshot!("search_highlights", text(&buf));
    let rows: Vec<u16> = text(&buf)
        .lines()
        .enumerate()
        .filter(|(_, l)| l.to_lowercase().contains("theme"))
        .map(|(y, _)| y as u16)
        .collect();
    let first = *rows.first().unwrap();
    let last = *rows.last().unwrap();
    assert_snapshot!("search_highlight_styles", styles(&buf, first..last + 1));
    press(&mut app, key(KeyCode::Char('N')));
    assert_eq!(app.search.as_ref().unwrap().current, 2);
    press(&mut app, key(KeyCode::Char('n')));
    press(&mut app, key(KeyCode::Char('n')));
    assert_eq!(app.search.as_ref().unwrap().current, 0, "wraps around");
    assert_eq!(app.focus, Focus::Input);
    press(&mut app, key(KeyCode::Esc));
    assert!(app.search.is_none());
    assert!(!screen(&app, 100, 30).contains("n/N jump"));
}

#[test]
fn typing_leaves_the_search_and_a_missing_text_says_so() {
    let mut app = app();
    apply_all(&mut app, turn("hello", "world"));
    type_text(&mut app, "/find world");
    press(&mut app, key(KeyCode::Enter));
    assert!(app.search.is_some());
    type_text(&mut app, "ok");
    assert!(app.search.is_none());
    assert_eq!(app.input.text(), "ok");
    app.input.clear();
    type_text(&mut app, "/find nowhere");
    press(&mut app, key(KeyCode::Enter));
    assert!(app.search.is_none());
    assert!(screen(&app, 100, 30).contains("\"nowhere\" is not in the conversation"));
}

#[test]
fn n_scrolls_a_long_conversation_to_an_earlier_match() {
    let mut app = app();
    apply_all(&mut app, turn("where is the needle?", "Here: the NEEDLE."));
    for i in 0..40 {
        apply_all(&mut app, turn(&format!("filler {i}"), "more filler text"));
    }
    apply_all(&mut app, turn("and again", "a second needle"));
    // A first draw records the conversation's width.
    assert!(!screen(&app, 100, 30).contains("where is the needle?"));
    type_text(&mut app, "/find needle");
    press(&mut app, key(KeyCode::Enter));
    press(&mut app, key(KeyCode::Char('n')));
    let shown = screen(&app, 100, 30);
    assert!(shown.contains("where is the needle?"), "{shown}");
}

#[test]
fn forked_moves_only_for_the_fork_this_tui_asked_for() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = resumed(dir.path());
    type_text(&mut app, "/fork");
    let effects = press(&mut app, key(KeyCode::Enter));
    let ours = effects
        .iter()
        .find_map(|e| match e {
            Effect::Submit(s) => Some(s.id.clone()),
            _ => None,
        })
        .expect("the fork submitted");
    egirl::sessions::fork(dir.path(), SESSION, "fork-1").unwrap();
    egirl::sessions::fork(dir.path(), SESSION, "fork-2").unwrap();
    let forked = |id: &str, new_session: &str| Event {
        submission: Some(SubmissionId(id.into())),
        ..ev(EventKind::Forked(Forked {
            new_session: new_session.into(),
        }))
    };
    // Another surface's fork of the shown session: noted, not followed.
    app.apply(forked("someone-else", "fork-2"));
    assert_eq!(app.session, SESSION);
    app.apply(forked(&ours.0, "fork-1"));
    assert_eq!(app.session, "fork-1");
}
