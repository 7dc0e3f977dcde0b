//! The context window and the transcript: trimming notices, compaction that
//! cannot shrink, the context meter, resume/fork/rewind detail, an exec's
//! duration (defects 1, 2, 7, 9, 11, 17).

use std::path::Path;

use crossterm::event::KeyCode;
use egirl::protocol::{EventKind, Forked};
use serde_json::Value;

use crate::support::cli::{Cli, events, of_type, stderr};
use crate::support::fake_llama::{FakeLlama, Reply};
use crate::tui::pty::{ARMED, Pty};
use crate::tui::{SESSION, app, apply_all, ev, key, press, screen, type_text};

/// `[local]` context lines for a fake with an 8,192-token window.
const WINDOW: &str = "context_length = 8192\n";

fn transcript(workspace: &Path, session: &str) -> Vec<Value> {
    let path = workspace.join("sessions").join(format!("{session}.jsonl"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

/// Defect 1: `context_trimmed` ("left out N older messages") came on every
/// request, with `dropped_messages: 0`, and older turns were left out while
/// the window had room: the decision used a byte per token.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nothing_is_left_out_or_announced_while_the_window_has_room() {
    let fake = FakeLlama::start().await;
    fake.set_n_ctx(8192);
    // A server that cannot count tokens (vLLM, Ollama, a scripted model):
    // the window is fitted by estimate.
    fake.set_token_endpoints(false);
    let cli = Cli::new(&fake, WINDOW);
    fake.push_reply(Reply::text("first answer"));
    let out = cli
        .run(&[
            "-m",
            "remember the word heliotrope",
            "--session",
            "s",
            "--json",
        ])
        .await;
    let first = events(&out);
    assert!(!first.is_empty(), "{}", stderr(&out));
    let trimmed = of_type(&first, "context_trimmed");
    assert!(trimmed.is_empty(), "nothing was left out, yet: {trimmed:?}");
    // The second message brings the prompt to about 5,400 tokens at four
    // bytes a token: over the 75% a trim refills to, under the budget
    // (8,192 less the 2,048 reserved for the reply).
    let sent = &fake.requests()[0];
    let bytes = sent["messages"].to_string().len() + sent["tools"].to_string().len();
    let filler = (5_400 * 4usize).saturating_sub(bytes);
    let long = "lorem ipsum ".repeat(filler / 12);
    fake.push_reply(Reply::text("second answer"));
    let out = cli.run(&["-m", &long, "--session", "s", "--json"]).await;
    let second = events(&out);
    assert!(!second.is_empty(), "{}", stderr(&out));
    let trimmed = of_type(&second, "context_trimmed");
    assert!(
        trimmed.is_empty(),
        "older messages left out while the window had room: {trimmed:?}"
    );
    let last = fake.requests().last().cloned().unwrap_or_default();
    assert!(
        last["messages"].to_string().contains("heliotrope"),
        "the first turn was left out: {second:?}"
    );
}

/// Defect 2: once the kept turns alone exceed `compact_at`, automatic
/// compaction ran on every turn (two extra requests) without shrinking.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn compaction_that_cannot_get_under_compact_at_pauses_and_says_what_to_do() {
    let fake = FakeLlama::start().await;
    fake.set_n_ctx(8192);
    // The system prompt and the tools alone pass 10% of the window.
    let cli = Cli::new(
        &fake,
        &format!("{WINDOW}[agent]\ncompact_at = 0.1\nkeep_recent = 1\nmemory_flush = false\n"),
    );
    fake.push_reply(Reply::text("a1"));
    let out = cli.run(&["-m", "one", "--session", "s", "--json"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    // Turn 2 compacts turn 1 and still ends above the threshold.
    fake.push_replies([Reply::text("summary of turn one"), Reply::text("a2")]);
    let out = cli.run(&["-m", "two", "--session", "s", "--json"]).await;
    let second = events(&out);
    assert_eq!(of_type(&second, "compaction").len(), 1, "{second:?}");
    let told: Vec<&str> = of_type(&second, "notice")
        .iter()
        .filter_map(|n| n["message"].as_str())
        .filter(|m| m.contains("compact_at"))
        .collect();
    assert_eq!(
        told.len(),
        1,
        "the user is not told why compaction pauses: {second:?}"
    );
    assert!(
        told[0].contains("/compact") && told[0].contains("/new"),
        "{}",
        told[0]
    );
    // Turn 3: no second compaction that cannot help.
    let requests_before = fake.requests().len();
    fake.push_reply(Reply::text("a3"));
    let out = cli.run(&["-m", "three", "--session", "s", "--json"]).await;
    let third = events(&out);
    assert!(
        of_type(&third, "compaction").is_empty(),
        "compacted again without getting under compact_at: {third:?}"
    );
    assert_eq!(
        fake.requests().len(),
        requests_before + 1,
        "extra model requests"
    );
    assert_eq!(of_type(&third, "final")[0]["text"], "a3");
}

/// Defect 7 (live): the meter added the reply's reasoning, which the next
/// prompt does not carry, and divided by the configured window rather than
/// the server's (`10.2k/8.2k (124%)` after a long answer).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn usage_says_what_the_next_prompt_carries_of_the_servers_window() {
    let fake = FakeLlama::start().await;
    fake.set_n_ctx(8192);
    let cli = Cli::new(&fake, "");
    let thinking = "let me think about this at length. ".repeat(800);
    fake.push_reply(Reply::text("short answer").with_reasoning(&thinking));
    let out = cli.run(&["-m", "a question", "--json"]).await;
    let all = events(&out);
    let usage = of_type(&all, "usage");
    let usage = usage.first().unwrap_or_else(|| panic!("no usage: {all:?}"));
    let context = &usage["context"];
    assert!(
        context.is_object(),
        "usage does not say the context: {usage}"
    );
    assert_eq!(context["length"], 8192, "{usage}");
    let used = context["used"].as_u64().unwrap_or(u64::MAX);
    let input = usage["input_tokens"].as_u64().unwrap_or(0);
    let output = usage["output_tokens"].as_u64().unwrap_or(0);
    assert!(used > input, "{usage}");
    assert!(
        used < input + output / 2,
        "the reasoning was counted: {usage}"
    );
    assert!(used < 8192, "{usage}");
}

/// Writes `lines` as session `id`'s transcript under `dir` (`sessions/`).
fn write_lines(dir: &Path, id: &str, lines: &[String]) {
    std::fs::create_dir_all(dir).expect("sessions dir");
    std::fs::write(dir.join(format!("{id}.jsonl")), lines.join("\n") + "\n").expect("write");
}

fn line(role: &str, content: &str, extra: &str) -> String {
    let content = serde_json::to_string(content).expect("json");
    format!(
        r#"{{"ts":"2026-11-20T10:00:00Z","origin":"tui","role":"{role}","content":{content}{extra}}}"#
    )
}

fn resumed(dir: &Path, id: &str) -> egirl::surfaces::tui::App {
    let records = egirl::sessions::load(&dir.join(format!("{id}.jsonl"))).expect("load");
    let mut app = app();
    app.sessions_dir = Some(dir.to_path_buf());
    app.load_history(SESSION, &records);
    app
}

/// The status line's `ctx …` segment.
fn meter(app: &egirl::surfaces::tui::App) -> String {
    let shown = screen(app, 160, 30);
    let at = shown
        .find("ctx ")
        .unwrap_or_else(|| panic!("no meter: {shown}"));
    shown[at..]
        .split(" │")
        .next()
        .unwrap_or_default()
        .trim()
        .to_string()
}

/// Defect 7 (TUI): `0/…` after resume, after switching sessions and after
/// `/fork`; unchanged after `/clear`.
#[test]
fn the_context_meter_follows_resume_switch_and_clear() {
    let dir = tempfile::tempdir().expect("tempdir");
    let sessions = dir.path().join("sessions");
    // An older transcript (no recorded sizes): estimated, not zero.
    let old: Vec<String> = (0..20)
        .flat_map(|n| {
            [
                line("user", &format!("question {n} {}", "words ".repeat(60)), ""),
                line(
                    "assistant",
                    &format!("answer {n} {}", "more ".repeat(60)),
                    "",
                ),
            ]
        })
        .collect();
    write_lines(&sessions, SESSION, &old);
    // A newer one: its last reply recorded the prompt after it.
    let known = [
        line("user", "hi", ""),
        line(
            "assistant",
            "hello",
            r#","context":{"used":3000,"length":8192}"#,
        ),
    ];
    write_lines(&sessions, "other", &known);
    let mut app = resumed(&sessions, SESSION);
    let resumed_meter = meter(&app);
    assert!(
        !resumed_meter.starts_with("ctx 0/"),
        "after resume: {resumed_meter}"
    );
    assert!(
        resumed_meter.starts_with("ctx ~"),
        "an estimate says so: {resumed_meter}"
    );
    app.pick_session("other");
    assert_eq!(
        meter(&app),
        "ctx 3.0k/8.2k (36%)",
        "after switching sessions"
    );
    type_text(&mut app, "/clear");
    press(&mut app, key(KeyCode::Enter));
    let cleared = meter(&app);
    assert_ne!(cleared, "ctx 3.0k/8.2k (36%)", "unchanged after /clear");
    assert!(cleared.starts_with("ctx ~1.5k/"), "after /clear: {cleared}");
}

/// Defect 9 (transcript): a tool result keeps its outcome and its diff.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_transcript_keeps_each_tool_results_outcome_and_diff() {
    let fake = FakeLlama::start().await;
    let cli = Cli::new(&fake, "");
    fake.push_replies([
        Reply::tool_calls(&[(
            "write_file",
            r#"{"path": "notes.txt", "content": "a\nb\n"}"#,
        )]),
        Reply::tool_calls(&[("exec", r#"{"command": "rm -f notes.txt"}"#)]),
        Reply::text("done"),
    ]);
    // Headless without --approve-exec: the command is denied.
    let out = cli
        .run(&["-m", "write then delete", "--session", "s", "--json"])
        .await;
    assert!(out.status.success(), "{}", stderr(&out));
    let records = transcript(&cli.workspace(), "s");
    let results: Vec<&Value> = records.iter().filter(|r| r["role"] == "tool").collect();
    assert_eq!(results.len(), 2, "{records:?}");
    assert_eq!(results[0]["outcome"], "ok", "{}", results[0]);
    assert_eq!(results[0]["diff"]["path"], "notes.txt", "{}", results[0]);
    assert_eq!(results[0]["diff"]["added"], 2, "{}", results[0]);
    assert_eq!(results[1]["outcome"], "denied", "{}", results[1]);
}

/// Defect 9 (rewind): `/rewind` counted denied commands as "ran since".
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rewind_does_not_count_a_denied_command_as_run() {
    let fake = FakeLlama::start().await;
    let cli = Cli::new(&fake, "");
    fake.push_replies([
        Reply::tool_calls(&[("write_file", r#"{"path": "notes.txt", "content": "a\n"}"#)]),
        Reply::tool_calls(&[("exec", r#"{"command": "rm -f notes.txt"}"#)]),
        Reply::text("done"),
    ]);
    // Headless without --approve-exec: the command is denied.
    let out = cli
        .run(&["-m", "write then delete", "--session", "s"])
        .await;
    assert!(out.status.success(), "{}", stderr(&out));
    let out = cli.run(&["--session", "s", "--rewind", "1"]).await;
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{said}{}", stderr(&out));
    assert!(
        !said.contains("ran since"),
        "a denied command counted as run:\n{said}"
    );
    assert!(said.contains("removed notes.txt"), "{said}");
}

/// Defect 9 (replay): restored calls read `· earlier` with no ✓/✗ and no
/// diff; `[interrupted by the user]` showed as answer text.
#[test]
fn a_resumed_session_shows_outcomes_diffs_and_interruptions() {
    let dir = tempfile::tempdir().expect("tempdir");
    let sessions = dir.path().join("sessions");
    let call = |id: &str, name: &str, args: &str| {
        format!(r#","tool_calls":[{{"id":"{id}","name":"{name}","arguments":{args}}}]"#)
    };
    let result = |id: &str, name: &str, extra: &str| {
        format!(r#","tool_call_id":"{id}","name":"{name}"{extra}"#)
    };
    let lines = [
        line("user", "edit the notes", ""),
        line(
            "assistant",
            "",
            &call(
                "c1",
                "edit_file",
                r#"{"path":"notes.md","old":"a","new":"b"}"#,
            ),
        ),
        line(
            "tool",
            "edited notes.md",
            &result(
                "c1",
                "edit_file",
                r#","outcome":"ok","diff":{"path":"notes.md","added":1,"removed":1,"text":"@@ -1 +1 @@\n-alpha line\n+beta line"}"#,
            ),
        ),
        line(
            "assistant",
            "",
            &call("c2", "exec", r#"{"command":"make check"}"#),
        ),
        line(
            "tool",
            "exit 2\n[stderr]\nno rule",
            &result("c2", "exec", r#","outcome":"failed""#),
        ),
        line(
            "assistant",
            "I was saying\n\n[interrupted by the user]",
            r#","interrupted":true"#,
        ),
    ];
    write_lines(&sessions, SESSION, &lines);
    let app = resumed(&sessions, SESSION);
    let shown = screen(&app, 120, 40);
    assert!(!shown.contains("earlier"), "outcomes lost:\n{shown}");
    assert!(shown.contains("✓ ok"), "{shown}");
    assert!(shown.contains("✗ failed"), "{shown}");
    assert!(
        shown.contains("+beta line"),
        "the diff is not shown:\n{shown}"
    );
    assert!(
        !shown.contains("[interrupted by the user]"),
        "the marker reads as answer text:\n{shown}"
    );
    assert!(
        shown.contains("I was saying") && shown.contains("interrupted"),
        "{shown}"
    );
}

/// Defect 9 (fork): `/fork` replayed the whole history a second time in
/// the all-sessions view.
#[test]
fn a_fork_is_not_shown_twice_in_the_all_sessions_view() {
    let dir = tempfile::tempdir().expect("tempdir");
    let sessions = dir.path().join("sessions");
    let lines = [
        line("user", "the unmistakable question", ""),
        line("assistant", "the answer", ""),
    ];
    write_lines(&sessions, SESSION, &lines);
    let mut forked = vec![
        r#"{"ts":"2026-11-20T10:01:00Z","mark":"forked_from","session":"tui-test"}"#.to_string(),
    ];
    forked.extend(lines.iter().cloned());
    write_lines(&sessions, "fork-1", &forked);
    let mut app = resumed(&sessions, SESSION);
    apply_all(
        &mut app,
        [ev(EventKind::Forked(Forked {
            new_session: "fork-1".into(),
        }))],
    );
    assert_eq!(app.session, "fork-1", "the input follows the fork");
    let shown = screen(&app, 120, 40);
    assert_eq!(
        shown.matches("the unmistakable question").count(),
        1,
        "the fork's history is shown twice:\n{shown}"
    );
    assert!(
        !meter(&app).starts_with("ctx 0/"),
        "after /fork: {}",
        meter(&app)
    );
}

/// Defect 17: `--rewind` with checkpoints off said the files were restored.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rewind_without_checkpoints_says_no_file_was_restored() {
    for setting in ["enabled = false", "max_total_mb = 0"] {
        let fake = FakeLlama::start().await;
        let cli = Cli::new(&fake, &format!("[checkpoints]\n{setting}\n"));
        std::fs::create_dir_all(cli.workspace()).expect("workspace");
        std::fs::write(cli.workspace().join("plan.md"), "old plan\n").expect("plan");
        fake.push_replies([
            Reply::tool_calls(&[(
                "write_file",
                r#"{"path": "plan.md", "content": "new plan\n"}"#,
            )]),
            Reply::text("rewritten"),
        ]);
        let out = cli.run(&["-m", "rewrite the plan", "--session", "s"]).await;
        assert!(out.status.success(), "{}", stderr(&out));
        let out = cli.run(&["--session", "s", "--rewind", "1"]).await;
        let said = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(out.status.success(), "{said}{}", stderr(&out));
        let plan = std::fs::read_to_string(cli.workspace().join("plan.md")).expect("plan");
        assert_eq!(plan, "new plan\n", "{setting}: nothing was kept to restore");
        assert!(
            !said.contains("are restored"),
            "{setting}: claims files were restored:\n{said}"
        );
        assert!(said.contains("no file was restored"), "{setting}:\n{said}");
        assert!(
            said.contains(setting.split(' ').next().unwrap_or("")),
            "{setting}:\n{said}"
        );
    }
}

/// Defect 11: an exec's duration included the time its approval waited
/// (`6415 ms` for a command that ran in no time).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_execs_duration_leaves_out_the_approval_wait() {
    let fake = FakeLlama::start().await;
    fake.push_replies([
        Reply::tool_calls(&[("exec", r#"{"command": "true"}"#)]),
        Reply::text("ran it"),
    ]);
    let dir = crate::tui::pty::fake_model_dir(&fake);
    let mut pty = Pty::spawn(dir.path());
    pty.wait_for("Type a message").await;
    pty.send("run it\r");
    pty.wait_for(ARMED).await;
    // The user takes a while to answer.
    let asked = std::time::Instant::now();
    tokio::time::sleep(std::time::Duration::from_secs(4)).await;
    pty.send("y");
    let waited = asked.elapsed().as_millis() as u64;
    pty.wait_for("ran it").await;
    pty.wait_for("✓ ok ·").await;
    let shown = pty.contents();
    let ms: u64 = shown
        .split("✓ ok · ")
        .nth(1)
        .and_then(|rest| rest.split(" ms").next())
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or_else(|| panic!("no duration:\n{shown}"));
    assert!(
        ms < waited,
        "{ms} ms shown for `true` after a {waited} ms approval wait"
    );
    pty.send("\x03\x03");
    assert_eq!(pty.exit_code().await, Some(0));
}
