//! An entry's lines: the cached part per width and theme, the open block
//! of a streaming answer rendered fresh, and each kind's drawing.

use std::rc::Rc;

use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};

use super::cells::{header_line, tool_lines};
use super::{Cache, Entry, Kind, Level, RenderCtx, Rendered, compaction, stable_prefix};
use crate::surfaces::tui::{markdown, wrap};

impl Entry {
    /// A chip a picture (`[image 1280x720 png 84 KB]`); expanded (Ctrl+O
    /// on the message, a click), each also says where it came from.
    fn image_chips(&self, ctx: &RenderCtx<'_>) -> Vec<Line<'static>> {
        let t = ctx.theme;
        self.images
            .iter()
            .map(|part| {
                let mut spans = vec![
                    Span::raw("  "),
                    Span::styled(crate::images::chip(part), Style::default().fg(t.tool)),
                ];
                if self.expands(ctx) {
                    let source = part.source.as_deref().unwrap_or("(no source recorded)");
                    spans.push(Span::styled(format!(" {source}"), t.muted()));
                }
                Line::from(spans)
            })
            .collect()
    }

    pub fn lines(&self, width: u16, ctx: &RenderCtx<'_>) -> Rendered {
        let lines = self.render_cached(width, ctx);
        self.note_height(width, ctx, lines.len());
        lines
    }

    fn render_cached(&self, width: u16, ctx: &RenderCtx<'_>) -> Rendered {
        // Tool lines follow live state in the ToolLog: cheap, never cached.
        if let Kind::Tool(seq) = self.kind {
            let expanded = self.expands(ctx);
            let mut lines = tool_lines(seq, width, ctx, self.tool_shown(ctx));
            if let Some(diff) = ctx.tools.get(seq).and_then(|r| r.diff.as_ref()) {
                lines.extend(self.diff.lines(diff, width, ctx, expanded).iter().cloned());
            }
            // The first thing egirl does in a turn is this call: it gets
            // the "egirl" header an answer would have had.
            if !self.continued {
                let t = ctx.theme;
                lines.insert(
                    0,
                    header_line(
                        "egirl",
                        t.assistant,
                        &self.origin,
                        false,
                        t,
                        self.agent(ctx),
                    ),
                );
            }
            return Rendered::cached(Rc::new(lines));
        }
        if matches!(self.kind, Kind::Assistant) {
            return self.answer_lines(width, ctx);
        }
        let mut cache = self.cache.borrow_mut();
        if let Some(c) = cache.as_ref()
            && c.width == width
            && c.epoch == ctx.epoch
            && c.expanded == self.expands(ctx)
            && c.stable == self.text.len()
            && !self.open
        {
            return Rendered::cached(c.lines.clone());
        }
        let lines = Rc::new(self.render(&self.text, width, ctx, true));
        *cache = Some(Cache {
            width,
            epoch: ctx.epoch,
            expanded: self.expands(ctx),
            stable: self.text.len(),
            lines: lines.clone(),
            body: true,
            rendered: self.text.len(),
        });
        Rendered::cached(lines)
    }

    /// An answer renders block by block: the cached lines cover the text up
    /// to a cut (`stable_prefix` while streaming, all of it once closed),
    /// blocks closed since are rendered alone and appended, and the open
    /// block is rendered fresh each time. Each byte is rendered into the
    /// cache once, so streaming costs the open block per frame and
    /// finishing costs the last block.
    fn answer_lines(&self, width: u16, ctx: &RenderCtx<'_>) -> Rendered {
        let target = if self.open {
            stable_prefix(&self.text)
        } else {
            self.text.len()
        };
        let mut slot = self.cache.borrow_mut();
        let c = match slot.as_mut() {
            Some(c) if c.width == width && c.epoch == ctx.epoch && c.stable <= target => c,
            _ => slot.insert(Cache {
                width,
                epoch: ctx.epoch,
                expanded: false,
                stable: 0,
                lines: Rc::new(self.render("", width, ctx, true)),
                body: false,
                rendered: 0,
            }),
        };
        if c.stable < target {
            let body = self.render(&self.text[c.stable..target], width, ctx, false);
            c.rendered += target - c.stable;
            c.stable = target;
            if !body.is_empty() {
                // Rc::make_mut copies only while a caller still holds the
                // previous frame's lines; the pane drops them after drawing.
                let lines = Rc::make_mut(&mut c.lines);
                if c.body {
                    lines.push(Line::default());
                }
                lines.extend(body);
                c.body = true;
            }
        }
        let head = c.lines.clone();
        let body = c.body;
        drop(slot);
        if !self.open {
            return Rendered::cached(head);
        }
        let open = &self.text[target..];
        if open.trim().is_empty() {
            // Nothing to show yet: not even the header.
            return Rendered::cached(if body { head } else { Rc::default() });
        }
        let mut tail = Vec::new();
        if body {
            tail.push(Line::default());
        }
        // Half-arrived markdown rendered as what it becomes (a table as a
        // table), so the screen does not jump when the rest arrives.
        let open = markdown::provisional(open);
        tail.extend(self.render(&open, width, ctx, false));
        Rendered { head, tail }
    }

    fn render(
        &self,
        text: &str,
        width: u16,
        ctx: &RenderCtx<'_>,
        header: bool,
    ) -> Vec<Line<'static>> {
        let t = ctx.theme;
        let body_w = usize::from(width).saturating_sub(2).max(8);
        let indent = [Span::raw("  ")];
        let mut out = Vec::new();
        match &self.kind {
            Kind::User { queued } => {
                out.push(header_line(
                    "you",
                    t.user,
                    &self.origin,
                    *queued,
                    t,
                    self.agent(ctx),
                ));
                let style = Style::default().fg(t.text);
                for line in text.split('\n') {
                    let pieces = vec![(style, line.to_string())];
                    out.extend(wrap::into_lines(
                        wrap::wrap(&pieces, body_w),
                        &indent,
                        &indent,
                    ));
                }
                out.extend(self.image_chips(ctx));
            }
            Kind::Assistant => {
                if header && !self.continued {
                    out.push(header_line(
                        "egirl",
                        t.assistant,
                        &self.origin,
                        false,
                        t,
                        self.agent(ctx),
                    ));
                }
                for line in markdown::render(text, body_w, t) {
                    // Blank rows stay empty, as between streamed blocks.
                    if line.width() == 0 && line.spans.is_empty() {
                        out.push(Line::default());
                        continue;
                    }
                    let mut spans = indent.to_vec();
                    spans.extend(line.spans);
                    out.push(Line::from(spans));
                }
            }
            Kind::Reasoning => {
                let words = text.split_whitespace().count();
                let dots = if self.open { "…" } else { "" };
                out.push(Line::from(vec![
                    Span::raw("  "),
                    Span::styled(format!("✻ thinking{dots} ({words} words)"), t.muted()),
                ]));
                if self.expands(ctx) {
                    let style = t.muted().add_modifier(Modifier::ITALIC);
                    let bar = [Span::styled("    │ ", t.muted())];
                    for line in text.trim().split('\n') {
                        let pieces = vec![(style, line.to_string())];
                        let wrapped = wrap::wrap(&pieces, body_w.saturating_sub(4));
                        out.extend(wrap::into_lines(wrapped, &bar, &bar));
                    }
                }
            }
            Kind::Notice(level) => {
                let (mark, color) = match level {
                    Level::Info => ("·", t.muted),
                    Level::Warning => ("!", t.warning),
                    Level::Error => ("✗", t.error),
                };
                let style = Style::default().fg(color);
                let first = [Span::raw("  "), Span::styled(format!("{mark} "), style)];
                let rest = [Span::raw("    ")];
                for (i, line) in text.split('\n').enumerate() {
                    let pieces = vec![(style, line.to_string())];
                    let wrapped = wrap::wrap(&pieces, body_w.saturating_sub(2));
                    let head: &[Span<'static>] = if i == 0 { &first } else { &rest };
                    out.extend(wrap::into_lines(wrapped, head, &rest));
                }
            }
            Kind::Compaction(label) => out.extend(compaction::render(
                label,
                text,
                width,
                ctx,
                self.expands(ctx),
            )),
            Kind::Tool(_) => {}
        }
        out
    }
}
