//! The events' payloads: each kind of [`EventKind`] carries one named
//! struct, which surfaces store as it is (a tool call's entry in the TUI
//! holds the `ToolCallEvent` it showed).

use serde::{Deserialize, Serialize};

use super::controls::{ApprovalRevoked, ApprovalRules, HookRun};
use super::{FileDiff, MemoryHit, ReviewDecision, Route, RoutedModel, Target};

/// What happened, serialized as one JSON object per line in `--json` mode
/// with `"type"` first (then `session` and `origin`, then the payload's
/// fields: see [`Event`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum EventKind {
    TurnStarted(TurnStarted),
    /// A message arrived while the session was busy; it runs after the current turn.
    Queued(Queued),
    Routing(Routing),
    Delta(AnswerDelta),
    Reasoning(ReasoningDelta),
    ToolCall(ToolCallEvent),
    ApprovalRequest(ApprovalRequest),
    ApprovalDecision(ApprovalDecision),
    ToolResult(ToolResultEvent),
    Escalation(Escalation),
    MemoryHits(MemoryHits),
    Usage(TokenUsage),
    /// Older turns were left out of the request so that it fits the window.
    ContextTrimmed(ContextTrimmed),
    Notice(Notice),
    Final(FinalAnswer),
    Error(ErrorEvent),
    /// The turn is over (after `final`, `error` or an interrupt); the session is idle.
    TurnEnded(TurnEnded),
    /// A running tool call's progress, shown under the call (a delegated
    /// agent's text and tool uses); never sent to the model.
    ToolProgress(ToolProgress),
    /// The session was copied into `new_session` (`/fork`).
    Forked(Forked),
    /// The session went back to before its user message `turn`: the
    /// messages from there on are out of the live session (the transcript
    /// keeps them, marked), and the files are as they were then.
    Rewound(Rewound),
    /// Older turns were replaced by a summary (the transcript keeps them).
    Compaction(Compacted),
    /// One of the user's `[[hooks]]` ran.
    Hook(HookRun),
    /// Every approval rule in force for the session (`list_approvals`).
    ApprovalRules(ApprovalRules),
    /// A rule was revoked (`revoke_approval`): the next request it covered
    /// is asked again.
    ApprovalRevoked(ApprovalRevoked),
    /// The session runs on this model from its next turn (`pin_model`).
    ModelPinned(ModelPinned),
    /// The models a session may be pinned to (`list_models`).
    Models(Models),
    /// A file tool asks the session's editor to read or write a file
    /// (`egirl acp`): answered by `Op::FileAnswer`.
    FileRequest(FileRequest),
    /// The model declined to answer (Anthropic's `refusal`, OpenAI's
    /// `content_filter`): sent before `turn_ended`, whose turn ended so.
    Refused(Refused),
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TurnStarted {
    pub text: String,
    /// The pictures the message carries, by file (a surface shows each
    /// as a chip, `images::chip`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub images: Vec<super::ImagePart>,
}

/// A message arrived while the session was busy; it runs after the current turn.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Queued {
    pub text: String,
    pub position: usize,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(into = "RoutingFields", from = "RoutingFields")]
/// Where a turn goes, and why. On the wire the route is the `target`,
/// `provider` and `role` fields of version 0, in its order.
pub struct Routing {
    pub route: Route,
    pub model: String,
    pub reason: String,
    pub confidence: f64,
}

/// `Routing` as version 0 wrote it, field for field and in that order, so
/// a line reads the same to a client that compares bytes.
#[derive(Serialize, Deserialize)]
struct RoutingFields {
    target: Target,
    provider: String,
    model: String,
    reason: String,
    confidence: f64,
    /// Absent from the oldest events: read as the main local model.
    #[serde(default)]
    role: String,
}

impl From<Routing> for RoutingFields {
    fn from(routing: Routing) -> Self {
        RoutingFields {
            target: routing.route.target(),
            provider: routing.route.provider().to_string(),
            role: routing.route.name().to_string(),
            model: routing.model,
            reason: routing.reason,
            confidence: routing.confidence,
        }
    }
}

impl From<RoutingFields> for Routing {
    fn from(fields: RoutingFields) -> Self {
        Routing {
            route: Route::from_fields(fields.target, fields.provider, &fields.role),
            model: fields.model,
            reason: fields.reason,
            confidence: fields.confidence,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AnswerDelta {
    pub text: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ReasoningDelta {
    pub text: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ToolCallEvent {
    pub id: String,
    pub name: String,
    pub arguments: serde_json::Value,
    /// For `exec`: the sandbox it runs in ("workspace-write, no network").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ApprovalRequest {
    // The largest event: its optional texts are `Box<str>` (16 bytes, not
    // 24) so that `EventKind`, and with it every event, stays 168 bytes.
    pub id: String,
    pub tool: String,
    pub command: String,
    pub cwd: String,
    /// The rule "approve for the session"/"always" would remember
    /// (exec only); absent when the command can never become a rule.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rule: Option<String>,
    /// What `rule` covers, in words for a person (exec only): the prefix
    /// and the longer commands the read-only table accepts, or exactly
    /// this command.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rule_covers: Option<Box<str>>,
    /// The sandbox the command will run in ("off (no sandbox)" when off).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox: Option<Box<str>>,
    /// Set on a request to re-run a command that failed in the sandbox
    /// outside it: why (the failing lines). Only `approved_outside_sandbox`
    /// approves it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub escalation: Option<Box<str>>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
/// A request was answered (or given up on). On the wire the decision is
/// `"decision": "approved"|"denied"` plus a `scope` when approved (`once`,
/// `session`, `always`, `outside_sandbox`), as in version 0.
#[serde(into = "DecisionFields", try_from = "DecisionFields")]
pub struct ApprovalDecision {
    pub id: String,
    /// What took effect: a request whose answer did not fit it (an
    /// escalation approved only once) is `Denied` here.
    pub decision: ReviewDecision,
    /// Who decided: an origin (`tui`, `discord:<channel>`...), or
    /// `timeout` / `interrupt` when nobody did.
    pub by: String,
}

/// [`ApprovalDecision`]'s wire form.
#[derive(Clone, Serialize, Deserialize)]
struct DecisionFields {
    id: String,
    decision: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    scope: Option<String>,
    by: String,
}

impl From<ApprovalDecision> for DecisionFields {
    fn from(d: ApprovalDecision) -> Self {
        let scope = match d.decision {
            ReviewDecision::Denied => None,
            ReviewDecision::ApprovedOnce => Some("once"),
            ReviewDecision::ApprovedForSession => Some("session"),
            ReviewDecision::ApprovedAlways => Some("always"),
            ReviewDecision::ApprovedOutsideSandbox => Some("outside_sandbox"),
        };
        DecisionFields {
            id: d.id,
            decision: if scope.is_some() {
                "approved"
            } else {
                "denied"
            }
            .into(),
            scope: scope.map(str::to_string),
            by: d.by,
        }
    }
}

impl TryFrom<DecisionFields> for ApprovalDecision {
    type Error = String;
    fn try_from(f: DecisionFields) -> Result<Self, String> {
        let decision = match (f.decision.as_str(), f.scope.as_deref()) {
            ("denied", _) => ReviewDecision::Denied,
            ("approved", None | Some("once")) => ReviewDecision::ApprovedOnce,
            ("approved", Some("session")) => ReviewDecision::ApprovedForSession,
            ("approved", Some("always")) => ReviewDecision::ApprovedAlways,
            ("approved", Some("outside_sandbox")) => ReviewDecision::ApprovedOutsideSandbox,
            (decision, scope) => {
                return Err(format!(
                    "unknown approval decision `{decision}` (scope {scope:?})"
                ));
            }
        };
        Ok(ApprovalDecision {
            id: f.id,
            decision,
            by: f.by,
        })
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ToolResultEvent {
    pub id: String,
    pub name: String,
    pub success: bool,
    pub output: String,
    pub duration_ms: u64,
    /// For `write_file`/`edit_file`: what the call changed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub diff: Option<FileDiff>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Escalation {
    /// `provider/model` on the wire.
    pub from: RoutedModel,
    pub to: RoutedModel,
    pub reason: String,
    pub trigger: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MemoryHits {
    pub query: String,
    pub hits: Vec<MemoryHit>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TokenUsage {
    pub provider: String,
    pub model: String,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cached_tokens: u64,
    pub cost_usd: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokens_per_sec: Option<f64>,
    /// Prompt processing plus generation, in milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_ms: Option<u64>,
    /// The local endpoint that served the request (several under one role).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub endpoint: Option<String>,
    /// After a turn's model reply: the prompt the session's next request
    /// carries (this one's input and the reply as kept, reasoning left
    /// out) and the local window it goes into; what a context meter shows.
    /// Absent on requests that do not move the conversation (compaction).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<ContextUse>,
}

/// How a tool call ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolOutcome {
    Ok,
    Failed,
    /// Not run: refused by the user, a rule or a timeout.
    Denied,
}

impl ToolOutcome {
    /// The outcome of an older record, which kept only the text the model
    /// was told: a refusal's text says so, anything else is unknown.
    pub fn guessed(content: &str) -> Option<Self> {
        (content.starts_with(super::DENIED_BY_USER) || content.starts_with("denied:"))
            .then_some(ToolOutcome::Denied)
    }
}

/// Tokens of a prompt, and of the window it goes into.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ContextUse {
    pub used: u64,
    pub length: u64,
}

/// Older turns were left out of the request so that it fits the window.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ContextTrimmed {
    pub dropped_messages: usize,
    pub prompt_tokens: u64,
    pub context_length: u64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Notice {
    pub message: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FinalAnswer {
    pub text: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ErrorEvent {
    pub message: String,
}

/// The model refused the request: what the turn's answer was.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Refused {
    /// Who refused (`anthropic`, `openai`, `llamacpp`).
    pub provider: String,
    /// The provider's own word for it (`refusal`, `content_filter`).
    pub reason: String,
}

/// The turn is over (after `final`, `error` or an interrupt); the session is idle.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TurnEnded {
    pub interrupted: bool,
}

/// A running tool call's progress, shown under the call (a delegated
/// agent's text and tool uses); never sent to the model.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ToolProgress {
    pub id: String,
    pub text: String,
}

/// The session was copied into `new_session` (`/fork`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Forked {
    pub new_session: String,
}

/// The session went back to before its user message `turn`: the
/// messages from there on are out of the live session (the transcript
/// keeps them, marked), and the files are as they were then.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Rewound {
    pub turn: usize,
    /// The user message gone back before (to edit and send again).
    pub text: String,
    pub dropped_messages: usize,
    /// Files put back, and files created since that were removed.
    pub restored: Vec<String>,
    pub removed: Vec<String>,
    /// Files left as they are, each with why.
    pub not_restored: Vec<String>,
    /// Set when commands ran since: their changes are not undone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub untracked: Option<String>,
    /// Set when no file could be put back because none was kept
    /// (checkpoints off, or `max_total_mb = 0`): says so, and how many
    /// file changes since stay.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_kept: Option<String>,
}

/// Older turns were replaced by a summary (the transcript keeps them).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Compacted {
    pub before_tokens: u64,
    pub after_tokens: u64,
    pub summarized_messages: usize,
    /// Who wrote the summary: "local" or the remote provider's model.
    pub model: String,
    /// The summary the model now sees in place of those messages.
    pub summary: String,
}

/// The session runs on `model` from its next turn (`auto`: the router
/// decides again).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ModelPinned {
    /// `auto`, `local`, `local.fast` or `PROVIDER:MODEL`.
    pub model: String,
    /// What the status line shows ("local.fast · qwen3-0.6b").
    pub label: String,
}

/// A file tool's request to the session's editor: the path was checked
/// against the roots and the protected paths before it went out.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FileRequest {
    pub id: String,
    /// Absolute.
    pub path: String,
    /// Write this text; absent: read the file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<String>,
}

/// One model a session may be pinned to.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ModelChoice {
    /// What `pin_model` takes.
    pub id: String,
    /// The role or provider and its model, as a picker shows it.
    pub label: String,
    /// What the endpoints serve (`/v1/models` or `/props`), or why they
    /// did not say; empty for a remote model.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub detail: String,
}

/// The models a session may be pinned to, and its pin (`auto` when none).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Models {
    pub choices: Vec<ModelChoice>,
    pub pinned: String,
}
