//! The real binary in a pseudo-terminal against the fake llama-server:
//! type a message, see the streamed reply, approve an exec with `y`, see
//! its output, quit with Ctrl+C twice, and find the terminal restored.

use std::io::{Read, Write};
use std::num::NonZeroU16;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::support::fake_llama::{FakeLlama, Reply};

const COLS: NonZeroU16 = NonZeroU16::new(120).expect("nonzero");
const ROWS: NonZeroU16 = NonZeroU16::new(36).expect("nonzero");
/// Generous: a debug build on a busy 2-core CI machine.
const WAIT: Duration = Duration::from_secs(30);

struct Pty {
    child: Child,
    input: std::fs::File,
    screen: Arc<Mutex<vt100::Parser>>,
    /// Keeps the terminal's settings readable after the child exits.
    slave: OwnedFd,
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

impl Pty {
    fn spawn(dir: &std::path::Path) -> Pty {
        let (master, slave) = openpty();
        let stdio = || Stdio::from(slave.try_clone().expect("dup pty"));
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_egirl"));
        cmd.arg("--config")
            .arg(dir.join("egirl.toml"))
            .env("HOME", dir)
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
        let child = cmd.spawn().expect("spawn egirl");
        drop(cmd);
        let screen = Arc::new(Mutex::new(vt100::Parser::new(ROWS, COLS, 0)));
        let mut output = std::fs::File::from(master.try_clone().expect("dup master"));
        let sink = screen.clone();
        std::thread::spawn(move || {
            let mut buf = [0u8; 8192];
            // Ends with EIO once every copy of the slave side is closed.
            while let Ok(n) = output.read(&mut buf) {
                if n == 0 {
                    break;
                }
                sink.lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .process(&buf[..n]);
            }
        });
        Pty {
            child,
            input: std::fs::File::from(master),
            screen,
            slave,
        }
    }

    fn contents(&self) -> String {
        self.screen
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .screen()
            .contents()
    }

    fn send(&mut self, bytes: &str) {
        self.input
            .write_all(bytes.as_bytes())
            .expect("write to pty");
        self.input.flush().expect("flush pty");
    }

    async fn wait_for(&self, what: &str) {
        let deadline = tokio::time::Instant::now() + WAIT;
        while tokio::time::Instant::now() < deadline {
            if self.contents().contains(what) {
                return;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        panic!("`{what}` never appeared; the screen:\n{}", self.contents());
    }

    async fn exit_code(&mut self) -> Option<i32> {
        let deadline = tokio::time::Instant::now() + WAIT;
        while tokio::time::Instant::now() < deadline {
            if let Some(status) = self.child.try_wait().expect("wait") {
                return status.code();
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let _ = self.child.kill();
        panic!("egirl did not exit; the screen:\n{}", self.contents());
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
    let dir = tempfile::tempdir().expect("temp dir");
    let config = format!(
        "[workspace]\npath = \"ws\"\n[log]\ndir = \"{}\"\n[local]\nendpoint = \"{}\"\nmodel = \"fake\"\n",
        dir.path().join("logs").display(),
        fake.url()
    );
    std::fs::write(dir.path().join("egirl.toml"), config).expect("config");

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
