//! A simulated day in one session: `EGIRL_DAY_TURNS` short turns
//! (default 300) through the real `egirl -m --session` against the real
//! llama-server `make install` puts in ~/.cache/egirl (SmolLM2-135M), with
//! a 4,096-token window (`--ctx-size 4096`, `[local] context_length =
//! 4096`), answers capped at `EGIRL_DAY_MAX_TOKENS` (default 24), and the
//! compaction defaults (`compact_at = 0.75`, memory flush on,
//! `keep_recent = 2`, local summary).
//!
//! Reports: turns failed (target 0), compactions and fallbacks, and the
//! evaluated prefill over new tokens on the turns that did not compact
//! (target ≤ 1.2): new tokens of a request are its prompt minus the
//! previous request's prompt and reply, what a perfect prefix cache
//! already holds (see tests/e2e/day.rs).
//!
//! `cargo bench --bench compaction_day`; prints "skipped: ..." and exits 0
//! when the server or model is missing, or when not run by `cargo bench`.

#[path = "../tests/e2e/day.rs"]
mod day;
#[allow(dead_code)]
#[path = "../tests/e2e/server.rs"]
mod server;

use std::time::Instant;

use day::{Day, prefill_ratio};
use server::RealServer;

fn env_number(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn main() {
    if !std::env::args().any(|a| a == "--bench") {
        println!("skipped: compaction_day runs under `cargo bench` only");
        return;
    }
    let cache = server::cache_dir();
    for path in [cache.join("llama/bin/llama-server"), cache.join("models")] {
        if !path.exists() {
            println!(
                "skipped: {} missing (bash scripts/install-llama.sh)",
                path.display()
            );
            return;
        }
    }
    let turns = env_number("EGIRL_DAY_TURNS", 300);
    let max_tokens = env_number("EGIRL_DAY_MAX_TOKENS", 24) as u64;
    let dir = tempfile::tempdir().expect("temp dir");
    let server = RealServer::start_with(server::free_port(), dir.path(), &["--ctx-size", "4096"]);
    let day = Day::new(
        dir.path(),
        env!("CARGO_BIN_EXE_egirl").into(),
        &server.url(),
        4096,
        max_tokens,
    );
    let started = Instant::now();
    let mut reports = Vec::with_capacity(turns);
    for n in 0..turns {
        let report = day.turn("day", n);
        if !report.ok {
            eprintln!("turn {} failed:\n{}", n + 1, report.detail);
        }
        if report.compacted || report.fell_back {
            eprintln!(
                "turn {}: {}",
                n + 1,
                if report.compacted {
                    "compacted"
                } else {
                    "fell back"
                }
            );
        }
        reports.push(report);
        // Running figures, so a run cut short still says something.
        if (n + 1) % 10 == 0 {
            let (evaluated, new) = prefill_ratio(&reports);
            eprintln!(
                "after {} turns: {} failed, {} compacted, {} fell back, evaluated/new {evaluated}/{new}, {:.0} s",
                n + 1,
                reports.iter().filter(|r| !r.ok).count(),
                reports.iter().filter(|r| r.compacted).count(),
                reports.iter().filter(|r| r.fell_back).count(),
                started.elapsed().as_secs_f64()
            );
        }
    }
    let failed = reports.iter().filter(|r| !r.ok).count();
    let compactions = reports.iter().filter(|r| r.compacted).count();
    let fallbacks = reports.iter().filter(|r| r.fell_back).count();
    let (evaluated, new) = prefill_ratio(&reports);
    let compacting: Vec<u64> = reports
        .iter()
        .filter(|r| r.compacted)
        .map(|r| r.usage.iter().map(|(p, c, _)| p - c.min(p)).sum())
        .collect();
    println!("| figure | value |");
    println!("| --- | ---: |");
    println!("| turns | {turns} |");
    println!("| turns failed (target 0) | {failed} |");
    println!("| compactions | {compactions} |");
    println!("| fallbacks (summary failed) | {fallbacks} |");
    println!(
        "| evaluated / new prefill, turns that did not compact (target ≤ 1.2) | {evaluated} / {new} = {:.3} |",
        evaluated as f64 / new.max(1) as f64
    );
    println!("| evaluated prefill per compacting turn (flush + summary + turn) | {compacting:?} |");
    println!(
        "| wall time | {:.0} s ({:.1} s a turn) |",
        started.elapsed().as_secs_f64(),
        started.elapsed().as_secs_f64() / turns.max(1) as f64
    );
}
