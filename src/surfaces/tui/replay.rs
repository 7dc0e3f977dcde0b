//! A transcript's replies and tool results shown again (a resumed, picked
//! or forked session, a rewind): a reply the user interrupted ends with an
//! `interrupted` marker, not the text the model reads; a tool call gets
//! back the ✓/✗/⊘ and the diff it had. Transcripts written before those
//! were kept show their calls as `earlier` (a refusal still reads denied).

use super::app::App;
use super::conversation::{Kind, Level};
use super::feeds::{ToolEntry, ToolState};
use crate::protocol::{ToolCallEvent, ToolOutcome};
use crate::sessions::{INTERRUPTED_MARKER, Record};

/// A reply's text as shown, and whether the user interrupted it (recorded
/// so, or in an older transcript, ending with the marker the model reads).
pub fn interrupted(record: &Record) -> (&str, bool) {
    let content = record.message.content.as_str();
    match content.strip_suffix(INTERRUPTED_MARKER) {
        Some(text) => (text, true),
        None => (content, record.details.interrupted),
    }
}

impl App {
    /// A model's reply: its text, then its tool calls (their results follow).
    pub(super) fn replay_reply(&mut self, session: &str, record: &Record) {
        let (text, interrupted) = interrupted(record);
        if !text.trim().is_empty() {
            self.conversation.answer(session, &record.origin, text);
        }
        if interrupted {
            let marker = "interrupted".to_string();
            self.conversation
                .push(session, &record.origin, Kind::Notice(Level::Info), marker);
        }
        for call in &record.message.tool_calls {
            // As it was shown live: a catalog call as the tool it ran.
            let call = call.resolved();
            let seq = self.tools.push(ToolEntry {
                call: ToolCallEvent {
                    id: call.id.clone(),
                    name: call.name.clone(),
                    arguments: call.arguments.clone(),
                    sandbox: None,
                },
                session: session.to_string(),
                origin: record.origin.clone(),
                state: ToolState::Restored,
                duration_ms: None,
                output: String::new(),
                approval: None,
                diff: None,
            });
            self.conversation
                .push(session, &record.origin, Kind::Tool(seq), String::new());
        }
    }

    /// A tool's result: its output, outcome and diff onto its call.
    pub(super) fn replay_tool_result(&mut self, session: &str, record: &Record) {
        let m = &record.message;
        let id = m.tool_call_id.as_deref().unwrap_or_default();
        // Older transcripts kept only what the model was told: their
        // refusals say so, other outcomes are unknown.
        let outcome = record
            .details
            .outcome
            .or_else(|| ToolOutcome::guessed(&m.content));
        let diff = record.details.diff.clone();
        self.tools.restored(session, id, &m.content, outcome, diff);
    }
}
