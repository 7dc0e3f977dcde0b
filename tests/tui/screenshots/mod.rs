//! README screenshots from a real run: the `egirl` binary in a pseudo-terminal
//! against the fake llama-server, its screen parsed by `vt100` and written
//! as SVG (`screenshots/svg.rs`). Ignored in normal runs;
//! `scripts/screenshots.sh` runs it and turns the SVGs into PNGs:
//!
//! ```sh
//! EGIRL_SCREENSHOTS=DIR cargo test --test all tui::screenshots -- --ignored
//! ```
//!
//! Scenes: `main` (a conversation with markdown, a table, a highlighted code
//! block and tool calls, side panes filled by those turns), `approval` (an
//! `exec` waiting for the user over that conversation) and `light` (the
//! first scene in the light theme).

mod svg;

use std::io::{Read, Write};
use std::num::NonZeroU16;
use std::os::fd::{FromRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::support::fake_llama::{FakeLlama, Reply};

const COLS: NonZeroU16 = NonZeroU16::new(160).expect("nonzero");
const ROWS: NonZeroU16 = NonZeroU16::new(49).expect("nonzero");
const WAIT: Duration = Duration::from_secs(60);
/// The screen counts as drawn once it has not changed for this long.
const SETTLE: Duration = Duration::from_millis(600);
/// Fixed, so the images do not change with every run.
const SESSION: &str = "tui-20250614-093012-5e1f0a";

/// The binary in a pseudo-terminal of `COLS` x `ROWS`.
struct Term {
    child: Child,
    input: std::fs::File,
    screen: Arc<Mutex<vt100::Parser>>,
}

impl Drop for Term {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Term {
    fn spawn(home: &Path) -> Term {
        let (mut master, mut slave) = (-1, -1);
        let size = libc::winsize {
            ws_row: ROWS.get(),
            ws_col: COLS.get(),
            ws_xpixel: 0,
            ws_ypixel: 0,
        };
        // SAFETY: plain out-parameters and a valid winsize.
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
        // SAFETY: both fds were just opened and are owned by nothing else.
        let (master, slave) =
            unsafe { (OwnedFd::from_raw_fd(master), OwnedFd::from_raw_fd(slave)) };
        let stdio = || Stdio::from(slave.try_clone().expect("dup pty"));
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_egirl"));
        cmd.arg("--config")
            .arg(home.join("egirl.toml"))
            .arg("--session")
            .arg(SESSION)
            .current_dir(home)
            .env("HOME", home)
            .env("TERM", "xterm-256color")
            .env("COLORTERM", "truecolor")
            .env_remove("EGIRL_CONFIG")
            .stdin(stdio())
            .stdout(stdio())
            .stderr(stdio());
        // SAFETY: only async-signal-safe calls between fork and exec: a new
        // session whose controlling terminal is the pty.
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
        drop(slave);
        let screen = Arc::new(Mutex::new(vt100::Parser::new(ROWS, COLS, 0)));
        let mut output = std::fs::File::from(master.try_clone().expect("dup master"));
        let sink = screen.clone();
        std::thread::spawn(move || {
            let mut buf = [0u8; 16384];
            while let Ok(n) = output.read(&mut buf) {
                if n == 0 {
                    break;
                }
                sink.lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .process(&buf[..n]);
            }
        });
        Term {
            child,
            input: std::fs::File::from(master),
            screen,
        }
    }

    fn parser(&self) -> std::sync::MutexGuard<'_, vt100::Parser> {
        self.screen.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn contents(&self) -> String {
        self.parser().screen().contents()
    }

    fn send(&mut self, bytes: &str) {
        self.input
            .write_all(bytes.as_bytes())
            .expect("write to pty");
        self.input.flush().expect("flush pty");
    }

    /// Types like a person: one key at a time.
    async fn type_text(&mut self, text: &str) {
        for c in text.chars() {
            self.send(&c.to_string());
            tokio::time::sleep(Duration::from_millis(15)).await;
        }
    }

    /// Waits for `what` on the screen, then for the screen to settle.
    async fn wait_for(&self, what: &str) {
        let deadline = tokio::time::Instant::now() + WAIT;
        while !self.contents().contains(what) {
            assert!(
                tokio::time::Instant::now() < deadline,
                "`{what}` never appeared; the screen:\n{}",
                self.contents()
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        self.settle().await;
    }

    /// Waits for the turn to end (the status line's "working…" gone).
    async fn wait_idle(&self) {
        let deadline = tokio::time::Instant::now() + WAIT;
        while self.contents().contains("working…") {
            assert!(
                tokio::time::Instant::now() < deadline,
                "the turn never ended; the screen:\n{}",
                self.contents()
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        self.settle().await;
    }

    async fn settle(&self) {
        let mut last = self.parser().screen().contents_formatted();
        let mut stable_since = tokio::time::Instant::now();
        loop {
            tokio::time::sleep(Duration::from_millis(50)).await;
            let now = self.parser().screen().contents_formatted();
            if now != last {
                last = now;
                stable_since = tokio::time::Instant::now();
            } else if stable_since.elapsed() >= SETTLE {
                return;
            }
        }
    }

    fn save(&self, dir: &Path, name: &str, palette: &svg::Palette) {
        let svg = svg::render(self.parser().screen(), palette);
        let path = dir.join(format!("{name}.svg"));
        std::fs::write(&path, svg).expect("write svg");
        eprintln!("wrote {}", path.display());
    }
}

/// The crate's demo.
const MAIN_RS: &str = r#"use ringbuf::RingBuf;

fn main() {
    let mut r = RingBuf::<_, 3>::new();
    for i in 1..=5 {
        r.push(i);
    }
    while let Some(i) = r.pop() {
        print!("{i} ");
    }
}
"#;

/// A small crate in the workspace for the file tools to find.
const LIB_RS: &str = r#"//! A fixed-size ring buffer: no allocation, no unsafe.
#![no_std]

pub struct RingBuf<T, const N: usize> {
    buf: [Option<T>; N],
    head: usize,
    tail: usize,
    len: usize,
}

impl<T, const N: usize> RingBuf<T, N> {
    pub const fn new() -> Self {
        Self { buf: [const { None }; N], head: 0, tail: 0, len: 0 }
    }

    pub fn push(&mut self, item: T) {
        self.buf[self.head] = Some(item);
        self.head = (self.head + 1) % N;
        if self.len < N {
            self.len += 1;
        } else {
            self.tail = (self.tail + 1) % N;
        }
    }

    pub fn pop(&mut self) -> Option<T> {
        let item = self.buf[self.tail].take()?;
        self.tail = (self.tail + 1) % N;
        self.len -= 1;
        Some(item)
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_full(&self) -> bool {
        self.len == N
    }
}
"#;

const ANSWER_OVERVIEW: &str = "## ringbuf: a fixed-size ring buffer

A small `no_std` crate with one type, `RingBuf<T, N>`, backed by an array:

- `push` overwrites the **oldest** item when the buffer is full
- `pop` returns `Option<T>`; `len` and `is_full` are *O(1)*
- no allocation and no `unsafe`

| file | lines | what |
| --- | ---: | --- |
| `src/lib.rs` | 40 | the type and its methods |
| `src/main.rs` | 11 | a small demo |
| `Cargo.toml` | 6 | no dependencies |
";

const ANSWER_PUSH: &str =
    "`push` writes at `head` and advances it modulo `N`; when full, `tail` moves too:

```rust
pub fn push(&mut self, item: T) {
    self.buf[self.head] = Some(item);
    self.head = (self.head + 1) % N;
    if self.len < N {
        self.len += 1;
    } else {
        self.tail = (self.tail + 1) % N; // overwrote the oldest
    }
}
```

> The demo in `src/main.rs` pushes 5 items into a `RingBuf<_, 3>` and pops `3 4 5`.
";

/// A fresh home with the config (`theme`) and the workspace.
fn setup(root: &Path, fake: &FakeLlama, theme: &str) {
    let _ = std::fs::remove_dir_all(root);
    let project = root.join("workspace/projects/ringbuf");
    std::fs::create_dir_all(project.join("src")).expect("workspace");
    std::fs::write(project.join("src/lib.rs"), LIB_RS).expect("lib.rs");
    std::fs::write(project.join("src/main.rs"), MAIN_RS).expect("main.rs");
    std::fs::write(
        project.join("Cargo.toml"),
        "[package]\nname = \"ringbuf\"\nversion = \"0.1.0\"\nedition = \"2024\"\n\n[dependencies]\n",
    )
    .expect("Cargo.toml");
    let config = format!(
        "[workspace]\npath = \"workspace\"\n[log]\ndir = \"{}\"\n[local]\nendpoint = \"{}\"\nmodel = \"qwen3-8b-q4_k_m\"\ncontext_length = 16384\n[ui]\ntheme = \"{theme}\"\n",
        root.join("logs").display(),
        fake.url()
    );
    std::fs::write(root.join("egirl.toml"), config).expect("config");
}

/// The two turns every scene shows.
fn conversation_replies() -> Vec<Reply> {
    vec![
        Reply::tool_calls(&[
            ("glob", r#"{"pattern": "projects/ringbuf/**/*"}"#),
            ("read_file", r#"{"path": "projects/ringbuf/src/lib.rs"}"#),
        ])
        .with_text("Let me look at the crate first.")
        .frame_delay(Duration::from_millis(5)),
        Reply::text(ANSWER_OVERVIEW).frame_delay(Duration::from_millis(5)),
        Reply::text(ANSWER_PUSH).frame_delay(Duration::from_millis(5)),
    ]
}

async fn converse(term: &mut Term) {
    term.wait_for("Type a message").await;
    term.type_text("what's in projects/ringbuf?").await;
    term.send("\r");
    term.wait_for("no dependencies").await;
    term.wait_idle().await;
    term.type_text("how does push work?").await;
    term.send("\r");
    term.wait_for("pops 3 4 5").await;
    term.wait_idle().await;
    // The next message, half typed.
    term.type_text("run the tests").await;
    term.settle().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "writes README screenshots; run by scripts/screenshots.sh"]
async fn readme_screenshots() {
    let Some(out) = std::env::var_os("EGIRL_SCREENSHOTS").map(PathBuf::from) else {
        eprintln!("set EGIRL_SCREENSHOTS=DIR to write the screenshots");
        return;
    };
    std::fs::create_dir_all(&out).expect("output dir");
    let root = std::env::temp_dir().join("egirl-demo");

    // Dark: the conversation, then an exec waiting for approval over it.
    let fake = FakeLlama::start().await;
    fake.push_replies(conversation_replies());
    fake.push_replies([
        Reply::tool_calls(&[(
            "exec",
            r#"{"command": "cargo test --workspace 2>&1 | tail -20"}"#,
        )])
        .with_text("Running the whole test suite:"),
        Reply::text("Understood, I did not run it."),
    ]);
    setup(&root, &fake, "default");
    let mut term = Term::spawn(&root);
    converse(&mut term).await;
    term.save(&out, "main", &svg::DARK);
    term.send("\r");
    term.wait_for("Approve exec?").await;
    // Armed: its keys lit (they decide nothing while greyed).
    term.wait_for(super::pty::ARMED).await;
    term.save(&out, "approval", &svg::DARK);
    term.send("n");
    term.wait_for("I did not run it").await;
    drop(term);

    // Light: the same conversation.
    let fake = FakeLlama::start().await;
    fake.push_replies(conversation_replies());
    setup(&root, &fake, "light");
    let mut term = Term::spawn(&root);
    converse(&mut term).await;
    term.save(&out, "light", &svg::LIGHT);
    drop(term);
    let _ = std::fs::remove_dir_all(&root);
}
