//! The sandbox on screen: the approval modal says where a command will
//! run, a request to re-run outside the sandbox looks and answers
//! differently, and the tools pane shows each exec's sandbox.

use crossterm::event::KeyCode;
use egirl::protocol::{
    ApprovalRequest, EventKind, Op, ReviewDecision, ToolCallEvent, ToolResultEvent,
};
use insta::assert_snapshot;

use super::*;

const JAIL: &str = "workspace-write, no network";

fn request(id: &str, command: &str, escalation: Option<&str>) -> EventKind {
    EventKind::ApprovalRequest(ApprovalRequest {
        id: id.into(),
        tool: "exec".into(),
        command: command.into(),
        cwd: "/home/me/ws".into(),
        // As the core sends it: no rule for a re-run outside the sandbox.
        rule: escalation
            .is_none()
            .then(|| egirl::tools::approval::approval_prefix(command))
            .flatten(),
        rule_covers: escalation
            .is_none()
            .then(|| egirl::tools::approval::rule_preview(command))
            .flatten()
            .map(Into::into),
        sandbox: Some(JAIL.into()),
        escalation: escalation.map(Into::into),
    })
}

#[test]
fn the_approval_modal_shows_the_sandbox() {
    let mut app = app();
    app.apply(ev(request("ap-1", "cargo test", None)));
    arm(&mut app);
    let s = screen(&app, 100, 24);
    assert!(s.contains("sandbox: workspace-write, no network"), "{s}");
    assert_snapshot!(s);
}

#[test]
fn an_escalation_shows_why_and_takes_only_o_or_a_denial() {
    let mut app = app();
    let why = "touch: cannot touch '/home/me/.cache/x': Read-only file system";
    app.apply(ev(request("ap-2", "cargo build", Some(why))));
    arm(&mut app);
    let s = screen(&app, 100, 24);
    assert!(s.contains("outside the sandbox?"), "{s}");
    assert!(s.contains("Read-only file system"), "{s}");
    assert_snapshot!(s);

    // y, a and p would be an ordinary approval: they do nothing here.
    for c in ['y', 'a', 'p'] {
        assert!(ops(press(&mut app, key(KeyCode::Char(c)))).is_empty());
    }
    let sent = ops(press(&mut app, key(KeyCode::Char('o'))));
    assert!(
        matches!(
            &sent[..],
            [Op::ApprovalDecision { id, decision: ReviewDecision::ApprovedOutsideSandbox, .. }]
                if id == "ap-2"
        ),
        "{sent:?}"
    );

    // On an ordinary request `o` does nothing.
    app.apply(ev(request("ap-3", "ls", None)));
    arm(&mut app);
    assert!(ops(press(&mut app, key(KeyCode::Char('o')))).is_empty());
    assert_eq!(app.approvals.len(), 1);
}

#[test]
fn the_tools_pane_shows_the_sandbox_of_each_exec() {
    let mut app = app();
    apply_all(
        &mut app,
        [
            ev(EventKind::ToolCall(ToolCallEvent {
                id: "c1".into(),
                name: "exec".into(),
                arguments: serde_json::json!({"command": "touch /etc/x"}),
                sandbox: Some(JAIL.into()),
            })),
            ev(EventKind::ToolResult(ToolResultEvent {
                id: "c1".into(),
                name: "exec".into(),
                success: false,
                output: format!(
                    "exit code 1 (0.0s) [sandbox: {JAIL}]\n[stderr]\ntouch: cannot touch '/etc/x': Permission denied"
                ),
                duration_ms: 4,
                diff: None,
            })),
            ev(EventKind::ToolCall(ToolCallEvent {
                id: "c2".into(),
                name: "exec".into(),
                arguments: serde_json::json!({"command": "ls"}),
                sandbox: Some("off (no sandbox)".into()),
            })),
        ],
    );
    press(&mut app, key(KeyCode::F(3)));
    let s = screen(&app, 80, 16);
    assert!(s.contains("sandbox: workspace-write, no network"), "{s}");
    assert!(s.contains("sandbox: off (no sandbox)"), "{s}");
    assert_snapshot!(s);
}
