//! The session picker (`/sessions`, Ctrl+S): every session with its
//! origin, id, title (its first message), last activity and unread count;
//! Enter points the input at one.

use std::time::SystemTime;

use ratatui::buffer::Buffer;
use ratatui::layout::{Margin, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Clear, Widget};

use crate::surfaces::tui::app::App;
use crate::surfaces::tui::conversation::badge;
use crate::surfaces::tui::sessions::{SessionRow, ago};
use crate::surfaces::tui::wrap;

pub fn render(app: &App, area: Rect, buf: &mut Buffer) {
    if area.is_empty() {
        return;
    }
    let t = &app.theme;
    let now = SystemTime::now();
    let rows = &app.picker.rows;
    let width = area.width.saturating_sub(4).min(96);
    let inner_w = usize::from(width.saturating_sub(4));
    let origin_w = rows
        .iter()
        .map(|r| wrap::width(&badge(&r.origin)))
        .max()
        .unwrap_or(0)
        .min(24);

    let mut lines: Vec<Line<'static>> = rows
        .iter()
        .enumerate()
        .map(|(i, row)| {
            let selected = i == app.picker.selected;
            row_line(app, row, selected, (origin_w, inner_w), now)
        })
        .collect();
    if lines.is_empty() {
        lines.push(Line::styled("no sessions yet", t.muted()));
    }

    let height = (lines.len() as u16 + 2).min(area.height);
    let rect = Rect::new(
        area.x + area.width.saturating_sub(width) / 2,
        area.y + area.height.saturating_sub(height) / 2,
        width,
        height,
    );
    Clear.render(rect, buf);
    let block = Block::bordered()
        .border_type(BorderType::Rounded)
        .border_style(Style::default().fg(t.focus))
        .title(Span::styled(
            " Sessions · Enter: send here · Esc closes ",
            Style::default().fg(t.focus),
        ));
    let inner = block.inner(rect).inner(Margin::new(1, 0));
    block.render(rect, buf);
    // Keep the selection in view in a long list.
    let visible = usize::from(inner.height).max(1);
    let first = app.picker.selected.saturating_sub(visible - 1);
    for (row, line) in lines.iter().skip(first).take(visible).enumerate() {
        buf.set_line(inner.x, inner.y + row as u16, line, inner.width);
    }
}

/// One row of the picker: where the input goes, origin, id, title, when,
/// unread, state.
fn row_line(
    app: &App,
    row: &SessionRow,
    selected: bool,
    (origin_w, inner_w): (usize, usize),
    now: SystemTime,
) -> Line<'static> {
    let t = &app.theme;
    let base = if selected {
        Style::default().add_modifier(Modifier::REVERSED)
    } else {
        Style::default()
    };
    let here = if row.id == app.session { "→ " } else { "  " };
    let when = row.last_activity.map_or("—".into(), |at| ago(at, now));
    let state = if row.running {
        "working"
    } else if row.live {
        ""
    } else {
        "on disk"
    };
    let unread = if row.unread > 0 {
        format!("{} new", row.unread)
    } else {
        String::new()
    };
    // The title (its first message) and the id share what the fixed
    // columns leave; the id keeps up to 32 columns when both show.
    let fixed = 2 + origin_w + 2 + 5 + 2 + 7 + 2 + 8;
    let free = inner_w.saturating_sub(fixed).max(8);
    let id_w = if row.title.is_empty() {
        free
    } else {
        wrap::width(&row.id).min(32).min(free / 2).max(8)
    };
    let title_w = free.saturating_sub(id_w + 2);
    let title = if title_w > 0 && !row.title.is_empty() {
        format!("  {:<title_w$}", wrap::truncate(&row.title, title_w))
    } else if title_w > 0 {
        format!("  {:<title_w$}", "")
    } else {
        String::new()
    };
    let spans = vec![
        Span::styled(here, base.fg(t.focus)),
        Span::styled(
            format!(
                "{:<origin_w$}  ",
                wrap::truncate(&badge(&row.origin), origin_w)
            ),
            base.fg(t.tool),
        ),
        Span::styled(
            format!("{:<id_w$}", wrap::truncate(&row.id, id_w)),
            base.fg(t.muted),
        ),
        Span::styled(title, base.fg(t.text)),
        Span::styled(format!("  {when:>5}"), base.fg(t.muted)),
        Span::styled(
            format!("  {unread:<7}"),
            base.fg(t.warning).add_modifier(Modifier::BOLD),
        ),
        Span::styled(format!("  {state:<8}"), base.fg(t.muted)),
    ];
    Line::from(spans)
}
