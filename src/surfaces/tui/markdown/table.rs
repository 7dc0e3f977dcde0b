//! Simple tables: columns as wide as their widest cell, the widest
//! shrunk (cells cut with an ellipsis) until the row fits the width.

use ratatui::style::Modifier;
use ratatui::text::{Line, Span};

use super::Writer;
use crate::surfaces::tui::wrap::{self, Pieces};

impl Writer<'_> {
    pub(super) fn table(&mut self) {
        let Some(table) = self.table.take() else {
            return;
        };
        let cols = table.rows.iter().map(Vec::len).max().unwrap_or(0);
        if cols == 0 {
            return;
        }
        let (first, rest) = self.prefixes();
        let avail = self.width.saturating_sub(wrap::spans_width(&rest));
        let cell_w = |c: &Pieces| c.iter().map(|(_, t)| wrap::width(t)).sum::<usize>();
        let mut widths = vec![1usize; cols];
        for row in &table.rows {
            for (i, cell) in row.iter().enumerate() {
                widths[i] = widths[i].max(cell_w(cell));
            }
        }
        // Shrink the widest column until the row fits (separators: " │ ").
        let seps = 3 * (cols - 1);
        while widths.iter().sum::<usize>() + seps > avail {
            let Some((i, w)) = widths.iter().copied().enumerate().max_by_key(|(_, w)| *w) else {
                break;
            };
            if w <= 3 {
                break;
            }
            widths[i] = w - 1;
        }
        let sep = self.theme.muted();
        for (r, row) in table.rows.iter().enumerate() {
            let mut spans = if r == 0 { first.clone() } else { rest.clone() };
            for (i, w) in widths.iter().enumerate() {
                if i > 0 {
                    spans.push(Span::styled(" │ ", sep));
                }
                let empty = Vec::new();
                let cell = row.get(i).unwrap_or(&empty);
                let header = r < table.header_rows;
                let align = table.aligns.get(i).copied();
                spans.extend(cell_spans(cell, *w, align, header));
            }
            self.out.push(Line::from(spans));
            if r + 1 == table.header_rows {
                let mut line = rest.clone();
                let rule: Vec<String> = widths.iter().map(|w| "─".repeat(*w)).collect();
                line.push(Span::styled(rule.join("─┼─"), sep));
                self.out.push(Line::from(line));
            }
        }
        self.blank_before_next = true;
    }
}

/// One table cell cut or padded to `width`, aligned as the table says.
fn cell_spans(
    cell: &Pieces,
    width: usize,
    align: Option<pulldown_cmark::Alignment>,
    header: bool,
) -> Vec<Span<'static>> {
    use pulldown_cmark::Alignment;
    let mut spans = Vec::new();
    let mut used = 0;
    let total: usize = cell.iter().map(|(_, t)| wrap::width(t)).sum();
    let cut = total > width;
    for (style, text) in cell {
        let style = if header {
            style.add_modifier(Modifier::BOLD)
        } else {
            *style
        };
        let room = width.saturating_sub(used);
        if room == 0 {
            break;
        }
        let piece = if cut && used + wrap::width(text) >= width {
            wrap::truncate(text, room)
        } else {
            text.clone()
        };
        used += wrap::width(&piece);
        spans.push(Span::styled(piece, style));
    }
    let pad = width.saturating_sub(used);
    let (left, right) = match align {
        Some(Alignment::Right) => (pad, 0),
        Some(Alignment::Center) => (pad / 2, pad - pad / 2),
        _ => (0, pad),
    };
    if left > 0 {
        spans.insert(0, Span::raw(" ".repeat(left)));
    }
    if right > 0 {
        spans.push(Span::raw(" ".repeat(right)));
    }
    spans
}
