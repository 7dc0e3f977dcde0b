//! `egirl serve` with the real model: a webhook event becomes a turn the
//! model answers, and SIGTERM stops the daemon with the transcript on disk.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::server::{RealServer, free_port};

const SECRET: &str = "e2e-webhook-secret";

/// A plain HTTP/1.1 POST; the status code of the answer.
fn post_json(port: u16, path: &str, body: &str) -> u16 {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).expect("connect to the webhook");
    let request = format!(
        "POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {SECRET}\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(request.as_bytes()).expect("send");
    let mut answer = String::new();
    stream.read_to_string(&mut answer).expect("read");
    answer
        .split_whitespace()
        .nth(1)
        .and_then(|code| code.parse().ok())
        .unwrap_or(0)
}

fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(120);
    while !done() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn serve_answers_a_webhook_event_with_the_real_model() {
    let dir = tempfile::tempdir().expect("temp dir");
    let server = RealServer::start(dir.path());
    let port = free_port();
    let config = dir.path().join("egirl.toml");
    std::fs::write(
        &config,
        format!(
            "[workspace]\npath = \"ws\"\n[log]\ndir = \"{logs}\"\n[agent]\nmax_turns = 2\n\
             [local]\nendpoint = \"{url}\"\nmodel = \"SmolLM2-135M-Instruct\"\ncontext_length = 8192\n\
             max_tokens = 48\ntool_format = \"qwen3\"\n[heartbeat]\nevery = \"0\"\n\
             [webhook]\nlisten = \"127.0.0.1:{port}\"\n",
            logs = dir.path().join("logs").display(),
            url = server.url(),
        ),
    )
    .expect("config");
    let mut child = Command::new(env!("CARGO_BIN_EXE_egirl"))
        .arg("--config")
        .arg(&config)
        .arg("serve")
        .env("HOME", dir.path())
        .env("EGIRL_WEBHOOK_SECRET", SECRET)
        .env_remove("EGIRL_CONFIG")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start egirl serve");

    wait_until("the webhook to listen", || {
        TcpStream::connect(("127.0.0.1", port)).is_ok()
    });
    let status = post_json(
        port,
        "/api/webhook/default",
        r#"{"event": "greeting", "text": "Say hello to the owner."}"#,
    );
    assert_eq!(status, 202);
    let transcript = dir.path().join("ws/sessions/webhook-default.jsonl");
    wait_until("the model's answer in the transcript", || {
        std::fs::read_to_string(&transcript)
            .unwrap_or_default()
            .lines()
            .any(|l| {
                l.contains("\"role\":\"assistant\"") && l.contains("\"provider\":\"llamacpp\"")
            })
    });

    // SAFETY: signalling our own child process.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    wait_until("egirl serve to exit", || {
        child.try_wait().expect("wait").is_some()
    });
    let code = child.try_wait().expect("wait").and_then(|s| s.code());
    assert_eq!(code, Some(0));
    let text = std::fs::read_to_string(&transcript).expect("transcript");
    assert!(text.contains("greeting"), "{text}");
}
