//! `egirl acp` driven by a real ACP client: the npm SDK's client side
//! (`tests/acp/client.mjs`, the SDK installed by `scripts/install-acp.sh`),
//! through the real binary, the scripted fake model behind it.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Value, json};

use crate::support::cli::Cli;
use crate::support::fake_llama::{FakeLlama, Reply};

/// Where `scripts/install-acp.sh` put the SDK; a missing one fails the
/// test with the script to run (never a silent pass).
pub(super) fn sdk_modules() -> PathBuf {
    let cache = std::env::var_os("EGIRL_CACHE")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(std::env::var_os("HOME").expect("HOME")).join(".cache/egirl")
        });
    let modules = cache.join("acp/node_modules");
    assert!(
        modules
            .join("@agentclientprotocol/sdk/package.json")
            .is_file(),
        "no @agentclientprotocol/sdk in {}: run scripts/install-acp.sh",
        modules.display()
    );
    modules
}

/// Runs the client on `steps` against `egirl acp` of `cli`, answering
/// permission requests with `answers`; its report.
pub(super) async fn run_client(cli: &Cli, steps: Value, answers: &[&str]) -> Value {
    run_scenario(cli, steps, answers, Value::Null).await
}

/// As [`run_client`], the client serving files from `buffers` when given.
pub(super) async fn run_scenario(
    cli: &Cli,
    steps: Value,
    answers: &[&str],
    buffers: Value,
) -> Value {
    run_with_env(cli, steps, answers, buffers, json!({})).await
}

/// As [`run_scenario`], `egirl acp` started with `env` added to its
/// environment.
pub(super) async fn run_with_env(
    cli: &Cli,
    steps: Value,
    answers: &[&str],
    buffers: Value,
    mut env: Value,
) -> Value {
    env["HOME"] = json!(cli.dir.path());
    let scenario = json!({
        "buffers": buffers,
        "command": env!("CARGO_BIN_EXE_egirl"),
        "args": ["--config", cli.config(), "acp"],
        "cwd": cli.dir.path(),
        "env": env,
        "answers": answers,
        "steps": steps,
    });
    let file = cli.dir.path().join("scenario.json");
    std::fs::write(&file, scenario.to_string()).expect("scenario");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/acp/client.mjs");
    let run = tokio::process::Command::new("node")
        .arg(script)
        .arg(&file)
        .env("ACP_NODE_MODULES", sdk_modules())
        .env_remove("EGIRL_CONFIG")
        .env_remove("XDG_CONFIG_HOME")
        .kill_on_drop(true)
        .output();
    let out = tokio::time::timeout(Duration::from_secs(120), run)
        .await
        .expect("the client finished")
        .expect("node runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "client failed: {stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_str(stdout.trim())
        .unwrap_or_else(|e| panic!("{e}: {stdout}\n{}", String::from_utf8_lossy(&out.stderr)))
}

/// Every line the agent wrote on stdout is one JSON-RPC 2.0 frame.
pub(super) fn assert_only_frames(report: &Value) {
    let raw = report["raw"].as_str().expect("raw stdout");
    assert!(!raw.is_empty(), "nothing on stdout");
    assert!(raw.ends_with('\n'), "a torn last line: {raw}");
    for line in raw.lines() {
        let frame: Value = serde_json::from_str(line)
            .unwrap_or_else(|e| panic!("stdout holds a line that is not JSON ({e}): {line}"));
        assert_eq!(frame["jsonrpc"], "2.0", "{line}");
        assert!(
            frame.get("method").is_some()
                || frame.get("result").is_some()
                || frame.get("error").is_some(),
            "not a JSON-RPC message: {line}"
        );
    }
}

/// The step `n`'s result, which must have succeeded.
pub(super) fn ok(report: &Value, n: usize) -> &Value {
    let step = &report["results"][n];
    assert!(
        step.get("error").is_none(),
        "step {n} failed: {step}\nstderr: {}",
        report["stderr"]
    );
    step
}

/// The updates of a step of one kind (`sessionUpdate`).
pub(super) fn updates<'a>(step: &'a Value, kind: &str) -> Vec<&'a Value> {
    step["updates"]
        .as_array()
        .map(|all| {
            all.iter()
                .map(|n| &n["update"])
                .filter(|u| u["sessionUpdate"] == kind)
                .collect()
        })
        .unwrap_or_default()
}

/// The text of a step's chunks of one kind, joined.
pub(super) fn chunks(step: &Value, kind: &str) -> String {
    updates(step, kind)
        .iter()
        .filter_map(|u| u["content"]["text"].as_str())
        .collect()
}

#[tokio::test]
async fn an_editor_session_streams_text_diffs_and_asks_before_running() {
    let fake = FakeLlama::start().await;
    let exec = |file: &str| {
        let args = json!({"command": format!("touch {file}")}).to_string();
        Reply::tool_calls(&[("exec", args.as_str())])
    };
    fake.push_replies([
        Reply::text("Hello from egirl").with_reasoning("thinking first"),
        Reply::tool_calls(&[("write_file", r#"{"path": "notes.txt", "content": "hi\n"}"#)]),
        Reply::text("wrote it"),
        exec("allowed.txt"),
        Reply::text("ran it"),
        exec("rejected.txt"),
        Reply::text("did not run it"),
        Reply::text("a small picture"),
    ]);
    let cli = Cli::new(&fake, "");
    let ws = cli.workspace();
    std::fs::create_dir_all(&ws).expect("workspace");
    let report = run_client(
        &cli,
        json!([
            {"do": "initialize"},
            {"do": "new", "cwd": ws},
            {"do": "prompt", "text": "say hello"},
            {"do": "prompt", "text": "write notes"},
            {"do": "prompt", "text": "touch allowed"},
            {"do": "prompt", "text": "touch rejected"},
            {"do": "prompt", "text": "what is this", "image": PNG_1X1},
        ]),
        &["allow_once", "reject_once"],
    )
    .await;
    assert_only_frames(&report);

    let init = &ok(&report, 0)["response"];
    assert_eq!(init["protocolVersion"], 1);
    assert_eq!(init["agentCapabilities"]["loadSession"], true);
    assert_eq!(init["agentInfo"]["name"], "egirl");
    assert_eq!(init["authMethods"], json!([]));

    let new = ok(&report, 1);
    assert!(
        new["response"]["sessionId"]
            .as_str()
            .is_some_and(|id| id.starts_with("acp-"))
    );
    let model = &new["response"]["configOptions"][0];
    assert_eq!(
        (model["id"].as_str(), model["type"].as_str()),
        (Some("model"), Some("select"))
    );
    assert_eq!(model["currentValue"], "auto");
    let commands = updates(new, "available_commands_update");
    let names = commands[0]["availableCommands"].to_string();
    assert!(
        names.contains("\"compact\"") && names.contains("\"memory\""),
        "{names}"
    );

    let hello = ok(&report, 2);
    assert_eq!(hello["response"]["stopReason"], "end_turn");
    assert_eq!(chunks(hello, "agent_message_chunk"), "Hello from egirl");
    assert_eq!(chunks(hello, "agent_thought_chunk"), "thinking first");
    // How many chunks is not asserted: deltas waiting for a busy surface
    // are merged (src/bus/queue.rs). That the answer streams while the
    // turn runs is what the cancel test shows (it cancels on the first).

    let write = ok(&report, 3);
    let call = updates(write, "tool_call");
    assert_eq!(call.len(), 1, "{write}");
    assert_eq!(call[0]["kind"], "edit");
    let path = ws.canonicalize().expect("ws").join("notes.txt");
    assert_eq!(call[0]["locations"][0]["path"], json!(path));
    let done = updates(write, "tool_call_update");
    let done = done.last().expect("an update");
    assert_eq!(done["toolCallId"], call[0]["toolCallId"]);
    assert_eq!(done["status"], "completed");
    let diff = &done["content"][0];
    assert_eq!(diff["type"], "diff", "{done}");
    assert_eq!(diff["path"], json!(path));
    assert_eq!(diff["newText"], "hi\n");
    assert!(diff.get("oldText").is_none_or(Value::is_null), "{diff}");
    assert_eq!(std::fs::read_to_string(&path).expect("written"), "hi\n");

    let asked = report["permissions"].as_array().expect("permissions");
    assert_eq!(asked.len(), 2, "{asked:?}");
    let options: Vec<&str> = asked[0]["options"]
        .as_array()
        .expect("options")
        .iter()
        .filter_map(|o| o["optionId"].as_str())
        .collect();
    assert_eq!(options, ["allow_once", "allow_always", "reject_once"]);
    let always = &asked[0]["options"][1]["name"];
    assert!(
        always.as_str().is_some_and(|n| n.contains("touch")),
        "{always}"
    );
    let allowed = ok(&report, 4);
    let exec_call = updates(allowed, "tool_call");
    assert_eq!(exec_call[0]["kind"], "execute");
    assert_eq!(
        asked[0]["toolCall"]["toolCallId"],
        exec_call[0]["toolCallId"]
    );
    let ran = updates(allowed, "tool_call_update");
    assert_eq!(ran.last().expect("ran")["status"], "completed", "{allowed}");
    assert!(ws.join("allowed.txt").exists(), "allow_once did not run it");

    let rejected = ok(&report, 5);
    let refused = updates(rejected, "tool_call_update");
    assert_eq!(
        refused.last().expect("refused")["status"],
        "failed",
        "{rejected}"
    );
    assert!(!ws.join("rejected.txt").exists(), "reject_once ran it");
    assert_eq!(chunks(rejected, "agent_message_chunk"), "did not run it");

    assert_eq!(ok(&report, 6)["response"]["stopReason"], "end_turn");
    assert_eq!(
        init["agentCapabilities"]["promptCapabilities"]["image"],
        true
    );
    let stored = std::fs::read_dir(ws.join(".egirl/images")).expect("the image store");
    assert_eq!(stored.count(), 1, "the prompt's image was not stored");
}

/// A 1x1 PNG, base64.
const PNG_1X1: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";

#[tokio::test]
async fn cancel_ends_the_prompt_cancelled_and_a_later_client_loads_the_session() {
    let fake = FakeLlama::start().await;
    fake.push_replies([
        Reply::text("noted the color"),
        Reply::tool_calls(&[("glob", r#"{"pattern": "*"}"#)]),
        Reply::endless("more ", 50_000_000).frame_delay(Duration::from_millis(20)),
    ]);
    // One model request per turn: a turn that calls a tool runs out.
    let cli = Cli::new(&fake, "[agent]\nmax_turns = 1\n");
    let ws = cli.workspace();
    std::fs::create_dir_all(&ws).expect("workspace");
    let first = run_client(
        &cli,
        json!([
            {"do": "initialize"},
            {"do": "new", "cwd": ws},
            {"do": "prompt", "text": "my color is blue"},
            {"do": "prompt", "text": "look around"},
            {"do": "prompt", "text": "talk forever", "cancel_on": "agent_message_chunk"},
        ]),
        &[],
    )
    .await;
    assert_only_frames(&first);
    assert_eq!(ok(&first, 2)["response"]["stopReason"], "end_turn");
    let out_of_requests = ok(&first, 3);
    assert_eq!(
        out_of_requests["response"]["stopReason"], "max_turn_requests",
        "{out_of_requests}"
    );
    let cancelled = ok(&first, 4);
    assert_eq!(
        cancelled["response"]["stopReason"], "cancelled",
        "{cancelled}"
    );
    let session = first["results"][1]["response"]["sessionId"]
        .as_str()
        .expect("session id")
        .to_string();

    let second = run_client(
        &cli,
        json!([
            {"do": "initialize"},
            {"do": "list"},
            {"do": "load", "session": session, "cwd": ws},
            {"do": "new", "cwd": "/"},
        ]),
        &[],
    )
    .await;
    assert_only_frames(&second);
    let listed = ok(&second, 1)["response"]["sessions"].to_string();
    assert!(
        listed.contains(&session) && listed.contains("my color is blue"),
        "{listed}"
    );
    let loaded = ok(&second, 2);
    assert_eq!(
        chunks(loaded, "user_message_chunk"),
        "my color is bluelook aroundtalk forever"
    );
    assert!(
        chunks(loaded, "agent_message_chunk").starts_with("noted the color"),
        "{loaded}"
    );
    let refused = &second["results"][3]["error"];
    let message = refused["message"].as_str().unwrap_or_default();
    assert!(message.contains("outside egirl's workspace"), "{refused}");
}

#[tokio::test]
async fn beside_a_running_daemon_the_editor_goes_through_its_core() {
    let fake = FakeLlama::start().await;
    fake.push_reply(Reply::text("from the daemon"));
    let cli = Cli::new(&fake, "");
    let mut serve = crate::gateway::restart::serve(&cli).await;
    let ws = cli.workspace();
    let report = run_client(
        &cli,
        json!([
            {"do": "initialize"},
            {"do": "new", "cwd": ws},
            {"do": "prompt", "text": "hi"},
        ]),
        &[],
    )
    .await;
    assert_only_frames(&report);
    let answered = ok(&report, 2);
    assert_eq!(answered["response"]["stopReason"], "end_turn");
    assert_eq!(chunks(answered, "agent_message_chunk"), "from the daemon");
    let logs: String = std::fs::read_dir(cli.dir.path().join("logs"))
        .expect("logs")
        .flatten()
        .map(|e| std::fs::read_to_string(e.path()).unwrap_or_default())
        .collect();
    assert!(
        logs.contains("acp: through the daemon"),
        "the editor ran a core of its own"
    );
    let _ = serve.kill().await;
}
