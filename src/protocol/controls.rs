//! The payloads of the daily driver's controls (hooks, `/approvals`): a
//! hook's run, and the approval rules `/approvals` lists and revokes. Kept
//! apart from `events.rs` so each file stays one screenful of kinds.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// One run of a `[[hooks]]` command.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HookRun {
    /// What it ran for: `session_start`, `user_message`, `pre_tool`,
    /// `post_tool`, `approval_request`, `turn_end` or `compaction`.
    pub event: String,
    /// Its command line as configured.
    pub command: String,
    /// The tool call it ran for (`pre_tool`, `post_tool`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call_id: Option<String>,
    pub outcome: HookOutcome,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    /// What it wrote on stderr, or why it did not run.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub message: String,
    pub duration_ms: u64,
}

/// How a hook run ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HookOutcome {
    /// It exited 0.
    Ok,
    /// A `pre_tool` hook exited 2: the call was not run.
    Blocked,
    /// Another exit, a signal, or it could not start.
    Failed,
    /// It ran past its timeout and was killed.
    TimedOut,
}

/// The answer to `list_approvals`: the rules in force for the session,
/// grouped by kind (exec prefixes, exact commands, hosts, MCP tools,
/// delegation), each group in the order the checks read them.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ApprovalRules {
    pub rules: Vec<ApprovalRule>,
}

/// One rule in force.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ApprovalRule {
    /// Stable: a short hash of kind, rule and scope (`revoke_approval`,
    /// `egirl approvals revoke ID`).
    pub id: String,
    pub kind: ApprovalRuleKind,
    /// The argv prefix, exact command, host, MCP tool's full name
    /// (`mcp__fs__write_file`) or Claude Code tool.
    pub rule: String,
    pub scope: ApprovalScope,
    /// Where it is written: the approvals file, the config key, or the
    /// session (in memory).
    pub source: String,
    /// When it was added (RFC 3339); absent for config rules and for those
    /// saved before dates were kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub added: Option<String>,
}

/// What a rule lets through.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ApprovalRuleKind {
    /// An `exec` argv prefix: longer commands it may widen to run too.
    ExecPrefix,
    /// One `exec` command, exactly.
    ExecArgv,
    /// A host `web_fetch` may reach.
    Host,
    /// One MCP tool of one server.
    Mcp,
    /// A Claude Code tool a delegation may use without asking.
    Delegation,
}

impl ApprovalRuleKind {
    /// The group's heading in `/approvals` and `egirl approvals list`.
    pub fn heading(self) -> &'static str {
        match self {
            ApprovalRuleKind::ExecPrefix => "exec prefixes",
            ApprovalRuleKind::ExecArgv => "exact commands",
            ApprovalRuleKind::Host => "hosts (web_fetch)",
            ApprovalRuleKind::Mcp => "MCP tools",
            ApprovalRuleKind::Delegation => "delegation (Claude Code)",
        }
    }
}

/// How long a rule lasts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ApprovalScope {
    /// This session, in the memory of the process that runs it.
    Session,
    /// The approvals file ("always").
    Permanent,
    /// The config (`egirl.toml`): edited there, never revoked from here.
    Config,
}

impl ApprovalScope {
    pub fn name(self) -> &'static str {
        match self {
            ApprovalScope::Session => "session",
            ApprovalScope::Permanent => "permanent",
            ApprovalScope::Config => "config",
        }
    }
}

/// A revoked rule (`revoke_approval`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ApprovalRevoked {
    pub id: String,
    pub rule: String,
}

/// One MCP server a session's client brings (`Command::SessionMcp`): a
/// program over stdio (`command`, `args`, `env`) or an HTTP endpoint
/// (`url`, `headers`). Values are taken as given (no `${NAME}` expansion:
/// egirl's own secrets never reach it), and never shown (`Debug` names
/// the variables and headers only).
#[derive(Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SessionMcpServer {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub args: Vec<String>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub headers: BTreeMap<String, String>,
    /// Where a stdio server starts (the session's project).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
}

impl std::fmt::Debug for SessionMcpServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SessionMcpServer")
            .field("name", &self.name)
            .field("command", &self.command)
            .field("args", &self.args.len())
            .field("env", &self.env.keys().collect::<Vec<_>>())
            .field("url", &self.url.as_ref().map(|_| "…"))
            .field("headers", &self.headers.keys().collect::<Vec<_>>())
            .finish()
    }
}
