//! The agent picker (`/agent`): every agent the config declares, the one
//! the input goes to marked; Enter sends what you type next to the
//! selected one (a new session), Esc closes.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};

use crate::surfaces::tui::app::App;
use crate::surfaces::tui::wrap;

pub fn render(app: &App, area: Rect, buf: &mut Buffer) {
    if area.is_empty() {
        return;
    }
    let t = &app.theme;
    let width = area.width.saturating_sub(4).min(96);
    let inner_w = usize::from(width.saturating_sub(4));
    let current = app.current_agent().unwrap_or_default();
    let name_w = app
        .agents
        .names()
        .iter()
        .map(|n| wrap::width(n))
        .max()
        .unwrap_or(0)
        .min(inner_w / 2);
    let lines: Vec<Line<'static>> = app
        .agents
        .names()
        .iter()
        .enumerate()
        .map(|(i, name)| {
            let base = if i == app.agents.picker {
                Style::default().add_modifier(Modifier::REVERSED)
            } else {
                Style::default()
            };
            let mark = if name == current { "● " } else { "  " };
            let color = t.agent_color(app.agents.color_slot(name));
            let workspace = app
                .agents
                .directory
                .workspaces
                .get(name)
                .map(|w| w.display().to_string())
                .unwrap_or_default();
            let detail_w = inner_w.saturating_sub(name_w + 4);
            Line::from(vec![
                Span::styled(mark, base.fg(t.focus)),
                Span::styled(
                    format!("{:<name_w$}  ", wrap::truncate(name, name_w)),
                    base.fg(color).add_modifier(Modifier::BOLD),
                ),
                Span::styled(
                    format!("{:<detail_w$}", wrap::truncate(&workspace, detail_w)),
                    base.fg(t.muted),
                ),
            ])
        })
        .collect();
    let height = (lines.len() as u16 + 2).min(area.height);
    let inner = super::centered_overlay(
        app,
        area,
        (width, height),
        " Agent · Enter: send what you type next there · Esc closes ",
        buf,
    );
    let visible = usize::from(inner.height).max(1);
    let first = app.agents.picker.saturating_sub(visible - 1);
    for (row, line) in lines.iter().skip(first).take(visible).enumerate() {
        buf.set_line(inner.x, inner.y + row as u16, line, inner.width);
    }
}
