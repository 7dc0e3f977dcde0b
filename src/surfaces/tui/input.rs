//! The input box: a ratatui-textarea editor plus sent-message history.

use crossterm::event::KeyEvent;
use ratatui::style::Style;
use ratatui_textarea::{CursorMove, TextArea, WrapMode};

use super::theme::Theme;
use super::wrap;

/// History entries kept (this run's, after a resumed session's).
const HISTORY: usize = 200;
/// The box grows with its text up to this many rows, then scrolls.
pub const MAX_ROWS: u16 = 8;

pub struct InputBox {
    pub area: TextArea<'static>,
    /// Pictures attached to the message being written (`pictures`).
    pub images: Vec<crate::protocol::ImagePart>,
    history: Vec<String>,
    /// Index into `history` while recalling with Up/Down.
    recalled: Option<usize>,
}

impl InputBox {
    pub fn new(theme: &Theme) -> Self {
        let mut input = Self {
            area: TextArea::default(),
            images: Vec::new(),
            history: Vec::new(),
            recalled: None,
        };
        input.area.set_wrap_mode(WrapMode::WordOrGlyph);
        input
            .area
            .set_placeholder_text("Message egirl · Enter sends · ? keys");
        input.apply_theme(theme);
        input
    }

    pub fn apply_theme(&mut self, theme: &Theme) {
        self.area.set_style(Style::default().fg(theme.text));
        self.area.set_placeholder_style(theme.muted());
        // The default underlines the cursor line: noise in a chat box.
        self.area.set_cursor_line_style(Style::default());
    }

    pub fn text(&self) -> String {
        self.area.lines().join("\n")
    }

    pub fn is_empty(&self) -> bool {
        self.area.lines().iter().all(|l| l.is_empty())
    }

    pub fn clear(&mut self) {
        self.set_text("");
        self.recalled = None;
    }

    fn set_text(&mut self, text: &str) {
        self.area.select_all();
        self.area.cut();
        self.area.insert_str(text);
        // Cutting also fills the yank buffer; don't let Ctrl+Y paste a sent message.
        self.area.set_yank_text("");
    }

    /// Takes the text out for sending and remembers it.
    pub fn take(&mut self) -> String {
        let text = self.text();
        if !text.trim().is_empty() && self.history.last() != Some(&text) {
            self.history.push(text.clone());
            if self.history.len() > HISTORY {
                self.history.remove(0);
            }
        }
        self.clear();
        text
    }

    /// Messages sent before this run (a resumed session's, oldest first):
    /// Up reaches them after everything sent this run.
    pub fn remember_earlier(&mut self, earlier: impl IntoIterator<Item = String>) {
        let mut history: Vec<String> = Vec::new();
        for text in earlier.into_iter().chain(std::mem::take(&mut self.history)) {
            if !text.trim().is_empty() && history.last() != Some(&text) {
                history.push(text);
            }
        }
        let over = history.len().saturating_sub(HISTORY);
        history.drain(..over);
        self.history = history;
        self.recalled = None;
    }

    pub fn newline(&mut self) {
        self.area.insert_newline();
        self.recalled = None;
    }

    pub fn insert(&mut self, text: &str) {
        // Terminals paste CRLF or bare CR line ends; the textarea wants \n.
        let text = text.replace("\r\n", "\n").replace('\r', "\n");
        self.area.insert_str(text);
        self.recalled = None;
    }

    pub fn key(&mut self, key: KeyEvent) {
        if self.area.input(key) {
            self.recalled = None;
        }
    }

    /// Up/Down recall history when the box is empty or shows an unedited
    /// recalled entry; otherwise they move the cursor.
    pub fn recalling(&self) -> bool {
        match self.recalled {
            Some(i) => self.history.get(i).is_some_and(|h| *h == self.text()),
            None => self.is_empty(),
        }
    }

    pub fn history_prev(&mut self) {
        let i = match self.recalled {
            Some(0) => return,
            Some(i) => i - 1,
            None if self.history.is_empty() => return,
            None => self.history.len() - 1,
        };
        self.recall(i);
    }

    pub fn history_next(&mut self) {
        match self.recalled {
            Some(i) if i + 1 < self.history.len() => self.recall(i + 1),
            Some(_) => self.clear(),
            None => {}
        }
    }

    fn recall(&mut self, i: usize) {
        if let Some(text) = self.history.get(i).cloned() {
            self.set_text(&text);
            self.area.move_cursor(CursorMove::Bottom);
            self.area.move_cursor(CursorMove::End);
            self.recalled = Some(i);
        }
    }

    /// Rows the text needs at `width` columns (wrapped), within 1..=MAX_ROWS.
    pub fn rows(&self, width: u16) -> u16 {
        let width = usize::from(width.max(1));
        let rows: usize = self
            .area
            .lines()
            .iter()
            .map(|l| wrap::width(l).div_ceil(width).max(1))
            .sum();
        u16::try_from(rows).unwrap_or(MAX_ROWS).clamp(1, MAX_ROWS)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn history_walks_back_and_forth_and_stops_on_edit() {
        let mut i = InputBox::new(&Theme::default());
        for t in ["one", "two"] {
            i.insert(t);
            i.take();
        }
        assert!(i.recalling());
        i.history_prev();
        assert_eq!(i.text(), "two");
        i.history_prev();
        i.history_prev();
        assert_eq!(i.text(), "one");
        i.history_next();
        assert_eq!(i.text(), "two");
        i.history_next();
        assert!(i.is_empty());
        i.history_prev();
        i.insert("!");
        assert!(!i.recalling());
    }

    #[test]
    fn earlier_messages_come_before_this_runs() {
        let mut i = InputBox::new(&Theme::default());
        i.insert("now");
        i.take();
        i.remember_earlier(["first".to_string(), "second".into(), "second".into()]);
        i.history_prev();
        assert_eq!(i.text(), "now");
        i.history_prev();
        assert_eq!(i.text(), "second");
        i.history_prev();
        assert_eq!(i.text(), "first");
        i.clear();
        i.remember_earlier((0..HISTORY + 5).map(|n| n.to_string()));
        i.history_prev();
        i.history_prev();
        assert_eq!(i.text(), "second", "the newest are kept");
    }

    #[test]
    fn paste_keeps_newlines_and_rows_grow() {
        let mut i = InputBox::new(&Theme::default());
        i.insert("a\r\nb\rc");
        assert_eq!(i.area.lines(), ["a", "b", "c"]);
        assert_eq!(i.rows(10), 3);
        i.clear();
        i.insert(&"x".repeat(25));
        assert_eq!(i.rows(10), 3);
    }
}
