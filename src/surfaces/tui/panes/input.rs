//! The input box: the textarea in a frame, and above it the list of the
//! slash commands matching what is typed (`commands::popup`).

use ratatui::buffer::Buffer;
use ratatui::layout::{Margin, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Clear, Widget};

use crate::surfaces::tui::app::{App, Focus};
use crate::surfaces::tui::commands::popup;
use crate::surfaces::tui::wrap;

pub fn render(app: &App, area: Rect, buf: &mut Buffer) {
    if area.is_empty() {
        return;
    }
    let t = &app.theme;
    let focused = app.focus == Focus::Input;
    let mut block = Block::bordered()
        .border_type(if focused {
            BorderType::Thick
        } else {
            BorderType::Rounded
        })
        .border_style(t.border(focused))
        .title(Span::styled(" Message ", t.border(focused)));
    // The attached pictures, a chip each, on the frame's top line.
    if !app.input.images.is_empty() {
        let chips: Vec<String> = app.input.images.iter().map(crate::images::chip).collect();
        let chips = format!(" {} · Backspace removes ", chips.join(" "));
        block = block.title(Span::styled(chips, Style::default().fg(t.tool)));
    }
    // A column of padding, as in every other pane.
    let inner = block.inner(area).inner(Margin::new(1, 0));
    block.render(area, buf);
    // The cursor shows only where typing goes: not while a modal, an
    // overlay or another pane has the keys.
    let typing = focused && app.approvals.is_empty() && app.overlay.is_none();
    if typing {
        (&app.input.area).render(inner, buf);
    } else {
        let mut quiet = app.input.area.clone();
        quiet.set_cursor_style(Style::default());
        (&quiet).render(inner, buf);
    }
    render_popup(app, area, buf);
}

/// The completion list, over the bottom of whatever is above the input:
/// each command with its argument and what it does, the selection
/// highlighted, scrolled to keep it in view.
fn render_popup(app: &App, input: Rect, buf: &mut Buffer) {
    let found = popup::items(app);
    if found.is_empty() {
        return;
    }
    let t = &app.theme;
    let selected = popup::selected(app, found.len());
    let rows = found.len().min(popup::ROWS);
    let top = buf.area.y;
    let height = (rows as u16 + 2).min(input.y.saturating_sub(top));
    if height < 3 {
        return;
    }
    let rect = Rect::new(input.x, input.y - height, input.width, height);
    Clear.render(rect, buf);
    let block = Block::bordered()
        .border_type(BorderType::Rounded)
        .border_style(Style::default().fg(t.tool))
        .title(Span::styled(
            " ↑↓ select · Tab/Enter accept · Esc closes ",
            Style::default().fg(t.tool),
        ));
    let inner = block.inner(rect).inner(Margin::new(1, 0));
    block.render(rect, buf);
    let visible = usize::from(inner.height);
    let first = (selected + 1).saturating_sub(visible);
    let name_w = found
        .iter()
        .map(|c| wrap::width(&c.name) + 1 + wrap::width(&c.arg))
        .max()
        .unwrap_or(0)
        .min(usize::from(inner.width) / 2);
    for (row, (i, c)) in found
        .iter()
        .enumerate()
        .skip(first)
        .take(visible)
        .enumerate()
    {
        let base = if i == selected {
            Style::default().add_modifier(Modifier::REVERSED)
        } else {
            Style::default()
        };
        let name = wrap::truncate(&format!("{} {}", c.name, c.arg), name_w);
        let help_w = usize::from(inner.width).saturating_sub(name_w + 2);
        let line = Line::from(vec![
            Span::styled(format!("{name:<name_w$}  "), base.fg(t.tool)),
            Span::styled(
                format!("{:<help_w$}", wrap::truncate(&c.help, help_w)),
                base.fg(t.text),
            ),
        ]);
        buf.set_line(inner.x, inner.y + row as u16, &line, inner.width);
    }
}
