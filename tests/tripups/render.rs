//! What the conversation draws: wide tables, wrapping, synchronized output,
//! why a tool failed, streaming markdown (defects 8, 12, 13 and the gaps).

use std::time::Instant;

use crossterm::event::{
    Event as TermEvent, KeyCode, KeyEvent, KeyModifiers, MouseButton, MouseEvent, MouseEventKind,
};
use egirl::protocol::{EventKind, ToolCallEvent, ToolResultEvent, TurnEnded, TurnStarted};
use egirl::surfaces::tui::{App, Effect, Focus, Pane};
use insta::assert_snapshot;

use crate::tui::{app, apply_all, ev, press, screen, turn};

/// Defect 12: a word longer than the line kept no space before it, so a
/// URL copied from the screen merged with the word before it.
#[test]
fn a_word_longer_than_the_line_keeps_the_space_before_it() {
    let mut app = app();
    let url = "https://example.com/a/very/long/path/that/cannot/fit/on/one/line/of/this/pane";
    let answer = format!("the docs live behind these spaces: {url} and nowhere else");
    apply_all(&mut app, turn("where are the docs?", &answer));
    let shown = screen(&app, 60, 24);
    assert!(shown.contains("spaces: https://"), "{shown}");
    assert!(!shown.contains("spaces:https"), "{shown}");
}

/// The rows of `shown` holding a table (its `│` separators), trimmed.
fn table_rows(shown: &str) -> Vec<String> {
    shown
        .lines()
        .filter(|l| l.contains(" │ ") || l.contains("─┼─"))
        .map(|l| l.trim_matches(|c: char| c == '│' || c == ' ').to_string())
        .collect()
}

/// Defect 8: every column was shrunk alike and cells cut with `…`; now a
/// narrow column keeps its width, the wide ones share the rest, and a
/// long cell wraps onto more rows: every word of it is on the screen.
#[test]
fn a_wide_table_keeps_narrow_columns_and_wraps_long_cells() {
    let mut app = app();
    let description = "a description long enough that no terminal column holds it on one \
                       line, with every word of it still readable after the wrap";
    let answer = format!(
        "| id | state | description |\n|---|---|---|\n| 1 | ok | {description} |\n| 22 | failed | short |\n"
    );
    apply_all(&mut app, turn("table please", &answer));
    let shown = screen(&app, 80, 30);
    let rows = table_rows(&shown);
    assert!(!shown.contains('…'), "a cell was cut:\n{shown}");
    // The narrow columns keep their content's width.
    assert!(
        rows.iter()
            .any(|r| r.starts_with("id │ state  │ description")),
        "{shown}"
    );
    assert!(
        rows.iter()
            .any(|r| r.starts_with("1  │ ok     │ a description")),
        "{shown}"
    );
    assert!(
        rows.iter().any(|r| r.starts_with("22 │ failed │ short")),
        "{shown}"
    );
    // Every word of the long cell is there, in order, over several rows.
    let cell: Vec<&str> = rows
        .iter()
        .filter_map(|r| r.rsplit(" │ ").next())
        .flat_map(|c| c.split_whitespace())
        .collect();
    let words: Vec<&str> = description.split_whitespace().collect();
    let at = cell
        .iter()
        .position(|w| *w == "a")
        .expect("the cell's first word");
    assert_eq!(&cell[at..at + words.len()], &words[..], "{shown}");
}

/// Defect 8, too many columns for the width: each row shows as a record
/// (`header: value`), nothing cut.
#[test]
fn a_table_with_more_columns_than_fit_shows_each_row_whole() {
    let mut app = app();
    let head: Vec<String> = (1..=12).map(|i| format!("column{i}")).collect();
    let row: Vec<String> = (1..=12).map(|i| format!("value-{i}-complete")).collect();
    let answer = format!(
        "| {} |\n|{}\n| {} |\n",
        head.join(" | "),
        "---|".repeat(12),
        row.join(" | ")
    );
    apply_all(&mut app, turn("wide", &answer));
    let shown = screen(&app, 60, 40);
    assert!(!shown.contains('…'), "a cell was cut:\n{shown}");
    for i in 1..=12 {
        assert!(
            shown.contains(&format!("column{i}: value-{i}-complete")),
            "{shown}"
        );
    }
}

/// Defect 13: every frame the real binary draws is bracketed by
/// synchronized output (`CSI ? 2026 h` … `CSI ? 2026 l`), so a terminal
/// never shows a frame half drawn (rows of the old frame beside the new).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_frame_of_the_binary_is_bracketed_by_synchronized_output() {
    use crate::support::fake_llama::{FakeLlama, Reply};
    use crate::tui::pty::Pty;

    let fake = FakeLlama::start().await;
    fake.push_replies([Reply::chunks(&["Hello ", "from ", "the fake ", "model."])]);
    let dir = crate::tui::pty::fake_model_dir(&fake);
    let mut pty = Pty::spawn(dir.path());
    pty.wait_for("Type a message").await;
    pty.send("hi\r");
    pty.wait_for("Hello from the fake model.").await;
    pty.send("\x03\x03");
    assert_eq!(pty.exit_code().await, Some(0));

    let raw = pty.raw();
    let (open, close) = (b"\x1b[?2026h".as_slice(), b"\x1b[?2026l".as_slice());
    let mut inside = false;
    let mut frames = 0;
    let mut drawn_outside = Vec::new();
    let mut i = 0;
    while i < raw.len() {
        if raw[i..].starts_with(open) {
            assert!(!inside, "a frame opened inside another at byte {i}");
            inside = true;
            i += open.len();
        } else if raw[i..].starts_with(close) {
            assert!(inside, "a frame closed that was not open at byte {i}");
            inside = false;
            frames += 1;
            i += close.len();
        } else {
            for what in ["Type a message", "Hello", "model."] {
                if raw[i..].starts_with(what.as_bytes()) && !inside {
                    drawn_outside.push(what);
                }
            }
            i += 1;
        }
    }
    assert!(frames >= 2, "no synchronized frame in {} bytes", raw.len());
    assert!(!inside, "the last frame was never closed");
    assert!(
        drawn_outside.is_empty(),
        "drawn outside a frame: {drawn_outside:?}"
    );
}

/// A turn in which the model called `calls` (name, arguments, success,
/// output), each finished.
fn called(calls: &[(&str, serde_json::Value, bool, &str)]) -> App {
    let mut app = app();
    let mut events = vec![ev(EventKind::TurnStarted(TurnStarted {
        text: "do the thing".into(),
        ..Default::default()
    }))];
    for (n, (name, arguments, success, output)) in calls.iter().enumerate() {
        let id = format!("c{n}");
        events.push(ev(EventKind::ToolCall(ToolCallEvent {
            id: id.clone(),
            name: (*name).into(),
            arguments: arguments.clone(),
            sandbox: None,
        })));
        events.push(ev(EventKind::ToolResult(ToolResultEvent {
            id,
            name: (*name).into(),
            success: *success,
            output: (*output).into(),
            duration_ms: 3,
            diff: None,
        })));
    }
    events.push(ev(EventKind::TurnEnded(TurnEnded { interrupted: false })));
    apply_all(&mut app, events);
    app
}

fn with(code: KeyCode, modifiers: KeyModifiers) -> KeyEvent {
    KeyEvent::new(code, modifiers)
}

fn click(app: &mut App, column: u16, row: u16) -> Vec<Effect> {
    let mouse = MouseEvent {
        kind: MouseEventKind::Down(MouseButton::Left),
        column,
        row,
        modifiers: KeyModifiers::NONE,
    };
    app.handle_event(TermEvent::Mouse(mouse), Instant::now())
}

/// Where `what` first shows on the screen: (column, row).
fn find(shown: &str, what: &str) -> (u16, u16) {
    shown
        .lines()
        .enumerate()
        .find_map(|(y, l)| {
            let x = l.find(what)?;
            Some((l[..x].chars().count() as u16, y as u16))
        })
        .unwrap_or_else(|| panic!("`{what}` is not on the screen:\n{shown}"))
}

/// Gap: why a call failed shows under its one-liner (the exit status and
/// the first line of stderr), dimmed, with nothing expanded.
#[test]
fn a_failed_call_says_why_under_its_one_liner() {
    let app = called(&[
        (
            "read_file",
            serde_json::json!({"path": "a.md"}),
            true,
            "alpha\nbeta",
        ),
        (
            "exec",
            serde_json::json!({"command": "touch /etc/x"}),
            false,
            "exit code 1 (0.0s)\n[stderr]\ntouch: cannot touch '/etc/x': Read-only file system\nsecond line",
        ),
    ]);
    let shown = screen(&app, 100, 30);
    assert!(
        shown.contains("exec touch /etc/x · ✗ failed · 3 ms"),
        "{shown}"
    );
    assert!(shown.contains("↳ exit code 1 (0.0s)"), "{shown}");
    assert!(
        shown.contains("↳ touch: cannot touch '/etc/x': Read-only file system"),
        "{shown}"
    );
    // One reason per call, two lines at most; the call that worked says nothing more.
    assert!(
        !shown.contains("↳ second line") && !shown.contains("│ beta"),
        "{shown}"
    );
    assert_snapshot!("failed_call_reason", shown);
}

/// Gap: Ctrl+O expands the selected call only (the newest by default);
/// Alt+Up picks the one before, marked `›`; Alt+O expands them all.
#[test]
fn ctrl_o_expands_the_selected_call_only() {
    let mut app = called(&[
        (
            "read_file",
            serde_json::json!({"path": "first.md"}),
            true,
            "first body",
        ),
        (
            "read_file",
            serde_json::json!({"path": "second.md"}),
            true,
            "second body",
        ),
    ]);
    press(&mut app, with(KeyCode::Char('o'), KeyModifiers::CONTROL));
    let shown = screen(&app, 100, 30);
    assert!(
        shown.contains("│ second body") && !shown.contains("│ first body"),
        "{shown}"
    );

    press(&mut app, with(KeyCode::Up, KeyModifiers::ALT));
    let shown = screen(&app, 100, 30);
    assert!(shown.contains("› ⚙ read_file first.md"), "{shown}");
    press(&mut app, with(KeyCode::Char('o'), KeyModifiers::CONTROL));
    let shown = screen(&app, 100, 30);
    assert!(
        shown.contains("│ first body") && shown.contains("│ second body"),
        "{shown}"
    );
    assert_snapshot!("ctrl_o_selected_item", shown);

    // Both fold again one by one; Alt+O opens every one at once, and
    // collapses them all again.
    press(&mut app, with(KeyCode::Char('o'), KeyModifiers::CONTROL));
    press(&mut app, with(KeyCode::Down, KeyModifiers::ALT));
    press(&mut app, with(KeyCode::Char('o'), KeyModifiers::CONTROL));
    let shown = screen(&app, 100, 30);
    assert!(
        !shown.contains("│ first body") && !shown.contains("│ second body"),
        "{shown}"
    );
    press(&mut app, with(KeyCode::Char('o'), KeyModifiers::ALT));
    let shown = screen(&app, 100, 30);
    assert!(
        shown.contains("│ first body") && shown.contains("│ second body"),
        "{shown}"
    );
    press(&mut app, with(KeyCode::Char('o'), KeyModifiers::ALT));
    let shown = screen(&app, 100, 30);
    assert!(
        !shown.contains("│ first body") && !shown.contains("│ second body"),
        "{shown}"
    );
}

/// Ctrl+O shows the selected call whole: every line of its output, where
/// expanding everything (Alt+O) shows each call's first 20.
#[test]
fn ctrl_o_shows_the_selected_call_whole() {
    let output: Vec<String> = (1..=30).map(|i| format!("output line {i}")).collect();
    let mut app = called(&[(
        "exec",
        serde_json::json!({"command": "seq 30"}),
        true,
        &output.join("\n"),
    )]);
    press(&mut app, with(KeyCode::Char('o'), KeyModifiers::ALT));
    let shown = screen(&app, 100, 60);
    assert!(
        shown.contains("│ output line 20") && !shown.contains("│ output line 21"),
        "{shown}"
    );
    assert!(
        shown.contains("… 10 more lines · Ctrl+O on it shows all"),
        "{shown}"
    );
    press(&mut app, with(KeyCode::Char('o'), KeyModifiers::CONTROL));
    let shown = screen(&app, 100, 60);
    assert!(
        shown.contains("│ output line 30") && !shown.contains("more lines"),
        "{shown}"
    );
}

/// Gap: a click focuses the pane it lands in and expands the call under
/// it; a click on the input gives the keys back to it.
#[test]
fn a_click_focuses_its_pane_and_expands_the_call_under_it() {
    let mut app = called(&[
        (
            "read_file",
            serde_json::json!({"path": "first.md"}),
            true,
            "first body",
        ),
        (
            "read_file",
            serde_json::json!({"path": "second.md"}),
            true,
            "second body",
        ),
    ]);
    let shown = screen(&app, 120, 36);
    let (x, y) = find(&shown, "read_file first.md");
    click(&mut app, x + 2, y);
    assert_eq!(app.focus, Focus::Pane(Pane::Conversation));
    let shown = screen(&app, 120, 36);
    assert!(
        shown.contains("│ first body") && !shown.contains("│ second body"),
        "{shown}"
    );

    let (x, y) = find(&shown, "Tools");
    click(&mut app, x, y + 1);
    assert_eq!(app.focus, Focus::Pane(Pane::Tools));
    let (x, y) = find(&shown, "Message");
    click(&mut app, x, y + 1);
    assert_eq!(app.focus, Focus::Input);

    // Folded into tabs (below 100x30), a tab's title picks that pane.
    let shown = screen(&app, 80, 24);
    let (x, y) = find(&shown, "4 Memory");
    click(&mut app, x + 2, y);
    assert_eq!(
        (app.focus, app.side_tab),
        (Focus::Pane(Pane::Memory), Pane::Memory)
    );
    let shown = screen(&app, 80, 24);
    assert!(shown.contains("no memory search yet"), "{shown}");
}

/// The wheel (moved to mouse.rs with the clicks) still scrolls the pane
/// under the pointer.
#[test]
fn the_wheel_scrolls_the_pane_under_the_pointer() {
    let mut app = app();
    for i in 0..20 {
        apply_all(&mut app, turn(&format!("question {i}"), "an answer"));
    }
    let shown = screen(&app, 100, 30);
    let (x, y) = find(&shown, "Conversation");
    let wheel = MouseEvent {
        kind: MouseEventKind::ScrollUp,
        column: x,
        row: y + 3,
        modifiers: KeyModifiers::NONE,
    };
    app.handle_event(TermEvent::Mouse(wheel), Instant::now());
    assert!(!app.conversation_scroll.is_pinned());
    let shown = screen(&app, 100, 30);
    assert!(shown.contains("scrolled · End to follow"), "{shown}");
}

/// Gap: a click on a code block copies that block whole, and says so.
#[test]
fn a_click_on_a_code_block_copies_that_block() {
    let mut app = app();
    let answer = "Two ways:\n\n```sh\nmake build\n```\n\nor\n\n```sh\ncargo build --release\ncp target/release/egirl ~/bin/\n```\n\nEither works.";
    apply_all(&mut app, turn("how do I build?", answer));
    let shown = screen(&app, 100, 30);
    let (x, y) = find(&shown, "cp target/release/egirl");
    let effects = click(&mut app, x, y);
    let copied: Vec<&str> = effects
        .iter()
        .filter_map(|e| match e {
            Effect::Copy(text) => Some(text.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(
        copied,
        ["cargo build --release\ncp target/release/egirl ~/bin/"]
    );
    let shown = screen(&app, 100, 30);
    assert!(shown.contains("copied 2 lines of code"), "{shown}");
    // Text that is no code block copies nothing.
    let (x, y) = find(&shown, "Either works.");
    assert!(click(&mut app, x, y).is_empty());
}

/// Gap: streaming markdown that does not jump. A table shows as a table
/// from its first row (never as raw `|` text that later turns into one),
/// and a fence being typed never shows as stray backticks.
#[test]
fn a_half_arrived_table_shows_as_a_table_while_it_streams() {
    use egirl::protocol::AnswerDelta;

    let mut app = app();
    app.apply(ev(EventKind::TurnStarted(TurnStarted {
        text: "plan?".into(),
        ..Default::default()
    })));
    let answer = "Here is the plan:\n\n| step | who |\n|:-----|----:|\n| build | me |\n| test | you |\n\nThen run:\n\n```sh\nmake test\n```\n\nDone.";
    let mut sent = String::new();
    for c in answer.chars() {
        sent.push(c);
        app.apply(ev(EventKind::Delta(AnswerDelta {
            text: c.to_string(),
        })));
        let shown = screen(&app, 80, 30);
        assert!(
            !shown.contains('|'),
            "raw table text after {sent:?}:\n{shown}"
        );
        let stray = shown
            .lines()
            .map(|l| l.trim_matches(|c: char| c == '│' || c == ' '))
            .any(|l| l == "`" || l == "``");
        assert!(!stray, "a stray fence after {sent:?}:\n{shown}");
        if sent.ends_with("```sh\nmake t") {
            // An unclosed fence is code already, closed where the text ends.
            let rows: Vec<&str> = shown.lines().map(|l| l.trim_matches(['│', ' '])).collect();
            let at = rows.iter().position(|r| *r == "```sh").expect("the fence");
            assert_eq!(rows[at + 1..at + 3], ["make t", "```"], "{shown}");
        }
        if sent.ends_with("| step | who") {
            assert!(shown.contains("step │ who"), "not a table yet:\n{shown}");
        }
    }
    let shown = screen(&app, 80, 30);
    // The second column is right-aligned (`----:`).
    assert!(shown.contains("build │  me"), "{shown}");
}

/// Gaps, through the real binary: a failed call says why under its
/// one-liner, and a mouse click (SGR mouse reports, as xterm sends them)
/// on the call expands it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_the_binary_a_failed_call_says_why_and_a_click_expands_it() {
    use crate::support::fake_llama::{FakeLlama, Reply};
    use crate::tui::pty::Pty;

    let fake = FakeLlama::start().await;
    fake.push_replies([
        Reply::tool_calls(&[("read_file", r#"{"path": "missing.md"}"#)]),
        Reply::text("that file is not there"),
    ]);
    let dir = crate::tui::pty::fake_model_dir(&fake);
    let mut pty = Pty::spawn(dir.path());
    pty.wait_for("Type a message").await;
    pty.send("read missing.md\r");
    pty.wait_for("that file is not there").await;
    pty.wait_for("↳ file not found: `missing.md`").await;
    let shown = pty.contents();
    assert!(!shown.contains("\"path\": \"missing.md\""), "{shown}");

    let (x, y) = find(&shown, "read_file missing.md");
    // SGR reports are 1-based: press, then release.
    pty.send(&format!(
        "\x1b[<0;{};{}M\x1b[<0;{};{}m",
        x + 1,
        y + 1,
        x + 1,
        y + 1
    ));
    pty.wait_for("\"path\": \"missing.md\"").await;
    pty.send("\x03\x03");
    assert_eq!(pty.exit_code().await, Some(0));
}

/// Review: on a short terminal (40x12) the approval modal filled with
/// cwd, who asked and the sandbox, and left out the command itself (only
/// "… 1 more lines") and the keys: the user approved what they could not
/// see. The command and the keys come first; the details when there is room.
#[test]
fn review_the_approval_modal_on_a_short_terminal_shows_the_command_and_the_keys() {
    let mut app = app();
    app.apply(ev(EventKind::ApprovalRequest(
        egirl::protocol::ApprovalRequest {
            id: "ap".into(),
            tool: "exec".into(),
            command: "echo hello-from-exec && false".into(),
            cwd: "/tmp/rv/h/ws".into(),
            rule: None,
            rule_covers: None,
            sandbox: Some("workspace-write, no network".into()),
            escalation: None,
        },
    )));
    crate::tui::arm(&mut app);
    let shown = screen(&app, 40, 12);
    assert!(shown.contains("$ echo hello-from-exec"), "{shown}");
    assert!(shown.contains("y once"), "{shown}");
    assert!(shown.contains("n/Esc deny"), "{shown}");
    // With room, everything.
    let shown = screen(&app, 120, 36);
    for want in [
        "$ echo hello-from-exec && false",
        "cwd  /tmp/rv/h/ws",
        "sandbox: workspace-write",
        "y once",
    ] {
        assert!(shown.contains(want), "{want}:\n{shown}");
    }
}
