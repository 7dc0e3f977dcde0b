//! The input box: the textarea in a frame; the frame's bottom line lists
//! the slash commands matching what is typed.

use ratatui::buffer::Buffer;
use ratatui::layout::{Margin, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Widget};

use crate::surfaces::tui::app::{App, Focus};
use crate::surfaces::tui::commands;
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
    let text = app.input.text();
    let found = commands::matches(app, text.trim_end());
    if !found.is_empty() {
        let hint = match found.as_slice() {
            [c] => format!(" {} {} · {} ", c.name, c.arg, c.help).replace("  ·", " ·"),
            many => {
                let names: Vec<&str> = many.iter().map(|c| c.name.as_str()).collect();
                format!(" {} · Tab completes ", names.join(" "))
            }
        };
        let max = usize::from(area.width.saturating_sub(4));
        block = block.title_bottom(Line::from(Span::styled(
            wrap::truncate(&hint, max),
            Style::default().fg(t.tool),
        )));
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
}
