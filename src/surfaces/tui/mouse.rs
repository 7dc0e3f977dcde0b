//! The mouse: the wheel scrolls the pane under the pointer; a left click
//! focuses the pane it lands in (a side tab's title picks that tab), on a
//! tool call, thinking block or summary selects and expands or collapses
//! it, and on a code block copies that block (OSC 52).

use crossterm::event::{KeyCode, MouseButton, MouseEvent, MouseEventKind};
use ratatui::layout::{Position, Rect};

use super::app::{App, Effect, Focus};
use super::conversation::{DrawnRow, Kind};
use super::layout::{Pane, Side};
use super::markdown;

/// Lines one mouse wheel notch scrolls.
const WHEEL: usize = 3;

impl App {
    pub(super) fn mouse(&mut self, mouse: MouseEvent) -> Vec<Effect> {
        let at = Position::new(mouse.column, mouse.row);
        match mouse.kind {
            MouseEventKind::ScrollUp => self.wheel(at, KeyCode::Up),
            MouseEventKind::ScrollDown => self.wheel(at, KeyCode::Down),
            MouseEventKind::Down(MouseButton::Left) => return self.click(at),
            _ => {}
        }
        Vec::new()
    }

    /// The pane under the pointer, if the last frame drew one there.
    fn pane_at(&self, at: Position) -> Option<(Pane, Rect)> {
        let rects = self.rects.get()?;
        Pane::ALL.into_iter().find_map(|p| {
            rects
                .pane(p, self.side_tab)
                .filter(|a| a.contains(at))
                .map(|a| (p, a))
        })
    }

    /// The wheel scrolls the pane under the pointer.
    fn wheel(&mut self, at: Position, code: KeyCode) {
        let pane = self.pane_at(at).map_or(Pane::Conversation, |(p, _)| p);
        for _ in 0..WHEEL {
            self.scroll_key(pane, code);
        }
    }

    fn click(&mut self, at: Position) -> Vec<Effect> {
        // A modal or an overlay decides by keys; a click does nothing.
        if !self.approvals.is_empty()
            || self.rewind.is_some()
            || self.approval_rules.is_some()
            || self.overlay.is_some()
        {
            return Vec::new();
        }
        let Some(rects) = self.rects.get() else {
            return Vec::new();
        };
        if rects.input.contains(at) {
            self.focus = Focus::Input;
            return Vec::new();
        }
        let Some((pane, area)) = self.pane_at(at) else {
            return Vec::new();
        };
        if pane != Pane::Conversation {
            let tabbed = matches!(rects.side, Side::Tabs(_));
            let pane = match tabbed && at.y == area.y {
                true => tab_at(area, at.x).unwrap_or(pane),
                false => pane,
            };
            self.side_tab = pane;
            self.focus = Focus::Pane(pane);
            return Vec::new();
        }
        self.focus = Focus::Pane(Pane::Conversation);
        let row = self
            .conversation
            .drawn
            .borrow()
            .iter()
            .find(|r| r.y == at.y)
            .copied();
        match row {
            Some(row) => self.click_entry(row),
            None => Vec::new(),
        }
    }

    /// A click on a drawn row of the conversation.
    fn click_entry(&mut self, row: DrawnRow) -> Vec<Effect> {
        let Some(e) = self.conversation.entries.get(row.entry) else {
            return Vec::new();
        };
        if e.expandable() {
            self.conversation.selected = Some(row.entry);
            self.toggle_entry(row.entry);
            return Vec::new();
        }
        if e.kind != Kind::Assistant {
            return Vec::new();
        }
        match self.code_block_at(row) {
            Some(code) => self.copy_code(code),
            None => Vec::new(),
        }
    }

    /// The code block drawn on `row` of an answer: the fences above the
    /// row in the answer's lines say which block, the text says what it
    /// holds.
    fn code_block_at(&self, row: DrawnRow) -> Option<String> {
        let e = self.conversation.entries.get(row.entry)?;
        let width = self.conversation_width.get();
        let lines = e.lines(width, &self.render_ctx());
        let mut inside = false;
        let mut block = None;
        for i in 0..=row.line {
            let fence = lines
                .get(i)
                .is_some_and(|l| markdown::is_fence(l, &self.theme));
            if fence && !inside {
                block = Some(block.map_or(0, |b| b + 1));
                inside = true;
            } else if fence {
                // The closing fence belongs to its block; below it does not.
                inside = false;
                if i == row.line {
                    inside = true;
                }
            }
        }
        let k = block.filter(|_| inside)?;
        markdown::code_blocks(&e.text).into_iter().nth(k)
    }
}

/// The side pane whose tab title is at column `x` of a tabbed frame's top
/// row (titles as `panes::frame` draws them: ` N Title ` joined by `│`).
fn tab_at(area: Rect, x: u16) -> Option<Pane> {
    let mut left = area.x + 1;
    for pane in Pane::SIDE {
        let w = format!(" {} {} ", pane.number(), pane.title()).len() as u16;
        if (left..left + w).contains(&x) {
            return Some(pane);
        }
        left += w + 1;
    }
    None
}
