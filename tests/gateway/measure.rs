//! The attached TUI against the in-process one, side by side: a
//! measurement, not a check (`#[ignore]`d; it prints figures and asserts
//! nothing about time). `scripts/bench-attach.sh` runs it on a release
//! binary; by hand: `EGIRL_MEASURE_BIN=target/release/egirl cargo test
//! --test all gateway::measure -- --ignored --nocapture`.
//!
//! - *first frame*: from just before `spawn` of `egirl` in a
//!   pseudo-terminal until the status line's `? help` is on screen; in
//!   process (no daemon: it starts its own core) and attached (`egirl
//!   serve` owns the workspace: the probe, the hello and the first status
//!   are in the figure), alternately.
//! - *key to output*: once the screen is quiet, one printable key at a
//!   time, from writing it to the terminal until the input box shows the
//!   text typed so far (timed by the thread that reads the terminal).
//!   Typing is local to the TUI in both cases: the figure shows that
//!   attaching adds nothing on that path.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use crate::support::fake_llama::FakeLlama;
use crate::tui::pty::{Launch, Pty};

/// Typed first and waited for, so that each measured key's text is found
/// only in the input box.
const LEAD: &str = "qzx";
/// The keys measured per launch.
const KEYS: &str = "abcdefghijklmnopqrstuvwxyzabcdefghijklmn";
const WAIT: Duration = Duration::from_secs(30);
const QUIET: Duration = Duration::from_millis(600);

struct Sample {
    first_frame: Duration,
    keys: Vec<Duration>,
}

fn workspace_config(dir: &Path, fake: &FakeLlama) -> PathBuf {
    let config = format!(
        "[workspace]\npath = \"ws\"\n[log]\ndir = \"{}\"\n[local]\nendpoint = \"{}\"\nmodel = \"fake\"\n[cron]\nenabled = false\n",
        dir.join("logs").display(),
        fake.url()
    );
    let path = dir.join("egirl.toml");
    std::fs::write(&path, config).expect("config");
    path
}

async fn measure(bin: &Path, config: &Path, home: &Path) -> Sample {
    let typed: Vec<String> = (1..=KEYS.len())
        .map(|n| format!("{LEAD}{}", &KEYS[..n]))
        .collect();
    let mut watch = vec!["? help".to_string(), LEAD.to_string()];
    watch.extend(typed.iter().cloned());
    let mut pty = Pty::launch(Launch {
        bin: bin.to_path_buf(),
        args: vec!["--config".into(), config.display().to_string()],
        home,
        watch,
    });
    let first = wait_seen(&pty, "? help").await;
    settle(&pty).await;
    pty.send(LEAD);
    wait_seen(&pty, LEAD).await;
    settle(&pty).await;
    let mut keys = Vec::new();
    for (i, key) in KEYS.chars().enumerate() {
        let sent = Instant::now();
        pty.send(&key.to_string());
        let shown = wait_seen(&pty, &typed[i]).await;
        keys.push(shown.saturating_duration_since(sent));
        settle(&pty).await;
    }
    pty.send("\x03\x03");
    let deadline = Instant::now() + Duration::from_secs(5);
    while Instant::now() < deadline && pty.child.try_wait().expect("wait").is_none() {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let _ = pty.child.kill();
    let _ = pty.child.wait();
    Sample {
        first_frame: first.saturating_duration_since(pty.spawned_at),
        keys,
    }
}

async fn wait_seen(pty: &Pty, what: &str) -> Instant {
    let deadline = Instant::now() + WAIT;
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

/// Waits until the program has written nothing for `QUIET`.
async fn settle(pty: &Pty) {
    let deadline = Instant::now() + WAIT;
    while pty.last_output().elapsed() < QUIET && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

fn pct(mut values: Vec<f64>, p: f64) -> f64 {
    values.sort_by(f64::total_cmp);
    let i = ((values.len() as f64 * p).ceil() as usize).clamp(1, values.len()) - 1;
    values[i]
}

fn report(name: &str, samples: &[Sample]) {
    let ms = |d: &Duration| d.as_secs_f64() * 1e3;
    let first: Vec<f64> = samples.iter().map(|s| ms(&s.first_frame)).collect();
    let keys: Vec<f64> = samples.iter().flat_map(|s| s.keys.iter().map(ms)).collect();
    println!(
        "{name:<34} n={:<3} first frame p50 {:>6.1} ms p90 {:>6.1} ms | key to output ({} keys) p50 {:>5.2} ms p99 {:>5.2} ms max {:>5.2} ms",
        samples.len(),
        pct(first.clone(), 0.5),
        pct(first, 0.9),
        keys.len(),
        pct(keys.clone(), 0.5),
        pct(keys.clone(), 0.99),
        pct(keys, 1.0),
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "a measurement that prints figures: scripts/bench-attach.sh"]
async fn attached_against_in_process_first_frame_and_key_to_output() {
    let runs: usize = std::env::var("EGIRL_MEASURE_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3);
    let bin = std::env::var("EGIRL_MEASURE_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|_| PathBuf::from(env!("CARGO_BIN_EXE_egirl")));
    println!("{}, {runs} runs each, alternately", bin.display());
    let fake = FakeLlama::start().await;
    let alone = tempfile::tempdir().expect("temp dir");
    let alone_config = workspace_config(alone.path(), &fake);
    let served = tempfile::tempdir().expect("temp dir");
    let served_config = workspace_config(served.path(), &fake);
    let mut daemon = tokio::process::Command::new(&bin)
        .arg("--config")
        .arg(&served_config)
        .arg("serve")
        .env("HOME", served.path())
        .env_remove("EGIRL_CONFIG")
        .env_remove("XDG_CONFIG_HOME")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("egirl serve");
    let socket = served.path().join("ws/.egirl/egirl.sock");
    let deadline = Instant::now() + WAIT;
    while !socket.exists() {
        assert!(Instant::now() < deadline, "egirl serve made no socket");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let (mut in_process, mut attached) = (Vec::new(), Vec::new());
    for _ in 0..runs {
        in_process.push(measure(&bin, &alone_config, alone.path()).await);
        attached.push(measure(&bin, &served_config, served.path()).await);
    }
    report("in process (own core)", &in_process);
    report("attached to egirl serve", &attached);
    let _ = daemon.kill().await;
}
