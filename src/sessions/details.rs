//! What a transcript record keeps beside the message the model was sent:
//! how a tool call ended and the change it made (the model gets one line,
//! the user saw ✓/✗ and the diff), whether a reply was cut by the user,
//! and the size of the prompt after a reply (the context meter of a
//! resumed session). Every field is optional: a transcript written before
//! they existed loads with none of them.

use serde::{Deserialize, Serialize};

use crate::protocol::FileDiff;
pub use crate::protocol::{ContextUse, ToolOutcome};

/// The text an interrupted reply ends with in the history, so that the
/// model knows it was cut (transcripts before `interrupted` existed carry
/// only this).
pub const INTERRUPTED_MARKER: &str = "\n\n[interrupted by the user]";

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Details {
    /// A tool result's outcome.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outcome: Option<ToolOutcome>,
    /// A `write_file`/`edit_file` result's change, as the user saw it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub diff: Option<FileDiff>,
    /// A reply the user interrupted: its text is what had streamed (the
    /// message ends with [`INTERRUPTED_MARKER`] for the model).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub interrupted: bool,
    /// On a model's reply: the prompt the next request carries, this
    /// reply included.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<ContextUse>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sessions::Record;

    #[test]
    fn an_old_record_loads_without_details_and_a_new_one_keeps_them() {
        let old = r#"{"ts":"2026-11-20T10:00:00Z","origin":"tui","role":"tool","content":"x","tool_call_id":"c1"}"#;
        let record: Record = serde_json::from_str(old).unwrap();
        assert_eq!(record.details, Details::default());
        assert_eq!(record.message.content, "x");
        let mut record = record;
        record.details.outcome = Some(ToolOutcome::Failed);
        record.details.diff = Some(FileDiff {
            path: "a".into(),
            added: 1,
            removed: 0,
            text: "+a".into(),
        });
        let line = serde_json::to_string(&record).unwrap();
        assert!(line.contains(r#""outcome":"failed""#), "{line}");
        assert!(!line.contains("interrupted"), "{line}");
        let back: Record = serde_json::from_str(&line).unwrap();
        assert_eq!(back, record);
    }

    #[test]
    fn refusals_of_older_transcripts_are_recognized() {
        assert_eq!(
            ToolOutcome::guessed("denied by user (outside the sandbox)"),
            Some(ToolOutcome::Denied)
        );
        assert_eq!(ToolOutcome::guessed("exit 1"), None);
    }
}
