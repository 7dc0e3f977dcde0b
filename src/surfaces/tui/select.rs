//! The selected conversation item, and the keys that act on it.
//!
//! Ctrl+O expands or collapses one item, not every call in the session:
//! the one picked with Alt+Up / Alt+Down (or a click), else the newest
//! tool call, thinking block or compaction summary shown. Alt+O expands
//! or collapses them all; Alt+C copies the newest code block.

use crossterm::event::{KeyCode, KeyEvent};

use super::app::{App, Effect};
use super::conversation::{Kind, Level};
use super::{markdown, panes};

impl App {
    /// Keys acting on the selected item; `None` when the key is not one.
    pub(super) fn item_key(&mut self, key: KeyEvent, ctrl: bool, alt: bool) -> Option<Vec<Effect>> {
        match key.code {
            KeyCode::Char('o') if ctrl => self.toggle_selected(),
            KeyCode::Char('o') if alt => self.toggle_all(),
            KeyCode::Up if alt => self.move_selection(true),
            KeyCode::Down if alt => self.move_selection(false),
            KeyCode::Char('c') if alt => return Some(self.copy_last_code_block()),
            _ => return None,
        }
        Some(Vec::new())
    }

    /// The entry Ctrl+O acts on: the picked one while it is shown, else
    /// the newest expandable entry shown.
    pub fn selected_item(&self) -> Option<usize> {
        let items = self.items();
        match self.conversation.selected {
            Some(i) if items.contains(&i) => Some(i),
            _ => items.last().copied(),
        }
    }

    /// Whether the selection was picked (then the conversation marks it).
    pub fn selection_picked(&self) -> bool {
        self.conversation
            .selected
            .is_some_and(|i| self.items().contains(&i))
    }

    /// The expandable entries shown, oldest first.
    fn items(&self) -> Vec<usize> {
        panes::conversation::shown(self)
            .into_iter()
            .map(|(i, _)| i)
            .filter(|&i| self.conversation.entries[i].expandable())
            .collect()
    }

    /// Ctrl+O: expands or collapses the selected item only.
    pub(super) fn toggle_selected(&mut self) {
        let Some(i) = self.selected_item() else {
            self.notice(
                Level::Info,
                "nothing to expand: no tool call, thinking or summary shown",
            );
            return;
        };
        self.toggle_entry(i);
    }

    /// Expands or collapses entry `i` (a click on it, Ctrl+O). While every
    /// item shows expanded (Alt+O) this switches the one between its
    /// first lines and all of it.
    pub(super) fn toggle_entry(&mut self, i: usize) {
        if let Some(e) = self.conversation.entries.get_mut(i) {
            e.expanded = !e.expanded;
        }
    }

    /// Alt+O: every item expanded (a call shows its first output lines), or
    /// every item collapsed again, those expanded one by one too.
    fn toggle_all(&mut self) {
        self.expanded = !self.expanded;
        if !self.expanded {
            for e in &mut self.conversation.entries {
                e.expanded = false;
            }
        }
    }

    /// Alt+Up / Alt+Down: the previous or next item; past the newest the
    /// selection follows the newest again. The item is scrolled into view.
    fn move_selection(&mut self, up: bool) {
        let items = self.items();
        let Some(current) = self.selected_item() else {
            return;
        };
        let at = items.iter().position(|&i| i == current).unwrap_or(0);
        self.conversation.selected = if up {
            Some(items[at.saturating_sub(1)])
        } else {
            items.get(at + 1).copied()
        };
        if let Some(i) = self.selected_item() {
            self.reveal_entry(i);
        }
    }

    /// Scrolls the conversation so that entry `i` shows, if it does not.
    pub(super) fn reveal_entry(&mut self, i: usize) {
        let width = self.conversation_width.get();
        if width == 0 {
            return;
        }
        let (row, total) = panes::conversation::entry_row(self, width, i);
        if let Some(row) = row {
            self.conversation_scroll.set_total(total);
            self.conversation_scroll.reveal(row);
        }
    }

    /// Alt+C: the newest code block shown, to the clipboard.
    fn copy_last_code_block(&mut self) -> Vec<Effect> {
        let shown = panes::conversation::shown(self);
        let code = shown.iter().rev().find_map(|&(i, _)| {
            let e = &self.conversation.entries[i];
            (e.kind == Kind::Assistant)
                .then(|| markdown::code_blocks(&e.text).pop())
                .flatten()
        });
        match code {
            Some(code) => self.copy_code(code),
            None => {
                self.notice(Level::Info, "no code block to copy");
                Vec::new()
            }
        }
    }

    /// A code block to the clipboard, saying how much went.
    pub(super) fn copy_code(&mut self, code: String) -> Vec<Effect> {
        let code = code.strip_suffix('\n').unwrap_or(&code).to_string();
        let n = code.lines().count().max(1);
        let s = if n == 1 { "" } else { "s" };
        // OSC 52 has no answer: say what was sent to the terminal.
        self.notice(Level::Info, format!("copied {n} line{s} of code (OSC 52)"));
        vec![Effect::Copy(code)]
    }
}
