//! The completion list above the input while a `/command` is typed (as in
//! Claude Code and codex): every matching command with what it does;
//! Up/Down select, Tab fills the input with the selection, Enter runs it
//! (or fills it when it needs an argument), Esc closes the list. While the
//! input holds a partial command, Tab never moves the focus.

use super::{CommandInfo, matches};
use crate::surfaces::tui::app::{App, Focus};

/// Rows the list shows at most; it scrolls with the selection beyond.
pub const ROWS: usize = 8;

/// The list's state: which row is selected, and whether Esc closed it,
/// both for the text they were set at (a keystroke that changes the text
/// starts afresh, at the first row, open).
#[derive(Clone, Debug, Default)]
pub struct CommandPopup {
    text: String,
    selected: usize,
    closed: bool,
}

impl CommandPopup {
    fn for_text(&self, text: &str) -> Option<&Self> {
        (self.text == text).then_some(self)
    }

    /// After any key: an edit starts the list afresh (even one that comes
    /// back to the same text).
    pub fn follow(&mut self, text: &str) {
        if self.text != text {
            *self = Self::default();
        }
    }
}

/// What a key did to the list.
pub enum PopupKey {
    /// Not the list's key (or no list): the input box takes it.
    Pass,
    /// Handled by the list.
    Done,
    /// Enter on a command that needs no argument: run this line.
    Run(String),
}

/// The input holds only a `/word` being typed (one line, no space yet):
/// Tab belongs to the input then, never to the focus.
pub fn typing_command(app: &App) -> bool {
    let text = app.input.text();
    app.focus == Focus::Input
        && text.starts_with('/')
        && !text.starts_with("//")
        && !text.contains(char::is_whitespace)
}

/// The commands the list shows now; empty when it is not shown.
pub fn items(app: &App) -> Vec<CommandInfo> {
    if !typing_command(app) || app.overlay.is_some() || !app.approvals.is_empty() {
        return Vec::new();
    }
    let text = app.input.text();
    if app.popup.for_text(&text).is_some_and(|p| p.closed) {
        return Vec::new();
    }
    matches(app, &text)
}

/// The selected row of `items` (the first after any edit).
pub fn selected(app: &App, items: usize) -> usize {
    let text = app.input.text();
    app.popup
        .for_text(&text)
        .map_or(0, |p| p.selected)
        .min(items.saturating_sub(1))
}

/// A key while the input has the focus: the list's when it shows (or, for
/// Tab, whenever a command is being typed).
pub fn key(app: &mut App, code: crossterm::event::KeyCode) -> PopupKey {
    use crossterm::event::KeyCode;
    let found = items(app);
    let text = app.input.text();
    if found.is_empty() {
        // Tab on a command with nothing to list (closed, or no match):
        // open the list again; never move the focus.
        if code == KeyCode::Tab && typing_command(app) {
            app.popup = CommandPopup::default();
            return PopupKey::Done;
        }
        return PopupKey::Pass;
    }
    // A recalled `/help` is history being walked: Up/Down stay history's.
    if matches!(code, KeyCode::Up | KeyCode::Down) && app.input.recalling() {
        return PopupKey::Pass;
    }
    let at = selected(app, found.len());
    let chosen = &found[at];
    let last = found.len() - 1;
    match code {
        KeyCode::Up => set(app, text, if at == 0 { last } else { at - 1 }, false),
        KeyCode::Down => set(app, text, if at == last { 0 } else { at + 1 }, false),
        KeyCode::Esc => set(app, text, at, true),
        KeyCode::Tab => fill(app, chosen),
        // Typed in full: Enter runs it as typed.
        KeyCode::Enter if chosen.name == text => return PopupKey::Pass,
        KeyCode::Enter if chosen.arg.is_empty() => return PopupKey::Run(chosen.name.clone()),
        KeyCode::Enter => fill(app, chosen),
        _ => return PopupKey::Pass,
    }
    PopupKey::Done
}

fn set(app: &mut App, text: String, selected: usize, closed: bool) {
    app.popup = CommandPopup {
        text,
        selected,
        closed,
    };
}

/// The input becomes the command, and a space when it takes an argument.
fn fill(app: &mut App, chosen: &CommandInfo) {
    let done = if chosen.arg.is_empty() {
        chosen.name.clone()
    } else {
        format!("{} ", chosen.name)
    };
    app.input.clear();
    app.input.insert(&done);
}
