//! The rig of the attach tests: `egirl serve` as the daemon, with the fake
//! Discord (the owner's DM asks for exec approvals in Discord, so a
//! request waits for an answer from any surface) and the scripted fake
//! model; TUIs started as plain `egirl` on the same workspace in a PTY;
//! and a raw client speaking the frames on the socket.

use std::path::{Path, PathBuf};
use std::time::Duration;

use egirl::protocol::wire::{ClientFrame, ClientHello, WIRE_VERSION};
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::UnixStream;
use tokio::net::unix::{OwnedReadHalf, OwnedWriteHalf};

use crate::support::fake_discord::{FakeDiscord, OWNER_ID, Sent};
use crate::support::fake_llama::{FakeLlama, Reply};
use crate::tui::pty::Pty;

/// The owner's DM with the bot.
pub const DM: u64 = 5001;
/// Generous: a debug build on a busy 2-core machine.
pub const WAIT: Duration = Duration::from_secs(30);

pub struct Daemon {
    pub llama: FakeLlama,
    pub discord: FakeDiscord,
    pub dir: tempfile::TempDir,
    pub child: tokio::process::Child,
}

impl Daemon {
    /// `egirl serve` with Discord, up and listening on its socket.
    pub async fn start() -> Daemon {
        let llama = FakeLlama::start().await;
        let discord = FakeDiscord::start().await;
        let dir = tempfile::tempdir().expect("temp dir");
        let config = format!(
            "[workspace]\npath = \"ws\"\n[log]\ndir = \"{logs}\"\n[local]\nendpoint = \"{llama}\"\nmodel = \"fake\"\n\
             [channels.discord]\nenabled = true\nallowed_users = [{OWNER_ID}]\nproxy = \"{proxy}\"\napprove_in_discord = true\n",
            logs = dir.path().join("logs").display(),
            llama = llama.url(),
            proxy = discord.proxy(),
        );
        std::fs::write(dir.path().join("egirl.toml"), config).expect("config");
        let child = tokio::process::Command::new(env!("CARGO_BIN_EXE_egirl"))
            .arg("--config")
            .arg(dir.path().join("egirl.toml"))
            .arg("serve")
            .env("HOME", dir.path())
            .env("DISCORD_TOKEN", "attach-test-token")
            .env_remove("EGIRL_CONFIG")
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("spawn egirl serve");
        let daemon = Daemon {
            llama,
            discord,
            dir,
            child,
        };
        daemon.discord.wait_sessions(1).await;
        daemon.wait_socket().await;
        daemon
    }

    pub fn workspace(&self) -> PathBuf {
        self.dir.path().join("ws")
    }

    pub fn socket(&self) -> PathBuf {
        self.workspace().join(".egirl/egirl.sock")
    }

    pub fn pid(&self) -> u32 {
        self.child.id().expect("the daemon runs")
    }

    async fn wait_socket(&self) {
        let deadline = tokio::time::Instant::now() + WAIT;
        while UnixStream::connect(self.socket()).await.is_err() {
            assert!(
                tokio::time::Instant::now() < deadline,
                "the daemon never listened on {}",
                self.socket().display()
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// A TUI started as plain `egirl` on the daemon's config, attached.
    pub async fn attach_tui(&self) -> Pty {
        let pty = Pty::spawn(self.dir.path());
        pty.wait_for(&format!("attached: serve pid {}", self.pid()))
            .await;
        pty
    }

    /// The owner writes in the DM.
    pub fn dm(&self, text: &str) {
        self.discord
            .send(crate::support::fake_discord::UserMessage::dm(DM, text));
    }

    /// The `n`th message the bot sent (1-based), once it has.
    pub async fn sent(&self, n: usize) -> Sent {
        let sent = tokio::time::timeout(WAIT, self.discord.wait_sent(n))
            .await
            .expect("the bot answers");
        sent[n - 1].clone()
    }

    /// The DM session's transcript lines.
    pub fn transcript(&self) -> Vec<Value> {
        let path = self
            .workspace()
            .join("sessions")
            .join(format!("discord-{DM}.jsonl"));
        std::fs::read_to_string(path)
            .unwrap_or_default()
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect()
    }

    /// The daemon still serves: a new DM is answered.
    pub async fn answers_another_dm(&self, already_sent: usize) {
        self.llama.push_reply(Reply::text("still serving"));
        self.dm("are you still there?");
        assert_eq!(self.sent(already_sent + 1).await.content, "still serving");
    }

    /// SIGTERM; the daemon exits cleanly.
    pub async fn stop(self) {
        let pid = self.pid() as i32;
        // SAFETY: signalling our own child process.
        unsafe { libc::kill(pid, libc::SIGTERM) };
        let out = tokio::time::timeout(WAIT, self.child.wait_with_output())
            .await
            .expect("the daemon exits")
            .expect("wait");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{stderr}");
        assert!(!stderr.contains("attach-test-token"), "{stderr}");
    }
}

/// A model's exec call.
pub fn exec_call(command: &str) -> Reply {
    let args = serde_json::json!({ "command": command }).to_string();
    Reply::tool_calls(&[("exec", &args)])
}

/// The tool results in a transcript whose output holds `text`.
pub fn tool_results_with(transcript: &[Value], text: &str) -> usize {
    transcript
        .iter()
        .filter(|r| r["role"] == "tool")
        .filter(|r| r["content"].as_str().is_some_and(|c| c.contains(text)))
        .count()
}

/// A client on the socket speaking the frames by hand, as a script would.
pub struct RawClient {
    lines: tokio::io::Lines<BufReader<OwnedReadHalf>>,
    write: OwnedWriteHalf,
    /// Every `event` frame's event read so far, in order.
    pub events: Vec<Value>,
}

impl RawClient {
    /// Connects and says hello; returns the client after the server's hello.
    pub async fn connect(socket: &Path) -> RawClient {
        let stream = UnixStream::connect(socket).await.expect("connect");
        let (read, write) = stream.into_split();
        let mut client = RawClient {
            lines: BufReader::new(read).lines(),
            write,
            events: Vec::new(),
        };
        client
            .send(&ClientFrame::Hello(ClientHello {
                version: WIRE_VERSION,
                client: "attach-test".into(),
                // The socket is `<home>/ws/.egirl/egirl.sock`.
                token: Some(super::daemon::gateway_token(
                    socket.ancestors().nth(3).expect("the test's home"),
                )),
                resume_after: None,
            }))
            .await;
        let hello = client.frame().await;
        assert_eq!(hello["frame"], "hello", "{hello}");
        client
    }

    pub async fn send(&mut self, frame: &ClientFrame) {
        let mut line = serde_json::to_string(frame).expect("frame");
        line.push('\n');
        self.write.write_all(line.as_bytes()).await.expect("send");
    }

    /// The next frame; an `event` frame's event is also kept in `events`.
    pub async fn frame(&mut self) -> Value {
        let line = tokio::time::timeout(WAIT, self.lines.next_line())
            .await
            .expect("a frame in time")
            .expect("read")
            .expect("the server keeps the connection");
        let frame: Value = serde_json::from_str(&line).expect("a JSON frame");
        if frame["frame"] == "event" {
            self.events.push(frame["event"].clone());
        }
        frame
    }

    /// Reads until an event matches; returns it.
    pub async fn until(&mut self, matches: impl Fn(&Value) -> bool) -> Value {
        loop {
            let frame = self.frame().await;
            if frame["frame"] == "event" && matches(&frame["event"]) {
                return frame["event"].clone();
            }
        }
    }
}

/// An event's type (`approval_request`, `turn_ended`...).
pub fn kind(event: &Value) -> &str {
    event["type"].as_str().unwrap_or_default()
}
