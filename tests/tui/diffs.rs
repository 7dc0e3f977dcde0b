//! File diffs on screen: under a write_file/edit_file call, themed,
//! collapsed past a few lines until Ctrl+O, and +added/−removed in the
//! tools pane.

use crossterm::event::{KeyCode, KeyModifiers};
use egirl::protocol::{
    EventKind, FinalAnswer, ToolCallEvent, ToolResultEvent, TurnEnded, TurnStarted,
};
use egirl::tools::diff::between;
use insta::assert_snapshot;

use super::*;

const BEFORE: &str = "# Groceries\n\n- milk\n- eggs\n- bread\n- butter\n- coffee\n- rice\n- tea\n";
const AFTER: &str = "# Groceries\n\n- oat milk\n- eggs\n- bread\n- butter\n- coffee beans\n- rice\n- tea\n- apples\n";

/// A turn whose model edited a file: the call, its result with the diff
/// the core computed, the answer.
fn edited() -> App {
    let mut app = app();
    let diff = between("groceries.md", Some(BEFORE.as_bytes()), AFTER.as_bytes());
    apply_all(
        &mut app,
        [
            ev(EventKind::TurnStarted(TurnStarted {
                text: "oat milk, beans, and add apples".into(),
                ..Default::default()
            })),
            ev(EventKind::ToolCall(ToolCallEvent {
                id: "c1".into(),
                name: "write_file".into(),
                arguments: serde_json::json!({"path": "groceries.md", "content": AFTER}),
                sandbox: None,
            })),
            ev(EventKind::ToolResult(ToolResultEvent {
                id: "c1".into(),
                name: "write_file".into(),
                success: true,
                output: "overwrote groceries.md (10 lines, 86 bytes)".into(),
                duration_ms: 2,
                diff: Some(diff),
            })),
            ev(EventKind::Final(FinalAnswer {
                text: "Updated the list.".into(),
            })),
            ev(EventKind::TurnEnded(TurnEnded { interrupted: false })),
        ],
    );
    app
}

#[test]
fn a_diff_sits_under_its_call_collapsed_then_expanded_with_ctrl_o() {
    let mut app = edited();
    let buf = buffer(&app, 100, 30);
    let collapsed = text(&buf);
    assert!(
        collapsed.contains("write_file groceries.md · ✓ ok · 2 ms · +3 −2"),
        "{collapsed}"
    );
    assert!(collapsed.contains("-- milk") && collapsed.contains("+- oat milk"));
    assert!(
        collapsed.contains("… 7 more lines · Ctrl+O expands"),
        "{collapsed}"
    );
    assert!(!collapsed.contains("+- apples"));
    assert_snapshot!("diff_collapsed", collapsed);
    // Hunk header, removed, added and context lines in the theme's colors.
    let (first, x) = collapsed
        .lines()
        .enumerate()
        .find_map(|(y, l)| {
            let x = l.chars().position(|c| c == '@')?;
            Some((y as u16, x as u16))
        })
        .unwrap_or_default();
    assert_snapshot!("diff_collapsed_styles", styles(&buf, first..first + 7));
    let theme = &app.theme;
    assert_eq!(buf[(x, first)].fg, theme.diff_hunk);
    assert_eq!(buf[(x, first + 3)].fg, theme.diff_removed);
    assert_eq!(buf[(x, first + 4)].fg, theme.diff_added);

    let epoch = app.epoch;
    press(
        &mut app,
        KeyEvent::new(KeyCode::Char('o'), KeyModifiers::CONTROL),
    );
    // Expanding is no theme change: answers keep their rendered lines.
    assert_eq!(app.epoch, epoch);
    let expanded = screen(&app, 100, 40);
    assert!(expanded.contains("+- apples"), "{expanded}");
    assert!(!expanded.contains("more lines · Ctrl+O"), "{expanded}");
    assert_snapshot!("diff_expanded", expanded);

    press(
        &mut app,
        KeyEvent::new(KeyCode::Char('o'), KeyModifiers::CONTROL),
    );
    assert_eq!(screen(&app, 100, 30), collapsed);
}

#[test]
fn the_tools_pane_shows_added_and_removed_lines() {
    let mut app = edited();
    press(&mut app, key(KeyCode::F(3)));
    let s = screen(&app, 80, 12);
    assert!(s.contains("write_file ok · 2 ms · +3 −2"), "{s}");
    assert_snapshot!("diff_tools_pane", s);
}

#[test]
fn a_binary_file_says_so_instead_of_a_diff() {
    let mut app = app();
    let diff = between("logo.png", Some(b"\x89PNG\0\x01\x02"), b"text\n");
    apply_all(
        &mut app,
        [
            ev(EventKind::ToolCall(ToolCallEvent {
                id: "c1".into(),
                name: "write_file".into(),
                arguments: serde_json::json!({"path": "logo.png", "content": "text\n"}),
                sandbox: None,
            })),
            ev(EventKind::ToolResult(ToolResultEvent {
                id: "c1".into(),
                name: "write_file".into(),
                success: true,
                output: "overwrote logo.png (1 line, 5 bytes)".into(),
                duration_ms: 1,
                diff: Some(diff),
            })),
        ],
    );
    let s = screen(&app, 100, 20);
    assert!(
        s.contains("(no diff: binary or non-UTF-8 content, 7 → 5 bytes)"),
        "{s}"
    );
}
