//! Figures for docs/benchmarks.md (ignored; run by hand):
//! `cargo test --test all eyes::browser_bench -- --ignored --nocapture`.
//! Cold start to first snapshot, snapshot size against the page's raw
//! HTML for three real-world-sized pages (tests/fixtures/browser/), and
//! the resident memory of the Chromium process tree. Tokens are chars/4.

use std::time::Instant;

use axum::Router;
use axum::response::Html;
use axum::routing::get;
use egirl::protocol::Origin;
use serde_json::json;

use super::browser_site::{browse, chromium_or_skip, context};

const PAGES: [(&str, &str); 3] = [
    ("docs", include_str!("../fixtures/browser/docs.html")),
    ("news", include_str!("../fixtures/browser/news.html")),
    ("app", include_str!("../fixtures/browser/app.html")),
];

/// Memory (KiB) of `root` and every process below it: RSS summed (counts
/// shared pages once per process) and PSS summed (shares them out), and
/// the number of processes.
fn tree_rss_kib(root: i32) -> (u64, u64, usize) {
    let mut parents: Vec<(i32, i32)> = Vec::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        let stat = std::fs::read_to_string(entry.path().join("stat")).unwrap_or_default();
        // The parent is the 2nd field after the parenthesised name.
        let after = stat.rsplit_once(')').map(|(_, rest)| rest).unwrap_or("");
        if let Some(ppid) = after.split_whitespace().nth(1).and_then(|p| p.parse().ok()) {
            parents.push((pid, ppid));
        }
    }
    let mut tree = vec![root];
    let mut i = 0;
    while i < tree.len() {
        let parent = tree[i];
        tree.extend(
            parents
                .iter()
                .filter(|(_, pp)| *pp == parent)
                .map(|(p, _)| *p),
        );
        i += 1;
    }
    let field = |file: &str, key: &str| -> u64 {
        tree.iter()
            .map(|pid| {
                let text =
                    std::fs::read_to_string(format!("/proc/{pid}/{file}")).unwrap_or_default();
                text.lines()
                    .find_map(|l| l.strip_prefix(key))
                    .and_then(|v| v.split_whitespace().next()?.parse::<u64>().ok())
                    .unwrap_or(0)
            })
            .sum()
    };
    let rss = field("status", "VmRSS:");
    let pss = field("smaps_rollup", "Pss:");
    (rss, pss, tree.len())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "benchmark figures, run by hand"]
async fn browser_figures() {
    if !chromium_or_skip() {
        return;
    }
    let mut app = Router::new();
    for (name, page) in PAGES {
        app = app.route(&format!("/{name}"), get(move || async move { Html(page) }));
    }
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let base = format!("http://{}", listener.local_addr().expect("address"));
    tokio::spawn(async move { axum::serve(listener, app).await });
    let dir = tempfile::tempdir().expect("temp dir");
    let config = "[tools.web]\nallow_private = true\nfetch = \"allow\"\n";
    let ctx = context(dir.path(), "bench", Origin::Cli, config);
    let whole = format!("{config}[tools.browser]\nsnapshot_chars = 10000000\n");
    let whole = context(dir.path(), "bench", Origin::Cli, &whole);

    for run in 1..=3 {
        browse(&ctx, json!({"action": "close"})).await;
        let started = Instant::now();
        let out = browse(
            &ctx,
            json!({"action": "open", "url": format!("{base}/docs")}),
        )
        .await;
        assert!(out.success, "{}", out.output);
        println!(
            "cold start to first snapshot (docs), run {run}: {} ms",
            started.elapsed().as_millis()
        );
    }
    let pid = egirl::tools::builtin::browser::running("bench")
        .expect("running")
        .pid();
    let (rss, pss, processes) = tree_rss_kib(pid);
    println!(
        "after one page: RSS {:.1} MiB, PSS {:.1} MiB, {processes} processes",
        rss as f64 / 1024.0,
        pss as f64 / 1024.0
    );
    println!(
        "| page | HTML bytes | HTML tokens (/4) | snapshot chars (default cap) | tokens (/4) | whole-page snapshot chars | tokens (/4) | warm open+snapshot ms |"
    );
    for (name, page) in PAGES {
        let started = Instant::now();
        let out = browse(
            &ctx,
            json!({"action": "open", "url": format!("{base}/{name}")}),
        )
        .await;
        let warm = started.elapsed().as_millis();
        assert!(out.success, "{}", out.output);
        let full = browse(&whole, json!({"action": "snapshot"})).await;
        println!(
            "| {name} | {} | {} | {} | {} | {} | {} | {warm} |",
            page.len(),
            page.len() / 4,
            out.output.chars().count(),
            out.output.chars().count() / 4,
            full.output.chars().count(),
            full.output.chars().count() / 4,
        );
        if name == "app" {
            println!(
                "--- app snapshot, first lines:\n{}\n---",
                out.output.lines().take(25).collect::<Vec<_>>().join("\n")
            );
        }
    }
    let (rss, pss, processes) = tree_rss_kib(pid);
    println!(
        "after the three pages: RSS {:.1} MiB, PSS {:.1} MiB, {processes} processes",
        rss as f64 / 1024.0,
        pss as f64 / 1024.0
    );
    browse(&ctx, json!({"action": "close"})).await;
}
