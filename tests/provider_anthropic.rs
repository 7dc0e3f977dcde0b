//! The Anthropic provider against the fake Messages API.

use std::time::Duration;

use egirl::chat::{ChatMessage, ToolCall};
use egirl::config::{AnthropicConfig, ConfigDuration};
use egirl::providers::anthropic::Anthropic;
use egirl::providers::remote::RemoteProvider;
use egirl::providers::remote_api::RetryPolicy;
use egirl::providers::{ProviderError, StreamChunk};
use serde_json::json;
use tokio_util::sync::CancellationToken;

use crate::provider_remote::{
    KEY, assert_one_clean_line, call, chat, chat_with, fast_retries, hello, key, request,
    tool_history,
};
use crate::support::fake_anthropic::{FakeAnthropic, MODEL, Reply};

fn config(url: &str) -> AnthropicConfig {
    AnthropicConfig {
        model: "claude-sonnet-4-5".into(),
        base_url: url.to_string(),
        max_tokens: 1024,
        timeout: ConfigDuration::from_secs(10),
    }
}

fn provider(fake: &FakeAnthropic) -> RemoteProvider {
    RemoteProvider::Anthropic(
        Anthropic::new(&config(&fake.url()), key()).with_retry_policy(fast_retries()),
    )
}

#[tokio::test]
async fn streams_text_with_usage_and_the_right_headers() {
    let fake = FakeAnthropic::start().await;
    fake.push(Reply::text(&["Hel", "lo, ", "world!"]).usage(20, 7, 100, 30));
    let (result, streamed) = chat(&provider(&fake), &hello()).await;
    let response = result.expect("reply");
    assert_eq!(streamed.texts, ["Hel", "lo, ", "world!"]);
    assert_eq!(response.content, "Hello, world!");
    assert_eq!(response.message, ChatMessage::assistant("Hello, world!"));
    assert_eq!(response.finish_reason.as_deref(), Some("stop"));
    assert_eq!(response.model, MODEL);
    assert!(response.tool_calls.is_empty());
    // input_tokens counts every prompt token: uncached + read + written.
    assert_eq!(response.usage.input_tokens, 150);
    assert_eq!(response.usage.cached_tokens, 100);
    assert_eq!(response.usage.cache_write_tokens, 30);
    assert_eq!(response.usage.evaluated_tokens, 50);
    assert_eq!(response.usage.output_tokens, 7);

    let requests = fake.requests();
    assert_eq!(requests.len(), 1);
    let sent = &requests[0];
    assert_eq!(
        (sent.method.as_str(), sent.path.as_str()),
        ("POST", "/v1/messages")
    );
    assert_eq!(sent.header("x-api-key"), Some(KEY));
    assert_eq!(sent.header("anthropic-version"), Some("2023-06-01"));
    assert_eq!(sent.header("authorization"), None);
    assert_eq!(sent.body["model"], "claude-sonnet-4-5");
    assert_eq!(
        sent.body["max_tokens"], 1024,
        "the section's max_tokens, not the request's"
    );
    assert_eq!(sent.body["stream"], true);
}

#[tokio::test]
async fn a_base_url_with_v1_or_a_slash_is_the_same_endpoint() {
    let fake = FakeAnthropic::start().await;
    fake.push(Reply::text(&["a"]));
    fake.push(Reply::text(&["b"]));
    for base in [format!("{}/v1", fake.url()), format!("{}/", fake.url())] {
        let p = RemoteProvider::Anthropic(Anthropic::new(&config(&base), key()));
        chat(&p, &hello()).await.0.expect("reply");
    }
    let paths: Vec<String> = fake.requests().into_iter().map(|r| r.path).collect();
    assert_eq!(paths, ["/v1/messages", "/v1/messages"]);
}

#[tokio::test]
async fn tool_use_input_arrives_in_pieces() {
    let fake = FakeAnthropic::start().await;
    fake.push(
        Reply::text(&["Reading ", "both."])
            .and_tool_use(
                "toolu_01",
                "read_file",
                &["{\"pa", "th\": \"no", "tes.md\"}"],
            )
            .and_tool_use("toolu_02", "list_skills", &[]),
    );
    let (result, streamed) = chat(&provider(&fake), &hello()).await;
    let response = result.expect("reply");
    assert_eq!(streamed.text(), "Reading both.");
    assert_eq!(response.finish_reason.as_deref(), Some("tool_calls"));
    let expected = vec![
        call("toolu_01", "read_file", json!({"path": "notes.md"})),
        call("toolu_02", "list_skills", json!({})),
    ];
    assert_eq!(response.tool_calls, expected);
    assert_eq!(response.message.tool_calls, expected);
    assert_eq!(response.message.content, "Reading both.");
}

#[tokio::test]
async fn broken_tool_input_is_reported_on_the_call() {
    let fake = FakeAnthropic::start().await;
    fake.push(Reply::tool_use("toolu_01", "read_file", &["{\"path\": "]).stop_reason("max_tokens"));
    let response = chat(&provider(&fake), &hello()).await.0.expect("reply");
    assert_eq!(response.finish_reason.as_deref(), Some("length"));
    let ToolCall {
        arguments_error,
        arguments,
        ..
    } = &response.tool_calls[0];
    assert!(arguments.is_null());
    assert!(
        arguments_error
            .as_deref()
            .is_some_and(|e| e.contains("not valid JSON"))
    );
}

#[tokio::test]
async fn thinking_streams_as_reasoning() {
    let fake = FakeAnthropic::start().await;
    fake.push(Reply::text(&["42"]).with_thinking(&["Six ", "times seven."]));
    let (result, streamed) = chat(&provider(&fake), &hello()).await;
    let response = result.expect("reply");
    assert_eq!(streamed.reasoning, "Six times seven.");
    assert_eq!(response.reasoning, "Six times seven.");
    assert_eq!(response.content, "42");
}

#[tokio::test]
async fn two_text_blocks_are_one_answer_with_a_blank_line() {
    let fake = FakeAnthropic::start().await;
    fake.push(Reply::text(&["First."]).and_text(&["Second."]));
    let (result, streamed) = chat(&provider(&fake), &hello()).await;
    assert_eq!(result.expect("reply").content, "First.\n\nSecond.");
    assert_eq!(streamed.text(), "First.\n\nSecond.");
}

#[tokio::test]
async fn history_with_tools_is_replayed_block_for_block() {
    let fake = FakeAnthropic::start().await;
    fake.push(Reply::text(&["Summary."]));
    chat(&provider(&fake), &request(tool_history()))
        .await
        .0
        .expect("reply");
    let body = &fake.requests()[0].body;
    let expected = json!({
        "model": "claude-sonnet-4-5",
        "max_tokens": 1024,
        "stream": true,
        "system": [{ "type": "text", "text": "You are egirl.", "cache_control": { "type": "ephemeral" } }],
        "messages": [
            { "role": "user", "content": [{ "type": "text", "text": "What's in notes.md and todo.md?" }] },
            { "role": "assistant", "content": [
                { "type": "text", "text": "Let me read both." },
                { "type": "tool_use", "id": "call_a", "name": "read_file", "input": { "path": "notes.md" } },
                { "type": "tool_use", "id": "call_b", "name": "read_file", "input": { "path": "todo.md" } },
            ]},
            { "role": "user", "content": [
                { "type": "tool_result", "tool_use_id": "call_a", "content": "# Notes" },
                { "type": "tool_result", "tool_use_id": "call_b", "content": "- buy milk" },
            ]},
            { "role": "assistant", "content": [{ "type": "text", "text": "Notes has a heading; todo says buy milk." }] },
            { "role": "user", "content": [{ "type": "text", "text": "Thanks! Now summarise.", "cache_control": { "type": "ephemeral" } }] },
        ],
        "tools": [{
            "name": "read_file",
            "description": "Read a file in the workspace.",
            "input_schema": { "type": "object", "properties": { "path": { "type": "string" } }, "required": ["path"] },
        }],
    });
    assert_eq!(body, &expected);
}

/// An escalation replays the local attempt: its Qwen3 `<tool_call>` text
/// becomes tool_use blocks, and the user's next words share the message of
/// the tool results.
#[tokio::test]
async fn a_local_attempt_in_qwen3_form_is_replayed_as_blocks() {
    let fake = FakeAnthropic::start().await;
    fake.push(Reply::text(&["On it."]));
    let local_call = call("call_0", "read_file", json!({"path": "main.rs"}));
    let history = vec![
        ChatMessage::system("You are egirl."),
        ChatMessage::user("fix main.rs"),
        ChatMessage {
            tool_calls: vec![local_call.clone()],
            ..ChatMessage::assistant(
                "I'll look first.\n<tool_call>\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"main.rs\"}}\n</tool_call>",
            )
        },
        ChatMessage::tool_result(&local_call, "fn main() {}"),
        ChatMessage::user("use claude"),
    ];
    chat(&provider(&fake), &request(history))
        .await
        .0
        .expect("reply");
    let messages = &fake.requests()[0].body["messages"];
    assert_eq!(
        messages[1],
        json!({ "role": "assistant", "content": [
            { "type": "text", "text": "I'll look first." },
            { "type": "tool_use", "id": "call_0", "name": "read_file", "input": { "path": "main.rs" } },
        ]})
    );
    assert_eq!(
        messages[2],
        json!({ "role": "user", "content": [
            { "type": "tool_result", "tool_use_id": "call_0", "content": "fn main() {}" },
            { "type": "text", "text": "use claude", "cache_control": { "type": "ephemeral" } },
        ]})
    );
    assert_eq!(messages.as_array().map(Vec::len), Some(3));
}

#[tokio::test]
async fn a_refused_key_is_one_line_naming_the_variable() {
    let fake = FakeAnthropic::start().await;
    fake.push(Reply::error(
        401,
        "authentication_error",
        "invalid x-api-key",
    ));
    let error = chat(&provider(&fake), &hello()).await.0.expect_err("401");
    let message = assert_one_clean_line(&error);
    assert!(
        matches!(error, ProviderError::Auth { status: 401, .. }),
        "{error:?}"
    );
    assert_eq!(
        message,
        "anthropic refused the API key (HTTP 401: invalid x-api-key); check ANTHROPIC_API_KEY"
    );
    assert_eq!(fake.hits(), 1, "a refused key is not retried");
}

/// The policy's own backoff here is an hour: only by honoring the server's
/// `retry-after: 0` does the retry come at once.
#[tokio::test]
async fn rate_limited_then_answered_after_the_wait_the_server_named() {
    let fake = FakeAnthropic::start().await;
    fake.push(Reply::error(429, "rate_limit_error", "slow down").header("retry-after", "0"));
    fake.push(Reply::text(&["finally"]));
    let patient = RetryPolicy {
        max_retries: 1,
        base_delay: Duration::from_secs(3600),
        max_delay: Duration::from_secs(3600),
    };
    let p = RemoteProvider::Anthropic(
        Anthropic::new(&config(&fake.url()), key()).with_retry_policy(patient),
    );
    let (result, _) = tokio::time::timeout(Duration::from_secs(60), chat(&p, &hello()))
        .await
        .expect("retry-after was not honored");
    assert_eq!(result.expect("reply").content, "finally");
    assert_eq!(fake.hits(), 2);
}

#[tokio::test]
async fn overloaded_then_answered() {
    let fake = FakeAnthropic::start().await;
    fake.push(Reply::error(529, "overloaded_error", "Overloaded"));
    fake.push(Reply::error(503, "api_error", "unavailable"));
    fake.push(Reply::text(&["finally"]));
    let (result, _) = chat(&provider(&fake), &hello()).await;
    assert_eq!(result.expect("reply").content, "finally");
    assert_eq!(fake.hits(), 3);
}

#[tokio::test]
async fn server_errors_are_retried_then_given_up_clearly() {
    let fake = FakeAnthropic::start().await;
    for _ in 0..4 {
        fake.push(Reply::error(500, "api_error", "Internal server error"));
    }
    let error = chat(&provider(&fake), &hello()).await.0.expect_err("500s");
    let message = assert_one_clean_line(&error);
    assert!(
        matches!(error, ProviderError::Http { status: 500, .. }),
        "{error:?}"
    );
    assert!(
        message.ends_with("Internal server error (gave up after 3 retries)"),
        "{message}"
    );
    assert_eq!(fake.hits(), 4);
}

#[tokio::test]
async fn other_client_errors_keep_the_api_message_and_are_not_retried() {
    let fake = FakeAnthropic::start().await;
    fake.push(Reply::error(
        400,
        "invalid_request_error",
        "messages: roles must alternate",
    ));
    fake.push(Reply::error(
        400,
        "invalid_request_error",
        "prompt is too long: 210000 tokens > 200000 maximum",
    ));
    let p = provider(&fake);
    match chat(&p, &hello()).await.0 {
        Err(ProviderError::Http {
            status: 400, body, ..
        }) => {
            assert_eq!(body, "messages: roles must alternate")
        }
        other => panic!("expected Http 400, got {other:?}"),
    }
    assert!(matches!(
        chat(&p, &hello()).await.0,
        Err(ProviderError::ContextOverflow(_))
    ));
    assert_eq!(fake.hits(), 2);
}

#[tokio::test]
async fn an_error_event_mid_stream_is_reported_not_retried() {
    let fake = FakeAnthropic::start().await;
    fake.push(Reply::text(&["partial"]).overloaded());
    let (result, streamed) = chat(&provider(&fake), &hello()).await;
    match result {
        Err(ProviderError::Http {
            status: 529, body, ..
        }) => assert_eq!(body, "Overloaded"),
        other => panic!("expected Http 529, got {other:?}"),
    }
    assert_eq!(streamed.text(), "partial");
    assert_eq!(fake.hits(), 1);
}

#[tokio::test]
async fn a_stream_cut_before_message_stop_is_truncated() {
    let fake = FakeAnthropic::start().await;
    fake.push(Reply::text(&["This stops mid"]).truncated());
    let (result, streamed) = chat(&provider(&fake), &hello()).await;
    assert!(
        matches!(result, Err(ProviderError::Truncated { .. })),
        "{result:?}"
    );
    assert_eq!(streamed.text(), "This stops mid");
}

#[tokio::test]
async fn silence_times_out_before_and_during_the_stream() {
    let fake = FakeAnthropic::start().await;
    fake.push(Reply::hang());
    fake.push(Reply::text(&["half an answer"]).stall());
    let mut cfg = config(&fake.url());
    cfg.timeout = ConfigDuration(Duration::from_millis(300));
    let p =
        RemoteProvider::Anthropic(Anthropic::new(&cfg, key()).with_retry_policy(fast_retries()));
    let error = chat(&p, &hello()).await.0.expect_err("hang");
    assert!(
        matches!(error, ProviderError::Timeout { secs: 1, .. }),
        "{error:?}"
    );
    assert_one_clean_line(&error);
    let (result, streamed) = chat(&p, &hello()).await;
    assert!(
        matches!(result, Err(ProviderError::Timeout { .. })),
        "{result:?}"
    );
    assert_eq!(streamed.text(), "half an answer");
    assert_eq!(fake.hits(), 2, "a timeout is not retried");
}

#[tokio::test]
async fn cancel_interrupts_the_wait_and_the_stream() {
    let fake = FakeAnthropic::start().await;
    fake.push(Reply::hang());
    fake.push(Reply::text(&["streaming"]).stall());
    let p = provider(&fake);

    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(50)).await;
        trigger.cancel();
    });
    assert!(matches!(
        chat_with(&p, &hello(), &cancel).await.0,
        Err(ProviderError::Interrupted)
    ));

    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    let mut on_chunk = move |_chunk: StreamChunk| trigger.cancel();
    let result = p.chat(&hello(), &cancel, &mut on_chunk).await;
    assert!(
        matches!(result, Err(ProviderError::Interrupted)),
        "{result:?}"
    );
}

#[tokio::test]
async fn cancel_interrupts_a_retry_wait() {
    let fake = FakeAnthropic::start().await;
    fake.push(Reply::error(429, "rate_limit_error", "slow down").header("retry-after", "600"));
    let p = RemoteProvider::Anthropic(
        Anthropic::new(&config(&fake.url()), key()).with_retry_policy(RetryPolicy::default()),
    );
    let cancel = CancellationToken::new();
    let cancel_once_asked = async {
        while fake.hits() == 0 {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        cancel.cancel();
    };
    let req = hello();
    let ((result, _), ()) = tokio::join!(chat_with(&p, &req, &cancel), cancel_once_asked);
    assert!(
        matches!(result, Err(ProviderError::Interrupted)),
        "{result:?}"
    );
    assert_eq!(fake.hits(), 1);
}

#[tokio::test]
async fn an_unreachable_api_is_retried_then_named() {
    let port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        listener.local_addr().expect("addr").port()
    };
    let url = format!("http://127.0.0.1:{port}");
    let p = RemoteProvider::Anthropic(
        Anthropic::new(&config(&url), key()).with_retry_policy(fast_retries()),
    );
    let error = chat(&p, &hello()).await.0.expect_err("nothing listens");
    let message = assert_one_clean_line(&error);
    assert!(
        matches!(error, ProviderError::Unreachable { .. }),
        "{error:?}"
    );
    assert!(
        message.contains(&url) && message.contains("gave up after 3 retries"),
        "{message}"
    );
}

#[test]
fn debug_output_never_shows_the_key() {
    let p = Anthropic::new(&config("http://127.0.0.1:1"), key());
    let shown = format!("{p:?}");
    assert!(!shown.contains(KEY), "{shown}");
}
