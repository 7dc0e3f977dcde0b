//! The `egirl` binary headless (`-m`, `--json`) against the fake server.

use crate::support::cli::{Cli, events, stderr};
use crate::support::fake_llama::{FakeLlama, Reply};

#[tokio::test]
async fn answer_on_stdout_and_json_events() {
    let fake = FakeLlama::start().await;
    fake.push_replies([Reply::text("plain answer"), Reply::text("json answer")]);
    let cli = Cli::new(&fake, "");
    let out = cli.run(&["-m", "hi"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "plain answer\n");

    let out = cli.run(&["-m", "hi", "--json"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let ev = events(&out);
    let line = String::from_utf8_lossy(&out.stdout);
    assert!(
        line.starts_with("{\"type\":\"turn_started\",\"session\":"),
        "{line}"
    );
    let types: Vec<&str> = ev.iter().filter_map(|e| e["type"].as_str()).collect();
    for expected in [
        "turn_started",
        "routing",
        "delta",
        "usage",
        "final",
        "turn_ended",
    ] {
        assert!(types.contains(&expected), "{types:?}");
    }
    assert!(
        ev.iter()
            .all(|e| e["origin"] == "cli" && e["session"].is_string())
    );
}

#[tokio::test]
async fn exec_is_denied_headless_unless_approved() {
    let fake = FakeLlama::start().await;
    let call = || Reply::tool_calls(&[("exec", r#"{"command": "echo from-exec"}"#)]);
    fake.push_replies([
        call(),
        Reply::text("denied then"),
        call(),
        Reply::text("ran it"),
    ]);
    let cli = Cli::new(&fake, "");
    let out = cli.run(&["-m", "run echo", "--json"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let ev = events(&out);
    let decision = ev
        .iter()
        .find(|e| e["type"] == "approval_decision")
        .expect("a decision");
    assert_eq!(decision["decision"], "denied");
    let result = ev
        .iter()
        .find(|e| e["type"] == "tool_result")
        .expect("a result");
    assert_eq!(result["success"], false);
    assert!(
        result["output"]
            .as_str()
            .unwrap_or("")
            .contains("denied by user")
    );

    let out = cli
        .run(&["-m", "run echo", "--json", "--approve-exec"])
        .await;
    assert!(out.status.success(), "{}", stderr(&out));
    let ev = events(&out);
    let result = ev
        .iter()
        .find(|e| e["type"] == "tool_result")
        .expect("a result");
    assert_eq!(result["success"], true, "{result}");
    assert!(
        result["output"]
            .as_str()
            .unwrap_or("")
            .contains("from-exec")
    );
}

#[tokio::test]
async fn session_resumes_across_runs() {
    let fake = FakeLlama::start().await;
    fake.push_replies([Reply::text("noted"), Reply::text("you said blue")]);
    let cli = Cli::new(&fake, "");
    for text in ["my color is blue", "what was my color?"] {
        let out = cli.run(&["-m", text, "--session", "colors"]).await;
        assert!(out.status.success(), "{}", stderr(&out));
    }
    let second = &fake.requests()[1];
    let text = second["messages"].to_string();
    assert!(
        text.contains("my color is blue") && text.contains("noted"),
        "{text}"
    );
    let transcript = cli.dir.path().join("ws/sessions/colors.jsonl");
    assert_eq!(
        std::fs::read_to_string(transcript)
            .unwrap_or_default()
            .lines()
            .count(),
        4
    );

    let out = cli.run(&["-m", "x", "--session", "../escape"]).await;
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
}

#[tokio::test]
async fn bad_config_exits_2_with_one_line_naming_the_place() {
    let fake = FakeLlama::start().await;
    let cli = Cli::new(&fake, "context_length = \"huge\"\n");
    let out = cli.run(&["-m", "hi"]).await;
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert_eq!(err.lines().count(), 1, "{err}");
    let place = format!("{}:8:18: `local.context_length`", cli.config().display());
    assert!(err.contains(&place), "{err}");

    let out = tokio::process::Command::new(env!("CARGO_BIN_EXE_egirl"))
        .args(["--config", "/nonexistent/egirl.toml", "-m", "hi"])
        .output()
        .await
        .expect("run");
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("not found"));
}

#[tokio::test]
async fn unreachable_server_exits_1_with_a_clear_line() {
    let fake = FakeLlama::start().await;
    let cli = Cli::new(&fake, "");
    let config = std::fs::read_to_string(cli.config())
        .unwrap_or_default()
        .replace(&fake.url(), "http://127.0.0.1:1");
    std::fs::write(cli.config(), config).expect("config");
    let out = cli.run(&["-m", "hi"]).await;
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(err.contains("cannot reach http://127.0.0.1:1"), "{err}");
}

#[tokio::test]
async fn doctor_reports_skills_memory_and_who_runs_the_services() {
    let fake = FakeLlama::start().await;
    let cli = Cli::new(&fake, "");
    // Another process's hold on the services lock, as `egirl serve` takes it.
    let ws = cli.dir.path().join("ws");
    egirl::workspace::ensure(&ws).expect("workspace");
    let lock_path = ws.join(".egirl/services.lock");
    let mut lock = egirl::fsutil::lockfile::FileLock::try_acquire(&lock_path)
        .expect("lock file")
        .expect("free");
    lock.write_note("pid 4242").expect("note");

    let out = cli.run(&["doctor"]).await;
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}{}", stderr(&out));
    assert!(
        text.contains("ok   skills: 0 available, 0 unavailable, 0 broken"),
        "{text}"
    );
    assert!(text.contains("ok   memory index: not built yet"), "{text}");
    assert!(text.contains("note services: run by pid 4242"), "{text}");

    drop(lock);
    let text = String::from_utf8_lossy(&cli.run(&["doctor"]).await.stdout).into_owned();
    assert!(text.contains("note services: not running"), "{text}");
}

/// `write_file`/`edit_file` results carry a unified diff for the user
/// (`tool_result.diff`, redacted like any event); the model gets the
/// one-line summary only.
#[tokio::test]
async fn file_tool_results_carry_a_diff_the_model_never_sees() {
    let fake = FakeLlama::start().await;
    let cli = Cli::new(&fake, "");
    let ws = cli.workspace();
    std::fs::create_dir_all(&ws).unwrap();
    // A secret the file already held shows redacted in the diff's context.
    let token = "foo-planted-token-5550123";
    let notes = format!("# Notes\ncontext-above-7f3\nold line\ncontext-below-7f3\ntoken {token}\n");
    std::fs::write(ws.join("notes.md"), notes).unwrap();
    fake.push_replies([
        Reply::tool_calls(&[
            (
                "edit_file",
                r#"{"path": "notes.md", "old_text": "old line", "new_text": "new line\nsecond line"}"#,
            ),
            ("write_file", r#"{"path": "fresh.txt", "content": "a\nb\n"}"#),
        ]),
        Reply::text("done"),
    ]);
    let out = cli
        .run_with_env(&["-m", "edit my notes", "--json"], &[("FOO_TOKEN", token)])
        .await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(!String::from_utf8_lossy(&out.stdout).contains(token));
    let ev = events(&out);
    let result = |name: &str| {
        ev.iter()
            .find(|e| e["type"] == "tool_result" && e["name"] == name)
            .unwrap_or_else(|| panic!("no {name} result: {ev:?}"))
            .clone()
    };

    let edit = result("edit_file");
    assert_eq!(edit["success"], true, "{edit}");
    let summary = "edited notes.md: replaced 1 line(s) at line 3 with 2 line(s)";
    assert_eq!(edit["output"], summary);
    let diff = &edit["diff"];
    assert_eq!(diff["path"], "notes.md");
    assert_eq!(
        (diff["added"].as_u64(), diff["removed"].as_u64()),
        (Some(2), Some(1))
    );
    assert_eq!(
        diff["text"],
        "@@ -1,5 +1,6 @@\n # Notes\n context-above-7f3\n-old line\n+new line\n+second line\n context-below-7f3\n token [redacted:FOO_TOKEN]"
    );
    let write = result("write_file");
    assert_eq!(write["diff"]["text"], "@@ -0,0 +1,2 @@\n+a\n+b");
    assert_eq!(
        (
            write["diff"]["added"].as_u64(),
            write["diff"]["removed"].as_u64()
        ),
        (Some(2), Some(0))
    );

    // What the model got back: the summary, not the diff (its context
    // lines and hunk headers appear in no request).
    let requests = fake.requests();
    assert_eq!(requests.len(), 2);
    let sent = requests[1].to_string();
    assert!(sent.contains(summary), "{sent}");
    for leak in ["context-above-7f3", "@@ -", "+new line"] {
        assert!(
            !sent.contains(leak),
            "the diff reached the model ({leak}): {sent}"
        );
    }
}

#[test]
fn version_names_the_json_wire_version() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_egirl"))
        .arg("--version")
        .output()
        .expect("run egirl --version");
    let text = String::from_utf8_lossy(&out.stdout);
    let expected = format!(
        "(--json events: protocol {})",
        egirl::protocol::PROTOCOL_VERSION
    );
    assert!(out.status.success(), "{text}");
    assert!(text.contains(&expected), "{text}");
}
