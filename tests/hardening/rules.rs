//! Holes once found, replayed against the real
//! binary: narrow allow rules, escape sequences outside the TUI,
//! overflowing durations, SIGTERM/SIGHUP during an exec, FIFOs given to
//! file tools, and a stdout closed early.

use std::process::{Output, Stdio};
use std::time::Duration;

use crate::support::cli::{Cli, events, stderr};
use crate::support::fake_llama::{FakeLlama, Reply};

/// `allow = ["find ."]` once auto-approved `find . -exec touch X {} +`.
#[tokio::test]
async fn a_prefix_rule_does_not_cover_find_exec() {
    let fake = FakeLlama::start().await;
    fake.push_replies([
        Reply::tool_calls(&[("exec", r#"{"command": "find . -exec touch X {} +"}"#)]),
        Reply::text("done"),
    ]);
    let cli = Cli::new(&fake, "[tools.exec]\nallow = [\"find .\"]\n");
    let out = cli.run(&["-m", "list files", "--json"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let ev = events(&out);
    let request = ev
        .iter()
        .find(|e| e["type"] == "approval_request")
        .expect("the command is asked about, not auto-approved");
    assert_eq!(request["rule"], "find . -exec touch X {} +");
    let decision = ev
        .iter()
        .find(|e| e["type"] == "approval_decision")
        .expect("a decision");
    assert_eq!(decision["decision"], "denied");
    assert!(!cli.workspace().join("X").exists(), "find -exec ran");
}

/// The rule still covers what it was meant for.
#[tokio::test]
async fn a_prefix_rule_still_covers_plain_find() {
    let fake = FakeLlama::start().await;
    fake.push_replies([
        Reply::tool_calls(&[("exec", r#"{"command": "find . -name MEMORY.md"}"#)]),
        Reply::text("done"),
    ]);
    let cli = Cli::new(&fake, "[tools.exec]\nallow = [\"find .\"]\n");
    let out = cli.run(&["-m", "list files", "--json"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let ev = events(&out);
    assert!(!ev.iter().any(|e| e["type"] == "approval_request"));
    let result = ev
        .iter()
        .find(|e| e["type"] == "tool_result")
        .expect("a result");
    assert_eq!(result["success"], true, "{result}");
    assert!(
        result["output"]
            .as_str()
            .unwrap_or("")
            .contains("MEMORY.md")
    );
}

/// The real binary with `args`, killed if the test gives up on it.
fn egirl(cli: &Cli, args: &[&str]) -> tokio::process::Command {
    let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_egirl"));
    cmd.arg("--config")
        .arg(cli.config())
        .args(args)
        .env("HOME", cli.dir.path())
        .env_remove("EGIRL_CONFIG")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    cmd
}

/// Runs `egirl args`, at most `GUARD` (a hang is the failure under test).
async fn run_guarded(cli: &Cli, args: &[&str]) -> Output {
    tokio::time::timeout(GUARD, egirl(cli, args).output())
        .await
        .unwrap_or_else(|_| panic!("egirl {args:?} did not end within {GUARD:?}"))
        .expect("run egirl")
}

const GUARD: Duration = Duration::from_secs(60);

fn has_escapes(text: &[u8]) -> bool {
    text.iter()
        .any(|&b| b == 0x1b || b == 0x07 || (b < 0x20 && b != b'\n' && b != b'\t'))
}

/// Escape sequences stripped outside the TUI: title, OSC 52 clipboard, clear screen and bell from model
/// text reached the terminal in the headless answer and the denied line.
#[tokio::test]
async fn escape_sequences_never_reach_the_terminal_headless() {
    let fake = FakeLlama::start().await;
    fake.push_replies([
        Reply::tool_calls(&[("exec", r#"{"command": "echo \u001b]0;pwned\u0007hi"}"#)]),
        Reply::text("before\u{1b}]0;pwned\u{7}\u{1b}]52;c;aGk=\u{7}\u{1b}[2J\u{7}after"),
    ]);
    let cli = Cli::new(&fake, "");
    let out = run_guarded(&cli, &["-m", "hi"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "beforeafter\n");
    let err = stderr(&out);
    assert!(err.contains("denied `echo hi`"), "{err}");
    assert!(!has_escapes(&out.stderr), "{err:?}");
}

/// Escape sequences stripped: the same from a skill's description and a memory file.
#[tokio::test]
async fn escape_sequences_never_reach_the_terminal_from_skills_or_memory() {
    let fake = FakeLlama::start().await;
    let cli = Cli::new(&fake, "");
    let skill = cli.workspace().join("skills/evil");
    std::fs::create_dir_all(&skill).unwrap();
    std::fs::write(
        skill.join("SKILL.md"),
        "---\nname: evil\ndescription: \"look \\e]0;pwned\\a here \\e[2J\"\n---\nBody.\n",
    )
    .unwrap();
    std::fs::create_dir_all(cli.workspace().join("memory")).unwrap();
    std::fs::write(
        cli.workspace().join("memory/notes.md"),
        "# Notes\n\nzebrafish \u{1b}]52;c;aGk=\u{7} are \u{1b}[2J striped\n",
    )
    .unwrap();

    let out = run_guarded(&cli, &["skills", "list"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let listed = String::from_utf8_lossy(&out.stdout);
    assert!(
        listed.contains("evil") && listed.contains("here"),
        "{listed}"
    );
    assert!(!has_escapes(&out.stdout), "{listed:?}");

    let out = run_guarded(&cli, &["memory", "search", "zebrafish"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let found = String::from_utf8_lossy(&out.stdout);
    assert!(found.contains("zebrafish"), "{found}");
    assert!(!has_escapes(&out.stdout), "{found:?}");
}

/// An overflowing duration once panicked (exit 101) or wrapped to
/// 44 s; it is a config error (exit 2) naming file, line and column.
#[tokio::test]
async fn overflowing_durations_are_config_errors() {
    let fake = FakeLlama::start().await;
    for huge in ["18446744073709551615s1s", "307445734561825861m"] {
        let cli = Cli::new(
            &fake,
            &format!("[tools.exec]\nunattended_timeout = \"{huge}\"\n"),
        );
        let out = run_guarded(&cli, &["-m", "hi"]).await;
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{huge}: {err}");
        let text = std::fs::read_to_string(cli.config()).unwrap();
        let line = 1 + text
            .lines()
            .position(|l| l.starts_with("unattended_timeout"))
            .unwrap();
        assert!(err.contains(&format!("egirl.toml:{line}:22: ")), "{err}");
        assert!(err.contains("unattended_timeout"), "{err}");
        assert!(err.contains("too long"), "{err}");
    }
}

/// `cron_add` with such a duration is a tool error, no crash
/// and no job 44 s ahead.
#[tokio::test]
async fn cron_add_with_an_overflowing_duration_fails_the_call() {
    let fake = FakeLlama::start().await;
    fake.push_replies([
        Reply::tool_calls(&[
            (
                "cron_add",
                r#"{"message": "x", "every": "18446744073709551615s1s"}"#,
            ),
            (
                "cron_add",
                r#"{"message": "y", "every": "307445734561825861m"}"#,
            ),
            (
                "cron_add",
                r#"{"message": "z", "at": "307445734561825861m"}"#,
            ),
        ]),
        Reply::text("done"),
    ]);
    let cli = Cli::new(&fake, "");
    let out = run_guarded(&cli, &["-m", "schedule", "--json"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let results: Vec<_> = events(&out)
        .into_iter()
        .filter(|e| e["type"] == "tool_result")
        .collect();
    assert_eq!(results.len(), 3);
    for result in &results {
        assert_eq!(result["success"], false, "{result}");
    }
    let jobs =
        std::fs::read_to_string(cli.workspace().join(".egirl/cron.json")).unwrap_or_default();
    assert!(!jobs.contains("\"x\"") && !jobs.contains("\"y\""), "{jobs}");
}

/// The `sleep` process whose working directory is `dir`.
fn sleeping_in(dir: &std::path::Path) -> Option<i32> {
    let dir = std::fs::canonicalize(dir).ok()?;
    std::fs::read_dir("/proc")
        .ok()?
        .flatten()
        .find_map(|entry| {
            let pid: i32 = entry.file_name().to_str()?.parse().ok()?;
            let comm = std::fs::read_to_string(entry.path().join("comm")).ok()?;
            let cwd = std::fs::read_link(entry.path().join("cwd")).ok()?;
            (comm.trim() == "sleep" && cwd == dir).then_some(pid)
        })
}

fn alive(pid: i32) -> bool {
    // A zombie waiting for its new parent to reap it is gone as well.
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|stat| {
            let state = stat
                .rsplit(')')
                .next()?
                .split_whitespace()
                .next()?
                .to_string();
            Some(state != "Z")
        })
        .unwrap_or(false)
}

/// `egirl -m` ended by SIGTERM or SIGHUP once left the approved
/// command running (Ctrl+C was fine).
async fn a_stop_signal_kills_the_running_command(signal: i32) {
    let fake = FakeLlama::start().await;
    fake.push_replies([
        Reply::tool_calls(&[(
            "exec",
            r#"{"command": "echo $$ > sleeper.pid; exec sleep 300"}"#,
        )]),
        Reply::text("done"),
    ]);
    let cli = Cli::new(&fake, "");
    let mut child = egirl(&cli, &["-m", "sleep", "--approve-exec"])
        .spawn()
        .unwrap();
    let pid_file = cli.workspace().join("sleeper.pid");
    let deadline = tokio::time::Instant::now() + GUARD;
    // The command's `$$` is its number in its own PID namespace: find it
    // in ours by its directory.
    let sleeper: i32 = loop {
        if pid_file.exists()
            && let Some(pid) = sleeping_in(&cli.workspace())
        {
            break pid;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the command never started"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert!(alive(sleeper));
    // SAFETY: signalling our own child process.
    unsafe { libc::kill(child.id().unwrap() as i32, signal) };
    tokio::time::timeout(GUARD, child.wait())
        .await
        .expect("egirl ends after the signal")
        .unwrap();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while alive(sleeper) && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let leaked = alive(sleeper);
    // SAFETY: cleaning up what the test started, if it is still there.
    unsafe { libc::kill(sleeper, libc::SIGKILL) };
    assert!(!leaked, "the approved command outlived egirl");
}

#[tokio::test]
async fn sigterm_kills_the_running_command() {
    a_stop_signal_kills_the_running_command(libc::SIGTERM).await;
}

#[tokio::test]
async fn sighup_kills_the_running_command() {
    a_stop_signal_kills_the_running_command(libc::SIGHUP).await;
}

fn mkfifo(path: &std::path::Path) {
    let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
}

/// `memory_get` on a FIFO named `memory/x.md` once blocked for ever.
#[tokio::test]
async fn file_tools_refuse_a_fifo_without_blocking() {
    let fake = FakeLlama::start().await;
    fake.push_replies([
        Reply::tool_calls(&[
            ("memory_get", r#"{"path": "memory/x.md"}"#),
            ("read_file", r#"{"path": "memory/x.md"}"#),
            (
                "edit_file",
                r#"{"path": "memory/x.md", "old_text": "a", "new_text": "b"}"#,
            ),
            ("write_file", r#"{"path": "memory/x.md", "content": "a"}"#),
        ]),
        Reply::text("done"),
    ]);
    let cli = Cli::new(&fake, "");
    std::fs::create_dir_all(cli.workspace().join("memory")).unwrap();
    let fifo = cli.workspace().join("memory/x.md");
    mkfifo(&fifo);
    let out = run_guarded(&cli, &["-m", "read it", "--json"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let results: Vec<_> = events(&out)
        .into_iter()
        .filter(|e| e["type"] == "tool_result")
        .collect();
    assert_eq!(results.len(), 4);
    for result in &results {
        assert_eq!(result["success"], false, "{result}");
        assert!(
            result["output"]
                .as_str()
                .unwrap_or("")
                .contains("not a regular file"),
            "{result}"
        );
    }
    // Refused, not replaced.
    assert!(std::os::unix::fs::FileTypeExt::is_fifo(
        &std::fs::symlink_metadata(&fifo).unwrap().file_type()
    ));
}

/// Runs `egirl args` with its stdout closed at once (`| head -0`).
async fn run_with_closed_stdout(cli: &Cli, args: &[&str]) -> Output {
    let mut child = egirl(cli, args).spawn().unwrap();
    drop(child.stdout.take());
    tokio::time::timeout(GUARD, child.wait_with_output())
        .await
        .expect("ends")
        .unwrap()
}

/// `memory search`, `skills list` and `stats` once panicked (exit
/// 101) when their output pipe closed early; `export` failed.
#[tokio::test]
async fn a_closed_stdout_ends_quietly_with_exit_0() {
    let fake = FakeLlama::start().await;
    fake.push_replies([Reply::text("an answer to export")]);
    let cli = Cli::new(&fake, "");
    let out = run_guarded(&cli, &["-m", "hello"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    fake.push_replies([Reply::text("another answer")]);
    for args in [
        &["memory", "search", "anything"][..],
        &["memory", "search", "anything", "--json"],
        &["skills", "list"],
        &["skills", "list", "--json"],
        &["stats"],
        &["stats", "--json"],
        &["export"],
        &["-m", "hello again"],
    ] {
        let out = run_with_closed_stdout(&cli, args).await;
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
}
