//! A transcript as a client shows it: every line in file order (the
//! messages a rewind cut stay, after them the `rewound` mark), the newest
//! [`MAX_ITEMS`], texts capped. Read through `sessions::load_entries`,
//! which redacts like every transcript read.

use std::path::Path;

use crate::protocol::wire::{Reply, ToolCallItem, TranscriptItem, TranscriptReply};
use crate::protocol::{DENIED_BY_USER, Role, ToolOutcome};
use crate::sessions::{
    self, Details, Entry, INTERRUPTED_MARKER, Mark, MarkRecord, Record, Transcript,
};

/// Items sent at most (the newest).
pub const MAX_ITEMS: usize = 500;
/// A message's text, a summary, at most (bytes).
pub const MAX_TEXT: usize = 64 * 1024;
/// A tool's output, and each string of a call's arguments, at most.
pub const MAX_OUTPUT: usize = 8 * 1024;
/// What ends a cut text.
pub const CUT: &str = "… (cut)";

/// The answer to `transcript` for `session` in `workspace`.
pub fn transcript(workspace: &Path, session: &str) -> Reply {
    if sessions::validate_id(session).is_err() {
        let shown: String = session.chars().take(64).collect();
        return failed(format!("invalid session id `{}`", shown.escape_debug()));
    }
    let path = Transcript::path(workspace, session);
    if !path.is_file() {
        return failed(format!("no session `{session}` in this workspace"));
    }
    let entries = match sessions::load_entries(&path) {
        Ok(entries) => entries,
        Err(e) => return failed(format!("{e:#}")),
    };
    let mut items: Vec<TranscriptItem> = entries.into_iter().filter_map(item).collect();
    let truncated = items.len() > MAX_ITEMS;
    if truncated {
        items.drain(..items.len() - MAX_ITEMS);
    }
    Reply::Transcript(TranscriptReply {
        session: session.to_string(),
        truncated,
        items,
    })
}

/// `failed` with `message` on one line, redacted: a parse error quotes
/// the value it did not expect, the transcript's text.
pub fn failed(message: String) -> Reply {
    let mut message = message.replace(['\n', '\r'], " ");
    sessions::redact_as_read(&mut message);
    Reply::Failed { message }
}

/// One entry as an item; None for what a client does not show (the
/// system prompt).
fn item(entry: Entry) -> Option<TranscriptItem> {
    match entry {
        Entry::Message(record) => message(record),
        Entry::Mark(MarkRecord { ts, mark }) => match mark {
            Mark::Rewound { turn, .. } => Some(TranscriptItem::Rewound { ts, turn }),
            Mark::ForkedFrom { session } => Some(TranscriptItem::ForkedFrom { ts, session }),
            // The status line and routing events say what a session runs on.
            Mark::ModelPinned { .. } => None,
        },
    }
}

fn message(record: Record) -> Option<TranscriptItem> {
    let Record {
        ts,
        origin,
        typed,
        provider,
        message,
        compaction,
        details,
    } = record;
    if let Some(c) = compaction {
        return Some(TranscriptItem::Compaction {
            ts,
            summarized_messages: c.summarized_messages,
            before_tokens: c.before_tokens,
            after_tokens: c.after_tokens,
            model: c.model,
            summary: capped(message.content, MAX_TEXT),
        });
    }
    Some(match message.role {
        Role::System => return None,
        Role::User => TranscriptItem::User {
            ts,
            origin: origin.to_string(),
            text: capped(typed.unwrap_or(message.content), MAX_TEXT),
        },
        Role::Assistant => TranscriptItem::Assistant {
            ts,
            provider,
            interrupted: interrupted(&details, &message.content),
            text: capped(shown_text(&details, message.content), MAX_TEXT),
            tool_calls: message
                .tool_calls
                .into_iter()
                .map(|call| ToolCallItem {
                    id: call.id,
                    name: call.name,
                    arguments: capped_json(call.arguments),
                })
                .collect(),
        },
        Role::Tool => TranscriptItem::ToolResult {
            ts,
            id: message.tool_call_id.unwrap_or_default(),
            name: message.name.unwrap_or_default(),
            denied: details.outcome == Some(ToolOutcome::Denied)
                || message.content == DENIED_BY_USER,
            outcome: details
                .outcome
                .or_else(|| ToolOutcome::guessed(&message.content)),
            diff: details.diff,
            output: capped(message.content, MAX_OUTPUT),
        },
    })
}

/// Whether a reply was interrupted: recorded so, or (older transcripts)
/// ending with the marker the model reads.
fn interrupted(details: &Details, content: &str) -> bool {
    details.interrupted || content.ends_with(INTERRUPTED_MARKER)
}

/// A reply's text without the marker the model reads after an interrupt
/// (the item says `interrupted`).
fn shown_text(details: &Details, content: String) -> String {
    match content.strip_suffix(INTERRUPTED_MARKER) {
        Some(text) if interrupted(details, &content) => text.to_string(),
        _ => content,
    }
}

/// `text` cut to at most `max` bytes (on a character boundary) plus
/// [`CUT`] when it was longer.
pub fn capped(mut text: String, max: usize) -> String {
    if text.len() <= max {
        return text;
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text.truncate(end);
    text.push_str(CUT);
    text
}

/// A call's arguments with every string capped (a `write_file`'s content
/// would otherwise make the frame as large as the file).
fn capped_json(value: serde_json::Value) -> serde_json::Value {
    use serde_json::Value;
    match value {
        Value::String(s) => Value::String(capped(s, MAX_OUTPUT)),
        Value::Array(items) => Value::Array(items.into_iter().map(capped_json).collect()),
        Value::Object(fields) => Value::Object(
            fields
                .into_iter()
                .map(|(k, v)| (k, capped_json(v)))
                .collect(),
        ),
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn texts_are_cut_on_a_character_with_a_marker() {
        assert_eq!(capped("short".into(), 10), "short");
        let cut = capped("ééééé".into(), 3);
        assert_eq!(cut, format!("é{CUT}"));
        let args = serde_json::json!({"path": "a", "content": "x".repeat(MAX_OUTPUT + 5)});
        let capped = capped_json(args);
        let content = capped["content"].as_str().unwrap();
        assert!(content.ends_with(CUT) && content.len() == MAX_OUTPUT + CUT.len());
        assert_eq!(capped["path"], "a");
    }

    #[test]
    fn items_carry_outcome_diff_and_interruption_and_old_lines_still_read() {
        let dir = tempfile::tempdir().unwrap();
        let lines = [
            r#"{"ts":"2026-11-20T10:00:00Z","origin":"tui","role":"tool","content":"edited a.md","tool_call_id":"c1","name":"edit_file","outcome":"ok","diff":{"path":"a.md","added":1,"removed":0,"text":"+x"}}"#,
            r#"{"ts":"2026-11-20T10:00:01Z","origin":"tui","role":"tool","content":"denied by user","tool_call_id":"c2","name":"exec"}"#,
            r#"{"ts":"2026-11-20T10:00:02Z","origin":"tui","role":"assistant","content":"half\n\n[interrupted by the user]","interrupted":true}"#,
        ];
        let path = Transcript::path(dir.path(), "s");
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, lines.join("\n") + "\n").unwrap();
        let t = match transcript(dir.path(), "s") {
            Reply::Transcript(t) => t,
            other => panic!("{other:?}"),
        };
        let TranscriptItem::ToolResult { outcome, diff, .. } = &t.items[0] else {
            panic!("{:?}", t.items[0]);
        };
        assert_eq!(*outcome, Some(ToolOutcome::Ok));
        assert_eq!(diff.as_ref().map(|d| d.added), Some(1));
        // An older line: its refusal is known by its text.
        let TranscriptItem::ToolResult {
            outcome, denied, ..
        } = &t.items[1]
        else {
            panic!("{:?}", t.items[1]);
        };
        assert_eq!((*outcome, *denied), (Some(ToolOutcome::Denied), true));
        let TranscriptItem::Assistant {
            text, interrupted, ..
        } = &t.items[2]
        else {
            panic!("{:?}", t.items[2]);
        };
        assert_eq!((text.as_str(), *interrupted), ("half", true));
    }

    #[test]
    fn a_bad_or_unknown_session_fails_in_one_line() {
        let dir = tempfile::tempdir().unwrap();
        for bad in ["../etc/passwd", "a\nb", ""] {
            let Reply::Failed { message } = transcript(dir.path(), bad) else {
                panic!("{bad:?} answered");
            };
            assert!(message.contains("invalid session id") && !message.contains('\n'));
        }
        let Reply::Failed { message } = transcript(dir.path(), "nope") else {
            panic!("an unknown session answered");
        };
        assert!(message.contains("no session `nope`"), "{message}");
    }
}
