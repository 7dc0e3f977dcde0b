//! Exec approvals asked in the chat with inline buttons: answered by the
//! owner's press, by the TUI first, or by nobody (timeout = denied).

use std::time::Duration;

use egirl::config::ConfigDuration;
use egirl::protocol::{
    ApprovalDecision, ApprovalRequest, Event, EventKind, Op, Origin, ReviewDecision,
    ToolResultEvent,
};
use egirl::surfaces::telegram;

use super::{DM, Rig, Setup, start};
use crate::support::fake_llama::Reply;
use crate::support::fake_telegram::{OWNER_ID, Sent};

fn exec_call(command: &str) -> Reply {
    let args = serde_json::json!({ "command": command }).to_string();
    Reply::tool_calls(&[("exec", &args)])
}

/// The request's id, once its prompt with buttons is in the chat.
async fn prompt(rig: &mut Rig) -> (String, Sent) {
    let id = loop {
        let event = tokio::time::timeout(Duration::from_secs(20), rig.events.recv())
            .await
            .expect("an approval request within 20 s")
            .unwrap();
        if let EventKind::ApprovalRequest(ApprovalRequest { id, .. }) = &event.kind {
            break id.clone();
        }
    };
    let sent = rig.telegram.wait_sent(1).await;
    (id, sent[0].clone())
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

fn data_for(prompt: &Sent, label_start: &str) -> String {
    prompt
        .buttons()
        .into_iter()
        .find(|(label, _)| label.starts_with(label_start))
        .map(|(_, data)| data)
        .unwrap_or_else(|| panic!("no `{label_start}` button: {:?}", prompt.buttons()))
}

#[tokio::test]
async fn an_approval_is_answered_by_the_owners_button_and_the_prompt_says_who() {
    let mut rig = start(Setup::default(), |_| {}).await;
    rig.llama
        .push_replies([exec_call("echo from-telegram"), Reply::text("ran it")]);
    rig.telegram.message(DM, OWNER_ID, "run the echo");

    let (id, asked) = prompt(&mut rig).await;
    assert!(asked.text.contains("echo from-telegram"), "{}", asked.text);
    let labels: Vec<String> = asked.buttons().into_iter().map(|(l, _)| l).collect();
    assert_eq!(labels.len(), 4, "{labels:?}");
    assert!(asked.buttons().iter().all(|(_, data)| data.ends_with(&id)));

    // A stranger's press does nothing.
    let run_once = data_for(&asked, "✅ Run once");
    let stranger = rig.telegram.press(DM, asked.message_id, 7, &run_once);
    super::settle().await;
    assert!(rig.agent.bus.has_subscribers());
    assert!(
        rig.telegram.edits().is_empty(),
        "{:?}",
        rig.telegram.edits()
    );

    let owner = rig
        .telegram
        .press(DM, asked.message_id, OWNER_ID, &run_once);
    let events = rig.turn(&telegram::session_for(DM)).await;
    let (ok, output) = tool_result(&events);
    assert!(ok && output.contains("from-telegram"), "{output}");
    assert_eq!(
        decided_by(&events),
        Some(("approved".into(), format!("telegram:{DM}")))
    );
    let edits = rig.telegram.wait_edits(1).await;
    assert_eq!(edits[0].message_id, asked.message_id);
    assert!(
        edits[0]
            .text
            .contains(&format!("approved once (by telegram:{DM})")),
        "{}",
        edits[0].text
    );
    assert!(
        edits[0].buttons().is_empty(),
        "the buttons stay after the decision"
    );
    let answers = rig.telegram.callback_answers();
    assert!(
        answers.contains(&(stranger, "not allowed".into())),
        "{answers:?}"
    );
    assert!(answers.contains(&(owner, "approved".into())), "{answers:?}");
    let sent = rig.telegram.wait_sent(2).await;
    assert_eq!(sent[1].text, "ran it");
}

#[tokio::test]
async fn the_tui_answering_first_wins_and_a_later_press_changes_nothing() {
    let mut rig = start(Setup::default(), |_| {}).await;
    rig.llama
        .push_replies([exec_call("echo desk"), Reply::text("done")]);
    rig.telegram.message(DM, OWNER_ID, "run it");
    let (id, asked) = prompt(&mut rig).await;

    rig.agent.submit(Op::ApprovalDecision {
        id,
        decision: ReviewDecision::Denied,
        by: Origin::Tui,
    });
    let events = rig.turn(&telegram::session_for(DM)).await;
    assert_eq!(decided_by(&events), Some(("denied".into(), "tui".into())));
    let (ok, _) = tool_result(&events);
    assert!(!ok, "the command ran although the TUI denied it");
    let edits = rig.telegram.wait_edits(1).await;
    assert!(
        edits[0].text.contains("denied (by tui)"),
        "{}",
        edits[0].text
    );

    // The owner presses "run once" after the TUI decided.
    let late = rig.telegram.press(
        DM,
        asked.message_id,
        OWNER_ID,
        &data_for(&asked, "✅ Run once"),
    );
    super::settle().await;
    assert!(
        rig.telegram
            .callback_answers()
            .contains(&(late, "already decided".into()))
    );
    assert_eq!(rig.telegram.edits().len(), 1);
    while let Ok(event) = rig.events.try_recv() {
        assert!(
            !matches!(
                event.kind,
                EventKind::ApprovalDecision(_) | EventKind::ToolResult(_)
            ),
            "{event:?}"
        );
    }
}

#[tokio::test]
async fn no_answer_within_the_timeout_is_a_denial() {
    let setup = Setup {
        attended: false,
        ..Setup::default()
    };
    let mut rig = start(setup, |c| {
        c.tools.exec.unattended_timeout = ConfigDuration::from_secs(1);
    })
    .await;
    rig.llama
        .push_replies([exec_call("echo never"), Reply::text("it was denied")]);
    rig.telegram.message(DM, OWNER_ID, "run it");
    let (_, asked) = prompt(&mut rig).await;
    let events = rig.turn(&telegram::session_for(DM)).await;
    assert_eq!(
        decided_by(&events),
        Some(("denied".into(), "timeout".into()))
    );
    let (ok, output) = tool_result(&events);
    assert!(!ok && output.contains("no one approved"), "{output}");
    let edits = rig.telegram.wait_edits(1).await;
    assert_eq!(edits[0].message_id, asked.message_id);
    assert!(
        edits[0].text.contains("no answer in time"),
        "{}",
        edits[0].text
    );
}
