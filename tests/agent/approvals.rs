use egirl::config::ExecApproval;
use egirl::protocol::{
    ApprovalDecision, ApprovalRequest, EventKind, Op, Origin, ReviewDecision, TurnEnded,
};

use super::{start, tool_results};
use crate::support::fake_llama::{FakeLlama, Reply};

fn exec_call(command: &str) -> Reply {
    let args = serde_json::json!({ "command": command }).to_string();
    Reply::tool_calls(&[("exec", &args)])
}

#[tokio::test]
async fn exec_waits_for_a_decision_and_runs_when_approved() {
    let fake = FakeLlama::start().await;
    fake.push_replies([exec_call("echo approved-run"), Reply::text("done")]);
    let mut h = start(&fake, |_| {});
    h.send("a", "run it");
    let id = loop {
        let e = h.next().await;
        if let EventKind::ApprovalRequest(ApprovalRequest {
            id,
            command,
            cwd,
            tool,
            rule,
            ..
        }) = e.kind
        {
            assert_eq!(command, "echo approved-run");
            assert_eq!(rule.as_deref(), Some("echo approved-run"));
            assert_eq!(tool, "exec");
            assert_eq!(cwd, h.workspace.display().to_string());
            break id;
        }
    };
    h.agent.submit(Op::ApprovalDecision {
        id: id.clone(),
        decision: ReviewDecision::ApprovedOnce,
        by: Origin::Tui,
    });
    // A second surface answering late changes nothing.
    h.agent.submit(Op::ApprovalDecision {
        id,
        decision: ReviewDecision::Denied,
        by: Origin::Discord("1".into()),
    });
    let events = h.turn("a").await;
    let decision = events.iter().find_map(|e| match e {
        EventKind::ApprovalDecision(ApprovalDecision { decision, by, .. }) => {
            // The wire word (`approved`/`denied`), as `--json` writes it.
            let word = if decision.is_approved() {
                "approved"
            } else {
                "denied"
            };
            Some((word.to_string(), by.clone()))
        }
        _ => None,
    });
    assert_eq!(decision, Some(("approved".to_string(), "tui".to_string())));
    let results = tool_results(&events);
    assert!(
        results[0].1 && results[0].2.contains("approved-run"),
        "{results:?}"
    );
}

#[tokio::test]
async fn exec_denied_tells_the_model() {
    let fake = FakeLlama::start().await;
    fake.push_replies([exec_call("rm -rf build"), Reply::text("ok, I won't")]);
    let mut h = start(&fake, |_| {});
    h.send("d", "clean up");
    let id = loop {
        if let EventKind::ApprovalRequest(ApprovalRequest { id, .. }) = h.next().await.kind {
            break id;
        }
    };
    h.agent.submit(Op::ApprovalDecision {
        id,
        decision: ReviewDecision::Denied,
        by: Origin::Tui,
    });
    let events = h.turn("d").await;
    let results = tool_results(&events);
    assert!(
        !results[0].1 && results[0].2.contains("denied by user"),
        "{results:?}"
    );
    // What the model saw next.
    let second = &fake.requests()[1];
    let last = second["messages"]
        .as_array()
        .and_then(|m| m.last())
        .cloned()
        .unwrap_or_default();
    assert!(
        last["content"]
            .as_str()
            .unwrap_or("")
            .contains("denied by user"),
        "{last}"
    );
}

#[tokio::test]
async fn allow_prefix_runs_without_asking_but_never_a_chain() {
    let fake = FakeLlama::start().await;
    fake.push_replies([exec_call("echo allowed"), Reply::text("first done")]);
    let mut h = start(&fake, |c| c.tools.exec.allow = vec!["echo".into()]);
    h.send("p", "echo");
    let events = h.turn("p").await;
    assert!(
        !events
            .iter()
            .any(|e| matches!(e, EventKind::ApprovalRequest(_)))
    );
    assert!(tool_results(&events)[0].2.contains("allowed"));

    // `echo x; rm` starts with an allowed prefix but chains: it must ask.
    fake.push_replies([
        exec_call("echo x; touch chained"),
        Reply::text("second done"),
    ]);
    h.send("p", "chain");
    let id = loop {
        if let EventKind::ApprovalRequest(ApprovalRequest { id, .. }) = h.next().await.kind {
            break id;
        }
    };
    h.agent.submit(Op::ApprovalDecision {
        id,
        decision: ReviewDecision::Denied,
        by: Origin::Tui,
    });
    h.turn("p").await;
    assert!(!h.workspace.join("chained").exists());
}

#[tokio::test]
async fn deny_policy_never_asks_and_file_tools_stay_confined() {
    let fake = FakeLlama::start().await;
    fake.push_replies([
        Reply::tool_calls(&[
            ("exec", r#"{"command": "echo hi"}"#),
            ("read_file", r#"{"path": "../../etc/passwd"}"#),
            ("read_file", r#"{"path": "/etc/passwd"}"#),
        ]),
        Reply::text("blocked"),
    ]);
    let outside = tempfile::tempdir().expect("dir");
    std::fs::write(outside.path().join("secret.txt"), "top secret").expect("write");
    let mut h = start(&fake, |c| c.tools.exec.approval = ExecApproval::Deny);
    std::os::unix::fs::symlink(
        outside.path().join("secret.txt"),
        h.workspace.join("link.txt"),
    )
    .expect("symlink");
    h.send("c", "try");
    let events = h.turn("c").await;
    let results = tool_results(&events);
    assert_eq!(results.len(), 3);
    assert!(results.iter().all(|r| !r.1), "{results:?}");
    assert!(
        !events
            .iter()
            .any(|e| matches!(e, EventKind::ApprovalRequest(_)))
    );

    fake.push_replies([
        Reply::tool_calls(&[("read_file", r#"{"path": "link.txt"}"#)]),
        Reply::text("no"),
    ]);
    h.send("c", "symlink");
    let events = h.turn("c").await;
    let results = tool_results(&events);
    assert!(
        !results[0].1 && !results[0].2.contains("top secret"),
        "{results:?}"
    );
}

#[tokio::test]
async fn interrupt_kills_a_running_command() {
    let fake = FakeLlama::start().await;
    fake.push_reply(exec_call("sleep 37"));
    let mut h = start(&fake, |c| c.tools.exec.approval = ExecApproval::Full);
    h.send("k", "wait");
    loop {
        if let EventKind::ToolCall(_) = h.next().await.kind {
            break;
        }
    }
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    assert!(sleeping(), "the command is running");
    h.agent.submit(Op::Interrupt {
        session: "k".into(),
    });
    let events = h.turn("k").await;
    assert!(matches!(
        events.last(),
        Some(EventKind::TurnEnded(TurnEnded { interrupted: true }))
    ));
    assert!(!sleeping(), "the command survived the interrupt");
}

/// Whether a `sleep 37` process exists.
fn sleeping() -> bool {
    std::fs::read_dir("/proc")
        .map(|entries| {
            entries.flatten().any(|e| {
                std::fs::read(e.path().join("cmdline")).is_ok_and(|c| c == b"sleep\x0037\x00")
            })
        })
        .unwrap_or(false)
}
