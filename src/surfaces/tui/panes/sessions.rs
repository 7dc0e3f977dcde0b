//! The session picker (`/sessions`, Ctrl+S): every session with its
//! origin, id, title (its first message), last activity and unread count;
//! Enter points the input at one.

use std::time::SystemTime;

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};

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
    let id_w = rows.iter().map(|r| wrap::width(&r.id)).max().unwrap_or(0);
    let columns = Columns::new(inner_w, origin_w, id_w);

    let mut lines: Vec<Line<'static>> = Vec::with_capacity(rows.len());
    // With agents, a heading before each agent's sessions; the selected
    // row's line, to keep it in view.
    let mut selected_line = 0;
    let mut group: Option<Option<&str>> = None;
    for (i, row) in rows.iter().enumerate() {
        let agent = row.agent.as_deref();
        if app.agents.enabled() && group != Some(agent) {
            group = Some(agent);
            lines.push(heading(app, agent, rows));
        }
        if i == app.picker.selected {
            selected_line = lines.len();
        }
        lines.push(row_line(app, row, i == app.picker.selected, &columns, now));
    }
    if lines.is_empty() {
        lines.push(Line::styled("no sessions yet", t.muted()));
    }

    let height = (lines.len() as u16 + 2).min(area.height);
    let inner = super::centered_overlay(
        app,
        area,
        (width, height),
        " Sessions · Enter: send here · Esc closes ",
        buf,
    );
    // Keep the selection in view in a long list.
    let visible = usize::from(inner.height).max(1);
    let first = selected_line.saturating_sub(visible - 1);
    for (row, line) in lines.iter().skip(first).take(visible).enumerate() {
        buf.set_line(inner.x, inner.y + row as u16, line, inner.width);
    }
}

/// An agent's heading: its name in its color and how many sessions.
fn heading(app: &App, agent: Option<&str>, rows: &[SessionRow]) -> Line<'static> {
    let t = &app.theme;
    let count = rows.iter().filter(|r| r.agent.as_deref() == agent).count();
    let (name, color) = match agent {
        Some(a) => (a.to_string(), t.agent_color(app.agents.color_slot(a))),
        None => ("agent not known".to_string(), t.muted),
    };
    Line::from(vec![
        Span::styled(
            name,
            Style::default().fg(color).add_modifier(Modifier::BOLD),
        ),
        Span::styled(format!("  {count} sessions"), t.muted()),
    ])
}

/// The picker's column widths. From the right: when (7 columns with the
/// gap before it), unread (9), state (10); the origin on the left; the id
/// and the title share the rest. Where that leaves the two of them too
/// little, the state goes, then the id (a generated id says less than the
/// session's first message), then the unread column (a count then shows
/// in place of the time).
struct Columns {
    origin: usize,
    /// The id's widest (up to 32) and what the id and title share.
    id: usize,
    free: usize,
    state: bool,
    unread: bool,
}

impl Columns {
    /// Room for the id and the title side by side.
    const BOTH: usize = 30;

    fn new(inner_w: usize, origin: usize, id: usize) -> Self {
        let lead = 2 + origin + 2;
        let (mut state, mut unread) = (true, true);
        let mut tail = 7 + 9 + 10;
        if inner_w < lead + tail + Self::BOTH {
            state = false;
            tail -= 10;
        }
        if inner_w < lead + tail + Self::BOTH / 2 {
            unread = false;
            tail -= 9;
        }
        Self {
            origin,
            id: id.min(32),
            free: inner_w.saturating_sub(lead + tail).max(8),
            state,
            unread,
        }
    }

    /// The id's and the title's widths in `row` (0: left out); with both,
    /// two blanks between them.
    fn id_and_title(&self, row: &SessionRow) -> (usize, usize) {
        if row.title.is_empty() {
            return (self.free, 0);
        }
        if self.free < Self::BOTH {
            return (0, self.free);
        }
        let id = self.id.min(self.free / 2).max(8);
        (id, self.free - id - 2)
    }
}

/// One row of the picker: where the input goes, origin, id, title, when,
/// unread, state.
fn row_line(
    app: &App,
    row: &SessionRow,
    selected: bool,
    columns: &Columns,
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
    let (id_w, title_w) = columns.id_and_title(row);
    let title = match (id_w, title_w) {
        (_, 0) => String::new(),
        (0, w) => format!("{:<w$}", wrap::truncate(&row.title, w)),
        (_, w) => format!("  {:<w$}", wrap::truncate(&row.title, w)),
    };
    let id = match id_w {
        0 => String::new(),
        w => format!("{:<w$}", wrap::truncate(&row.id, w)),
    };
    let mut spans = vec![
        Span::styled(here, base.fg(t.focus)),
        Span::styled(
            format!(
                "{:<w$}  ",
                wrap::truncate(&badge(&row.origin), columns.origin),
                w = columns.origin
            ),
            base.fg(t.tool),
        ),
        Span::styled(id, base.fg(t.muted)),
        Span::styled(title, base.fg(t.text)),
    ];
    let bold = base.fg(t.warning).add_modifier(Modifier::BOLD);
    match columns.unread {
        true => spans.extend([
            Span::styled(format!("  {when:>5}"), base.fg(t.muted)),
            Span::styled(format!("  {unread:<7}"), bold),
        ]),
        false if row.unread > 0 => {
            spans.push(Span::styled(
                format!("  {:>5}", wrap::truncate(&unread, 5)),
                bold,
            ));
        }
        false => spans.push(Span::styled(format!("  {when:>5}"), base.fg(t.muted))),
    }
    if columns.state {
        spans.push(Span::styled(format!("  {state:<8}"), base.fg(t.muted)));
    }
    Line::from(spans)
}
