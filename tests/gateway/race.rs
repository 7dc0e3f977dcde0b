//! One approval, three surfaces answering at once: an attached TUI (`y`),
//! a raw client on the socket (an `approval_decision` op) and the owner in
//! Discord ("yes"). The first answer wins, exactly one decision is
//! announced, the command runs once, and every prompt closes.

use egirl::protocol::wire::ClientFrame;
use egirl::protocol::{Op, Origin, ReviewDecision, Submission, SubmissionId};

use super::attach_rig::{DM, Daemon, RawClient, exec_call, kind, tool_results_with};
use crate::support::fake_llama::Reply;
use crate::tui::pty::ARMED;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_surfaces_answer_one_approval_and_exactly_one_decision_wins() {
    let daemon = Daemon::start().await;
    let mut tui = daemon.attach_tui().await;
    let mut raw = RawClient::connect(&daemon.socket()).await;

    daemon
        .llama
        // The third answers a "yes" that came after the decision, as a
        // turn of its own.
        .push_replies([
            exec_call("echo raced-9"),
            Reply::text("done racing"),
            Reply::text("noted"),
        ]);
    daemon.dm("run it");
    let request = raw.until(|e| kind(e) == "approval_request").await;
    let id = request["id"].as_str().expect("a request id").to_string();
    assert_eq!(request["session"], format!("discord-{DM}"));
    tui.wait_for("Approve exec?").await;
    tui.wait_for(ARMED).await;
    // The Discord prompt is out: the owner can answer there too.
    assert!(daemon.sent(1).await.content.contains("echo raced-9"));

    // All three at once.
    tui.send("y");
    raw.send(&ClientFrame::Op(Submission {
        agent: None,
        id: SubmissionId("race-raw-1".into()),
        op: Op::ApprovalDecision {
            id: id.clone(),
            decision: ReviewDecision::ApprovedOnce,
            by: Origin::Tui,
        },
    }))
    .await;
    daemon.dm("yes");

    let ended = raw
        .until(|e| kind(e) == "turn_ended" && e["session"] == format!("discord-{DM}"))
        .await;
    assert_eq!(ended["interrupted"], false, "{ended}");
    // Whatever else the stream carried until the turn ended, and a moment
    // after it (a late second decision would show up here).
    let decisions: Vec<_> = raw
        .events
        .iter()
        .filter(|e| kind(e) == "approval_decision" && e["id"] == id.as_str())
        .collect();
    assert_eq!(decisions.len(), 1, "{decisions:?}");
    assert_eq!(tool_results_with(&daemon.transcript(), "raced-9"), 1);

    // Every prompt closed: the TUI's modal, and the bot's answer came.
    assert!(daemon.sent(2).await.content.contains("done racing"));
    tui.wait_for("done racing").await;
    assert!(
        !tui.contents().contains("Approve exec?"),
        "{}",
        tui.contents()
    );
    // "yes" answered the approval (or came after it was decided): at most
    // it became a turn of its own, never a second run of the command.
    tui.send("\x03\x03");
    assert_eq!(tui.exit_code().await, Some(0));
    assert_eq!(tool_results_with(&daemon.transcript(), "raced-9"), 1);
    daemon.stop().await;
}

/// The modal of a request decided elsewhere closes without a key: the
/// owner answers in Discord while the attached TUI shows the request.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_decision_made_in_discord_closes_the_attached_tuis_modal() {
    let daemon = Daemon::start().await;
    let mut tui = daemon.attach_tui().await;
    daemon
        .llama
        .push_replies([exec_call("echo decided-elsewhere"), Reply::text("ok")]);
    daemon.dm("run it");
    tui.wait_for("Approve exec?").await;
    assert!(daemon.sent(1).await.content.contains("decided-elsewhere"));
    daemon.dm("yes");
    assert_eq!(daemon.sent(2).await.content, "ok");
    let deadline = tokio::time::Instant::now() + super::attach_rig::WAIT;
    while tui.contents().contains("Approve exec?") {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the modal stayed open:\n{}",
            tui.contents()
        );
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    tui.send("\x03\x03");
    assert_eq!(tui.exit_code().await, Some(0));
    daemon.stop().await;
}
