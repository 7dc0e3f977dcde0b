//! Session transcripts: `sessions/<id>.jsonl`, one record per message,
//! appended and flushed before the agent takes its next step.

use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use anyhow::{Context, Result, bail};
use serde::{Deserialize, Serialize};

use crate::chat::ChatMessage;
use crate::protocol::Origin;
use crate::redact::{self, Redactor};

mod details;
mod marks;
mod spare;
pub use details::{ContextUse, Details, INTERRUPTED_MARKER, ToolOutcome};
pub use marks::{
    Entry, Mark, MarkRecord, fork, live, pinned_model, user_message_index, user_turns,
};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Record {
    pub ts: chrono::DateTime<chrono::Utc>,
    pub origin: Origin,
    /// What the user typed, when it differs from what the model was sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub typed: Option<String>,
    /// Who wrote an assistant message: `llamacpp`, `anthropic`, `openai`,
    /// `azure` (absent for other messages and in older transcripts).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<String>,
    #[serde(flatten)]
    pub message: ChatMessage,
    /// Set on a compaction record: `message` is the summary (role system)
    /// that replaced the history before the last `kept` messages.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compaction: Option<Compaction>,
    /// What the message itself does not say (a tool result's outcome and
    /// diff, an interrupted reply, the prompt's size); every field is
    /// optional, so older transcripts load as they are.
    #[serde(flatten)]
    pub details: Details,
}

impl Record {
    /// `message` from `origin`, stamped now, with nothing else known.
    pub fn now(origin: Origin, message: ChatMessage) -> Self {
        Record {
            ts: chrono::Utc::now(),
            origin,
            typed: None,
            provider: None,
            message,
            compaction: None,
            details: Details::default(),
        }
    }
}

/// What a compaction replaced, as its transcript record keeps it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Compaction {
    /// Messages just before this record that stay verbatim after the summary.
    pub kept: usize,
    pub summarized_messages: usize,
    pub before_tokens: u64,
    pub after_tokens: u64,
    pub model: String,
}

/// What every transcript read passes through (set once at start-up): a
/// transcript written before a secret was known, or by an older egirl,
/// may hold its raw value, and whatever reads one (a resumed session,
/// the TUI's history and `/sessions`, a rewind, `export`) shows or sends
/// what it read.
static READ_REDACTOR: OnceLock<Arc<Redactor>> = OnceLock::new();

/// Makes every later transcript read redact with `redactor`; the first
/// call wins (one process, one set of secrets).
pub fn redact_on_read(redactor: Arc<Redactor>) {
    let _ = READ_REDACTOR.set(redactor);
}

/// `text` as a transcript read would show it: for what a client reads
/// beside the transcripts (a cron job's prompt).
pub fn redact_as_read(text: &mut String) {
    if let Some(r) = READ_REDACTOR.get().filter(|r| !r.is_empty()) {
        r.redact_string(text);
    }
}

/// A record as read: its text, typed text and tool arguments redacted.
fn redacted(mut record: Record) -> Record {
    if let Some(r) = READ_REDACTOR.get().filter(|r| !r.is_empty()) {
        redact::message(r, &mut record.message);
        if let Some(typed) = &mut record.typed {
            r.redact_string(typed);
        }
    }
    record
}

/// Session ids become file names: keep them to a safe alphabet.
pub fn validate_id(id: &str) -> Result<()> {
    let ok = !id.is_empty()
        && id.len() <= 128
        && !id.starts_with('.')
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if !ok {
        bail!("invalid session id `{id}`: use letters, digits, `-`, `_` and `.` (max 128)");
    }
    Ok(())
}

pub fn new_id(prefix: &str) -> String {
    let stamp = chrono::Local::now().format("%Y%m%d-%H%M%S");
    let rand = uuid::Uuid::new_v4().simple().to_string();
    format!("{prefix}-{stamp}-{}", &rand[..6])
}

/// Appends to `sessions/<id>.jsonl`. The file is opened per append: a
/// daemon may see thousands of sessions and must not hold a descriptor each.
pub struct Transcript {
    path: PathBuf,
    /// No file yet: the first append takes the spare (`spare::claim`).
    new_file: bool,
    /// This transcript's file was made (from the spare or anew) and the
    /// spare is not made again yet (`refill_spare`).
    made_file: bool,
}

impl Transcript {
    pub fn path(workspace: &Path, id: &str) -> PathBuf {
        workspace.join("sessions").join(format!("{id}.jsonl"))
    }

    /// Opens (creating) the transcript and returns the messages already in it.
    pub fn open(workspace: &Path, id: &str) -> Result<(Self, Vec<Record>)> {
        validate_id(id)?;
        let path = Self::path(workspace, id);
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)
                .with_context(|| format!("cannot create {}", dir.display()))?;
        }
        let new_file = !path.exists();
        let records = if new_file {
            Vec::new()
        } else {
            drop_torn_tail(&path)?;
            load(&path)?
        };
        let transcript = Self {
            path,
            new_file,
            made_file: false,
        };
        Ok((transcript, records))
    }

    /// Whether the transcript had no file when opened, and nothing was
    /// appended since.
    pub fn is_new(&self) -> bool {
        self.new_file
    }

    /// Makes a spare file for the next new session once this one's file
    /// was made (after the turn, off its path); nothing otherwise.
    pub fn refill_spare(&mut self) {
        if std::mem::take(&mut self.made_file)
            && let Some(dir) = self.path.parent()
        {
            spare::refill(dir);
        }
    }

    pub fn append(&mut self, record: &Record) -> Result<()> {
        self.append_line(record)
    }

    fn append_line(&mut self, record: &impl Serialize) -> Result<()> {
        let mut line = serde_json::to_string(record).context("cannot serialize a message")?;
        line.push('\n');
        let new_file = std::mem::take(&mut self.new_file);
        self.made_file |= new_file;
        let spare = new_file.then(|| spare::claim(&self.path)).flatten();
        let file = match spare {
            Some(file) => Ok(file),
            None => std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(&self.path),
        };
        file.and_then(|mut file| {
            file.write_all(line.as_bytes())?;
            file.flush()
        })
        .with_context(|| format!("cannot append to {}", self.path.display()))
    }
}

/// A crash mid-write can leave a last line without its newline; cut it so
/// the next append starts on a line of its own.
fn drop_torn_tail(path: &Path) -> Result<()> {
    let bytes = std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
    if bytes.is_empty() || bytes.ends_with(b"\n") {
        return Ok(());
    }
    let keep = bytes.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
    tracing::warn!(path = %path.display(), "dropping a torn last transcript line");
    let file = std::fs::OpenOptions::new()
        .write(true)
        .open(path)
        .with_context(|| format!("cannot repair {}", path.display()))?;
    file.set_len(keep as u64)
        .with_context(|| format!("cannot repair {}", path.display()))
}

/// Reads a transcript's live messages: what a resumed session holds (a
/// `rewound` mark leaves out the messages it cut). A torn last line (crash
/// mid-write) is skipped; a bad line elsewhere is an error naming the line.
pub fn load(path: &Path) -> Result<Vec<Record>> {
    load_entries(path).map(live)
}

/// Every line of a transcript, messages and marks, in file order.
pub fn load_entries(path: &Path) -> Result<Vec<Entry>> {
    let file =
        std::fs::File::open(path).with_context(|| format!("cannot open {}", path.display()))?;
    let lines: Vec<String> = std::io::BufReader::new(file)
        .lines()
        .collect::<std::io::Result<_>>()
        .with_context(|| format!("cannot read {}", path.display()))?;
    let last = lines.len();
    let mut records = Vec::new();
    for (n, line) in lines.iter().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        match Entry::parse(line) {
            Ok(Entry::Message(r)) => records.push(Entry::Message(redacted(r))),
            Ok(mark) => records.push(mark),
            Err(_) if n + 1 == last => {
                tracing::warn!(path = %path.display(), "skipping a torn last line");
            }
            Err(e) => bail!("{}:{}: bad transcript line: {e}", path.display(), n + 1),
        }
    }
    Ok(records)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn appends_and_reloads() {
        let dir = tempfile::tempdir().unwrap();
        let (mut t, old) = Transcript::open(dir.path(), "s1").unwrap();
        assert!(old.is_empty());
        for text in ["one", "two"] {
            t.append(&Record {
                ts: chrono::Utc::now(),
                origin: Origin::Cli,
                typed: None,
                provider: None,
                message: ChatMessage::user(text),
                compaction: None,
                details: Details::default(),
            })
            .unwrap();
        }
        drop(t);
        // A crash mid-write leaves a torn line; it must not block resuming.
        let path = Transcript::path(dir.path(), "s1");
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap();
        f.write_all(b"{\"ts\":").unwrap();
        let (mut t, records) = Transcript::open(dir.path(), "s1").unwrap();
        assert_eq!(records.len(), 2);
        assert_eq!(records[1].message.content, "two");
        t.append(&Record {
            ts: chrono::Utc::now(),
            origin: Origin::Cli,
            typed: None,
            provider: None,
            message: ChatMessage::user("three"),
            compaction: None,
            details: Details::default(),
        })
        .unwrap();
        assert_eq!(load(&path).unwrap().len(), 3);
    }

    #[test]
    fn refuses_unsafe_ids() {
        for bad in ["", "../x", "a/b", ".hidden", "a b"] {
            assert!(validate_id(bad).is_err(), "{bad}");
        }
        validate_id("cli-20261122-abc.1_x").unwrap();
    }
}
