//! The approval modal's keystroke guard through the real binary in a
//! pseudo-terminal: a request that opens while the user types a message
//! takes none of the message's keys as a decision, and the message stays
//! whole in the input box.

use std::time::Duration;

use super::pty::{ARMED, Pty};
use crate::support::fake_llama::{FakeLlama, Reply};

const MESSAGE: &str = "anything else you need";

fn config(dir: &std::path::Path, fake: &FakeLlama) {
    let config = format!(
        "[workspace]\npath = \"ws\"\n[log]\ndir = \"{}\"\n[local]\nendpoint = \"{}\"\nmodel = \"fake\"\n",
        dir.join("logs").display(),
        fake.url()
    );
    std::fs::write(dir.join("egirl.toml"), config).expect("config");
}

/// The user asked for something, the model answers with an exec, and the
/// user (eyes on the keyboard) types the next message as the modal opens:
/// `a`, `y`, `n` and `p` in it decide nothing, the command does not run,
/// and the input box holds every character. Then, the keyboard quiet, the
/// modal arms and a deliberate `n` denies.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn typing_while_an_exec_request_arrives_approves_nothing() {
    let fake = FakeLlama::start().await;
    fake.push_replies([
        Reply::text("at your service"),
        Reply::tool_calls(&[("exec", r#"{"command": "touch pwned.txt"}"#)]),
        Reply::text("you said no"),
    ]);
    let dir = tempfile::tempdir().expect("temp dir");
    config(dir.path(), &fake);
    let pwned = dir.path().join("ws").join("pwned.txt");

    let mut pty = Pty::spawn(dir.path());
    pty.wait_for("Type a message").await;
    pty.send("hi\r");
    pty.wait_for("at your service").await;
    pty.send("tidy up\r");
    pty.wait_for("Approve exec?").await;
    // A typist's pace: about 60 ms a key, so the modal never arms while
    // they type (each key starts its quiet period again).
    for c in MESSAGE.chars() {
        pty.send(&c.to_string());
        tokio::time::sleep(Duration::from_millis(60)).await;
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    let screen = pty.contents();
    assert!(
        !pwned.exists(),
        "a key typed for the message approved the command; the screen:\n{screen}"
    );
    assert!(screen.contains("Approve exec?"), "{screen}");
    assert!(screen.contains(MESSAGE), "the message lost keys:\n{screen}");

    pty.wait_for(ARMED).await;
    pty.send("n");
    pty.wait_for("you said no").await;
    assert!(!pwned.exists(), "the command ran");
    // The modal is gone; the message is still in the box, unsent.
    let screen = pty.contents();
    assert!(!screen.contains("Approve exec?"), "{screen}");
    assert!(screen.contains(MESSAGE), "{screen}");

    pty.send("\x03\x03");
    assert_eq!(pty.exit_code().await, Some(0));
}
