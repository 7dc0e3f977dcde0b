//! Exec approval: policy, allow rules, parked requests.
//!
//! An allow rule is an argv prefix: `git status` allows `git status -s` but
//! not `git statusx` nor `git`. Rules are compared with the command's
//! shell-word split, never as raw string prefixes, and a command with any
//! shell syntax that could run something besides that argv (chaining, pipes,
//! redirects, subshells, substitutions, backgrounding) is never covered by a
//! rule: it is asked about every time (`ask`) or denied (`allowlist`).
//!
//! A rule never widens past options that make a program run or write
//! something else (`find -exec`, `git -c`, `sed -i`, wrappers such as
//! `sudo` or `env`, interpreters with `-c`/`-e`; the list is in
//! [`narrow`]): a command with one is remembered as its exact argv, and a
//! prefix rule covers it only when the rule is exactly its argv.
//!
//! Rules come from three places: `[tools.exec] allow` in the config, the
//! approvals file (`.egirl/approvals.toml`, written by "approve always"), and
//! per-session approvals kept in memory.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use tokio::sync::oneshot;

use crate::bus::EventBus;
use crate::config::{ExecApproval, ExecConfig};
use crate::protocol::{
    ApprovalDecision, ApprovalRequest, EventKind, Notice, Origin, ReviewDecision, SessionId,
};
use crate::tools::ToolContext;

mod delegation;
mod expansion;
mod hosts;
mod mcp;
mod narrow;

/// What the model is told when the user says no (defined in the protocol,
/// where surfaces read it).
pub use crate::protocol::DENIED_BY_USER;
pub use delegation::CLAUDE_CODE_PERMISSION;

type Answer = (ReviewDecision, Origin);

/// Approval requests waiting for a surface to answer, by request id.
#[derive(Clone, Default)]
pub struct PendingApprovals {
    waiting: Arc<Mutex<HashMap<String, oneshot::Sender<Answer>>>>,
}

impl PendingApprovals {
    pub fn new() -> Self {
        Self::default()
    }

    /// Delivers a decision. The first answer wins: later answers for the same
    /// id (another surface, a double key press) return false and do nothing.
    pub fn resolve(&self, id: &str, decision: ReviewDecision, by: Origin) -> bool {
        match lock(&self.waiting).remove(id) {
            Some(tx) => tx.send((decision, by)).is_ok(),
            None => false,
        }
    }

    /// Whether a request is still waiting for an answer.
    pub fn is_pending(&self, id: &str) -> bool {
        lock(&self.waiting).contains_key(id)
    }

    fn park(&self, id: &str) -> oneshot::Receiver<Answer> {
        let (tx, rx) = oneshot::channel();
        lock(&self.waiting).insert(id.to_string(), tx);
        rx
    }

    /// Drops a request nobody answered; true when it was still waiting.
    fn forget(&self, id: &str) -> bool {
        lock(&self.waiting).remove(id).is_some()
    }
}

/// The approvals file: `allow = ["git status", "cargo test"]`.
#[derive(Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
struct RulesFile {
    #[serde(default)]
    allow: Vec<String>,
    /// Hosts `web_fetch` may reach without asking (`p` on a web request).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    hosts: Vec<String>,
    /// MCP tools approved with "always", by full name (`mcp__fs__write_file`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    mcp: Vec<String>,
}

/// Decides whether a command may run; parks `ask` requests until a surface answers.
pub struct Approver {
    bus: EventBus,
    pending: PendingApprovals,
    exec: ExecConfig,
    approvals_file: PathBuf,
    unattended_timeout: Duration,
    /// Rules from the approvals file; the lock also serializes its rewrites.
    saved: Mutex<Vec<String>>,
    session_rules: Mutex<HashMap<SessionId, Vec<String>>>,
    /// Hosts approved for `web_fetch`: from the approvals file, and per session.
    saved_hosts: Mutex<Vec<String>>,
    session_hosts: Mutex<HashMap<SessionId, Vec<String>>>,
    /// MCP tools approved for a session, by full name.
    mcp_session: Mutex<HashMap<SessionId, Vec<String>>>,
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
        let saved = read_rules(&approvals_file).unwrap_or_else(|e| {
            tracing::warn!("ignoring the approvals file: {e}");
            RulesFile::default()
        });
        Self {
            bus,
            pending,
            exec,
            approvals_file,
            unattended_timeout,
            saved: Mutex::new(saved.allow),
            session_rules: Mutex::new(HashMap::new()),
            saved_hosts: Mutex::new(saved.hosts),
            session_hosts: Mutex::new(HashMap::new()),
            mcp_session: Mutex::new(HashMap::new()),
        }
    }

    pub fn pending(&self) -> &PendingApprovals {
        &self.pending
    }

    /// Every rule that applies to `session`, with where it comes from
    /// (`config`, `file`, `session`), for `/approvals`.
    pub fn rules(&self, session: &str) -> Vec<(String, &'static str)> {
        let mut out: Vec<(String, &'static str)> = self
            .exec
            .allow
            .iter()
            .map(|r| (r.clone(), "config"))
            .collect();
        out.extend(lock(&self.saved).iter().map(|r| (r.clone(), "file")));
        if let Some(rules) = lock(&self.session_rules).get(session) {
            out.extend(rules.iter().map(|r| (r.clone(), "session")));
        }
        out
    }

    /// Ok(why it may run) or Err(why not, told to the model as is).
    ///
    /// Under `ask` this waits for a decision, for `ctx.cancel` (denied as
    /// interrupted), or, for unattended origins, for the unattended timeout.
    pub async fn check_exec(&self, command: &str, ctx: &ToolContext) -> Result<String, String> {
        match self.exec.approval {
            ExecApproval::Full => return Ok("policy full".into()),
            ExecApproval::Deny => {
                return Err("exec is disabled here ([tools.exec] approval = \"deny\")".into());
            }
            ExecApproval::Ask | ExecApproval::Allowlist => {}
        }
        if let Some(rule) = self.matching_rule(command, &ctx.session) {
            return Ok(format!("allowed by rule `{rule}`"));
        }
        if self.exec.approval == ExecApproval::Allowlist {
            return Err(if auto_approvable(command).is_some() {
                "denied: no allow rule covers this command ([tools.exec] approval = \"allowlist\")"
                    .into()
            } else {
                "denied: commands with pipes, redirects, chaining, substitutions or expansions ($, braces, a glob that could match an option) are never allow-listed; run a plain command".into()
            });
        }
        let (decision, by) = self.ask(command, ctx, None).await?;
        self.apply(decision, &by, command, ctx)
    }

    /// After a sandboxed command failed in a way that looks like the
    /// sandbox refused it: asks whether to run it once outside the sandbox.
    /// Only an attended origin (the TUI) is asked; only
    /// `ApprovedOutsideSandbox` says yes. Never a rule, never implied by
    /// `approval = "full"` or another approval.
    pub async fn check_escalation(
        &self,
        command: &str,
        reason: &str,
        ctx: &ToolContext,
    ) -> Result<String, String> {
        // No surface listening (an in-process run): nobody could answer.
        if ctx.origin != Origin::Tui || !self.bus.has_subscribers() {
            return Err("nobody at a keyboard can approve running it outside the sandbox".into());
        }
        match self.ask(command, ctx, Some(reason)).await? {
            (ReviewDecision::ApprovedOutsideSandbox, by) => Ok(format!("approved once by {by}")),
            _ => Err(format!("{DENIED_BY_USER} (outside the sandbox)")),
        }
    }

    fn matching_rule(&self, command: &str, session: &str) -> Option<String> {
        let argv = auto_approvable(command)?;
        let covers = |rule: &String| rule_matches(rule, &argv);
        if let Some(rule) = self.exec.allow.iter().find(|r| covers(r)) {
            return Some(rule.clone());
        }
        if let Some(rule) = lock(&self.saved).iter().find(|r| covers(r)) {
            return Some(rule.clone());
        }
        lock(&self.session_rules)
            .get(session)
            .and_then(|rules| rules.iter().find(|r| covers(r)).cloned())
    }

    /// Raises a request (`escalation`: the reason to run it outside the
    /// sandbox) and waits for the answer.
    async fn ask(
        &self,
        command: &str,
        ctx: &ToolContext,
        escalation: Option<&str>,
    ) -> Result<Answer, String> {
        let rule = escalation
            .is_none()
            .then(|| approval_prefix(command))
            .flatten();
        let sandbox = Some(crate::tools::sandbox::describe(&ctx.exec));
        self.ask_as("exec", command, rule, sandbox, escalation, ctx)
            .await
    }

    /// Raises a request for `tool` (`rule`: what `a`/`p` would remember)
    /// and waits for the answer.
    async fn ask_as(
        &self,
        tool: &str,
        command: &str,
        rule: Option<String>,
        sandbox: Option<String>,
        escalation: Option<&str>,
        ctx: &ToolContext,
    ) -> Result<Answer, String> {
        let request = |id: String| {
            EventKind::ApprovalRequest(ApprovalRequest {
                id,
                tool: tool.into(),
                command: command.into(),
                cwd: ctx.workspace.display().to_string(),
                rule,
                sandbox,
                escalation: escalation.map(str::to_string),
            })
        };
        self.ask_with(ctx, request, escalation.is_some()).await
    }

    /// Raises the request `request(id)` builds and waits for the answer
    /// (`escalation`: only `ApprovedOutsideSandbox` approves it).
    async fn ask_with(
        &self,
        ctx: &ToolContext,
        request: impl FnOnce(String) -> EventKind,
        escalation: bool,
    ) -> Result<Answer, String> {
        let id = uuid::Uuid::new_v4().to_string();
        let mut rx = self.pending.park(&id);
        // Cleans up when this future is dropped mid-wait (turn aborted), so a
        // late answer finds nothing and the surfaces close their prompt.
        let mut parked = Parked {
            approver: self,
            id: &id,
            ctx,
            by: "cancelled",
        };
        self.emit(ctx, request(id.clone()));

        let unattended = ctx.origin.approval_times_out();
        let answer = tokio::select! {
            answer = &mut rx => answer.ok(),
            _ = ctx.cancel.cancelled() => {
                parked.by = "interrupt";
                return Err("interrupted".into());
            }
            _ = tokio::time::sleep(self.unattended_timeout), if unattended => {
                // An answer that raced the timer still counts.
                match rx.try_recv() {
                    Ok(answer) => Some(answer),
                    Err(_) => {
                        parked.by = "timeout";
                        let why = if ctx.origin.is_unattended() { " (unattended run)" } else { "" };
                        return Err(format!(
                            "denied: no one approved within {}{why}",
                            human_duration(self.unattended_timeout)
                        ));
                    }
                }
            }
        };
        // Answered: `resolve` already withdrew the request, so `parked` stays
        // quiet and the decision is announced here. (No answer at all means
        // the sender vanished, which only a bug could cause: deny.)
        let Some((decision, by)) = answer else {
            return Err(DENIED_BY_USER.into());
        };
        // An escalation is approved by its own answer only.
        let approved = if escalation {
            decision == ReviewDecision::ApprovedOutsideSandbox
        } else {
            decision.is_approved()
        };
        self.emit(
            ctx,
            EventKind::ApprovalDecision(ApprovalDecision {
                id: id.clone(),
                decision: if approved {
                    decision
                } else {
                    ReviewDecision::Denied
                },
                by: by.to_string(),
            }),
        );
        Ok((decision, by))
    }

    /// Carries out a decision: remembers the prefix for `session` / `always`.
    fn apply(
        &self,
        decision: ReviewDecision,
        by: &Origin,
        command: &str,
        ctx: &ToolContext,
    ) -> Result<String, String> {
        let remembered = match decision {
            ReviewDecision::Denied => return Err(DENIED_BY_USER.into()),
            // Outside the sandbox only answers an escalation; here it is a
            // plain yes, still sandboxed.
            ReviewDecision::ApprovedOnce | ReviewDecision::ApprovedOutsideSandbox => {
                return Ok(format!("approved once by {by}"));
            }
            ReviewDecision::ApprovedForSession | ReviewDecision::ApprovedAlways => {
                approval_prefix(command)
            }
        };
        // Commands with shell syntax can never be covered by a rule.
        let Some(prefix) = remembered else {
            return Ok(format!(
                "approved once by {by} (this command cannot become a rule)"
            ));
        };
        if decision == ReviewDecision::ApprovedAlways {
            match self.save_rule(&prefix) {
                Ok(()) => return Ok(format!("approved by {by}; `{prefix}` allowed from now on")),
                Err(e) => {
                    // The user said yes: keep the rule for the session at least.
                    tracing::warn!("{e}");
                    self.emit(ctx, EventKind::Notice(Notice { message: e }));
                }
            }
        }
        lock(&self.session_rules)
            .entry(ctx.session.clone())
            .or_default()
            .push(prefix.clone());
        Ok(format!(
            "approved by {by}; `{prefix}` allowed for this session"
        ))
    }

    /// Adds a rule to the approvals file, merging with what is on disk now
    /// (another egirl process may have written it since we read it).
    fn save_rule(&self, rule: &str) -> Result<(), String> {
        let mut saved = lock(&self.saved);
        let mut file = read_rules(&self.approvals_file)?;
        if !file.allow.iter().any(|r| r == rule) {
            file.allow.push(rule.to_string());
        }
        self.write_rules(&file)?;
        *saved = file.allow;
        Ok(())
    }

    /// Writes the approvals file whole (the caller holds the lock of what
    /// it changes and read the file just before).
    fn write_rules(&self, file: &RulesFile) -> Result<(), String> {
        let body =
            toml::to_string(file).map_err(|e| format!("could not save the approval: {e}"))?;
        let text = format!(
            "# Approved with \"always\": command prefixes (allow, matched against the parsed argv) and web_fetch hosts.\n{body}"
        );
        if let Some(dir) = self.approvals_file.parent() {
            std::fs::create_dir_all(dir).map_err(|e| {
                format!(
                    "could not save the approval: cannot create {}: {e}",
                    dir.display()
                )
            })?;
        }
        crate::tools::builtin::write_file::write_atomic(&self.approvals_file, text.as_bytes())
            .map_err(|e| {
                format!(
                    "could not save the approval to {}: {e}",
                    self.approvals_file.display()
                )
            })?;
        Ok(())
    }

    fn emit(&self, ctx: &ToolContext, kind: EventKind) {
        self.bus.emit(&ctx.session, &ctx.origin, kind);
    }
}

/// A parked request; on drop it is withdrawn and, when it was still waiting,
/// a denial `by` the reason is announced so surfaces close their prompt.
struct Parked<'a> {
    approver: &'a Approver,
    id: &'a str,
    ctx: &'a ToolContext,
    by: &'static str,
}

impl Drop for Parked<'_> {
    fn drop(&mut self) {
        if self.approver.pending.forget(self.id) {
            self.approver.emit(
                self.ctx,
                EventKind::ApprovalDecision(ApprovalDecision {
                    id: self.id.to_string(),
                    decision: ReviewDecision::Denied,
                    by: self.by.into(),
                }),
            );
        }
    }
}

/// Reads the rules of an approvals file; a missing file has none.
pub fn read_rules_file(path: &Path) -> Result<Vec<String>, String> {
    read_rules(path).map(|file| file.allow)
}

/// The whole approvals file (command rules and hosts); missing: empty.
fn read_rules(path: &Path) -> Result<RulesFile, String> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(RulesFile::default()),
        Err(e) => return Err(format!("cannot read {}: {e}", path.display())),
    };
    toml::from_str(&text).map_err(|e| format!("{} is not valid: {e}", path.display()))
}

/// Characters that let a command do more than run its argv: chaining (`;`,
/// `&&`, `||`), pipes, redirects, backgrounding, subshells and grouping,
/// command and parameter substitution, and newlines. Checked anywhere in the
/// text, even inside quotes, because being wrong about quoting is worse than
/// an extra question.
const SHELL_SYNTAX: &[&str] = &[
    ";", "&", "|", ">", "<", "(", ")", "`", "$(", "${", "\n", "\r",
];

/// The argv of a command a rule may cover, or None when the command must be
/// asked about (shell syntax, unbalanced quotes, empty).
pub fn auto_approvable(command: &str) -> Option<Vec<String>> {
    if SHELL_SYNTAX.iter().any(|s| command.contains(s)) || expansion::expands(command) {
        return None;
    }
    let argv = shell_words::split(command).ok()?;
    (!argv.is_empty()).then_some(argv)
}

/// Whether `rule` (shell words) covers `argv`: it is exactly `argv`, or an
/// argv prefix of a command with no option that runs or writes something
/// else ([`narrow::widens`]).
pub fn rule_matches(rule: &str, argv: &[String]) -> bool {
    match shell_words::split(rule) {
        Ok(words) => {
            !words.is_empty()
                && argv.starts_with(&words)
                && (words.len() == argv.len() || !narrow::widens(argv))
        }
        Err(_) => false,
    }
}

/// The rule recorded when the user approves a command for the session or
/// always: the program, any options right after it, and the first plain
/// word (`git status -s` → `git status`, `cargo test --lib` → `cargo test`,
/// `ls` → `ls`, `rm -rf build` → `rm -rf build`). Stopping at the first
/// plain word keeps subcommands together without widening `rm -rf build`
/// into `rm`. A command that runs or writes something else
/// ([`narrow::widens`]: `find . -exec ...`, `sudo ...`) is remembered as
/// its exact argv. None when the command cannot be covered by a rule at all.
pub fn approval_prefix(command: &str) -> Option<String> {
    let argv = auto_approvable(command)?;
    if narrow::widens(&argv) {
        return Some(shell_words::join(&argv));
    }
    let end = argv
        .iter()
        .skip(1)
        .position(|word| !word.starts_with('-'))
        .map_or(argv.len(), |i| i + 2);
    Some(shell_words::join(&argv[..end]))
}

fn human_duration(d: Duration) -> String {
    let secs = d.as_secs();
    match secs {
        0 => format!("{}ms", d.as_millis()),
        s if s % 3600 == 0 => format!("{}h", s / 3600),
        s if s % 60 == 0 => format!("{}m", s / 60),
        s => format!("{s}s"),
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
