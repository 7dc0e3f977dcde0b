//! A compaction on screen: a divider in the conversation saying what was
//! replaced, the summary under it once expanded (Ctrl+O), `/compact KEEP`
//! sent as an op, and a resumed transcript showing the divider again.

use crossterm::event::{KeyCode, KeyModifiers};
use egirl::protocol::{Command, Compacted, EventKind, FinalAnswer, Op, TurnEnded, TurnStarted};
use insta::assert_snapshot;

use super::*;

const SUMMARY: &str = "- The user is planning a trip to Lisbon in May.\n- Booked: flights; open: a hotel near Alfama.";

fn compacted() -> App {
    let mut app = app();
    apply_all(
        &mut app,
        turn("plan my trip to Lisbon", "Flights are booked."),
    );
    apply_all(
        &mut app,
        [
            ev(EventKind::TurnStarted(TurnStarted {
                text: "and the hotel?".into(),
                ..Default::default()
            })),
            ev(EventKind::Compaction(Compacted {
                before_tokens: 6100,
                after_tokens: 912,
                summarized_messages: 42,
                model: "qwen3-8b".into(),
                summary: SUMMARY.into(),
            })),
            ev(EventKind::Final(FinalAnswer {
                text: "Looking near Alfama.".into(),
            })),
            ev(EventKind::TurnEnded(TurnEnded { interrupted: false })),
        ],
    );
    app
}

#[test]
fn a_compaction_is_a_divider_with_the_summary_behind_ctrl_o() {
    let mut app = compacted();
    let collapsed = screen(&app, 130, 24);
    assert!(
        collapsed.contains("── compacted 42 messages, 6.1k → 912 tokens (Ctrl+O: summary) ──"),
        "{collapsed}"
    );
    assert!(!collapsed.contains("│ - The user"), "{collapsed}");
    // Too narrow for the rule: the words wrap, nothing is cut.
    let narrow = screen(&app, 60, 24);
    assert!(narrow.contains("── compacted 42 messages,"), "{narrow}");
    assert!(narrow.contains("summary)"), "{narrow}");
    assert_snapshot!("compaction_collapsed", collapsed);
    press(
        &mut app,
        KeyEvent::new(KeyCode::Char('o'), KeyModifiers::CONTROL),
    );
    let expanded = screen(&app, 130, 24);
    assert!(
        expanded.contains("│ - The user is planning a trip to Lisbon in May."),
        "{expanded}"
    );
    assert!(!expanded.contains("(Ctrl+O: summary)"), "{expanded}");
    assert_snapshot!("compaction_expanded", expanded);
}

#[test]
fn compact_command_sends_what_to_keep() {
    let mut app = app();
    // Nothing said yet: nothing to send.
    type_text(&mut app, "/compact");
    assert!(ops(press(&mut app, key(KeyCode::Enter))).is_empty());
    assert!(screen(&app, 130, 24).contains("nothing to compact yet"));
    apply_all(&mut app, turn("plan my trip", "Sure."));
    type_text(&mut app, "/compact the hotel names");
    let sent = ops(press(&mut app, key(KeyCode::Enter)));
    assert!(
        matches!(
            sent.as_slice(),
            [Op::Command {
                command: Command::Compact { focus: Some(keep), .. },
                ..
            }] if keep == "the hotel names"
        ),
        "{sent:?}"
    );
    type_text(&mut app, "/compact");
    let sent = ops(press(&mut app, key(KeyCode::Enter)));
    assert!(
        matches!(
            sent.as_slice(),
            [Op::Command {
                command: Command::Compact { focus: None, .. },
                ..
            }]
        ),
        "{sent:?}"
    );
}

#[test]
fn a_resumed_session_shows_where_it_was_compacted() {
    use egirl::chat::ChatMessage;
    use egirl::protocol::Origin;
    use egirl::sessions::{Compaction, Record};
    let record = |message, compaction| Record {
        ts: chrono::Utc::now(),
        origin: Origin::Tui,
        typed: None,
        provider: None,
        message,
        compaction,
        details: Default::default(),
    };
    let records = vec![
        record(ChatMessage::user("plan my trip to Lisbon"), None),
        record(ChatMessage::assistant("Flights are booked."), None),
        record(ChatMessage::user("and the hotel?"), None),
        record(
            ChatMessage::system(SUMMARY),
            Some(Compaction {
                kept: 1,
                summarized_messages: 2,
                before_tokens: 3200,
                after_tokens: 700,
                model: "qwen3-8b".into(),
            }),
        ),
    ];
    let mut app = app();
    app.load_history(SESSION, &records);
    let shown = screen(&app, 130, 24);
    assert!(
        shown.contains("── compacted 2 messages, 3.2k → 700 tokens"),
        "{shown}"
    );
    // The summary is not shown as something the user typed.
    assert!(!shown.contains("Booked: flights"), "{shown}");
    assert!(shown.contains("resumed tui-test: 4 messages"), "{shown}");
}
