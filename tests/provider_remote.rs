//! Remote providers: which exist for a config and the keys at hand, plus
//! helpers the Anthropic and OpenAI suites share.

use std::time::Duration;

use egirl::chat::{ChatMessage, ToolCall, ToolSpec};
use egirl::config::{self, Secrets};
use egirl::providers::remote::{RemoteProvider, RemoteProviders};
use egirl::providers::remote_api::RetryPolicy;
use egirl::providers::{ChatRequest, ChatResponse, ProviderError, StreamChunk};
use secrecy::SecretString;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::support::fake_anthropic::{self, FakeAnthropic};
use crate::support::fake_openai::{self, FakeOpenAi};

pub const KEY: &str = "sk-test-very-secret-key-0123456789";

pub fn key() -> SecretString {
    SecretString::from(KEY.to_string())
}

/// Three retries with waits of a few milliseconds: the flow of the real
/// policy, none of its 30-second sleeps.
pub fn fast_retries() -> RetryPolicy {
    RetryPolicy {
        max_retries: 3,
        base_delay: Duration::from_millis(1),
        max_delay: Duration::from_millis(20),
    }
}

pub fn read_file_spec() -> ToolSpec {
    ToolSpec {
        name: "read_file",
        description: "Read a file in the workspace.",
        parameters: json!({"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}),
    }
}

pub fn request(messages: Vec<ChatMessage>) -> ChatRequest {
    ChatRequest {
        messages,
        tools: vec![read_file_spec()].into(),
        // Local figures: remote providers use their own max_tokens.
        max_tokens: 256,
        slot: Some(1),
        images: Default::default(),
    }
}

pub fn hello() -> ChatRequest {
    request(vec![
        ChatMessage::system("You are egirl."),
        ChatMessage::user("hi"),
    ])
}

pub fn call(id: &str, name: &str, arguments: Value) -> ToolCall {
    ToolCall {
        id: id.into(),
        name: name.into(),
        arguments,
        arguments_error: None,
    }
}

/// A conversation with two tool calls answered out of order, then more talk.
pub fn tool_history() -> Vec<ChatMessage> {
    let notes = call("call_a", "read_file", json!({"path": "notes.md"}));
    let todo = call("call_b", "read_file", json!({"path": "todo.md"}));
    vec![
        ChatMessage::system("You are egirl."),
        ChatMessage::user("What's in notes.md and todo.md?"),
        ChatMessage {
            tool_calls: vec![notes.clone(), todo.clone()],
            ..ChatMessage::assistant("Let me read both.")
        },
        ChatMessage::tool_result(&todo, "- buy milk"),
        ChatMessage::tool_result(&notes, "# Notes"),
        ChatMessage::assistant("Notes has a heading; todo says buy milk."),
        ChatMessage::user("Thanks! Now summarise."),
    ]
}

/// What a provider streamed, split by kind.
#[derive(Debug, Default)]
pub struct Streamed {
    pub texts: Vec<String>,
    pub reasoning: String,
}

impl Streamed {
    pub fn text(&self) -> String {
        self.texts.concat()
    }
}

pub async fn chat(
    provider: &RemoteProvider,
    req: &ChatRequest,
) -> (Result<ChatResponse, ProviderError>, Streamed) {
    chat_with(provider, req, &CancellationToken::new()).await
}

pub async fn chat_with(
    provider: &RemoteProvider,
    req: &ChatRequest,
    cancel: &CancellationToken,
) -> (Result<ChatResponse, ProviderError>, Streamed) {
    let mut streamed = Streamed::default();
    let mut on_chunk = |chunk: StreamChunk| match chunk {
        StreamChunk::Text(t) => streamed.texts.push(t),
        StreamChunk::Reasoning(r) => streamed.reasoning.push_str(&r),
    };
    let result = provider.chat(req, cancel, &mut on_chunk).await;
    (result, streamed)
}

/// An error as the user reads it: one line, never the key.
pub fn assert_one_clean_line(error: &ProviderError) -> String {
    let message = error.to_string();
    assert!(!message.contains('\n'), "{message}");
    assert!(!message.contains(KEY), "{message}");
    assert!(!message.contains("sk-test"), "{message}");
    message
}

fn parse(toml: &str) -> config::Config {
    config::parse(toml, std::path::Path::new("egirl.toml")).expect("config parses")
}

const ALL_THREE: &str = r#"
[remote.anthropic]
model = "claude-sonnet-4-5"

[remote.openai]
model = "gpt-4.1"

[remote.azure]
endpoint = "https://res.openai.azure.com"
deployment = "gpt4o-prod"
embedding_deployment = "emb"
"#;

#[test]
fn no_keys_means_local_only_with_a_notice_per_section() {
    let cfg = parse(ALL_THREE);
    let remote = RemoteProviders::from_config(&cfg.remote, &Secrets::default());
    assert!(remote.is_empty());
    assert!(remote.preferred().is_none());
    assert_eq!(
        remote.notices,
        [
            "anthropic disabled: ANTHROPIC_API_KEY is not set",
            "openai disabled: OPENAI_API_KEY is not set",
            "azure disabled: AZURE_OPENAI_API_KEY is not set",
        ]
    );
}

#[test]
fn no_remote_sections_means_no_providers_and_no_notices() {
    let secrets = Secrets {
        anthropic_api_key: Some(key()),
        ..Secrets::default()
    };
    let remote = RemoteProviders::from_config(&parse("").remote, &secrets);
    assert!(remote.is_empty());
    assert!(remote.notices.is_empty());
}

#[test]
fn keys_enable_their_providers_in_preference_order() {
    let cfg = parse(ALL_THREE);
    let secrets = Secrets {
        openai_api_key: Some(key()),
        azure_openai_api_key: Some(key()),
        ..Secrets::default()
    };
    let remote = RemoteProviders::from_config(&cfg.remote, &secrets);
    let names: Vec<&str> = remote.providers.iter().map(|p| p.name()).collect();
    assert_eq!(names, ["openai", "azure"]);
    assert_eq!(
        remote.notices,
        ["anthropic disabled: ANTHROPIC_API_KEY is not set"]
    );
    assert_eq!(remote.preferred().map(|p| p.model()), Some("gpt-4.1"));
    assert_eq!(remote.get("azure").map(|p| p.model()), Some("gpt4o-prod"));
    // Only Azure has an embeddings deployment configured.
    assert_eq!(remote.embedder().map(|e| e.name()), Some("azure"));
    // Debug output of the whole set never shows a key.
    let shown = format!("{remote:?}");
    assert!(!shown.contains(KEY), "{shown}");
}

#[test]
fn remote_settings_have_defaults_and_can_be_set() {
    let cfg = parse(ALL_THREE);
    let anthropic = cfg.remote.anthropic.expect("anthropic");
    assert_eq!(anthropic.base_url, "https://api.anthropic.com");
    assert_eq!(anthropic.max_tokens, 8192);
    assert_eq!(anthropic.timeout.0, Duration::from_secs(300));
    let openai = cfg.remote.openai.expect("openai");
    assert_eq!(openai.base_url, "https://api.openai.com/v1");
    assert_eq!(openai.embedding_model, None);
    assert_eq!(cfg.remote.azure.expect("azure").api_version, "2024-10-21");

    let cfg = parse(
        "[remote.openai]\nmodel = \"m\"\nbase_url = \"http://localhost:11434/v1\"\nmax_tokens = 100\ntimeout = \"20s\"\nembedding_model = \"e\"\n\n[pricing.\"m\"]\ninput_per_mtok = 1.0\noutput_per_mtok = 2.0\ncache_write_per_mtok = 1.5\n",
    );
    let openai = cfg.remote.openai.expect("openai");
    assert_eq!(openai.max_tokens, 100);
    assert_eq!(openai.timeout.0, Duration::from_secs(20));
    assert_eq!(openai.embedding_model.as_deref(), Some("e"));
    assert_eq!(cfg.pricing["m"].cache_write_per_mtok, Some(1.5));
}

#[tokio::test]
async fn both_providers_answer_through_the_same_call() {
    let anthropic = FakeAnthropic::start().await;
    let openai = FakeOpenAi::start().await;
    anthropic.push(fake_anthropic::Reply::text(&["from claude"]));
    openai.push(fake_openai::Reply::text(&["from gpt"]));
    let cfg = parse(&format!(
        "[remote.anthropic]\nmodel = \"claude-sonnet-4-5\"\nbase_url = \"{}\"\n\n[remote.openai]\nmodel = \"gpt-4.1\"\nbase_url = \"{}/v1\"\n",
        anthropic.url(),
        openai.url()
    ));
    let secrets = Secrets {
        anthropic_api_key: Some(key()),
        openai_api_key: Some(key()),
        ..Secrets::default()
    };
    let remote =
        RemoteProviders::from_config(&cfg.remote, &secrets).with_retry_policy(fast_retries());
    let mut answers = Vec::new();
    for provider in &remote.providers {
        let (result, _) = chat(provider, &hello()).await;
        let response = result.expect("reply");
        answers.push((provider.name(), response.content, response.model));
    }
    assert_eq!(
        answers,
        [
            (
                "anthropic",
                "from claude".to_string(),
                fake_anthropic::MODEL.to_string()
            ),
            (
                "openai",
                "from gpt".to_string(),
                fake_openai::MODEL.to_string()
            ),
        ]
    );
}

/// The repo's egirl.toml documents the remote sections as comments: with the
/// comment marks taken off, they parse and enable all three providers.
#[test]
fn the_documented_remote_examples_parse() {
    let repo = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/egirl.toml"))
        .expect("repo egirl.toml");
    let start = repo.find("# [remote.anthropic]").expect("remote examples");
    let end = start + repo[start..].find("\n[").expect("a section after them");
    let examples: String = repo[start..end]
        .lines()
        .map(|line| line.strip_prefix("# ").unwrap_or(line))
        .collect::<Vec<_>>()
        .join("\n");
    let cfg = parse(&examples);
    let secrets = Secrets {
        anthropic_api_key: Some(key()),
        openai_api_key: Some(key()),
        azure_openai_api_key: Some(key()),
        ..Secrets::default()
    };
    let remote = RemoteProviders::from_config(&cfg.remote, &secrets);
    let names: Vec<&str> = remote.providers.iter().map(|p| p.name()).collect();
    assert_eq!(names, ["anthropic", "openai", "azure"]);
    assert!(remote.notices.is_empty());
}
