//! Start-up to first frame and resident memory: the real binary
//! in a pseudo-terminal (`pty::Pty`) against the fake llama-server, with
//! a new session and with a 2,000-message and a 10,000-message session
//! passed as `--session`.
//!
//! A measurement, not a check: `#[ignore]`d, it prints its figures and
//! asserts nothing about time. `scripts/bench-tui-startup.sh` builds
//! release and runs it 20 times; by hand:
//! `EGIRL_STARTUP_RUNS=20 cargo test --release --test all tui::startup -- --ignored --nocapture`.
//! With `EGIRL_STARTUP_CODEX=/path/to/codex` it measures codex's TUI the
//! same way (whatever it shows without a key: its sign-in screen), with
//! `EGIRL_STARTUP_OPENCODE=/path/to/opencode` opencode's (its home screen,
//! no provider). `EGIRL_STARTUP_BIN` names the egirl binary to measure (a
//! release build: the script builds the harness in the dev profile), and
//! `EGIRL_STARTUP_BASELINE` another one measured in the same run (a new
//! session), so two builds compare side by side. The subjects take turns
//! run by run, so a change of load reaches all of them alike.
//!
//! - *first frame*: from just before `spawn` until the reading thread has
//!   parsed output that shows the marker (egirl: `? help`, the right end
//!   of the status line, the last row drawn; codex: `Codex`, in the header
//!   of its loading screen and of its sign-in screen).
//! - *settled*: the last output before 1 s of silence.
//! - *RSS*: `VmRSS` (and the peak, `VmHWM`) from `/proc/<pid>/status`
//!   once settled and at least 3 s after the start, summed over the
//!   process and its children (codex is a
//!   node launcher and three native processes); also the summed `Pss`,
//!   which counts pages shared between them once.
//! - Each subject's first run, in a fresh home, is reported apart.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::pty::{Launch, Pty};
use crate::support::fake_llama::FakeLlama;
use crate::support::tui_corpus;

const SESSION_ID: &str = "bench-2000";
const MESSAGES: usize = 2000;
const LONG_SESSION_ID: &str = "bench-10000";
const LONG_MESSAGES: usize = 10_000;
/// The screen is settled after this long without output.
const QUIET: Duration = Duration::from_secs(1);
const WAIT: Duration = Duration::from_secs(30);
/// Resident memory is read this long after the start at the earliest.
const RSS_AFTER: Duration = Duration::from_secs(3);

struct Sample {
    first_frame: Duration,
    settled: Duration,
    rss_kib: u64,
    hwm_kib: u64,
    pss_kib: u64,
    /// The conversation pane shows messages rather than the welcome text.
    transcript_shown: bool,
    /// Each process of the tree: its name and VmRSS.
    processes: Vec<(String, u64)>,
}

async fn measure(launch: Launch<'_>, marker: &str) -> Sample {
    let mut pty = Pty::launch(Launch {
        watch: vec![marker.to_string()],
        ..launch
    });
    let deadline = Instant::now() + WAIT;
    let first = loop {
        if let Some(at) = pty.seen_at(marker) {
            break at;
        }
        assert!(
            Instant::now() < deadline,
            "`{marker}` never appeared; the screen:\n{}",
            pty.contents()
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    };
    while pty.last_output().elapsed() < QUIET && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let settled = pty.last_output().saturating_duration_since(pty.spawned_at);
    if let Some(left) = RSS_AFTER.checked_sub(pty.spawned_at.elapsed()) {
        tokio::time::sleep(left).await;
    }
    let pids = tree(pty.child.id());
    let mut processes = Vec::new();
    let (mut rss_kib, mut hwm_kib, mut pss_kib) = (0, 0, 0);
    for pid in &pids {
        let (name, rss, hwm, pss) = memory(*pid);
        rss_kib += rss;
        hwm_kib += hwm;
        pss_kib += pss;
        processes.push((name, rss));
    }
    let sample = Sample {
        first_frame: first - pty.spawned_at,
        settled,
        rss_kib,
        hwm_kib,
        pss_kib,
        transcript_shown: !pty.contents().contains("Type a message"),
        processes,
    };
    stop(&mut pty, &pids).await;
    sample
}

/// Ctrl+C twice (both programs quit on that), then SIGKILL to whatever of
/// the tree is left.
async fn stop(pty: &mut Pty, pids: &[u32]) {
    pty.send("\x03\x03");
    let deadline = Instant::now() + Duration::from_secs(5);
    while Instant::now() < deadline {
        if pty.child.try_wait().expect("wait").is_some() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    for pid in pids.iter().rev() {
        if Path::new(&format!("/proc/{pid}")).exists() {
            // SAFETY: a plain syscall on a process this test started.
            unsafe { libc::kill(*pid as libc::pid_t, libc::SIGKILL) };
        }
    }
    let _ = pty.child.wait();
}

/// `pid` and its descendants.
fn tree(pid: u32) -> Vec<u32> {
    let mut parents: Vec<(u32, u32)> = Vec::new();
    for entry in std::fs::read_dir("/proc").expect("/proc").flatten() {
        let Some(p) = entry.file_name().to_str().and_then(|n| n.parse().ok()) else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        // `pid (comm) state ppid ...`; comm may hold spaces and parens.
        let ppid = stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().nth(1))
            .and_then(|s| s.parse().ok());
        if let Some(ppid) = ppid {
            parents.push((p, ppid));
        }
    }
    let mut out = vec![pid];
    let mut i = 0;
    while i < out.len() {
        let parent = out[i];
        out.extend(
            parents
                .iter()
                .filter(|(_, pp)| *pp == parent)
                .map(|(p, _)| *p),
        );
        i += 1;
    }
    out
}

/// Name, VmRSS, VmHWM and Pss in KiB; zeros for a process that is gone.
/// Pss splits pages shared between processes (codex's three processes
/// map the same binary), so its sum over a tree counts each page once.
fn memory(pid: u32) -> (String, u64, u64, u64) {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let rollup = std::fs::read_to_string(format!("/proc/{pid}/smaps_rollup")).unwrap_or_default();
    let field_in = |text: &str, name: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.split_whitespace().next())
            .and_then(|v| v.parse().ok())
            .unwrap_or(0)
    };
    let field = |name: &str| field_in(&status, name);
    let name = status
        .lines()
        .find_map(|l| l.strip_prefix("Name:"))
        .unwrap_or("?")
        .trim()
        .to_string();
    (
        name,
        field("VmRSS:"),
        field("VmHWM:"),
        field_in(&rollup, "Pss:"),
    )
}

fn report(name: &str, samples: &[Sample], egirl: bool) {
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    let pct = |mut v: Vec<f64>, p: f64| {
        v.sort_by(f64::total_cmp);
        let i = ((v.len() as f64 * p).ceil() as usize).clamp(1, v.len()) - 1;
        v[i]
    };
    let first: Vec<f64> = samples.iter().map(|s| ms(s.first_frame)).collect();
    let settled: Vec<f64> = samples.iter().map(|s| ms(s.settled)).collect();
    let rss: Vec<f64> = samples.iter().map(|s| s.rss_kib as f64 / 1024.0).collect();
    let hwm: Vec<f64> = samples.iter().map(|s| s.hwm_kib as f64 / 1024.0).collect();
    let pss: Vec<f64> = samples.iter().map(|s| s.pss_kib as f64 / 1024.0).collect();
    let shown = samples.iter().filter(|s| s.transcript_shown).count();
    let shown = if egirl {
        format!(" | transcript shown {shown}/{}", samples.len())
    } else {
        String::new()
    };
    println!(
        "{name:<44} n={:<3} first frame p50 {:>7.1} ms p90 {:>7.1} ms | settled p50 {:>7.1} ms | RSS p50 {:>6.1} MiB (max {:>6.1}) | peak p50 {:>6.1} MiB | PSS p50 {:>6.1} MiB{shown}",
        samples.len(),
        pct(first.clone(), 0.5),
        pct(first, 0.9),
        pct(settled, 0.5),
        pct(rss.clone(), 0.5),
        pct(rss, 1.0),
        pct(hwm, 0.5),
        pct(pss, 0.5),
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "a measurement that prints figures: scripts/bench-tui-startup.sh"]
async fn startup_to_first_frame_and_resident_memory() {
    let runs: usize = std::env::var("EGIRL_STARTUP_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3);
    let fake = FakeLlama::start().await;
    let dir = tempfile::tempdir().expect("temp dir");
    let config = format!(
        "[workspace]\npath = \"ws\"\n[log]\ndir = \"{}\"\n[local]\nendpoint = \"{}\"\nmodel = \"fake\"\n",
        dir.path().join("logs").display(),
        fake.url()
    );
    let config_path = dir.path().join("egirl.toml");
    std::fs::write(&config_path, &config).expect("config");
    // The same with three MCP servers: two real ones and one
    // that never answers; the first frame must not wait for any of them.
    let mcp_path = dir.path().join("egirl-mcp.toml");
    let mcp = crate::mcp::everything(dir.path())
        + &crate::mcp::filesystem(dir.path())
        + "[mcp.servers.never]\ncommand = \"sleep\"\nargs = [\"600\"]\n";
    std::fs::write(&mcp_path, format!("{config}{mcp}")).expect("config");
    let sessions = dir.path().join("ws").join("sessions");
    std::fs::create_dir_all(&sessions).expect("sessions dir");
    let jsonl = write_session(&sessions, SESSION_ID, MESSAGES);
    let long = write_session(&sessions, LONG_SESSION_ID, LONG_MESSAGES);

    let egirl = std::env::var_os("EGIRL_STARTUP_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_egirl")));
    let debug = egirl.components().any(|c| c.as_os_str() == "debug");
    println!(
        "{} ({}), {runs} runs each; session files {:.1} and {:.1} MiB",
        egirl.display(),
        if debug {
            "a DEBUG build: use --release for figures"
        } else {
            "release"
        },
        jsonl as f64 / (1024.0 * 1024.0),
        long as f64 / (1024.0 * 1024.0)
    );
    let config_arg = config_path.display().to_string();
    let baseline = std::env::var_os("EGIRL_STARTUP_BASELINE").map(|bin| Subject {
        name: "baseline egirl (new session)",
        bin: bin.into(),
        args: vec!["--config".into(), config_arg.clone()],
        home: dir.path().to_path_buf(),
        marker: "? help",
        egirl: true,
    });
    let mut subjects = vec![
        Subject {
            name: "egirl (new session)",
            bin: egirl.clone(),
            args: vec!["--config".into(), config_arg.clone()],
            home: dir.path().to_path_buf(),
            marker: "? help",
            egirl: true,
        },
        Subject {
            name: "egirl (new session, 3 MCP servers)",
            bin: egirl.clone(),
            args: vec!["--config".into(), mcp_path.display().to_string()],
            home: dir.path().to_path_buf(),
            marker: "? help",
            egirl: true,
        },
        Subject {
            name: "egirl --session (2,000 messages)",
            bin: egirl.clone(),
            args: vec![
                "--config".into(),
                config_arg.clone(),
                "--session".into(),
                SESSION_ID.into(),
            ],
            home: dir.path().to_path_buf(),
            marker: "? help",
            egirl: true,
        },
        Subject {
            name: "egirl --session (10,000 messages)",
            bin: egirl.clone(),
            args: vec![
                "--config".into(),
                config_arg,
                "--session".into(),
                LONG_SESSION_ID.into(),
            ],
            home: dir.path().to_path_buf(),
            marker: "? help",
            egirl: true,
        },
    ];
    subjects.extend(baseline);
    let codex_home = tempfile::tempdir().expect("codex home");
    if let Ok(codex) = std::env::var("EGIRL_STARTUP_CODEX") {
        subjects.push(Subject {
            name: "codex (no key: sign-in screen)",
            bin: codex.into(),
            args: Vec::new(),
            home: codex_home.path().to_path_buf(),
            // Its header, on the loading screen and on the sign-in screen.
            marker: "Codex",
            egirl: false,
        });
    }
    let opencode_home = tempfile::tempdir().expect("opencode home");
    if let Ok(opencode) = std::env::var("EGIRL_STARTUP_OPENCODE") {
        subjects.push(Subject {
            name: "opencode (no provider: home screen)",
            bin: opencode.into(),
            args: Vec::new(),
            home: opencode_home.path().to_path_buf(),
            // The prompt's placeholder on its home screen.
            marker: "Ask anything",
            egirl: false,
        });
    }
    // The first run in a fresh home is reported apart: egirl writes its
    // workspace templates then, codex its ~/.codex, opencode its caches.
    for subject in &subjects {
        let first = measure(subject.launch(), subject.marker).await;
        report(
            &format!("{} 1st run", subject.name),
            &[first],
            subject.egirl,
        );
    }
    let mut samples: Vec<Vec<Sample>> = subjects.iter().map(|_| Vec::new()).collect();
    for _ in 0..runs {
        for (subject, samples) in subjects.iter().zip(&mut samples) {
            samples.push(measure(subject.launch(), subject.marker).await);
        }
    }
    for (subject, samples) in subjects.iter().zip(&samples) {
        report(subject.name, samples, subject.egirl);
        if let Some(last) = samples.last().filter(|_| !subject.egirl) {
            let split: Vec<String> = last
                .processes
                .iter()
                .map(|(name, kib)| format!("{name} {:.1} MiB", *kib as f64 / 1024.0))
                .collect();
            println!("    RSS by process (last run): {}", split.join(", "));
        }
    }
}

/// Writes `messages` records of the corpus as session `id`; returns its size.
fn write_session(sessions: &Path, id: &str, messages: usize) -> usize {
    let records = tui_corpus::records(&tui_corpus::turns(tui_corpus::turns_for_records(messages)));
    assert_eq!(records.len(), messages);
    let mut jsonl = String::new();
    for r in &records {
        jsonl.push_str(&serde_json::to_string(r).expect("record"));
        jsonl.push('\n');
    }
    std::fs::write(sessions.join(format!("{id}.jsonl")), &jsonl).expect("session");
    jsonl.len()
}

struct Subject {
    name: &'static str,
    bin: PathBuf,
    args: Vec<String>,
    home: PathBuf,
    marker: &'static str,
    egirl: bool,
}

impl Subject {
    fn launch(&self) -> Launch<'_> {
        Launch {
            bin: self.bin.clone(),
            args: self.args.clone(),
            home: &self.home,
            watch: Vec::new(),
        }
    }
}
