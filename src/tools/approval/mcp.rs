//! Approval of MCP tools that are not read-only: rules are per server and
//! tool (the full name `mcp__<server>__<tool>`, never a prefix or a
//! pattern), for the session or always (the `mcp` list of the approvals
//! file). The request shows the server, the tool and the arguments as
//! pretty JSON in the same modal as exec. Unattended turns are denied at
//! once: nobody could answer, and nothing they carry may widen what runs.

use serde_json::Value;

use super::store::GrantKind;
use super::{Approver, Grant, Granted, Refusal};
use crate::mcp::McpTool;
use crate::protocol::{ApprovalRequest, EventKind};
use crate::tools::ToolContext;

impl Approver {
    /// Whether `tool` may run with `args`.
    pub async fn check_mcp(
        &self,
        tool: &McpTool,
        args: &Value,
        ctx: &ToolContext,
    ) -> Result<Granted, Refusal> {
        let rule = tool.full_name.as_str();
        let same = |grant: &str| grant == rule;
        if let Some((grant, source)) = self.store.find(GrantKind::McpTool, &ctx.session, same) {
            let grant = Grant::McpTool(grant);
            return Ok(Granted::Covered { grant, source });
        }
        if ctx.origin.is_unattended() {
            return Err(Refusal::Policy(format!(
                "denied: `{rule}` changes things and needs approval, and nobody answers approvals in an unattended ({}) turn",
                ctx.origin
            )));
        }
        let command = serde_json::to_string_pretty(args).unwrap_or_else(|_| args.to_string());
        let request = |id: String| {
            EventKind::ApprovalRequest(ApprovalRequest {
                id,
                tool: rule.to_string(),
                command,
                cwd: format!("server `{}`, tool `{}`", tool.server, tool.name),
                rule: Some(rule.to_string()),
                rule_covers: None,
                sandbox: None,
                escalation: None,
            })
        };
        let answer = self.ask_with(ctx, request, false).await?;
        self.settle(answer, Some(Grant::McpTool(rule.to_string())), ctx)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::time::Duration;

    use super::*;
    use crate::bus::{EventBus, EventReceiver};
    use crate::config::{ExecApproval, ExecConfig};
    use crate::protocol::{Event, Origin, ReviewDecision};
    use crate::tools::approval::{PendingApprovals, test_context};

    fn tool(name: &str) -> McpTool {
        McpTool {
            full_name: format!("mcp__fs__{name}"),
            server: "fs".into(),
            name: name.into(),
            description: String::new(),
            schema: serde_json::json!({"type": "object"}),
            read_only: false,
        }
    }

    fn harness(
        origin: Origin,
    ) -> (
        tempfile::TempDir,
        ToolContext,
        EventReceiver,
        PendingApprovals,
    ) {
        let dir = tempfile::tempdir().unwrap();
        let bus = EventBus::new();
        let events = bus.subscribe();
        let pending = PendingApprovals::new();
        let file = dir.path().join(".egirl/approvals.toml");
        std::fs::create_dir_all(dir.path().join(".egirl")).unwrap();
        std::fs::write(&file, "allow = [\"git status\"]\n").unwrap();
        let approver = Approver::new(
            bus,
            pending.clone(),
            ExecConfig::default(),
            file,
            Duration::from_millis(50),
        );
        let mut ctx = test_context(dir.path(), ExecApproval::Ask);
        ctx.approver = Arc::new(approver);
        ctx.origin = origin;
        (dir, ctx, events, pending)
    }

    /// Raises the request for `tool`, checks what it shows, answers it.
    async fn answer(
        ctx: &ToolContext,
        events: &mut EventReceiver,
        pending: &PendingApprovals,
        tool: McpTool,
        decision: ReviewDecision,
    ) -> Result<Granted, Refusal> {
        let c = ctx.clone();
        let check = tokio::spawn(async move {
            let args = serde_json::json!({"path": "a.md"});
            c.approver.check_mcp(&tool, &args, &c).await
        });
        let Some(Event {
            kind:
                EventKind::ApprovalRequest(ApprovalRequest {
                    id,
                    tool,
                    command,
                    rule,
                    ..
                }),
            ..
        }) = events.recv().await
        else {
            panic!("expected an approval request");
        };
        assert!(tool.starts_with("mcp__fs__"));
        assert_eq!(rule.as_deref(), Some(tool.as_str()));
        assert_eq!(command, "{\n  \"path\": \"a.md\"\n}");
        assert!(pending.resolve(&id, decision, Origin::Tui));
        let verdict = check.await.unwrap();
        let _decision = events.recv().await;
        verdict
    }

    #[tokio::test]
    async fn rules_are_per_tool_for_the_session_or_always() {
        let (dir, ctx, mut events, pending) = harness(Origin::Tui);
        let session = ReviewDecision::ApprovedForSession;
        assert!(
            answer(&ctx, &mut events, &pending, tool("write_file"), session)
                .await
                .is_ok()
        );
        let args = serde_json::json!({});
        assert_eq!(
            ctx.approver
                .check_mcp(&tool("write_file"), &args, &ctx)
                .await
                .map(|granted| granted.to_string()),
            Ok("allowed by session rule `mcp__fs__write_file`".to_string())
        );
        // Another tool of the same server still asks.
        let denied = answer(
            &ctx,
            &mut events,
            &pending,
            tool("move_file"),
            ReviewDecision::Denied,
        );
        assert_eq!(denied.await, Err(Refusal::DeniedByUser));

        let always = ReviewDecision::ApprovedAlways;
        assert!(
            answer(&ctx, &mut events, &pending, tool("edit_file"), always)
                .await
                .is_ok()
        );
        let file = std::fs::read_to_string(dir.path().join(".egirl/approvals.toml")).unwrap();
        assert!(file.contains("allow = [\"git status\"]"), "{file}");
        assert!(file.contains("mcp = [\"mcp__fs__edit_file\"]"), "{file}");
        let mut other = ctx.clone();
        other.session = "another".into();
        assert_eq!(
            ctx.approver
                .check_mcp(&tool("edit_file"), &args, &other)
                .await
                .map(|granted| granted.to_string()),
            Ok("allowed by file rule `mcp__fs__edit_file`".to_string())
        );
    }

    #[tokio::test]
    async fn unattended_turns_are_denied_without_asking() {
        for origin in [
            Origin::Cron("nightly".into()),
            Origin::Heartbeat,
            Origin::Webhook,
        ] {
            let (_dir, ctx, mut events, _pending) = harness(origin);
            let args = serde_json::json!({});
            let verdict = ctx
                .approver
                .check_mcp(&tool("write_file"), &args, &ctx)
                .await;
            assert!(verdict.unwrap_err().to_string().contains("unattended"));
            assert!(events.try_recv().is_err(), "nothing was asked");
        }
    }
}
