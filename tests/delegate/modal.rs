//! Claude Code's permission request approved in egirl's modal (through the
//! core, as the TUI answers it): the file is written, progress arrives.

use egirl::config::ClaudePermissions;
use egirl::protocol::{
    ApprovalRequest, EventKind, Op, Origin, ReviewDecision, ToolProgress, ToolResultEvent,
};

use super::fake_claude_api::FakeClaudeApi;
use super::{claude_bin, delegate_call};
use crate::agent::start;
use crate::support::fake_llama::{FakeLlama, Reply};

/// Runs [`approved_in_the_modal_inner`] in a test process of its own,
/// with Claude Code's base URL and key in its environment (the core passes
/// them on from there; setting them here would reach every other test).
#[tokio::test]
async fn approved_in_the_modal_the_file_is_written() {
    let _ = claude_bin();
    let out = tokio::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "delegate::modal::approved_in_the_modal_inner",
            "--exact",
            "--ignored",
            "--nocapture",
        ])
        .env(RUN_INNER, "1")
        .output()
        .await
        .unwrap();
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{text}");
    assert!(text.contains("1 passed"), "{text}");
}

const RUN_INNER: &str = "EGIRL_DELEGATE_MODAL_INNER";

#[tokio::test]
#[ignore = "run by approved_in_the_modal_the_file_is_written in a process of its own"]
async fn approved_in_the_modal_inner() {
    assert!(
        std::env::var_os(RUN_INNER).is_some(),
        "run through approved_in_the_modal_the_file_is_written"
    );
    let fake = FakeLlama::start().await;
    fake.push_replies([delegate_call("Write hello.txt"), Reply::text("done")]);
    let mut h = start(&fake, |c| {
        c.delegate.claude_code.binary = claude_bin().display().to_string();
        c.delegate.claude_code.permissions = ClaudePermissions::Ask;
    });
    let target = h.workspace.join("hello.txt");
    let api = FakeClaudeApi::start(target.clone(), false).await;
    // SAFETY: this process runs this one test; the variables are read by
    // the Claude Code it starts.
    unsafe {
        std::env::set_var("ANTHROPIC_BASE_URL", &api.url);
        std::env::set_var("ANTHROPIC_API_KEY", super::API_KEY);
    }
    h.send("m", "delegate it");
    let mut asked = Vec::new();
    let mut progress = Vec::new();
    loop {
        let event = h.next().await;
        match event.kind {
            EventKind::ApprovalRequest(ApprovalRequest {
                id, tool, command, ..
            }) => {
                asked.push((tool, command));
                h.agent.submit(Op::ApprovalDecision {
                    id,
                    decision: ReviewDecision::ApprovedOnce,
                    by: Origin::Tui,
                });
            }
            EventKind::ToolProgress(ToolProgress { text, .. }) => progress.push(text),
            EventKind::ToolResult(ToolResultEvent {
                success, output, ..
            }) => {
                assert!(success, "{output}");
                assert!(
                    output.contains("Finished: File created successfully"),
                    "{output}"
                );
                break;
            }
            _ => {}
        }
    }
    assert_eq!(asked.len(), 2, "{asked:?}");
    assert_eq!(asked[0].0, "delegate_claude_code");
    assert_eq!(asked[1].0, "claude_code");
    assert!(
        asked[1].1.contains(&target.display().to_string()),
        "{asked:?}"
    );
    assert_eq!(
        std::fs::read_to_string(&target).unwrap(),
        "hi from claude\n"
    );
    assert!(
        progress.iter().any(|p| p.starts_with("→ Write")),
        "{progress:?}"
    );
}
