//! The sandbox's cost per command: spawn to exit of `true`
//! through the `exec` tool, sandboxed (`workspace-write`, no network, with
//! a `.git` to bind read-only; user, mount and PID namespaces) against
//! `sandbox = "off"`; target under 5 ms added at p50.
//!
//! `cargo bench --bench exec_sandbox` (figures in docs/benchmarks.md). Each mode
//! runs `EGIRL_BENCH_RUNS` commands (default 300), interleaved so that the
//! machine's noise falls on both alike, after 20 warm-up runs each.

use std::time::{Duration, Instant};

use egirl::config::{ExecApproval, ExecConfig, ExecSandbox};
use egirl::protocol::Origin;
use egirl::tools::{ToolContext, sandbox};

fn context(workspace: &std::path::Path, mode: ExecSandbox) -> ToolContext {
    let exec = ExecConfig {
        approval: ExecApproval::Full,
        sandbox: mode,
        ..ExecConfig::default()
    };
    ToolContext::standalone(workspace, exec, "bench", Origin::Cli)
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

fn ms(d: Duration) -> String {
    format!("{:.2} ms", d.as_secs_f64() * 1000.0)
}

fn main() {
    let runs: usize = std::env::var("EGIRL_BENCH_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(300);
    let dir = tempfile::tempdir().expect("temp dir");
    let workspace = std::fs::canonicalize(dir.path()).expect("canonical");
    std::fs::create_dir_all(workspace.join(".git")).expect(".git");
    let modes = [
        ("off", context(&workspace, ExecSandbox::Off)),
        (
            "workspace-write",
            context(&workspace, ExecSandbox::WorkspaceWrite),
        ),
        // The same namespaces; only the private temp dir is writable.
        ("read-only", context(&workspace, ExecSandbox::ReadOnly)),
    ];
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let args = serde_json::json!({ "command": "true" });
    let mut times: Vec<Vec<Duration>> = vec![Vec::with_capacity(runs); modes.len()];
    rt.block_on(async {
        for (_, ctx) in &modes {
            for _ in 0..20 {
                let out = egirl::tools::run("exec", &args, ctx).await;
                assert!(out.success, "{}", out.output);
            }
        }
        for _ in 0..runs {
            for (i, (_, ctx)) in modes.iter().enumerate() {
                let started = Instant::now();
                let out = egirl::tools::run("exec", &args, ctx).await;
                times[i].push(started.elapsed());
                assert!(out.success, "{}", out.output);
            }
        }
    });
    println!(
        "exec `true`, {runs} runs each; sandbox: {}",
        sandbox::describe(&modes[1].1.exec)
    );
    let mut p50s = Vec::new();
    for ((name, _), t) in modes.iter().zip(times.iter_mut()) {
        t.sort();
        let (p50, p99) = (percentile(t, 0.5), percentile(t, 0.99));
        p50s.push(p50);
        println!("{name:>16}: p50 {}  p99 {}", ms(p50), ms(p99));
    }
    for (i, (name, _)) in modes.iter().enumerate().skip(1) {
        let added = p50s[i].as_secs_f64() - p50s[0].as_secs_f64();
        println!(
            "{name}: added at p50 {:.2} ms (target < 5 ms)",
            added * 1000.0
        );
    }
}
