//! What goes over the wire: request bodies per tool format, usage,
//! token counting, /props and /health.

use egirl::chat::ChatMessage;
use egirl::config::ToolFormat;
use egirl::providers::ProviderError;
use egirl::providers::llamacpp::LlamaCpp;
use serde_json::json;

use super::{call, chat, config, hello, provider, request};
use crate::support::fake_llama::{FakeLlama, Health, Reply};

#[tokio::test]
async fn request_asks_for_streaming_with_the_prompt_cache() {
    let fake = FakeLlama::start().await;
    let mut req = hello();
    req.slot = Some(1);
    let (result, _) = chat(&provider(&fake, ToolFormat::Auto), &req).await;
    result.expect("reply");
    let body = &fake.requests()[0];
    assert_eq!(body["stream"], json!(true));
    assert_eq!(body["cache_prompt"], json!(true));
    assert_eq!(body["stream_options"], json!({"include_usage": true}));
    assert_eq!(body["max_tokens"], json!(256));
    assert_eq!(body["id_slot"], json!(1));
    assert_eq!(body["model"], json!("test-model"));
    assert_eq!(body["timings_per_token"], json!(false));
    assert_eq!(body["tools"][0]["function"]["name"], json!("read_file"));
}

#[tokio::test]
async fn usage_comes_from_timings_and_the_cache_is_reused() {
    let fake = FakeLlama::start().await;
    fake.push_replies([Reply::text("First answer."), Reply::text("Second.")]);
    let llama = provider(&fake, ToolFormat::Auto);
    let mut req = hello();
    let first = chat(&llama, &req).await.0.expect("first");
    assert_eq!(first.usage.cached_tokens, 0);
    assert_eq!(first.usage.input_tokens, first.usage.evaluated_tokens);
    assert_eq!(
        first.usage.input_tokens,
        llama.count_prompt(&req).await.expect("count")
    );
    assert_eq!(first.usage.output_tokens, 4); // "First answer." is 13 chars
    assert!(first.usage.tokens_per_sec().is_some());

    req.messages.push(first.message.clone());
    req.messages.push(ChatMessage::user("and?"));
    let second = chat(&llama, &req).await.0.expect("second");
    assert!(
        second.usage.cached_tokens > first.usage.input_tokens,
        "{:?}",
        second.usage
    );
    assert_eq!(
        second.usage.input_tokens,
        second.usage.cached_tokens + second.usage.evaluated_tokens
    );
    assert_eq!(
        second.usage.input_tokens,
        llama.count_prompt(&req).await.expect("count")
    );
}

#[tokio::test]
async fn count_tokens_is_cached() {
    let fake = FakeLlama::start().await;
    let llama = provider(&fake, ToolFormat::Auto);
    assert_eq!(llama.count_tokens("twelve chars").await.expect("count"), 3);
    assert_eq!(llama.count_tokens("twelve chars").await.expect("count"), 3);
    assert_eq!(fake.hits("/tokenize"), 1);
    assert_eq!(
        fake.requests_to("/tokenize")[0]["add_special"],
        json!(false)
    );
    let req = hello();
    let n = llama.count_prompt(&req).await.expect("count");
    assert_eq!(llama.count_prompt(&req).await.expect("count"), n);
    assert_eq!(fake.hits("/tokenize"), 2);
    assert_eq!(fake.requests_to("/tokenize")[1]["add_special"], json!(true));
}

#[tokio::test]
async fn props_and_health() {
    let fake = FakeLlama::start().await;
    fake.set_n_ctx(4096);
    fake.set_total_slots(2);
    let llama = provider(&fake, ToolFormat::Auto);
    let props = llama.props().await.expect("props");
    assert_eq!(props.n_ctx, Some(4096));
    assert_eq!(props.total_slots, Some(2));
    assert!(props.has_chat_template);
    assert!(props.model_path.is_some());
    llama.health().await.expect("healthy");
    fake.set_health(Health::Loading);
    match llama.health().await {
        Err(ProviderError::Http {
            status: 503, body, ..
        }) => assert_eq!(body, "Loading model"),
        other => panic!("expected HTTP 503, got {other:?}"),
    }
}

fn tool_turn_history() -> Vec<ChatMessage> {
    let calls = vec![
        call("call_0", "read_file", json!({"path": "a.md"})),
        call("call_1", "read_file", json!({"path": "b.md"})),
    ];
    let mut assistant = ChatMessage::assistant("Reading both.");
    assistant.tool_calls = calls.clone();
    vec![
        ChatMessage::system("You are egirl."),
        ChatMessage::user("read a and b"),
        assistant,
        // Finished out of order: the wire puts them back in call order.
        ChatMessage::tool_result(&calls[1], "B content"),
        ChatMessage::tool_result(&calls[0], "A content"),
    ]
}

#[tokio::test]
async fn qwen3_wire_format() {
    let fake = FakeLlama::start().await;
    let llama = provider(&fake, ToolFormat::Qwen3);
    chat(&llama, &request(tool_turn_history()))
        .await
        .0
        .expect("reply");
    let body = &fake.requests()[0];
    assert!(body.get("tools").is_none(), "no native tools in qwen3 mode");
    let messages = body["messages"].as_array().expect("messages");
    assert_eq!(messages.len(), 4);
    let system = messages[0]["content"].as_str().unwrap_or_default();
    assert!(
        system.starts_with("You are egirl.\n\n# Tools\n\n"),
        "{system}"
    );
    assert!(
        system
            .contains("<tools>\n{\"type\": \"function\", \"function\": {\"name\": \"read_file\", ")
    );
    assert_eq!(
        messages[2],
        json!({"role": "assistant", "content": "Reading both.\n\
<tool_call>\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"a.md\"}}\n</tool_call>\n\
<tool_call>\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"b.md\"}}\n</tool_call>"})
    );
    assert_eq!(
        messages[3],
        json!({"role": "user", "content": "<tool_response>\nA content\n</tool_response>\n<tool_response>\nB content\n</tool_response>"})
    );
}

#[tokio::test]
async fn native_wire_format() {
    let fake = FakeLlama::start().await;
    let llama = provider(&fake, ToolFormat::Native);
    chat(&llama, &request(tool_turn_history()))
        .await
        .0
        .expect("reply");
    let body = &fake.requests()[0];
    let messages = body["messages"].as_array().expect("messages");
    assert_eq!(
        messages[0],
        json!({"role": "system", "content": "You are egirl."})
    );
    assert_eq!(messages[2]["tool_calls"][1]["id"], json!("call_1"));
    assert_eq!(messages[2]["tool_calls"][1]["type"], json!("function"));
    assert_eq!(
        messages[2]["tool_calls"][1]["function"]["arguments"],
        json!("{\"path\":\"b.md\"}")
    );
    assert_eq!(
        messages[3],
        json!({"role": "tool", "tool_call_id": "call_1", "content": "B content"})
    );
    assert_eq!(messages[4]["tool_call_id"], json!("call_0"));
    assert_eq!(body["tools"].as_array().map(Vec::len), Some(1));
}

#[tokio::test]
async fn auto_mode_resends_a_qwen3_reply_byte_for_byte() {
    let fake = FakeLlama::start().await;
    let raw = "Checking.\n<tool_call>\n{'name': 'read_file', 'arguments': {'path': 'a.md'}}\n</tool_call>";
    fake.push_reply(Reply::text(&format!("<think>plan</think>\n\n{raw}")));
    let llama = provider(&fake, ToolFormat::Auto);
    let mut req = hello();
    let response = chat(&llama, &req).await.0.expect("reply");
    assert_eq!(response.message.content, raw);
    let calls = response.tool_calls.clone();
    req.messages.push(response.message);
    req.messages
        .push(ChatMessage::tool_result(&calls[0], "# A"));
    chat(&llama, &req).await.0.expect("second reply");
    let messages = fake.requests()[1]["messages"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert_eq!(messages[2], json!({"role": "assistant", "content": raw}));
    assert_eq!(
        messages[3],
        json!({"role": "user", "content": "<tool_response>\n# A\n</tool_response>"})
    );
}

#[tokio::test]
async fn an_endpoint_ending_in_v1_works() {
    let fake = FakeLlama::start().await;
    let llama = LlamaCpp::new(&config(&format!("{}/v1/", fake.url()), ToolFormat::Auto));
    assert_eq!(chat(&llama, &hello()).await.0.expect("reply").content, "ok");
}
