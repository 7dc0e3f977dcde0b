//! Records of a transcript that are not messages: where a session was
//! forked from, and where it was rewound. The transcript keeps every
//! message ever written; these say which of them the live session holds.

use std::path::Path;

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

use super::{Record, Transcript, validate_id};

/// One mark line: `{"ts":…, "mark":"rewound", "keep":12, "turn":3}`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MarkRecord {
    pub ts: chrono::DateTime<chrono::Utc>,
    #[serde(flatten)]
    pub mark: Mark,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "mark", rename_all = "snake_case")]
pub enum Mark {
    /// This transcript began as a copy of `session`'s.
    ForkedFrom { session: String },
    /// The live session was cut back to its first `keep` messages: the
    /// ones after stay in the file, and a resume leaves them out. `turn`
    /// is the user message (1-based) the session went back to before.
    Rewound { keep: usize, turn: usize },
    /// The session was pinned to `model` (`/model`, `--model`; `auto`:
    /// the router again). The last one is in force when it resumes.
    ModelPinned { model: String },
}

/// A transcript line: a message, or a mark.
// Nearly every line is a message: boxing it would cost an allocation per
// message of a long session for the rare mark's sake.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug, PartialEq)]
pub enum Entry {
    Message(Record),
    Mark(MarkRecord),
}

impl Entry {
    pub(super) fn parse(line: &str) -> serde_json::Result<Self> {
        match serde_json::from_str::<Record>(line) {
            Ok(r) => Ok(Entry::Message(r)),
            Err(e) => serde_json::from_str::<MarkRecord>(line)
                .map(Entry::Mark)
                .map_err(|_| e),
        }
    }
}

/// The messages a resumed session holds: every message, cut back at each
/// `rewound` mark in file order.
pub fn live(entries: Vec<Entry>) -> Vec<Record> {
    let mut records = Vec::new();
    for entry in entries {
        match entry {
            Entry::Message(r) => records.push(r),
            Entry::Mark(MarkRecord {
                mark: Mark::Rewound { keep, .. },
                ..
            }) => records.truncate(keep),
            Entry::Mark(_) => {}
        }
    }
    records
}

/// The pin in force at the end of `entries` (`None`: never pinned, or
/// set back to `auto`).
pub fn pinned_model(entries: &[Entry]) -> Option<String> {
    entries
        .iter()
        .rev()
        .find_map(|entry| match entry {
            Entry::Mark(MarkRecord {
                mark: Mark::ModelPinned { model },
                ..
            }) => Some(model.clone()),
            _ => None,
        })
        .filter(|model| model != "auto")
}

/// Where user message `turn` (1-based, counting the live session's user
/// messages) sits in `records`.
pub fn user_message_index(records: &[Record], turn: usize) -> Option<usize> {
    records
        .iter()
        .enumerate()
        .filter(|(_, r)| r.message.role == crate::protocol::Role::User)
        .nth(turn.checked_sub(1)?)
        .map(|(i, _)| i)
}

/// How many user messages `records` hold (the live session's turns).
pub fn user_turns(records: &[Record]) -> usize {
    records
        .iter()
        .filter(|r| r.message.role == crate::protocol::Role::User)
        .count()
}

impl Transcript {
    pub fn append_mark(&mut self, mark: Mark) -> Result<()> {
        self.append_line(&MarkRecord {
            ts: chrono::Utc::now(),
            mark,
        })
    }
}

/// Copies `from`'s transcript to a new session `to` (a `forked_from` mark
/// first, then every line as it is, marks included), so the fork resumes
/// exactly where `from` stands. Refuses to overwrite.
pub fn fork(workspace: &Path, from: &str, to: &str) -> Result<()> {
    validate_id(from)?;
    validate_id(to)?;
    let source = Transcript::path(workspace, from);
    let bytes = std::fs::read(&source)
        .with_context(|| format!("cannot fork {from}: cannot read {}", source.display()))?;
    let target = Transcript::path(workspace, to);
    let mut line = serde_json::to_string(&MarkRecord {
        ts: chrono::Utc::now(),
        mark: Mark::ForkedFrom {
            session: from.to_string(),
        },
    })
    .context("cannot serialize a mark")?;
    line.push('\n');
    let mut out = line.into_bytes();
    out.extend_from_slice(&bytes);
    // A torn last line is left out, as a resume would.
    if !out.ends_with(b"\n") {
        let keep = out.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
        out.truncate(keep);
    }
    use std::io::Write;
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&target)
        .and_then(|mut file| {
            file.write_all(&out)?;
            file.sync_all()
        })
        .with_context(|| format!("cannot write {}", target.display()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chat::ChatMessage;
    use crate::protocol::Origin;

    fn record(message: ChatMessage) -> Record {
        Record::now(Origin::Cli, message)
    }

    #[test]
    fn a_rewound_mark_cuts_the_live_session_and_later_messages_follow() {
        let dir = tempfile::tempdir().unwrap();
        let (mut t, _) = Transcript::open(dir.path(), "s").unwrap();
        for m in [
            ChatMessage::user("one"),
            ChatMessage::assistant("a1"),
            ChatMessage::user("two"),
            ChatMessage::assistant("a2"),
        ] {
            t.append(&record(m)).unwrap();
        }
        t.append_mark(Mark::Rewound { keep: 2, turn: 2 }).unwrap();
        t.append(&record(ChatMessage::user("three"))).unwrap();
        drop(t);
        let (_, live) = Transcript::open(dir.path(), "s").unwrap();
        let texts: Vec<&str> = live.iter().map(|r| r.message.content.as_str()).collect();
        assert_eq!(texts, ["one", "a1", "three"]);
        // The file keeps everything.
        let all = super::super::load_entries(&Transcript::path(dir.path(), "s")).unwrap();
        assert_eq!(all.len(), 6);
        assert_eq!(user_message_index(&live, 2), Some(2));
        assert_eq!(user_message_index(&live, 3), None);
        assert_eq!(user_message_index(&live, 0), None);
        assert_eq!(user_turns(&live), 2);
    }

    #[test]
    fn a_fork_resumes_like_its_source_and_names_it() {
        let dir = tempfile::tempdir().unwrap();
        let (mut t, _) = Transcript::open(dir.path(), "a").unwrap();
        t.append(&record(ChatMessage::user("one"))).unwrap();
        t.append(&record(ChatMessage::assistant("a1"))).unwrap();
        t.append_mark(Mark::Rewound { keep: 0, turn: 1 }).unwrap();
        t.append(&record(ChatMessage::user("two"))).unwrap();
        fork(dir.path(), "a", "b").unwrap();
        let (_, source) = Transcript::open(dir.path(), "a").unwrap();
        let (_, forked) = Transcript::open(dir.path(), "b").unwrap();
        assert_eq!(source, forked);
        let entries = super::super::load_entries(&Transcript::path(dir.path(), "b")).unwrap();
        assert!(matches!(
            &entries[0],
            Entry::Mark(MarkRecord { mark: Mark::ForkedFrom { session }, .. }) if session == "a"
        ));
        // Never over an existing session.
        assert!(fork(dir.path(), "a", "b").is_err());
    }

    #[test]
    fn the_last_pin_is_in_force_and_auto_clears_it() {
        let dir = tempfile::tempdir().unwrap();
        let (mut t, _) = Transcript::open(dir.path(), "p").unwrap();
        let path = Transcript::path(dir.path(), "p");
        t.append(&record(ChatMessage::user("one"))).unwrap();
        assert_eq!(
            pinned_model(&super::super::load_entries(&path).unwrap()),
            None
        );
        for model in ["local.fast", "anthropic:claude"] {
            t.append_mark(Mark::ModelPinned {
                model: model.into(),
            })
            .unwrap();
        }
        let entries = super::super::load_entries(&path).unwrap();
        assert_eq!(pinned_model(&entries).as_deref(), Some("anthropic:claude"));
        // A pin is no message: the live session holds the one message.
        assert_eq!(live(entries).len(), 1);
        t.append_mark(Mark::ModelPinned {
            model: "auto".into(),
        })
        .unwrap();
        assert_eq!(
            pinned_model(&super::super::load_entries(&path).unwrap()),
            None
        );
    }
}
