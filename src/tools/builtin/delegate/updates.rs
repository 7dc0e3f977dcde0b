//! The agent's `session/update` notifications, read into what egirl shows
//! under the call (its text a line at a time, its tool calls with their
//! titles and status, its plan) and what the model gets (its text). The
//! updates arrive as the `agent-client-protocol` crate's `SessionUpdate`;
//! kinds egirl does not show are passed over.

use std::collections::HashMap;

use agent_client_protocol::v1::schema::{
    ContentBlock, PlanEntryStatus, SessionNotification, SessionUpdate, ToolCallStatus,
};
use serde_json::Value;

/// Characters of one progress line.
const SHOWN: usize = 160;

/// Bytes of the agent's text kept for the model (the end is kept: the
/// answer comes last).
pub const KEPT: usize = 16 * 1024;

/// The update a `session/update` notification carries; None for a kind
/// newer than egirl's schema (passed over, as ACP clients do).
pub fn update_of(params: Value) -> Option<SessionUpdate> {
    serde_json::from_value::<SessionNotification>(params)
        .ok()
        .map(|note| note.update)
}

/// What the agent said and did so far.
#[derive(Default)]
pub struct Transcript {
    /// Its message text, bounded to [`KEPT`] bytes (the end kept).
    pub text: String,
    /// Message text not yet shown (shown a line at a time).
    pending: String,
    /// Each tool call's title, by its id.
    titles: HashMap<String, String>,
    /// Whether earlier text was dropped to keep [`KEPT`].
    pub cut: bool,
}

impl Transcript {
    /// Reads one update; returns the progress lines it makes.
    pub fn read(&mut self, update: SessionUpdate) -> Vec<String> {
        match update {
            SessionUpdate::AgentMessageChunk(chunk) => {
                // Only text is the agent's answer: an image or a resource
                // in its message is not shown.
                let ContentBlock::Text(text) = chunk.content else {
                    return Vec::new();
                };
                let text = text.text.as_str();
                self.push_text(text);
                self.pending.push_str(text);
                match self.pending.rfind('\n') {
                    Some(end) => {
                        let done: String = self.pending.drain(..=end).collect();
                        lines(&done)
                    }
                    None => Vec::new(),
                }
            }
            SessionUpdate::ToolCall(call) => {
                let mut out = self.flush();
                out.push(short(&format!("→ {}", call.title)));
                self.titles
                    .insert(call.tool_call_id.to_string(), call.title);
                out
            }
            SessionUpdate::ToolCallUpdate(update) => {
                let id = update.tool_call_id.to_string();
                if let Some(title) = update.fields.title {
                    self.titles.insert(id.clone(), title);
                }
                let title = self.titles.get(&id).cloned().unwrap_or_default();
                match update.fields.status {
                    Some(ToolCallStatus::Completed) => vec![short(&format!("  ✓ {title}"))],
                    Some(ToolCallStatus::Failed) => vec![short(&format!("  ✗ {title}"))],
                    _ => Vec::new(),
                }
            }
            SessionUpdate::Plan(plan) => {
                let shown: Vec<String> = plan
                    .entries
                    .iter()
                    .map(|e| {
                        let mark = match e.status {
                            PlanEntryStatus::Completed => "[x]",
                            PlanEntryStatus::InProgress => "[~]",
                            _ => "[ ]",
                        };
                        format!("{mark} {}", e.content)
                    })
                    .collect();
                vec![short(&format!("plan: {}", shown.join("; ")))]
            }
            _ => Vec::new(),
        }
    }

    /// Text not yet shown, as progress lines (at a tool call and the end).
    pub fn flush(&mut self) -> Vec<String> {
        let rest = std::mem::take(&mut self.pending);
        lines(&rest)
    }

    fn push_text(&mut self, text: &str) {
        self.text.push_str(text);
        if self.text.len() > KEPT {
            let mut start = self.text.len() - KEPT;
            while !self.text.is_char_boundary(start) {
                start += 1;
            }
            self.text.drain(..start);
            self.cut = true;
        }
    }
}

fn lines(text: &str) -> Vec<String> {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(short)
        .collect()
}

fn short(text: &str) -> String {
    if text.chars().count() <= SHOWN {
        return text.to_string();
    }
    let cut: String = text.chars().take(SHOWN).collect();
    format!("{cut}…")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// An update as an agent sends it.
    fn update(value: Value) -> SessionUpdate {
        serde_json::from_value(value).expect("a session update")
    }

    #[test]
    fn text_is_shown_by_line_and_tool_calls_by_title_and_status() {
        let mut t = Transcript::default();
        let chunk = |s: &str| {
            update(
                json!({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": s}}),
            )
        };
        assert!(t.read(chunk("Let me ")).is_empty());
        assert_eq!(t.read(chunk("look.\nThen ")), ["Let me look."]);
        let call = update(
            json!({"sessionUpdate": "tool_call", "toolCallId": "c1", "title": "Write a.txt", "status": "pending"}),
        );
        assert_eq!(t.read(call), ["Then", "→ Write a.txt"]);
        let done = update(
            json!({"sessionUpdate": "tool_call_update", "toolCallId": "c1", "status": "completed"}),
        );
        assert_eq!(t.read(done), ["  ✓ Write a.txt"]);
        let plan = update(json!({"sessionUpdate": "plan", "entries": [
            {"content": "read", "status": "completed", "priority": "high"},
            {"content": "write", "status": "pending", "priority": "high"}
        ]}));
        assert_eq!(t.read(plan), ["plan: [x] read; [ ] write"]);
        assert_eq!(t.text, "Let me look.\nThen ");
    }

    #[test]
    fn the_text_kept_for_the_model_is_bounded_to_its_end() {
        let mut t = Transcript::default();
        let big = "é".repeat(KEPT);
        t.read(update(
            json!({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": big}}),
        ));
        t.read(update(
            json!({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "the answer"}}),
        ));
        assert!(t.text.len() <= KEPT);
        assert!(t.text.ends_with("the answer"));
        assert!(t.cut);
    }

    #[test]
    fn an_update_of_a_newer_kind_is_passed_over_and_newer_fields_are_ignored() {
        let newer = json!({"sessionId": "s", "update": {"sessionUpdate": "hologram", "x": 1}});
        assert_eq!(update_of(newer), None);
        let chunk = json!({"sessionId": "s", "update": {
            "sessionUpdate": "agent_message_chunk",
            "content": {"type": "text", "text": "hi\n", "sparkle": true},
            "mood": "calm"
        }});
        let mut t = Transcript::default();
        assert_eq!(t.read(update_of(chunk).expect("a known kind")), ["hi"]);
    }
}
