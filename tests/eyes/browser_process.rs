//! Through the real binary (`egirl -m` and the scripted fake model): a new
//! host asks and is denied headless, and no Chromium process is left once
//! egirl exits, is stopped with SIGTERM, or is killed outright.

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::Value;

use super::browser_site::{Site, chromium_or_skip};
use crate::support::cli::{Cli, events, stderr};
use crate::support::fake_llama::{FakeLlama, Reply};

/// The test's config: the site on 127.0.0.1 allowed, other hosts asked about.
const CONFIG: &str = "[tools.web]\nallow_private = true\nallow_domains = [\"127.0.0.1\"]\n";

fn open(url: &str) -> Reply {
    let args = serde_json::json!({"action": "open", "url": url}).to_string();
    Reply::tool_calls(&[("browser", args.as_str())])
}

/// Chromium processes started for egirls whose HOME is `home` (the
/// browser inherits it; its helpers inherit it from the browser).
fn chromiums_of(home: &Path) -> Vec<String> {
    let wanted = format!("HOME={}", home.display());
    let mut found = Vec::new();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return found;
    };
    for entry in entries.flatten() {
        let dir = entry.path();
        let Ok(cmdline) = std::fs::read(dir.join("cmdline")) else {
            continue;
        };
        let argv0 = cmdline.split(|b| *b == 0).next().unwrap_or_default();
        if !String::from_utf8_lossy(argv0).contains("chrom") {
            continue;
        }
        let environ = std::fs::read(dir.join("environ")).unwrap_or_default();
        if environ
            .split(|b| *b == 0)
            .any(|var| var == wanted.as_bytes())
        {
            found.push(String::from_utf8_lossy(&cmdline).replace('\0', " "));
        }
    }
    found
}

/// Waits (generously) until `home`'s Chromiums are all gone; those left.
async fn left_after_a_while(home: &Path) -> Vec<String> {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let left = chromiums_of(home);
        if left.is_empty() || Instant::now() > deadline {
            return left;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_new_host_is_denied_headless_and_no_chromium_outlives_egirl() {
    if !chromium_or_skip() {
        return;
    }
    let site = Site::start().await;
    let port = site.base.rsplit(':').next().unwrap_or_default().to_string();
    let fake = FakeLlama::start().await;
    fake.push_replies([
        open(&format!("{}/", site.base)),
        open(&format!("http://localhost:{port}/")),
        Reply::text("done"),
    ]);
    let cli = Cli::new(&fake, CONFIG);
    let out = cli.run(&["-m", "browse", "--json"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let ev = events(&out);
    let results: Vec<&Value> = ev.iter().filter(|e| e["type"] == "tool_result").collect();
    assert_eq!(results.len(), 2, "{ev:?}");
    assert_eq!(results[0]["success"], true, "{}", results[0]);
    assert!(
        results[0]["output"]
            .as_str()
            .unwrap_or("")
            .contains("# Welcome")
    );
    // localhost is a new host: asked about, and denied (headless).
    let asked = ev
        .iter()
        .find(|e| e["type"] == "approval_request")
        .expect("asked");
    assert!(asked.to_string().contains("localhost"), "{asked}");
    let decision = ev
        .iter()
        .find(|e| e["type"] == "approval_decision")
        .expect("decided");
    assert_eq!(decision["decision"], "denied");
    assert_eq!(results[1]["success"], false, "{}", results[1]);
    assert!(
        results[1]["output"]
            .as_str()
            .unwrap_or("")
            .contains("denied"),
        "{}",
        results[1]
    );
    // The denied host's request never left the browser.
    assert_eq!(
        site.hits().iter().filter(|h| *h == "/").count(),
        1,
        "{:?}",
        site.hits()
    );
    let left = left_after_a_while(cli.dir.path()).await;
    assert!(left.is_empty(), "left after exit: {left:#?}");

    for signal in [libc::SIGTERM, libc::SIGKILL] {
        fake.push_replies([open(&format!("{}/", site.base)), Reply::hang()]);
        let mut egirl = tokio::process::Command::new(env!("CARGO_BIN_EXE_egirl"))
            .env("HOME", cli.dir.path())
            .env_remove("EGIRL_CONFIG")
            .env_remove("XDG_CONFIG_HOME")
            .arg("--config")
            .arg(cli.config())
            .args(["-m", "browse", "--json"])
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::fs::File::create(cli.dir.path().join("stderr")).expect("stderr file"))
            .spawn()
            .expect("run egirl");
        let deadline = Instant::now() + Duration::from_secs(60);
        while chromiums_of(cli.dir.path()).is_empty() || fake.pending_replies() > 0 {
            let log = std::fs::read_to_string(cli.dir.path().join("stderr")).unwrap_or_default();
            let pending = fake.pending_replies();
            let exited = egirl.try_wait();
            let paths: Vec<String> = fake.recorded().iter().map(|r| r.path.clone()).collect();
            assert!(
                Instant::now() < deadline,
                "the browser never started ({pending} replies left, {exited:?}, {paths:?}): {log}"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let pid = egirl.id().expect("egirl's pid") as i32;
        // SAFETY: signalling the child this test started.
        unsafe { libc::kill(pid, signal) };
        let status = tokio::time::timeout(Duration::from_secs(60), egirl.wait())
            .await
            .expect("egirl exits")
            .expect("egirl's status");
        let left = left_after_a_while(cli.dir.path()).await;
        assert!(
            left.is_empty(),
            "left after signal {signal} ({status}): {left:#?}"
        );
    }
}
