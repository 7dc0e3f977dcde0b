//! Asking: raise a request, park it until a surface answers (or the turn is
//! interrupted, or an unattended request times out), and turn the answer
//! into an outcome, remembering the grant as the user chose.

use super::pending::Answer;
use super::{Approver, Grant, Granted, Kept, Refusal};
use crate::protocol::{ApprovalDecision, ApprovalRequest, Notice};
use crate::protocol::{EventKind, ReviewDecision};
use crate::tools::ToolContext;

impl Approver {
    /// Raises a request for `tool` (`rule`: what `a`/`p` would remember;
    /// `escalation`: the reason to run it outside the sandbox) and waits for
    /// the answer.
    pub(super) async fn ask_as(
        &self,
        tool: &str,
        command: &str,
        rule: Option<String>,
        sandbox: Option<String>,
        escalation: Option<&str>,
        ctx: &ToolContext,
    ) -> Result<Answer, Refusal> {
        let rule_covers = rule
            .as_ref()
            .filter(|_| tool == "exec")
            .and_then(|_| super::rule_preview(command));
        let request = |id: String| {
            EventKind::ApprovalRequest(ApprovalRequest {
                id,
                tool: tool.into(),
                command: command.into(),
                cwd: ctx.work_dir().display().to_string(),
                rule,
                rule_covers: rule_covers.map(Into::into),
                sandbox: sandbox.map(Into::into),
                escalation: escalation.map(Into::into),
            })
        };
        self.ask_with(ctx, request, escalation.is_some()).await
    }

    /// Raises the request `request(id)` builds and waits for the answer
    /// (`escalation`: only `ApprovedOutsideSandbox` approves it).
    pub(super) async fn ask_with(
        &self,
        ctx: &ToolContext,
        request: impl FnOnce(String) -> EventKind,
        escalation: bool,
    ) -> Result<Answer, Refusal> {
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
        // However the wait ends, it is not the call's run time.
        let _waiting = Waiting {
            since: std::time::Instant::now(),
            ctx,
        };

        let unattended = ctx.origin.approval_times_out();
        let answer = tokio::select! {
            answer = &mut rx => answer.ok(),
            _ = ctx.cancel.cancelled() => {
                parked.by = "interrupt";
                return Err(Refusal::Interrupted);
            }
            _ = tokio::time::sleep(self.unattended_timeout), if unattended => {
                // An answer that raced the timer still counts.
                match rx.try_recv() {
                    Ok(answer) => Some(answer),
                    Err(_) => {
                        parked.by = "timeout";
                        return Err(Refusal::TimedOut {
                            after: self.unattended_timeout,
                            unattended_run: ctx.origin.is_unattended(),
                        });
                    }
                }
            }
        };
        // Answered: `resolve` already withdrew the request, so `parked` stays
        // quiet and the decision is announced here. (No answer at all means
        // the sender vanished, which only a bug could cause: deny.)
        let Some((decision, by)) = answer else {
            return Err(Refusal::DeniedByUser);
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

    /// Carries out an answer: `grant` (None: this request can never become
    /// one) is remembered for the session or always, as the user chose.
    pub(super) fn settle(
        &self,
        (decision, by): Answer,
        grant: Option<Grant>,
        ctx: &ToolContext,
    ) -> Result<Granted, Refusal> {
        let always = match decision {
            ReviewDecision::Denied => return Err(Refusal::DeniedByUser),
            // Outside the sandbox only answers an escalation; here it is a
            // plain yes.
            ReviewDecision::ApprovedOnce | ReviewDecision::ApprovedOutsideSandbox => {
                let kept = Kept::Nothing;
                return Ok(Granted::Approved { by, kept });
            }
            ReviewDecision::ApprovedForSession => false,
            ReviewDecision::ApprovedAlways => true,
        };
        let kept = match grant {
            Some(grant) => self.remember(grant, always, ctx),
            None => Kept::NotARule,
        };
        Ok(Granted::Approved { by, kept })
    }

    /// The one remember-and-save path: "always" writes the approvals file;
    /// when that fails the user still said yes, so the session keeps it.
    fn remember(&self, grant: Grant, always: bool, ctx: &ToolContext) -> Kept {
        if always {
            match self.store.save(&grant) {
                Ok(()) => return Kept::Always(grant),
                Err(e) => {
                    tracing::warn!("{e}");
                    self.emit(ctx, EventKind::Notice(Notice { message: e }));
                }
            }
        }
        self.store.remember_for_session(&ctx.session, grant.clone());
        Kept::Session(grant)
    }
}

/// Adds the time a request waited to its call's `approval_wait_ms` on drop.
struct Waiting<'a> {
    since: std::time::Instant,
    ctx: &'a ToolContext,
}

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        let ms = self.since.elapsed().as_millis() as u64;
        self.ctx
            .approval_wait_ms
            .fetch_add(ms, std::sync::atomic::Ordering::Relaxed);
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
