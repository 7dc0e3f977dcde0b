//! One file per pane, each with `render(app, area, buf)`. Panes read the
//! state and never change it (beyond the scroll metrics they record).

pub mod agents;
pub mod approval;
pub mod approval_rules;
pub mod conversation;
pub mod help;
pub mod input;
pub mod memory;
pub mod models;
pub mod rewind;
pub mod routing;
pub mod sessions;
pub mod stats;
pub mod status;
pub mod tools;

use std::cell::RefCell;
use std::rc::Rc;

use ratatui::buffer::Buffer;
use ratatui::layout::{Margin, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Widget};

use super::app::{App, Focus};
use super::layout::Pane;
use super::scroll::Scroll;
use super::wrap;

/// A pane's frame: its number and title, highlighted when focused; with
/// `tabs`, the title lists every side pane and marks the one shown.
pub fn frame(app: &App, pane: Pane, tabs: bool) -> Block<'static> {
    let t = &app.theme;
    let focused = app.focus == Focus::Pane(pane);
    let mut title: Vec<Span<'static>> = Vec::new();
    if tabs {
        for (i, p) in Pane::SIDE.iter().enumerate() {
            if i > 0 {
                title.push(Span::styled("│", t.border(false)));
            }
            let style = if *p == pane {
                t.border(focused).add_modifier(Modifier::REVERSED)
            } else {
                t.muted()
            };
            title.push(Span::styled(
                format!(" {} {} ", p.number(), p.title()),
                style,
            ));
        }
    } else {
        title.push(Span::styled(
            format!(" {} {} ", pane.number(), pane.title()),
            t.border(focused),
        ));
    }
    let border_type = if focused {
        BorderType::Thick
    } else {
        BorderType::Rounded
    };
    Block::bordered()
        .border_type(border_type)
        .border_style(t.border(focused))
        .title(Line::from(title))
}

/// Draws `lines` inside `area` scrolled by `scroll` (bottom-pinned).
pub fn lines_in(lines: &[Line<'_>], area: Rect, buf: &mut Buffer, scroll: Option<&Scroll>) {
    let height = usize::from(area.height);
    let first = scroll.map_or(0, |s| s.first_line(lines.len(), height));
    for (row, line) in lines.iter().skip(first).take(height).enumerate() {
        let y = area.y + row as u16;
        buf.set_line(area.x, y, line, area.width);
    }
}

/// Word-wraps lines to `width`, continuation rows indented by two.
pub fn wrap_lines(lines: Vec<Line<'static>>, width: usize) -> Vec<Line<'static>> {
    let indent = [Span::raw("  ")];
    let mut out = Vec::with_capacity(lines.len());
    for line in lines {
        if line.width() <= width {
            out.push(line);
            continue;
        }
        let pieces: Vec<(Style, String)> = line
            .spans
            .iter()
            .map(|s| (line.style.patch(s.style), s.content.to_string()))
            .collect();
        // Continuation rows are indented, so the whole line wraps two
        // columns narrower.
        let wrapped = wrap::wrap(&pieces, width.saturating_sub(2).max(1));
        out.extend(wrap::into_lines(wrapped, &[], &indent));
    }
    out
}

/// The frame's inside less a column of padding on each side.
pub fn padded(block: &Block<'_>, area: Rect) -> Rect {
    block.inner(area).inner(Margin::new(1, 0))
}

/// Draws a side pane: frame, then its lines, with a placeholder when empty.
pub fn side(app: &App, pane: Pane, tabs: bool, area: Rect, buf: &mut Buffer) {
    if area.is_empty() {
        return;
    }
    let block = frame(app, pane, tabs);
    let inner = padded(&block, area);
    block.render(area, buf);
    if inner.is_empty() {
        return;
    }
    let width = usize::from(inner.width);
    let lines = match pane {
        Pane::Routing | Pane::Tools => app.side_lines.get(app, pane, inner.width),
        Pane::Memory => Rc::new(wrap_lines(memory::lines(app, width), width)),
        Pane::Stats => Rc::new(wrap_lines(stats::lines(app, width), width)),
        Pane::Conversation => Rc::default(),
    };
    if lines.is_empty() {
        let empty = match pane {
            Pane::Routing => "no routing decisions yet",
            Pane::Tools => "no tool calls yet",
            Pane::Memory => "no memory search yet",
            _ => "no usage yet",
        };
        buf.set_line(
            inner.x,
            inner.y,
            &Line::styled(empty, app.theme.muted()),
            inner.width,
        );
        return;
    }
    lines_in(&lines, inner, buf, app.side_scroll(pane));
}

/// The routing and tools feeds keep up to `feeds::KEEP` records each but
/// show a dozen rows: formatting and wrapping all of them on every frame
/// cost a millisecond a pane. Their wrapped lines are kept until the feed,
/// the width or anything else they show changes.
#[derive(Debug, Default)]
pub struct SideCache {
    routing: RefCell<Option<(SideKey, Rc<Vec<Line<'static>>>)>>,
    tools: RefCell<Option<(SideKey, Rc<Vec<Line<'static>>>)>>,
}

/// Everything the feed panes' lines depend on: the feed's version, the
/// width, the theme (epoch), and the sessions (origin badges name the
/// sessions other than the TUI's own).
#[derive(Debug, PartialEq)]
struct SideKey {
    version: u64,
    width: u16,
    epoch: u64,
    session: String,
    sessions: usize,
}

impl SideCache {
    fn get(&self, app: &App, pane: Pane, width: u16) -> Rc<Vec<Line<'static>>> {
        let (slot, version) = match pane {
            Pane::Tools => (&self.tools, app.tools.version()),
            _ => (&self.routing, app.routing.version()),
        };
        let key = SideKey {
            version,
            width,
            epoch: app.epoch,
            session: app.session.clone(),
            sessions: app.sessions.len(),
        };
        let mut slot = slot.borrow_mut();
        if let Some((k, lines)) = slot.as_ref()
            && *k == key
        {
            return lines.clone();
        }
        let w = usize::from(width);
        let lines = match pane {
            Pane::Tools => tools::lines(app, w),
            _ => routing::lines(app, w),
        };
        let lines = Rc::new(wrap_lines(lines, w));
        *slot = Some((key, lines.clone()));
        lines
    }
}

/// Label and value pairs as muted label, plain value.
pub fn field(app: &App, label: &str, value: String) -> Vec<Span<'static>> {
    vec![
        Span::styled(format!("{label} "), app.theme.muted()),
        Span::styled(value, Style::default().fg(app.theme.text)),
    ]
}

/// A box of `size` (width, height) centred in `area`, cleared, with a
/// rounded border in the focus color and `title`: the frame every picker
/// and list overlay draws in. Returns the area inside it (one column of
/// padding each side).
pub fn centered_overlay(
    app: &App,
    area: Rect,
    (width, height): (u16, u16),
    title: &str,
    buf: &mut Buffer,
) -> Rect {
    let focus = Style::default().fg(app.theme.focus);
    let rect = Rect::new(
        area.x + area.width.saturating_sub(width) / 2,
        area.y + area.height.saturating_sub(height) / 2,
        width,
        height,
    );
    ratatui::widgets::Clear.render(rect, buf);
    let block = Block::bordered()
        .border_type(BorderType::Rounded)
        .border_style(focus)
        .title(Span::styled(title.to_string(), focus));
    let inner = block.inner(rect).inner(Margin::new(1, 0));
    block.render(rect, buf);
    inner
}
