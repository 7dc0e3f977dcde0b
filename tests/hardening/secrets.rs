//! Hardening: secrets (docs/security.md, "Secrets"). Planted keys, a `.env`
//! variable and a `*_TOKEN` from the environment, then an approved `env`,
//! `printenv` and `cat .env`: no value reaches any output egirl writes,
//! and `[redacted:NAME]` stands where one was.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::support::cli::{Cli, events, stderr, tool_result};
use crate::support::fake_anthropic::{self, FakeAnthropic};
use crate::support::fake_llama::{FakeLlama, Reply};

const ANTHROPIC: &str = "sk-ant-planted-0123456789abcdef";
const SERVICE_URL: &str = "postgres://app:dotenv-planted-pw@db/app";
const DISCORD: &str = "discord-planted-token-abcdef0123";
const FOO: &str = "foo-planted-token-9876543210";

/// The `.env` next to the config: a named key and a variable no suffix
/// marks; and `env-copy.txt`, the same text in a file egirl did not load
/// (a sandboxed command reads the loaded `.env` itself as empty).
fn plant_dotenv(cli: &Cli) {
    let text = format!("ANTHROPIC_API_KEY={ANTHROPIC}\nMY_SERVICE_URL=\"{SERVICE_URL}\"\n");
    std::fs::write(cli.dir.path().join(".env"), &text).unwrap();
    std::fs::write(cli.dir.path().join("env-copy.txt"), text).unwrap();
}

const PLANTED_ENV: [(&str, &str); 2] = [("DISCORD_TOKEN", DISCORD), ("FOO_TOKEN", FOO)];

/// Every file under `dir` (but those in `except`) with a planted value in
/// its bytes, as `path: value`.
fn files_with_values(dir: &Path, except: &[PathBuf], values: &[&str]) -> Vec<String> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap().flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            if except.contains(&path) {
                continue;
            }
            let bytes = std::fs::read(&path).unwrap_or_default();
            for value in values {
                if bytes.windows(value.len()).any(|w| w == value.as_bytes()) {
                    found.push(format!("{}: {value}", path.display()));
                }
            }
        }
    }
    found
}

fn result_of<'a>(events: &'a [Value], id: &str) -> &'a str {
    tool_result(events, id)["output"].as_str().unwrap_or("")
}

fn under(cli: &Cli, sub: &str) -> Vec<std::path::PathBuf> {
    match std::fs::read_dir(cli.workspace().join(sub)) {
        Ok(entries) => entries.flatten().map(|e| e.path()).collect(),
        Err(_) => Vec::new(),
    }
}

#[tokio::test]
async fn no_secret_value_reaches_any_output_after_env_printenv_and_cat() {
    let fake = FakeLlama::start().await;
    fake.push_replies([
        Reply::tool_calls(&[
            ("exec", r#"{"command":"env"}"#),
            ("exec", r#"{"command":"printenv"}"#),
            ("exec", r#"{"command":"cat ../env-copy.txt"}"#),
            // A command's own file holds what it wrote; the index must not.
            (
                "exec",
                r#"{"command":"cat ../env-copy.txt > memory/copied.md"}"#,
            ),
            (
                "memory_save",
                &format!(r#"{{"text":"the foo token is {FOO}","long_term":true}}"#),
            ),
        ]),
        // A model that learnt a value anyway, split across deltas.
        Reply::chunks(&[
            "Found ",
            "discord-planted-",
            "token-abc",
            "def0123",
            " there.",
        ]),
    ]);
    let cli = Cli::new(&fake, "");
    plant_dotenv(&cli);
    let out = cli
        .run_with_env(
            &["-m", "show me the environment", "--json", "--approve-exec"],
            &PLANTED_ENV,
        )
        .await;
    assert!(out.status.success(), "{}", stderr(&out));
    let all = [ANTHROPIC, SERVICE_URL, DISCORD, FOO];
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let err = stderr(&out);
    for value in all {
        assert!(!stdout.contains(value), "--json stdout has {value}");
        assert!(!err.contains(value), "stderr has {value}: {err}");
    }

    let ev = events(&out);
    // The command's environment holds none of them, not even the names.
    for id in ["fake_call_0", "fake_call_1"] {
        let output = result_of(&ev, id);
        assert!(output.contains("PATH="), "{output}");
        for name in [
            "ANTHROPIC_API_KEY=",
            "MY_SERVICE_URL=",
            "DISCORD_TOKEN=",
            "FOO_TOKEN=",
        ] {
            assert!(!output.contains(name), "{id} sees {name}: {output}");
        }
    }
    // What a command prints of a file is redacted where a value was.
    let cat = result_of(&ev, "fake_call_2");
    assert!(
        cat.contains("ANTHROPIC_API_KEY=[redacted:ANTHROPIC_API_KEY]"),
        "{cat}"
    );
    assert!(
        cat.contains("MY_SERVICE_URL=\"[redacted:MY_SERVICE_URL]\""),
        "{cat}"
    );
    let final_text = ev
        .iter()
        .find(|e| e["type"] == "final")
        .and_then(|e| e["text"].as_str())
        .expect("a final answer");
    assert_eq!(final_text, "Found [redacted:DISCORD_TOKEN] there.");
    let deltas: String = ev
        .iter()
        .filter(|e| e["type"] == "delta")
        .filter_map(|e| e["text"].as_str())
        .collect();
    assert_eq!(deltas, final_text);
    // Not even a piece of a value goes out while it streams.
    for delta in ev.iter().filter(|e| e["type"] == "delta") {
        let text = delta["text"].as_str().unwrap_or("");
        assert!(
            !text.contains("planted") && !text.contains("def0123"),
            "{text}"
        );
    }
    assert!(stdout.contains("the foo token is [redacted:FOO_TOKEN]"));

    // What the model was sent next holds the redacted results.
    let requests = serde_json::to_string(&fake.requests()).unwrap();
    assert!(
        requests.contains("[redacted:ANTHROPIC_API_KEY]"),
        "{requests}"
    );
    for value in all {
        assert!(!requests.contains(value), "a model request has {value}");
    }

    // Memory as the index holds it after a reindex, and every file written.
    let reindex = cli.run_with_env(&["memory", "reindex"], &PLANTED_ENV).await;
    assert!(reindex.status.success(), "{}", stderr(&reindex));
    let index = std::fs::read(cli.workspace().join(".egirl/index.sqlite")).unwrap();
    let holds = |marker: &[u8]| index.windows(marker.len()).any(|w| w == marker);
    assert!(
        holds(b"the foo token is [redacted:FOO_TOKEN]"),
        "the index holds MEMORY.md as saved"
    );
    assert!(
        holds(b"MY_SERVICE_URL=\"[redacted:MY_SERVICE_URL]\""),
        "the index holds the command's file, redacted"
    );
    assert!(!under(&cli, "sessions").is_empty(), "no transcript");
    assert!(!under(&cli, "memory").is_empty(), "no daily log");
    let memory = std::fs::read_to_string(cli.workspace().join("MEMORY.md")).unwrap();
    assert!(
        memory.contains("the foo token is [redacted:FOO_TOKEN]"),
        "{memory}"
    );
    let logs = std::fs::read_dir(cli.dir.path().join("logs")).unwrap();
    assert!(logs.count() > 0, "no log file");
    let copied = cli.workspace().join("memory/copied.md");
    assert!(
        std::fs::read_to_string(&copied)
            .unwrap()
            .contains(ANTHROPIC)
    );
    let planted = [
        cli.dir.path().join(".env"),
        cli.dir.path().join("env-copy.txt"),
        copied,
    ];
    let leaks = files_with_values(cli.dir.path(), &planted, &all);
    assert!(leaks.is_empty(), "{leaks:#?}");
}

#[tokio::test]
async fn a_passed_through_variable_reaches_commands_and_stays_redacted() {
    let fake = FakeLlama::start().await;
    fake.push_replies([
        Reply::tool_calls(&[(
            "exec",
            r#"{"command":"printenv FOO_TOKEN; printenv DISCORD_TOKEN; echo end"}"#,
        )]),
        Reply::text("done"),
    ]);
    let cli = Cli::new(&fake, "[tools.exec]\nenv_passthrough = [\"FOO_TOKEN\"]\n");
    let out = cli
        .run_with_env(&["-m", "go", "--json", "--approve-exec"], &PLANTED_ENV)
        .await;
    assert!(out.status.success(), "{}", stderr(&out));
    let ev = events(&out);
    let output = result_of(&ev, "fake_call_0");
    // Only a command that saw the value can have printed what is redacted.
    assert!(
        output.ends_with("[stdout]\n[redacted:FOO_TOKEN]\nend"),
        "{output}"
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(!stdout.contains(FOO) && !stdout.contains(DISCORD));
}

#[tokio::test]
async fn remote_requests_carry_no_secret_value() {
    let fake = FakeLlama::start().await;
    let remote = FakeAnthropic::start().await;
    remote.push(fake_anthropic::Reply::tool_use(
        "toolu_1",
        "exec",
        &[r#"{"command": "cat ../env-copy.txt; printenv"}"#],
    ));
    remote.push(fake_anthropic::Reply::text(&["all ", "read"]));
    let cli = Cli::new(
        &fake,
        &format!(
            "[remote.anthropic]\nmodel = \"{}\"\nbase_url = \"{}\"\n",
            fake_anthropic::MODEL,
            remote.url()
        ),
    );
    plant_dotenv(&cli);
    let out = cli
        .run_with_env(
            &["-m", "use claude: read the env", "--json", "--approve-exec"],
            &PLANTED_ENV,
        )
        .await;
    assert!(out.status.success(), "{}", stderr(&out));
    let bodies: Vec<Value> = remote.requests().iter().map(|r| r.body.clone()).collect();
    assert_eq!(bodies.len(), 2, "{bodies:?}");
    let sent = serde_json::to_string(&bodies).unwrap();
    assert!(sent.contains("[redacted:ANTHROPIC_API_KEY]"), "{sent}");
    for value in [ANTHROPIC, SERVICE_URL, DISCORD, FOO] {
        assert!(!sent.contains(value), "a remote request has {value}");
    }
}

#[tokio::test]
async fn a_value_typed_or_kept_in_memory_never_reaches_the_model() {
    let fake = FakeLlama::start().await;
    fake.push_replies([Reply::text("noted")]);
    let cli = Cli::new(&fake, "");
    // The first run creates the workspace; MEMORY.md is in every prompt.
    let out = cli.run_with_env(&["-m", "hello"], &PLANTED_ENV).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let memory = cli.workspace().join("MEMORY.md");
    let mut text = std::fs::read_to_string(&memory).unwrap();
    text.push_str(&format!("\n- the foo token is {FOO}\n"));
    std::fs::write(&memory, text).unwrap();

    let typed = format!("my discord token is {DISCORD}, keep it");
    let out = cli
        .run_with_env(&["-m", &typed, "--json"], &PLANTED_ENV)
        .await;
    assert!(out.status.success(), "{}", stderr(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("my discord token is [redacted:DISCORD_TOKEN], keep it"));
    let sent = serde_json::to_string(&fake.requests().pop().unwrap()).unwrap();
    assert!(
        sent.contains("the foo token is [redacted:FOO_TOKEN]"),
        "{sent}"
    );
    assert!(sent.contains("[redacted:DISCORD_TOKEN]"), "{sent}");
    let leaks = files_with_values(&cli.workspace().join("sessions"), &[], &[FOO, DISCORD]);
    assert!(leaks.is_empty(), "{leaks:#?}");
    assert!(!sent.contains(FOO) && !sent.contains(DISCORD));
    assert!(!stdout.contains(FOO) && !stdout.contains(DISCORD));
}

/// A transcript written before redaction existed: resumed, it reaches the
/// model redacted, and `egirl export` never puts the value in training data.
#[tokio::test]
async fn a_legacy_transcript_is_redacted_when_sent_and_exported() {
    let fake = FakeLlama::start().await;
    fake.push_replies([Reply::text("first"), Reply::text("second")]);
    let cli = Cli::new(&fake, "");
    let out = cli.run_with_env(&["-m", "hello"], &PLANTED_ENV).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let record = |role: &str, content: &str| {
        serde_json::json!({
            "ts": "2026-01-01T00:00:00Z",
            "origin": "cli",
            "role": role,
            "content": content
        })
        .to_string()
    };
    let legacy = format!(
        "{}\n{}\n",
        record("user", &format!("my token is {FOO}")),
        record("assistant", &format!("noted: {FOO}"))
    );
    std::fs::write(cli.workspace().join("sessions/cli-legacy.jsonl"), legacy).unwrap();

    let out = cli
        .run_with_env(&["-m", "go on", "--session", "cli-legacy"], &PLANTED_ENV)
        .await;
    assert!(out.status.success(), "{}", stderr(&out));
    let sent = serde_json::to_string(&fake.requests().pop().unwrap()).unwrap();
    assert!(sent.contains("noted: [redacted:FOO_TOKEN]"), "{sent}");
    assert!(!sent.contains(FOO));

    let out = cli.run_with_env(&["export"], &PLANTED_ENV).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let exported = String::from_utf8_lossy(&out.stdout);
    assert!(
        exported.contains("my token is [redacted:FOO_TOKEN]"),
        "{exported}"
    );
    assert!(!exported.contains(FOO));
    for line in exported.lines() {
        serde_json::from_str::<Value>(line).expect("each line stays JSON");
    }
}
