//! Failures: every one a clear `ProviderError`, promptly, never a panic.

use std::time::{Duration, Instant};

use egirl::config::{ConfigDuration, ToolFormat};
use egirl::providers::llamacpp::LlamaCpp;
use egirl::providers::{ProviderError, StreamChunk};
use tokio_util::sync::CancellationToken;

use super::{chat, chat_with, config, hello, provider};
use crate::support::fake_llama::{FakeLlama, Reply};

#[tokio::test]
async fn server_down_is_unreachable() {
    let port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        listener.local_addr().expect("addr").port()
    };
    let url = format!("http://127.0.0.1:{port}");
    let llama = LlamaCpp::new(&config(&url, ToolFormat::Auto));
    match chat(&llama, &hello()).await.0 {
        Err(e @ ProviderError::Unreachable { .. }) => {
            let message = e.to_string();
            assert!(message.contains(&url), "{message}");
            assert!(!message.contains('\n'), "{message}");
        }
        other => panic!("expected Unreachable, got {other:?}"),
    }
    assert!(matches!(
        llama.props().await,
        Err(ProviderError::Unreachable { .. })
    ));
}

#[tokio::test]
async fn http_500_is_an_http_error() {
    let fake = FakeLlama::start().await;
    let long = "x".repeat(1000);
    fake.push_reply(Reply::status(
        500,
        &format!("{{\"error\": {{\"code\": 500, \"message\": \"boom {long}\"}}}}"),
    ));
    match chat(&provider(&fake, ToolFormat::Auto), &hello()).await.0 {
        Err(ProviderError::Http { status, body, .. }) => {
            assert_eq!(status, 500);
            assert!(body.starts_with("boom x"), "{body}");
            assert!(body.chars().count() <= 301, "{}", body.len());
        }
        other => panic!("expected Http, got {other:?}"),
    }
}

#[tokio::test]
async fn context_overflow_is_recognised() {
    let fake = FakeLlama::start().await;
    fake.push_reply(Reply::context_overflow());
    let llama = provider(&fake, ToolFormat::Auto);
    match chat(&llama, &hello()).await.0 {
        Err(ProviderError::ContextOverflow(message)) => {
            assert!(message.contains("exceeds the available context size"))
        }
        other => panic!("expected ContextOverflow, got {other:?}"),
    }
    // And from the real check against n_ctx; the scripted reply waits for the retry.
    fake.set_n_ctx(10);
    fake.push_reply(Reply::text("fits now"));
    assert!(matches!(
        chat(&llama, &hello()).await.0,
        Err(ProviderError::ContextOverflow(_))
    ));
    fake.set_n_ctx(4096);
    assert_eq!(
        chat(&llama, &hello()).await.0.expect("reply").content,
        "fits now"
    );
}

#[tokio::test]
async fn an_error_inside_the_stream_is_reported() {
    let fake = FakeLlama::start().await;
    fake.push_reply(Reply::raw_sse(
        "data: {\"error\": {\"code\": 400, \"message\": \"request (9000 tokens) exceeds the available context size (4096 tokens)\", \"type\": \"exceed_context_size_error\"}}\n\n",
    ));
    fake.push_reply(Reply::raw_sse(
        "error: {\"code\": 500, \"message\": \"slot crashed\"}\n\n",
    ));
    let llama = provider(&fake, ToolFormat::Auto);
    assert!(matches!(
        chat(&llama, &hello()).await.0,
        Err(ProviderError::ContextOverflow(_))
    ));
    match chat(&llama, &hello()).await.0 {
        Err(ProviderError::Http {
            status: 500, body, ..
        }) => assert_eq!(body, "slot crashed"),
        other => panic!("expected Http, got {other:?}"),
    }
}

#[tokio::test]
async fn truncated_stream_is_an_error() {
    let fake = FakeLlama::start().await;
    fake.push_reply(Reply::text("This answer stops mid").truncated());
    let (result, streamed) = chat(&provider(&fake, ToolFormat::Auto), &hello()).await;
    assert!(
        matches!(result, Err(ProviderError::Truncated { .. })),
        "{result:?}"
    );
    assert_eq!(streamed.text(), "This answer stops mid");
}

#[tokio::test]
async fn a_silent_server_times_out() {
    let fake = FakeLlama::start().await;
    fake.push_replies([Reply::hang(), Reply::text("partial answer").stall()]);
    let mut cfg = config(&fake.url(), ToolFormat::Auto);
    cfg.timeout = ConfigDuration(Duration::from_millis(300));
    let llama = LlamaCpp::new(&cfg);
    let started = Instant::now();
    assert!(matches!(
        chat(&llama, &hello()).await.0,
        Err(ProviderError::Timeout { .. })
    ));
    // Mid-stream too: the limit is per chunk, not for the whole reply.
    let (result, streamed) = chat(&llama, &hello()).await;
    assert!(
        matches!(result, Err(ProviderError::Timeout { secs: 1, .. })),
        "{result:?}"
    );
    assert_eq!(streamed.text(), "partial answer");
    assert!(started.elapsed() < Duration::from_secs(5));
}

#[tokio::test]
async fn a_slow_stream_within_the_idle_limit_completes() {
    let fake = FakeLlama::start().await;
    fake.push_reply(
        Reply::text("one two three four five six").frame_delay(Duration::from_millis(60)),
    );
    let mut cfg = config(&fake.url(), ToolFormat::Auto);
    cfg.timeout = ConfigDuration(Duration::from_millis(250));
    let (result, _) = chat(&LlamaCpp::new(&cfg), &hello()).await;
    assert_eq!(
        result.expect("reply").content,
        "one two three four five six"
    );
}

#[tokio::test]
async fn cancel_interrupts_promptly() {
    let fake = FakeLlama::start().await;
    fake.push_replies([Reply::hang(), Reply::text("streaming then stuck").stall()]);
    let llama = provider(&fake, ToolFormat::Auto);

    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(100)).await;
        trigger.cancel();
    });
    let started = Instant::now();
    assert!(matches!(
        chat_with(&llama, &hello(), &cancel).await.0,
        Err(ProviderError::Interrupted)
    ));
    assert!(started.elapsed() < Duration::from_secs(2));

    // Mid-stream: cancelled from the first chunk's callback.
    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    let mut on_chunk = move |_chunk: StreamChunk| trigger.cancel();
    let result = llama.chat(&hello(), &cancel, &mut on_chunk).await;
    assert!(
        matches!(result, Err(ProviderError::Interrupted)),
        "{result:?}"
    );
}
