//! Approvals for `delegate_claude_code`: starting a delegation is asked
//! like exec (the same policy, the same modal, no rule), and each of
//! Claude Code's own permission requests is asked as tool
//! [`CLAUDE_CODE_PERMISSION`] (headless never approves those: see
//! `channels::headless`).

use super::{Approver, DENIED_BY_USER};
use crate::config::ExecApproval;
use crate::tools::ToolContext;

pub use crate::protocol::CLAUDE_CODE_PERMISSION;

impl Approver {
    /// Ok(why the delegation may start) or Err(why not, for the model).
    pub async fn check_delegation(
        &self,
        task: &str,
        dir: &std::path::Path,
        ctx: &ToolContext,
    ) -> Result<String, String> {
        match self.exec.approval {
            ExecApproval::Full => return Ok("policy full".into()),
            ExecApproval::Deny | ExecApproval::Allowlist => {
                return Err(format!(
                    "delegation is not allowed here ([tools.exec] approval = \"{}\"; it is asked under \"ask\")",
                    format!("{:?}", self.exec.approval).to_lowercase()
                ));
            }
            ExecApproval::Ask => {}
        }
        let mut in_dir = ctx.clone();
        in_dir.workspace = dir.to_path_buf();
        let (decision, by) = self
            .ask_as("delegate_claude_code", task, None, None, None, &in_dir)
            .await?;
        if decision.is_approved() {
            Ok(format!("approved by {by}"))
        } else {
            Err(DENIED_BY_USER.into())
        }
    }

    /// One of Claude Code's permission requests (`what`: its tool and
    /// input), asked in the modal: true when approved.
    pub async fn ask_claude_permission(
        &self,
        what: &str,
        ctx: &ToolContext,
    ) -> Result<bool, String> {
        let (decision, _) = self
            .ask_as(CLAUDE_CODE_PERMISSION, what, None, None, None, ctx)
            .await?;
        Ok(decision.is_approved())
    }
}
