//! `?` and `/help`: the keys and the slash commands.

use ratatui::buffer::Buffer;
use ratatui::layout::{Margin, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Clear, Widget};

use crate::surfaces::tui::app::App;
use crate::surfaces::tui::commands;

pub const KEYS: &[(&str, &str)] = &[
    ("Enter", "send"),
    ("//text", "send /text as a message (or start with a space)"),
    (
        "Tab  Up/Down  Esc",
        "after /: complete, pick, close the list",
    ),
    ("Shift+Enter Alt+Enter Ctrl+J", "new line"),
    ("Up / Down", "history (empty box)"),
    ("PgUp PgDn Home End", "scroll the conversation"),
    ("Tab / Shift+Tab", "focus next / previous pane"),
    ("F1-F5 Alt+1-5", "zoom a pane (again: back)"),
    ("Ctrl+O", "expand / collapse tool calls, diffs, summaries"),
    ("Ctrl+S", "sessions: pick where input goes"),
    ("Ctrl+T", "conversation: all sessions / only the input's"),
    ("Ctrl+F  n / N", "find in the conversation; next / previous"),
    ("Ctrl+C", "interrupt or clear; twice quits"),
    ("Alt+Y", "copy the last answer"),
    ("F12", "mouse capture on/off (select text)"),
    ("y a p,Enter n Esc", "approve once / session / always, deny"),
    ("Esc", "close, unzoom, back to input; interrupt a turn"),
];

pub fn render(app: &App, area: Rect, buf: &mut Buffer) {
    if area.is_empty() {
        return;
    }
    let t = &app.theme;
    let key = Style::default().fg(t.focus).add_modifier(Modifier::BOLD);
    let mut lines = vec![Line::styled(
        "Keys",
        Style::default().add_modifier(Modifier::BOLD),
    )];
    for (k, what) in KEYS {
        lines.push(Line::from(vec![
            Span::styled(format!("{k:<29}"), key),
            Span::styled(what.to_string(), Style::default().fg(t.text)),
        ]));
    }
    lines.push(Line::default());
    lines.push(Line::styled(
        "Commands",
        Style::default().add_modifier(Modifier::BOLD),
    ));
    let mut in_skills = false;
    for c in commands::all(app) {
        if c.skill && !in_skills {
            in_skills = true;
            lines.push(Line::default());
            lines.push(Line::styled(
                "Skills",
                Style::default().add_modifier(Modifier::BOLD),
            ));
        }
        lines.push(Line::from(vec![
            Span::styled(
                format!("{:<29}", format!("{} {}", c.name, c.arg)),
                Style::default().fg(t.tool),
            ),
            Span::styled(c.help, Style::default().fg(t.text)),
        ]));
    }
    let width = area.width.saturating_sub(4).min(84);
    let lines = super::wrap_lines(lines, usize::from(width.saturating_sub(4)));
    let height = (lines.len() as u16 + 2).min(area.height);
    let rect = Rect::new(
        area.x + area.width.saturating_sub(width) / 2,
        area.y + area.height.saturating_sub(height) / 2,
        width,
        height,
    );
    Clear.render(rect, buf);
    // On a short terminal the help scrolls; the title says so and where.
    let visible = usize::from(height.saturating_sub(2));
    let hidden = lines.len().saturating_sub(visible);
    let first = app.help_scroll.min(hidden);
    let title = if hidden > 0 {
        format!(
            " Help · ↑↓ {}/{} · Esc closes ",
            first + visible.min(lines.len()),
            lines.len()
        )
    } else {
        " Help · Esc closes ".to_string()
    };
    let block = Block::bordered()
        .border_type(BorderType::Rounded)
        .border_style(Style::default().fg(t.focus))
        .title(Span::styled(title, Style::default().fg(t.focus)));
    let inner = block.inner(rect).inner(Margin::new(1, 0));
    block.render(rect, buf);
    super::lines_in(&lines[first..], inner, buf, None);
}
