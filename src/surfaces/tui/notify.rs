//! Desktop notifications while the terminal window is not focused: an
//! approval waiting, or a turn longer than `[ui] notify_after` ending,
//! writes an OSC 9 (`ESC ] 9 ; text BEL`) or OSC 777 (`ESC ] 777 ; notify ;
//! egirl ; text BEL`) escape, as `[ui] notify` says, and rings the bell.
//!
//! Focus comes from the terminal's focus reports (`CSI I` / `CSI O`, asked
//! for with `EnableFocusChange`). Until the terminal says the window lost
//! focus it is taken as focused: a terminal that never reports focus never
//! gets a notification, rather than one for every request.
//!
//! The text names the tool or the turn's length, never the command or its
//! arguments (which may hold a secret or a path the lock screen should not
//! show), and is stripped of anything that could end the escape early.

use std::time::{Duration, Instant};

use super::app::{App, Effect, elapsed_label};
use crate::config::NotifyMode;
use crate::protocol::Origin;

/// What the TUI was told to do, from `[ui]`.
#[derive(Clone, Copy, Debug)]
pub struct NotifySettings {
    pub mode: NotifyMode,
    pub after: Duration,
}

impl Default for NotifySettings {
    fn default() -> Self {
        Self {
            mode: NotifyMode::Osc9,
            after: Duration::from_secs(30),
        }
    }
}

/// Longest text written into an escape.
const MAX_TEXT: usize = 120;

/// The bytes a notification writes: the escape `mode` names, then the bell
/// (only the bell for `bell`; nothing for `off`).
pub fn escape(mode: NotifyMode, text: &str) -> Vec<u8> {
    let text = clean(text);
    let mut out = match mode {
        NotifyMode::Osc9 => format!("\x1b]9;{text}\x07"),
        NotifyMode::Osc777 => format!("\x1b]777;notify;egirl;{text}\x07"),
        NotifyMode::Bell => String::new(),
        NotifyMode::Off => return Vec::new(),
    }
    .into_bytes();
    out.push(0x07);
    out
}

/// The text without control characters (an ESC or BEL would end the
/// escape and let the rest reach the terminal as commands) or `;` (OSC
/// 777's separator), and short.
fn clean(text: &str) -> String {
    text.chars()
        .map(|c| if c.is_control() || c == ';' { ' ' } else { c })
        .take(MAX_TEXT)
        .collect()
}

impl App {
    /// The terminal's focus report.
    pub fn set_focused(&mut self, focused: bool) {
        self.focused = focused;
    }

    /// A new approval request: a notification when nobody is looking,
    /// else the bell alone (as before focus was known).
    pub(super) fn approval_alert(&self, tool: &str, origin: &Origin) -> Effect {
        if self.focused || self.notify.mode == NotifyMode::Off {
            return Effect::Bell;
        }
        let from = match origin {
            Origin::Tui => String::new(),
            other => format!(" from {other}"),
        };
        self.notification(format!("egirl: {tool} needs your approval{from}"))
    }

    /// A turn ended: a notification when it ran at least `notify_after`
    /// and nobody is looking.
    pub(super) fn turn_end_alert(&self, started: Option<Instant>, now: Instant) -> Option<Effect> {
        let took = now.saturating_duration_since(started?);
        if self.focused || self.notify.mode == NotifyMode::Off || took < self.notify.after {
            return None;
        }
        Some(self.notification(format!(
            "egirl: the turn finished after {}",
            elapsed_label(took)
        )))
    }

    fn notification(&self, text: String) -> Effect {
        Effect::Notify(escape(self.notify.mode, &text))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_mode_writes_its_escape_and_the_bell() {
        assert_eq!(escape(NotifyMode::Osc9, "hi"), b"\x1b]9;hi\x07\x07");
        assert_eq!(
            escape(NotifyMode::Osc777, "hi"),
            b"\x1b]777;notify;egirl;hi\x07\x07"
        );
        assert_eq!(escape(NotifyMode::Bell, "hi"), b"\x07");
        assert!(escape(NotifyMode::Off, "hi").is_empty());
    }

    #[test]
    fn nothing_in_the_text_can_end_the_escape() {
        let written = escape(NotifyMode::Osc777, "a\x07b\x1b]0;title\x1b\\;c");
        let text = String::from_utf8(written).unwrap();
        let body = &text["\x1b]777;notify;egirl;".len()..text.len() - 2];
        assert!(!body.contains(['\x07', '\x1b', ';']), "{body:?}");
    }
}
