//! Cache reuse on replicas: 4 sessions alternate turns on 2 real
//! llama-server replicas (SmolLM2-135M-Instruct, `--ctx-size 8192
//! --parallel 2` each) behind one `[local]`, through the agent core; once
//! with `balance = "affinity"` (a session keeps its endpoint and slot) and
//! once with `"round-robin"` (each request to the next endpoint), on fresh
//! servers each time. Prints, per mode, the share of prompt tokens served
//! from the cache (`cached_tokens / input_tokens`) over all turns and over
//! the second and later rounds, and the prompt tokens the server evaluated
//! per turn from the second round on. Each round starts one session later
//! (see `fleet_run::alternate`); round-robin sends no `id_slot` (a balancer
//! cannot know slots), so the server picks its most similar slot.
//!
//! `cargo bench --bench fleet_cache [-- ROUNDS]` (default 5 rounds); prints
//! "skipped: ..." and exits 0 when the server or model is missing or when
//! not run by `cargo bench`.

#[path = "../tests/e2e/fleet_run.rs"]
mod fleet_run;
#[allow(dead_code)]
#[path = "../tests/e2e/server.rs"]
mod server;

use egirl::config::Balance;

use fleet_run::{TurnUsage, alternate};
use server::{RealServer, free_port};

const SESSIONS: usize = 4;

fn share(turns: &[&TurnUsage]) -> (u64, u64, f64) {
    let input: u64 = turns.iter().map(|t| t.input_tokens).sum();
    let cached: u64 = turns.iter().map(|t| t.cached_tokens).sum();
    (cached, input, cached as f64 * 100.0 / input.max(1) as f64)
}

/// Turns sent to another endpoint than the session's previous turn.
fn moves(turns: &[TurnUsage]) -> usize {
    turns
        .iter()
        .enumerate()
        .filter(|(i, t)| {
            turns[..*i]
                .iter()
                .rfind(|p| p.session == t.session)
                .is_some_and(|p| p.endpoint != t.endpoint)
        })
        .count()
}

fn main() {
    if !std::env::args().any(|a| a == "--bench") {
        println!("skipped: fleet_cache runs under `cargo bench` only");
        return;
    }
    let cache = server::cache_dir();
    let binary = std::env::var_os("LLAMA_SERVER")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| cache.join("llama/bin/llama-server"));
    let model = std::env::var_os("LLAMA_MODEL")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| cache.join("models/SmolLM2-135M-Instruct.Q4_1.gguf"));
    for (what, path) in [("llama-server", &binary), ("model", &model)] {
        if !path.is_file() {
            println!(
                "skipped: no {what} at {} (run `make install`)",
                path.display()
            );
            return;
        }
    }
    let rounds: usize = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(5);
    let dir = tempfile::tempdir().expect("temp dir");
    println!("{SESSIONS} sessions x {rounds} rounds on 2 replicas");
    println!(
        "| balance | turns | session moved | cached/prompt, all turns | cached/prompt, rounds 2+ | evaluated per turn, rounds 2+ |"
    );
    println!("| --- | --- | --- | --- | --- | --- |");
    for balance in [Balance::Affinity, Balance::RoundRobin] {
        let extra = ["--parallel", "2"];
        let a = RealServer::start_with(free_port(), dir.path(), &extra);
        let b = RealServer::start_with(free_port(), dir.path(), &extra);
        let turns = alternate(&[a.url(), b.url()], balance, SESSIONS, rounds, dir.path());
        let all: Vec<&TurnUsage> = turns.iter().collect();
        let later: Vec<&TurnUsage> = turns.iter().filter(|t| t.round > 0).collect();
        let (c1, i1, p1) = share(&all);
        let (c2, i2, p2) = share(&later);
        println!(
            "| {balance:?} | {} | {} | {c1}/{i1} = {p1:.1}% | {c2}/{i2} = {p2:.1}% | {} |",
            all.len(),
            moves(&turns),
            (i2 - c2) / later.len().max(1) as u64
        );
    }
}
