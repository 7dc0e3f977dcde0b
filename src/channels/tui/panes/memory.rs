//! Memory: the last search, its query and hits with score and path:line.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};

use crate::channels::tui::app::App;
use crate::channels::tui::layout::Pane;
use crate::channels::tui::wrap;

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
                    &format!("{}:{}", hit.path, hit.start_line),
                    width.saturating_sub(5),
                ),
                Style::default()
                    .fg(t.link)
                    .add_modifier(Modifier::UNDERLINED),
            ),
        ]));
        let snippet = wrap::one_line(without_headings(&hit.snippet), width.saturating_sub(2));
        if !snippet.is_empty() {
            out.push(Line::from(vec![
                Span::raw("  "),
                Span::styled(snippet, t.muted()),
            ]));
        }
    }
    out
}

/// The snippet from its first line of content: a daily log chunk starts
/// with the entry's `### HH:MM · who · origin` heading, which says little.
fn without_headings(snippet: &str) -> &str {
    let mut rest = snippet;
    loop {
        let (line, after) = rest.split_once('\n').unwrap_or((rest, ""));
        let trimmed = line.trim();
        if after.trim().is_empty() || !(trimmed.is_empty() || trimmed.starts_with('#')) {
            return rest;
        }
        rest = after;
    }
}

#[cfg(test)]
mod tests {
    use super::without_headings;

    #[test]
    fn headings_before_content_are_skipped() {
        assert_eq!(
            without_headings("### 18:02 · user · tui\n\nGave Ana the key."),
            "Gave Ana the key."
        );
        assert_eq!(without_headings("# Only a heading"), "# Only a heading");
        assert_eq!(
            without_headings("Plain text\n# later"),
            "Plain text\n# later"
        );
    }
}
