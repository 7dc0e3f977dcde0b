//! A session as its worker holds it: the transcript on disk and the
//! history in memory (pushed in that order, redacted first), the window's
//! bookkeeping, and the `Turn` through which one turn emits its events.

use std::collections::HashMap;
use std::sync::Arc;

use anyhow::Result;
use chrono::Utc;

use super::shared::Shared;
use super::{slots, summary};
use crate::chat::ChatMessage;
use crate::memory::daily;
use crate::protocol::{Command, EventKind, Origin, Target};
use crate::redact;
use crate::redact::Redactor;
use crate::sessions::{ContextUse, Details, Record, Transcript};

pub(crate) struct Session {
    pub id: String,
    pub(super) transcript: Transcript,
    pub(super) history: Vec<ChatMessage>,
    /// The last compaction's summary: it goes into the system prompt,
    /// fenced (`summary::with_summary`), never into the history.
    pub(super) summary: Option<String>,
    /// Token cost of each history message, filled lazily.
    pub(super) tokens: Vec<Option<u64>>,
    /// The main model's server's count of the last prompt it answered:
    /// the next prompt's size is that plus its new messages (`Counted`).
    pub(super) counted: Option<Counted>,
    /// `/local` or `/remote`: taken by the next turn.
    pub(super) forced: Option<Target>,
    pub(super) slot: Option<u32>,
    /// History before this index is no longer sent. It only moves forward,
    /// and when it must, well past the minimum, so that the sent prefix
    /// stays the same for many turns (llama.cpp's prefix cache).
    pub(super) window_start: usize,
    /// What is pushed is redacted first: the transcript and the history
    /// (every later request) never hold a secret value.
    redactor: Arc<Redactor>,
    /// Tool outputs trimmed to fit the window, as they were (by history
    /// index): a later trim cuts from these, never from a cut text.
    pub(super) untrimmed: HashMap<usize, String>,
    /// User messages in the live transcript: the number of the running
    /// turn, which keys its file checkpoints (`/clear` leaves it).
    pub(super) turns: usize,
    /// The local endpoint that answered the last local request.
    pub(super) endpoint: Option<String>,
    /// The last compaction could not get under `compact_at`: automatic
    /// compaction waits until the prompt reaches this many tokens
    /// (`compact::pause`).
    pub(super) compact_again_at: Option<u64>,
    /// The `session_start` hooks ran (at this process's first turn of it).
    pub(super) hooks_started: bool,
    /// The model the user pinned the session to (`/model`); `None`: the
    /// router decides each turn.
    pub(super) pinned: Option<super::pin::Pin>,
    /// The local role whose cache holds this session: the main model once
    /// a turn ran there, else the role of its local turns. A follow-up
    /// stays on the main model unless it is clearly quick.
    pub(super) cache_role: Option<crate::protocol::LocalRole>,
    /// The images the next user message carries (checked against the
    /// store by the worker; taken by the turn).
    pub(super) incoming_images: Vec<crate::chat::ImagePart>,
    /// The user was told this session's model cannot see images.
    pub(super) told_no_vision: bool,
}

/// What a session holds that its transcript does not: handed from the
/// worker that let an idle session go (`[agent] session_idle_release`) to
/// the one that opens it again, so the user finds it as they left it.
pub(super) struct Unwritten {
    forced: Option<Target>,
    pinned: Option<super::pin::Pin>,
    hooks_started: bool,
    told_no_vision: bool,
    cache_role: Option<crate::protocol::LocalRole>,
    endpoint: Option<String>,
}

impl Session {
    /// Opens the session from its transcript: after a restart, or again
    /// after an idle release (`unwritten`, taken only once the transcript
    /// opened: a failed open leaves it for the next try).
    pub async fn open(
        shared: &Shared,
        id: &str,
        unwritten: &mut Option<Unwritten>,
    ) -> Result<Self> {
        let (transcript, records) = Transcript::open(&shared.workspace, id)?;
        let unwritten = unwritten.take();
        let turns = crate::sessions::user_turns(&records);
        let limits = shared.limits().await;
        let compact_again_at =
            summary::paused_compaction(&records, shared.config.agent.compact_at, limits.n_ctx);
        // From the last compaction's summary on, when there was one.
        let (summary, history) = redacted(&shared.redactor, summary::resume(records));
        // A resumed session's cache is restored to the main model's slot.
        let cache_role = (!history.is_empty()).then_some(crate::protocol::LocalRole::Main);
        let session = Self {
            turns,
            id: id.to_string(),
            transcript,
            tokens: vec![None; history.len()],
            counted: None,
            history,
            summary,
            forced: None,
            slot: shared.assign_slot(id, limits.total_slots),
            window_start: 0,
            redactor: shared.redactor.clone(),
            untrimmed: HashMap::new(),
            endpoint: None,
            compact_again_at,
            hooks_started: false,
            // Read by the worker that opens it (`pin::resumed`).
            pinned: None,
            cache_role,
            incoming_images: Vec::new(),
            told_no_vision: false,
        };
        let Some(unwritten) = unwritten else {
            // Resumed after a restart: the cache the last run saved makes
            // the first turn warm (where the server supports it).
            if !session.history.is_empty() {
                slots::restore(&shared.main, session.cache_slot(), id).await;
            }
            return Ok(session);
        };
        // Opened again in the same run: the server's slot still holds what
        // this session left there, newer than any saved cache.
        Ok(session.with(unwritten))
    }

    /// Lets the session go (its history, its open transcript), keeping
    /// what the transcript does not hold.
    pub(super) fn release(self) -> Unwritten {
        Unwritten {
            forced: self.forced,
            pinned: self.pinned,
            hooks_started: self.hooks_started,
            told_no_vision: self.told_no_vision,
            cache_role: self.cache_role,
            endpoint: self.endpoint,
        }
    }

    fn with(mut self, unwritten: Unwritten) -> Self {
        self.forced = unwritten.forced;
        self.pinned = unwritten.pinned;
        self.hooks_started = unwritten.hooks_started;
        self.told_no_vision = unwritten.told_no_vision;
        self.cache_role = unwritten.cache_role.or(self.cache_role);
        self.endpoint = unwritten.endpoint;
        self
    }

    /// Reads the history again from the transcript (after a rewind).
    pub fn reload(&mut self, shared: &Shared) -> Result<()> {
        let (transcript, records) = Transcript::open(&shared.workspace, &self.id)?;
        self.turns = crate::sessions::user_turns(&records);
        self.transcript = transcript;
        (self.summary, self.history) = redacted(&self.redactor, summary::resume(records));
        self.tokens = vec![None; self.history.len()];
        self.counted = None;
        self.window_start = 0;
        self.untrimmed.clear();
        self.compact_again_at = None;
        Ok(())
    }

    /// The server slot holding this session's KV cache.
    pub(super) fn cache_slot(&self) -> u32 {
        self.slot.unwrap_or(0)
    }

    pub fn apply(&mut self, command: Command) {
        match command {
            Command::ForceTarget { target } => self.forced = Some(target),
            Command::Clear => {
                self.history.clear();
                self.summary = None;
                self.tokens.clear();
                self.counted = None;
                self.window_start = 0;
                self.untrimmed.clear();
                self.compact_again_at = None;
            }
            // Answered by the core without the session (see `run_core`),
            // or by the session's worker (fork, rewind, `compact::now`).
            Command::MemorySearch { .. }
            | Command::ListApprovals
            | Command::RevokeApproval { .. }
            | Command::Fork
            | Command::Rewind { .. }
            | Command::Compact { .. }
            | Command::PinModel { .. }
            | Command::ClientFiles { .. }
            | Command::WorkIn { .. }
            | Command::SessionMcp { .. }
            | Command::ListModels => {}
        }
    }

    /// A mark in the transcript (not a message: the history is unchanged).
    pub(super) fn mark(&mut self, mark: crate::sessions::Mark) -> Result<()> {
        self.transcript.append_mark(mark)
    }

    /// Appends to the transcript first, then to the in-memory history.
    pub(super) fn push(
        &mut self,
        origin: &Origin,
        typed: Option<String>,
        message: ChatMessage,
    ) -> Result<()> {
        self.push_record(origin, typed, None, message, Details::default())
    }

    /// A message with what the transcript keeps beside it (a tool
    /// result's outcome and diff, an interrupted reply).
    pub(super) fn push_detailed(
        &mut self,
        origin: &Origin,
        message: ChatMessage,
        details: Details,
    ) -> Result<()> {
        self.push_record(origin, None, None, message, details)
    }

    /// A model's reply, with the provider that wrote it (the distillation
    /// export keeps only what a remote model answered) and the prompt the
    /// next request carries (a resumed session's context meter).
    pub(super) fn push_reply(
        &mut self,
        origin: &Origin,
        provider: &str,
        message: ChatMessage,
        context: Option<ContextUse>,
    ) -> Result<()> {
        let details = Details {
            context,
            ..Details::default()
        };
        self.push_record(origin, None, Some(provider.to_string()), message, details)
    }

    fn push_record(
        &mut self,
        origin: &Origin,
        typed: Option<String>,
        provider: Option<String>,
        mut message: ChatMessage,
        details: Details,
    ) -> Result<()> {
        redact::message(&self.redactor, &mut message);
        let typed = typed.map(|t| self.redactor.redact(&t).into_owned());
        self.transcript.append(&Record {
            ts: Utc::now(),
            origin: origin.clone(),
            typed,
            provider,
            message: message.clone(),
            compaction: None,
            details,
        })?;
        self.history.push(message);
        self.tokens.push(None);
        Ok(())
    }

    /// After a compaction: the history before `cut` is gone, `summary`
    /// stands for it (in the system prompt); the window starts over.
    pub(super) fn replace_history(&mut self, summary: String, cut: usize) {
        let cut = cut.min(self.history.len());
        self.tokens = self.tokens.split_off(cut.min(self.tokens.len()));
        self.untrimmed = std::mem::take(&mut self.untrimmed)
            .into_iter()
            .filter(|(index, _)| *index >= cut)
            .map(|(index, text)| (index - cut, text))
            .collect();
        self.history = self.history.split_off(cut);
        self.counted = None;
        self.summary = Some(summary);
        self.window_start = 0;
    }
}

/// The server's count of a prompt it answered (`usage.prompt_tokens`) and
/// what that prompt held: the base a later prompt of the same session is
/// sized from, its new messages estimated, so a turn asks the server to
/// count (`/apply-template` + `/tokenize`) only near the window's edge.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Counted {
    /// The prompt's tokens as the main model's server counted them.
    pub tokens: u64,
    /// The system prompt and tool list it carried (`Fixed::fingerprint`).
    pub fixed: u64,
    /// The history it carried: `from..to`.
    pub from: usize,
    pub to: usize,
}

impl Counted {
    /// The base for a prompt of `history[from..]` with these fixed parts:
    /// `None` when it carried something else (another system prompt or tool
    /// list, another window start, a history since shortened).
    pub fn base_for(&self, fixed: u64, from: usize, history_len: usize) -> Option<&Self> {
        (self.fixed == fixed && self.from == from && self.to <= history_len).then_some(self)
    }
}

/// A summary and history read from a transcript, redacted once: one
/// written before a secret was known (or by an older egirl) may hold its
/// raw value, and requests send the history as it is held
/// (`prompt::prompt_messages`).
fn redacted(
    redactor: &Redactor,
    (summary, mut history): (Option<String>, Vec<ChatMessage>),
) -> (Option<String>, Vec<ChatMessage>) {
    for message in &mut history {
        redact::message(redactor, message);
    }
    let summary = summary.map(|s| redactor.redact(&s).into_owned());
    (summary, history)
}

/// One turn's (or one command's) view of the core: the shared state and
/// where its events go.
pub(super) struct Turn<'a> {
    pub(super) shared: &'a Shared,
    session_id: String,
    pub(super) origin: Origin,
    /// This turn's daily-log entries not yet written (`log_daily`).
    daily: std::sync::Mutex<Vec<daily::Entry>>,
}

impl<'a> Turn<'a> {
    pub(super) fn new(shared: &'a Shared, session_id: &str, origin: Origin) -> Self {
        Self {
            shared,
            session_id: session_id.to_string(),
            origin,
            daily: std::sync::Mutex::new(Vec::new()),
        }
    }

    pub(super) fn emit(&self, kind: EventKind) {
        self.shared.bus.emit(&self.session_id, &self.origin, kind);
    }

    /// A line of this turn for the agent's daily log (redacted, stamped
    /// now), written with the turn's other lines by `write_daily`: one
    /// append a turn rather than one a line. The transcript is the record
    /// (each message is on disk before the next step); the daily log is
    /// memory's digest of it, and gets the turn's lines right after
    /// `turn_ended` (see `turn::run_turn`).
    pub(super) fn log_daily(&self, who: &str, text: &str) {
        if text.trim().is_empty() {
            return;
        }
        let entry = daily::Entry {
            when: chrono::Local::now(),
            who: who.to_string(),
            origin: self.origin.to_string(),
            text: self.shared.redactor.redact(text).into_owned(),
        };
        lock(&self.daily).push(entry);
    }

    /// Appends the lines `log_daily` kept, in one write; a failure is a
    /// notice, never the turn's end.
    pub(super) fn write_daily(&self) {
        let entries = std::mem::take(&mut *lock(&self.daily));
        if entries.is_empty() {
            return;
        }
        if let Err(e) = daily::append_all(&self.shared.workspace, &entries) {
            self.emit(EventKind::Notice(crate::protocol::Notice {
                message: format!("could not append to the daily log: {e}"),
            }));
        }
    }
}

fn lock<T>(m: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_history_read_from_a_transcript_is_redacted_once_as_it_is_opened() {
        let secret = "legacy-secret-5c81e2";
        let redactor = Redactor::new([("LEGACY_TOKEN".to_string(), secret.to_string())]);
        let mut asked = ChatMessage::assistant(format!("noted {secret}"));
        asked.tool_calls = vec![crate::chat::ToolCall {
            id: "c1".into(),
            name: "memory_save".into(),
            arguments: serde_json::json!({"text": secret}),
            arguments_error: None,
        }];
        let read = (
            Some(format!("summary: {secret}")),
            vec![ChatMessage::user(format!("my token is {secret}")), asked],
        );
        let (summary, history) = redacted(&redactor, read);
        let all = format!("{summary:?} {history:?}");
        assert!(!all.contains(secret), "{all}");
        assert_eq!(history[0].content, "my token is [redacted:LEGACY_TOKEN]");
        assert_eq!(
            history[1].tool_calls[0].arguments["text"],
            "[redacted:LEGACY_TOKEN]"
        );
    }

    #[test]
    fn a_count_is_a_base_only_for_the_same_fixed_part_window_and_history() {
        let counted = Counted {
            tokens: 900,
            fixed: 7,
            from: 2,
            to: 5,
        };
        assert!(counted.base_for(7, 2, 8).is_some());
        assert!(counted.base_for(7, 2, 5).is_some());
        assert!(counted.base_for(8, 2, 8).is_none(), "another system prompt");
        assert!(counted.base_for(7, 3, 8).is_none(), "another window start");
        assert!(counted.base_for(7, 2, 4).is_none(), "a shorter history");
    }
}
