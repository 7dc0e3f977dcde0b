//! Approvals for `delegate_claude_code` and `delegate`: starting a
//! delegation is asked like exec (the same policy, the same modal, no
//! rule), and each of the delegate's own permission requests is asked as
//! tool [`CLAUDE_CODE_PERMISSION`] or [`DELEGATE_PERMISSION`] (headless
//! never approves those: see `surfaces::headless`).

use super::{Approver, Granted, Kept, Refusal};
use crate::config::ExecApproval;
use crate::tools::ToolContext;

pub use crate::protocol::{CLAUDE_CODE_PERMISSION, DELEGATE_PERMISSION};

impl Approver {
    /// Whether the delegation may start.
    pub async fn check_delegation(
        &self,
        task: &str,
        dir: &std::path::Path,
        ctx: &ToolContext,
    ) -> Result<Granted, Refusal> {
        self.check_delegation_as("delegate_claude_code", task, dir, ctx)
            .await
    }

    /// Whether a delegation by tool `tool` (`delegate_claude_code`, or
    /// `delegate` with the agent's name in `task`) may start.
    pub async fn check_delegation_as(
        &self,
        tool: &str,
        task: &str,
        dir: &std::path::Path,
        ctx: &ToolContext,
    ) -> Result<Granted, Refusal> {
        match self.exec.approval {
            ExecApproval::Full => return Ok(Granted::Policy("policy full".into())),
            ExecApproval::Deny | ExecApproval::Allowlist => {
                return Err(Refusal::Policy(format!(
                    "delegation is not allowed here ([tools.exec] approval = \"{}\"; it is asked under \"ask\")",
                    format!("{:?}", self.exec.approval).to_lowercase()
                )));
            }
            ExecApproval::Ask => {}
        }
        let mut in_dir = ctx.clone();
        in_dir.workspace = dir.to_path_buf();
        let (decision, by) = self.ask_as(tool, task, None, None, None, &in_dir).await?;
        // Nothing to remember: each delegation is asked about.
        if decision.is_approved() {
            Ok(Granted::Approved {
                by,
                kept: Kept::Nothing,
            })
        } else {
            Err(Refusal::DeniedByUser)
        }
    }

    /// One of Claude Code's permission requests (`what`: its tool and
    /// input), asked in the modal: true when approved.
    pub async fn ask_claude_permission(
        &self,
        what: &str,
        ctx: &ToolContext,
    ) -> Result<bool, Refusal> {
        let (decision, _) = self
            .ask_as(CLAUDE_CODE_PERMISSION, what, None, None, None, ctx)
            .await?;
        Ok(decision.is_approved())
    }

    /// One of an ACP agent's permission requests (`what`: the agent, its
    /// tool call's title and input), asked in the modal: true when approved.
    pub async fn ask_delegate_permission(
        &self,
        what: &str,
        ctx: &ToolContext,
    ) -> Result<bool, Refusal> {
        let (decision, _) = self
            .ask_as(DELEGATE_PERMISSION, what, None, None, None, ctx)
            .await?;
        Ok(decision.is_approved())
    }
}
