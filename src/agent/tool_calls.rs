//! One batch of the model's tool calls: announced in order, run
//! concurrently (a repeated call, invalid arguments or a tool an unattended
//! origin may not use fails without running), each result redacted before
//! it is shown, stored or sent. A call through the tool catalog is handled
//! as the call of the tool it names.

use std::collections::HashSet;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Instant;

use futures_util::FutureExt;
use futures_util::future::join_all;
use tokio_util::sync::CancellationToken;

use super::hooks::{self, HookPoint};
use super::session::Turn;
use super::unattended;
use crate::chat::ToolCall;
use crate::config::HookEvent;
use crate::protocol::EventKind;
use crate::protocol::{ToolCallEvent, ToolResultEvent};
use crate::tools::{self, ToolContext};

/// Runs the calls concurrently; results come back in call order.
pub(super) async fn run_tools(
    turn: &Turn<'_>,
    session_id: &str,
    calls: &[ToolCall],
    seen: &mut HashSet<String>,
    cancel: &CancellationToken,
    checkpoint: Option<Arc<tools::checkpoints::TurnCheckpoint>>,
) -> Vec<tools::ToolOutput> {
    let shared = turn.shared;
    let ctx = tool_context(turn, session_id, cancel, checkpoint);
    let mut jobs = Vec::with_capacity(calls.len());
    // A catalog call is the named tool's call from here on (the history keeps what was sent).
    for call in calls.iter().map(ToolCall::resolved) {
        turn.emit(EventKind::ToolCall(ToolCallEvent {
            id: call.id.clone(),
            name: call.name.clone(),
            arguments: call.arguments.clone(),
            sandbox: (call.name == "exec").then(|| tools::sandbox::describe(&ctx.exec)),
        }));
        // The same call twice in one turn is a loop the model needs to hear about.
        let repeated = !seen.insert(format!("{}:{}", call.name, call.arguments));
        // Its own id, for the progress it reports.
        let mut call_ctx = ctx.clone();
        call_ctx.call_id = call.id.clone();
        call_ctx.approval_wait_ms = Default::default();
        jobs.push(async move {
            let ctx = &call_ctx;
            let started = Instant::now();
            let output = if let Some(err) = &call.arguments_error {
                tools::ToolOutput::fail(format!(
                    "your call to `{}` had invalid JSON arguments ({err}); send it again with a valid JSON object",
                    call.name
                ))
            } else if !unattended::tool_allowed(
                &ctx.origin,
                &call.name,
                &shared.config.webhook.tools,
            ) {
                tools::ToolOutput::fail(unattended::tool_refusal(&call.name))
            } else if !tools::mcp::is_mcp_tool(&call.name)
                && !tools::policy::permitted(&shared.config, &call.name)
            {
                // Never offered to this agent: the model named it anyway.
                tools::ToolOutput::refused(tools::policy::refusal(&call.name))
            } else if repeated {
                tools::ToolOutput::fail(format!(
                    "you already called `{}` with exactly these arguments in this turn; its result is above. Use it, or try something different",
                    call.name
                ))
            } else if let Some(why) = pre_tool(turn, session_id, &call).await {
                tools::ToolOutput::refused(why)
            } else {
                // A bug in one tool fails that call, not the session's worker.
                AssertUnwindSafe(tools::run(&call.name, &call.arguments, ctx))
                    .catch_unwind()
                    .await
                    .unwrap_or_else(|panic| {
                        let why = panic
                            .downcast_ref::<&str>()
                            .map(|s| s.to_string())
                            .or_else(|| panic.downcast_ref::<String>().cloned())
                            .unwrap_or_else(|| "unknown cause".into());
                        tracing::error!(tool = %call.name, "tool panicked: {why}");
                        tools::ToolOutput::fail(format!("`{}` crashed ({why}); this is a bug in egirl", call.name))
                    })
            };
            // Before it is shown, stored or sent: `env`, `cat .env`...
            let mut output = output;
            shared.redactor.redact_string(&mut output.output);
            // The run, not the time the user took to approve it.
            let waited = ctx.approval_wait_ms.load(Ordering::Relaxed);
            let ran_ms = (started.elapsed().as_millis() as u64).saturating_sub(waited);
            post_tool(turn, session_id, &call, &output).await;
            turn.emit(EventKind::ToolResult(ToolResultEvent {
                id: call.id.clone(),
                name: call.name.clone(),
                success: output.success,
                output: output.output.clone(),
                duration_ms: ran_ms,
                // Shown (and kept in the transcript), never sent: the
                // model's result stays one line.
                diff: output.diff.clone(),
            }));
            output
        });
    }
    join_all(jobs).await
}

/// What every call of one batch shares: the session's roots, policies and
/// services; each call then gets its own id.
fn tool_context(
    turn: &Turn<'_>,
    session_id: &str,
    cancel: &CancellationToken,
    checkpoint: Option<Arc<tools::checkpoints::TurnCheckpoint>>,
) -> ToolContext {
    let shared = turn.shared;
    ToolContext {
        workspace: shared.workspace.clone(),
        allowed_paths: shared.allowed_paths.clone(),
        exec: shared.config.tools.exec.clone(),
        session: session_id.to_string(),
        origin: turn.origin.clone(),
        approver: shared.approver.clone(),
        cancel: cancel.clone(),
        skills: shared.skills.clone(),
        memory: Some(shared.memory.clone()),
        protected: shared.protected.clone(),
        config: shared.config.clone(),
        bus: turn.shared.bus.clone(),
        call_id: String::new(),
        checkpoint,
        mcp: shared.mcp.clone(),
        approval_wait_ms: Default::default(),
        client_files: shared.client_files.clone(),
    }
}

/// The `pre_tool` hooks of a call: why one blocked it, if one did.
async fn pre_tool(turn: &Turn<'_>, session_id: &str, call: &ToolCall) -> Option<String> {
    let point = HookPoint {
        event: HookEvent::PreTool,
        session: session_id,
        origin: &turn.origin,
        tool: Some(&call.name),
        call_id: Some(&call.id),
        fields: serde_json::json!({ "arguments": call.arguments }),
    };
    hooks::run(turn.shared, point).await
}

/// The `post_tool` hooks of a call, with its result as the model gets it.
async fn post_tool(turn: &Turn<'_>, session_id: &str, call: &ToolCall, output: &tools::ToolOutput) {
    let point = HookPoint {
        event: HookEvent::PostTool,
        session: session_id,
        origin: &turn.origin,
        tool: Some(&call.name),
        call_id: Some(&call.id),
        fields: serde_json::json!({
            "arguments": call.arguments,
            "result": { "success": output.success, "output": output.output },
        }),
    };
    hooks::run(turn.shared, point).await;
}
