//! Approvals: whether a tool call may go ahead, asking the user when the
//! policy says so, and remembering what they approved.
//!
//! An exec allow rule is an argv prefix: `git status` allows `git status -s`
//! but not `git statusx` nor `git`. Rules are compared with the command's
//! shell-word split, never as raw string prefixes, and a command with any
//! shell syntax that could run something besides that argv (chaining, pipes,
//! redirects, subshells, substitutions, backgrounding) is never covered by a
//! rule: it is asked about every time (`ask`) or denied (`allowlist`).
//!
//! A remembered rule widens only to commands the table of read-only
//! programs accepts ([`safe_commands`], option grammars parsed as each
//! program parses them): approving anything else remembers its exact argv.
//! A config prefix is the user's own and widens to what the table does not
//! know, but never past the table's grammar for a program it knows
//! ([`rules`]).
//!
//! What is remembered is a [`Grant`] (an exec rule, a `web_fetch` host, an
//! MCP tool), for the session (in memory) or always (the approvals file,
//! `.egirl/approvals.toml`), through one path ([`store`]). Exec rules also
//! come from `[tools.exec] allow` in the config. A check answers
//! [`Granted`] or [`Refusal`] ([`outcome`]).
//!
//! - [`exec`]: the exec policy and rules, and running outside the sandbox;
//! - [`hosts`]: `web_fetch` hosts; [`mcp`]: MCP tools that change things;
//! - [`delegation`]: `delegate_claude_code` and Claude Code's permissions;
//! - [`ask`]: raising a request, waiting for it, remembering the answer;
//! - [`listing`]: the rules in force (`/approvals`), revoking one;
//! - [`file`]: the approvals file, edited in place under its lock;
//! - [`pending`]: requests parked until a surface answers.

use std::path::PathBuf;
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use crate::bus::EventBus;
use crate::config::ExecConfig;
use crate::protocol::EventKind;
use crate::tools::ToolContext;

mod ask;
mod delegation;
mod exec;
mod expansion;
mod file;
mod hosts;
mod listing;
mod mcp;
mod outcome;
mod pending;
mod rules;
mod safe_commands;
mod store;

/// What the model is told when the user says no (defined in the protocol,
/// where surfaces read it).
pub use crate::protocol::DENIED_BY_USER;
pub use delegation::CLAUDE_CODE_PERMISSION;
pub use listing::{APPROVALS_FILE, permanent_rules, revoke_permanent};
pub use outcome::{Granted, Kept, Refusal};
pub use pending::PendingApprovals;
pub use rules::{RuleOrigin, approval_prefix, auto_approvable, rule_covers, rule_preview};
pub use safe_commands::{Verdict, judge};
pub use store::{Grant, Source, read_rules_file};

/// Decides whether a tool call may go ahead; parks requests that ask until
/// a surface answers.
pub struct Approver {
    bus: EventBus,
    pending: PendingApprovals,
    exec: ExecConfig,
    unattended_timeout: Duration,
    store: store::Store,
}

impl Approver {
    /// Reads the approvals file (a missing file is no rules; an unreadable
    /// one is logged and ignored, which only means more questions).
    pub fn new(
        bus: EventBus,
        pending: PendingApprovals,
        exec: ExecConfig,
        approvals_file: PathBuf,
        unattended_timeout: Duration,
    ) -> Self {
        Self {
            bus,
            pending,
            exec,
            unattended_timeout,
            store: store::Store::load(approvals_file),
        }
    }

    pub fn pending(&self) -> &PendingApprovals {
        &self.pending
    }

    fn emit(&self, ctx: &ToolContext, kind: EventKind) {
        self.bus.emit(&ctx.session, &ctx.origin, kind);
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // The maps stay consistent even if a holder panicked.
    m.lock().unwrap_or_else(|e| e.into_inner())
}

#[cfg(test)]
mod test_context;
#[cfg(test)]
pub(crate) use test_context::test_context;

#[cfg(test)]
mod tests;
