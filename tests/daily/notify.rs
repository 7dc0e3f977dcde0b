//! Desktop notifications while the terminal is not focused (see tests/daily/mod.rs).

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use serde_json::json;
use tokio::io::{AsyncBufReadExt, BufReader};

use crate::support::fake_llama::{FakeLlama, Reply};
use crate::tui::pty::{ARMED, Pty};

/// Focus left the window (`CSI O`) and came back (`CSI I`), as a terminal
/// with focus reporting on writes them.
const FOCUS_OUT: &str = "\x1b[O";
const FOCUS_IN: &str = "\x1b[I";
const OSC9: &[u8] = b"\x1b]9;";
const OSC777: &[u8] = b"\x1b]777;";

fn count(haystack: &[u8], needle: &[u8]) -> usize {
    haystack
        .windows(needle.len())
        .filter(|w| *w == needle)
        .count()
}

/// Runs the TUI with `ui` in its config, sends `focus` reports, asks for
/// an exec, waits for the modal to arm (the alert was written before it
/// drew), denies it, and returns every byte written to the terminal.
async fn approval_with_focus(ui: &str, focus: &[&str]) -> Vec<u8> {
    let fake = FakeLlama::start().await;
    fake.push_replies([
        Reply::tool_calls(&[("exec", r#"{"command": "echo notify-me"}"#)]),
        Reply::text("denied, fine"),
    ]);
    let dir = tempfile::tempdir().expect("temp dir");
    let config = format!(
        "[workspace]\npath = \"ws\"\n[log]\ndir = \"{}\"\n[local]\nendpoint = \"{}\"\nmodel = \"fake\"\n[ui]\n{ui}\n",
        dir.path().join("logs").display(),
        fake.url()
    );
    std::fs::write(dir.path().join("egirl.toml"), config).expect("config");
    let mut pty = Pty::spawn(dir.path());
    pty.wait_for("Type a message").await;
    for report in focus {
        pty.send(report);
        // Each report on its own read, as a terminal sends them.
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    pty.send("run it\r");
    pty.wait_for("Approve exec?").await;
    pty.wait_for(ARMED).await;
    pty.send("n");
    pty.wait_for("denied, fine").await;
    let raw = pty.raw();
    pty.send("\x03\x03");
    assert_eq!(pty.exit_code().await, Some(0));
    raw
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_approval_while_unfocused_writes_osc_9_once() {
    let raw = approval_with_focus("", &[FOCUS_OUT]).await;
    assert_eq!(count(&raw, OSC9), 1, "{}", String::from_utf8_lossy(&raw));
    // The text names the tool, not the command.
    let at = raw
        .windows(OSC9.len())
        .position(|w| w == OSC9)
        .expect("osc 9");
    let end = raw[at..].iter().position(|b| *b == 0x07).expect("BEL") + at;
    let text = String::from_utf8_lossy(&raw[at + OSC9.len()..end]).to_string();
    assert!(text.contains("exec"), "{text}");
    assert!(!text.contains("notify-me"), "{text}");
    // The bell follows.
    assert_eq!(raw.get(end + 1), Some(&0x07));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_approval_while_focused_writes_no_notification() {
    let raw = approval_with_focus("", &[FOCUS_OUT, FOCUS_IN]).await;
    assert_eq!(count(&raw, OSC9), 0);
    assert_eq!(count(&raw, OSC777), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn notify_off_writes_none() {
    let raw = approval_with_focus("notify = \"off\"", &[FOCUS_OUT]).await;
    assert_eq!(count(&raw, OSC9), 0);
    assert_eq!(count(&raw, OSC777), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn notify_osc777_writes_that_escape() {
    let raw = approval_with_focus("notify = \"osc777\"", &[FOCUS_OUT]).await;
    assert_eq!(count(&raw, b"\x1b]777;notify;egirl;"), 1);
    assert_eq!(count(&raw, OSC9), 0);
}

/// A turn that ran at least `notify_after` ("0": every turn) ends while
/// the window is not focused: one notification saying so; a turn ending
/// while focused: none.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_long_turn_ending_while_unfocused_notifies() {
    let fake = FakeLlama::start().await;
    fake.push_replies([Reply::text("first done"), Reply::text("second done")]);
    let dir = tempfile::tempdir().expect("temp dir");
    let config = format!(
        "[workspace]\npath = \"ws\"\n[log]\ndir = \"{}\"\n[local]\nendpoint = \"{}\"\nmodel = \"fake\"\n[ui]\nnotify_after = \"0\"\n",
        dir.path().join("logs").display(),
        fake.url()
    );
    std::fs::write(dir.path().join("egirl.toml"), config).expect("config");
    let mut pty = Pty::spawn(dir.path());
    pty.wait_for("Type a message").await;
    pty.send("hello\r");
    pty.wait_for("first done").await;
    assert_eq!(count(&pty.raw(), OSC9), 0, "focused: no notification");
    pty.send(FOCUS_OUT);
    tokio::time::sleep(Duration::from_millis(200)).await;
    pty.send("again\r");
    pty.wait_for("second done").await;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    while count(&pty.raw(), OSC9) == 0 {
        assert!(tokio::time::Instant::now() < deadline, "no notification");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let raw = String::from_utf8_lossy(&pty.raw()).to_string();
    assert!(
        raw.contains("\x1b]9;egirl: the turn finished after"),
        "{raw:?}"
    );
    assert_eq!(count(&pty.raw(), OSC9), 1);
    pty.send("\x03\x03");
    assert_eq!(pty.exit_code().await, Some(0));
}

/// `egirl serve` with `[ui] notify_command`: an exec the webhook's turn
/// asks about (`[webhook] tools` lets it ask), with no client attached,
/// runs the program with the text as its last argument.
#[tokio::test]
async fn serve_runs_notify_command_for_a_webhook_approval() {
    const SECRET: &str = "notify-webhook-secret";
    let llama = FakeLlama::start().await;
    llama.push_replies([
        Reply::tool_calls(&[("exec", r#"{"command": "echo from-the-webhook"}"#)]),
        Reply::text("done"),
    ]);
    let dir = tempfile::tempdir().expect("temp dir");
    let out = dir.path().join("notified.txt");
    let argv = json!([
        "sh",
        "-c",
        "printf '%s' \"$1\" > \"$0\"",
        out.display().to_string()
    ]);
    let config = format!(
        "[workspace]\npath = \"ws\"\n[log]\ndir = \"{logs}\"\n[local]\nendpoint = \"{llama}\"\nmodel = \"fake\"\n\
         [heartbeat]\nevery = \"0\"\n[webhook]\nlisten = \"127.0.0.1:0\"\ntools = [\"exec\"]\n[ui]\nnotify_command = {argv}\n",
        logs = dir.path().join("logs").display(),
        llama = llama.url(),
    );
    std::fs::write(dir.path().join("egirl.toml"), config).expect("config");
    let mut child = serve(dir.path(), SECRET);
    let url = webhook_url(&mut child).await;
    let response = reqwest::Client::new()
        .post(&url)
        .bearer_auth(SECRET)
        .json(&json!({"build": 7, "status": "failed"}))
        .send()
        .await
        .expect("post");
    assert_eq!(response.status(), 202);
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    let text = loop {
        let text = std::fs::read_to_string(&out).unwrap_or_default();
        if !text.is_empty() {
            break text;
        }
        assert!(tokio::time::Instant::now() < deadline, "never notified");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert!(
        text.contains("exec needs approval (from webhook)"),
        "{text}"
    );
    assert!(!text.contains("from-the-webhook"), "{text}");
    stop(&mut child).await;
}

fn serve(dir: &Path, secret: &str) -> tokio::process::Child {
    tokio::process::Command::new(env!("CARGO_BIN_EXE_egirl"))
        .arg("--config")
        .arg(dir.join("egirl.toml"))
        .arg("serve")
        .env("HOME", dir)
        .env_remove("EGIRL_CONFIG")
        .env("EGIRL_WEBHOOK_SECRET", secret)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("spawn serve")
}

/// The webhook's URL, from serve's stderr.
async fn webhook_url(child: &mut tokio::process::Child) -> String {
    let stderr = child.stderr.take().expect("stderr");
    let mut lines = BufReader::new(stderr).lines();
    let found = tokio::time::timeout(Duration::from_secs(30), async {
        while let Ok(Some(line)) = lines.next_line().await {
            if let Some(url) = line.split_whitespace().find(|w| w.starts_with("http://"))
                && line.contains("webhook on")
            {
                return url.trim_end_matches(',').to_string();
            }
        }
        panic!("serve ended without a webhook line");
    })
    .await
    .expect("webhook line within 30 s");
    // Keep draining stderr so serve never blocks on a full pipe.
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    found
}

async fn stop(child: &mut tokio::process::Child) {
    if let Some(pid) = child.id() {
        // SAFETY: signalling our own child process.
        unsafe { libc::kill(pid as i32, libc::SIGTERM) };
    }
    let _ = tokio::time::timeout(Duration::from_secs(30), child.wait()).await;
}
