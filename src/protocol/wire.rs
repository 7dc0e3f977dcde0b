//! The protocol on a socket: the frames a client and the process that owns
//! the core (`egirl serve`, or the TUI that started first) exchange over
//! `.egirl/egirl.sock` or a WebSocket. docs/protocol.md documents every
//! frame with examples; this file is what it describes.
//!
//! One frame is one JSON object on one line (`\n`-terminated; a WebSocket
//! text message carries one frame without the newline), tagged by
//! `"frame"`. The client opens with `hello`, then sends `op`s; the server
//! answers `hello`, then sends `event`s, each with a sequence number one
//! higher than the event before it in the server's stream, and `status`
//! when the bots, the MCP servers or the local model's health change.
//! Events inside an `event` frame are exactly the `--json` lines
//! ([`super::Event`], version [`super::PROTOCOL_VERSION`]).

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::{BotStatus, Event, McpServerInfo, SessionId, Submission};

/// The frames' version: `hello` carries it both ways, and a server refuses
/// a client whose major version differs. Bumped when a frame changes
/// incompatibly; a new optional field or a new frame does not bump it.
pub const WIRE_VERSION: u32 = 1;

/// The longest frame a server reads from a client: an op carries at most a
/// pasted message, and a line without end must not grow the server.
pub const MAX_CLIENT_FRAME: usize = 4 * 1024 * 1024;

/// What a client sends.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(tag = "frame", rename_all = "snake_case")]
pub enum ClientFrame {
    /// The first frame: who the client is, and where its view left off.
    Hello(ClientHello),
    /// An op for the core under the client's own id; the events it causes
    /// carry that id as `submission`.
    Op(Submission),
    /// Trades a one-time pairing code (`egirl pair`) for a device token of
    /// the client's own; TCP only, sent instead of `hello`.
    Pair(PairRequest),
    /// Asks for what the stream does not carry (the sessions on disk, a
    /// transcript, the cron jobs, today's usage); answered by `answer`
    /// with the same id. A connection's queries are answered one at a
    /// time, in order.
    Query(Query),
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct ClientHello {
    /// [`WIRE_VERSION`] as the client knows it.
    pub version: u32,
    /// The client's name and version, for the server's log (`egirl-tui
    /// 0.1.0`, `my-script`).
    #[serde(default)]
    pub client: String,
    /// A device or gateway token (TCP only; a Unix socket's owner is
    /// checked by the kernel). Never logged, never echoed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token: Option<String>,
    /// The `seq` of the last event this client applied, when it
    /// reconnects: the server replays what came after it, or sends
    /// `resync` when that is no longer in its buffer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resume_after: Option<u64>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct PairRequest {
    /// The code `egirl pair` shows (`1234-5678`).
    pub code: String,
    /// What the user calls this device (`phone`), shown by `egirl
    /// devices list`.
    pub device: String,
}

/// What a server sends.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(tag = "frame", rename_all = "snake_case")]
pub enum ServerFrame {
    Hello(ServerHello),
    Event(SequencedEvent),
    Status(CoreStatus),
    /// The client's view can no longer be continued event by event (it
    /// fell behind the server's bound, or asked to resume from an event
    /// the buffer no longer has): it reloads the sessions' transcripts.
    /// The approvals still open follow as `event` frames.
    Resync(Resync),
    /// An op was not taken (a malformed frame, an origin a client may not
    /// use); the connection stays open.
    Rejected(Rejected),
    /// The answer to `pair`: the device's own token, shown once.
    Paired(Paired),
    /// The answer to a `query`.
    Answer(Answer),
    /// The connection is refused or ends (a wrong token, a revoked device,
    /// a version the server does not speak); the server closes it next.
    Error(WireError),
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct ServerHello {
    /// [`WIRE_VERSION`].
    pub version: u32,
    /// The events' version ([`super::PROTOCOL_VERSION`]).
    pub events: u32,
    /// `egirl 0.1.0`.
    pub server: String,
    /// The process that owns the core (`attached: serve pid N`).
    pub pid: u32,
    /// Unique to this run of the server. `seq` counts from 1 again when
    /// the process that owns the core restarts: a client that reconnects
    /// and finds another instance than before does not resume from its
    /// last `seq` (a number of the old stream) but starts afresh and
    /// reloads its view. Empty from a server that does not say.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub instance: String,
    /// `serve` or `tui`: which kind of process owns the core.
    pub mode: String,
    /// The workspace the core works in (its `sessions/` holds the
    /// transcripts a client on the same machine reloads).
    pub workspace: String,
    /// What this server does beyond the frames above (`pairing`, ...).
    #[serde(default)]
    pub capabilities: Vec<String>,
    /// The `seq` of the last event sent so far: a fresh client's view
    /// starts after it.
    pub seq: u64,
    /// The sessions the core has open now, and whether a turn runs.
    #[serde(default)]
    pub sessions: Vec<LiveSession>,
    /// The local model, as the TUI's status line shows it.
    #[serde(default)]
    pub model: String,
    #[serde(default)]
    pub context_length: u64,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct LiveSession {
    pub id: SessionId,
    /// The origin of its last turn (`tui`, `discord:<channel>`...).
    pub origin: String,
    /// A turn is running or queued.
    pub busy: bool,
    /// Whose session it is (absent without `[agents]`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<super::AgentName>,
}

/// One event of the server's stream.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct SequencedEvent {
    /// One more than the event before it in the server's stream; a client
    /// that sees a number twice has seen that event already. Streamed text
    /// a slow client had not read yet may arrive merged into one `delta`,
    /// which then carries the last of the merged events' numbers.
    pub seq: u64,
    pub event: Event,
}

/// The background parts of the core as surfaces show them; sent after
/// `hello` and whenever one changes.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CoreStatus {
    /// The Discord bot, when the core's process runs one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub discord: Option<BotStatus>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub telegram: Option<BotStatus>,
    #[serde(default)]
    pub mcp: Vec<McpServerInfo>,
    /// How many local endpoints answer `/health`, of how many; absent
    /// until the first probe.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub local: Option<LocalHealth>,
    /// Why no remote provider can take a turn (`/remote`, `/escalate`);
    /// absent when one can, and from a server that does not say.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub no_remote: Option<String>,
    /// Remote spend against `[remote] budget_day_usd` and
    /// `budget_month_usd` (the caps that are set; none: empty).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub budget: Vec<SpendPeriod>,
    /// The agents the core's config declares, `default` first; empty
    /// (and absent) when it declares no `[agents]`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub agents: Vec<super::AgentName>,
}

/// One capped period of remote spend: the local day or month.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SpendPeriod {
    /// "day" or "month".
    pub name: String,
    /// Which day or month: "2026-11-26", "2026-11".
    pub key: String,
    pub spent_usd: f64,
    pub cap_usd: f64,
}

impl SpendPeriod {
    /// "day 1.99/2.00 USD".
    pub fn shown(&self) -> String {
        format!(
            "{} {:.2}/{:.2} USD",
            self.name, self.spent_usd, self.cap_usd
        )
    }

    /// Nothing more may be spent on remote models in it.
    pub fn exhausted(&self) -> bool {
        self.spent_usd >= self.cap_usd
    }
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LocalHealth {
    pub up: usize,
    pub total: usize,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Resync {
    /// `lagged` (the client read too slowly) or `gap` (its `resume_after`
    /// is older than the buffer).
    pub reason: String,
    /// The stream goes on after this `seq`.
    pub seq: u64,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Rejected {
    /// The op's id, when the frame had one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    pub message: String,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Paired {
    /// The device's id (`egirl devices revoke ID`).
    pub device: String,
    /// Its token: the client keeps it and sends it in `hello`.
    pub token: String,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct WireError {
    pub message: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Query {
    /// The client's name for this query; its `answer` carries it.
    pub id: String,
    pub ask: Ask,
}

/// What a query asks; on the wire `{"kind": "transcript", "session": ..}`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Ask {
    /// The core's live sessions, then the newest transcripts on disk.
    Sessions,
    /// One session's transcript, its newest items.
    Transcript { session: SessionId },
    /// The cron jobs.
    Cron,
    /// Today's usage per provider and model (as `egirl stats` counts it).
    Stats,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Answer {
    /// The query's id.
    pub id: String,
    pub reply: Reply,
}

/// An answer's content, tagged by `kind` like the query it answers.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Reply {
    /// Live sessions first, then the others; newest activity first.
    Sessions {
        sessions: Vec<SessionSummary>,
    },
    Transcript(TranscriptReply),
    Cron {
        jobs: Vec<CronJobInfo>,
    },
    Stats {
        rows: Vec<UsageRow>,
        total_cost_usd: f64,
    },
    /// The query could not be answered (an unknown session, a bad id, an
    /// unreadable file): one line.
    Failed {
        message: String,
    },
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SessionSummary {
    pub id: SessionId,
    /// The origin of its last message or turn (`discord:123`).
    pub origin: String,
    pub last_activity: DateTime<Utc>,
    /// Messages its transcript holds (the live session's).
    pub messages: usize,
    /// Its first user message's first line, at most 80 characters.
    pub title: String,
    /// The core has it open.
    pub live: bool,
    /// A turn runs or waits in it.
    pub busy: bool,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TranscriptReply {
    pub session: SessionId,
    /// Older items were left out (only the newest are sent).
    pub truncated: bool,
    pub items: Vec<TranscriptItem>,
}

/// One line of a transcript as a client shows it, in file order; texts
/// are capped (a `… (cut)` marker ends a cut one) and redacted.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "item", rename_all = "snake_case")]
pub enum TranscriptItem {
    User {
        ts: DateTime<Utc>,
        origin: String,
        text: String,
    },
    Assistant {
        ts: DateTime<Utc>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        provider: Option<String>,
        text: String,
        #[serde(default)]
        tool_calls: Vec<ToolCallItem>,
        /// The user interrupted this reply: `text` is what had streamed.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        interrupted: bool,
    },
    ToolResult {
        ts: DateTime<Utc>,
        /// The call it answers.
        id: String,
        name: String,
        output: String,
        /// The user denied the call.
        denied: bool,
        /// How the call ended (absent in transcripts written before it was kept).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        outcome: Option<super::ToolOutcome>,
        /// A `write_file`/`edit_file` call's change.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        diff: Option<super::FileDiff>,
    },
    /// The history before it was replaced by `summary`.
    Compaction {
        ts: DateTime<Utc>,
        summarized_messages: usize,
        before_tokens: u64,
        after_tokens: u64,
        model: String,
        summary: String,
    },
    /// The session went back to before its user message `turn`.
    Rewound { ts: DateTime<Utc>, turn: usize },
    /// The transcript began as a copy of `session`'s.
    ForkedFrom {
        ts: DateTime<Utc>,
        session: SessionId,
    },
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ToolCallItem {
    pub id: String,
    pub name: String,
    pub arguments: serde_json::Value,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CronJobInfo {
    pub id: String,
    /// As people say it (`every 1h`, `0 9 * * *`).
    pub schedule: String,
    /// None: disabled, or nothing more to run.
    pub next_run: Option<DateTime<Utc>>,
    /// The session its turns run in.
    pub session: SessionId,
    /// What the agent is told when it runs.
    pub prompt: String,
    /// One line as `/cron` shows it.
    pub describe: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct UsageRow {
    pub provider: String,
    pub model: String,
    pub requests: u64,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cached_tokens: u64,
    pub cost_usd: f64,
}
