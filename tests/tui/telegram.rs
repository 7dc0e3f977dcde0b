//! Telegram in the TUI: a chat's turn mirrored under its badge, the status
//! line's `telegram ok`, and the picker pointing the input at the chat so
//! the desk answers it.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use egirl::protocol::{BotStatus, EventKind, FinalAnswer, Op, Origin, TurnEnded, TurnStarted};
use egirl::surfaces::tui::Overlay;

use super::*;

const CHAT: &str = "telegram-42";

fn telegram() -> Origin {
    Origin::Telegram("42".into())
}

/// A question from the owner's phone, answered.
fn telegram_turn(app: &mut App) {
    let from = |kind| ev_from(CHAT, telegram(), kind);
    apply_all(
        app,
        [
            from(EventKind::TurnStarted(TurnStarted {
                text: "remind me what's on the list".into(),
                ..Default::default()
            })),
            from(EventKind::Final(FinalAnswer {
                text: "Two things: call the bank and water the plants.".into(),
            })),
            from(EventKind::TurnEnded(TurnEnded { interrupted: false })),
        ],
    );
}

#[test]
fn the_status_line_shows_the_telegram_connection_only_when_there_is_a_bot() {
    let mut app = app();
    assert!(!screen(&app, 160, 30).contains("telegram"));
    for (state, shown) in [
        (BotStatus::Connecting, "telegram connecting…"),
        (BotStatus::Ready("egirl_bot".into()), "telegram ok"),
        (
            BotStatus::Reconnecting("cannot reach Telegram".into()),
            "telegram reconnecting…",
        ),
        (
            BotStatus::Stopped(egirl::surfaces::telegram::UNAUTHORIZED.into()),
            "telegram stopped: Telegram rejected the token",
        ),
    ] {
        app.status.telegram = state;
        let s = screen(&app, 160, 30);
        assert!(s.contains(shown), "{shown}: {s}");
    }
}

#[test]
fn a_telegram_chat_is_mirrored_and_answered_from_the_desk() {
    let mut app = app();
    app.status.telegram = BotStatus::Ready("egirl_bot".into());
    apply_all(&mut app, turn("hello", "Hi!"));
    telegram_turn(&mut app);
    let shown = screen(&app, 140, 24);
    assert!(shown.contains("Telegram 42"), "{shown}");
    assert!(shown.contains("telegram ok"), "{shown}");
    insta::assert_snapshot!("telegram_mirrored", shown);

    press(
        &mut app,
        KeyEvent::new(KeyCode::Char('s'), KeyModifiers::CONTROL),
    );
    assert_eq!(app.overlay, Some(Overlay::Sessions));
    let row = app
        .picker
        .rows
        .iter()
        .position(|r| r.id == CHAT)
        .expect("the chat is in the picker");
    assert_eq!(app.picker.rows[row].origin, telegram());
    let now = std::time::SystemTime::now();
    for (i, r) in app.picker.rows.iter_mut().enumerate() {
        r.last_activity = Some(now - std::time::Duration::from_secs(60 * (5 * i as u64 + 1)));
    }
    insta::assert_snapshot!("telegram_session_picker", screen(&app, 120, 20));

    press(&mut app, key(KeyCode::Home));
    for _ in 0..row {
        press(&mut app, key(KeyCode::Down));
    }
    press(&mut app, key(KeyCode::Enter));
    assert_eq!(app.session, CHAT);
    let shown = screen(&app, 160, 30);
    assert!(shown.contains("→ Telegram 42 · telegram-42"), "{shown}");
    type_text(&mut app, "done, both");
    let sent = ops(press(&mut app, key(KeyCode::Enter)));
    assert!(
        matches!(sent.as_slice(), [Op::UserMessage { session, origin: Origin::Tui, text, .. }]
            if session == CHAT && text == "done, both"),
        "{sent:?}"
    );
}
