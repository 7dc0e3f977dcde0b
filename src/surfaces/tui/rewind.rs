//! `/rewind` and `/fork` in the TUI. The picker lists the session's user
//! messages (from its transcript, as the core counts them); choosing one
//! asks the core to go back to before it. The core answers with
//! `rewound` (the conversation is read again and the message comes back
//! into the input box) or `forked` (the input moves to the copy).

use std::time::SystemTime;

use crossterm::event::{KeyCode, KeyEvent};

use super::app::{App, Effect};
use super::conversation::Level;
use super::sessions::SessionInfo;
use crate::protocol::{Command, EventKind, Forked, Op, Rewound, Role, Submission};

/// Said under the picker and after a rewind: only the file tools are undone.
pub const UNTRACKED_NOTE: &str =
    "files changed by write_file/edit_file are restored; commands' changes are not undone";

/// Whether a component used a key (gitui's `EventState`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EventState {
    Consumed,
    NotConsumed,
}

/// Up/Down (k/j), Home/End (g/G) move `selected` within a list of `len`
/// rows; true when `code` was one of them. The pickers share this.
pub fn move_selection(selected: &mut usize, len: usize, code: KeyCode) -> bool {
    let last = len.saturating_sub(1);
    match code {
        KeyCode::Up | KeyCode::Char('k') => *selected = selected.saturating_sub(1),
        KeyCode::Down | KeyCode::Char('j') => *selected = (*selected + 1).min(last),
        KeyCode::Home | KeyCode::Char('g') => *selected = 0,
        KeyCode::End | KeyCode::Char('G') => *selected = last,
        _ => return false,
    }
    true
}

/// One earlier user message.
#[derive(Clone, Debug, PartialEq)]
pub struct RewindRow {
    /// Its number among the session's user messages (1-based).
    pub turn: usize,
    pub text: String,
    pub at: SystemTime,
}

/// What the user did with the open picker.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Picked {
    Turn(usize),
    Cancel,
}

/// The open picker: rows fixed when it opened, the newest selected.
#[derive(Clone, Debug, Default)]
pub struct RewindPicker {
    pub rows: Vec<RewindRow>,
    pub selected: usize,
    /// Set by the key that closes it.
    pub done: Option<Picked>,
}

impl RewindPicker {
    pub fn new(rows: Vec<RewindRow>) -> Self {
        Self {
            selected: rows.len().saturating_sub(1),
            rows,
            done: None,
        }
    }

    /// Move, choose with Enter, close with Esc; other keys are not its own.
    pub fn event(&mut self, key: KeyEvent) -> EventState {
        if move_selection(&mut self.selected, self.rows.len(), key.code) {
            return EventState::Consumed;
        }
        match key.code {
            KeyCode::Enter => {
                self.done = Some(match self.rows.get(self.selected) {
                    Some(row) => Picked::Turn(row.turn),
                    None => Picked::Cancel,
                });
            }
            KeyCode::Esc | KeyCode::Char('q') => self.done = Some(Picked::Cancel),
            _ => return EventState::NotConsumed,
        }
        EventState::Consumed
    }
}

impl App {
    /// `/rewind`: opens the picker on the session's user messages.
    pub fn open_rewind_picker(&mut self) {
        if self.busy() {
            self.notice(
                Level::Warning,
                "a turn is running: wait for it to end (or Ctrl+C) before /rewind",
            );
            return;
        }
        let path = self.transcript_of(&self.session);
        let records = match path {
            Some(path) if path.exists() => match crate::sessions::load(&path) {
                Ok(records) => records,
                Err(e) => {
                    self.notice(Level::Error, format!("{e:#}"));
                    return;
                }
            },
            _ => Vec::new(),
        };
        let rows: Vec<RewindRow> = records
            .iter()
            .filter(|r| r.message.role == Role::User)
            .enumerate()
            .map(|(i, r)| RewindRow {
                turn: i + 1,
                text: r.typed.clone().unwrap_or_else(|| r.message.content.clone()),
                at: r.ts.into(),
            })
            .collect();
        if rows.is_empty() {
            self.notice(Level::Info, "nothing to rewind: no message sent yet");
            return;
        }
        self.rewind = Some(RewindPicker::new(rows));
    }

    /// A key while the picker is open; it takes every key.
    pub(super) fn rewind_key(&mut self, key: KeyEvent) -> Vec<Effect> {
        let Some(picker) = self.rewind.as_mut() else {
            return Vec::new();
        };
        if picker.event(key) == EventState::NotConsumed {
            return Vec::new();
        }
        match picker.done {
            None => Vec::new(),
            Some(Picked::Cancel) => {
                self.rewind = None;
                Vec::new()
            }
            Some(Picked::Turn(turn)) => {
                self.rewind = None;
                vec![self.request(Op::Command {
                    session: self.session.clone(),
                    command: Command::Rewind { turn },
                })]
            }
        }
    }

    /// `/fork`: the core copies the session and answers `forked`.
    pub fn fork(&mut self) -> Vec<Effect> {
        vec![self.request(Op::Command {
            session: self.session.clone(),
            command: Command::Fork,
        })]
    }

    /// Submits an op whose answer this TUI acts on, remembering its id.
    pub(in crate::surfaces::tui) fn request(&mut self, op: Op) -> Effect {
        let submission = Submission::new(op);
        self.asked.insert(submission.id.clone());
        Effect::Submit(submission)
    }

    /// The core's answers to `/fork` and `/rewind`; `ours` when this TUI
    /// asked (then a fork moves here, a rewind gives the message back).
    pub(super) fn timeline_event(&mut self, session: &str, kind: EventKind, ours: bool) {
        match kind {
            EventKind::Forked(Forked { new_session }) => {
                self.notice(Level::Info, format!("forked {session} into {new_session}"));
                if ours {
                    // The all-sessions view already shows what the fork
                    // copied: it is not replayed a second time there.
                    if !self.solo {
                        let info = SessionInfo::new(crate::protocol::Origin::Tui);
                        self.sessions.entry(new_session.clone()).or_insert(info);
                    }
                    self.pick_session(&new_session);
                }
            }
            EventKind::Rewound(Rewound {
                turn,
                text,
                dropped_messages,
                restored,
                removed,
                not_restored,
                untracked,
                not_kept,
            }) => {
                self.reload_session(session);
                if ours && self.input.is_empty() {
                    let typed = super::commands::as_typed(self, &text);
                    self.input.insert(&typed);
                }
                let mut lines = vec![format!(
                    "rewound {session} to before message {turn} ({dropped_messages} messages out; the transcript keeps them)"
                )];
                let list = |label: &str, files: &[String]| {
                    (!files.is_empty()).then(|| format!("{label}: {}", files.join(", ")))
                };
                lines.extend(list("restored", &restored));
                lines.extend(list("removed", &removed));
                lines.extend(list("not restored", &not_restored));
                let warn = untracked.is_some() || !not_restored.is_empty() || not_kept.is_some();
                // Files are said to be restored only when checkpoints kept them.
                let default_note = match not_kept.is_some() {
                    true => "commands' changes are not undone either",
                    false => UNTRACKED_NOTE,
                };
                lines.extend(not_kept);
                lines.push(untracked.unwrap_or_else(|| default_note.to_string()));
                let level = if warn { Level::Warning } else { Level::Info };
                self.notice(level, lines.join("\n"));
            }
            _ => {}
        }
    }

    /// Shows a session's conversation as its transcript now holds it.
    pub(super) fn reload_session(&mut self, session: &str) {
        self.conversation.clear_session(session);
        let Some(path) = self.transcript_of(session) else {
            return;
        };
        match crate::sessions::load(&path) {
            Ok(records) => self.load_history(session, &records),
            Err(e) => self.notice(Level::Error, format!("{e:#}")),
        }
        self.epoch += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crossterm::event::KeyModifiers;

    fn key(code: KeyCode) -> KeyEvent {
        KeyEvent::new(code, KeyModifiers::NONE)
    }

    fn rows(n: usize) -> Vec<RewindRow> {
        (1..=n)
            .map(|turn| RewindRow {
                turn,
                text: format!("message {turn}"),
                at: SystemTime::UNIX_EPOCH,
            })
            .collect()
    }

    #[test]
    fn the_picker_starts_on_the_newest_and_consumes_only_its_keys() {
        let mut p = RewindPicker::new(rows(3));
        assert_eq!(p.selected, 2);
        assert_eq!(p.event(key(KeyCode::Up)), EventState::Consumed);
        assert_eq!(p.event(key(KeyCode::Char('x'))), EventState::NotConsumed);
        assert_eq!(p.done, None);
        assert_eq!(p.event(key(KeyCode::Enter)), EventState::Consumed);
        assert_eq!(p.done, Some(Picked::Turn(2)));
        let mut p = RewindPicker::new(rows(3));
        p.event(key(KeyCode::Esc));
        assert_eq!(p.done, Some(Picked::Cancel));
    }
}
