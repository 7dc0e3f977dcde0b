//! Headless runs beside a daemon: `egirl -m` (and `--fork`) from a second
//! process go through the core of the `egirl serve` that owns the
//! workspace, react only to their own session, and end with one line when
//! the daemon goes away.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use egirl::fsutil::lockfile::FileLock;
use egirl::link::{CoreLink, client};
use egirl::protocol::{
    ApprovalDecision, ApprovalRequest, Event, EventKind, FinalAnswer, Op, Origin, ReviewDecision,
    TurnEnded,
};
use serde_json::Value;

use super::daemon::gateway_token;
use crate::support::cli::{Cli, events, stderr};
use crate::support::fake_llama::{FakeLlama, Reply};

/// `egirl serve` on `cli`'s config and workspace, answering on its socket.
pub(super) struct Daemon {
    child: tokio::process::Child,
    socket: PathBuf,
    token: String,
}

impl Daemon {
    pub(super) async fn start(cli: &Cli) -> Daemon {
        let mut child = command(cli)
            .arg("serve")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn egirl serve");
        let socket = client::socket_path(&cli.workspace());
        let start = tokio::time::Instant::now();
        while client::probe(&socket, &gateway_token(cli.dir.path()))
            .await
            .is_none()
        {
            if let Ok(Some(status)) = child.try_wait() {
                panic!("egirl serve exited ({status}) before serving its socket");
            }
            assert!(
                start.elapsed() < Duration::from_secs(60),
                "no socket at {}",
                socket.display()
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let token = gateway_token(cli.dir.path());
        Daemon {
            child,
            socket,
            token,
        }
    }

    /// A client of the daemon in the test process (as the TUI would be).
    async fn attach(&self) -> CoreLink {
        client::connect_unix(&self.socket, "egirl-test", &self.token)
            .await
            .unwrap()
    }
}

/// The binary with `cli`'s config and `HOME` (as `Cli::run` starts it).
fn command(cli: &Cli) -> tokio::process::Command {
    let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_egirl"));
    cmd.arg("--config")
        .arg(cli.config())
        .env("HOME", cli.dir.path())
        .env_remove("EGIRL_CONFIG")
        .env_remove("XDG_CONFIG_HOME")
        .stdin(Stdio::null())
        .kill_on_drop(true);
    cmd
}

/// Every line of the logs of every process of this workspace.
fn log_lines(cli: &Cli) -> Vec<String> {
    let dir = cli.dir.path().join("logs");
    let mut lines = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let text = std::fs::read_to_string(entry.path()).unwrap_or_default();
        lines.extend(text.lines().map(str::to_string));
    }
    lines
}

fn lock_is_held(workspace: &Path) -> bool {
    let lock = workspace.join(".egirl").join("services.lock");
    FileLock::try_acquire(&lock).unwrap().is_none()
}

/// `-m hi --json` from a second process: answered by the daemon's core
/// (its transcript has the turn, one llama request), with the lines and
/// exit code of a run without a daemon; this process started no core.
#[tokio::test]
async fn a_second_process_runs_its_turn_through_the_daemon() {
    let fake = FakeLlama::start().await;
    let cli = Cli::new(&fake, "");
    let _daemon = Daemon::start(&cli).await;
    fake.push_reply(Reply::text("answered by the daemon"));
    let out = cli.run(&["-m", "hi", "--json"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let ev = events(&out);
    let session = ev[0]["session"].as_str().unwrap().to_string();
    assert_eq!(ev[0]["type"], "turn_started", "{ev:?}");
    assert!(
        ev.iter().all(|e| e["session"] == session.as_str()),
        "{ev:?}"
    );
    let finals: Vec<&Value> = ev.iter().filter(|e| e["type"] == "final").collect();
    assert_eq!(finals.len(), 1, "{ev:?}");
    assert_eq!(finals[0]["text"], "answered by the daemon");
    assert_eq!(ev.last().unwrap()["type"], "turn_ended");
    assert_eq!(fake.requests().len(), 1);

    let transcript = cli
        .workspace()
        .join("sessions")
        .join(format!("{session}.jsonl"));
    let text = std::fs::read_to_string(&transcript).unwrap();
    assert!(text.contains("answered by the daemon"), "{text}");

    // Plain text out, as without a daemon.
    fake.push_reply(Reply::text("plain"));
    let out = cli.run(&["-m", "again", "--session", &session]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "plain\n");

    // Still the daemon's lock; one core started, the others went through it.
    assert!(lock_is_held(&cli.workspace()));
    let logs = log_lines(&cli);
    let starting = logs.iter().filter(|l| l.contains(" starting")).count();
    assert_eq!(starting, 1, "{logs:#?}");
    let through = logs.iter().filter(|l| l.contains("through the daemon"));
    assert_eq!(through.count(), 2, "{logs:#?}");

    // --fork is the daemon's too: the new session's transcript is on disk.
    let out = cli.run(&["--session", &session, "--fork"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let forked = String::from_utf8_lossy(&out.stdout).trim().to_string();
    assert!(!forked.is_empty() && forked != session, "{forked}");
    let copy = cli
        .workspace()
        .join("sessions")
        .join(format!("{forked}.jsonl"));
    assert!(std::fs::read_to_string(copy).unwrap().contains("plain"));

    // So is --rewind, and the daemon's live session goes back with it.
    let out = cli.run(&["--session", &session, "--rewind", "2"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        said.starts_with(&format!("rewound {session} to before message 2 ")),
        "{said}"
    );
    assert!(said.contains("message 2 was: again"), "{said}");
    let out = cli.run(&["-m", "third", "--session", &session]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let sent = fake.requests().last().cloned().unwrap().to_string();
    assert!(sent.contains("hi") && !sent.contains("again"), "{sent}");
}

/// `--compact` through the daemon: the summary on stdout, the count on
/// stderr, as without a daemon, and the daemon's session goes on from it.
#[tokio::test]
async fn compact_goes_through_the_daemon() {
    let fake = FakeLlama::start().await;
    let cli = Cli::new(&fake, "[agent]\nmemory_flush = false\nkeep_recent = 1\n");
    let _daemon = Daemon::start(&cli).await;
    for n in 1..=2 {
        fake.push_reply(Reply::text(&format!("answer {n}")));
        let text = format!("short question {n}");
        let out = cli.run(&["-m", &text, "--session", "m"]).await;
        assert!(out.status.success(), "{}", stderr(&out));
    }
    fake.push_reply(Reply::text("SUMMARY-ABC: two short questions."));
    let out = cli.run(&["--session", "m", "--compact"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "SUMMARY-ABC: two short questions.\n"
    );
    assert!(
        stderr(&out).starts_with("egirl: compacted "),
        "{}",
        stderr(&out)
    );
    fake.push_reply(Reply::text("answer 3"));
    let out = cli.run(&["-m", "short question 3", "--session", "m"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let sent = fake.requests().last().cloned().unwrap().to_string();
    assert!(
        sent.contains("SUMMARY-ABC") && !sent.contains("short question 1"),
        "{sent}"
    );
    let starting = log_lines(&cli)
        .into_iter()
        .filter(|l| l.contains(" starting"));
    assert_eq!(starting.count(), 1);
}

/// Ctrl+C interrupts the headless run's own turn, not the one another
/// client has running in the daemon at the same time.
#[tokio::test]
async fn ctrl_c_interrupts_only_the_runs_own_turn() {
    let fake = FakeLlama::start().await;
    let cli = Cli::new(&fake, "");
    let daemon = Daemon::start(&cli).await;
    let tui = daemon.attach().await;
    let mut seen = tui.subscribe();
    let slow = ["the ", "other ", "turn ", "goes ", "on"];
    fake.push_replies([
        Reply::chunks(&slow).frame_delay(Duration::from_millis(400)),
        Reply::hang(),
    ]);
    tui.submit(Op::UserMessage {
        images: Vec::new(),
        session: "other".into(),
        origin: Origin::Tui,
        text: "take your time".into(),
    });
    let start = tokio::time::Instant::now();
    while fake.requests().is_empty() {
        assert!(start.elapsed() < Duration::from_secs(60), "no request");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let run = command(&cli)
        .args(["-m", "never answered"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    while fake.requests().len() < 2 {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "no second request"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // SAFETY: signalling our own child process.
    unsafe { libc::kill(run.id().unwrap() as i32, libc::SIGINT) };
    let out = tokio::time::timeout(Duration::from_secs(60), run.wait_with_output())
        .await
        .expect("the run ends")
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let (text, interrupted) = wait_for(&mut seen, |e| match &e.kind {
        EventKind::Final(FinalAnswer { text }) if e.session == "other" => {
            Some((text.clone(), false))
        }
        EventKind::TurnEnded(TurnEnded { interrupted: true }) if e.session == "other" => {
            Some((String::new(), true))
        }
        _ => None,
    })
    .await;
    assert!(!interrupted);
    assert_eq!(text, slow.concat());
}

/// While a headless run with --approve-exec streams its answer, another
/// client's session asks for an exec approval: the run answers nothing of
/// it and prints none of its events; the other client's answer is the one
/// that counts.
#[tokio::test]
async fn a_headless_run_never_answers_another_sessions_approval() {
    let fake = FakeLlama::start().await;
    let cli = Cli::new(&fake, "");
    let daemon = Daemon::start(&cli).await;
    let tui = daemon.attach().await;
    let mut seen = tui.subscribe();
    let slow = [
        "mine ", "comes ", "slowly ", "while ", "the ", "other ", "asks",
    ];
    fake.push_replies([
        Reply::chunks(&slow).frame_delay(Duration::from_millis(400)),
        Reply::tool_calls(&[("exec", r#"{"command": "echo from-the-other-session"}"#)]),
    ]);
    let run = command(&cli)
        .args(["-m", "hello", "--approve-exec", "--json"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = tokio::time::Instant::now();
    while fake.requests().is_empty() {
        assert!(start.elapsed() < Duration::from_secs(60), "no request");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    tui.submit(Op::UserMessage {
        images: Vec::new(),
        session: "other".into(),
        origin: Origin::Tui,
        text: "run echo".into(),
    });
    let asked = wait_for(&mut seen, |e| match &e.kind {
        EventKind::ApprovalRequest(ApprovalRequest { id, .. }) if e.session == "other" => {
            Some(id.clone())
        }
        _ => None,
    })
    .await;

    let out = tokio::time::timeout(Duration::from_secs(60), run.wait_with_output())
        .await
        .expect("the run ends")
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let ev = events(&out);
    let final_text: Vec<&Value> = ev.iter().filter(|e| e["type"] == "final").collect();
    assert_eq!(final_text[0]["text"], slow.concat(), "{ev:?}");
    assert!(ev.iter().all(|e| e["session"] != "other"), "{ev:?}");
    assert!(
        ev.iter().all(|e| e["type"] != "approval_decision"),
        "{ev:?}"
    );
    let logs = log_lines(&cli);
    assert!(
        logs.iter().any(|l| l.contains("through the daemon")),
        "{logs:#?}"
    );

    fake.push_reply(Reply::text("denied then"));
    tui.submit(Op::ApprovalDecision {
        id: asked.clone(),
        decision: ReviewDecision::Denied,
        by: Origin::Tui,
    });
    let (decision, by) = wait_for(&mut seen, |e| match &e.kind {
        EventKind::ApprovalDecision(ApprovalDecision { id, decision, by }) if *id == asked => {
            Some((*decision, by.clone()))
        }
        _ => None,
    })
    .await;
    assert_eq!((decision, by.as_str()), (ReviewDecision::Denied, "tui"));
}

/// The daemon dies mid-turn: the headless run says so in one line and
/// exits 1.
#[tokio::test]
async fn a_lost_daemon_ends_the_run_with_one_line() {
    let fake = FakeLlama::start().await;
    let cli = Cli::new(&fake, "");
    let mut daemon = Daemon::start(&cli).await;
    fake.push_reply(Reply::hang());
    let run = command(&cli)
        .args(["-m", "wait for it"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = tokio::time::Instant::now();
    while fake.requests().is_empty() {
        assert!(start.elapsed() < Duration::from_secs(60), "no request");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    daemon.child.kill().await.unwrap();
    let out = tokio::time::timeout(Duration::from_secs(30), run.wait_with_output())
        .await
        .expect("the run ends")
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let said = stderr(&out);
    let lines: Vec<&str> = said.lines().collect();
    assert_eq!(lines.len(), 1, "{said}");
    assert!(
        lines[0].contains("lost the connection to the daemon"),
        "{said}"
    );
    assert!(out.stdout.is_empty());
}

/// The first event `pick` picks, within 60 s.
async fn wait_for<T>(
    events: &mut egirl::bus::EventReceiver,
    mut pick: impl FnMut(&Event) -> Option<T>,
) -> T {
    let wait = async {
        loop {
            let event = events.recv().await.expect("the link is open");
            if let Some(found) = pick(&event) {
                return found;
            }
        }
    };
    tokio::time::timeout(Duration::from_secs(60), wait)
        .await
        .expect("the event within 60 s")
}
