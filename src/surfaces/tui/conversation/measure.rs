//! Heights without lines: a long conversation keeps the rendered lines of
//! the entries near the viewport only (they are most of its memory), and
//! for the rest the number of rows they take at the last width, which is
//! all scrolling needs.

use std::ops::Range;

use super::{Conversation, Entry, Kind, RenderCtx};

/// Entries either side of the drawn ones that keep their lines, so
/// scrolling a little does not render them again.
const KEEP_AROUND: usize = 16;

impl Entry {
    /// Rows the entry takes at `width`. An entry not rendered at this
    /// width is rendered once and only its row count is kept.
    pub fn height(&self, width: u16, ctx: &RenderCtx<'_>) -> usize {
        if let Kind::Tool(seq) = self.kind {
            // The one-liner follows live state; the diff's rows are kept.
            let header = usize::from(!self.continued);
            let expanded = self.expands(ctx);
            let diff = ctx.tools.get(seq).and_then(|r| r.diff.as_ref());
            let diff_rows = diff.map_or(0, |d| self.diff.rows(d, width, ctx, expanded));
            let call = super::cells::tool_lines(seq, width, ctx, self.tool_shown(ctx)).len();
            return header + call + diff_rows;
        }
        if self.open {
            return self.lines(width, ctx).len();
        }
        if let Some((key, rows)) = self.height.get()
            && key == (width, ctx.epoch, self.text.len(), self.expands(ctx))
        {
            return rows;
        }
        let had_lines = self.cache.borrow().is_some();
        // A message never drawn at this width gets an estimate from its
        // text: measuring a 10,000-message session exactly meant rendering
        // every message (seconds) on the first scroll or search. Drawing it
        // records its exact height (`note_height`).
        if !had_lines && matches!(self.kind, Kind::User { .. } | Kind::Assistant) {
            let rows = self.estimate(width);
            self.height.set(Some((
                (width, ctx.epoch, self.text.len(), self.expands(ctx)),
                rows,
            )));
            return rows;
        }
        let rows = self.lines(width, ctx).len();
        if !had_lines {
            self.cache.replace(None);
        }
        rows
    }

    /// Rows the text takes wrapped at the body's width, plus the header:
    /// close to what markdown renders (lists, code and tables differ by a
    /// row or two), at the cost of one pass over the text.
    fn estimate(&self, width: u16) -> usize {
        let body = usize::from(width).saturating_sub(2).max(8);
        let header = usize::from(!(self.kind == Kind::Assistant && self.continued));
        let rows: usize = self
            .text
            .trim_end()
            .split('\n')
            .map(|line| {
                crate::surfaces::tui::wrap::width(line)
                    .div_ceil(body)
                    .max(1)
            })
            .sum();
        header + rows
    }

    /// Records the height of lines just rendered (finished entries only:
    /// a streaming one changes with every delta).
    pub(super) fn note_height(&self, width: u16, ctx: &RenderCtx<'_>, rows: usize) {
        if !self.open && !matches!(self.kind, Kind::Tool(_)) {
            self.height.set(Some((
                (width, ctx.epoch, self.text.len(), self.expands(ctx)),
                rows,
            )));
        }
    }

    /// The text or how it renders changed: forget lines and height.
    pub(super) fn invalidate(&self) {
        self.cache.replace(None);
        self.height.set(None);
    }
}

impl Conversation {
    /// Drops the cached lines of finished entries outside `drawn` (entry
    /// indices) and a margin around it; their heights stay.
    pub fn keep_lines_near(&self, drawn: Range<usize>) {
        let keep = drawn.start.saturating_sub(KEEP_AROUND)..drawn.end.saturating_add(KEEP_AROUND);
        for (i, e) in self.entries.iter().enumerate() {
            if !keep.contains(&i) && !e.open && e.cache.borrow().is_some() {
                e.cache.replace(None);
            }
            if !keep.contains(&i) {
                e.diff.clear();
            }
        }
    }

    /// Entries holding rendered lines (tests: memory stays bounded).
    pub fn entries_with_lines(&self) -> usize {
        self.entries
            .iter()
            .filter(|e| e.cache.borrow().is_some())
            .count()
    }
}
