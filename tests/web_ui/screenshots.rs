//! README screenshots of the web UI, taken by the browser itself over a
//! real run: `egirl serve` with the fake model and the fake Discord, a
//! page signed in, a conversation with a highlighted code block, a file
//! edit's diff and an exec waiting for approval; the desktop (1280x800)
//! and the phone (390x844 at 2x). Ignored in normal runs;
//! `scripts/screenshots.sh` runs it:
//!
//! ```sh
//! EGIRL_SCREENSHOTS=DIR cargo test --test all web_ui::screenshots -- --ignored
//! ```

use std::path::PathBuf;
use std::time::Duration;

use super::rig::{Rig, open_session, say, wait_answer};
use crate::support::cdp::Browser;
use crate::support::fake_llama::Reply;

const LIB_RS: &str = "/// A fixed-size ring buffer: pushing onto a full one drops the oldest item.
pub struct RingBuf<T, const N: usize> {
    items: [Option<T>; N],
    head: usize,
    len: usize,
}

impl<T, const N: usize> RingBuf<T, N> {
    pub fn push(&mut self, item: T) {
        let tail = (self.head + self.len) % N;
        self.items[tail] = Some(item);
        if self.len == N {
            self.head = (self.head + 1) % N;
        } else {
            self.len += 1;
        }
    }
}
";

const ANSWER_PUSH: &str = "`push` writes at the **tail**, `(head + len) % N`. When the buffer \
is full it moves `head` forward, so the oldest item is overwritten:

```rust
pub fn push(&mut self, item: T) {
    let tail = (self.head + self.len) % N;
    self.items[tail] = Some(item);
    if self.len == N {
        self.head = (self.head + 1) % N; // drop the oldest
    } else {
        self.len += 1;
    }
}
```

Nothing tells the caller that an item was dropped.";

const ANSWER_EDIT: &str = "Done: `push` now returns the evicted item as `Option<T>`, \
`None` while there was room.";

/// The conversation every screenshot shows, ending with `cargo test`
/// waiting for approval.
async fn converse(rig: &Rig, page: &crate::support::cdp::Page<'_>) {
    let slow = |r: Reply| r.frame_delay(Duration::from_millis(5));
    rig.llama.push_replies([
        slow(
            Reply::tool_calls(&[("read_file", r#"{"path": "projects/ringbuf/src/lib.rs"}"#)])
                .with_text("Let me read it first."),
        ),
        slow(Reply::text(ANSWER_PUSH)),
    ]);
    say(page, "what does push do in projects/ringbuf?").await;
    wait_answer(page, "Nothing tells the caller").await;

    let edit = serde_json::json!({
        "path": "projects/ringbuf/src/lib.rs",
        "old_text": "    pub fn push(&mut self, item: T) {\n        let tail = (self.head + self.len) % N;\n        self.items[tail] = Some(item);",
        "new_text": "    pub fn push(&mut self, item: T) -> Option<T> {\n        let tail = (self.head + self.len) % N;\n        let evicted = self.items[tail].replace(item);",
    })
    .to_string();
    rig.llama.push_replies([
        slow(Reply::tool_calls(&[("edit_file", &edit)]).with_text("Changing the signature:")),
        slow(Reply::text(ANSWER_EDIT)),
    ]);
    say(page, "make it return the evicted item").await;
    wait_answer(page, "while there was room").await;

    rig.llama.push_reply(
        Reply::tool_calls(&[(
            "exec",
            r#"{"command": "cargo test -q --manifest-path projects/ringbuf/Cargo.toml"}"#,
        )])
        .with_text("Running the tests:"),
    );
    say(page, "run the tests").await;
    page.wait_for_selector("#approvals .approval:not(.decided)")
        .await;
}

/// Opens the tool calls that carry a diff, scrolls the conversation to
/// its end and lets the layout settle.
async fn show_diffs(page: &crate::support::cdp::Page<'_>) {
    page.wait_for_selector("#conversation details.tool .diff")
        .await;
    page.eval(
        "(() => { document.querySelectorAll('#conversation details.tool').forEach(d => { if (d.querySelector('.diff')) d.open = true; }); \
         const c = document.querySelector('#conversation'); c.scrollTop = c.scrollHeight; })()",
    )
    .await;
    tokio::time::sleep(Duration::from_millis(500)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "writes README screenshots; run by scripts/screenshots.sh"]
async fn readme_screenshots() {
    let Some(out) = std::env::var_os("EGIRL_SCREENSHOTS").map(PathBuf::from) else {
        eprintln!("set EGIRL_SCREENSHOTS=DIR to write the screenshots");
        return;
    };
    std::fs::create_dir_all(&out).expect("output dir");
    let rig = Rig::with_discord().await;
    let project = rig.workspace().join("projects/ringbuf/src");
    std::fs::create_dir_all(&project).expect("project dir");
    std::fs::write(project.join("lib.rs"), LIB_RS).expect("lib.rs");
    // Another session in the list: the owner's Discord DM.
    rig.llama
        .push_reply(Reply::text("Noted: I'll remind you at 18:00."));
    rig.dm("remind me to water the plants at 6");
    rig.discord.as_ref().expect("Discord").wait_sent(1).await;

    let browser = Browser::shared().await;
    let page = browser.page().await;
    page.viewport(1280, 800, 1.0, false).await;
    rig.sign_in(&page, "laptop").await;
    converse(&rig, &page).await;
    let session = open_session(&page).await;
    show_diffs(&page).await;
    page.screenshot(&out.join("web-desktop.png")).await;

    // The same page narrowed, the session still open (a reload, or
    // opening it again, would lose the diff: the transcript's tool results
    // carry none).
    page.viewport(390, 844, 2.0, true).await;
    assert_eq!(open_session(&page).await, session);
    page.click("nav#tabs button[data-pane=\"conversation\"]")
        .await;
    show_diffs(&page).await;
    page.screenshot(&out.join("web-phone.png")).await;
    page.click("#approvals .approval:not(.decided) button[data-decision=\"denied\"]")
        .await;
    wait_answer(&page, "ok").await;
    drop(page);
    rig.stop().await;
}
