//! Approval of `exec` commands: the `[tools.exec] approval` policy, the
//! allow rules (config, approvals file, session), and asking to run a
//! command outside the sandbox after the sandbox refused it.

use super::pending::Answer;
use super::store::GrantKind;
use super::{
    Approver, Grant, Granted, Kept, Refusal, RuleOrigin, Source, approval_prefix, auto_approvable,
    rule_covers,
};
use crate::config::ExecApproval;
use crate::protocol::{Origin, ReviewDecision};
use crate::tools::ToolContext;

impl Approver {
    /// Every rule that applies to `session`, with where it comes from
    /// (`config`, `file`, `session`), for `/approvals`.
    pub fn rules(&self, session: &str) -> Vec<(String, &'static str)> {
        let config = self.exec.allow.iter().map(|r| (r.clone(), Source::Config));
        config
            .chain(self.store.list(GrantKind::ExecRule, session))
            .map(|(rule, source)| (rule, source.name()))
            .collect()
    }

    /// Whether `command` may run. Under `ask` this waits for a decision,
    /// for `ctx.cancel` (interrupted), or, for unattended origins, for the
    /// unattended timeout.
    pub async fn check_exec(&self, command: &str, ctx: &ToolContext) -> Result<Granted, Refusal> {
        match self.exec.approval {
            ExecApproval::Full => return Ok(Granted::Policy("policy full".into())),
            ExecApproval::Deny => {
                return Err(Refusal::Policy(
                    "exec is disabled here ([tools.exec] approval = \"deny\")".into(),
                ));
            }
            ExecApproval::Ask | ExecApproval::Allowlist => {}
        }
        if let Some((rule, source)) = self.matching_rule(command, &ctx.session) {
            let grant = Grant::ExecRule(rule);
            return Ok(Granted::Covered { grant, source });
        }
        if self.exec.approval == ExecApproval::Allowlist {
            return Err(Refusal::Policy(if auto_approvable(command).is_some() {
                "denied: no allow rule covers this command ([tools.exec] approval = \"allowlist\")"
                    .into()
            } else {
                "denied: commands with pipes, redirects, chaining, substitutions or expansions ($, braces, a glob that could match an option) are never allow-listed; run a plain command".into()
            }));
        }
        let answer = self.ask_exec(command, ctx, None).await?;
        self.settle(answer, approval_prefix(command).map(Grant::ExecRule), ctx)
    }

    /// After a sandboxed command failed in a way that looks like the
    /// sandbox refused it: asks whether to run it once outside the sandbox.
    /// Only an attended origin (the TUI, the web page, an editor) is asked; only
    /// `ApprovedOutsideSandbox` says yes. Never a rule, never implied by
    /// `approval = "full"` or another approval.
    pub async fn check_escalation(
        &self,
        command: &str,
        reason: &str,
        ctx: &ToolContext,
    ) -> Result<Granted, Refusal> {
        // No surface listening (an in-process run): nobody could answer.
        if !matches!(ctx.origin, Origin::Tui | Origin::Web | Origin::Acp)
            || !self.bus.has_subscribers()
        {
            return Err(Refusal::Policy(
                "nobody at a keyboard can approve running it outside the sandbox".into(),
            ));
        }
        match self.ask_exec(command, ctx, Some(reason)).await? {
            (ReviewDecision::ApprovedOutsideSandbox, by) => Ok(Granted::Approved {
                by,
                kept: Kept::Nothing,
            }),
            _ => Err(Refusal::KeptInSandbox),
        }
    }

    /// The first rule that covers `command`: the config's, the file's, then
    /// the session's. A config prefix widens further than a remembered one
    /// ([`rule_covers`]).
    fn matching_rule(&self, command: &str, session: &str) -> Option<(String, Source)> {
        let config = |rule: &&String| rule_covers(rule, command, RuleOrigin::Config);
        if let Some(rule) = self.exec.allow.iter().find(config) {
            return Some((rule.clone(), Source::Config));
        }
        let saved = |rule: &str| rule_covers(rule, command, RuleOrigin::Saved);
        self.store.find(GrantKind::ExecRule, session, saved)
    }

    /// Raises an exec request (`escalation`: the reason to run it outside
    /// the sandbox) and waits for the answer.
    async fn ask_exec(
        &self,
        command: &str,
        ctx: &ToolContext,
        escalation: Option<&str>,
    ) -> Result<Answer, Refusal> {
        let rule = escalation
            .is_none()
            .then(|| approval_prefix(command))
            .flatten();
        let sandbox = Some(crate::tools::sandbox::describe(&ctx.exec));
        self.ask_as("exec", command, rule, sandbox, escalation, ctx)
            .await
    }
}
