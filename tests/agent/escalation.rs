//! Routing and escalation through the core: the router sends code remote,
//! a hedging local answer is replayed remotely with the local attempt and
//! a hand-off note, "use claude" goes remote at once, no keys stay local,
//! and a failing remote side falls back to the local model.

use egirl::config::{ConfigDuration, OpenAiConfig};
use egirl::protocol::{Escalation, EventKind, Notice, Routing, Target, TokenUsage};
use egirl::providers::openai::OpenAi;
use egirl::providers::remote::{RemoteProvider, RemoteProviders};
use egirl::providers::remote_api::RetryPolicy;
use egirl::routing::NO_REMOTE_REASON;

use super::{Harness, final_text, read_jsonl, start, start_with_remote};
use crate::support::fake_llama::{FakeLlama, Reply as LocalReply};
use crate::support::fake_openai::{FakeOpenAi, Reply as RemoteReply};

pub(super) fn remote(fake: &FakeOpenAi) -> RemoteProviders {
    let cfg = OpenAiConfig {
        model: "gpt-4.1".into(),
        base_url: format!("{}/v1", fake.url()),
        max_tokens: 1000,
        timeout: ConfigDuration::from_secs(10),
        embedding_model: None,
    };
    let key = secrecy::SecretString::from("sk-test-0000".to_string());
    RemoteProviders {
        providers: vec![RemoteProvider::OpenAi(
            OpenAi::new(&cfg, key).with_retry_policy(RetryPolicy::never()),
        )],
        notices: Vec::new(),
    }
}

fn routing(events: &[EventKind]) -> (Target, String, String) {
    events
        .iter()
        .find_map(|e| match e {
            EventKind::Routing(Routing { route, reason, .. }) => {
                Some((route.target(), route.provider().to_string(), reason.clone()))
            }
            _ => None,
        })
        .expect("a routing event")
}

async fn both() -> (FakeLlama, FakeOpenAi, Harness) {
    let local = FakeLlama::start().await;
    let cloud = FakeOpenAi::start().await;
    let h = start_with_remote(&local, remote(&cloud), |_| {});
    (local, cloud, h)
}

#[tokio::test]
async fn code_goes_remote_and_chat_stays_local() {
    let (local, cloud, mut h) = both().await;
    cloud.push(RemoteReply::text(&[
        "fn parse(s: &str) ",
        "-> Date { todo!() }",
    ]));
    h.send(
        "s",
        "write a Rust function that parses ISO 8601 dates, with tests",
    );
    let events = h.turn("s").await;
    let (target, provider, reason) = routing(&events);
    assert_eq!(
        (target, provider.as_str()),
        (Target::Remote, "openai"),
        "{reason}"
    );
    assert_eq!(
        final_text(&events).as_deref(),
        Some("fn parse(s: &str) -> Date { todo!() }")
    );
    assert_eq!(local.hits("/v1/chat/completions"), 0);
    // Usage names the remote provider, prices it and times it.
    assert!(events.iter().any(|e| matches!(e,
        EventKind::Usage(TokenUsage { provider, cost_usd, latency_ms: Some(_), .. })
            if provider == "openai" && *cost_usd > 0.0)));

    local.push_reply(LocalReply::text("Hey! All good here."));
    h.send("s", "hey, how's it going?");
    let events = h.turn("s").await;
    assert_eq!(routing(&events).0, Target::Local);
    assert_eq!(cloud.hits(), 1, "a greeting never reaches the remote API");
}

#[tokio::test]
async fn a_hedging_local_answer_is_replayed_remotely() {
    let (local, cloud, mut h) = both().await;
    local.push_reply(LocalReply::text("I'm not sure, maybe Sydney?"));
    cloud.push(RemoteReply::text(&["Canberra."]));
    h.send("s", "what's the capital of Australia?");
    let events = h.turn("s").await;
    assert_eq!(routing(&events).0, Target::Local);
    let escalation = events
        .iter()
        .find_map(|e| match e {
            EventKind::Escalation(Escalation {
                from,
                to,
                trigger,
                reason,
            }) => Some((
                from.to_string(),
                to.to_string(),
                trigger.clone(),
                reason.clone(),
            )),
            _ => None,
        })
        .expect("an escalation event");
    assert_eq!(escalation.0, "llamacpp/fake-model");
    assert_eq!(escalation.1, "openai/gpt-4.1");
    assert_eq!(escalation.2, "hedging");
    // Only the remote answer is final; the local attempt stays on record.
    let finals: Vec<&EventKind> = events
        .iter()
        .filter(|e| matches!(e, EventKind::Final(_)))
        .collect();
    assert_eq!(finals.len(), 1);
    assert_eq!(final_text(&events).as_deref(), Some("Canberra."));
    let transcript = h.transcript("s");
    let texts: Vec<&str> = transcript
        .iter()
        .filter_map(|r| r["content"].as_str())
        .collect();
    assert!(texts.contains(&"I'm not sure, maybe Sydney?"), "{texts:?}");
    assert_eq!(texts.last(), Some(&"Canberra."));
    // Each reply names who wrote it (the distillation export needs it).
    let providers: Vec<&str> = transcript
        .iter()
        .filter(|r| r["role"] == "assistant")
        .filter_map(|r| r["provider"].as_str())
        .collect();
    assert_eq!(providers, ["llamacpp", "openai"]);
    assert!(
        !texts.iter().any(|t| t.contains("[egirl]")),
        "the hand-off note is never saved"
    );
    // The remote request: the question, the local attempt, then the note.
    let body = &cloud.requests()[0].body;
    let messages = body["messages"].as_array().expect("messages");
    let n = messages.len();
    assert_eq!(messages[n - 2]["role"], "assistant");
    assert_eq!(messages[n - 2]["content"], "I'm not sure, maybe Sydney?");
    assert_eq!(messages[n - 1]["role"], "user");
    let note = messages[n - 1]["content"].as_str().expect("note");
    assert!(
        note.contains("smaller local model") && note.contains("hedged"),
        "{note}"
    );
    // And the log for tuning the router.
    let log = read_jsonl(&h.workspace.join(".egirl/escalation.jsonl"));
    assert_eq!(log.len(), 1);
    assert_eq!(log[0]["trigger"], "hedging");
    assert_eq!(log[0]["session"], "s");
}

#[tokio::test]
async fn asking_for_claude_goes_remote_at_once() {
    let (local, cloud, mut h) = both().await;
    cloud.push(RemoteReply::text(&["Sure."]));
    h.send("s", "use claude for this: is 7919 prime?");
    let events = h.turn("s").await;
    let (target, _, reason) = routing(&events);
    assert_eq!(target, Target::Remote);
    assert!(reason.contains("use claude"), "{reason}");
    assert_eq!(local.hits("/v1/chat/completions"), 0);
    // Logged like any escalation (the distillation export reads it).
    assert!(events.iter().any(
        |e| matches!(e, EventKind::Escalation(Escalation { trigger, .. }) if trigger == "user")
    ));
    let log = read_jsonl(&h.workspace.join(".egirl/escalation.jsonl"));
    assert_eq!(log[0]["trigger"], "user");
}

#[tokio::test]
async fn without_keys_everything_stays_local_and_says_why() {
    let local = FakeLlama::start().await;
    let mut h = start(&local, |_| {});
    local.push_reply(LocalReply::text("fn main() {}"));
    h.send(
        "s",
        "write a Rust function that parses ISO 8601 dates, with tests",
    );
    let events = h.turn("s").await;
    let (target, provider, reason) = routing(&events);
    assert_eq!((target, provider.as_str()), (Target::Local, "llamacpp"));
    assert_eq!(reason, NO_REMOTE_REASON);
    assert!(!events.iter().any(|e| matches!(e, EventKind::Escalation(_))));
}

#[tokio::test]
async fn a_failing_remote_side_falls_back_to_local() {
    let (local, cloud, mut h) = both().await;
    cloud.push(RemoteReply::error(500, "overloaded"));
    local.push_reply(LocalReply::text("Here is a local attempt."));
    h.send(
        "s",
        "write a Rust function that parses ISO 8601 dates, with tests",
    );
    let events = h.turn("s").await;
    assert_eq!(routing(&events).0, Target::Remote);
    let notice = events
        .iter()
        .find_map(|e| match e {
            EventKind::Notice(Notice { message }) => Some(message.clone()),
            _ => None,
        })
        .expect("a notice");
    assert!(
        notice.starts_with("openai failed") && notice.ends_with("answering locally"),
        "{notice}"
    );
    assert_eq!(
        final_text(&events).as_deref(),
        Some("Here is a local attempt.")
    );
}

/// A llama-server stream whose tokens carry these logprobs.
fn with_logprobs(tokens: &[(&str, f64)]) -> LocalReply {
    let mut sse = String::new();
    for (token, logprob) in tokens {
        let frame = serde_json::json!({
            "choices": [{"index": 0, "delta": {"content": token},
                "logprobs": {"content": [{"token": token, "logprob": logprob, "top_logprobs": []}]}}],
            "model": "fake-model"
        });
        sse.push_str(&format!("data: {frame}\n\n"));
    }
    let end = serde_json::json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}], "model": "fake-model"});
    sse.push_str(&format!("data: {end}\n\ndata: [DONE]\n\n"));
    LocalReply::raw_sse(&sse)
}

#[tokio::test]
async fn a_low_confidence_local_answer_escalates_and_logprobs_are_asked_for() {
    let (local, cloud, mut h) = both().await;
    // exp(-1.5) = 0.22, below the default threshold of 0.4.
    local.push_reply(with_logprobs(&[
        ("It ", -1.5),
        ("is ", -1.5),
        ("Perth.", -1.5),
    ]));
    cloud.push(RemoteReply::text(&["Canberra."]));
    h.send("s", "what's the capital of Australia?");
    let events = h.turn("s").await;
    let trigger = events.iter().find_map(|e| match e {
        EventKind::Escalation(Escalation {
            trigger, reason, ..
        }) => Some((trigger.clone(), reason.clone())),
        _ => None,
    });
    assert_eq!(
        trigger,
        Some((
            "low_confidence".to_string(),
            "local confidence 0.22 is below the threshold 0.40".to_string()
        ))
    );
    assert_eq!(final_text(&events).as_deref(), Some("Canberra."));
    let asked = &local.requests_to("/v1/chat/completions")[0];
    assert_eq!(asked["logprobs"], true);
    assert_eq!(asked["top_logprobs"], 1);

    // A confident answer stays.
    local.push_reply(with_logprobs(&[("Wellington", -0.05), (".", -0.01)]));
    h.send("s", "and the capital of New Zealand?");
    let events = h.turn("s").await;
    assert!(!events.iter().any(|e| matches!(e, EventKind::Escalation(_))));
    assert_eq!(final_text(&events).as_deref(), Some("Wellington."));
}

#[tokio::test]
async fn without_a_remote_side_no_logprobs_are_asked_for() {
    let local = FakeLlama::start().await;
    let mut h = start(&local, |_| {});
    local.push_reply(LocalReply::text("Hi!"));
    h.send("s", "hi");
    h.turn("s").await;
    let asked = &local.requests_to("/v1/chat/completions")[0];
    assert!(asked.get("logprobs").is_none(), "{asked}");
}

#[tokio::test]
async fn slash_escalate_replays_the_conversation_remotely() {
    use crossterm::event::KeyCode;
    // The TUI turns /escalate into a message for the session...
    let mut app = crate::tui::app();
    crate::tui::type_text(&mut app, "/escalate");
    let sent = crate::tui::ops(crate::tui::press(&mut app, crate::tui::key(KeyCode::Enter)));
    let text = match sent.as_slice() {
        [egirl::protocol::Op::UserMessage { text, .. }] => text.clone(),
        other => panic!("{other:?}"),
    };
    assert_eq!(text, egirl::surfaces::tui::commands::ESCALATE_TEXT);

    // ...which the core sends remote with the local attempt in the history.
    let (local, cloud, mut h) = both().await;
    local.push_reply(LocalReply::text("Probably around 300 km."));
    h.send("s", "how far is it from Lyon to Geneva by road, roughly?");
    h.turn("s").await;
    cloud.push(RemoteReply::text(&["About 150 km (1 h 45 min)."]));
    h.send("s", &text);
    let events = h.turn("s").await;
    let (target, provider, reason) = routing(&events);
    assert_eq!(
        (target, provider.as_str()),
        (Target::Remote, "openai"),
        "{reason}"
    );
    let body = &cloud.requests()[0].body;
    let history = body["messages"].to_string();
    assert!(history.contains("Probably around 300 km."), "{history}");
}

#[tokio::test]
async fn a_tool_that_suggests_it_moves_the_rest_of_the_turn_remote() {
    let (local, cloud, mut h) = both().await;
    std::fs::write(h.workspace.join("todo.md"), "- buy milk\n").expect("write");
    // edit_file cannot find the text and suggests a stronger model.
    local.push_reply(LocalReply::tool_calls(&[(
        "edit_file",
        r#"{"path": "todo.md", "old_text": "- buy bread", "new_text": "- buy oat milk"}"#,
    )]));
    cloud.push(RemoteReply::text(&[
        "The list has no bread; I left it as is.",
    ]));
    h.send("s", "in todo.md change bread to oat milk");
    let events = h.turn("s").await;
    let trigger = events.iter().find_map(|e| match e {
        EventKind::Escalation(Escalation { trigger, .. }) => Some(trigger.clone()),
        _ => None,
    });
    assert_eq!(trigger.as_deref(), Some("tool_suggested"));
    assert_eq!(
        final_text(&events).as_deref(),
        Some("The list has no bread; I left it as is.")
    );
    // The remote model got the tool history as it stood: the call and its
    // failed result, paired.
    let body = &cloud.requests()[0].body;
    let messages = body["messages"].as_array().expect("messages");
    let call = messages
        .iter()
        .find(|m| m["role"] == "assistant" && m["tool_calls"].is_array())
        .expect("the local tool call is replayed");
    assert_eq!(call["tool_calls"][0]["function"]["name"], "edit_file");
    let result = messages
        .iter()
        .find(|m| m["role"] == "tool")
        .expect("its result");
    assert_eq!(result["tool_call_id"], call["tool_calls"][0]["id"]);
    assert_eq!(local.hits("/v1/chat/completions"), 1);
}

#[tokio::test]
async fn a_quiet_heartbeat_is_never_escalated() {
    let local = FakeLlama::start().await;
    let cloud = FakeOpenAi::start().await;
    // No classification request: the one scripted reply is the heartbeat's.
    let mut h = start_with_remote(&local, remote(&cloud), |c| c.routing.classify = false);
    local.push_reply(LocalReply::text("HEARTBEAT_OK"));
    let prompt = egirl::surfaces::heartbeat::prompt(
        "- check the calendar for anything in the next two hours\n- check the mail",
    );
    assert!(h.agent.submit(egirl::protocol::Op::UserMessage {
        images: Vec::new(),
        session: "heartbeat".into(),
        origin: egirl::protocol::Origin::Heartbeat,
        text: prompt,
    }));
    let events = h.turn("heartbeat").await;
    assert!(
        !events.iter().any(|e| matches!(e, EventKind::Escalation(_))),
        "{events:?}"
    );
    assert_eq!(cloud.hits(), 0);
    assert!(!h.workspace.join(".egirl/escalation.jsonl").exists());
}

#[tokio::test]
async fn a_failing_remote_is_tried_once_per_turn() {
    let local = FakeLlama::start().await;
    let cloud = FakeOpenAi::start().await;
    let mut h = start_with_remote(&local, remote(&cloud), |c| c.routing.classify = false);
    // Hedges every time; the remote side has nothing scripted (fails).
    local.push_replies([
        LocalReply::text("I'm not sure, maybe check the docs?"),
        LocalReply::text("I'm not sure, maybe check the docs?"),
    ]);
    h.send("s", "what's the capital of Australia?");
    let events = h.turn("s").await;
    let escalations = events
        .iter()
        .filter(|e| matches!(e, EventKind::Escalation(_)))
        .count();
    assert_eq!(escalations, 1, "{events:?}");
    assert_eq!(
        final_text(&events).as_deref(),
        Some("I'm not sure, maybe check the docs?")
    );
}
