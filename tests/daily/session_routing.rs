//! A turn stays on the role that holds the session's cache (see tests/daily/mod.rs).
//!
//! With `[routing] fast_for_quick`, a quick-looking message goes to
//! `[local.fast]` in a fresh session; in a session of long technical turns
//! on the main model, the follow-ups stay there (its warm cache and the
//! depth the session had), while a greeting may still go fast.

use crate::support::cli::{Cli, events, of_type, stderr};
use crate::support::fake_llama::Reply;

use super::model::{asked, fast_section, launch, local_pair, was_asked};

const OPENING: &str = "Explain how an LSM-tree storage engine handles compaction, write amplification \
and read amplification, and when I should prefer it over a B-tree for a write-heavy time-series workload.";
/// Reads as a quick fact to the router ("how does …"): alone, it goes fast.
const FOLLOW_UP: &str = "How does the LSM tree recover its memtable after a crash, and what does the \
write-ahead log guarantee during the outage?";
/// The follow-up the issue saw go to the fast model.
const ISSUE_FOLLOW_UP: &str = "Explain in detail, with trade-offs and a worked example, how X behaves \
after the outage compared to a B-tree index";
const GREETING: &str = "hi!";
/// A quick fact to the router, after the greeting.
const AFTER_GREETING: &str = "What is a memtable?";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn follow_ups_stay_on_the_main_model_and_a_greeting_may_go_fast() {
    let (main, fast) = local_pair().await;
    main.push_replies([
        Reply::text("Compaction merges sorted runs."),
        Reply::text("The WAL is replayed into a new memtable."),
        Reply::text("After the outage the LSM tree replays its log."),
        Reply::text("A memtable is the in-memory write buffer."),
    ]);
    fast.push_reply(Reply::text("Hello again!"));
    let dir = tempfile::tempdir().expect("temp dir");
    let config = format!(
        "[workspace]\npath = \"ws\"\n[log]\ndir = \"{}\"\n[local]\nendpoint = \"{}\"\nmodel = \"main-model\"\n{}",
        dir.path().join("logs").display(),
        main.url(),
        fast_section(&fast, "[routing]\nfast_for_quick = true\n"),
    );
    std::fs::write(dir.path().join("egirl.toml"), config).expect("config");

    let mut pty = launch(dir.path(), "deep-session");
    pty.wait_for("Type a message").await;
    for (message, answer) in [
        (OPENING, "Compaction merges sorted runs."),
        (FOLLOW_UP, "The WAL is replayed into a new memtable."),
        (
            ISSUE_FOLLOW_UP,
            "After the outage the LSM tree replays its log.",
        ),
        (GREETING, "Hello again!"),
        // After the greeting went fast, the session is still the main model's.
        (AFTER_GREETING, "A memtable is the in-memory write buffer."),
    ] {
        pty.send(&format!("{message}\r"));
        pty.wait_for(answer).await;
    }
    pty.send("\x03\x03");
    assert_eq!(pty.exit_code().await, Some(0));

    for message in [OPENING, FOLLOW_UP, ISSUE_FOLLOW_UP, AFTER_GREETING] {
        assert!(was_asked(&main, message), "main: {:?}", asked(&main));
        assert!(!was_asked(&fast, message), "fast: {:?}", asked(&fast));
    }
    assert!(was_asked(&fast, GREETING), "fast: {:?}", asked(&fast));
    assert!(!was_asked(&main, GREETING), "main: {:?}", asked(&main));
}

/// The control: the same follow-up as a fresh session's first message is
/// quick to the router, and goes to the fast model.
#[tokio::test]
async fn the_follow_up_alone_goes_fast() {
    let (main, fast) = local_pair().await;
    fast.push_reply(Reply::text("fast reply"));
    let cli = Cli::new(
        &main,
        &fast_section(&fast, "[routing]\nfast_for_quick = true\n"),
    );
    let out = cli.run(&["--json", "-m", FOLLOW_UP]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let events = events(&out);
    let routing = of_type(&events, "routing");
    assert_eq!(routing[0]["role"], "local-fast", "{routing:?}");
    assert!(was_asked(&fast, FOLLOW_UP) && main.requests().is_empty());
}

/// A resumed session's cache is the main model's: its quick-looking
/// follow-up stays there, and the routing event says why.
#[tokio::test]
async fn a_resumed_session_keeps_its_follow_up_on_the_main_model() {
    let (main, fast) = local_pair().await;
    main.push_replies([Reply::text("runs merge"), Reply::text("the WAL replays")]);
    let cli = Cli::new(
        &main,
        &fast_section(&fast, "[routing]\nfast_for_quick = true\n"),
    );
    let out = cli.run(&["--session", "deep", "-m", OPENING]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let out = cli
        .run(&["--session", "deep", "--json", "-m", FOLLOW_UP])
        .await;
    assert!(out.status.success(), "{}", stderr(&out));
    let events = events(&out);
    let routing = of_type(&events, "routing");
    assert_eq!(routing[0]["role"], "local", "{routing:?}");
    let reason = routing[0]["reason"].as_str().unwrap_or_default();
    assert!(reason.contains("the session's cache is there"), "{reason}");
    assert!(was_asked(&main, FOLLOW_UP) && fast.requests().is_empty());
}
