//! The OpenAI provider, for OpenAI and Azure OpenAI, against the fake API.

use std::time::Duration;

use egirl::chat::ChatMessage;
use egirl::config::{AzureConfig, ConfigDuration, OpenAiConfig};
use egirl::providers::openai::OpenAi;
use egirl::providers::remote::RemoteProvider;
use egirl::providers::remote_api::RetryPolicy;
use egirl::providers::{ProviderError, StreamChunk};
use serde_json::json;
use tokio_util::sync::CancellationToken;

use crate::provider_remote::{
    KEY, assert_one_clean_line, call, chat, chat_with, fast_retries, hello, key, request,
    tool_history,
};
use crate::support::fake_openai::{FakeOpenAi, MODEL, Reply};

fn openai_config(fake: &FakeOpenAi) -> OpenAiConfig {
    OpenAiConfig {
        model: "gpt-4.1".into(),
        base_url: format!("{}/v1", fake.url()),
        max_tokens: 1000,
        timeout: ConfigDuration::from_secs(10),
        embedding_model: Some("text-embedding-3-small".into()),
    }
}

fn azure_config(fake: &FakeOpenAi) -> AzureConfig {
    AzureConfig {
        endpoint: format!("{}/", fake.url()),
        deployment: "gpt4o-prod".into(),
        api_version: "2024-10-21".into(),
        embedding_deployment: Some("emb-small".into()),
        max_tokens: 900,
        timeout: ConfigDuration::from_secs(10),
    }
}

fn openai(fake: &FakeOpenAi) -> OpenAi {
    OpenAi::new(&openai_config(fake), key()).with_retry_policy(fast_retries())
}

fn azure(fake: &FakeOpenAi) -> OpenAi {
    OpenAi::azure(&azure_config(fake), key()).with_retry_policy(fast_retries())
}

fn remote(p: OpenAi) -> RemoteProvider {
    RemoteProvider::OpenAi(p)
}

#[tokio::test]
async fn streams_text_with_cached_usage_and_a_bearer_key() {
    let fake = FakeOpenAi::start().await;
    fake.push(Reply::text(&["Hel", "lo, ", "world!"]).usage(1200, 9, 1024));
    let (result, streamed) = chat(&remote(openai(&fake)), &hello()).await;
    let response = result.expect("reply");
    assert_eq!(streamed.text(), "Hello, world!");
    assert!(
        streamed.texts.len() >= 3,
        "streamed in pieces: {:?}",
        streamed.texts
    );
    assert_eq!(response.content, "Hello, world!");
    assert_eq!(response.message, ChatMessage::assistant("Hello, world!"));
    assert_eq!(response.finish_reason.as_deref(), Some("stop"));
    assert_eq!(response.model, MODEL);
    assert_eq!(response.usage.input_tokens, 1200);
    assert_eq!(response.usage.cached_tokens, 1024);
    assert_eq!(response.usage.output_tokens, 9);

    let sent = &fake.requests()[0];
    assert_eq!(sent.path, "/v1/chat/completions");
    assert_eq!(sent.query, None);
    assert_eq!(
        sent.header("authorization"),
        Some(format!("Bearer {KEY}").as_str())
    );
    assert_eq!(sent.header("api-key"), None);
    assert_eq!(sent.body["model"], "gpt-4.1");
    assert_eq!(sent.body["stream"], true);
    assert_eq!(
        sent.body["stream_options"],
        json!({ "include_usage": true })
    );
    // A compatible server (not api.openai.com) gets the classic field.
    assert_eq!(sent.body["max_tokens"], 1000);
    assert_eq!(sent.body.get("max_completion_tokens"), None);
    assert_eq!(
        sent.body["tools"],
        json!([{ "type": "function", "function": { "name": "read_file",
            "description": "Read a file in the workspace.",
            "parameters": { "type": "object", "properties": { "path": { "type": "string" } }, "required": ["path"] } } }])
    );
}

#[tokio::test]
async fn tool_call_fragments_are_put_together_by_index() {
    let fake = FakeOpenAi::start().await;
    fake.push(
        Reply::tool_calls(&[
            (
                "call_x1",
                "read_file",
                &["{\"pa", "th\": \"no", "tes.md\"}"],
            ),
            ("call_x2", "read_file", &["{\"path\"", ": \"todo.md\"}"]),
        ])
        .with_text(&["Reading ", "both."]),
    );
    let (result, streamed) = chat(&remote(openai(&fake)), &hello()).await;
    let response = result.expect("reply");
    assert_eq!(streamed.text(), "Reading both.");
    assert_eq!(response.finish_reason.as_deref(), Some("tool_calls"));
    let expected = vec![
        call("call_x1", "read_file", json!({"path": "notes.md"})),
        call("call_x2", "read_file", json!({"path": "todo.md"})),
    ];
    assert_eq!(response.tool_calls, expected);
    assert_eq!(response.message.tool_calls, expected);
}

#[tokio::test]
async fn history_with_tools_is_replayed_message_for_message() {
    let fake = FakeOpenAi::start().await;
    fake.push(Reply::text(&["Summary."]));
    chat(&remote(openai(&fake)), &request(tool_history()))
        .await
        .0
        .expect("reply");
    let messages = &fake.requests()[0].body["messages"];
    let expected = json!([
        { "role": "system", "content": "You are egirl." },
        { "role": "user", "content": "What's in notes.md and todo.md?" },
        { "role": "assistant", "content": "Let me read both.", "tool_calls": [
            { "id": "call_a", "type": "function", "function": { "name": "read_file", "arguments": "{\"path\":\"notes.md\"}" } },
            { "id": "call_b", "type": "function", "function": { "name": "read_file", "arguments": "{\"path\":\"todo.md\"}" } },
        ]},
        { "role": "tool", "tool_call_id": "call_a", "content": "# Notes" },
        { "role": "tool", "tool_call_id": "call_b", "content": "- buy milk" },
        { "role": "assistant", "content": "Notes has a heading; todo says buy milk." },
        { "role": "user", "content": "Thanks! Now summarise." },
    ]);
    assert_eq!(messages, &expected);
}

#[tokio::test]
async fn an_interrupted_call_is_answered_before_replay() {
    let fake = FakeOpenAi::start().await;
    fake.push(Reply::text(&["ok"]));
    let pending = call("call_9", "exec", json!({"command": "make"}));
    let history = vec![
        ChatMessage::user("build it"),
        ChatMessage {
            tool_calls: vec![pending],
            ..ChatMessage::assistant("")
        },
        ChatMessage::user("never mind, use claude"),
    ];
    chat(&remote(openai(&fake)), &request(history))
        .await
        .0
        .expect("reply");
    let messages = &fake.requests()[0].body["messages"];
    assert_eq!(
        messages[2],
        json!({ "role": "tool", "tool_call_id": "call_9", "content": "(no result: this call was not run)" })
    );
    assert_eq!(messages[3]["content"], "never mind, use claude");
}

#[tokio::test]
async fn azure_uses_the_deployment_url_api_version_and_api_key_header() {
    let fake = FakeOpenAi::start().await;
    fake.push(
        Reply::text(&["Hi ", "from Azure."])
            .model("gpt-4o-2024-08-06")
            .usage(50, 4, 0)
            .azure(),
    );
    let p = azure(&fake);
    assert_eq!(p.name(), "azure");
    let (result, _) = chat(&remote(p), &hello()).await;
    let response = result.expect("reply");
    assert_eq!(response.content, "Hi from Azure.");
    // The deployment is configured; the reply names the real model (for pricing).
    assert_eq!(response.model, "gpt-4o-2024-08-06");
    assert_eq!(response.usage.input_tokens, 50);

    let sent = &fake.requests()[0];
    assert_eq!(sent.path, "/openai/deployments/gpt4o-prod/chat/completions");
    assert_eq!(sent.query.as_deref(), Some("api-version=2024-10-21"));
    assert_eq!(sent.header("api-key"), Some(KEY));
    assert_eq!(sent.header("authorization"), None);
    assert_eq!(
        sent.body.get("model"),
        None,
        "the deployment names the model"
    );
    assert_eq!(sent.body["max_completion_tokens"], 900);
    assert_eq!(sent.body.get("max_tokens"), None);
}

#[tokio::test]
async fn azure_embeddings_come_back_in_input_order() {
    let fake = FakeOpenAi::start().await;
    fake.push(Reply::embeddings(&[&[0.1, 0.2], &[0.3, 0.4]]));
    let vectors = azure(&fake)
        .embed(&["first", "second"])
        .await
        .expect("embeddings");
    assert_eq!(vectors, vec![vec![0.1f32, 0.2], vec![0.3, 0.4]]);
    let sent = &fake.requests()[0];
    assert_eq!(sent.path, "/openai/deployments/emb-small/embeddings");
    assert_eq!(sent.query.as_deref(), Some("api-version=2024-10-21"));
    assert_eq!(sent.header("api-key"), Some(KEY));
    assert_eq!(sent.body, json!({ "input": ["first", "second"] }));
}

#[tokio::test]
async fn openai_embeddings_name_the_model() {
    let fake = FakeOpenAi::start().await;
    fake.push(Reply::embeddings(&[&[1.0, 0.0, 0.5]]));
    let vectors = openai(&fake).embed(&["hello"]).await.expect("embeddings");
    assert_eq!(vectors, vec![vec![1.0f32, 0.0, 0.5]]);
    let sent = &fake.requests()[0];
    assert_eq!(sent.path, "/v1/embeddings");
    assert_eq!(
        sent.body,
        json!({ "model": "text-embedding-3-small", "input": ["hello"] })
    );
}

#[tokio::test]
async fn embeddings_without_a_model_say_which_key_to_set() {
    let fake = FakeOpenAi::start().await;
    let mut cfg = openai_config(&fake);
    cfg.embedding_model = None;
    let p = OpenAi::new(&cfg, key());
    assert!(!p.can_embed());
    match p.embed(&["x"]).await {
        Err(ProviderError::NotConfigured(message)) => assert!(message.contains("embedding_model")),
        other => panic!("expected NotConfigured, got {other:?}"),
    }
    assert_eq!(fake.hits(), 0);
}

#[tokio::test]
async fn a_refused_key_names_the_right_variable() {
    let fake = FakeOpenAi::start().await;
    fake.push(Reply::error(401, "Incorrect API key provided: sk-test****6789. You can find your API key at https://platform.openai.com."));
    fake.push(Reply::error(
        401,
        "Access denied due to invalid subscription key.",
    ));
    let error = chat(&remote(openai(&fake)), &hello())
        .await
        .0
        .expect_err("401");
    let message = assert_one_clean_line(&error);
    assert!(
        message.starts_with("openai refused the API key (HTTP 401: Incorrect API key provided:"),
        "{message}"
    );
    assert!(message.ends_with("check OPENAI_API_KEY"), "{message}");
    assert!(!message.contains("6789"), "{message}");

    let error = chat(&remote(azure(&fake)), &hello())
        .await
        .0
        .expect_err("401");
    let message = assert_one_clean_line(&error);
    assert!(
        message.starts_with("azure refused the API key"),
        "{message}"
    );
    assert!(message.ends_with("check AZURE_OPENAI_API_KEY"), "{message}");
    assert_eq!(fake.hits(), 2);
}

/// The policy's own backoff is an hour: the retry comes at once only if
/// the server's `retry-after-ms` is honored.
#[tokio::test]
async fn rate_limited_then_answered_after_the_wait_the_server_named() {
    let fake = FakeOpenAi::start().await;
    fake.push(Reply::error(429, "Rate limit reached").header("retry-after-ms", "5"));
    fake.push(Reply::text(&["finally"]));
    let patient = RetryPolicy {
        max_retries: 1,
        base_delay: Duration::from_secs(3600),
        max_delay: Duration::from_secs(3600),
    };
    let p = remote(OpenAi::azure(&azure_config(&fake), key()).with_retry_policy(patient));
    let (result, _) = tokio::time::timeout(Duration::from_secs(60), chat(&p, &hello()))
        .await
        .expect("retry-after-ms was not honored");
    assert_eq!(result.expect("reply").content, "finally");
    assert_eq!(fake.hits(), 2);
}

#[tokio::test]
async fn server_errors_are_retried_then_given_up_clearly() {
    let fake = FakeOpenAi::start().await;
    for _ in 0..4 {
        fake.push(Reply::error(503, "The server is overloaded"));
    }
    let error = chat(&remote(openai(&fake)), &hello())
        .await
        .0
        .expect_err("503s");
    let message = assert_one_clean_line(&error);
    assert!(
        matches!(error, ProviderError::Http { status: 503, .. }),
        "{error:?}"
    );
    assert!(
        message.ends_with("The server is overloaded (gave up after 3 retries)"),
        "{message}"
    );
    assert_eq!(fake.hits(), 4);
}

#[tokio::test]
async fn without_retries_the_first_failure_is_final() {
    let fake = FakeOpenAi::start().await;
    fake.push(Reply::error(500, "boom"));
    let p =
        remote(OpenAi::new(&openai_config(&fake), key()).with_retry_policy(RetryPolicy::never()));
    let error = chat(&p, &hello()).await.0.expect_err("500");
    assert_eq!(
        error.to_string(),
        format!("{}/v1 answered HTTP 500: boom", fake.url())
    );
}

#[tokio::test]
async fn a_context_overflow_is_recognised() {
    let fake = FakeOpenAi::start().await;
    fake.push(Reply::error(400, "This model's maximum context length is 128000 tokens. However, your messages resulted in 130000 tokens."));
    let result = chat(&remote(openai(&fake)), &hello()).await.0;
    assert!(
        matches!(result, Err(ProviderError::ContextOverflow(_))),
        "{result:?}"
    );
}

#[tokio::test]
async fn truncated_stalled_and_hung_streams_fail_clearly() {
    let fake = FakeOpenAi::start().await;
    fake.push(Reply::text(&["This stops mid"]).truncated());
    fake.push(Reply::hang());
    fake.push(Reply::text(&["half"]).stall());
    let mut cfg = openai_config(&fake);
    cfg.timeout = ConfigDuration(Duration::from_millis(300));
    let p = remote(OpenAi::new(&cfg, key()).with_retry_policy(fast_retries()));
    let (result, streamed) = chat(&p, &hello()).await;
    assert!(
        matches!(result, Err(ProviderError::Truncated { .. })),
        "{result:?}"
    );
    assert_eq!(streamed.text(), "This stops mid");
    let error = chat(&p, &hello()).await.0.expect_err("hang");
    assert!(matches!(error, ProviderError::Timeout { .. }), "{error:?}");
    let (result, streamed) = chat(&p, &hello()).await;
    assert!(
        matches!(result, Err(ProviderError::Timeout { .. })),
        "{result:?}"
    );
    assert_eq!(streamed.text(), "half");
    assert_eq!(fake.hits(), 3, "timeouts are not retried");
}

#[tokio::test]
async fn cancel_interrupts_the_wait_and_the_stream() {
    let fake = FakeOpenAi::start().await;
    fake.push(Reply::hang());
    fake.push(Reply::text(&["streaming"]).stall());
    let p = remote(openai(&fake));

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

#[test]
fn debug_output_never_shows_the_key() {
    let p = OpenAi::azure(
        &AzureConfig {
            endpoint: "https://res.openai.azure.com".into(),
            deployment: "d".into(),
            api_version: "2024-10-21".into(),
            embedding_deployment: None,
            max_tokens: 10,
            timeout: ConfigDuration::from_secs(1),
        },
        key(),
    );
    let shown = format!("{p:?}");
    assert!(!shown.contains(KEY), "{shown}");
}
