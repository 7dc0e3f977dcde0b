//! Approval of MCP tools that are not read-only: rules are per server and
//! tool (the full name `mcp__<server>__<tool>`, never a prefix or a
//! pattern), for the session or always (the `mcp` list of the approvals
//! file). The request shows the server, the tool and the arguments as
//! pretty JSON in the same modal as exec. Unattended turns are denied at
//! once: nobody could answer, and nothing they carry may widen what runs.

use serde_json::Value;

use super::{Approver, DENIED_BY_USER, lock, read_file};
use crate::mcp::McpTool;
use crate::protocol::{EventKind, ReviewDecision};
use crate::tools::ToolContext;

impl Approver {
    /// Ok(why it may run) or Err(why not, for the model).
    pub async fn check_mcp(
        &self,
        tool: &McpTool,
        args: &Value,
        ctx: &ToolContext,
    ) -> Result<String, String> {
        let rule = tool.full_name.as_str();
        if let Some(source) = self.mcp_rule(rule, &ctx.session) {
            return Ok(format!("allowed by {source} rule `{rule}`"));
        }
        if ctx.origin.is_unattended() {
            return Err(format!(
                "denied: `{rule}` changes things and needs approval, and nobody answers approvals in an unattended ({}) turn",
                ctx.origin
            ));
        }
        let command = serde_json::to_string_pretty(args).unwrap_or_else(|_| args.to_string());
        let request = |id: String| EventKind::ApprovalRequest {
            id,
            tool: rule.to_string(),
            command,
            cwd: format!("MCP server `{}`, tool `{}`", tool.server, tool.name),
            rule: Some(rule.to_string()),
            sandbox: None,
            escalation: None,
        };
        let (decision, by) = self.ask_with(ctx, request, false).await?;
        match decision {
            ReviewDecision::Denied => Err(DENIED_BY_USER.into()),
            ReviewDecision::ApprovedOnce | ReviewDecision::ApprovedOutsideSandbox => {
                Ok(format!("approved once by {by}"))
            }
            ReviewDecision::ApprovedForSession => {
                self.remember_for_session(rule, ctx);
                Ok(format!(
                    "approved by {by}; `{rule}` allowed for this session"
                ))
            }
            ReviewDecision::ApprovedAlways => match self.save_mcp_rule(rule) {
                Ok(()) => Ok(format!("approved by {by}; `{rule}` allowed from now on")),
                Err(e) => {
                    tracing::warn!("{e}");
                    self.emit(ctx, EventKind::Notice { message: e });
                    self.remember_for_session(rule, ctx);
                    Ok(format!(
                        "approved by {by}; `{rule}` allowed for this session"
                    ))
                }
            },
        }
    }

    /// `session` or `file` when a rule names this tool exactly.
    fn mcp_rule(&self, rule: &str, session: &str) -> Option<&'static str> {
        let in_session = lock(&self.mcp_session)
            .get(session)
            .is_some_and(|rules| rules.iter().any(|r| r == rule));
        if in_session {
            return Some("session");
        }
        // Read each time: the file is small, and another egirl may have
        // approved the tool since.
        match read_file(&self.approvals_file) {
            Ok(file) if file.mcp.iter().any(|r| r == rule) => Some("file"),
            Ok(_) => None,
            Err(e) => {
                tracing::warn!("ignoring the approvals file: {e}");
                None
            }
        }
    }

    fn remember_for_session(&self, rule: &str, ctx: &ToolContext) {
        lock(&self.mcp_session)
            .entry(ctx.session.clone())
            .or_default()
            .push(rule.to_string());
    }

    fn save_mcp_rule(&self, rule: &str) -> Result<(), String> {
        // The exec rules' lock also serializes rewrites of the file.
        let _saved = lock(&self.saved);
        let mut file = read_file(&self.approvals_file)?;
        if !file.mcp.iter().any(|r| r == rule) {
            file.mcp.push(rule.to_string());
        }
        self.write_rules(&file)
    }
}
