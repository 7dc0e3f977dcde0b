//! The model picker (`/model`): what the session may run on, its pin
//! marked; Enter pins the selected one, Esc closes.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};

use crate::surfaces::tui::app::App;
use crate::surfaces::tui::models::ModelPicker;
use crate::surfaces::tui::wrap;

pub fn render(app: &App, picker: &ModelPicker, area: Rect, buf: &mut Buffer) {
    if area.is_empty() {
        return;
    }
    let t = &app.theme;
    let width = area.width.saturating_sub(4).min(96);
    let inner_w = usize::from(width.saturating_sub(4));
    let label_w = picker
        .choices
        .iter()
        .map(|c| c.label.chars().count())
        .max()
        .unwrap_or(0)
        .min(inner_w / 2);
    let mut lines: Vec<Line<'static>> = Vec::with_capacity(picker.choices.len());
    for (i, choice) in picker.choices.iter().enumerate() {
        let base = if i == picker.selected {
            Style::default().add_modifier(Modifier::REVERSED)
        } else {
            Style::default()
        };
        let mark = if choice.id == picker.pinned {
            "● "
        } else {
            "  "
        };
        let detail_w = inner_w.saturating_sub(label_w + 4);
        lines.push(Line::from(vec![
            Span::styled(mark, base.fg(t.focus)),
            Span::styled(
                format!("{:<label_w$}  ", wrap::truncate(&choice.label, label_w)),
                base.fg(t.text),
            ),
            Span::styled(
                format!("{:<detail_w$}", wrap::truncate(&choice.detail, detail_w)),
                base.fg(t.muted),
            ),
        ]));
    }
    let height = (lines.len() as u16 + 2).min(area.height);
    let inner = super::centered_overlay(
        app,
        area,
        (width, height),
        " Model · Enter: run this session on it · Esc closes ",
        buf,
    );
    let visible = usize::from(inner.height).max(1);
    let first = picker.selected.saturating_sub(visible - 1);
    for (row, line) in lines.iter().skip(first).take(visible).enumerate() {
        buf.set_line(inner.x, inner.y + row as u16, line, inner.width);
    }
}
