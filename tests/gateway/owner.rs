//! The TUI that owns the core (started first, no daemon) quits while a
//! second window attached to it has a turn running: that turn is not cut
//! silently. The owner lets it finish (as `egirl serve` does on stop) and
//! says so, and the attached window sees its answer to the end.

use std::time::Duration;

use crate::support::cli::Cli;
use crate::support::fake_llama::{FakeLlama, Reply};
use crate::tui::pty::Pty;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn quitting_the_owner_lets_the_attached_window_s_turn_finish() {
    let llama = FakeLlama::start().await;
    let cli = Cli::new(&llama, "[cron]\nenabled = false\n");
    let mut owner = Pty::spawn(cli.dir.path());
    owner.wait_for("Type a message").await;
    let socket = cli.workspace().join(".egirl/egirl.sock");
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    while tokio::net::UnixStream::connect(&socket).await.is_err() {
        assert!(tokio::time::Instant::now() < deadline, "no socket");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let mut window = Pty::spawn(cli.dir.path());
    window
        .wait_for(&format!("attached: tui pid {}", owner.child.id()))
        .await;

    llama.push_reply(
        Reply::chunks(&["slow ", "answer ", "seen ", "through"])
            .frame_delay(Duration::from_millis(800)),
    );
    window.send("a long one\r");
    window.wait_for("slow").await;
    owner.send("\x03\x03");
    window.wait_for("slow answer seen through").await;
    assert_eq!(owner.exit_code().await, Some(0));
    assert!(
        owner
            .contents()
            .contains("letting the turn in flight finish"),
        "{}",
        owner.contents()
    );
    let sessions = cli.workspace().join("sessions");
    let transcripts: String = std::fs::read_dir(sessions)
        .unwrap()
        .flatten()
        .map(|f| std::fs::read_to_string(f.path()).unwrap_or_default())
        .collect();
    assert!(
        transcripts.contains("slow answer seen through") && !transcripts.contains("interrupted"),
        "{transcripts}"
    );

    // The owner is gone: the window says so and keeps trying.
    window.wait_for("connection lost, retrying").await;
    window.send("\x03\x03");
    assert_eq!(window.exit_code().await, Some(0));
}
