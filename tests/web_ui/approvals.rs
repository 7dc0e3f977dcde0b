//! Exec approvals answered in a real browser: approved once from the page
//! it runs once; denied it does not run; the page and an attached TUI
//! answering the same request: exactly one decision wins and the page says
//! who made it.

use super::rig::{Rig, exec_call, open_session, say, tool_results_with, wait_answer};
use crate::support::cdp::{Page, js_str};
use crate::support::fake_llama::Reply;
use crate::tui::pty::ARMED;

/// Waits for the one pending approval whose text holds `command`; its id.
async fn pending_approval(page: &Page<'_>, command: &str) -> String {
    let find = format!(
        "[...document.querySelectorAll('#approvals .approval[data-approval]:not(.decided)')]\
         .find(a => a.textContent.includes({}))",
        js_str(command)
    );
    page.wait_for(&find, &format!("an approval for `{command}`"))
        .await;
    page.eval(&format!("({find}).dataset.approval"))
        .await
        .as_str()
        .expect("an approval id")
        .to_string()
}

fn decision_button(id: &str, decision: &str) -> String {
    format!("#approvals .approval[data-approval=\"{id}\"] button[data-decision=\"{decision}\"]")
}

/// The tool call's `details.tool` holds `text` (its output or state).
async fn wait_tool(page: &Page<'_>, text: &str) {
    page.wait_for(
        &format!(
            "[...document.querySelectorAll('#conversation details.tool')]\
             .some(t => t.textContent.includes({}))",
            js_str(text)
        ),
        &format!("a tool call showing `{text}`"),
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_exec_approved_from_the_page_runs_once_and_a_denied_one_does_not() {
    let rig = Rig::start().await;
    let browser = crate::support::cdp::Browser::shared().await;
    let page = rig.signed_in(browser).await;

    rig.llama
        .push_replies([exec_call("echo web-approved-7"), Reply::text("ran it")]);
    say(&page, "run it").await;
    let id = pending_approval(&page, "echo web-approved-7").await;
    page.wait_for(
        "document.title.startsWith('(1) ')",
        "the title counts the waiting approval",
    )
    .await;
    for decision in [
        "approved_once",
        "approved_for_session",
        "approved_always",
        "denied",
    ] {
        assert!(
            page.text(&decision_button(&id, decision)).await.is_some(),
            "no {decision} button"
        );
    }
    page.click(&decision_button(&id, "approved_once")).await;
    wait_answer(&page, "ran it").await;
    wait_tool(&page, "web-approved-7").await;
    let decided = format!("#approvals .approval.decided[data-approval=\"{id}\"] .decided-by");
    page.wait_for_selector(&decided).await;
    let by = page.text(&decided).await.unwrap_or_default();
    assert!(by.contains("approved once by web"), "{by}");
    page.wait_for("!document.title.startsWith('(')", "the title's count gone")
        .await;

    rig.llama
        .push_replies([exec_call("echo web-denied-8"), Reply::text("not run")]);
    say(&page, "and this one").await;
    let denied = pending_approval(&page, "echo web-denied-8").await;
    page.click(&decision_button(&denied, "denied")).await;
    wait_answer(&page, "not run").await;
    let tool = "[...document.querySelectorAll('#conversation details.tool')].pop().querySelector('summary').textContent";
    page.wait_for(
        &format!("({tool}).includes('denied')"),
        "the tool call's state: denied",
    )
    .await;

    let session = open_session(&page).await;
    let transcript = rig.transcript(&session);
    let results: Vec<_> = transcript.iter().filter(|r| r["role"] == "tool").collect();
    assert_eq!(results.len(), 2, "{results:?}");
    assert_eq!(
        tool_results_with(&transcript, "web-approved-7"),
        1,
        "{results:?}"
    );
    assert!(
        results[1]["content"]
            .as_str()
            .is_some_and(|c| c.contains("denied")),
        "{results:?}"
    );

    // Reloaded from the transcript, which keeps a call's outcome (issue
    // 33): the call reads `ok` as it did live (an older transcript's,
    // without one, reads `done`, never a made-up `ok`).
    let url = page.eval("location.href").await;
    page.goto(url.as_str().expect("the page's URL")).await;
    super::rig::wait_ready(&page).await;
    page.click(&format!("#sessions li[data-session=\"{session}\"]"))
        .await;
    let state = |text: &str| {
        format!(
            "([...document.querySelectorAll('#conversation details.tool')]\
             .find(t => t.textContent.includes({})) || {{dataset: {{}}}}).dataset.state",
            js_str(text)
        )
    };
    page.wait_for(
        &format!("{} === 'ok'", state("web-approved-7")),
        "the reloaded call's state: ok",
    )
    .await;
    page.wait_for(
        &format!("{} === 'denied'", state("web-denied-8")),
        "the reloaded denied call's state: denied",
    )
    .await;
    page.assert_no_script_errors();
    rig.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_page_and_an_attached_tui_answer_one_approval_and_exactly_one_wins() {
    let rig = Rig::start().await;
    let browser = crate::support::cdp::Browser::shared().await;
    let page = rig.signed_in(browser).await;
    let mut tui = rig.attach_tui().await;

    rig.llama
        .push_replies([exec_call("echo raced-web-3"), Reply::text("done racing")]);
    say(&page, "race it").await;
    let id = pending_approval(&page, "echo raced-web-3").await;
    tui.wait_for("Approve exec?").await;
    tui.wait_for(ARMED).await;

    // Both at once.
    tui.send("y");
    page.click(&decision_button(&id, "approved_once")).await;

    wait_answer(&page, "done racing").await;
    let decided = format!("#approvals .approval.decided[data-approval=\"{id}\"] .decided-by");
    page.wait_for_selector(&decided).await;
    let by = page.text(&decided).await.unwrap_or_default();
    assert!(
        by.contains("approved once by tui") || by.contains("approved once by web"),
        "{by}"
    );
    assert_eq!(
        page.eval(&format!(
            "document.querySelectorAll('#approvals .approval[data-approval=\"{id}\"]').length"
        ))
        .await,
        1
    );
    let session = open_session(&page).await;
    assert_eq!(
        tool_results_with(&rig.transcript(&session), "raced-web-3"),
        1
    );
    // The TUI's modal closed whoever won.
    let deadline = tokio::time::Instant::now() + super::rig::WAIT;
    while tui.contents().contains("Approve exec?") {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the TUI's modal stayed open:\n{}",
            tui.contents()
        );
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    eprintln!("the race was won: {by}");
    tui.send("\x03\x03");
    assert_eq!(tui.exit_code().await, Some(0));
    page.assert_no_script_errors();
    rig.stop().await;
}
