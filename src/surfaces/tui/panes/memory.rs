//! Memory: the last search, its query and hits with score, path:line and
//! the line that matched.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};

use crate::surfaces::tui::app::App;
use crate::surfaces::tui::layout::Pane;
use crate::surfaces::tui::wrap;

pub fn render(app: &App, area: Rect, buf: &mut Buffer) {
    super::side(app, Pane::Memory, false, area, buf);
}

pub fn lines(app: &App, width: usize) -> Vec<Line<'static>> {
    let t = &app.theme;
    let Some(search) = &app.memory else {
        return Vec::new();
    };
    let mut out = vec![Line::from(super::field(
        app,
        "query",
        wrap::truncate(&format!("\"{}\"", search.query), width.saturating_sub(6)),
    ))];
    if search.hits.is_empty() {
        out.push(Line::styled("  no hits", t.muted()));
    }
    for hit in &search.hits {
        out.push(Line::from(vec![
            Span::styled(
                format!("{:.2} ", hit.score),
                Style::default().fg(t.routing_local),
            ),
            Span::styled(
                wrap::truncate(
                    &format!("{}:{}", hit.path, hit.best_line.max(hit.start_line)),
                    width.saturating_sub(5),
                ),
                Style::default()
                    .fg(t.link)
                    .add_modifier(Modifier::UNDERLINED),
            ),
        ]));
        let snippet = wrap::one_line(hit.matched_line(), width.saturating_sub(2));
        if !snippet.is_empty() {
            out.push(Line::from(vec![
                Span::raw("  "),
                Span::styled(snippet, t.muted()),
            ]));
        }
    }
    out
}
