//! Tables: columns sized by their content, long cells wrapped onto more
//! rows, nothing cut. A column narrower than its share keeps its width
//! and the wide ones share the rest; when the columns cannot all get a
//! readable width, each row shows as a record (`header: value` lines).

use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};

use super::{Table, Writer};
use crate::surfaces::tui::wrap::{self, Pieces};

/// Below this many cells a column's words break by character: show
/// records instead (unless its content is narrower still).
const MIN_COLUMN: usize = 6;
/// Cells between two columns: " │ ".
const SEPARATOR: usize = 3;

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
        let natural = natural_widths(&table, cols);
        let budget = avail.saturating_sub(SEPARATOR * (cols - 1));
        match column_widths(&natural, budget) {
            Some(widths) => self.grid(&table, &widths, first, rest),
            None => self.records(&table, avail, first, rest),
        }
        self.blank_before_next = true;
    }

    fn grid(
        &mut self,
        table: &Table,
        widths: &[usize],
        first: Vec<Span<'static>>,
        rest: Vec<Span<'static>>,
    ) {
        let sep = self.theme.muted();
        let empty = Vec::new();
        for (r, row) in table.rows.iter().enumerate() {
            let header = r < table.header_rows;
            let cells: Vec<Vec<Pieces>> = widths
                .iter()
                .enumerate()
                .map(|(i, w)| wrap::wrap(&styled(row.get(i).unwrap_or(&empty), header), *w))
                .collect();
            let height = cells.iter().map(Vec::len).max().unwrap_or(1);
            for line in 0..height {
                let mut spans = if r == 0 && line == 0 {
                    first.clone()
                } else {
                    rest.clone()
                };
                for (i, w) in widths.iter().enumerate() {
                    if i > 0 {
                        spans.push(Span::styled(" │ ", sep));
                    }
                    let piece = cells[i].get(line).cloned().unwrap_or_default();
                    spans.extend(cell_spans(piece, *w, table.aligns.get(i).copied()));
                }
                self.out.push(Line::from(spans));
            }
            if r + 1 == table.header_rows {
                let mut line = rest.clone();
                let rule: Vec<String> = widths.iter().map(|w| "─".repeat(*w)).collect();
                line.push(Span::styled(rule.join("─┼─"), sep));
                self.out.push(Line::from(line));
            }
        }
    }

    /// Each body row as `header: value` lines, a blank row between rows.
    fn records(
        &mut self,
        table: &Table,
        avail: usize,
        first: Vec<Span<'static>>,
        rest: Vec<Span<'static>>,
    ) {
        let names: Vec<String> = table
            .rows
            .iter()
            .take(table.header_rows)
            .flat_map(|row| row.iter().map(plain))
            .collect();
        let label = Style::default()
            .fg(self.theme.text)
            .add_modifier(Modifier::BOLD);
        let mut head = Some(first);
        for (n, row) in table.rows.iter().skip(table.header_rows).enumerate() {
            if n > 0 {
                self.out.push(Line::from(rest.clone()));
            }
            for (i, cell) in row.iter().enumerate() {
                let name = names.get(i).cloned().unwrap_or_else(|| (i + 1).to_string());
                let mut pieces = vec![(label, format!("{name}: "))];
                pieces.extend(cell.iter().cloned());
                let prefix = head.take().unwrap_or_else(|| rest.clone());
                let wrapped = wrap::wrap(&pieces, avail.max(1));
                self.out.extend(wrap::into_lines(wrapped, &prefix, &rest));
            }
        }
    }
}

/// Each column's widest cell (at least one cell).
fn natural_widths(table: &Table, cols: usize) -> Vec<usize> {
    let mut widths = vec![1usize; cols];
    for row in &table.rows {
        for (i, cell) in row.iter().enumerate() {
            widths[i] = widths[i].max(wrap::width(&plain(cell)));
        }
    }
    widths
}

/// Widths for columns whose content is `natural` wide in `budget` cells:
/// all of it when it fits; else columns narrower than an equal share of
/// what is left keep their width and the rest share it equally. `None`
/// when a column would get fewer than `MIN_COLUMN` cells (and fewer than
/// its content).
pub(super) fn column_widths(natural: &[usize], budget: usize) -> Option<Vec<usize>> {
    if natural.iter().sum::<usize>() <= budget {
        return Some(natural.to_vec());
    }
    let mut widths = vec![0usize; natural.len()];
    let mut order: Vec<usize> = (0..natural.len()).collect();
    order.sort_by_key(|&i| natural[i]);
    let mut left = budget;
    let mut open = natural.len();
    let mut k = 0;
    // Narrowest first: each keeps its width while it is within the share.
    while k < order.len() && natural[order[k]] * open <= left {
        let i = order[k];
        widths[i] = natural[i];
        left -= natural[i];
        open -= 1;
        k += 1;
    }
    let wide = &order[k..];
    let share = left / open.max(1);
    let mut extra = left - share * open.max(1);
    for &i in wide {
        widths[i] = share + usize::from(extra > 0);
        extra = extra.saturating_sub(1);
    }
    let readable = widths
        .iter()
        .zip(natural)
        .all(|(w, n)| *w >= MIN_COLUMN.min(*n));
    readable.then_some(widths)
}

fn plain(cell: &Pieces) -> String {
    cell.iter().map(|(_, t)| t.as_str()).collect()
}

fn styled(cell: &Pieces, header: bool) -> Pieces {
    if !header {
        return cell.clone();
    }
    cell.iter()
        .map(|(s, t)| (s.add_modifier(Modifier::BOLD), t.clone()))
        .collect()
}

/// One row of a wrapped cell padded to `width`, aligned as the table says.
fn cell_spans(
    piece: Pieces,
    width: usize,
    align: Option<pulldown_cmark::Alignment>,
) -> Vec<Span<'static>> {
    use pulldown_cmark::Alignment;
    let used: usize = piece.iter().map(|(_, t)| wrap::width(t)).sum();
    let mut spans: Vec<Span<'static>> = piece
        .into_iter()
        .map(|(style, text)| Span::styled(text, style))
        .collect();
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

#[cfg(test)]
mod tests {
    use super::column_widths;

    #[test]
    fn narrow_columns_keep_their_width_and_wide_ones_share_the_rest() {
        assert_eq!(column_widths(&[2, 6, 40], 60), Some(vec![2, 6, 40]));
        assert_eq!(column_widths(&[2, 6, 100], 40), Some(vec![2, 6, 32]));
        assert_eq!(column_widths(&[2, 50, 50], 41), Some(vec![2, 20, 19]));
        // Twelve columns in 30 cells: not readable.
        assert_eq!(column_widths(&[15; 12], 30), None);
        // Tiny content is readable at its own width.
        assert_eq!(column_widths(&[1; 12], 12), Some(vec![1; 12]));
    }
}
