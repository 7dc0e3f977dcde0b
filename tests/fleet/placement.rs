//! Placement across processes: separate `egirl -m` runs over two replicas
//! agree where a session lives (its rendezvous home), without shared state.

use std::process::Output;

use serde_json::Value;

use super::{home_of, session_on};
use crate::support::cli::{Cli, events, stderr};
use crate::support::fake_llama::FakeLlama;

/// A workspace whose `[local]` is the two fakes.
fn two_replicas(a: &FakeLlama, b: &FakeLlama) -> Cli {
    Cli::new(
        a,
        &format!("endpoints = [\"{}\", \"{}\"]\n", a.url(), b.url()),
    )
}

/// The session and the endpoint that served a `--json` run's one reply.
fn served(out: &Output) -> (String, String) {
    assert!(out.status.success(), "{}", stderr(out));
    let ev = events(out);
    let field = |kind: &str, key: &str| -> String {
        let found: Vec<&Value> = ev.iter().filter(|e| e["type"] == kind).collect();
        assert_eq!(found.len(), 1, "{kind}: {ev:?}");
        found[0][key].as_str().unwrap_or_default().to_string()
    };
    (field("turn_started", "session"), field("usage", "endpoint"))
}

/// New sessions of separate processes land on their homes, not all on the
/// first replica: six runs (more only in the rare case that six random ids
/// all live on one replica) use both.
#[tokio::test]
async fn separate_processes_spread_new_sessions_over_the_replicas() {
    let (a, b) = (FakeLlama::start().await, FakeLlama::start().await);
    let urls = [a.url(), b.url()];
    let cli = two_replicas(&a, &b);
    let mut used = [0usize; 2];
    let mut runs = 0;
    while runs < 6 || used.contains(&0) {
        assert!(runs < 24, "{runs} new sessions never used both: {used:?}");
        let text = format!("hello number {runs}");
        let (session, endpoint) = served(&cli.run(&["-m", &text, "--json"]).await);
        let home = home_of(&session, &urls);
        assert_eq!(endpoint, urls[home], "{session} is not on its home");
        used[home] += 1;
        runs += 1;
    }
    assert_eq!(a.requests().len(), used[0]);
    assert_eq!(b.requests().len(), used[1]);
}

/// One `--session` in two processes (a restart, a script beside the
/// TUI): both turns go to the same replica, whichever it is.
#[tokio::test]
async fn one_session_goes_to_one_replica_in_every_process() {
    let (a, b) = (FakeLlama::start().await, FakeLlama::start().await);
    let urls = [a.url(), b.url()];
    let cli = two_replicas(&a, &b);
    for index in [1, 0] {
        let id = session_on(&urls, index, 0);
        for text in ["first run", "second run"] {
            let (session, endpoint) =
                served(&cli.run(&["-m", text, "--session", &id, "--json"]).await);
            assert_eq!(session, id);
            assert_eq!(endpoint, urls[index], "{id}: {text}");
        }
    }
    assert_eq!(a.requests().len(), 2);
    assert_eq!(b.requests().len(), 2);
}
