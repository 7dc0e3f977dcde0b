//! What the conversation draws: wide tables, wrapping, synchronized output,
//! why a tool failed, streaming markdown (defects 8, 12, 13 and the gaps).

use crate::tui::{app, apply_all, screen, turn};

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
    let dir = tempfile::tempdir().expect("temp dir");
    let config = format!(
        "[workspace]\npath = \"ws\"\n[log]\ndir = \"{}\"\n[local]\nendpoint = \"{}\"\nmodel = \"fake\"\n",
        dir.path().join("logs").display(),
        fake.url()
    );
    std::fs::write(dir.path().join("egirl.toml"), config).expect("config");
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
