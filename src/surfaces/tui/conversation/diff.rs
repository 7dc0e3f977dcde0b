//! A file diff under its `write_file`/`edit_file` call: themed, collapsed
//! to a few lines unless expanded (Ctrl+O), and rendered once per width,
//! theme and expansion (the call's one-liner follows live state and is
//! rebuilt each frame; its diff never changes once it arrived).

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};

use super::{Lines, RenderCtx};
use crate::protocol::FileDiff;
use crate::surfaces::tui::wrap;

/// Diff lines shown while collapsed.
pub const PREVIEW: usize = 6;

/// Width, epoch (theme) and expansion: what a diff's lines depend on.
type Key = (u16, u64, bool);

/// One tool entry's rendered diff, and its rows (kept when the lines are
/// dropped, as for messages: scrolling sums heights of the whole
/// conversation every frame).
#[derive(Debug, Default)]
pub(super) struct DiffCache {
    lines: RefCell<Option<(Key, Lines)>>,
    rows: Cell<Option<(Key, usize)>>,
}

impl DiffCache {
    pub(super) fn lines(
        &self,
        diff: &FileDiff,
        width: u16,
        ctx: &RenderCtx<'_>,
        expanded: bool,
    ) -> Lines {
        let key = (width, ctx.epoch, expanded);
        let mut slot = self.lines.borrow_mut();
        if let Some((k, lines)) = slot.as_ref()
            && *k == key
        {
            return lines.clone();
        }
        let lines = Rc::new(render(diff, width, ctx, expanded));
        *slot = Some((key, lines.clone()));
        self.rows.set(Some((key, lines.len())));
        lines
    }

    /// Rows the diff takes; rendered once if not known at this key, and
    /// its lines kept only if they were held before.
    pub(super) fn rows(
        &self,
        diff: &FileDiff,
        width: u16,
        ctx: &RenderCtx<'_>,
        expanded: bool,
    ) -> usize {
        let key = (width, ctx.epoch, expanded);
        if let Some((k, rows)) = self.rows.get()
            && k == key
        {
            return rows;
        }
        let held = self.has_lines();
        let rows = self.lines(diff, width, ctx, expanded).len();
        if !held {
            self.clear();
        }
        rows
    }

    /// Forgets the lines (the entry is far from the viewport).
    pub(super) fn clear(&self) {
        self.lines.replace(None);
    }

    pub(super) fn has_lines(&self) -> bool {
        self.lines.borrow().is_some()
    }
}

fn render(diff: &FileDiff, width: u16, ctx: &RenderCtx<'_>, expanded: bool) -> Vec<Line<'static>> {
    let t = ctx.theme;
    let indent = [Span::raw("    ")];
    let inner = usize::from(width).saturating_sub(4).max(8);
    let total = diff.text.lines().count();
    // A marker standing in for one line would hide nothing.
    let shown = if expanded || total <= PREVIEW + 1 {
        total
    } else {
        PREVIEW
    };
    let mut out = Vec::new();
    for line in diff.text.lines().take(shown) {
        let color = match line.as_bytes().first() {
            Some(b'@') if line.starts_with("@@") => Some(t.diff_hunk),
            Some(b'+') => Some(t.diff_added),
            Some(b'-') => Some(t.diff_removed),
            Some(b' ') => Some(t.text),
            // Notes and markers: no change, binary, capped, no newline.
            _ => None,
        };
        let style = match color {
            Some(c) => Style::default().fg(c),
            None => t.muted().add_modifier(Modifier::ITALIC),
        };
        let pieces = vec![(style, line.replace('\t', "    "))];
        out.extend(wrap::into_lines(
            wrap::wrap_hard(&pieces, inner),
            &indent,
            &indent,
        ));
    }
    if shown < total {
        let more = total - shown;
        let s = if more == 1 { "" } else { "s" };
        out.push(Line::from(vec![
            indent[0].clone(),
            Span::styled(format!("… {more} more line{s} · Ctrl+O expands"), t.muted()),
        ]));
    }
    out
}
