//! The `delegate` tool in the running core, answered as the TUI answers
//! (`Op::ApprovalDecision`): the agent's permission request reaches
//! egirl's approval modal and is honoured both ways, and an interrupt
//! stops the agent with everything it started.

use std::path::Path;

use egirl::config::{ClaudePermissions, ConfigDuration, DelegateAgent};
use egirl::protocol::{
    ApprovalRequest, EventKind, Op, Origin, ReviewDecision, ToolProgress, ToolResultEvent,
};
use serde_json::json;

use super::delegate::{delegate_call, fs_agent_sdk};
use super::delegate_fs::processes_with;
use crate::agent::{Harness, start};
use crate::support::fake_llama::{FakeLlama, Reply};

/// The core with `[delegate.agents.scripted]` (tests/acp/fs_agent.mjs,
/// `marker` naming its process), its permissions asked in the modal.
fn harness(fake: &FakeLlama, marker: &str) -> Harness {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/acp/fs_agent.mjs");
    let sdk = fs_agent_sdk();
    let agent = DelegateAgent {
        command: "node".into(),
        args: vec![
            script.display().to_string(),
            sdk.display().to_string(),
            marker.into(),
        ],
        env: Vec::new(),
        permissions: ClaudePermissions::Ask,
        timeout: ConfigDuration::from_secs(120),
        description: String::new(),
    };
    start(fake, |c| {
        c.delegate.agents.insert("scripted".into(), agent);
    })
}

/// What a turn showed: the approvals asked (tool, command), the progress,
/// and the delegate call's result; each approval answered with `answer`.
async fn turn(
    h: &mut Harness,
    answer: ReviewDecision,
) -> (Vec<(String, String)>, Vec<String>, (bool, String)) {
    let (mut asked, mut progress) = (Vec::new(), Vec::new());
    h.send("m", "delegate it");
    loop {
        match h.next().await.kind {
            EventKind::ApprovalRequest(ApprovalRequest {
                id, tool, command, ..
            }) => {
                // Starting the delegation is approved; the agent's own
                // request gets `answer`.
                let decision = match tool.as_str() {
                    "delegate" => ReviewDecision::ApprovedOnce,
                    _ => answer,
                };
                asked.push((tool, command));
                h.agent.submit(Op::ApprovalDecision {
                    id,
                    decision,
                    by: Origin::Tui,
                });
            }
            EventKind::ToolProgress(ToolProgress { text, .. }) => progress.push(text),
            EventKind::ToolResult(ToolResultEvent {
                success, output, ..
            }) => {
                return (asked, progress, (success, output));
            }
            _ => {}
        }
    }
}

fn asking_task(ws: &Path) -> String {
    json!({"ask": "Write notes.txt", "writes": [[ws.join("notes.txt"), "approved\n"]]}).to_string()
}

#[tokio::test]
async fn approved_in_the_modal_the_agent_writes() {
    let fake = FakeLlama::start().await;
    let mut h = harness(&fake, "fs-agent-modal-yes");
    let ws = std::fs::canonicalize(&h.workspace).unwrap();
    fake.push_replies([
        delegate_call("scripted", &asking_task(&ws)),
        Reply::text("done"),
    ]);
    let (asked, progress, (ok, output)) = turn(&mut h, ReviewDecision::ApprovedOnce).await;

    assert!(ok, "{output}");
    let tools: Vec<&str> = asked.iter().map(|(t, _)| t.as_str()).collect();
    assert_eq!(tools, ["delegate", "delegate_permission"], "{asked:?}");
    assert!(asked[0].1.starts_with("scripted: "), "{asked:?}");
    assert!(
        asked[1].1.starts_with("scripted: Write notes.txt"),
        "{asked:?}"
    );
    assert!(output.contains("permission: allow\n"), "{output}");
    assert_eq!(
        std::fs::read_to_string(ws.join("notes.txt")).unwrap(),
        "approved\n"
    );
    assert!(
        progress
            .iter()
            .any(|p| p == "? Write notes.txt (asking you)"),
        "{progress:?}"
    );
}

#[tokio::test]
async fn denied_in_the_modal_the_agent_writes_nothing() {
    let fake = FakeLlama::start().await;
    let mut h = harness(&fake, "fs-agent-modal-no");
    let ws = std::fs::canonicalize(&h.workspace).unwrap();
    fake.push_replies([
        delegate_call("scripted", &asking_task(&ws)),
        Reply::text("done"),
    ]);
    let (asked, _, (ok, output)) = turn(&mut h, ReviewDecision::Denied).await;

    assert!(ok, "{output}");
    assert_eq!(asked.len(), 2, "{asked:?}");
    assert!(output.contains("permission: reject\n"), "{output}");
    assert!(output.contains("nothing written"), "{output}");
    assert!(!ws.join("notes.txt").exists());
}

#[tokio::test]
async fn an_interrupt_stops_the_agent_and_everything_it_started() {
    let fake = FakeLlama::start().await;
    let marker = format!("fs-agent-interrupt-{}", std::process::id());
    let seconds = 5_000_000 + std::process::id() as u64 % 100_000;
    let mut h = harness(&fake, &marker);
    let task = json!({"hang": seconds}).to_string();
    fake.push_replies([delegate_call("scripted", &task), Reply::text("stopped")]);
    h.send("m", "delegate it");
    loop {
        match h.next().await.kind {
            EventKind::ApprovalRequest(ApprovalRequest { id, .. }) => {
                h.agent.submit(Op::ApprovalDecision {
                    id,
                    decision: ReviewDecision::ApprovedOnce,
                    by: Origin::Tui,
                });
            }
            // Its child runs: now the user interrupts.
            EventKind::ToolProgress(ToolProgress { text, .. })
                if text.starts_with(&format!("→ sleep {seconds}")) =>
            {
                assert!(!processes_with(&format!("sleep {seconds}")).is_empty());
                h.agent.submit(Op::Interrupt {
                    session: "m".into(),
                });
            }
            EventKind::ToolResult(ToolResultEvent {
                success, output, ..
            }) => {
                assert!(!success, "{output}");
                assert!(output.contains("interrupted"), "{output}");
                break;
            }
            EventKind::TurnEnded(_) => panic!("the turn ended without the call's result"),
            _ => {}
        }
    }
    // Killed before the result was sent: nothing of it is left.
    assert!(
        processes_with(&marker).is_empty(),
        "{:?}",
        processes_with(&marker)
    );
    let sleeps = processes_with(&format!("sleep {seconds}"));
    assert!(sleeps.is_empty(), "{sleeps:?}");
}
