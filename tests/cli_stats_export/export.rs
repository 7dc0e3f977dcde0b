//! `egirl export`: sessions as fine-tuning JSONL in the Qwen3 format, and
//! `--escalated-only`'s distillation examples.

use std::path::Path;

use chrono::{DateTime, Utc};
use egirl::chat::{ChatMessage, ToolCall};
use egirl::protocol::Origin;
use egirl::sessions::Record;
use serde_json::{Value, json};

use super::{Cli, ok};

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
        compaction: None,
        details: Default::default(),
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

/// The JSON of each `<tool_call>\n{...}\n</tool_call>` block (docs/design.md §6's
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

/// Checks one line against the structure of docs/design.md §6 and returns its messages
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
    // Written as Qwen3's template writes JSON (Python json.dumps spacing).
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
    // The training-data example, byte for byte, for the first exchange.
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
