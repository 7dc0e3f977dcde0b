//! The input box: the textarea in a frame; the frame's bottom line lists
//! the slash commands matching what is typed.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Widget};

use crate::channels::tui::app::{App, Focus};
use crate::channels::tui::commands;
use crate::channels::tui::wrap;

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
    let found = commands::matches(text.trim_end());
    if !found.is_empty() {
        let hint = match found.as_slice() {
            [(name, arg, help)] => format!(" {name} {arg} · {help} ").replace("  ·", " ·"),
            many => {
                let names: Vec<&str> = many.iter().map(|(n, _, _)| *n).collect();
                format!(" {} · Tab completes ", names.join(" "))
            }
        };
        let max = usize::from(area.width.saturating_sub(4));
        block = block.title_bottom(Line::from(Span::styled(
            wrap::truncate(&hint, max),
            Style::default().fg(t.tool),
        )));
    }
    let inner = block.inner(area);
    block.render(area, buf);
    (&app.input.area).render(inner, buf);
}
