//! Images at the remote providers, through the real binary: a session
//! whose local model cannot see sends its next turn to the remote model,
//! which receives the picture in its own shape (Anthropic `image` blocks
//! inside the `tool_result`, OpenAI `image_url` parts after the tool
//! messages). The second run resumes the session from its transcript,
//! which names the picture by file and holds no base64.

use serde_json::Value;

use super::images::{png, unbase64};
use crate::support::cli::{Cli, events, of_type, stderr};
use crate::support::fake_llama::{FakeLlama, Reply};
use crate::support::{fake_anthropic, fake_openai};

/// Turn one: the local (text-only) model reads `red.png` and gets the note.
async fn first_turn(fake: &FakeLlama, cli: &Cli, env: &[(&str, &str)]) -> Vec<u8> {
    let bytes = png(64, 48);
    std::fs::create_dir_all(cli.workspace()).expect("workspace");
    std::fs::write(cli.workspace().join("red.png"), &bytes).expect("picture");
    fake.push_replies([
        Reply::tool_calls(&[("read_file", "{\"path\": \"red.png\"}")]),
        Reply::text("I cannot see it."),
    ]);
    let out = cli
        .run_with_env(&["-m", "read red.png", "--session", "pics", "--json"], env)
        .await;
    assert!(out.status.success(), "{}", stderr(&out));
    let sent = fake.requests().last().expect("a request")["messages"].to_string();
    assert!(
        sent.contains("not shown, no vision model configured"),
        "{sent}"
    );
    bytes
}

/// Turn two, resumed from the transcript: routed remote for the picture.
async fn second_turn(cli: &Cli, env: &[(&str, &str)]) -> Vec<Value> {
    let out = cli
        .run_with_env(
            &["-m", "what colour was it?", "--session", "pics", "--json"],
            env,
        )
        .await;
    assert!(out.status.success(), "{}", stderr(&out));
    let events = events(&out);
    let routing = of_type(&events, "routing");
    let reason = routing[0]["reason"].as_str().unwrap_or("");
    assert!(reason.contains("images"), "{routing:?}");
    events
}

/// The transcript names the picture by hash and type, never inline.
fn transcript_holds_no_base64(cli: &Cli) {
    let path = cli.workspace().join("sessions/pics.jsonl");
    let text = std::fs::read_to_string(&path).expect("transcript");
    assert!(
        !text.contains("base64") && !text.contains("data:"),
        "{text}"
    );
    assert!(
        text.contains("\"sha256\"") && text.contains("image/png"),
        "{text}"
    );
}

#[tokio::test]
async fn anthropic_gets_the_picture_as_an_image_block_in_the_tool_result() {
    let fake = FakeLlama::start().await;
    let remote = fake_anthropic::FakeAnthropic::start().await;
    let config = format!(
        "[remote.anthropic]\nmodel = \"{}\"\nbase_url = \"{}\"\n",
        fake_anthropic::MODEL,
        remote.url()
    );
    let cli = Cli::new(&fake, &config);
    let env = [("ANTHROPIC_API_KEY", "sk-ant-images-test-0123456789")];
    let bytes = first_turn(&fake, &cli, &env).await;
    remote.push(fake_anthropic::Reply::text(&["Red."]));
    let events = second_turn(&cli, &env).await;
    assert_eq!(of_type(&events, "final")[0]["text"], "Red.");
    let body = &remote.requests()[0].body;
    let results: Vec<&Value> = body["messages"]
        .as_array()
        .expect("messages")
        .iter()
        .flat_map(|m| m["content"].as_array().into_iter().flatten())
        .filter(|b| b["type"] == "tool_result")
        .collect();
    assert_eq!(results.len(), 1, "{body}");
    let content = results[0]["content"].as_array().expect("blocks");
    assert_eq!(content[0]["type"], "text");
    let image = &content[1];
    assert_eq!(image["type"], "image");
    assert_eq!(image["source"]["type"], "base64");
    assert_eq!(image["source"]["media_type"], "image/png");
    let data = image["source"]["data"].as_str().expect("data");
    assert_eq!(unbase64(data), bytes);
    transcript_holds_no_base64(&cli);
}

#[tokio::test]
async fn openai_gets_the_picture_as_image_url_after_the_tool_messages() {
    let fake = FakeLlama::start().await;
    let remote = fake_openai::FakeOpenAi::start().await;
    let config = format!(
        "[remote.openai]\nmodel = \"{}\"\nbase_url = \"{}/v1\"\n",
        fake_openai::MODEL,
        remote.url()
    );
    let cli = Cli::new(&fake, &config);
    let env = [("OPENAI_API_KEY", "sk-openai-images-test-0123456789")];
    let bytes = first_turn(&fake, &cli, &env).await;
    remote.push(fake_openai::Reply::text(&["Red."]));
    let events = second_turn(&cli, &env).await;
    assert_eq!(of_type(&events, "final")[0]["text"], "Red.");
    let body = &remote.requests()[0].body;
    let messages = body["messages"].as_array().expect("messages");
    let tool = messages
        .iter()
        .position(|m| m["role"] == "tool")
        .expect("a tool message");
    // Text only in the tool message; the picture in the user message after it.
    assert!(messages[tool]["content"].is_string(), "{body}");
    let after = &messages[tool + 1];
    assert_eq!(after["role"], "user");
    let parts = after["content"].as_array().expect("content parts");
    assert_eq!(parts[0]["type"], "text");
    assert!(
        parts[0]["text"]
            .as_str()
            .unwrap_or("")
            .contains("read_file")
    );
    assert_eq!(parts[1]["type"], "image_url");
    let url = parts[1]["image_url"]["url"].as_str().expect("url");
    let data = url
        .strip_prefix("data:image/png;base64,")
        .expect("data URI");
    assert_eq!(unbase64(data), bytes);
    transcript_holds_no_base64(&cli);
}

/// Local first: with a fast model that sees and a main one that does not,
/// a session's picture goes to the fast model, not to a remote one.
#[tokio::test]
async fn a_local_role_that_sees_is_preferred_to_the_remote_model() {
    let fake = FakeLlama::start().await;
    let fast = FakeLlama::start().await;
    fast.set_vision(true);
    let remote = fake_anthropic::FakeAnthropic::start().await;
    let config = format!(
        "[local.fast]\nendpoint = \"{}\"\nmodel = \"fast\"\n[remote.anthropic]\nmodel = \"{}\"\nbase_url = \"{}\"\n",
        fast.url(),
        fake_anthropic::MODEL,
        remote.url()
    );
    let cli = Cli::new(&fake, &config);
    let env = [("ANTHROPIC_API_KEY", "sk-ant-images-test-0123456789")];
    let bytes = first_turn(&fake, &cli, &env).await;
    let main_requests = fake.requests().len();
    second_turn(&cli, &env).await;
    assert_eq!(remote.hits(), 0);
    assert_eq!(
        fake.requests().len(),
        main_requests,
        "the main model was asked"
    );
    // The fast model also classifies; its last request is the turn's.
    let sent = fast.requests().pop().expect("a request to the fast model");
    assert_eq!(
        super::images::image_parts(&sent),
        vec![("image/png".to_string(), bytes)]
    );
}
