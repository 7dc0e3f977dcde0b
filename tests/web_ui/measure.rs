//! The web UI measured: a measurement, not a check (`#[ignore]`d; it prints
//! figures and asserts nothing about them). By hand, on a release binary:
//! `EGIRL_MEASURE_BIN=target/release/egirl cargo test --test all
//! web_ui::measure -- --ignored --nocapture`.
//!
//! - *page weight*: the app's first load with the browser's cache off, the
//!   sum of the Performance API's navigation and resource entries (bytes
//!   transferred, headers included, and decoded); the WebSocket is not a
//!   resource entry, so it is left out.
//! - *first token*: the same scripted reply (a unique first word) to a
//!   message sent as soon as the client is ready, in the browser (from
//!   navigation: ready = `body[data-ready]`, then Enter to the word in
//!   `#conversation`, timed inside the page by a mutation observer) and in
//!   an attached TUI in a pseudo-terminal (from spawn: ready = the
//!   `attached:` status, then Enter to the word on screen, timed by the
//!   thread that reads the terminal); alternately, `EGIRL_MEASURE_RUNS`
//!   each (3).
//! - *daemon RSS*: VmRSS of the `egirl serve` process with no client, with
//!   one browser attached, and after the runs.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::rig::{Rig, say, wait_ready};
use crate::support::cdp::{Browser, Page, js_str};
use crate::support::fake_llama::Reply;
use crate::tui::pty::Pty;

/// Installed in every new document: records when the app was ready, when
/// Enter was pressed and when `token` showed, in ms since navigation.
fn observer(token: &str) -> String {
    format!(
        "(() => {{ const T = {}; const check = () => {{ \
           const b = document.body; \
           if (!window.__readyAt && b && b.dataset.ready === '1') window.__readyAt = performance.now(); \
           if (!window.__tokenAt) {{ const c = document.querySelector('#conversation'); \
             if (c && c.textContent.includes(T)) window.__tokenAt = performance.now(); }} }}; \
         new MutationObserver(check).observe(document, {{subtree: true, childList: true, attributes: true, characterData: true}}); \
         document.addEventListener('keydown', e => {{ if (e.key === 'Enter' && !window.__sentAt) window.__sentAt = performance.now(); }}, true); }})()",
        js_str(token)
    )
}

/// The scripted reply: `token` first, then a few more words.
fn reply(token: &str) -> Reply {
    Reply::chunks(&[
        format!("{token} "),
        "and ".into(),
        "the ".into(),
        "rest.".into(),
    ])
}

fn vm_rss_kib(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}

/// The app's first load with the cache off: one row per entry.
async fn page_weight(rig: &Rig, page: &Page<'_>) -> Vec<Value> {
    page.call("Network.enable", json!({})).await;
    page.call("Network.setCacheDisabled", json!({"cacheDisabled": true}))
        .await;
    page.goto(&rig.base).await;
    wait_ready(page).await;
    let rows = page
        .eval(
            "[...performance.getEntriesByType('navigation'), ...performance.getEntriesByType('resource')]\
             .map(e => ({ name: new URL(e.name).pathname, transfer: e.transferSize, \
                          encoded: e.encodedBodySize, decoded: e.decodedBodySize }))",
        )
        .await;
    page.call("Network.disable", json!({})).await;
    rows.as_array().cloned().unwrap_or_default()
}

/// (ready, Enter to token) in the browser, in ms.
async fn browser_sample(rig: &Rig, page: &Page<'_>, token: &str) -> (f64, f64) {
    let script = page
        .call(
            "Page.addScriptToEvaluateOnNewDocument",
            json!({"source": observer(token)}),
        )
        .await;
    rig.llama.push_reply(reply(token));
    page.goto(&rig.base).await;
    page.wait_for("window.__readyAt", "the app ready").await;
    say(page, "first token please").await;
    page.wait_for("window.__tokenAt", "the first token").await;
    let t = page
        .eval("[window.__readyAt, window.__sentAt, window.__tokenAt]")
        .await;
    page.call(
        "Page.removeScriptToEvaluateOnNewDocument",
        json!({"identifier": script["identifier"]}),
    )
    .await;
    let at = |i: usize| t[i].as_f64().unwrap_or(f64::NAN);
    (at(0), at(2) - at(1))
}

/// (ready, Enter to token) in an attached TUI, in ms.
async fn tui_sample(rig: &Rig, token: &str) -> (f64, f64) {
    let attached = format!("attached: serve pid {}", rig.pid());
    rig.llama.push_reply(reply(token));
    let mut pty = Pty::launch(rig.tui_launch(vec![attached.clone(), token.to_string()]));
    let ready = seen(&pty, &attached).await;
    let sent = Instant::now();
    pty.send("first token please\r");
    let shown = seen(&pty, token).await;
    pty.send("\x03\x03");
    let _ = pty.exit_code().await;
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    (
        ms(ready.saturating_duration_since(pty.spawned_at)),
        ms(shown.saturating_duration_since(sent)),
    )
}

async fn seen(pty: &Pty, what: &str) -> Instant {
    let deadline = Instant::now() + super::rig::WAIT;
    loop {
        if let Some(at) = pty.seen_at(what) {
            return at;
        }
        assert!(
            Instant::now() < deadline,
            "`{what}` never appeared:\n{}",
            pty.contents()
        );
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values.get(values.len() / 2).copied().unwrap_or(f64::NAN)
}

fn print_first_token(name: &str, samples: &[(f64, f64)]) {
    let ready = median(samples.iter().map(|s| s.0).collect());
    let token = median(samples.iter().map(|s| s.1).collect());
    let total = median(samples.iter().map(|s| s.0 + s.1).collect());
    println!("  {name:<14} {ready:>10.1} {token:>16.1} {total:>18.1}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "a measurement that prints figures"]
async fn page_weight_first_token_and_daemon_rss() {
    let runs: usize = std::env::var("EGIRL_MEASURE_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3);
    let bin = std::env::var("EGIRL_MEASURE_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|_| PathBuf::from(env!("CARGO_BIN_EXE_egirl")));
    let rig = Rig::start_bin(bin.clone()).await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    let rss_idle = vm_rss_kib(rig.pid());

    let browser = Browser::launch().await;
    let page = browser.page().await;
    page.viewport(1280, 800, 1.0, false).await;
    rig.sign_in(&page, "measure").await;
    let rows = page_weight(&rig, &page).await;
    tokio::time::sleep(Duration::from_secs(1)).await;
    let rss_browser = vm_rss_kib(rig.pid());

    let (mut in_browser, mut in_tui) = (Vec::new(), Vec::new());
    for run in 0..runs {
        in_browser.push(browser_sample(&rig, &page, &format!("webtok{run}q")).await);
        in_tui.push(tui_sample(&rig, &format!("tuitok{run}q")).await);
    }
    tokio::time::sleep(Duration::from_secs(1)).await;
    let rss_after = vm_rss_kib(rig.pid());

    println!("\nweb UI measurement: {}, {runs} runs each", bin.display());
    println!("page weight, first load of the app (cache off; the WebSocket left out):");
    let (mut transfer, mut decoded) = (0, 0);
    for row in &rows {
        let (t, d) = (
            row["transfer"].as_u64().unwrap_or(0),
            row["decoded"].as_u64().unwrap_or(0),
        );
        transfer += t;
        decoded += d;
        println!(
            "  {:<28} {t:>9} B transferred {d:>9} B decoded",
            row["name"].as_str().unwrap_or("?")
        );
    }
    println!(
        "  {:<28} {transfer:>9} B transferred {decoded:>9} B decoded",
        "total"
    );
    println!("first token, median ms:    ready   Enter to token   ready + to token");
    print_first_token("browser", &in_browser);
    print_first_token("attached TUI", &in_tui);
    println!(
        "daemon RSS: no client {:.1} MiB, one browser attached {:.1} MiB, after the runs {:.1} MiB",
        rss_idle as f64 / 1024.0,
        rss_browser as f64 / 1024.0,
        rss_after as f64 / 1024.0
    );
    drop(page);
    rig.stop().await;
}
