//! Exec approvals raised by a Discord session: the TUI's modal, the
//! unattended fallback, and answers from Discord itself.

use egirl::protocol::{
    ApprovalDecision, ApprovalRequest, Event, EventKind, Op, Origin, ReviewDecision,
    ToolResultEvent,
};
use egirl::surfaces::discord;

use super::{DM, Rig, start};
use crate::support::fake_discord::{OWNER_ID, UserMessage};
use crate::support::fake_llama::Reply;

fn exec_call(command: &str) -> Reply {
    let args = serde_json::json!({ "command": command }).to_string();
    Reply::tool_calls(&[("exec", &args)])
}

/// Waits for the Discord session's approval request; returns its id.
async fn approval_request(rig: &mut Rig) -> (String, Event) {
    loop {
        let event = tokio::time::timeout(std::time::Duration::from_secs(20), rig.events.recv())
            .await
            .expect("an approval request within 20 s")
            .unwrap();
        if let EventKind::ApprovalRequest(ApprovalRequest { id, .. }) = &event.kind {
            return (id.clone(), event);
        }
        assert!(
            !matches!(event.kind, EventKind::ToolResult(_)),
            "a tool ran before approval"
        );
    }
}

fn tool_result(events: &[Event]) -> (bool, String) {
    events
        .iter()
        .find_map(|e| match &e.kind {
            EventKind::ToolResult(ToolResultEvent {
                success, output, ..
            }) => Some((*success, output.clone())),
            _ => None,
        })
        .expect("a tool result")
}

fn decided_by(events: &[Event]) -> Option<(String, String)> {
    events.iter().find_map(|e| match &e.kind {
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
    })
}

#[tokio::test]
async fn exec_from_discord_asks_the_tui_and_runs_only_after_approval() {
    let mut rig = start(true, |_| {}, |_| {}).await;
    rig.llama
        .push_replies([exec_call("echo from-discord"), Reply::text("ran it")]);
    rig.discord.send(UserMessage::dm(DM, "run the echo"));

    let (id, request) = approval_request(&mut rig).await;
    assert_eq!(request.origin, Origin::Discord(DM.to_string()));
    assert_eq!(request.session, discord::session_for(DM));
    // Nothing is answered in Discord while the approval waits.
    super::settle().await;
    assert!(rig.discord.sent().is_empty());

    rig.agent.submit(Op::ApprovalDecision {
        id,
        decision: ReviewDecision::ApprovedOnce,
        by: Origin::Tui,
    });
    let events = rig.turn(&discord::session_for(DM)).await;
    let (ok, output) = tool_result(&events);
    assert!(ok && output.contains("from-discord"), "{output}");
    assert_eq!(decided_by(&events), Some(("approved".into(), "tui".into())));
    let sent = rig.discord.wait_sent(1).await;
    assert_eq!(sent[0].content, "ran it");
}

#[tokio::test]
async fn without_a_tui_an_exec_no_rule_allows_is_denied() {
    let mut rig = start(false, |_| {}, |_| {}).await;
    rig.llama
        .push_replies([exec_call("touch /tmp/never"), Reply::text("could not")]);
    rig.discord.send(UserMessage::dm(DM, "touch it"));
    let events = rig.turn(&discord::session_for(DM)).await;
    let (ok, output) = tool_result(&events);
    assert!(!ok && output.contains("denied"), "{output}");
    assert_eq!(
        decided_by(&events),
        Some(("denied".into(), format!("discord:{DM}")))
    );
    assert_eq!(rig.discord.wait_sent(1).await[0].content, "could not");
}

#[tokio::test]
async fn without_a_tui_an_allow_rule_still_runs() {
    let mut rig = start(false, |c| c.tools.exec.allow = vec!["echo".into()], |_| {}).await;
    rig.llama
        .push_replies([exec_call("echo allowed"), Reply::text("done")]);
    rig.discord.send(UserMessage::dm(DM, "echo"));
    let events = rig.turn(&discord::session_for(DM)).await;
    let (ok, output) = tool_result(&events);
    assert!(ok && output.contains("allowed"), "{output}");
}

#[tokio::test]
async fn the_owner_approves_in_discord_with_a_reply() {
    let mut rig = start(false, |_| {}, |d| d.approve_in_discord = true).await;
    rig.llama
        .push_replies([exec_call("echo via-reply"), Reply::text("done")]);
    rig.discord.send(UserMessage::dm(DM, "run it"));
    approval_request(&mut rig).await;
    let prompt = rig.discord.wait_sent(1).await.remove(0);
    assert!(
        prompt.content.contains("echo via-reply"),
        "{}",
        prompt.content
    );

    rig.discord.send(UserMessage::dm(DM, "yes"));
    let events = rig.turn(&discord::session_for(DM)).await;
    let (ok, output) = tool_result(&events);
    assert!(ok && output.contains("via-reply"), "{output}");
    assert_eq!(
        decided_by(&events),
        Some(("approved".into(), format!("discord:{DM}")))
    );
    // "yes" answered the approval; it never became a turn of its own.
    assert_eq!(rig.llama.requests_to("/v1/chat/completions").len(), 2);
}

#[tokio::test]
async fn the_owner_denies_in_discord_with_a_reaction_and_strangers_cannot() {
    let mut rig = start(true, |_| {}, |d| d.approve_in_discord = true).await;
    rig.llama
        .push_replies([exec_call("echo nope"), Reply::text("ok, not running it")]);
    rig.discord.send(UserMessage::dm(DM, "run it"));
    approval_request(&mut rig).await;
    let prompt = rig.discord.wait_sent(1).await.remove(0);

    rig.discord.react(DM, prompt.id, 7, "✅");
    super::settle().await;
    rig.discord.react(DM, prompt.id, OWNER_ID, "❌");
    let events = rig.turn(&discord::session_for(DM)).await;
    let (ok, output) = tool_result(&events);
    assert!(!ok, "{output}");
    assert_eq!(
        decided_by(&events),
        Some(("denied".into(), format!("discord:{DM}")))
    );
}
