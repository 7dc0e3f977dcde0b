//! Search in the conversation (Ctrl+F or `/find TEXT`): every match on
//! screen is highlighted in the theme's warning colour, the current
//! message's in its focus colour; `n` / `N` jump to the next / previous
//! message holding it; Esc leaves.
//!
//! Matching is case-insensitive. Highlighting works on the drawn rows
//! (after the conversation is drawn), so the cached lines of the messages
//! stay as they are; a match cut by a line wrap is found by `n` / `N` but
//! highlighted only where a whole match sits on one row.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};

use super::app::{App, Focus};
use super::conversation::{Kind, Level};
use super::panes::conversation;

/// An active search.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Search {
    /// What is searched for, lowercased.
    pub query: String,
    /// Indices of the conversation entries that hold it, oldest first.
    pub hits: Vec<usize>,
    /// Which of `hits` is current.
    pub current: usize,
}

impl Search {
    /// The entry index of the current hit.
    pub fn current_entry(&self) -> Option<usize> {
        self.hits.get(self.current).copied()
    }
}

impl App {
    /// `/find TEXT`: highlights TEXT and jumps to the newest message with
    /// it; an empty TEXT leaves the search.
    pub fn start_search(&mut self, text: &str) {
        let query = text.trim().to_lowercase();
        if query.is_empty() {
            self.search = None;
            self.notice(Level::Info, "usage: /find TEXT (Ctrl+F), then n / N, Esc");
            return;
        }
        let hits = self.entries_with(&query);
        if hits.is_empty() {
            self.search = None;
            self.notice(
                Level::Info,
                format!("\"{}\" is not in the conversation", text.trim()),
            );
            return;
        }
        self.search = Some(Search {
            current: hits.len() - 1,
            query,
            hits,
        });
        self.focus = Focus::Input;
        self.jump_to_hit();
    }

    /// Ctrl+F: the input box gets `/find ` (with the current query).
    pub(super) fn open_find(&mut self) {
        let query = self.search.as_ref().map_or("", |s| s.query.as_str());
        let text = format!("/find {query}");
        self.focus = Focus::Input;
        // The query is typed in the box: a message being written there
        // goes to the history (Up), never away.
        let draft = self.input.text();
        if draft.trim().is_empty() || draft.starts_with("/find") {
            self.input.clear();
        } else {
            self.input.take();
            self.notice(
                Level::Info,
                "the message you were typing is in the history: Up brings it back",
            );
        }
        self.input.insert(&text);
    }

    /// `n`, `N` and Esc while a search is active and the input is empty;
    /// `None` when the key is not one of them. Typing anything else leaves
    /// the search (the key goes to the input box), so a message starting
    /// with n is never taken for jumps for long.
    pub(super) fn search_key(&mut self, key: KeyEvent) -> Option<()> {
        let search = self.search.as_mut()?;
        if !self.input.is_empty() {
            return None;
        }
        let count = search.hits.len();
        match key.code {
            KeyCode::Char('n') => search.current = (search.current + 1) % count,
            KeyCode::Char('N') => search.current = (search.current + count - 1) % count,
            KeyCode::Esc => {
                self.search = None;
                self.conversation_scroll.end();
                return Some(());
            }
            KeyCode::Char(_) if key.modifiers.difference(KeyModifiers::SHIFT).is_empty() => {
                self.search = None;
                return None;
            }
            _ => return None,
        }
        self.jump_to_hit();
        Some(())
    }

    /// The shown entries whose text (a tool call's name, arguments and
    /// output) holds `query`.
    fn entries_with(&self, query: &str) -> Vec<usize> {
        self.conversation
            .entries
            .iter()
            .enumerate()
            .filter(|(_, e)| self.shows(&e.session))
            .filter(|(_, e)| match e.kind {
                Kind::Tool(seq) => self.tools.get(seq).is_some_and(|r| {
                    contains(&r.call.name, query)
                        || contains(&r.call.arguments.to_string(), query)
                        || contains(&r.output, query)
                }),
                _ => contains(&e.text, query),
            })
            .map(|(i, _)| i)
            .collect()
    }

    /// Scrolls the current hit's first matching row into view.
    fn jump_to_hit(&mut self) {
        let Some(search) = &self.search else { return };
        let Some(entry) = search.current_entry() else {
            return;
        };
        let width = self.conversation_width.get();
        if width == 0 {
            return;
        }
        let ctx = self.render_ctx();
        let entries = &self.conversation.entries;
        let mut row = 0;
        for (i, gap) in conversation::shown(self) {
            if i == entry {
                let lines = entries[i].lines(width, &ctx);
                let within = (0..lines.len())
                    .find(|&n| {
                        lines
                            .get(n)
                            .is_some_and(|l| contains(&line_text(l), &search.query))
                    })
                    .unwrap_or(0);
                row += gap + within;
                break;
            }
            row += gap + entries[i].height(width, &ctx);
        }
        let total = conversation::total_rows(self, width);
        self.conversation_scroll.set_total(total);
        self.conversation_scroll.show(row);
    }
}

fn contains(text: &str, query: &str) -> bool {
    text.to_lowercase().contains(query)
}

fn line_text(line: &ratatui::text::Line<'_>) -> String {
    line.spans.iter().map(|s| s.content.as_ref()).collect()
}

/// Highlights every match of the search on one drawn row of the
/// conversation; `current`: the row belongs to the current hit.
pub fn highlight_row(
    app: &App,
    search: &Search,
    area: Rect,
    y: u16,
    current: bool,
    buf: &mut Buffer,
) {
    let t = &app.theme;
    let style = if current {
        Style::default()
            .fg(t.focus)
            .add_modifier(Modifier::REVERSED | Modifier::BOLD)
    } else {
        Style::default()
            .fg(t.warning)
            .add_modifier(Modifier::REVERSED)
    };
    // The row's text, each cell's symbol lowercased, with where each cell's
    // text starts (a wide character's second cell is empty).
    let mut text = String::new();
    let mut starts: Vec<(usize, u16)> = Vec::with_capacity(usize::from(area.width));
    for x in area.x..area.x + area.width {
        let symbol = buf[(x, y)].symbol().to_lowercase();
        starts.push((text.len(), x));
        text.push_str(&symbol);
    }
    let mut from = 0;
    while let Some(at) = text[from..].find(&search.query) {
        let begin = from + at;
        let end = begin + search.query.len();
        for &(offset, x) in &starts {
            if offset >= begin && offset < end {
                buf[(x, y)].set_style(style);
            }
        }
        from = end.max(begin + 1);
        while from < text.len() && !text.is_char_boundary(from) {
            from += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn highlights_every_match_on_a_row_case_insensitively() {
        let app = App::new(super::super::app::AppOptions {
            session: "s".into(),
            theme: super::super::theme::Theme::default(),
            theme_dirs: Vec::new(),
            model: "m".into(),
            endpoint: "http://127.0.0.1:1".into(),
            context_length: 1024,
        });
        let area = Rect::new(0, 0, 20, 1);
        let mut buf = Buffer::empty(area);
        buf.set_string(0, 0, "Foo bar fOO é foo", Style::default());
        let search = Search {
            query: "foo".into(),
            hits: vec![0],
            current: 0,
        };
        highlight_row(&app, &search, area, 0, false, &mut buf);
        let marked: Vec<u16> = (0..20)
            .filter(|&x| buf[(x, 0)].modifier.contains(Modifier::REVERSED))
            .collect();
        assert_eq!(marked, [0, 1, 2, 8, 9, 10, 14, 15, 16]);
    }
}
