//! The rewind picker (`/rewind`): the session's user messages, newest
//! last; Enter goes back to before the selected one.

use std::time::SystemTime;

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};

use crate::surfaces::tui::app::App;
use crate::surfaces::tui::rewind::{RewindPicker, UNTRACKED_NOTE};
use crate::surfaces::tui::sessions::ago;
use crate::surfaces::tui::wrap;

pub fn render(app: &App, picker: &RewindPicker, area: Rect, buf: &mut Buffer) {
    render_at(app, picker, area, buf, SystemTime::now());
}

/// `render` at a given time (snapshots pin it).
pub fn render_at(app: &App, picker: &RewindPicker, area: Rect, buf: &mut Buffer, now: SystemTime) {
    if area.is_empty() {
        return;
    }
    let t = &app.theme;
    let width = area.width.saturating_sub(4).min(96);
    let inner_w = usize::from(width.saturating_sub(4));
    let number_w = picker.rows.len().to_string().len();
    let text_w = inner_w.saturating_sub(number_w + 2 + 5 + 2);
    let mut lines: Vec<Line<'static>> = Vec::with_capacity(picker.rows.len());
    for (i, row) in picker.rows.iter().enumerate() {
        let base = if i == picker.selected {
            Style::default().add_modifier(Modifier::REVERSED)
        } else {
            Style::default()
        };
        let first = row
            .text
            .lines()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("");
        lines.push(Line::from(vec![
            Span::styled(format!("{:>number_w$}  ", row.turn), base.fg(t.muted)),
            Span::styled(format!("{:>5}  ", ago(row.at, now)), base.fg(t.muted)),
            Span::styled(
                format!("{:<text_w$}", wrap::truncate(first.trim(), text_w)),
                base.fg(t.user),
            ),
        ]));
    }
    // The list, a blank row and the note, within the borders.
    let height = (lines.len() as u16 + 4).min(area.height);
    let inner = super::centered_overlay(
        app,
        area,
        (width, height),
        " Rewind · Enter: back to before this message · Esc closes ",
        buf,
    );
    if inner.height == 0 {
        return;
    }
    let note = Line::styled(
        wrap::truncate(UNTRACKED_NOTE, usize::from(inner.width)),
        Style::default().fg(t.warning),
    );
    buf.set_line(inner.x, inner.bottom() - 1, &note, inner.width);
    // Keep the selection in view in a long list.
    let visible = usize::from(inner.height.saturating_sub(2)).max(1);
    let first = picker.selected.saturating_sub(visible - 1);
    for (row, line) in lines.iter().skip(first).take(visible).enumerate() {
        buf.set_line(inner.x, inner.y + row as u16, line, inner.width);
    }
}
