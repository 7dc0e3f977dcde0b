//! The TUI attached to a running daemon, through the real binary: plain
//! `egirl` beside `egirl serve` on the same workspace is one more window
//! onto the daemon's core. It shows the Discord session live, answers its
//! approval, and quitting it (or killing it) stops nothing in the daemon.

use std::time::Duration;

use super::attach_rig::{Daemon, exec_call, tool_results_with};
use crate::support::fake_llama::Reply;
use crate::tui::pty::ARMED;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_tui_attaches_shows_discord_live_and_answers_its_approval() {
    let daemon = Daemon::start().await;
    let mut tui = daemon.attach_tui().await;
    // One core: this process started none (no second services notice).
    assert!(
        !tui.contents().contains("another egirl process"),
        "{}",
        tui.contents()
    );

    // The Discord answer streams into the TUI while the turn runs: its
    // first words are on the screen before Discord gets the whole answer.
    daemon.llama.push_reply(
        Reply::chunks(&["streamed ", "to the ", "desk ", "live"])
            .frame_delay(Duration::from_millis(700)),
    );
    daemon.dm("hello daemon");
    tui.wait_for("streamed").await;
    assert!(
        daemon.discord.sent().is_empty(),
        "the answer was only shown once it was complete"
    );
    tui.wait_for("streamed to the desk live").await;
    assert_eq!(daemon.sent(1).await.content, "streamed to the desk live");

    // The Discord session's exec waits for an answer; `y` at the desk
    // gives it, and the command runs once.
    daemon
        .llama
        .push_replies([exec_call("echo ran-once-7"), Reply::text("ran it")]);
    daemon.dm("run the echo");
    tui.wait_for("Approve exec?").await;
    assert!(
        daemon.sent(2).await.content.contains("echo ran-once-7"),
        "the owner is asked in Discord too"
    );
    tui.wait_for(ARMED).await;
    tui.send("y");
    assert_eq!(daemon.sent(3).await.content, "ran it");
    tui.wait_for("ran it").await;
    assert_eq!(tool_results_with(&daemon.transcript(), "ran-once-7"), 1);
    assert!(!tui.contents().contains("Approve exec?"));

    // Quitting the attached TUI stops neither the daemon nor its bot.
    tui.send("\x03\x03");
    assert_eq!(tui.exit_code().await, Some(0));
    daemon.answers_another_dm(3).await;
    daemon.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn quitting_or_killing_attached_tuis_mid_turn_leaves_the_turn_running() {
    let daemon = Daemon::start().await;
    let mut quitting = daemon.attach_tui().await;
    let mut killed = daemon.attach_tui().await;
    let words = ["one ", "two ", "three ", "four ", "five ", "six"];
    daemon
        .llama
        .push_reply(Reply::chunks(&words).frame_delay(Duration::from_millis(500)));
    daemon.dm("count slowly");
    quitting.wait_for("one two").await;
    killed.wait_for("one two").await;

    quitting.send("\x03\x03");
    assert_eq!(quitting.exit_code().await, Some(0));
    killed.child.kill().expect("kill the TUI");
    let _ = killed.child.wait();

    // The turn ran to its end and its answer reached Discord whole.
    assert_eq!(daemon.sent(1).await.content, "one two three four five six");
    let transcript = daemon.transcript();
    assert!(
        !transcript
            .iter()
            .any(|r| r.to_string().contains("interrupted")),
        "{transcript:?}"
    );
    daemon.answers_another_dm(1).await;
    daemon.stop().await;
}

/// `egirl attach` with nothing listening says so in one line and exits 1.
#[tokio::test]
async fn attach_with_nothing_answering_exits_1_with_one_line() {
    let llama = crate::support::fake_llama::FakeLlama::start().await;
    let cli = crate::support::cli::Cli::new(&llama, "");
    // The workspace exists already: its creation would be a line of its own.
    egirl::workspace::ensure(&cli.workspace()).expect("workspace");
    let out = cli.run(&["attach"]).await;
    let stderr = crate::support::cli::stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
    assert!(stderr.contains("egirl.sock"), "{stderr}");

    let out = cli.run(&["attach", "ws://127.0.0.1:9"]).await;
    let stderr = crate::support::cli::stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
}

/// A request already waiting when the TUI attaches opens its modal (the
/// daemon re-sends the open approvals after `hello`), and `y` answers it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_approval_waiting_before_the_tui_attached_opens_its_modal() {
    let daemon = Daemon::start().await;
    daemon
        .llama
        .push_replies([exec_call("echo waited-3"), Reply::text("finally")]);
    daemon.dm("run it");
    assert!(daemon.sent(1).await.content.contains("echo waited-3"));

    let mut tui = daemon.attach_tui().await;
    tui.wait_for("Approve exec?").await;
    tui.wait_for(ARMED).await;
    tui.send("y");
    assert_eq!(daemon.sent(2).await.content, "finally");
    assert_eq!(tool_results_with(&daemon.transcript(), "waited-3"), 1);
    tui.send("\x03\x03");
    assert_eq!(tui.exit_code().await, Some(0));
    daemon.stop().await;
}

/// The daemon goes away under an attached TUI: the status line says the
/// connection is lost and that it retries; the TUI still quits cleanly.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lost_daemon_shows_in_the_status_line_and_the_tui_still_quits() {
    let mut daemon = Daemon::start().await;
    let mut tui = daemon.attach_tui().await;
    daemon.child.kill().await.expect("kill the daemon");
    tui.wait_for("connection lost, retrying (attempt").await;
    tui.send("\x03\x03");
    assert_eq!(tui.exit_code().await, Some(0));
}

/// `egirl attach ws://…` with the device's token in a file: the TUI
/// attached over the WebSocket says so, and sends and shows a turn.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn egirl_attach_over_a_websocket_with_a_token_file() {
    let llama = crate::support::fake_llama::FakeLlama::start().await;
    let daemon = super::tcp::Daemon::start(&llama).await;
    let token_file = daemon.config_dir().join("gateway/token");
    let base = daemon.url.trim_end_matches("/ws").to_string();
    let mut tui = crate::tui::pty::Pty::launch(crate::tui::pty::Launch {
        bin: env!("CARGO_BIN_EXE_egirl").into(),
        args: vec![
            "--config".into(),
            daemon.dir.path().join("egirl.toml").display().to_string(),
            "attach".into(),
            base.clone(),
            "--token-file".into(),
            token_file.display().to_string(),
        ],
        home: daemon.dir.path(),
        watch: Vec::new(),
    });
    tui.wait_for(&format!("attached: {base}")).await;
    llama.push_reply(Reply::text("over the wire"));
    tui.send("hello gateway\r");
    tui.wait_for("over the wire").await;
    tui.send("\x03\x03");
    assert_eq!(tui.exit_code().await, Some(0));
    let token = daemon.token();
    let (_dir, stderr) = daemon.stop().await;
    assert!(!stderr.contains(&token), "{stderr}");
}

/// `egirl --session ID` beside the daemon attaches and opens that session:
/// its conversation so far, and what is typed goes into it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn session_id_beside_the_daemon_opens_that_session_attached() {
    let daemon = Daemon::start().await;
    daemon.llama.push_reply(Reply::text("first answer"));
    daemon.dm("hello daemon");
    assert_eq!(daemon.sent(1).await.content, "first answer");

    let session = format!("discord-{}", super::attach_rig::DM);
    let mut tui = crate::tui::pty::Pty::launch(crate::tui::pty::Launch {
        bin: env!("CARGO_BIN_EXE_egirl").into(),
        args: vec![
            "--config".into(),
            daemon.dir.path().join("egirl.toml").display().to_string(),
            "--session".into(),
            session.clone(),
        ],
        home: daemon.dir.path(),
        watch: Vec::new(),
    });
    tui.wait_for(&format!("attached: serve pid {}", daemon.pid()))
        .await;
    tui.wait_for(&format!("resumed {session}")).await;
    assert!(
        tui.contents().contains("first answer"),
        "{}",
        tui.contents()
    );

    daemon.llama.push_reply(Reply::text("answered at the desk"));
    tui.send("typed at the desk\r");
    tui.wait_for("answered at the desk").await;
    let transcript = daemon.transcript();
    assert!(
        transcript
            .iter()
            .any(|r| r["role"] == "user" && r.to_string().contains("typed at the desk")),
        "{transcript:?}"
    );
    tui.send("\x03\x03");
    assert_eq!(tui.exit_code().await, Some(0));
    daemon.stop().await;
}

/// With no daemon, the first `egirl` is the core (in process, as ever) and
/// a second one on the workspace attaches to it: what the second sends,
/// the first shows.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_tui_attaches_to_the_first() {
    let llama = crate::support::fake_llama::FakeLlama::start().await;
    let dir = tempfile::tempdir().expect("temp dir");
    let config = format!(
        "[workspace]\npath = \"ws\"\n[log]\ndir = \"{}\"\n[local]\nendpoint = \"{}\"\nmodel = \"fake\"\n",
        dir.path().join("logs").display(),
        llama.url()
    );
    std::fs::write(dir.path().join("egirl.toml"), config).expect("config");
    let mut first = crate::tui::pty::Pty::spawn(dir.path());
    first.wait_for("Type a message").await;
    assert!(
        !first.contents().contains("attached:"),
        "{}",
        first.contents()
    );
    let socket = dir.path().join("ws/.egirl/egirl.sock");
    let deadline = tokio::time::Instant::now() + super::attach_rig::WAIT;
    while tokio::net::UnixStream::connect(&socket).await.is_err() {
        assert!(tokio::time::Instant::now() < deadline, "no socket");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }

    let mut second = crate::tui::pty::Pty::spawn(dir.path());
    second
        .wait_for(&format!("attached: tui pid {}", first.child.id()))
        .await;
    llama.push_reply(Reply::text("one core answers"));
    second.send("from the second window\r");
    second.wait_for("one core answers").await;
    first.wait_for("from the second window").await;
    first.wait_for("one core answers").await;

    second.send("\x03\x03");
    assert_eq!(second.exit_code().await, Some(0));
    first.send("\x03\x03");
    assert_eq!(first.exit_code().await, Some(0));
}
