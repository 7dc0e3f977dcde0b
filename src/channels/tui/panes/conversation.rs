//! The conversation: every session's entries, bottom-pinned, with an
//! indicator when new messages arrive while scrolled up.
//!
//! Only the visible entries' lines are touched: heights come from the
//! per-width caches, so a long transcript costs a sum per frame.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::Widget;

use super::frame;
use crate::channels::tui::app::App;
use crate::channels::tui::layout::Pane;
use crate::channels::tui::transcript::{Rendered, badge};

pub fn render(app: &App, area: Rect, buf: &mut Buffer) {
    if area.area() == 0 {
        return;
    }
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
    // Which sessions show, once there is more than one to choose from.
    if let Some(id) = &app.filter {
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
    let inner = super::padded(&block, area);
    block.render(area, buf);
    if inner.area() == 0 {
        return;
    }
    if app.transcript.is_empty() {
        welcome(app, inner, buf);
        return;
    }

    // Each entry's lines, with one blank row between entries except
    // between consecutive one-liners (tool calls, notices).
    let ctx = app.render_ctx();
    let entries = &app.transcript.entries;
    let mut blocks: Vec<(usize, Rendered)> = Vec::with_capacity(entries.len());
    let mut total = 0;
    // Whether the previous shown entry was a one-liner; None before the first.
    let mut prev_compact: Option<bool> = None;
    for entry in entries.iter().filter(|e| app.shows(&e.session)) {
        let gap = usize::from(prev_compact.is_some_and(|p| !(p && entry.is_compact())));
        prev_compact = Some(entry.is_compact());
        let lines = entry.lines(inner.width, &ctx);
        total += gap + lines.len();
        blocks.push((gap, lines));
    }
    let height = usize::from(inner.height);
    let first = scroll.first_line(total, height);

    let mut row = 0usize; // line index in the whole transcript
    let mut y = inner.y;
    let bottom = inner.y + inner.height;
    for (gap, lines) in &blocks {
        let len = gap + lines.len();
        if row + len <= first {
            row += len;
            continue;
        }
        for i in 0..len {
            if row >= first && y < bottom {
                if i >= *gap
                    && let Some(line) = lines.get(i - gap)
                {
                    buf.set_line(inner.x, y, line, inner.width);
                }
                y += 1;
            }
            row += 1;
        }
        if y >= bottom {
            break;
        }
    }
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
