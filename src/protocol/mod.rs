//! The one seam between the agent core and its surfaces.
//!
//! Surfaces send [`Op`]s in, each as a [`Submission`] with an id, and
//! receive [`Event`]s out. Every event names the session and the origin it
//! belongs to, so a surface that shows all sessions (the TUI) mirrors
//! Discord or cron traffic without knowing about them, and the submission
//! it answers, so a surface knows which of its requests an answer is for.
//! Each kind carries a named payload struct (`events`); a route is one
//! enum (`route`). The in-process delivery is `crate::bus`'s job.
//!
//! # Wire versions (`--json`, one event per line)
//!
//! `egirl --version` names the current one (`src/cli/mod.rs`).
//!
//! - 0: `type`, `session`, `origin`, then the kind's fields.
//! - 1 ([`PROTOCOL_VERSION`]): the same, plus `submission` (after
//!   `origin`) on every event an op caused; absent on spontaneous ones. No
//!   field of version 0 changed: the typed `Route`, `ReviewDecision` and
//!   `RoutedModel` keep their old fields and strings on the wire
//!   (`tests/data/json_events_v0.jsonl` is read back unchanged).
//! - 2: the same, plus `agent` (after `submission`) on every event of a
//!   config that declares `[agents]`: whose session it is. A submission
//!   may name the agent its op is for (`{"id", "agent", "op"}`).

use std::fmt;

use serde::{Deserialize, Serialize};

/// The `--json` wire version (see the module doc for what changed).
pub const PROTOCOL_VERSION: u32 = 2;

mod controls;
mod events;
mod images;
mod origin;
mod route;
pub mod wire;
pub use controls::*;
pub use events::*;
pub use images::ImagePart;
pub use origin::Origin;
pub use route::{LOCAL_PROVIDER, LocalRole, Route, RoutedModel};

pub type SessionId = String;

/// An agent's name (`[agents.NAME]`; `default` is always there).
pub type AgentName = String;

/// The `session` of an event that belongs to no conversation (an MCP
/// server's failure notice). No session id is empty
/// (`sessions::validate_id`), so no transcript, picker row or message can
/// be made of it: surfaces show such an event where the user is looking.
pub const NO_SESSION: &str = "";

/// The user's answer to an approval request. `Session` and `Always` approve
/// the command's prefix for the rest of the session or permanently.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReviewDecision {
    ApprovedOnce,
    ApprovedForSession,
    ApprovedAlways,
    Denied,
    /// Answers an escalation request only: run this command once outside
    /// the sandbox. Never remembered; the other approvals deny an escalation.
    ApprovedOutsideSandbox,
}

impl ReviewDecision {
    pub fn is_approved(self) -> bool {
        !matches!(self, ReviewDecision::Denied)
    }
}

/// The tool result the model gets when the user denies a request; a
/// restored transcript shows such a result as a refusal.
pub const DENIED_BY_USER: &str = "denied by user";

/// The `tool` of an approval request that answers one of Claude Code's own
/// permission prompts during a delegation (its tool and input in
/// `command`). `--approve-exec` never approves it.
pub const CLAUDE_CODE_PERMISSION: &str = "claude_code";

/// The `tool` of an [`ApprovalRequest`] for an ACP agent's
/// `session/request_permission` during `delegate` (the agent, its tool
/// call and input in `command`). `--approve-exec` never approves it.
pub const DELEGATE_PERMISSION: &str = "delegate_permission";

/// Which side the next turn is forced to (`/local`, `/remote`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Target {
    Local,
    Remote,
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Target::Local => "local",
            Target::Remote => "remote",
        })
    }
}

/// On the wire: `{"name": "clear"}`, `{"name": "rewind", "turn":
/// 2}`... (docs/protocol.md).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "name", rename_all = "snake_case")]
pub enum Command {
    /// Force the target of the session's next turn.
    ForceTarget { target: Target },
    /// Forget the in-memory history of a session (the transcript stays on disk).
    Clear,
    /// Search memory for the session (`/memory Q`): answered with `memory_hits`.
    MemorySearch { query: String },
    /// Copy the session into a new one (`/fork`): answered with `forked`.
    Fork,
    /// Go back to before the session's user message `turn` (1-based),
    /// restoring the files the file tools changed since: answered with
    /// `rewound` (or `error`).
    Rewind { turn: usize },
    /// Replace the older history with a summary now (`/compact [what to
    /// keep]`): answered with `compaction`, or `error` when it could not.
    Compact {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        focus: Option<String>,
        origin: Origin,
    },
    /// Every approval rule in force for the session (`/approvals`):
    /// answered with `approval_rules`.
    ListApprovals,
    /// Revoke the rule `id` of `approval_rules` (a session rule from the
    /// core's memory, a permanent one from the approvals file): answered
    /// with `approval_revoked`, or `error` (unknown id, a config rule).
    RevokeApproval { id: String },
    /// Pin the session to one model (`/model NAME`, `--model`): `auto`
    /// (the router again), `local`, `local.fast` or `PROVIDER:MODEL`.
    /// Answered by `model_pinned`, or `error` naming the choices.
    PinModel { model: String },
    /// What `/model` offers: answered by `models`.
    ListModels,
    /// The session's client reads (`read`) and writes (`write`) files
    /// for the file tools from now on (`egirl acp`): each access is a
    /// `file_request`, answered by a `file_answer` op.
    ClientFiles { read: bool, write: bool },
    /// The session's relative paths and commands start in `dir` (an
    /// editor's project, `egirl acp`), which must lie in the workspace
    /// or an allowed path: answered by `error` when it does not.
    WorkIn { dir: String },
    /// MCP servers for this session only, in place of its earlier ones
    /// (`egirl acp`): answered by `notice`, or `error` past the bounds.
    SessionMcp { servers: Vec<SessionMcpServer> },
}

/// Names one submission; the events it causes carry it. Chosen by whoever
/// submits (unique per process: [`SubmissionId::fresh`]).
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct SubmissionId(pub String);

impl SubmissionId {
    /// An id no other submission has, of this process or of another one
    /// attached to the same core over its socket (whose events every
    /// client reads): a counter behind a prefix drawn once per process.
    pub fn fresh() -> Self {
        use std::sync::OnceLock;
        use std::sync::atomic::{AtomicU64, Ordering};
        static NEXT: AtomicU64 = AtomicU64::new(1);
        static PROCESS: OnceLock<String> = OnceLock::new();
        let process =
            PROCESS.get_or_init(|| uuid::Uuid::new_v4().simple().to_string()[..8].to_string());
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        SubmissionId(format!("{process}-{n}"))
    }
}

impl fmt::Display for SubmissionId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// An op with the id its events will carry. On the wire (an `op` frame)
/// `{"id": ..., "op": {...}}`.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Submission {
    pub id: SubmissionId,
    /// The agent the op is for. `None`: the agent of the session it names
    /// (the one that holds its transcript), else `default`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<AgentName>,
    pub op: Op,
}

impl Submission {
    /// `op` under a fresh id, for the session's own agent.
    pub fn new(op: Op) -> Self {
        Submission {
            id: SubmissionId::fresh(),
            agent: None,
            op,
        }
    }

    /// `op` under a fresh id, for `agent` (a bound channel, `/agent`,
    /// `--agent`, `/api/webhook/{agent}`).
    pub fn to_agent(agent: &str, op: Op) -> Self {
        Submission {
            agent: Some(agent.to_string()),
            ..Submission::new(op)
        }
    }
}

/// On the wire tagged by `"type"` (`user_message`, `approval_decision`,
/// `interrupt`, `command`); `Shutdown` is this process's own and has no
/// wire form (no client stops the core).
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Op {
    UserMessage {
        session: SessionId,
        origin: Origin,
        text: String,
        /// Images sent with the text (stored first; see [`ImagePart`]).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        images: Vec<ImagePart>,
    },
    ApprovalDecision {
        id: String,
        decision: ReviewDecision,
        by: Origin,
    },
    Interrupt {
        session: SessionId,
    },
    Command {
        session: SessionId,
        command: Command,
    },
    /// The answer to `file_request` `id`: the text read (a read), or
    /// `error` (why it failed); neither: written.
    FileAnswer {
        id: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        content: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        error: Option<String>,
    },
    #[serde(skip)]
    Shutdown,
}

/// A background bot's connection (the Discord bridge), as surfaces show it.
/// On the wire `{"state": "ready", "detail": "egirl#0001"}`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "state", content = "detail", rename_all = "snake_case")]
pub enum BotStatus {
    /// Not running: disabled, or no bot in this process.
    Off,
    Connecting,
    /// Connected and identified as this bot user.
    Ready(String),
    /// Lost the connection; the bot is getting it back.
    Reconnecting(String),
    /// Gave up for now (e.g. a bad token); retried later.
    Stopped(String),
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct MemoryHit {
    pub path: String,
    pub start_line: usize,
    pub end_line: usize,
    pub score: f64,
    /// The chunk's best-matching lines (and their neighbours), not its start.
    pub snippet: String,
    /// The file lines `snippet` spans, within `start_line..=end_line`.
    #[serde(default)]
    pub snippet_start_line: usize,
    #[serde(default)]
    pub snippet_end_line: usize,
    /// The file line that matched best.
    #[serde(default)]
    pub best_line: usize,
}

impl MemoryHit {
    /// The snippet's line that matched best: what a one-line view shows.
    /// Without line numbers (an older event), the first line with content
    /// that is not a heading.
    pub fn matched_line(&self) -> &str {
        let lines = || self.snippet.split('\n');
        if self.best_line >= self.snippet_start_line && self.best_line > 0 {
            let found = lines()
                .nth(self.best_line - self.snippet_start_line)
                .filter(|l| !l.trim().is_empty());
            if let Some(line) = found {
                return line.trim();
            }
        }
        let content = |l: &&str| !l.trim().is_empty();
        lines()
            .filter(content)
            .find(|l| !l.trim_start().starts_with('#'))
            .or_else(|| lines().find(content))
            .unwrap_or("")
            .trim()
    }
}

/// What a `write_file`/`edit_file` call changed, for surfaces to show
/// under the call. The model never gets it (its result is one line).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct FileDiff {
    /// The file as the tool names it (relative to the workspace).
    pub path: String,
    /// Lines added and removed by the whole change (`text` may be capped).
    pub added: usize,
    pub removed: usize,
    /// Unified diff hunks (`@@ -a,b +c,d @@`, then ` `/`+`/`-` lines),
    /// capped in lines and bytes with a closing `… N more lines` marker;
    /// or one line saying why there is none (binary, too large, no change).
    pub text: String,
}

/// Who said a message of a conversation (a transcript's records carry it;
/// a resumed session is shown by it). The providers speak it too.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    System,
    #[default]
    User,
    Assistant,
    Tool,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Event {
    /// The submission this event answers; `None` for spontaneous ones (an
    /// MCP server's state, the usage log's own notices).
    pub submission: Option<SubmissionId>,
    pub session: SessionId,
    pub origin: Origin,
    /// The agent whose session it is; `None` when the config declares no
    /// `[agents]` (then every event is `default`'s) and on events of no
    /// agent (an MCP server's state).
    pub agent: Option<AgentName>,
    pub kind: EventKind,
}

impl Serialize for Event {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::{Error, SerializeMap};
        let value = serde_json::to_value(&self.kind).map_err(S::Error::custom)?;
        let serde_json::Value::Object(fields) = value else {
            return Err(S::Error::custom("event kind is not an object"));
        };
        let mut map = s.serialize_map(Some(fields.len() + 4))?;
        if let Some(kind) = fields.get("type") {
            map.serialize_entry("type", kind)?;
        }
        map.serialize_entry("session", &self.session)?;
        map.serialize_entry("origin", &self.origin)?;
        if let Some(id) = &self.submission {
            map.serialize_entry("submission", id)?;
        }
        if let Some(agent) = &self.agent {
            map.serialize_entry("agent", agent)?;
        }
        for (key, value) in fields.iter().filter(|(k, _)| k.as_str() != "type") {
            map.serialize_entry(key, value)?;
        }
        map.end()
    }
}

impl<'de> Deserialize<'de> for Event {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        let mut value = serde_json::Map::deserialize(d)?;
        let session = value
            .remove("session")
            .and_then(|v| v.as_str().map(str::to_string))
            .ok_or_else(|| D::Error::missing_field("session"))?;
        let origin = value
            .remove("origin")
            .and_then(|v| v.as_str().map(str::to_string))
            .ok_or_else(|| D::Error::missing_field("origin"))?
            .parse()
            .map_err(D::Error::custom)?;
        let submission = match value.remove("submission") {
            Some(id) => Some(serde_json::from_value(id).map_err(D::Error::custom)?),
            None => None,
        };
        let agent = match value.remove("agent") {
            Some(serde_json::Value::String(agent)) => Some(agent),
            Some(_) => return Err(D::Error::custom("`agent` is not a string")),
            None => None,
        };
        let kind =
            serde_json::from_value(serde_json::Value::Object(value)).map_err(D::Error::custom)?;
        Ok(Event {
            submission,
            session,
            origin,
            agent,
            kind,
        })
    }
}

#[cfg(test)]
mod tests;

/// One MCP server as surfaces show it (`/mcp`, the status line, `egirl
/// doctor`, `egirl mcp list`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct McpServerInfo {
    pub name: String,
    /// "stdio" or "http".
    pub transport: String,
    /// "starting", "ready" or "failed".
    pub state: String,
    /// Its tools egirl offers, by the server's names.
    pub tools: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_error: Option<String>,
}
