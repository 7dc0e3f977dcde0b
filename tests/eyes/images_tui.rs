//! Pictures in the TUI: a pasted or typed path to an image file becomes a
//! chip in the input and goes with the message as an image part; the
//! conversation shows the chip, and Ctrl+O on the message expands it to
//! the path.

use std::time::Instant;

use crossterm::event::{Event as TermEvent, KeyCode, KeyEvent, KeyModifiers};
use egirl::protocol::{EventKind, Op, TurnStarted};

use super::images::png;
use crate::tui::{app, ev, key, ops, press, screen, type_text};

/// The TUI's app with a store in a temp workspace, and a picture there.
fn app_with_picture(dir: &std::path::Path) -> (egirl::surfaces::tui::App, std::path::PathBuf) {
    let mut app = app();
    app.image_store = Some(egirl::images::Store {
        workspace: dir.join("ws"),
        limits: egirl::images::Limits::default(),
    });
    let picture = dir.join("shot.png");
    std::fs::write(&picture, png(1280, 720)).expect("picture");
    (app, picture)
}

#[test]
fn a_pasted_path_becomes_a_chip_and_is_sent_as_an_image() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (mut app, picture) = app_with_picture(dir.path());
    let pasted = format!("'{}'", picture.display());
    app.handle_event(TermEvent::Paste(pasted), Instant::now());
    assert_eq!(app.input.text(), "", "the path is not typed in");
    assert_eq!(app.input.images.len(), 1);
    let shown = screen(&app, 100, 30);
    assert!(shown.contains("[image 1280x720 png"), "{shown}");

    type_text(&mut app, "what is this?");
    let sent = ops(press(&mut app, key(KeyCode::Enter)));
    let [Op::UserMessage { text, images, .. }] = &sent[..] else {
        panic!("one message: {sent:?}");
    };
    assert_eq!(text, "what is this?");
    assert_eq!(images.len(), 1);
    assert_eq!((images[0].width, images[0].height), (1280, 720));
    let stored = egirl::images::path(&dir.path().join("ws"), &images[0]);
    assert!(stored.is_file(), "{}", stored.display());
    assert!(app.input.images.is_empty());
}

#[test]
fn a_typed_path_alone_on_a_line_is_attached_and_backspace_takes_a_chip_off() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (mut app, picture) = app_with_picture(dir.path());
    // Backspace in an empty input removes the last chip.
    app.handle_event(
        TermEvent::Paste(picture.display().to_string()),
        Instant::now(),
    );
    assert_eq!(app.input.images.len(), 1);
    press(&mut app, key(KeyCode::Backspace));
    assert!(app.input.images.is_empty());

    app.input
        .insert(&format!("describe this\n{}", picture.display()));
    let sent = ops(press(&mut app, key(KeyCode::Enter)));
    let [Op::UserMessage { text, images, .. }] = &sent[..] else {
        panic!("one message: {sent:?}");
    };
    assert_eq!(text, "describe this");
    assert_eq!(images.len(), 1);
    // A path inside a sentence stays text.
    app.input
        .insert(&format!("compare with {}", picture.display()));
    let sent = ops(press(&mut app, key(KeyCode::Enter)));
    assert!(matches!(&sent[..], [Op::UserMessage { images, .. }] if images.is_empty()));
}

#[test]
fn the_conversation_shows_the_chip_and_ctrl_o_expands_it_to_the_path() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (mut app, picture) = app_with_picture(dir.path());
    let store = app.image_store.clone().expect("store");
    let part = store
        .put_file(&picture, "~/shots/shot.png")
        .expect("stored");
    app.apply(ev(EventKind::TurnStarted(TurnStarted {
        text: "look".into(),
        images: vec![part],
    })));
    let shown = screen(&app, 100, 30);
    assert!(shown.contains("[image 1280x720 png"), "{shown}");
    assert!(!shown.contains("~/shots/shot.png"), "{shown}");
    let ctrl_o = KeyEvent::new(KeyCode::Char('o'), KeyModifiers::CONTROL);
    press(&mut app, ctrl_o);
    let shown = screen(&app, 100, 30);
    assert!(shown.contains("~/shots/shot.png"), "{shown}");
}
