//! The real binary in a pseudo-terminal against the fake llama-server:
//! type a message, see the streamed reply, approve an exec with `y`, see
//! its output, quit with Ctrl+C twice, and find the terminal restored.
//!
//! `Pty` is also the harness of the start-up measurement (`startup.rs`).

use std::io::{Read, Write};
use std::num::NonZeroU16;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use crate::support::fake_llama::{FakeLlama, Reply};

const COLS: NonZeroU16 = NonZeroU16::new(120).expect("nonzero");
const ROWS: NonZeroU16 = NonZeroU16::new(36).expect("nonzero");
/// The approval modal's keys lit: armed (greyed, they follow "wait…").
pub(crate) const ARMED: &str = "║ y once";
/// Generous: a debug build on a busy 2-core CI machine.
const WAIT: Duration = Duration::from_secs(30);

pub(crate) struct Pty {
    pub(crate) child: Child,
    input: std::fs::File,
    pub(crate) screen: Arc<Mutex<vt100::Parser<Answers>>>,
    /// Keeps the terminal's settings readable after the child exits.
    slave: OwnedFd,
    /// When `spawn` started the process.
    pub(crate) spawned_at: Instant,
    /// Texts to watch for, and when each first appeared on the screen.
    seen: Arc<Mutex<Vec<Watched>>>,
    /// When the program last wrote to the terminal.
    last_output: Arc<Mutex<Instant>>,
    /// Every byte the program wrote, in order (escape sequences included).
    raw: Arc<Mutex<Vec<u8>>>,
}

/// A watched text and when it first appeared.
type Watched = (String, Option<Instant>);

/// What to run in the terminal.
pub(crate) struct Launch<'a> {
    pub(crate) bin: PathBuf,
    pub(crate) args: Vec<String>,
    /// The program's HOME (a temp dir: nothing of the user's is read).
    pub(crate) home: &'a Path,
    /// Texts whose first appearance `Pty::seen_at` reports, timed by the
    /// thread that reads the terminal (not by polling).
    pub(crate) watch: Vec<String>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

fn openpty() -> (OwnedFd, OwnedFd) {
    let (mut master, mut slave) = (-1, -1);
    let size = libc::winsize {
        ws_row: ROWS.get(),
        ws_col: COLS.get(),
        ws_xpixel: 0,
        ws_ypixel: 0,
    };
    // SAFETY: plain out-parameters and a valid winsize; the fds returned
    // are owned by nothing else.
    let rc = unsafe {
        libc::openpty(
            &mut master,
            &mut slave,
            std::ptr::null_mut(),
            std::ptr::null(),
            &size,
        )
    };
    assert_eq!(rc, 0, "openpty: {}", std::io::Error::last_os_error());
    // SAFETY: both fds were just opened and are not owned elsewhere.
    unsafe { (OwnedFd::from_raw_fd(master), OwnedFd::from_raw_fd(slave)) }
}

/// What a terminal answers to the queries programs send at start-up
/// (egirl sends none; codex waits for some): cursor position, primary
/// device attributes (a VT220 without the kitty keyboard protocol), and
/// the foreground and background colors. Collected while parsing, written
/// back by the reading thread.
#[derive(Default)]
pub(crate) struct Answers(Vec<u8>);

impl vt100::Callbacks for Answers {
    fn unhandled_csi(
        &mut self,
        screen: &mut vt100::Screen,
        i1: Option<u8>,
        _: Option<u8>,
        params: &[&[u16]],
        c: char,
    ) {
        match (i1, c, params) {
            (None, 'n', [[6]]) => {
                let (row, col) = screen.cursor_position();
                self.0
                    .extend(format!("\x1b[{};{}R", row + 1, col + 1).into_bytes());
            }
            (None, 'c', [] | [[0]]) => self.0.extend(b"\x1b[?62;22c"),
            _ => {}
        }
    }

    fn unhandled_osc(&mut self, _: &mut vt100::Screen, params: &[&[u8]]) {
        match params {
            [b"10", b"?"] => self.0.extend(b"\x1b]10;rgb:d0d0/d0d0/d0d0\x1b\\"),
            [b"11", b"?"] => self.0.extend(b"\x1b]11;rgb:1c1c/1c1c/1c1c\x1b\\"),
            _ => {}
        }
    }
}

/// A temp dir holding an `egirl.toml` for the fake model `fake`: the
/// workspace at `ws/`, logs at `logs/`, every other key at its default.
pub(crate) fn fake_model_dir(fake: &FakeLlama) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    let config = format!(
        "[workspace]\npath = \"ws\"\n[log]\ndir = \"{}\"\n[local]\nendpoint = \"{}\"\nmodel = \"fake\"\n",
        dir.path().join("logs").display(),
        fake.url()
    );
    std::fs::write(dir.path().join("egirl.toml"), config).expect("config");
    dir
}

impl Pty {
    pub(crate) fn spawn(dir: &Path) -> Pty {
        Pty::launch(Launch {
            bin: env!("CARGO_BIN_EXE_egirl").into(),
            args: vec![
                "--config".into(),
                dir.join("egirl.toml").display().to_string(),
            ],
            home: dir,
            watch: Vec::new(),
        })
    }

    pub(crate) fn launch(launch: Launch<'_>) -> Pty {
        let (master, slave) = openpty();
        let stdio = || Stdio::from(slave.try_clone().expect("dup pty"));
        let mut cmd = Command::new(&launch.bin);
        cmd.args(&launch.args)
            .env("HOME", launch.home)
            .env("TERM", "xterm-256color")
            .env_remove("EGIRL_CONFIG")
            .stdin(stdio())
            .stdout(stdio())
            .stderr(stdio());
        // SAFETY: only async-signal-safe calls between fork and exec: a new
        // session whose controlling terminal is the pty (as a shell does).
        unsafe {
            cmd.pre_exec(|| {
                if libc::setsid() == -1 || libc::ioctl(0, libc::TIOCSCTTY, 0) == -1 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let seen = Arc::new(Mutex::new(
            launch
                .watch
                .into_iter()
                .map(|w| (w, None))
                .collect::<Vec<_>>(),
        ));
        let spawned_at = Instant::now();
        let child = cmd.spawn().expect("spawn");
        drop(cmd);
        let screen = Arc::new(Mutex::new(vt100::Parser::new_with_callbacks(
            ROWS,
            COLS,
            0,
            Answers::default(),
        )));
        let last_output = Arc::new(Mutex::new(spawned_at));
        let mut output = std::fs::File::from(master.try_clone().expect("dup master"));
        let mut replies = std::fs::File::from(master.try_clone().expect("dup master"));
        let raw = Arc::new(Mutex::new(Vec::new()));
        let (sink, watched, last) = (screen.clone(), seen.clone(), last_output.clone());
        let bytes = raw.clone();
        std::thread::spawn(move || {
            let mut buf = [0u8; 8192];
            // Ends with EIO once every copy of the slave side is closed.
            while let Ok(n) = output.read(&mut buf) {
                if n == 0 {
                    break;
                }
                let now = Instant::now();
                *lock(&last) = now;
                lock(&bytes).extend_from_slice(&buf[..n]);
                let mut parser = lock(&sink);
                parser.process(&buf[..n]);
                let reply = std::mem::take(&mut parser.callbacks_mut().0);
                if !reply.is_empty() {
                    let _ = replies.write_all(&reply);
                }
                let mut watched = lock(&watched);
                if watched.iter().any(|(_, at)| at.is_none()) {
                    let contents = parser.screen().contents();
                    for (what, at) in watched.iter_mut() {
                        if at.is_none() && contents.contains(what.as_str()) {
                            *at = Some(now);
                        }
                    }
                }
            }
        });
        Pty {
            child,
            input: std::fs::File::from(master),
            screen,
            slave,
            spawned_at,
            seen,
            last_output,
            raw,
        }
    }

    /// Every byte written to the terminal so far.
    pub(crate) fn raw(&self) -> Vec<u8> {
        lock(&self.raw).clone()
    }

    pub(crate) fn contents(&self) -> String {
        lock(&self.screen).screen().contents()
    }

    /// When a watched text first appeared, if it has.
    pub(crate) fn seen_at(&self, what: &str) -> Option<Instant> {
        lock(&self.seen)
            .iter()
            .find(|(w, _)| w == what)
            .and_then(|(_, at)| *at)
    }

    pub(crate) fn last_output(&self) -> Instant {
        *lock(&self.last_output)
    }

    pub(crate) fn send(&mut self, bytes: &str) {
        self.input
            .write_all(bytes.as_bytes())
            .expect("write to pty");
        self.input.flush().expect("flush pty");
    }

    pub(crate) async fn wait_for(&self, what: &str) {
        let deadline = tokio::time::Instant::now() + WAIT;
        while tokio::time::Instant::now() < deadline {
            if self.contents().contains(what) {
                return;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        panic!("`{what}` never appeared; the screen:\n{}", self.contents());
    }

    pub(crate) async fn exit_code(&mut self) -> Option<i32> {
        let deadline = tokio::time::Instant::now() + WAIT;
        while tokio::time::Instant::now() < deadline {
            if let Some(status) = self.child.try_wait().expect("wait") {
                return status.code();
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let _ = self.child.kill();
        panic!("the program did not exit; the screen:\n{}", self.contents());
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_binary_streams_approves_and_quits_with_the_terminal_restored() {
    let fake = FakeLlama::start().await;
    fake.push_replies([
        Reply::chunks(&["Hello ", "from ", "**the fake** ", "model."]),
        Reply::tool_calls(&[("exec", r#"{"command": "echo pty-ok"}"#)]),
        Reply::text("ran it"),
    ]);
    let dir = fake_model_dir(&fake);

    let mut pty = Pty::spawn(dir.path());
    pty.wait_for("Type a message").await;
    pty.send("hi\r");
    pty.wait_for("Hello from the fake model.").await;

    pty.send("run it\r");
    pty.wait_for("Approve exec?").await;
    assert!(
        pty.contents().contains("$ echo pty-ok"),
        "{}",
        pty.contents()
    );
    // The keys decide once the modal has armed (guard.rs has the rest).
    pty.wait_for(ARMED).await;
    pty.send("y");
    pty.wait_for("ran it").await;
    pty.wait_for("✓ ok").await;
    assert!(pty.contents().contains("pty-ok"));

    pty.send("\x03\x03");
    assert_eq!(pty.exit_code().await, Some(0));
    // What the TUI switched on is off again: alternate screen, mouse,
    // bracketed paste, hidden cursor, and raw mode.
    let (alternate, mouse, paste, hidden) = {
        let parser = pty.screen.lock().unwrap_or_else(|e| e.into_inner());
        let s = parser.screen();
        (
            s.alternate_screen(),
            s.mouse_protocol_mode(),
            s.bracketed_paste(),
            s.hide_cursor(),
        )
    };
    assert!(!alternate, "still on the alternate screen");
    assert_eq!(mouse, vt100::MouseProtocolMode::None);
    assert!(!paste && !hidden);
    // SAFETY: a zeroed termios is a valid out-parameter for tcgetattr.
    let mut termios: libc::termios = unsafe { std::mem::zeroed() };
    // SAFETY: the slave fd is open and owned by `pty`.
    let rc = unsafe { libc::tcgetattr(pty.slave.as_raw_fd(), &mut termios) };
    assert_eq!(rc, 0);
    assert_ne!(termios.c_lflag & libc::ICANON, 0, "raw mode left on");
    assert_ne!(termios.c_lflag & libc::ECHO, 0, "echo left off");
}

/// Another process holds the workspace's services lock: the TUI works as a
/// chat and says where Discord, heartbeat, cron and the webhook run.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_egirl_on_the_workspace_leaves_the_services_to_the_first() {
    let fake = FakeLlama::start().await;
    fake.push_reply(Reply::text("still chatting"));
    let dir = fake_model_dir(&fake);
    let mut held =
        egirl::fsutil::lockfile::FileLock::try_acquire(&dir.path().join("ws/.egirl/services.lock"))
            .expect("lock file")
            .expect("free");
    held.write_note("pid 4242").expect("note");

    let mut pty = Pty::spawn(dir.path());
    pty.wait_for("pid 4242").await;
    assert!(
        pty.contents().contains("another egirl process"),
        "{}",
        pty.contents()
    );
    pty.send("hello\r");
    pty.wait_for("still chatting").await;
    pty.send("\x03\x03");
    assert_eq!(pty.exit_code().await, Some(0));
}
