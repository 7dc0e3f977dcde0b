//! `egirl serve` as a daemon: the real binary answers a webhook-driven
//! turn, stops on SIGTERM with the transcript on disk, keeps a second
//! process off the same workspace's services, and serves no webhook
//! without a secret.

use std::path::Path;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

use super::SECRET;
use crate::support::fake_llama::{FakeLlama, Reply};

fn write_config(dir: &Path, llama: &FakeLlama, extra: &str) -> std::path::PathBuf {
    let config = format!(
        "[workspace]\npath = \"ws\"\n[log]\ndir = \"{logs}\"\n[local]\nendpoint = \"{llama}\"\nmodel = \"fake\"\n\
         [heartbeat]\nevery = \"0\"\n[webhook]\nlisten = \"127.0.0.1:0\"\n{extra}",
        logs = dir.join("logs").display(),
        llama = llama.url(),
    );
    let path = dir.join("egirl.toml");
    std::fs::write(&path, config).unwrap();
    path
}

fn serve(dir: &Path, config: &Path, secret: Option<&str>) -> Child {
    let mut command = Command::new(env!("CARGO_BIN_EXE_egirl"));
    command
        .arg("--config")
        .arg(config)
        .arg("serve")
        .env("HOME", dir)
        .env_remove("EGIRL_CONFIG")
        .env_remove("EGIRL_WEBHOOK_SECRET")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    if let Some(secret) = secret {
        command.env("EGIRL_WEBHOOK_SECRET", secret);
    }
    command.spawn().unwrap()
}

/// Collects stderr lines as they come.
fn collect_stderr(child: &mut Child) -> Arc<Mutex<Vec<String>>> {
    let lines = Arc::new(Mutex::new(Vec::new()));
    let stderr = child.stderr.take().unwrap();
    let sink = lines.clone();
    tokio::spawn(async move {
        let mut reader = BufReader::new(stderr).lines();
        while let Ok(Some(line)) = reader.next_line().await {
            sink.lock().unwrap().push(line);
        }
    });
    lines
}

async fn wait_line(lines: &Mutex<Vec<String>>, needle: &str) -> String {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    loop {
        if let Some(line) = lines.lock().unwrap().iter().find(|l| l.contains(needle)) {
            return line.clone();
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "no `{needle}` on stderr: {:?}",
            lines.lock().unwrap()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn serve_answers_a_webhook_turn_and_stops_on_sigterm() {
    let llama = FakeLlama::start().await;
    let dir = tempfile::tempdir().unwrap();
    let config = write_config(dir.path(), &llama, "");
    let mut child = serve(dir.path(), &config, Some(SECRET));
    let lines = collect_stderr(&mut child);
    let line = wait_line(&lines, "webhook on http://").await;
    let url = line
        .split_whitespace()
        .find(|w| w.starts_with("http://"))
        .unwrap()
        .trim_end_matches(',')
        .to_string();

    // A second daemon on the same workspace leaves the services alone.
    let mut second = serve(dir.path(), &config, Some(SECRET));
    let second_lines = collect_stderr(&mut second);
    let status = tokio::time::timeout(Duration::from_secs(20), second.wait())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(status.code(), Some(1));
    let why = wait_line(&second_lines, "run in another egirl process").await;
    assert!(
        why.contains(&format!("pid {}", child.id().unwrap())),
        "{why}"
    );

    llama.push_reply(Reply::text("Build 1234 is green again."));
    let response = reqwest::Client::new()
        .post(&url)
        .bearer_auth(SECRET)
        .json(&serde_json::json!({"build": 1234, "status": "passed"}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 202);
    let transcript = dir.path().join("ws/sessions/webhook-default.jsonl");
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    while !std::fs::read_to_string(&transcript)
        .unwrap_or_default()
        .contains("green again")
    {
        assert!(
            tokio::time::Instant::now() < deadline,
            "no answer in the transcript"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }

    let pid = child.id().unwrap() as i32;
    // SAFETY: signalling our own child process.
    unsafe { libc::kill(pid, libc::SIGTERM) };
    let status = tokio::time::timeout(Duration::from_secs(20), child.wait())
        .await
        .expect("exits within 20 s")
        .unwrap();
    assert!(status.success(), "{:?}", lines.lock().unwrap());
    wait_line(&lines, "egirl: stopping").await;
    let all = lines.lock().unwrap().join("\n");
    assert!(!all.contains(SECRET), "the secret reached stderr: {all}");
    // Logs go to stderr too in serve (masked like the file).
    assert!(all.contains("webhook: event dispatched"), "{all}");
    let text = std::fs::read_to_string(&transcript).unwrap();
    assert!(
        text.contains("1234") && text.contains("green again"),
        "{text}"
    );
    // The lock went with the process: the services can start again.
    assert!(
        egirl::fsutil::lockfile::FileLock::try_acquire(&dir.path().join("ws/.egirl/services.lock"))
            .unwrap()
            .is_some()
    );
}

#[tokio::test]
async fn without_a_secret_there_is_no_webhook() {
    let llama = FakeLlama::start().await;
    let dir = tempfile::tempdir().unwrap();
    let config = write_config(dir.path(), &llama, "[cron]\nenabled = false\n");
    let mut child = serve(dir.path(), &config, None);
    let lines = collect_stderr(&mut child);
    // Nothing but the socket to serve: the daemon still serves it.
    wait_line(&lines, "egirl: listening on ").await;
    let pid = child.id().unwrap() as i32;
    // SAFETY: signalling our own child process.
    unsafe { libc::kill(pid, libc::SIGTERM) };
    let status = tokio::time::timeout(Duration::from_secs(20), child.wait())
        .await
        .expect("exits within 20 s")
        .unwrap();
    assert!(status.success(), "{:?}", lines.lock().unwrap());
    wait_line(&lines, "egirl: stopping").await;
    let stderr = lines.lock().unwrap().join("\n");
    assert!(!stderr.contains("webhook on"), "{stderr}");
}

/// The address `egirl serve` says its webhook listens on.
async fn webhook_addr(lines: &Mutex<Vec<String>>) -> String {
    let line = wait_line(lines, "webhook on http://").await;
    let url = line
        .split_whitespace()
        .find(|w| w.starts_with("http://"))
        .unwrap()
        .trim_end_matches(',');
    url.trim_start_matches("http://")
        .split('/')
        .next()
        .unwrap()
        .to_string()
}

/// Reads until the server closes the connection; what it sent.
async fn read_until_closed(stream: &mut tokio::net::TcpStream) -> String {
    use tokio::io::AsyncReadExt;
    let mut got = Vec::new();
    let read = tokio::time::timeout(Duration::from_secs(30), async {
        let mut buf = [0u8; 1024];
        loop {
            match stream.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => got.extend_from_slice(&buf[..n]),
            }
        }
    })
    .await;
    assert!(read.is_ok(), "the server kept the connection open");
    String::from_utf8_lossy(&got).into_owned()
}

/// A client sending its request head slowly (no secret needed) cannot hold
/// a connection past `header_timeout`: once it could, for as long as it liked.
#[tokio::test]
async fn a_slow_request_head_is_closed() {
    use tokio::io::AsyncWriteExt;
    let llama = FakeLlama::start().await;
    let dir = tempfile::tempdir().unwrap();
    let config = write_config(dir.path(), &llama, "header_timeout = \"1s\"\n");
    let mut child = serve(dir.path(), &config, Some(SECRET));
    let lines = collect_stderr(&mut child);
    let addr = webhook_addr(&lines).await;
    let mut slow = tokio::net::TcpStream::connect(&addr).await.unwrap();
    slow.write_all(b"POST /api/webhook/default HTTP/1.1\r\nHost: x\r\n")
        .await
        .unwrap();
    let answer = read_until_closed(&mut slow).await;
    assert!(!answer.contains("202"), "{answer}");
    // A whole request is still served.
    llama.push_reply(Reply::text("ok"));
    let response = reqwest::Client::new()
        .post(format!("http://{addr}/api/webhook/default"))
        .bearer_auth(SECRET)
        .json(&serde_json::json!({"ping": 1}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 202);
}

/// Connections beyond `max_connections` are answered
/// 503 and closed; a freed slot serves again.
#[tokio::test]
async fn connections_beyond_the_cap_are_refused() {
    use tokio::io::AsyncWriteExt;
    let llama = FakeLlama::start().await;
    let dir = tempfile::tempdir().unwrap();
    let config = write_config(
        dir.path(),
        &llama,
        "header_timeout = \"5m\"\nmax_connections = 2\n",
    );
    let mut child = serve(dir.path(), &config, Some(SECRET));
    let lines = collect_stderr(&mut child);
    let addr = webhook_addr(&lines).await;
    let mut held = Vec::new();
    for _ in 0..2 {
        let mut slow = tokio::net::TcpStream::connect(&addr).await.unwrap();
        slow.write_all(b"POST /api/webhook/default HTTP/1.1\r\n")
            .await
            .unwrap();
        held.push(slow);
    }
    let mut third = tokio::net::TcpStream::connect(&addr).await.unwrap();
    third
        .write_all(b"POST /api/webhook/default HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}")
        .await
        .unwrap();
    let answer = read_until_closed(&mut third).await;
    assert!(answer.starts_with("HTTP/1.1 503"), "{answer}");
    drop(held);
    // The slots come free as the server sees the closes.
    llama.push_reply(Reply::text("ok"));
    let client = reqwest::Client::new();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    loop {
        let status = client
            .post(format!("http://{addr}/api/webhook/default"))
            .bearer_auth(SECRET)
            .json(&serde_json::json!({"ping": 1}))
            .send()
            .await
            .map(|r| r.status().as_u16());
        if matches!(status, Ok(202)) {
            break;
        }
        assert!(tokio::time::Instant::now() < deadline, "{status:?}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}
