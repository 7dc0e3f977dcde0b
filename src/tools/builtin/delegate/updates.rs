//! The agent's `session/update` notifications, read into what egirl shows
//! under the call (its text a line at a time, its tool calls with their
//! titles and status, its plan) and what the model gets (its text).

use std::collections::HashMap;

use serde_json::Value;

/// Characters of one progress line.
const SHOWN: usize = 160;

/// Bytes of the agent's text kept for the model (the end is kept: the
/// answer comes last).
pub const KEPT: usize = 16 * 1024;

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
    pub fn read(&mut self, update: &Value) -> Vec<String> {
        let str_of = |v: &Value| v.as_str().unwrap_or("").to_string();
        match update["sessionUpdate"].as_str() {
            Some("agent_message_chunk") => {
                let text = update["content"]["text"].as_str().unwrap_or("");
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
            Some("tool_call") => {
                let mut out = self.flush();
                let id = str_of(&update["toolCallId"]);
                let title = str_of(&update["title"]);
                out.push(short(&format!("→ {title}")));
                self.titles.insert(id, title);
                out
            }
            Some("tool_call_update") => {
                let id = str_of(&update["toolCallId"]);
                if let Some(title) = update["title"].as_str() {
                    self.titles.insert(id.clone(), title.to_string());
                }
                let title = self.titles.get(&id).cloned().unwrap_or_default();
                match update["status"].as_str() {
                    Some("completed") => vec![short(&format!("  ✓ {title}"))],
                    Some("failed") => vec![short(&format!("  ✗ {title}"))],
                    _ => Vec::new(),
                }
            }
            Some("plan") => {
                let entries = update["entries"].as_array().cloned().unwrap_or_default();
                let shown: Vec<String> = entries
                    .iter()
                    .map(|e| {
                        let mark = match e["status"].as_str() {
                            Some("completed") => "[x]",
                            Some("in_progress") => "[~]",
                            _ => "[ ]",
                        };
                        format!("{mark} {}", e["content"].as_str().unwrap_or(""))
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

    #[test]
    fn text_is_shown_by_line_and_tool_calls_by_title_and_status() {
        let mut t = Transcript::default();
        let chunk = |s: &str| json!({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": s}});
        assert!(t.read(&chunk("Let me ")).is_empty());
        assert_eq!(t.read(&chunk("look.\nThen ")), ["Let me look."]);
        let call = json!({"sessionUpdate": "tool_call", "toolCallId": "c1", "title": "Write a.txt", "status": "pending"});
        assert_eq!(t.read(&call), ["Then", "→ Write a.txt"]);
        let done =
            json!({"sessionUpdate": "tool_call_update", "toolCallId": "c1", "status": "completed"});
        assert_eq!(t.read(&done), ["  ✓ Write a.txt"]);
        let plan = json!({"sessionUpdate": "plan", "entries": [
            {"content": "read", "status": "completed", "priority": "high"},
            {"content": "write", "status": "pending", "priority": "high"}
        ]});
        assert_eq!(t.read(&plan), ["plan: [x] read; [ ] write"]);
        assert_eq!(t.text, "Let me look.\nThen ");
    }

    #[test]
    fn the_text_kept_for_the_model_is_bounded_to_its_end() {
        let mut t = Transcript::default();
        let big = "é".repeat(KEPT);
        t.read(&json!({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": big}}));
        t.read(&json!({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "the answer"}}));
        assert!(t.text.len() <= KEPT);
        assert!(t.text.ends_with("the answer"));
        assert!(t.cut);
    }
}
