//! Two real llama-server replicas (SmolLM2) behind one `[local]`: three
//! sessions alternate turns; each stays on its endpoint and slot, so every
//! second and later turn reuses that session's whole previous prompt.

use egirl::config::Balance;

use super::fleet_run::alternate;
use super::server::{RealServer, free_port};

#[test]
fn three_sessions_on_two_replicas_keep_their_caches() {
    let dir = tempfile::tempdir().expect("temp dir");
    // Three slots each: however the sessions' homes fall (rendezvous over
    // the two URLs, whose ports change each run), each gets a slot of its own.
    let extra = ["--parallel", "3"];
    let a = RealServer::start_with(free_port(), dir.path(), &extra);
    let b = RealServer::start_with(free_port(), dir.path(), &extra);
    let turns = alternate(&[a.url(), b.url()], Balance::Affinity, 3, 3, dir.path());
    eprintln!("{turns:#?}");
    let home = |s: &str| {
        turns
            .iter()
            .find(|t| t.session == s)
            .map(|t| t.endpoint.clone())
            .unwrap_or_default()
    };
    let urls = [a.url(), b.url()];
    for session in ["fleet-0", "fleet-1", "fleet-2"] {
        let placed = egirl::providers::placement::home(session, &urls, |_| true);
        assert_eq!(Some(home(session)), placed.map(|i| urls[i].clone()));
    }
    for t in &turns {
        assert_eq!(t.endpoint, home(&t.session), "{t:?} moved");
        if t.round == 0 {
            continue;
        }
        assert!(t.cached_tokens > 0, "{t:?}");
        // The session's previous prompt is all in the cache (its own slot).
        let previous = turns
            .iter()
            .rfind(|p| p.session == t.session && p.round + 1 == t.round)
            .expect("the previous turn");
        assert!(
            t.cached_tokens >= previous.input_tokens,
            "{t:?} cached less than {previous:?}'s prompt"
        );
    }
}
