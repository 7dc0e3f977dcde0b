//! `egirl serve` on a temp workspace with the fake llama-server, and a raw
//! client of its socket speaking JSON lines, as a script would.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::UnixStream;
use tokio::net::unix::{OwnedReadHalf, OwnedWriteHalf};

use crate::support::fake_llama::FakeLlama;

pub struct Daemon {
    pub child: tokio::process::Child,
    pub dir: tempfile::TempDir,
    pub socket: PathBuf,
    pub lines: Arc<Mutex<Vec<String>>>,
}

impl Daemon {
    /// `egirl serve` with nothing but the socket (cron off), `env` set;
    /// returns once it says where it listens.
    pub async fn start(llama: &FakeLlama, env: &[(&str, &str)]) -> Daemon {
        let dir = tempfile::tempdir().unwrap();
        let config = format!(
            "[workspace]\npath = \"ws\"\n[log]\ndir = \"{logs}\"\n[local]\nendpoint = \"{llama}\"\nmodel = \"fake\"\n[cron]\nenabled = false\n",
            logs = dir.path().join("logs").display(),
            llama = llama.url(),
        );
        std::fs::write(dir.path().join("egirl.toml"), config).unwrap();
        let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_egirl"));
        cmd.arg("--config")
            .arg(dir.path().join("egirl.toml"))
            .arg("serve")
            .env("HOME", dir.path())
            .env_remove("EGIRL_CONFIG")
            .env_remove("XDG_CONFIG_HOME")
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .kill_on_drop(true);
        for (k, v) in env {
            cmd.env(k, v);
        }
        let mut child = cmd.spawn().unwrap();
        let lines = Arc::new(Mutex::new(Vec::new()));
        let stderr = child.stderr.take().unwrap();
        let sink = lines.clone();
        tokio::spawn(async move {
            let mut reader = BufReader::new(stderr).lines();
            while let Ok(Some(line)) = reader.next_line().await {
                sink.lock().unwrap().push(line);
            }
        });
        let socket = dir.path().join("ws/.egirl/egirl.sock");
        let daemon = Daemon {
            child,
            dir,
            socket,
            lines,
        };
        let line = daemon.wait_line("egirl: listening on ").await;
        assert!(
            line.ends_with(&*daemon.socket.display().to_string()),
            "{line}"
        );
        daemon
    }

    pub fn pid(&self) -> u32 {
        self.child.id().unwrap()
    }

    /// The first stderr line containing `needle` (waits up to 60 s).
    pub async fn wait_line(&self, needle: &str) -> String {
        for _ in 0..600 {
            if let Some(line) = self
                .lines
                .lock()
                .unwrap()
                .iter()
                .find(|l| l.contains(needle))
            {
                return line.clone();
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        panic!("no `{needle}` in {:?}", self.lines.lock().unwrap());
    }

    /// SIGTERM, then waits for the exit; the exit status.
    pub async fn stop(mut self) -> (std::process::ExitStatus, Vec<String>, tempfile::TempDir) {
        let pid = self.pid() as i32;
        // SAFETY: signalling our own child process.
        unsafe { libc::kill(pid, libc::SIGTERM) };
        let status = tokio::time::timeout(Duration::from_secs(30), self.child.wait())
            .await
            .expect("exits within 30 s")
            .unwrap();
        tokio::time::sleep(Duration::from_millis(100)).await;
        let lines = self.lines.lock().unwrap().clone();
        (status, lines, self.dir)
    }

    /// The daemon's resident memory, in KiB.
    pub fn rss_kib(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.pid())).unwrap();
        let line = status.lines().find(|l| l.starts_with("VmRSS:")).unwrap();
        line.split_whitespace().nth(1).unwrap().parse().unwrap()
    }
}

/// A client of the socket that reads and writes JSON lines itself.
pub struct Raw {
    reader: BufReader<OwnedReadHalf>,
    writer: OwnedWriteHalf,
}

impl Raw {
    pub async fn connect(path: &Path) -> Raw {
        let stream = UnixStream::connect(path).await.unwrap();
        let (read, writer) = stream.into_split();
        Raw {
            reader: BufReader::with_capacity(1 << 16, read),
            writer,
        }
    }

    /// Connects and says hello; the server's `hello`, after which its
    /// `status` is the next frame.
    pub async fn hello(path: &Path, resume_after: Option<u64>) -> (Raw, Value) {
        let mut raw = Raw::connect(path).await;
        let mut hello = json!({
            "frame": "hello",
            "version": 1,
            "client": "raw-test",
            "token": token_for(path),
        });
        if let Some(after) = resume_after {
            hello["resume_after"] = json!(after);
        }
        raw.send(&hello).await;
        let hello = raw.next_frame().await.expect("hello");
        assert_eq!(hello["frame"], "hello", "{hello}");
        let status = raw.next_frame().await.expect("status");
        assert_eq!(status["frame"], "status", "{status}");
        (raw, hello)
    }

    pub fn writer_mut(&mut self) -> &mut OwnedWriteHalf {
        &mut self.writer
    }

    pub async fn send(&mut self, frame: &Value) {
        self.send_line(&frame.to_string()).await;
    }

    pub async fn send_line(&mut self, line: &str) {
        self.writer.write_all(line.as_bytes()).await.unwrap();
        self.writer.write_all(b"\n").await.unwrap();
        self.writer.flush().await.unwrap();
    }

    /// The next frame (60 s at most); panics at the end of the stream.
    pub async fn recv(&mut self) -> Value {
        self.try_recv().await.expect("a frame, not the end")
    }

    /// The next frame but a `status` one, or None when the server closed
    /// the connection. A status frame comes whenever the status changes
    /// (docs/protocol.md), e.g. when the local endpoints' health, probed
    /// only while a client is attached, first answers: these tests read
    /// the frames of their ops.
    pub async fn try_recv(&mut self) -> Option<Value> {
        loop {
            let frame = self.next_frame().await?;
            if frame["frame"] != "status" {
                return Some(frame);
            }
        }
    }

    /// The next frame whatever it is, or None at the end of the stream.
    pub async fn next_frame(&mut self) -> Option<Value> {
        let mut line = String::new();
        let read = tokio::time::timeout(Duration::from_secs(60), self.reader.read_line(&mut line))
            .await
            .expect("a frame within 60 s");
        match read {
            Ok(0) | Err(_) => None,
            Ok(_) => Some(serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line}"))),
        }
    }

    /// Sends a user message op under `id`.
    pub async fn say(&mut self, id: &str, session: &str, text: &str) {
        let op = json!({"frame": "op", "id": id, "op": {
            "type": "user_message", "session": session, "origin": "cli", "text": text}});
        self.send(&op).await;
    }

    /// The `event` frames up to the `turn_ended` of `id`; other frames
    /// fail the test.
    pub async fn events_until_end(&mut self, id: &str) -> Vec<Value> {
        let mut got = Vec::new();
        loop {
            let frame = self.recv().await;
            assert_eq!(frame["frame"], "event", "{frame}");
            let ended =
                frame["event"]["type"] == "turn_ended" && frame["event"]["submission"] == id;
            got.push(frame);
            if ended {
                return got;
            }
        }
    }
}

/// The `seq`s of event frames, checked strictly increasing.
pub fn increasing_seqs(frames: &[Value], after: u64) -> Vec<u64> {
    let seqs: Vec<u64> = frames.iter().map(|f| f["seq"].as_u64().unwrap()).collect();
    let mut last = after;
    for seq in &seqs {
        assert!(*seq > last, "seq {seq} after {last}: {seqs:?}");
        last = *seq;
    }
    seqs
}

/// The concatenated `delta` text of event frames.
pub fn deltas(frames: &[Value]) -> String {
    frames
        .iter()
        .filter(|f| f["event"]["type"] == "delta")
        .map(|f| f["event"]["text"].as_str().unwrap().to_string())
        .collect()
}

/// The gateway token the daemon of a test with `HOME` at `home` made (its
/// socket asks for it in `hello`); empty until the daemon has started.
pub fn gateway_token(home: &Path) -> String {
    std::fs::read_to_string(home.join(".config/egirl/gateway/token"))
        .unwrap_or_default()
        .trim()
        .to_string()
}

/// The token for the socket of a test workspace at `<home>/ws`.
fn token_for(socket: &Path) -> String {
    let home = socket
        .ancestors()
        .nth(3)
        .expect("a socket at <home>/ws/.egirl/egirl.sock");
    gateway_token(home)
}
