//! The llama.cpp provider against the fake llama-server.

use egirl::chat::{ChatMessage, ToolCall, ToolSpec};
use egirl::config::{ConfigDuration, LocalConfig, ToolFormat};
use egirl::providers::llamacpp::{ChatRequest, LlamaCpp};
use egirl::providers::{ChatResponse, ProviderError, StreamChunk};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::support::fake_llama::{FakeLlama, Reply};

mod errors;
mod wire;

fn config(url: &str, format: ToolFormat) -> LocalConfig {
    LocalConfig {
        endpoint: url.to_string(),
        model: "test-model".into(),
        tool_format: format,
        timeout: ConfigDuration::from_secs(10),
        ..LocalConfig::default()
    }
}

fn provider(fake: &FakeLlama, format: ToolFormat) -> LlamaCpp {
    LlamaCpp::new(&config(&fake.url(), format))
}

fn read_file_spec() -> ToolSpec {
    ToolSpec {
        name: "read_file",
        description: "Read a file in the workspace.",
        parameters: json!({"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}),
    }
}

fn request(messages: Vec<ChatMessage>) -> ChatRequest {
    ChatRequest {
        messages,
        tools: vec![read_file_spec()].into(),
        max_tokens: 256,
        slot: None,
        images: Default::default(),
    }
}

fn hello() -> ChatRequest {
    request(vec![
        ChatMessage::system("You are egirl."),
        ChatMessage::user("hi"),
    ])
}

/// What the provider streamed, split by kind.
#[derive(Default)]
struct Streamed {
    texts: Vec<String>,
    reasoning: String,
}

impl Streamed {
    fn text(&self) -> String {
        self.texts.concat()
    }
}

async fn chat(
    llama: &LlamaCpp,
    req: &ChatRequest,
) -> (Result<ChatResponse, ProviderError>, Streamed) {
    chat_with(llama, req, &CancellationToken::new()).await
}

async fn chat_with(
    llama: &LlamaCpp,
    req: &ChatRequest,
    cancel: &CancellationToken,
) -> (Result<ChatResponse, ProviderError>, Streamed) {
    let mut streamed = Streamed::default();
    let mut on_chunk = |chunk: StreamChunk| match chunk {
        StreamChunk::Text(t) => streamed.texts.push(t),
        StreamChunk::Reasoning(r) => streamed.reasoning.push_str(&r),
    };
    let result = llama.chat(req, cancel, &mut on_chunk).await;
    (result, streamed)
}

fn call(id: &str, name: &str, arguments: Value) -> ToolCall {
    ToolCall {
        id: id.into(),
        name: name.into(),
        arguments,
        arguments_error: None,
    }
}

#[tokio::test]
async fn streams_text_in_chunks() {
    let fake = FakeLlama::start().await;
    fake.push_reply(Reply::chunks(&["Hel", "lo, ", "wor", "ld!"]));
    let (result, streamed) = chat(&provider(&fake, ToolFormat::Auto), &hello()).await;
    let response = result.expect("reply");
    assert_eq!(streamed.texts, ["Hel", "lo,", " wor", "ld!"]);
    assert_eq!(response.content, "Hello, world!");
    assert_eq!(response.message, ChatMessage::assistant("Hello, world!"));
    assert_eq!(response.finish_reason.as_deref(), Some("stop"));
    assert_eq!(response.model, "test-model");
    assert!(response.tool_calls.is_empty());
}

#[tokio::test]
async fn native_tool_calls_split_across_chunks() {
    let fake = FakeLlama::start().await;
    fake.push_reply(
        Reply::tool_calls(&[
            ("read_file", r#"{"path": "notes.md"}"#),
            ("read_file", r#"{"path": "todo.md"}"#),
        ])
        .with_text("Reading both."),
    );
    let (result, streamed) = chat(&provider(&fake, ToolFormat::Native), &hello()).await;
    let response = result.expect("reply");
    let expected = vec![
        call("fake_call_0", "read_file", json!({"path": "notes.md"})),
        call("fake_call_1", "read_file", json!({"path": "todo.md"})),
    ];
    assert_eq!(response.tool_calls, expected);
    assert_eq!(response.message.tool_calls, expected);
    assert_eq!(response.message.content, "Reading both.");
    assert_eq!(streamed.text(), "Reading both.");
    assert_eq!(response.finish_reason.as_deref(), Some("tool_calls"));
}

#[tokio::test]
async fn native_malformed_arguments_get_an_error() {
    let fake = FakeLlama::start().await;
    fake.push_reply(Reply::tool_calls(&[
        ("read_file", r#"{"path": "a" "b"}"#),
        ("read_file", "{'path': 'ok.md',}"),
    ]));
    let (result, _) = chat(&provider(&fake, ToolFormat::Auto), &hello()).await;
    let response = result.expect("reply");
    let broken = &response.tool_calls[0];
    assert_eq!(broken.name, "read_file");
    assert_eq!(broken.arguments, Value::Null);
    let error = broken.arguments_error.as_deref().unwrap_or_default();
    assert!(
        error.starts_with("the arguments are not valid JSON"),
        "{error}"
    );
    assert_eq!(
        response.tool_calls[1],
        call("fake_call_1", "read_file", json!({"path": "ok.md"}))
    );
}

#[tokio::test]
async fn qwen3_tool_call_in_content() {
    let fake = FakeLlama::start().await;
    let reply = "Let me look.\n<tool_call>\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"a.md\"}}\n</tool_call>";
    fake.push_reply(Reply::chunks(&[
        "Let me look.\n<tool",
        "_call>\n{\"name\": \"read_file\", ",
        "\"arguments\": {\"path\": \"a.md\"}}\n</tool_",
        "call>",
    ]));
    let (result, streamed) = chat(&provider(&fake, ToolFormat::Auto), &hello()).await;
    let response = result.expect("reply");
    assert_eq!(streamed.text(), "Let me look.");
    assert!(
        streamed.texts.iter().all(|t| !t.contains('<')),
        "{:?}",
        streamed.texts
    );
    assert_eq!(response.content, "Let me look.");
    assert_eq!(
        response.tool_calls,
        vec![call("call_0", "read_file", json!({"path": "a.md"}))]
    );
    // Kept byte for byte for the history.
    assert_eq!(response.message.content, reply);
    assert_eq!(response.message.tool_calls, response.tool_calls);
}

#[tokio::test]
async fn qwen3_several_calls_in_one_reply() {
    let fake = FakeLlama::start().await;
    fake.push_reply(Reply::text(
        "<tool_call>\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"a\"}}\n</tool_call>\n\
         <tool_call>\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"b\"}}\n</tool_call>\n\
         <tool_call>\n{\"name\": \"glob\", \"arguments\": {\"pattern\": \"*.md\"}}\n</tool_call>",
    ));
    let (result, streamed) = chat(&provider(&fake, ToolFormat::Qwen3), &hello()).await;
    let response = result.expect("reply");
    assert_eq!(streamed.text(), "");
    assert_eq!(
        response.tool_calls,
        vec![
            call("call_0", "read_file", json!({"path": "a"})),
            call("call_1", "read_file", json!({"path": "b"})),
            call("call_2", "glob", json!({"pattern": "*.md"})),
        ]
    );
}

#[tokio::test]
async fn qwen3_single_quotes_are_repaired() {
    let fake = FakeLlama::start().await;
    fake.push_reply(Reply::text(
        "<tool_call>\n{'name': 'read_file', 'arguments': {'path': 'it\\'s.md'}}\n</tool_call>",
    ));
    let (result, _) = chat(&provider(&fake, ToolFormat::Auto), &hello()).await;
    let response = result.expect("reply");
    assert_eq!(
        response.tool_calls,
        vec![call("call_0", "read_file", json!({"path": "it's.md"}))]
    );
}

#[tokio::test]
async fn qwen3_call_unclosed_at_max_tokens() {
    let fake = FakeLlama::start().await;
    fake.push_reply(
        Reply::text(
            "Reading.\n<tool_call>\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"a.md\"}",
        )
        .finish_reason("length"),
    );
    let (result, streamed) = chat(&provider(&fake, ToolFormat::Auto), &hello()).await;
    let response = result.expect("reply");
    assert_eq!(streamed.text(), "Reading.");
    assert_eq!(response.finish_reason.as_deref(), Some("length"));
    assert_eq!(
        response.tool_calls,
        vec![call("call_0", "read_file", json!({"path": "a.md"}))]
    );
}

#[tokio::test]
async fn qwen3_call_inside_think_is_not_run() {
    let fake = FakeLlama::start().await;
    fake.push_reply(Reply::text(
        "<think>\nI could <tool_call>\n{\"name\": \"exec\", \"arguments\": {\"command\": \"rm x\"}}\n</tool_call> but no.\n</think>\n\nNo need to run anything.",
    ));
    let (result, streamed) = chat(&provider(&fake, ToolFormat::Auto), &hello()).await;
    let response = result.expect("reply");
    assert!(response.tool_calls.is_empty());
    assert_eq!(response.content, "No need to run anything.");
    assert_eq!(streamed.text(), "No need to run anything.");
    assert!(streamed.reasoning.contains("rm x"));
    assert!(response.reasoning.contains("I could"));
    assert_eq!(response.message.content, "No need to run anything.");
}

#[tokio::test]
async fn qwen3_malformed_arguments_give_arguments_error() {
    let fake = FakeLlama::start().await;
    fake.push_reply(Reply::text(
        "<tool_call>\n{\"name\": \"read_file\", \"arguments\": {\"path\" \"a\"}}\n</tool_call>",
    ));
    let (result, _) = chat(&provider(&fake, ToolFormat::Qwen3), &hello()).await;
    let response = result.expect("reply");
    let c = &response.tool_calls[0];
    assert_eq!((c.id.as_str(), c.name.as_str()), ("call_0", "read_file"));
    assert_eq!(c.arguments, Value::Null);
    assert!(
        c.arguments_error
            .as_deref()
            .unwrap_or_default()
            .contains("not valid JSON")
    );
}

#[tokio::test]
async fn reasoning_content_streams_as_reasoning() {
    let fake = FakeLlama::start().await;
    fake.push_reply(Reply::text("Answer.").with_reasoning("Think first."));
    let (result, streamed) = chat(&provider(&fake, ToolFormat::Native), &hello()).await;
    let response = result.expect("reply");
    assert_eq!(streamed.reasoning, "Think first.");
    assert_eq!(response.reasoning, "Think first.");
    assert_eq!(response.content, "Answer.");
}

#[tokio::test]
async fn native_mode_still_separates_think() {
    let fake = FakeLlama::start().await;
    fake.push_reply(Reply::text("<think>hmm</think>Use <tool_call> tags."));
    let (result, streamed) = chat(&provider(&fake, ToolFormat::Native), &hello()).await;
    let response = result.expect("reply");
    assert_eq!(streamed.text(), "Use <tool_call> tags.");
    assert_eq!(streamed.reasoning, "hmm");
    assert!(response.tool_calls.is_empty());
}
