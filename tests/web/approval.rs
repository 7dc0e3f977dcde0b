//! A new host is asked about under `fetch = "ask"`: `a` allows it for the
//! session, `p` for good (the approvals file), `n` denies it before any
//! request; unattended turns are denied without a question.

use serde_json::json;

use egirl::protocol::{ApprovalRequest, EventKind, Op, Origin, ReviewDecision};

use super::{call, site};
use crate::agent::{start, tool_results};
use crate::support::fake_llama::{FakeLlama, Reply};

fn fetch(url: &str) -> Reply {
    Reply::tool_calls(&[("web_fetch", &json!({ "url": url }).to_string())])
}

/// Waits for the next approval request and answers it.
async fn answer(
    h: &mut crate::agent::Harness,
    decision: ReviewDecision,
) -> (String, Option<String>) {
    loop {
        if let EventKind::ApprovalRequest(ApprovalRequest {
            id,
            tool,
            command,
            rule,
            ..
        }) = h.next().await.kind
        {
            assert_eq!(tool, "web_fetch");
            h.agent.submit(Op::ApprovalDecision {
                id,
                decision,
                by: Origin::Tui,
            });
            return (command, rule);
        }
    }
}

fn asked(events: &[EventKind]) -> bool {
    events
        .iter()
        .any(|e| matches!(e, EventKind::ApprovalRequest(_)))
}

#[tokio::test]
async fn a_new_host_is_asked_and_a_or_p_remember_it() {
    let site = site().await;
    let fake = FakeLlama::start().await;
    let page = site.named("/page");
    fake.push_replies([
        fetch(&page),
        Reply::text("one"),
        fetch(&site.named("/r/0")),
        Reply::text("two"),
        fetch(&page),
        Reply::text("three"),
        fetch(&page),
        Reply::text("four"),
    ]);
    let mut h = start(&fake, |c| c.tools.web.allow_private = true);

    // `a`: the host, for this session.
    h.send("s1", "read it");
    let (command, rule) = answer(&mut h, ReviewDecision::ApprovedForSession).await;
    assert_eq!(command, page);
    assert_eq!(rule.as_deref(), Some("localhost"));
    let events = h.turn("s1").await;
    assert!(tool_results(&events)[0].1, "{events:?}");
    // The same host again in that session: no question.
    h.send("s1", "and that");
    let events = h.turn("s1").await;
    assert!(!asked(&events), "{events:?}");
    assert!(tool_results(&events)[0].2.contains("Kettle manual"));

    // Another session is asked again; `n` denies before any request.
    let before = site.seen.paths().len();
    h.send("s2", "read it");
    answer(&mut h, ReviewDecision::Denied).await;
    let events = h.turn("s2").await;
    let results = tool_results(&events);
    assert!(
        !results[0].1 && results[0].2.contains("denied by user"),
        "{results:?}"
    );
    assert_eq!(site.seen.paths().len(), before);

    // `p`: written to the approvals file's hosts.
    h.send("s3", "read it");
    answer(&mut h, ReviewDecision::ApprovedAlways).await;
    let events = h.turn("s3").await;
    assert!(tool_results(&events)[0].1, "{events:?}");
    let file = std::fs::read_to_string(h.workspace.join(".egirl/approvals.toml")).unwrap();
    let file: toml::Value = toml::from_str(&file).unwrap();
    assert_eq!(
        file["hosts"].as_array().unwrap()[0].as_str(),
        Some("localhost")
    );
}

#[tokio::test]
async fn unattended_turns_are_denied_what_would_ask() {
    let site = site().await;
    let fake = FakeLlama::start().await;
    fake.push_replies([fetch(&site.named("/page")), Reply::text("ok")]);
    let mut h = start(&fake, |c| c.tools.web.allow_private = true);
    h.agent.submit(Op::UserMessage {
        images: Vec::new(),
        session: "cron".into(),
        origin: Origin::Cron("news".into()),
        text: "read it".into(),
    });
    let events = h.turn("cron").await;
    assert!(!asked(&events), "{events:?}");
    let results = tool_results(&events);
    assert!(
        !results[0].1 && results[0].2.contains("nobody can approve"),
        "{results:?}"
    );
    assert!(site.seen.paths().is_empty());
}

#[tokio::test]
async fn headless_approve_exec_approves_a_host_and_allow_domains_skip_the_question() {
    let site = site().await;
    let url = json!({"url": site.named("/page")});
    let config = "[tools.web]\nallow_private = true\n";
    let ((ok, out), _, _) = call("web_fetch", url.clone(), config, &[], &[]).await;
    assert!(!ok && out.contains("denied by user"), "{out}");
    assert!(site.seen.paths().is_empty());

    let ((ok, out), _, _) = call("web_fetch", url.clone(), config, &["--approve-exec"], &[]).await;
    assert!(ok, "{out}");

    let config = "[tools.web]\nallow_private = true\nallow_domains = [\"localhost\"]\n";
    let ((ok, out), events, _) = call("web_fetch", url, config, &[], &[]).await;
    assert!(ok, "{out}");
    assert!(!events.iter().any(|e| e["type"] == "approval_request"));
}

#[tokio::test]
async fn webhook_turns_get_no_web_tool_unless_webhook_tools_lists_it() {
    let fake = FakeLlama::start().await;
    fake.push_replies([Reply::text("a"), Reply::text("b")]);
    let search = |c: &mut egirl::config::Config| {
        c.tools.web.search = Some(egirl::config::WebSearchConfig {
            provider: egirl::config::SearchProvider::Searxng,
            endpoint: Some("http://127.0.0.1:9".into()),
        });
    };
    let offered = |fake: &FakeLlama, i: usize| fake.requests()[i]["tools"].to_string();
    let mut h = start(&fake, search);
    h.agent.submit(Op::UserMessage {
        images: Vec::new(),
        session: "hook".into(),
        origin: Origin::Webhook,
        text: "hi".into(),
    });
    h.turn("hook").await;
    assert!(!offered(&fake, 0).contains("web_fetch"));
    assert!(!offered(&fake, 0).contains("web_search"));
    h.send("tui", "hi");
    h.turn("tui").await;
    assert!(offered(&fake, 1).contains("web_fetch") && offered(&fake, 1).contains("web_search"));

    let fake = FakeLlama::start().await;
    fake.push_replies([Reply::text("a")]);
    let mut h = start(&fake, |c| {
        search(c);
        c.webhook.tools = vec!["web_fetch".into()];
    });
    h.agent.submit(Op::UserMessage {
        images: Vec::new(),
        session: "hook".into(),
        origin: Origin::Webhook,
        text: "hi".into(),
    });
    h.turn("hook").await;
    assert!(offered(&fake, 0).contains("web_fetch"));
    assert!(!offered(&fake, 0).contains("web_search"));
}
