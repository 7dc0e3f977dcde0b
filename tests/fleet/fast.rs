//! `[local.fast]`: the router's classification, heartbeat turns and (with
//! `[routing] fast_for_quick`) quick turns go to the fast model.

use egirl::config::{ConfigDuration, FastConfig, OpenAiConfig};
use egirl::protocol::{Op, Origin};
use egirl::providers::openai::OpenAi;
use egirl::providers::remote::{RemoteProvider, RemoteProviders};
use egirl::providers::remote_api::RetryPolicy;

use super::{received, routings};
use crate::agent::{Harness, final_text, start, start_with_remote};
use crate::support::fake_llama::{FakeLlama, Reply};
use crate::support::fake_openai::FakeOpenAi;

fn fast_section(fast: &FakeLlama) -> FastConfig {
    FastConfig {
        endpoint: fast.url(),
        model: "small-model".into(),
        ..FastConfig::default()
    }
}

fn remote(fake: &FakeOpenAi) -> RemoteProviders {
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

/// The heuristics are unsure: "local or remote?" goes to the fast model
/// (with the classification's tiny token budget); the turn itself goes to
/// the main model, whose server never sees the question.
#[tokio::test]
async fn classification_goes_to_the_fast_model() {
    let (main, fast) = (FakeLlama::start().await, FakeLlama::start().await);
    let cloud = FakeOpenAi::start().await;
    fast.push_reply(Reply::text("local"));
    let section = fast_section(&fast);
    let mut h = start_with_remote(&main, remote(&cloud), |c| c.local.fast = Some(section));
    let text = "Why does 0.1 + 0.2 != 0.3 in JavaScript?";
    h.send("s1", text);
    let events = h.turn("s1").await;
    assert!(final_text(&events).is_some(), "{events:?}");
    let asked = fast.requests();
    assert_eq!(asked.len(), 1, "{asked:?}");
    assert_eq!(asked[0]["model"], "small-model");
    assert!(asked[0]["max_tokens"].as_u64().unwrap_or(99) <= 8);
    assert!(asked[0].to_string().contains("local or remote"));
    assert!(
        !main
            .requests()
            .iter()
            .any(|r| r.to_string().contains("local or remote"))
    );
    assert!(received(&main, text));
    let routes = routings(&events);
    assert_eq!(routes[0].0, "local", "{routes:?}");
    assert!(routes[0].2.contains("local model says local"), "{routes:?}");
}

/// A heartbeat turn runs on the fast model; the routing event says so.
#[tokio::test]
async fn heartbeat_turns_go_to_the_fast_model() {
    let (main, fast) = (FakeLlama::start().await, FakeLlama::start().await);
    fast.push_reply(Reply::text("HEARTBEAT_OK"));
    let section = fast_section(&fast);
    let mut h = start(&main, |c| c.local.fast = Some(section));
    assert!(h.agent.submit(Op::UserMessage {
        images: Vec::new(),
        session: "heartbeat".into(),
        origin: Origin::Heartbeat,
        text: "Read HEARTBEAT.md and check on things.".into(),
    }));
    let events = h.turn("heartbeat").await;
    assert_eq!(fast.requests().len(), 1);
    assert!(main.requests().is_empty());
    let routes = routings(&events);
    assert_eq!(routes[0].0, "local-fast");
    assert_eq!(routes[0].1, "small-model");
}

async fn quick_and_hard(fast_for_quick: bool) -> (FakeLlama, FakeLlama, Harness) {
    let (main, fast) = (FakeLlama::start().await, FakeLlama::start().await);
    let section = fast_section(&fast);
    let h = start(&main, |c| {
        c.local.fast = Some(section);
        c.routing.fast_for_quick = fast_for_quick;
    });
    (main, fast, h)
}

/// With `fast_for_quick`, a greeting goes to the fast model and a planning
/// request to the main one; without it, both go to the main model.
#[tokio::test]
async fn quick_turns_go_fast_only_when_asked() {
    let greeting = "hey, good morning!";
    let hard = "plan a two-week trip through Portugal on a tight budget, with train times and a day-by-day schedule";

    let (main, fast, mut h) = quick_and_hard(true).await;
    h.send("s1", greeting);
    let events = h.turn("s1").await;
    assert_eq!(routings(&events)[0].0, "local-fast", "{events:?}");
    assert!(received(&fast, greeting) && !received(&main, greeting));
    h.send("s1", hard);
    let events = h.turn("s1").await;
    assert_eq!(routings(&events)[0].0, "local", "{events:?}");
    assert!(received(&main, hard) && !received(&fast, hard));

    let (main, fast, mut h) = quick_and_hard(false).await;
    h.send("s1", greeting);
    let events = h.turn("s1").await;
    assert_eq!(routings(&events)[0].0, "local");
    assert!(received(&main, greeting));
    assert!(fast.requests().is_empty());
}
