//! `egirl acp` and what an editor session brings: the MCP servers passed
//! in `session/new` and `session/load` (the real server-everything from
//! npm, `scripts/install-mcp-servers.sh`), and a model that refuses
//! (the fake Anthropic API's `stop_reason: "refusal"`).

use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};

use super::agent::{assert_only_frames, chunks, ok, run_client, run_with_env, updates};
use crate::mcp::server;
use crate::support::cli::Cli;
use crate::support::fake_anthropic::{self, FakeAnthropic};
use crate::support::fake_llama::{FakeLlama, Reply};

/// server-everything as an editor passes it, its process marked with
/// `mark` (a variable only the editor gives it).
fn everything(mark: &str) -> Value {
    json!({
        "name": "everything",
        "command": "node",
        "args": [server("everything"), "stdio"],
        "env": [
            {"name": "EGIRL_ACP_MARK", "value": mark},
            {"name": "EDITOR_GIVEN_TOKEN", "value": "the editor's choice"},
        ],
    })
}

/// The live processes whose environment holds `EGIRL_ACP_MARK=mark`.
fn marked(mark: &str) -> Vec<String> {
    let needle = format!("EGIRL_ACP_MARK={mark}");
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter(|entry| {
            let dir = entry.path();
            let status = std::fs::read_to_string(dir.join("status")).unwrap_or_default();
            // A zombie is gone already (only its exit status is left).
            let environ = std::fs::read(dir.join("environ")).unwrap_or_default();
            !status.contains("State:\tZ")
                && environ
                    .split(|b| *b == 0)
                    .any(|var| var == needle.as_bytes())
        })
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        .collect()
}

/// The text a step's last `tool_call_update` carried.
fn tool_output(step: &Value) -> String {
    let done = updates(step, "tool_call_update");
    let last = done
        .last()
        .unwrap_or_else(|| panic!("no tool update: {step}"));
    last["content"].to_string()
}

#[tokio::test]
async fn an_editors_mcp_server_serves_its_session_only_asks_like_a_configured_one_and_stops() {
    let fake = FakeLlama::start().await;
    let call = |name: &str, args: &str| Reply::tool_calls(&[(name, args)]);
    fake.push_replies([
        call("mcp__everything__get-env", "{}"),
        Reply::text("read the environment"),
        call("mcp__everything__toggle-simulated-logging", "{}"),
        Reply::text("toggled"),
        call("mcp__everything__echo", r#"{"message": "from b"}"#),
        Reply::text("no such server here"),
        call("mcp__everything__echo", r#"{"message": "loaded"}"#),
        Reply::text("echoed"),
    ]);
    let cli = Cli::new(&fake, "");
    let ws = cli.workspace();
    std::fs::create_dir_all(&ws).expect("workspace");
    let mark = format!("acp-{}", std::process::id());
    let steps = json!([
        {"do": "initialize"},
        {"do": "new", "cwd": ws, "mcp": [everything(&mark)]},
        {"do": "prompt", "text": "what is your environment"},
        {"do": "prompt", "text": "toggle logging"},
        {"do": "new", "cwd": ws},
        {"do": "prompt", "text": "echo from b"},
        {"do": "load", "session": "$new", "cwd": ws, "mcp": [everything(&mark)]},
        {"do": "prompt", "text": "echo again"},
    ]);
    // A secret in egirl's own environment, which no server may get.
    let secret = json!({"EGIRL_ACP_TEST_TOKEN": "not-for-servers"});
    let report = run_with_env(&cli, steps, &["allow_once"], Value::Null, secret).await;
    assert_only_frames(&report);

    // A read-only tool of the editor's server runs unasked, in an
    // environment without egirl's secrets but with what the editor gave.
    let env = ok(&report, 2);
    assert_eq!(env["response"]["stopReason"], "end_turn");
    let calls = updates(env, "tool_call");
    assert_eq!(calls[0]["title"], "mcp__everything__get-env", "{env}");
    let output = tool_output(env);
    assert!(output.contains("EGIRL_ACP_MARK"), "{output}");
    assert!(output.contains("EDITOR_GIVEN_TOKEN"), "{output}");
    assert!(
        !output.contains("EGIRL_ACP_TEST_TOKEN"),
        "a secret leaked: {output}"
    );
    assert!(
        report["stderr"]
            .as_str()
            .unwrap_or_default()
            .contains("MCP servers from the editor: everything")
    );

    // One that changes things asks through the editor first.
    let toggled = ok(&report, 3);
    let asked = report["permissions"].as_array().expect("permissions");
    assert_eq!(asked.len(), 1, "{asked:?}");
    assert_eq!(
        asked[0]["toolCall"]["toolCallId"],
        updates(toggled, "tool_call")[0]["toolCallId"]
    );
    let done = updates(toggled, "tool_call_update");
    assert_eq!(
        done.last().expect("done")["status"],
        "completed",
        "{toggled}"
    );
    assert!(tool_output(toggled).contains("logging"), "{toggled}");

    // Another session does not see it: not offered, not callable.
    let other = ok(&report, 5);
    let failed = updates(other, "tool_call_update");
    assert_eq!(
        failed.last().expect("failed")["status"],
        "failed",
        "{other}"
    );
    assert!(tool_output(other).contains("no MCP server"), "{other}");
    let offered = |request: &Value| -> bool {
        request["tools"]
            .as_array()
            .is_some_and(|tools| tools.iter().any(|t| t["function"]["name"] == "mcp"))
    };
    let requests = fake.requests();
    assert!(
        offered(&requests[0]),
        "session A was not offered its server"
    );
    assert!(!offered(&requests[4]), "session B was offered A's server");

    // Loaded with the server, the session has it.
    let loaded = ok(&report, 7);
    assert_eq!(loaded["response"]["stopReason"], "end_turn");
    assert!(tool_output(loaded).contains("Echo: loaded"), "{loaded}");

    // The client went: no server process is left (and the search finds
    // a process so marked while one lives).
    let mut probe = std::process::Command::new("sleep")
        .arg("30")
        .env("EGIRL_ACP_MARK", format!("{mark}-probe"))
        .spawn()
        .expect("sleep");
    assert_eq!(marked(&format!("{mark}-probe")), [probe.id().to_string()]);
    let _ = probe.kill();
    let _ = probe.wait();
    assert_eq!(left_behind(&mark).await, Vec::<String>::new());
}

/// The processes marked `mark` still alive after a bounded wait (the
/// kill is sent as the client goes; the kernel may take a moment).
async fn left_behind(mark: &str) -> Vec<String> {
    for _ in 0..50 {
        if marked(mark).is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    marked(mark)
}

#[tokio::test]
async fn through_a_daemons_core_the_editors_server_stops_when_the_editor_goes() {
    let fake = FakeLlama::start().await;
    fake.push_replies([
        Reply::tool_calls(&[("mcp__everything__echo", r#"{"message": "via the daemon"}"#)]),
        Reply::text("echoed"),
    ]);
    let cli = Cli::new(&fake, "");
    let mut serve = crate::gateway::restart::serve(&cli).await;
    let ws = cli.workspace();
    let mark = format!("acp-daemon-{}", std::process::id());
    let report = run_client(
        &cli,
        json!([
            {"do": "initialize"},
            {"do": "new", "cwd": ws, "mcp": [everything(&mark)]},
            {"do": "prompt", "text": "echo through the daemon"},
        ]),
        &[],
    )
    .await;
    assert_only_frames(&report);
    let echoed = ok(&report, 2);
    assert!(
        tool_output(echoed).contains("Echo: via the daemon"),
        "{echoed}"
    );
    // The daemon runs on; the editor's server went with the editor.
    assert!(
        serve.try_wait().expect("serve").is_none(),
        "the daemon exited"
    );
    assert_eq!(left_behind(&mark).await, Vec::<String>::new());
    let _ = serve.kill().await;
}

#[tokio::test]
async fn an_editors_http_server_is_connected_with_its_headers_as_written() {
    let (_server, port) = crate::mcp::http::start_http_server().await;
    let fake = FakeLlama::start().await;
    fake.push_replies([
        Reply::tool_calls(&[("mcp__web__get-sum", r#"{"a": 2, "b": 40}"#)]),
        Reply::text("added"),
    ]);
    let cli = Cli::new(&fake, "");
    let ws = cli.workspace();
    std::fs::create_dir_all(&ws).expect("workspace");
    let web = json!({
        "type": "http",
        "name": "web",
        "url": format!("http://127.0.0.1:{port}/mcp"),
        // Taken as written: `${NAME}` reads nothing of egirl's (an unset
        // name would fail a configured server's start).
        "headers": [{"name": "X-Egirl-Test", "value": "${EGIRL_ACP_SURELY_UNSET}"}],
    });
    let report = run_client(
        &cli,
        json!([
            {"do": "initialize"},
            {"do": "new", "cwd": ws, "mcp": [web]},
            {"do": "prompt", "text": "add"},
        ]),
        &[],
    )
    .await;
    assert_only_frames(&report);
    let init = &ok(&report, 0)["response"];
    assert_eq!(init["agentCapabilities"]["mcpCapabilities"]["http"], true);
    let added = ok(&report, 2);
    let done = updates(added, "tool_call_update");
    assert_eq!(done.last().expect("done")["status"], "completed", "{added}");
    assert!(tool_output(added).contains("42"), "{added}");
}

#[tokio::test]
async fn a_list_over_egirls_bounds_fails_the_session_in_one_line() {
    let fake = FakeLlama::start().await;
    let cli = Cli::new(&fake, "");
    let ws = cli.workspace();
    std::fs::create_dir_all(&ws).expect("workspace");
    let blank = json!({"name": "blank", "command": " ", "args": [], "env": []});
    let report = run_client(
        &cli,
        json!([{"do": "initialize"}, {"do": "new", "cwd": ws, "mcp": [blank]}]),
        &[],
    )
    .await;
    assert_only_frames(&report);
    let error = &report["results"][1]["error"]["message"];
    assert_eq!(
        error, "MCP server `blank` from the editor: its command is empty",
        "{report}"
    );
}

#[tokio::test]
async fn a_refusal_ends_the_prompt_with_stop_reason_refusal() {
    let fake = FakeLlama::start().await;
    let cloud = FakeAnthropic::start().await;
    cloud.push(fake_anthropic::Reply::text(&["I can't help with that."]).stop_reason("refusal"));
    cloud.push(fake_anthropic::Reply::text(&["Sure."]));
    // The chat-completions word for it (OpenAI's, and a local server's).
    fake.push_reply(Reply::text("Filtered.").finish_reason("content_filter"));
    let model = fake_anthropic::MODEL;
    let extra = format!(
        "[remote.anthropic]\nmodel = \"{model}\"\nbase_url = \"{}\"\n",
        cloud.url()
    );
    let cli = Cli::new(&fake, &extra);
    write_key(cli.dir.path());
    let ws = cli.workspace();
    std::fs::create_dir_all(&ws).expect("workspace");
    let report = run_client(
        &cli,
        json!([
            {"do": "initialize"},
            {"do": "new", "cwd": ws},
            {"do": "set_model", "value": format!("anthropic:{model}")},
            {"do": "prompt", "text": "something it declines"},
            {"do": "prompt", "text": "something it answers"},
            {"do": "set_model", "value": "local"},
            {"do": "prompt", "text": "something filtered"},
        ]),
        &[],
    )
    .await;
    assert_only_frames(&report);
    let refused = ok(&report, 3);
    assert_eq!(refused["response"]["stopReason"], "refusal", "{refused}");
    assert_eq!(
        chunks(refused, "agent_message_chunk"),
        "I can't help with that."
    );
    let answered = ok(&report, 4);
    assert_eq!(answered["response"]["stopReason"], "end_turn");
    assert_eq!(cloud.hits(), 2);
    let filtered = ok(&report, 6);
    assert_eq!(filtered["response"]["stopReason"], "refusal", "{filtered}");
    assert_eq!(chunks(filtered, "agent_message_chunk"), "Filtered.");
    assert_eq!(
        fake.requests().len(),
        1,
        "only the local turn asks the local model"
    );
}

/// The Anthropic key in the `.env` beside the config.
fn write_key(dir: &Path) {
    std::fs::write(dir.join(".env"), "ANTHROPIC_API_KEY=sk-ant-test-0000\n").expect(".env");
}
