//! Signs of life while a turn runs (as in codex and Claude Code): how long
//! the turn has run, how long its running tool has, and Esc to interrupt.
//! The timers count to `App::clock` (the last tick or key), so a frame is
//! a function of the state and the loop wakes once a second only while
//! the input's session has a turn running.

use std::time::{Duration, Instant};

use super::{App, Effect};
use crate::protocol::Op;
use crate::surfaces::tui::feeds::{ToolEntry, ToolState};

impl App {
    /// The next whole second of the running turn, when the timer on the
    /// status line changes; `None` while idle.
    pub(super) fn next_second(&self) -> Option<Instant> {
        let started = self.turn_started()?;
        let elapsed = self.clock.saturating_duration_since(started).as_secs();
        Some(started + Duration::from_secs(elapsed + 1))
    }

    fn turn_started(&self) -> Option<Instant> {
        self.sessions
            .get(&self.session)
            .filter(|s| s.running)
            .and_then(|s| s.started)
    }

    /// How long the input's session's turn has run.
    pub fn turn_elapsed(&self) -> Option<Duration> {
        self.turn_started()
            .map(|started| self.clock.saturating_duration_since(started))
    }

    /// How long a tool call (by its id) has run, while it runs.
    pub fn tool_elapsed(&self, call_id: &str) -> Option<Duration> {
        self.tool_started
            .get(call_id)
            .map(|started| self.clock.saturating_duration_since(*started))
    }

    /// The newest tool call of the input's session that is still running.
    pub fn running_tool(&self) -> Option<(&ToolEntry, Duration)> {
        self.tools
            .iter()
            .filter(|t| t.session == self.session && t.state == ToolState::Running)
            .filter_map(|t| Some((t, self.tool_elapsed(&t.call.id)?)))
            .last()
    }

    /// `working… 12s · exec 3s · esc to interrupt` while the input's
    /// session has a turn running (`with_tool` false: without the tool's).
    pub fn working_label(&self, with_tool: bool) -> Option<String> {
        if !self.busy() {
            return None;
        }
        let mut label = String::from("working…");
        if let Some(elapsed) = self.turn_elapsed() {
            label.push(' ');
            label.push_str(&elapsed_label(elapsed));
        }
        if let Some((tool, elapsed)) = self.running_tool().filter(|_| with_tool) {
            let name = crate::surfaces::tui::mcp::call_name(&tool.call.name, &tool.call.arguments);
            label.push_str(&format!(" · {name} {}", elapsed_label(elapsed)));
        }
        label.push_str(" · esc to interrupt");
        Some(label)
    }

    /// Esc while the input's session has a turn running: stop it (the
    /// core answers with `turn_ended`, interrupted).
    pub(in crate::surfaces::tui) fn interrupt(&mut self) -> Vec<Effect> {
        vec![Effect::submit(Op::Interrupt {
            session: self.session.clone(),
        })]
    }

    /// A tool call started now (its timer counts from here).
    pub(super) fn tool_started(&mut self, call_id: &str) {
        self.tool_started
            .insert(call_id.to_string(), Instant::now());
    }

    /// A tool call's result is in: its timer stops.
    pub(super) fn tool_done(&mut self, call_id: &str) {
        self.tool_started.remove(call_id);
    }
}

/// `5s`, `1m 05s`, `2h 03m`: whole seconds, as the codex status line.
pub fn elapsed_label(elapsed: Duration) -> String {
    let secs = elapsed.as_secs();
    match secs {
        0..60 => format!("{secs}s"),
        60..3600 => format!("{}m {:02}s", secs / 60, secs % 60),
        _ => format!("{}h {:02}m", secs / 3600, secs % 3600 / 60),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn elapsed_reads_like_a_clock() {
        let s = Duration::from_secs;
        assert_eq!(elapsed_label(s(0)), "0s");
        assert_eq!(elapsed_label(s(59)), "59s");
        assert_eq!(elapsed_label(s(65)), "1m 05s");
        assert_eq!(elapsed_label(s(3 * 3600 + 125)), "3h 02m");
    }
}
