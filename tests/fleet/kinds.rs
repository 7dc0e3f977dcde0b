//! vLLM- and Ollama-shaped servers (no /props, /apply-template or slots):
//! the kind is probed once, the context window comes from the server's own
//! answer, and counting uses what the server has.

use egirl::protocol::{ContextTrimmed, EventKind};

use crate::agent::{Harness, final_text, start};
use crate::support::cli::Cli;
use crate::support::fake_llama::{FakeLlama, Kind};

/// About 1,500 fake tokens per message: three turns overflow a 4096 window.
fn long_message(n: usize) -> String {
    format!("message {n}: {}", "lorem ipsum dolor sit amet ".repeat(220))
}

/// Three long turns against a server whose window is 4096 (the config says
/// 32768): the later turns are trimmed to the server's window.
async fn three_long_turns(fake: &FakeLlama) -> (Harness, Vec<u64>) {
    fake.set_n_ctx(4096);
    // Compaction off: what is measured is the window the trim uses (a
    // compaction that fits would leave nothing to trim).
    let mut h = start(fake, |c| {
        c.local.context_length = 32768;
        c.agent.compact_at = 0.0;
    });
    let mut windows = Vec::new();
    for n in 0..3 {
        h.send("s1", &long_message(n));
        let events = h.turn("s1").await;
        assert!(final_text(&events).is_some(), "{events:?}");
        windows.extend(events.iter().filter_map(|e| match e {
            EventKind::ContextTrimmed(ContextTrimmed { context_length, .. }) => {
                Some(*context_length)
            }
            _ => None,
        }));
    }
    (h, windows)
}

#[tokio::test]
async fn vllm_max_model_len_and_tokenize_are_used() {
    let fake = FakeLlama::start().await;
    fake.set_kind(Kind::Vllm);
    let (_h, windows) = three_long_turns(&fake).await;
    assert!(
        !windows.is_empty() && windows.iter().all(|&w| w == 4096),
        "trimmed to max_model_len, not the configured 32768: {windows:?}"
    );
    assert_eq!(fake.hits("/version"), 1, "probed once");
    assert_eq!(fake.hits("/v1/models"), 1);
    assert_eq!(fake.hits("/apply-template"), 0);
    // vLLM's own /tokenize: whole chats with the model named, and texts.
    let counted = fake.requests_to("/tokenize");
    assert!(
        counted
            .iter()
            .any(|b| b["messages"].is_array() && b["model"] == "fake-model"),
        "{counted:?}"
    );
    assert!(counted.iter().any(|b| b["prompt"].is_string()));
    assert!(!counted.iter().any(|b| b.get("content").is_some()));
    // No slots on vLLM: no id_slot, and nothing saved or restored.
    assert!(fake.requests().iter().all(|b| b.get("id_slot").is_none()));
}

#[tokio::test]
async fn ollama_context_comes_from_api_show_and_counts_are_estimated() {
    let fake = FakeLlama::start().await;
    fake.set_kind(Kind::Ollama);
    let (_h, windows) = three_long_turns(&fake).await;
    assert!(
        !windows.is_empty() && windows.iter().all(|&w| w == 4096),
        "trimmed to /api/show's length, not the configured 32768: {windows:?}"
    );
    assert_eq!(fake.hits("/api/version"), 1, "probed once");
    let shown = fake.requests_to("/api/show");
    assert_eq!(shown.len(), 1);
    assert_eq!(shown[0]["model"], "fake-model");
    // Ollama has no tokenizer endpoint: never asked, estimated instead.
    assert_eq!(fake.hits("/tokenize"), 0);
    assert_eq!(fake.hits("/apply-template"), 0);
}

/// `egirl doctor` through the real binary: each endpoint's kind and what
/// egirl can do with it.
#[tokio::test]
async fn doctor_names_each_endpoints_kind_and_capabilities() {
    let (llama, vllm, ollama) = (
        FakeLlama::start().await,
        FakeLlama::start().await,
        FakeLlama::start().await,
    );
    vllm.set_kind(Kind::Vllm);
    ollama.set_kind(Kind::Ollama);
    let extra = format!(
        "endpoints = [\"{}\", \"{}\"]\n[local.fast]\nendpoint = \"{}\"\nmodel = \"small\"\n",
        llama.url(),
        vllm.url(),
        ollama.url()
    );
    let cli = Cli::new(&llama, &extra);
    let out = cli.run(&["doctor"]).await;
    let text = String::from_utf8_lossy(&out.stdout);
    let line = |url: &str| {
        text.lines()
            .find(|l| l.contains(url))
            .unwrap_or_else(|| panic!("no line for {url}:\n{text}"))
            .to_string()
    };
    let l = line(&format!("local {}", llama.url()));
    assert!(
        l.contains("llama.cpp") && l.contains("slot save yes"),
        "{l}"
    );
    let v = line(&format!("local {}", vllm.url()));
    assert!(
        v.contains("vLLM") && v.contains("exact counts yes") && v.contains("slot save no"),
        "{v}"
    );
    let o = line(&format!("local-fast {}", ollama.url()));
    assert!(
        o.contains("Ollama") && o.contains("exact counts no") && o.contains("n_ctx 32768"),
        "{o}"
    );
}
