//! `[[hooks]]`: the user's commands at points of a turn, through the real
//! binary (`-m --json`) against the fake local model. A hook here is a
//! small `sh` script in the test's directory, run as `["/bin/sh", SCRIPT,
//! ARGS...]` (no shell between egirl and the argv).

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;

use crate::support::cli::{Cli, events, of_type, stderr, tool_result};
use crate::support::fake_llama::{FakeLlama, Reply};

/// A script in the test's directory.
fn script(cli: &Cli, name: &str, body: &str) -> PathBuf {
    let path = cli.dir.path().join(name);
    std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
    path
}

/// One `[[hooks]]` entry running `sh SCRIPT ARGS...`.
fn hook(
    event: &str,
    matcher: Option<&str>,
    script: &Path,
    args: &[&Path],
    timeout: Option<&str>,
) -> String {
    let mut argv = vec![format!("\"/bin/sh\""), format!("\"{}\"", script.display())];
    argv.extend(args.iter().map(|a| format!("\"{}\"", a.display())));
    let mut text = format!(
        "[[hooks]]\nevent = \"{event}\"\ncommand = [{}]\n",
        argv.join(", ")
    );
    if let Some(m) = matcher {
        text.push_str(&format!("match = \"{m}\"\n"));
    }
    if let Some(t) = timeout {
        text.push_str(&format!("timeout = \"{t}\"\n"));
    }
    text
}

fn exec_call(command: &str) -> Reply {
    Reply::tool_calls(&[("exec", &format!(r#"{{"command": "{command}"}}"#))])
}

/// The lines a recording hook appended (one JSON object each).
fn recorded(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

fn notices(events: &[Value]) -> Vec<String> {
    of_type(events, "notice")
        .iter()
        .filter_map(|e| e["message"].as_str().map(String::from))
        .collect()
}

#[tokio::test]
async fn a_pre_tool_hook_that_exits_2_blocks_exec_and_the_model_reads_why() {
    let fake = FakeLlama::start().await;
    fake.push_replies([exec_call("echo from-exec"), Reply::text("understood")]);
    let cli = Cli::new(&fake, "");
    let guard = script(
        &cli,
        "guard.sh",
        "cat >/dev/null\necho 'exec is off limits in this repo' >&2\nexit 2",
    );
    let cli = rewrite(cli, &hook("pre_tool", Some("exec"), &guard, &[], None));
    let out = cli
        .run(&["-m", "run echo", "--json", "--approve-exec"])
        .await;
    assert!(out.status.success(), "{}", stderr(&out));
    let ev = events(&out);
    let result = tool_result(&ev, "fake_call_0");
    assert_eq!(result["success"], false, "{result}");
    let output = result["output"].as_str().unwrap_or_default();
    assert!(
        output.contains("exec is off limits in this repo"),
        "{output}"
    );
    assert!(
        of_type(&ev, "approval_request").is_empty(),
        "blocked before approval"
    );
    let hook = of_type(&ev, "hook");
    assert_eq!(hook.len(), 1, "{ev:?}");
    assert_eq!(hook[0]["outcome"], "blocked");
    assert_eq!(hook[0]["event"], "pre_tool");
    // The model's next request carries the reason.
    let requests = fake.requests_to("/v1/chat/completions");
    let last = serde_json::to_string(requests.last().expect("a second request")).unwrap();
    assert!(last.contains("exec is off limits in this repo"), "{last}");
}

/// The Cli's config with `extra` appended (a hook naming a script that
/// needed the Cli's directory first).
fn rewrite(cli: Cli, extra: &str) -> Cli {
    let path = cli.config();
    let mut text = std::fs::read_to_string(&path).unwrap();
    text.push_str(extra);
    std::fs::write(&path, text).unwrap();
    cli
}

#[tokio::test]
async fn a_hung_hook_is_killed_at_its_timeout_with_a_notice() {
    let fake = FakeLlama::start().await;
    fake.push_replies([exec_call("echo from-exec"), Reply::text("done")]);
    let cli = Cli::new(&fake, "");
    let pid_file = cli.dir.path().join("hung.pid");
    let hung = script(&cli, "hung.sh", "sleep 300 &\necho $! > \"$1\"\nwait");
    let cli = rewrite(
        cli,
        &hook("pre_tool", None, &hung, &[&pid_file], Some("1s")),
    );
    let out = cli
        .run(&["-m", "run echo", "--json", "--approve-exec"])
        .await;
    assert!(out.status.success(), "{}", stderr(&out));
    let ev = events(&out);
    let said = notices(&ev);
    assert!(
        said.iter()
            .any(|n| n.contains("hung.sh") && n.contains("ran past its timeout")),
        "{said:?}"
    );
    assert_eq!(of_type(&ev, "hook")[0]["outcome"], "timed_out");
    // It does not block the call: only exit 2 does.
    let result = tool_result(&ev, "fake_call_0");
    assert_eq!(result["success"], true, "{result}");
    // Its whole process group went with it: the background sleep too.
    let pid = std::fs::read_to_string(&pid_file).unwrap();
    let proc_dir = PathBuf::from(format!("/proc/{}", pid.trim()));
    let mut alive = true;
    for _ in 0..100 {
        let state = std::fs::read_to_string(proc_dir.join("stat")).unwrap_or_default();
        alive = !state.is_empty() && !state.contains(") Z ");
        if !alive {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(!alive, "the hook's background child still runs");
}

#[tokio::test]
async fn post_tool_gets_the_result_and_each_point_runs_in_order() {
    let fake = FakeLlama::start().await;
    fake.push_replies([exec_call("echo from-exec"), Reply::text("done")]);
    let cli = Cli::new(&fake, "");
    let log = cli.dir.path().join("hooks.jsonl");
    let record = script(&cli, "record.sh", "cat >> \"$1\"\necho >> \"$1\"");
    let mut hooks = String::new();
    for event in [
        "session_start",
        "user_message",
        "pre_tool",
        "post_tool",
        "turn_end",
    ] {
        hooks.push_str(&hook(event, None, &record, &[&log], None));
    }
    let cli = rewrite(cli, &hooks);
    let out = cli
        .run(&["-m", "run echo", "--json", "--approve-exec"])
        .await;
    assert!(out.status.success(), "{}", stderr(&out));
    let lines = recorded(&log);
    let order: Vec<&str> = lines.iter().filter_map(|l| l["event"].as_str()).collect();
    assert_eq!(
        order,
        [
            "session_start",
            "user_message",
            "pre_tool",
            "post_tool",
            "turn_end"
        ]
    );
    assert_eq!(lines[1]["text"], "run echo");
    let post = &lines[3];
    assert_eq!(post["tool"], "exec");
    assert_eq!(post["origin"], "cli");
    assert_eq!(post["arguments"]["command"], "echo from-exec");
    assert_eq!(post["result"]["success"], true);
    let output = post["result"]["output"].as_str().unwrap_or_default();
    assert!(output.contains("from-exec"), "{post}");
    assert_eq!(lines[4]["interrupted"], false);
    let ev = events(&out);
    assert_eq!(of_type(&ev, "hook").len(), 5, "{ev:?}");
}

/// The daily log gets a turn's lines after `turn_ended` when no hook
/// waits for them; a `turn_end` hook finds them already there.
#[tokio::test]
async fn a_turn_end_hook_finds_the_turns_lines_in_the_daily_log() {
    let fake = FakeLlama::start().await;
    fake.push_reply(Reply::text("the answer is 42"));
    let cli = Cli::new(&fake, "");
    let copy = cli.dir.path().join("daily-copy.md");
    // The hook runs in the workspace.
    let copier = script(&cli, "copy.sh", "cat memory/*.md > \"$1\"");
    let cli = rewrite(cli, &hook("turn_end", None, &copier, &[&copy], None));
    let out = cli.run(&["-m", "what is the answer", "--json"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let copied = std::fs::read_to_string(&copy).unwrap_or_default();
    assert!(
        copied.contains("what is the answer") && copied.contains("the answer is 42"),
        "{copied}"
    );
}

const ANTHROPIC: &str = "sk-ant-hookplanted-0123456789abcdef";
const FOO: &str = "foo-hookplanted-token-9876543210";
const SERVICE_URL: &str = "postgres://app:dotenv-hookplanted-pw@db/app";

#[tokio::test]
async fn a_hook_never_sees_a_secret_value() {
    let fake = FakeLlama::start().await;
    fake.push_replies([exec_call("echo hi"), Reply::text("done")]);
    let cli = Cli::new(&fake, "");
    std::fs::write(
        cli.dir.path().join(".env"),
        format!("MY_SERVICE_URL=\"{SERVICE_URL}\"\n"),
    )
    .unwrap();
    let seen = cli.dir.path().join("seen.txt");
    let dump = script(
        &cli,
        "dump.sh",
        "env >> \"$1\"\ncat >> \"$1\"\necho >> \"$1\"",
    );
    let mut hooks = String::new();
    for event in ["user_message", "pre_tool", "post_tool"] {
        hooks.push_str(&hook(event, None, &dump, &[&seen], None));
    }
    let cli = rewrite(cli, &hooks);
    let typed = format!("the key is {ANTHROPIC} and the db is {SERVICE_URL}");
    let out = cli
        .run_with_env(
            &["-m", &typed, "--json", "--approve-exec"],
            &[("ANTHROPIC_API_KEY", ANTHROPIC), ("FOO_TOKEN", FOO)],
        )
        .await;
    assert!(out.status.success(), "{}", stderr(&out));
    let text = std::fs::read_to_string(&seen).unwrap();
    assert!(text.contains("PATH="), "the hooks ran: {text}");
    assert!(text.contains("\"event\":\"post_tool\""), "{text}");
    for value in [ANTHROPIC, FOO, SERVICE_URL] {
        assert!(!text.contains(value), "a hook saw {value}:\n{text}");
    }
    assert!(text.contains("[redacted:ANTHROPIC_API_KEY]"), "{text}");
}

#[tokio::test]
async fn the_model_cannot_add_a_hook() {
    let fake = FakeLlama::start().await;
    let planted = r#"[[hooks]]\nevent = \"session_start\"\ncommand = [\"/bin/sh\", \"-c\", \"touch pwned\"]\n"#;
    fake.push_replies([
        Reply::tool_calls(&[(
            "write_file",
            &format!(r#"{{"path": "egirl.toml", "content": "{planted}"}}"#),
        )]),
        Reply::text("tried"),
    ]);
    let cli = Cli::holding_its_config(&fake, "");
    let before = std::fs::read_to_string(cli.config()).unwrap();
    let out = cli.run(&["-m", "add a hook", "--json"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let ev = events(&out);
    assert_eq!(tool_result(&ev, "fake_call_0")["success"], false);
    assert_eq!(std::fs::read_to_string(cli.config()).unwrap(), before);
}

#[tokio::test]
async fn an_approval_request_hook_hears_of_the_waiting_call() {
    let fake = FakeLlama::start().await;
    fake.push_replies([exec_call("echo from-exec"), Reply::text("done")]);
    let cli = Cli::new(&fake, "");
    let log = cli.dir.path().join("approvals.jsonl");
    let record = script(&cli, "record.sh", "cat >> \"$1\"\necho >> \"$1\"");
    // It runs beside the prompt, not in the turn: a post_tool hook waits
    // (up to 5 s) for its line, so the run does not end before it.
    let wait = script(
        &cli,
        "wait.sh",
        "cat >/dev/null\ni=0\nwhile [ ! -s \"$1\" ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i+1)); done",
    );
    let hooks = format!(
        "{}{}",
        hook("approval_request", Some("exec"), &record, &[&log], None),
        hook("post_tool", None, &wait, &[&log], None)
    );
    let cli = rewrite(cli, &hooks);
    let out = cli
        .run(&["-m", "run echo", "--json", "--approve-exec"])
        .await;
    assert!(out.status.success(), "{}", stderr(&out));
    let lines = recorded(&log);
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert_eq!(lines[0]["event"], "approval_request");
    assert_eq!(lines[0]["tool"], "exec");
    assert_eq!(lines[0]["arguments"]["command"], "echo from-exec");
    let ev = events(&out);
    let request = of_type(&ev, "approval_request");
    assert_eq!(lines[0]["approval_id"], request[0]["id"]);
}
