//! The rig of the browser tests: `egirl serve` (the real binary) on a temp
//! workspace with the gateway's TCP listener on a free loopback port, the
//! scripted fake model, optionally the fake Discord gateway; `egirl pair`
//! for a code; a page of the shared headless Chromium signed in with it;
//! TUIs attached in a pseudo-terminal.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;
use tokio::io::{AsyncBufReadExt, BufReader};

pub use crate::gateway::attach_rig::{exec_call, tool_results_with};
use crate::support::cdp::{Browser, Page, js_str};
use crate::support::fake_discord::{FakeDiscord, OWNER_ID, UserMessage};
use crate::support::fake_llama::FakeLlama;
use crate::tui::pty::{Launch, Pty};

/// The owner's DM with the bot.
pub const DM: u64 = 5001;
/// Generous: a debug build on a busy 2-core machine.
pub const WAIT: Duration = Duration::from_secs(45);

pub struct Rig {
    /// The `egirl` binary the daemon and the commands run.
    bin: PathBuf,
    pub llama: FakeLlama,
    pub discord: Option<FakeDiscord>,
    pub dir: tempfile::TempDir,
    child: tokio::process::Child,
    /// `http://127.0.0.1:PORT`, where the page is served.
    pub base: String,
    stderr: Arc<Mutex<String>>,
}

impl Rig {
    /// The daemon without Discord.
    pub async fn start() -> Rig {
        Rig::launch(false, env!("CARGO_BIN_EXE_egirl").into()).await
    }

    /// The daemon with the fake Discord and the owner's DM.
    pub async fn with_discord() -> Rig {
        Rig::launch(true, env!("CARGO_BIN_EXE_egirl").into()).await
    }

    /// The daemon of another build of `egirl` (a measurement's release
    /// binary), without Discord.
    pub async fn start_bin(bin: PathBuf) -> Rig {
        Rig::launch(false, bin).await
    }

    async fn launch(with_discord: bool, bin: PathBuf) -> Rig {
        let llama = FakeLlama::start().await;
        let discord = match with_discord {
            true => Some(FakeDiscord::start().await),
            false => None,
        };
        let dir = tempfile::tempdir().expect("temp dir");
        let mut config = format!(
            "[workspace]\npath = \"ws\"\n[log]\ndir = \"{logs}\"\n[local]\nendpoint = \"{llama}\"\nmodel = \"fake\"\n\
             [cron]\nenabled = false\n[gateway]\nlisten = \"127.0.0.1:0\"\n",
            logs = dir.path().join("logs").display(),
            llama = llama.url(),
        );
        if let Some(discord) = &discord {
            config.push_str(&format!(
                "[channels.discord]\nenabled = true\nallowed_users = [{OWNER_ID}]\nproxy = \"{}\"\n",
                discord.proxy()
            ));
        }
        std::fs::write(dir.path().join("egirl.toml"), config).expect("config");
        let mut child = egirl(&bin, dir.path())
            .arg("serve")
            .kill_on_drop(true)
            .spawn()
            .expect("spawn egirl serve");
        let stderr = Arc::new(Mutex::new(String::new()));
        let base = listening(&mut child, stderr.clone()).await;
        let rig = Rig {
            bin,
            llama,
            discord,
            dir,
            child,
            base,
            stderr,
        };
        if let Some(discord) = &rig.discord {
            discord.wait_sessions(1).await;
        }
        rig.wait_socket().await;
        rig
    }

    pub fn workspace(&self) -> PathBuf {
        self.dir.path().join("ws")
    }

    pub fn pid(&self) -> u32 {
        self.child.id().expect("the daemon runs")
    }

    /// What the daemon wrote on stderr so far.
    pub fn stderr(&self) -> String {
        self.stderr
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// The attached TUIs find the daemon by its socket: wait for it.
    async fn wait_socket(&self) {
        let socket = self.workspace().join(".egirl/egirl.sock");
        let deadline = tokio::time::Instant::now() + WAIT;
        while tokio::net::UnixStream::connect(&socket).await.is_err() {
            assert!(
                tokio::time::Instant::now() < deadline,
                "the daemon never listened on {}:\n{}",
                socket.display(),
                self.stderr()
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// `egirl ARGS` with this daemon's config and home.
    pub async fn run(&self, args: &[&str]) -> std::process::Output {
        let out = egirl(&self.bin, self.dir.path())
            .args(args)
            .output()
            .await
            .expect("run egirl");
        assert!(
            out.status.success(),
            "egirl {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        out
    }

    /// A fresh pairing code from `egirl pair`.
    pub async fn pairing_code(&self, name: &str) -> String {
        let out = self.run(&["pair", "--name", name]).await;
        let stdout = String::from_utf8_lossy(&out.stdout);
        stdout
            .split_whitespace()
            .find(|w| w.len() == 9 && w.as_bytes()[4] == b'-')
            .unwrap_or_else(|| panic!("no code in {stdout}"))
            .to_string()
    }

    /// `egirl devices list`: the paired devices, a header line first.
    pub async fn devices(&self) -> String {
        String::from_utf8_lossy(&self.run(&["devices", "list"]).await.stdout).into_owned()
    }

    /// A page of `browser` signed in with a fresh code, its app ready.
    pub async fn signed_in<'b>(&self, browser: &'b Browser) -> Page<'b> {
        let page = browser.page().await;
        self.sign_in(&page, "browser-test").await;
        page
    }

    /// Opens the page, which shows the sign-in form, and signs in.
    pub async fn sign_in(&self, page: &Page<'_>, device: &str) {
        let code = self.pairing_code(device).await;
        page.goto(&self.base).await;
        page.wait_for_selector("form#signin").await;
        page.type_into("input#code", &code).await;
        page.type_into("input#device", device).await;
        page.click("button#signin-submit").await;
        wait_ready(page).await;
    }

    /// A TUI started as plain `egirl` on the daemon's config: attached.
    pub async fn attach_tui(&self) -> Pty {
        let pty = Pty::launch(self.tui_launch(Vec::new()));
        pty.wait_for(&format!("attached: serve pid {}", self.pid()))
            .await;
        pty
    }

    /// How to start a TUI on the daemon's config, watching for `watch`.
    pub fn tui_launch(&self, watch: Vec<String>) -> Launch<'_> {
        Launch {
            bin: self.bin.clone(),
            args: vec![
                "--config".into(),
                self.dir.path().join("egirl.toml").display().to_string(),
            ],
            home: self.dir.path(),
            watch,
        }
    }

    /// The owner writes in the DM (needs [`Rig::with_discord`]).
    pub fn dm(&self, text: &str) {
        let discord = self.discord.as_ref().expect("a rig with Discord");
        discord.send(UserMessage::dm(DM, text));
    }

    /// A session's transcript records.
    pub fn transcript(&self, session: &str) -> Vec<Value> {
        let path = self
            .workspace()
            .join("sessions")
            .join(format!("{session}.jsonl"));
        std::fs::read_to_string(path)
            .unwrap_or_default()
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect()
    }

    /// SIGTERM; the daemon exits cleanly. Its stderr.
    pub async fn stop(mut self) -> String {
        let pid = self.pid() as i32;
        // SAFETY: signalling our own child process.
        unsafe { libc::kill(pid, libc::SIGTERM) };
        let status = tokio::time::timeout(WAIT, self.child.wait())
            .await
            .expect("the daemon exits")
            .expect("wait");
        let stderr = self.stderr();
        assert!(status.success(), "{stderr}");
        stderr
    }
}

/// The binary with `dir`'s config and home (its config dir under it).
fn egirl(bin: &Path, dir: &Path) -> tokio::process::Command {
    let mut cmd = tokio::process::Command::new(bin);
    cmd.arg("--config")
        .arg(dir.join("egirl.toml"))
        .env("HOME", dir)
        .env("DISCORD_TOKEN", "web-ui-test-token")
        .env_remove("XDG_CONFIG_HOME")
        .env_remove("EGIRL_CONFIG")
        .env_remove("EGIRL_GATEWAY_NO_AUTH")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    cmd
}

/// Reads the daemon's stderr (kept in `kept`) until it says where it
/// listens: `http://HOST:PORT`.
async fn listening(child: &mut tokio::process::Child, kept: Arc<Mutex<String>>) -> String {
    let (url_tx, url_rx) = tokio::sync::oneshot::channel();
    let mut lines = BufReader::new(child.stderr.take().expect("stderr piped")).lines();
    let log = kept.clone();
    tokio::spawn(async move {
        let mut url_tx = Some(url_tx);
        while let Ok(Some(line)) = lines.next_line().await {
            if let Some(at) = line.split("listening on ").nth(1)
                && let Some(rest) = at.split("://").nth(1)
                && let Some(tx) = url_tx.take()
            {
                let host = rest.trim().split('/').next().unwrap_or_default();
                let _ = tx.send(format!("http://{host}"));
            }
            log.lock()
                .unwrap_or_else(|e| e.into_inner())
                .push_str(&format!("{line}\n"));
        }
    });
    let stderr = || kept.lock().unwrap_or_else(|e| e.into_inner()).clone();
    tokio::time::timeout(WAIT, url_rx)
        .await
        .unwrap_or_else(|_| panic!("no listening line: {}", stderr()))
        .unwrap_or_else(|_| panic!("serve ended: {}", stderr()))
}

/// Waits for the app: the socket's hello and the sessions arrived.
pub async fn wait_ready(page: &Page<'_>) {
    page.wait_for(
        "document.body && document.body.dataset.ready === '1'",
        "the app ready (body[data-ready=\"1\"])",
    )
    .await;
}

/// Types `text` in the input and presses Enter.
pub async fn say(page: &Page<'_>, text: &str) {
    page.type_into("textarea#input", text).await;
    page.press_enter().await;
}

/// The open session's id (`li.open[data-session]`), once there is one.
pub async fn open_session(page: &Page<'_>) -> String {
    page.wait_for_selector("#sessions li.open[data-session]")
        .await;
    page.eval("document.querySelector('#sessions li.open').dataset.session")
        .await
        .as_str()
        .expect("a session id")
        .to_string()
}

/// Waits until an assistant message, done streaming, holds `text`.
pub async fn wait_answer(page: &Page<'_>, text: &str) {
    page.wait_for(
        &format!(
            "[...document.querySelectorAll('#conversation .msg[data-role=\"assistant\"]')]\
             .some(m => !m.classList.contains('streaming') && m.textContent.includes({}))",
            js_str(text)
        ),
        &format!("the answer `{text}`"),
    )
    .await;
}
