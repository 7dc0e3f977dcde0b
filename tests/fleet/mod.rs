//! Several local models and endpoints (docs/routing.md): replicas of one model
//! with sessions placed by rendezvous hashing, failover and recovery; the fast role; vLLM- and
//! Ollama-shaped servers; `egirl doctor` per endpoint.

mod config;
mod fast;
mod kinds;
mod placement;
mod replicas;
mod tui;

use std::time::Duration;

use egirl::config::{Config, ConfigDuration};
use egirl::protocol::{EventKind, Notice, Routing, TokenUsage};
use serde_json::Value;

use crate::agent::{Harness, start};
use crate::support::fake_llama::FakeLlama;

/// A core whose `[local]` is the given replicas (the first also names the
/// single `endpoint`, which `endpoints` replaces).
pub fn start_replicas(fakes: &[&FakeLlama], tweak: impl FnOnce(&mut Config)) -> Harness {
    start(fakes[0], |c| {
        c.local.endpoints = fakes.iter().map(|f| f.url()).collect();
        c.local.probe_every = ConfigDuration(Duration::from_millis(50));
        tweak(c);
    })
}

/// The endpoint (its index in `urls`) that `session` lives on while all
/// answer: its rendezvous home (src/providers/placement.rs).
pub fn home_of(session: &str, urls: &[String]) -> usize {
    egirl::providers::placement::home(session, urls, |_| true).expect("an endpoint")
}

/// The `nth` of the ids `s0`, `s1`, ... whose home is `urls[index]`: the
/// fake servers' ports change each run, so tests name sessions by where
/// they live.
pub fn session_on(urls: &[String], index: usize, nth: usize) -> String {
    (0..)
        .map(|k| format!("s{k}"))
        .filter(|s| home_of(s, urls) == index)
        .nth(nth)
        .expect("an id")
}

/// Whether a chat request to `fake` carried a user message containing `text`.
pub fn received(fake: &FakeLlama, text: &str) -> bool {
    fake.requests()
        .iter()
        .any(|body| last_user(body).contains(text))
}

/// The last user message of a chat request body.
pub fn last_user(body: &Value) -> String {
    body["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .rfind(|m| m["role"] == "user")
        .and_then(|m| m["content"].as_str())
        .unwrap_or("")
        .to_string()
}

pub fn notices(events: &[EventKind]) -> Vec<String> {
    events
        .iter()
        .filter_map(|e| match e {
            EventKind::Notice(Notice { message }) => Some(message.clone()),
            _ => None,
        })
        .collect()
}

/// The endpoints named by the turn's usage events.
pub fn usage_endpoints(events: &[EventKind]) -> Vec<Option<String>> {
    events
        .iter()
        .filter_map(|e| match e {
            EventKind::Usage(TokenUsage { endpoint, .. }) => Some(endpoint.clone()),
            _ => None,
        })
        .collect()
}

/// (role, model, reason) of each routing event of the turn.
pub fn routings(events: &[EventKind]) -> Vec<(String, String, String)> {
    events
        .iter()
        .filter_map(|e| match e {
            EventKind::Routing(Routing {
                route,
                model,
                reason,
                ..
            }) => Some((route.name().to_string(), model.clone(), reason.clone())),
            _ => None,
        })
        .collect()
}
