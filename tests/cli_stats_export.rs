//! `egirl stats` and `egirl export` on hand-written files, and the usage
//! log a real headless turn leaves behind.

use std::path::{Path, PathBuf};
use std::process::Output;

use chrono::{DateTime, Utc};
use egirl::protocol::Origin;
use egirl::providers::{ChatMessage, ToolCall};
use egirl::sessions::Record;
use serde_json::{Value, json};

use crate::support::fake_llama::{FakeLlama, Reply};

struct Cli {
    dir: tempfile::TempDir,
}

impl Cli {
    fn new(endpoint: &str) -> Self {
        let dir = tempfile::tempdir().expect("temp dir");
        let config = format!(
            "[workspace]\npath = \"{}\"\n[log]\ndir = \"{}\"\n[local]\nendpoint = \"{endpoint}\"\nmodel = \"fake\"\n",
            dir.path().join("ws").display(),
            dir.path().join("logs").display(),
        );
        std::fs::write(dir.path().join("egirl.toml"), config).expect("config");
        std::fs::create_dir_all(dir.path().join("ws/.egirl")).expect("ws");
        std::fs::create_dir_all(dir.path().join("ws/sessions")).expect("sessions");
        Self { dir }
    }

    fn ws(&self) -> PathBuf {
        self.dir.path().join("ws")
    }

    async fn run(&self, args: &[&str]) -> Output {
        tokio::process::Command::new(env!("CARGO_BIN_EXE_egirl"))
            .arg("--config")
            .arg(self.dir.path().join("egirl.toml"))
            .args(args)
            .env("HOME", self.dir.path())
            // Days are local days; pin the zone so the fixture's dates hold.
            .env("TZ", "UTC")
            .env_remove("EGIRL_CONFIG")
            .output()
            .await
            .expect("run egirl")
    }
}

fn ok(out: &Output) -> String {
    assert!(
        out.status.success(),
        "exit {:?}: {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn usage_line(ts: &str, session: &str, provider: &str, tokens: [u64; 3], cost: f64) -> String {
    json!({
        "ts": ts, "session": session, "origin": "cli", "provider": provider,
        "model": if provider == "llamacpp" { "qwen3" } else { "big" },
        "local": provider == "llamacpp",
        "input_tokens": tokens[0], "output_tokens": tokens[1], "cached_tokens": tokens[2],
        "cost_usd": cost,
    })
    .to_string()
}

fn close(v: &Value, expected: f64) -> bool {
    v.as_f64().is_some_and(|x| (x - expected).abs() < 1e-9)
}

#[tokio::test]
async fn stats_sums_per_day_model_and_todays_sessions() {
    let cli = Cli::new("http://127.0.0.1:9");
    let today = Utc::now().date_naive();
    let now = format!("{today}T00:00:01Z");
    let lines = [
        usage_line(
            "2025-01-10T12:00:00Z",
            "old",
            "llamacpp",
            [100, 20, 50],
            0.0,
        ),
        usage_line(
            "2025-01-10T12:30:00Z",
            "old",
            "anthropic",
            [1000, 200, 0],
            0.006,
        ),
        usage_line(&now, "a", "llamacpp", [10, 5, 0], 0.0),
        usage_line(&now, "a", "anthropic", [2000, 100, 500], 0.002),
        usage_line(&now, "b", "openai", [300, 30, 0], 0.01),
    ];
    // A crash mid-write leaves a torn last line; stats must still work.
    let text = format!("{}\n{{\"ts\":\"2025-", lines.join("\n"));
    std::fs::write(cli.ws().join(".egirl/usage.jsonl"), text).unwrap();

    let report: Value = serde_json::from_str(&ok(&cli.run(&["stats", "--json"]).await)).unwrap();
    let keys: Vec<&str> = report
        .as_object()
        .unwrap()
        .keys()
        .map(|k| k.as_str())
        .collect();
    assert_eq!(keys, ["today", "days", "models", "sessions", "total"]);
    assert_eq!(report["today"], today.to_string());

    let days = report["days"].as_array().unwrap();
    assert_eq!(days.len(), 2);
    assert_eq!(days[0]["date"], "2025-01-10");
    assert_eq!(days[0]["requests"], 2);
    assert_eq!(days[0]["input_tokens"], 1100);
    assert_eq!(days[0]["output_tokens"], 220);
    assert_eq!(days[0]["cached_tokens"], 50);
    assert!(close(&days[0]["cost_usd"], 0.006));
    assert!(close(&days[0]["local_share"], 0.5));
    assert_eq!(days[1]["date"], today.to_string());
    assert_eq!(days[1]["requests"], 3);
    assert_eq!(days[1]["local_requests"], 1);
    assert_eq!(days[1]["remote_requests"], 2);
    assert!(close(&days[1]["cost_usd"], 0.012));

    let models: Vec<(String, u64, f64)> = report["models"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            (
                format!(
                    "{}/{}",
                    m["provider"].as_str().unwrap(),
                    m["model"].as_str().unwrap()
                ),
                m["requests"].as_u64().unwrap(),
                m["cost_usd"].as_f64().unwrap(),
            )
        })
        .collect();
    assert_eq!(models.len(), 3, "{models:?}");
    assert_eq!(models[0].0, "anthropic/big");
    assert_eq!(models[0].1, 2);
    assert!((models[0].2 - 0.008).abs() < 1e-9);
    assert_eq!((models[1].0.as_str(), models[1].1), ("llamacpp/qwen3", 2));
    assert_eq!((models[2].0.as_str(), models[2].1), ("openai/big", 1));

    // Per session: today's only.
    let sessions: Vec<&str> = report["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["session"].as_str().unwrap())
        .collect();
    assert_eq!(sessions, ["a", "b"]);
    assert_eq!(report["sessions"][0]["origin"], "cli");
    assert!(close(&report["sessions"][0]["cost_usd"], 0.002));

    let total = &report["total"];
    assert_eq!(total["requests"], 5);
    assert_eq!(total["input_tokens"], 3410);
    assert!(close(&total["cost_usd"], 0.018));
    assert!(close(&total["local_share"], 0.4));

    let recent: Value =
        serde_json::from_str(&ok(&cli.run(&["stats", "--json", "--days", "1"]).await)).unwrap();
    assert_eq!(recent["days"].as_array().unwrap().len(), 1);
    assert_eq!(recent["total"]["requests"], 3);

    let table = ok(&cli.run(&["stats"]).await);
    for expected in [
        "per day",
        "2025-01-10",
        "anthropic/big",
        "sessions today",
        "total",
    ] {
        assert!(table.contains(expected), "{expected} missing from\n{table}");
    }
    let bad = cli.run(&["stats", "--days", "0"]).await;
    assert_eq!(bad.status.code(), Some(2));
}

#[tokio::test]
async fn stats_without_usage_says_so() {
    let cli = Cli::new("http://127.0.0.1:9");
    let out = ok(&cli.run(&["stats"]).await);
    assert!(out.starts_with("no usage recorded yet"), "{out}");
    let report: Value = serde_json::from_str(&ok(&cli.run(&["stats", "--json"]).await)).unwrap();
    assert_eq!(report["total"]["requests"], 0);
}

#[tokio::test]
async fn a_headless_turn_is_logged_to_usage_jsonl() {
    let fake = FakeLlama::start().await;
    fake.push_replies([Reply::text("hello")]);
    let cli = Cli::new(&fake.url());
    ok(&cli.run(&["-m", "hi", "--session", "u1"]).await);
    let text = std::fs::read_to_string(cli.ws().join(".egirl/usage.jsonl")).expect("usage log");
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 1, "{text}");
    assert_eq!(lines[0]["session"], "u1");
    assert_eq!(lines[0]["origin"], "cli");
    assert_eq!(lines[0]["provider"], "llamacpp");
    assert_eq!(lines[0]["local"], true);
    assert_eq!(lines[0]["cost_usd"], 0.0);
}

/// llama-server names the path of its GGUF in every reply; usage, the
/// usage log and `egirl stats` name the model as configured, as the status
/// line does (issue 15), and `[pricing]` still finds it by either name.
#[tokio::test]
async fn usage_names_the_configured_model_not_the_served_path() {
    let fake = FakeLlama::start().await;
    let served = "/models/llamacpp/SmolLM2-135M-Instruct.Q4_1.gguf";
    fake.set_served_model(served);
    fake.push_replies([Reply::text("hello")]);
    let cli = Cli::new(&fake.url());
    let config = cli.dir.path().join("egirl.toml");
    let mut text = std::fs::read_to_string(&config).unwrap();
    text.push_str(&format!(
        "[pricing.\"{served}\"]\ninput_per_mtok = 1000000.0\noutput_per_mtok = 0.0\n"
    ));
    std::fs::write(&config, text).unwrap();

    let out = ok(&cli.run(&["-m", "hi", "--json"]).await);
    let events: Vec<Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let of = |kind: &str| events.iter().find(|e| e["type"] == kind).cloned();
    assert_eq!(of("routing").unwrap()["model"], "fake");
    let usage = of("usage").expect("usage");
    assert_eq!(usage["model"], "fake", "{usage}");
    assert!(
        usage["cost_usd"].as_f64().unwrap_or(0.0) > 0.0,
        "priced by the served id: {usage}"
    );

    let log = std::fs::read_to_string(cli.ws().join(".egirl/usage.jsonl")).expect("usage log");
    let line: Value = serde_json::from_str(log.lines().next().unwrap()).unwrap();
    assert_eq!(line["model"], "fake", "{line}");
    assert!(!log.contains("gguf"), "{log}");

    let report: Value = serde_json::from_str(&ok(&cli.run(&["stats", "--json"]).await)).unwrap();
    assert_eq!(report["models"][0]["model"], "fake", "{report}");
}

// ---- export ----

fn at(secs: i64) -> DateTime<Utc> {
    DateTime::from_timestamp(1_736_500_000 + secs, 0).unwrap()
}

fn record(secs: i64, message: ChatMessage) -> Record {
    Record {
        ts: at(secs),
        origin: Origin::Cli,
        typed: None,
        provider: None,
        message,
    }
}

fn call(id: &str, name: &str, arguments: Value) -> ToolCall {
    ToolCall {
        id: id.into(),
        name: name.into(),
        arguments,
        arguments_error: None,
    }
}

fn with_calls(content: &str, calls: Vec<ToolCall>) -> ChatMessage {
    ChatMessage {
        tool_calls: calls,
        ..ChatMessage::assistant(content)
    }
}

fn write_session(ws: &Path, id: &str, records: &[Record]) {
    let text: String = records
        .iter()
        .map(|r| serde_json::to_string(r).unwrap() + "\n")
        .collect();
    std::fs::write(ws.join("sessions").join(format!("{id}.jsonl")), text).unwrap();
}

/// A session: a plain local turn, an escalated turn (local tool call, weak
/// local answer, then the remote model's tool call and answer), a last turn.
fn fixture(cli: &Cli) {
    let read = call("call_0", "read_file", json!({"path": "config.toml"}));
    let glob = call("call_0", "glob", json!({"pattern": "*.md"}));
    let remote_read = call("toolu_1", "read_file", json!({"path": "src/main.rs"}));
    let records = [
        record(0, ChatMessage::user("what's in config.toml?")),
        record(1, with_calls("", vec![read.clone()])),
        record(
            2,
            ChatMessage::tool_result(&read, "[workspace]\npath = \"~/.egirl\""),
        ),
        record(
            3,
            ChatMessage::assistant("Your config.toml contains the workspace settings."),
        ),
        record(10, ChatMessage::user("review main.rs for bugs")),
        record(11, with_calls("", vec![glob.clone()])),
        record(12, ChatMessage::tool_result(&glob, "README.md")),
        record(
            13,
            ChatMessage::assistant("LOCAL ATTEMPT: I'm not sure, maybe it is fine?"),
        ),
        // The escalation is recorded at 14.
        record(15, with_calls("Let me read it.", vec![remote_read.clone()])),
        record(16, ChatMessage::tool_result(&remote_read, "fn main() {}")),
        record(
            17,
            ChatMessage::assistant("REMOTE: main.rs is empty; no bugs."),
        ),
        record(20, ChatMessage::user("thanks")),
        record(21, ChatMessage::assistant("any time")),
    ];
    write_session(&cli.ws(), "s1", &records);
    // A session with nothing answered yields no example.
    write_session(&cli.ws(), "s2", &[record(30, ChatMessage::user("hello?"))]);
    let escalation = json!({
        "ts": at(14), "session": "s1", "from": "llamacpp/qwen3", "to": "anthropic/claude",
        "trigger": "hedging", "reason": "the answer hedges",
    });
    std::fs::write(
        cli.ws().join(".egirl/escalation.jsonl"),
        format!("{escalation}\n"),
    )
    .unwrap();
}

/// The JSON of each `<tool_call>\n{...}\n</tool_call>` block (the spec's
/// parse pattern), asserting every opened block is closed.
fn tool_calls(content: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = content;
    while let Some(start) = rest.find("<tool_call>") {
        let body = rest[start..]
            .strip_prefix("<tool_call>\n")
            .unwrap_or_else(|| panic!("no newline after <tool_call>: {content}"));
        let end = body
            .find("\n</tool_call>")
            .unwrap_or_else(|| panic!("unclosed <tool_call>: {content}"));
        out.push(&body[..end]);
        rest = &body[end + "\n</tool_call>".len()..];
    }
    out
}

/// Checks one line against the spec's structure and returns its messages
/// as (role, content).
fn validate(line: &str, allow_consecutive_assistants: bool) -> Vec<(String, String)> {
    let value: Value = serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}"));
    let keys: Vec<&str> = value
        .as_object()
        .unwrap()
        .keys()
        .map(|k| k.as_str())
        .collect();
    assert_eq!(keys, ["messages", "tools"]);
    // Written like the spec's example (Python json.dumps spacing).
    assert!(line.starts_with(r#"{"messages": [{"role": "system", "content": "You are egirl"#));

    let tools = value["tools"].as_array().unwrap();
    assert!(!tools.is_empty());
    for tool in tools {
        assert_eq!(tool["type"], "function");
        assert!(tool["function"]["name"].is_string());
        assert!(tool["function"]["description"].is_string());
        assert_eq!(tool["function"]["parameters"]["type"], "object");
    }
    let names: Vec<&str> = tools
        .iter()
        .filter_map(|t| t["function"]["name"].as_str())
        .collect();
    assert!(names.contains(&"read_file"), "{names:?}");

    let mut out = Vec::new();
    for (i, m) in value["messages"].as_array().unwrap().iter().enumerate() {
        let obj = m.as_object().unwrap();
        let keys: Vec<&str> = obj.keys().map(|k| k.as_str()).collect();
        assert_eq!(keys, ["role", "content"], "{m}");
        let role = m["role"].as_str().unwrap().to_string();
        let content = m["content"].as_str().unwrap().to_string();
        let previous = out.last().map(|(r, _): &(String, String)| r.as_str());
        match (i, previous, role.as_str()) {
            (0, None, "system") | (1, Some("system"), "user") => {}
            (_, Some("user"), "assistant") | (_, Some("assistant"), "user") => {}
            (_, Some("assistant"), "assistant") if allow_consecutive_assistants => {}
            other => panic!("role out of order: {other:?} in {line}"),
        }
        if role == "assistant" {
            for json in tool_calls(&content) {
                let call: Value = serde_json::from_str(json).unwrap();
                let keys: Vec<&str> = call
                    .as_object()
                    .unwrap()
                    .keys()
                    .map(|k| k.as_str())
                    .collect();
                assert_eq!(keys, ["name", "arguments"]);
                assert!(call["arguments"].is_object());
            }
        }
        if role == "user" && content.contains("<tool_response>") {
            assert!(content.starts_with("<tool_response>\n"), "{content}");
            assert!(content.ends_with("\n</tool_response>"), "{content}");
            assert_eq!(previous, Some("assistant"));
            assert!(
                out.last().unwrap().1.contains("</tool_call>"),
                "response without a call"
            );
        }
        out.push((role, content));
    }
    assert_eq!(
        out.last().unwrap().0,
        "assistant",
        "an example ends with an answer"
    );
    out
}

#[tokio::test]
async fn export_writes_each_session_in_the_qwen3_training_format() {
    let cli = Cli::new("http://127.0.0.1:9");
    fixture(&cli);
    let out = cli.run(&["export"]).await;
    let stdout = ok(&out);
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(
        lines.len(),
        1,
        "one conversation per answered session: {stdout}"
    );
    let messages = validate(lines[0], true);
    // The spec's example, byte for byte, for the first exchange.
    assert_eq!(
        messages[1],
        ("user".into(), "what's in config.toml?".into())
    );
    assert_eq!(
        messages[2].1,
        "<tool_call>\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"config.toml\"}}\n</tool_call>"
    );
    assert_eq!(
        messages[3],
        (
            "user".into(),
            "<tool_response>\n[workspace]\npath = \"~/.egirl\"\n</tool_response>".into()
        )
    );
    // The full export keeps the transcript as it is, local attempt included.
    assert!(stdout.contains("LOCAL ATTEMPT"));
    assert!(stdout.contains("REMOTE: main.rs"));
    // Text before a call stays, the call follows on its own line.
    assert!(
        messages
            .iter()
            .any(|(_, c)| c.starts_with("Let me read it.\n<tool_call>\n"))
    );
    assert_eq!(messages.last().unwrap().1, "any time");
    assert!(String::from_utf8_lossy(&out.stderr).contains("exported 1 conversation"));
}

#[tokio::test]
async fn escalated_only_keeps_the_remote_answer_and_drops_the_local_attempt() {
    let cli = Cli::new("http://127.0.0.1:9");
    fixture(&cli);
    let file = cli.dir.path().join("distill.jsonl");
    let out = cli
        .run(&[
            "export",
            "--escalated-only",
            "--out",
            file.to_str().unwrap(),
        ])
        .await;
    assert!(ok(&out).is_empty(), "--out leaves stdout empty");
    let text = std::fs::read_to_string(&file).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 1, "exactly the escalated turn: {text}");
    let messages = validate(lines[0], false);
    let roles: Vec<&str> = messages.iter().map(|(r, _)| r.as_str()).collect();
    assert_eq!(roles, ["system", "user", "assistant", "user", "assistant"]);
    assert_eq!(messages[1].1, "review main.rs for bugs");
    assert!(
        messages[2]
            .1
            .contains(r#"{"name": "read_file", "arguments": {"path": "src/main.rs"}}"#)
    );
    assert_eq!(
        messages[3].1,
        "<tool_response>\nfn main() {}\n</tool_response>"
    );
    assert_eq!(messages[4].1, "REMOTE: main.rs is empty; no bugs.");
    for dropped in ["LOCAL ATTEMPT", "README.md", "config.toml?", "thanks"] {
        assert!(!text.contains(dropped), "{dropped} leaked into {text}");
    }

    // No escalations recorded: an empty export, not an error.
    std::fs::remove_file(cli.ws().join(".egirl/escalation.jsonl")).unwrap();
    let out = ok(&cli.run(&["export", "--escalated-only"]).await);
    assert!(out.is_empty(), "{out}");
}
