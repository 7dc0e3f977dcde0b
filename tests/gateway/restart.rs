//! The attached TUI across a restart of the daemon: it says the connection
//! is lost, reconnects to the new `egirl serve`, names the new process in
//! its status line, forgets the dead one's turn, and a message typed then
//! reaches the new core.

use std::process::Stdio;
use std::time::Duration;

use egirl::link::client;

use crate::support::cli::Cli;
use crate::support::fake_llama::{FakeLlama, Reply};
use crate::tui::pty::Pty;

/// `egirl serve` on `cli`'s workspace, once its socket answers.
pub(crate) async fn serve(cli: &Cli) -> tokio::process::Child {
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_egirl"))
        .arg("--config")
        .arg(cli.config())
        .arg("serve")
        .env("HOME", cli.dir.path())
        .env_remove("EGIRL_CONFIG")
        .env_remove("XDG_CONFIG_HOME")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("spawn egirl serve");
    let socket = client::socket_path(&cli.workspace());
    let start = tokio::time::Instant::now();
    while client::probe(&socket, &super::daemon::gateway_token(cli.dir.path()))
        .await
        .is_none()
    {
        if let Ok(Some(status)) = child.try_wait() {
            panic!("egirl serve exited ({status}) before serving its socket");
        }
        assert!(start.elapsed() < Duration::from_secs(60), "no socket");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    child
}

/// SIGTERM, and the daemon is gone.
async fn stop(mut child: tokio::process::Child) {
    let pid = child.id().expect("the daemon runs") as i32;
    // SAFETY: signalling our own child process.
    unsafe { libc::kill(pid, libc::SIGTERM) };
    tokio::time::timeout(Duration::from_secs(30), child.wait())
        .await
        .expect("the daemon exits")
        .expect("wait");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_the_daemon_restarts_the_tui_names_the_new_one_and_reaches_it() {
    let llama = FakeLlama::start().await;
    let cli = Cli::new(&llama, "[cron]\nenabled = false\n");
    let first = serve(&cli).await;
    let first_pid = first.id().expect("runs");
    let mut tui = Pty::spawn(cli.dir.path());
    tui.wait_for(&format!("attached: serve pid {first_pid}"))
        .await;
    llama.push_reply(Reply::text("answered by the first daemon"));
    tui.send("before the restart\r");
    tui.wait_for("answered by the first daemon").await;
    // The daemon dies mid-turn (no SIGTERM grace): that turn never ends.
    llama.push_reply(
        Reply::chunks(&["severed ", "mid ", "way ", "by ", "crash"])
            .frame_delay(Duration::from_millis(1500)),
    );
    tui.send("a turn the crash cuts\r");
    tui.wait_for("severed").await;
    let mut first = first;
    first.kill().await.expect("kill the daemon");

    tui.wait_for("connection lost, retrying").await;
    let second = serve(&cli).await;
    let second_pid = second.id().expect("runs");
    tui.wait_for(&format!("attached: serve pid {second_pid}"))
        .await;
    // The dead daemon's turn ended with it: not `working…` for ever.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    while tui.contents().contains("working…") {
        assert!(
            tokio::time::Instant::now() < deadline,
            "still working: {}",
            tui.contents()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    llama.push_reply(Reply::text("answered by the second daemon"));
    tui.send("after the restart\r");
    tui.wait_for("answered by the second daemon").await;

    tui.send("\x03\x03");
    assert_eq!(tui.exit_code().await, Some(0));
    stop(second).await;
}
