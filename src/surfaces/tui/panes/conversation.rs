//! The conversation: every session's entries, bottom-pinned, with an
//! indicator when new messages arrive while scrolled up.
//!
//! Only the visible entries' lines are touched. Pinned to the bottom, the
//! pane renders upwards until the screen is full; scrolled up, it sums
//! the entries' heights (kept per width even when their lines are
//! dropped), so a long conversation costs a sum per frame.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Widget};

use super::frame;
use crate::surfaces::tui::app::App;
use crate::surfaces::tui::conversation::{Rendered, badge};
use crate::surfaces::tui::layout::Pane;
use crate::surfaces::tui::search::highlight_row;

pub fn render(app: &App, area: Rect, buf: &mut Buffer) {
    if area.area() == 0 {
        return;
    }
    let block = titled_frame(app);
    let inner = super::padded(&block, area);
    block.render(area, buf);
    if inner.area() == 0 {
        return;
    }
    if app.conversation.is_empty() {
        welcome(app, inner, buf);
        return;
    }
    app.conversation_width.set(inner.width);
    let visible = visible_entries(app, inner.width, usize::from(inner.height));
    draw_entries(app, &visible, inner, buf);
    let blocks = &visible.blocks;
    let drawn = blocks.first().map_or(0, |b| b.0)..blocks.last().map_or(0, |b| b.0 + 1);
    drop(visible);
    app.conversation.keep_lines_near(drawn);
}

/// The pane's frame, with the scroll state and an active search along the
/// bottom and the session filter at the top right.
fn titled_frame(app: &App) -> Block<'static> {
    let t = &app.theme;
    let mut block = frame(app, Pane::Conversation, false);
    let scroll = &app.conversation_scroll;
    if scroll.unseen {
        block = block.title_bottom(
            Line::from(Span::styled(
                " ↓ new messages below (End) ",
                Style::default().fg(t.warning).add_modifier(Modifier::BOLD),
            ))
            .right_aligned(),
        );
    } else if !scroll.is_pinned() {
        block = block.title_bottom(
            Line::from(Span::styled(" scrolled · End to follow ", t.muted())).right_aligned(),
        );
    }
    if let Some(search) = &app.search {
        block = block.title_bottom(Line::from(Span::styled(
            format!(
                " find \"{}\" {}/{} · n/N jump · Esc leaves ",
                search.query,
                search.current + 1,
                search.hits.len()
            ),
            Style::default().fg(t.warning),
        )));
    }
    // Which sessions show, once there is more than one to choose from.
    if let Some(id) = app.filter() {
        let origin = app.sessions.get(id).map(|s| badge(&s.origin));
        let label = match origin {
            Some(o) => format!(" only {o} · {id} · Ctrl+T "),
            None => format!(" only {id} · Ctrl+T "),
        };
        block = block
            .title(Line::from(Span::styled(label, Style::default().fg(t.warning))).right_aligned());
    } else if app.sessions.len() > 1 {
        block = block.title(
            Line::from(Span::styled(
                format!(" all {} sessions · Ctrl+T ", app.sessions.len()),
                t.muted(),
            ))
            .right_aligned(),
        );
    }
    block
}

/// The entries a frame draws and where the screen starts among them.
struct Visible {
    /// Each drawn entry's index, the gap above it and its lines.
    blocks: Vec<(usize, usize, Rendered)>,
    /// The conversation row of the first block's gap.
    row: usize,
    /// The conversation row at the top of the screen.
    first: usize,
}

fn visible_entries(app: &App, width: u16, height: usize) -> Visible {
    let ctx = app.render_ctx();
    let entries = &app.conversation.entries;
    let shown = shown(app);
    let scroll = &app.conversation_scroll;
    let mut blocks: Vec<(usize, usize, Rendered)> = Vec::new();
    if scroll.is_pinned() {
        // Bottom-pinned: render upwards until the screen is full; nothing
        // above is touched, however long the conversation.
        let mut rows = 0;
        for &(i, gap) in shown.iter().rev() {
            let lines = entries[i].lines(width, &ctx);
            rows += gap + lines.len();
            blocks.push((i, gap, lines));
            if rows >= height {
                break;
            }
        }
        blocks.reverse();
        // The rows collected stand in for the total: a key that scrolls
        // measures the whole conversation first (`App::measure_conversation`).
        let first = scroll.first_line(rows, height);
        return Visible {
            blocks,
            row: 0,
            first,
        };
    }
    let heights: Vec<usize> = shown
        .iter()
        .map(|&(i, gap)| gap + entries[i].height(width, &ctx))
        .collect();
    let first = scroll.first_line(heights.iter().sum(), height);
    let mut row = 0;
    let mut filled = 0;
    for (&(i, gap), &h) in shown.iter().zip(&heights) {
        if row + h <= first && filled == 0 {
            row += h;
            continue;
        }
        blocks.push((i, gap, entries[i].lines(width, &ctx)));
        filled += h;
        if row + filled >= first + height {
            break;
        }
    }
    Visible { blocks, row, first }
}

/// Writes the visible rows of the blocks, highlighting search hits.
fn draw_entries(app: &App, visible: &Visible, inner: Rect, buf: &mut Buffer) {
    let mut row = visible.row;
    let mut y = inner.y;
    let bottom = inner.y + inner.height;
    let search = app.search.as_ref();
    for (entry, gap, lines) in &visible.blocks {
        let len = gap + lines.len();
        let current = search.and_then(|s| s.current_entry()) == Some(*entry);
        for i in 0..len {
            if row >= visible.first && y < bottom {
                if i >= *gap
                    && let Some(line) = lines.get(i - gap)
                {
                    buf.set_line(inner.x, y, line, inner.width);
                    if let Some(search) = search {
                        highlight_row(app, search, inner, y, current, buf);
                    }
                }
                y += 1;
            }
            row += 1;
        }
    }
}

/// The shown entries (all sessions', or the filtered one's) with the gap
/// above each: one blank row between entries, none between consecutive
/// one-liners (tool calls, notices) or above the first.
pub(crate) fn shown(app: &App) -> Vec<(usize, usize)> {
    let mut out = Vec::with_capacity(app.conversation.entries.len());
    let mut prev_compact: Option<bool> = None;
    for (i, entry) in app.conversation.entries.iter().enumerate() {
        if !app.shows(&entry.session) {
            continue;
        }
        let gap = usize::from(prev_compact.is_some_and(|p| !(p && entry.is_compact())));
        prev_compact = Some(entry.is_compact());
        out.push((i, gap));
    }
    out
}

/// Rows of the whole conversation at `width`: entries not rendered at
/// this width are rendered once, keeping only their height.
pub fn total_rows(app: &App, width: u16) -> usize {
    let ctx = app.render_ctx();
    let entries = &app.conversation.entries;
    shown(app)
        .iter()
        .map(|&(i, gap)| gap + entries[i].height(width, &ctx))
        .sum()
}

fn welcome(app: &App, area: Rect, buf: &mut Buffer) {
    let t = &app.theme;
    let lines = [
        Line::from(Span::styled(
            "egirl",
            Style::default()
                .fg(t.assistant)
                .add_modifier(Modifier::BOLD),
        )),
        Line::from(Span::styled(
            "local-first: your model, your files, every decision shown",
            t.muted(),
        )),
        Line::default(),
        Line::from(Span::styled(
            "Type a message and press Enter · ? for keys · /help for commands",
            t.muted(),
        )),
    ];
    let top = area.y + area.height.saturating_sub(lines.len() as u16) / 2;
    for (i, line) in lines.iter().enumerate() {
        let w = line.width() as u16;
        let x = area.x + area.width.saturating_sub(w) / 2;
        let y = top + i as u16;
        if y < area.y + area.height {
            buf.set_line(x, y, line, area.width.saturating_sub(x - area.x));
        }
    }
}
