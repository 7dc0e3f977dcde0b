//! Agent overhead per turn: the wall time of a turn through the
//! agent core against a zero-latency fake llama-server, minus the same chat
//! HTTP exchange done directly with `LlamaCpp::chat`; target p50 under 100 µs.
//! Then the parts a turn adds, one by one: prompt build, token counting,
//! persistence and event fan-out.
//!
//! `cargo bench --bench agent_overhead` (figures in docs/benchmarks.md). After
//! criterion, an interleaved run (turn, direct, turn, direct, ...) prints
//! per-turn percentiles, so the difference is taken under the same machine
//! load even on a noisy box (each step after a 2 ms pause, so that it
//! starts, as a user's turn does, from an idle process), then where the
//! time goes inside a turn (from the arrival times of its events) and the
//! tails of the file-system parts.
//! `EGIRL_BENCH_PAIRS=N` sets its length (default 1000).

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use chrono::{Local, Utc};
use criterion::{Criterion, criterion_group};
use egirl::agent::{self, AgentHandle};
use egirl::bus::{EventBus, EventReceiver};
use egirl::config::{Config, ConfigDuration};
use egirl::protocol::{AnswerDelta, Command, ErrorEvent, EventKind, FinalAnswer, Op, Origin};
use egirl::providers::llamacpp::{ChatRequest, LlamaCpp};
use egirl::sessions::{Record, Transcript};
use tokio::runtime::Runtime;
use tokio_util::sync::CancellationToken;

// `#[path]` on an inline module names a directory, so the fake's own
// `mod frames; mod reply;` resolve to tests/support/fake_llama/ as in the tests.
#[path = "../tests/support"]
mod support {
    // The bench uses part of the fake; the suites use the rest.
    #[allow(unused_imports)]
    pub mod fake_llama;
}
use egirl::chat::ChatMessage;
use egirl::providers::StreamChunk;
use support::fake_llama::FakeLlama;

/// Unique session ids and message texts across the whole run: every turn
/// renders a prompt the token cache has not seen, as in real use.
static NEXT: AtomicU64 = AtomicU64::new(0);

fn next_n() -> u64 {
    NEXT.fetch_add(1, Ordering::Relaxed)
}

/// The stretches of a turn, each ending when its event reaches the
/// subscriber: what the agent does between two events (see src/agent/turn.rs).
const PHASES: [&str; 6] = [
    "submit -> turn_started (core + worker hop, session open)",
    "turn_started -> routing (transcript + daily log of the user message)",
    "routing -> first delta (prompt, its size, chat until 1st frame)",
    "first delta -> usage (rest of the stream, reply parsed)",
    "usage -> final (transcript + daily log of the answer)",
    "final -> turn_ended",
];

/// When each event of one turn arrived; `at[0]` is the submit.
struct Marks {
    at: [Instant; PHASES.len() + 1],
}

impl Marks {
    fn total(&self) -> Duration {
        self.at[PHASES.len()] - self.at[0]
    }

    fn phase(&self, i: usize) -> Duration {
        self.at[i + 1].saturating_duration_since(self.at[i])
    }
}

/// Multi-thread runtime with one worker per core, as `egirl` itself runs.
/// `EGIRL_BENCH_WORKERS=N` sets the worker count instead (to tell thread
/// wake-up latency from work).
fn runtime() -> Runtime {
    let mut builder = tokio::runtime::Builder::new_multi_thread();
    if let Some(n) = std::env::var("EGIRL_BENCH_WORKERS")
        .ok()
        .and_then(|v| v.parse().ok())
    {
        builder.worker_threads(n);
    }
    builder.enable_all().build().expect("tokio runtime")
}

fn config_for(fake: &FakeLlama) -> Config {
    let mut config = Config::default();
    config.local.endpoint = fake.url();
    config.local.model = "fake-model".into();
    config.local.timeout = ConfigDuration::from_secs(10);
    config.local.max_tokens = 512;
    config
}

/// The default workspace, its files dated an hour back as in a workspace
/// in use (a file written in the last seconds is read afresh each turn,
/// see `agent::context`; a new workspace per sample would never settle).
fn aged_workspace(dir: &Path) -> PathBuf {
    let (workspace, _) = egirl::workspace::ensure(&dir.join("ws")).expect("workspace");
    let then = std::time::SystemTime::now() - Duration::from_secs(3600);
    for entry in std::fs::read_dir(&workspace).expect("workspace").flatten() {
        if entry.path().is_file()
            && let Ok(file) = std::fs::File::options().write(true).open(entry.path())
        {
            let _ = file.set_modified(then);
        }
    }
    workspace
}

/// A fake server, an agent on it, a workspace with the default templates.
/// Built fresh for every criterion sample, outside the timing, so the fake's
/// request log (it records every body) stays small.
struct Env {
    /// Held so the server lives as long as the agent using it.
    fake: FakeLlama,
    agent: AgentHandle,
    events: EventReceiver,
    direct: LlamaCpp,
    workspace: PathBuf,
    dir: tempfile::TempDir,
}

impl Env {
    async fn start() -> Env {
        Env::start_with(|_| {}).await
    }

    async fn start_with(tweak: impl FnOnce(&mut Config)) -> Env {
        let fake = FakeLlama::start().await;
        let mut config = config_for(&fake);
        tweak(&mut config);
        let dir = tempfile::tempdir().expect("temp dir");
        let workspace = aged_workspace(dir.path());
        let direct = LlamaCpp::new(&config.local);
        let (agent, _task) = agent::spawn(config, workspace.clone(), Vec::new());
        let events = agent.bus.subscribe();
        let mut env = Env {
            fake,
            agent,
            events,
            direct,
            workspace,
            dir,
        };
        // Warm both paths: /props (read once per core), connection pools.
        env.turn(&format!("warm-{}", next_n()), "warm up").await;
        env.direct_chat(&env.request("warm up")).await;
        env
    }

    /// One turn: submit, then wait for this session's `turn_ended`.
    async fn turn(&mut self, session: &str, text: &str) -> Marks {
        let submitted = Instant::now();
        assert!(self.agent.submit(Op::UserMessage {
            session: session.to_string(),
            origin: Origin::Cli,
            text: text.to_string(),
            images: Vec::new(),
        }));
        let marks = self.wait_turn_end(session, submitted).await;
        // What the worker does after `turn_ended` (the daily log, the next
        // session's file) is off the turn but not free: it is waited for
        // here, outside the timing, so it never lands in the next step's.
        self.agent.idle().await;
        marks
    }

    /// The same, on a session whose in-memory history is cleared first
    /// (the worker and its open transcript are reused).
    async fn turn_cleared(&mut self, session: &str, text: &str) -> Marks {
        self.clear(session);
        self.turn(session, text).await
    }

    fn clear(&self, session: &str) {
        assert!(self.agent.submit(Op::Command {
            session: session.to_string(),
            command: Command::Clear,
        }));
    }

    async fn wait_turn_end(&mut self, session: &str, submitted: Instant) -> Marks {
        let mut marks = Marks {
            at: [submitted; PHASES.len() + 1],
        };
        let mut answered = false;
        loop {
            let event = self.events.recv().await.expect("the bus is open");
            let now = Instant::now();
            if event.session != session {
                continue;
            }
            let phase = match &event.kind {
                EventKind::TurnStarted(_) => Some(1),
                EventKind::Routing(_) => Some(2),
                EventKind::Delta(_) => Some(3),
                EventKind::Usage(_) => Some(4),
                EventKind::Final(_) => Some(5),
                EventKind::TurnEnded(_) => Some(6),
                _ => None,
            };
            if let Some(i) = phase {
                marks.at[i] = now;
            }
            match event.kind {
                EventKind::Final(FinalAnswer { text }) => {
                    assert_eq!(text, "ok", "unexpected final answer");
                    answered = true;
                }
                EventKind::Error(ErrorEvent { message }) => panic!("turn failed: {message}"),
                EventKind::TurnEnded(_) => break,
                _ => {}
            }
        }
        assert!(answered, "the turn ended without a final answer");
        marks
    }

    /// The chat request the agent sends for a first turn saying `typed`:
    /// system prompt, the user message, the built-in tools.
    fn request(&self, typed: &str) -> ChatRequest {
        ChatRequest {
            messages: vec![
                ChatMessage::system(agent::system_prompt(&self.workspace)),
                ChatMessage::user(agent::user_message(typed, Local::now())),
            ],
            tools: egirl::tools::specs().into(),
            max_tokens: 512,
            slot: None,
            images: Default::default(),
        }
    }

    async fn direct_chat(&self, request: &ChatRequest) {
        let cancel = CancellationToken::new();
        let mut on_chunk = |_chunk: StreamChunk| {};
        let response = self
            .direct
            .chat(request, &cancel, &mut on_chunk)
            .await
            .expect("direct chat");
        assert_eq!(response.content, "ok");
    }
}

/// Runs `iters` timed iterations on a fresh `Env`, timing only `step`.
fn timed<F>(rt: &Runtime, iters: u64, mut step: F) -> Duration
where
    F: for<'a> FnMut(&'a mut Env, u64) -> std::pin::Pin<Box<dyn Future<Output = Duration> + 'a>>,
{
    rt.block_on(async {
        let mut env = Env::start().await;
        let mut total = Duration::ZERO;
        for _ in 0..iters {
            total += step(&mut env, next_n()).await;
        }
        total
    })
}

fn turn_benches(c: &mut Criterion) {
    let rt = runtime();
    let mut group = c.benchmark_group("turn");
    group.bench_function("agent_turn_fresh_session", |b| {
        b.iter_custom(|iters| {
            timed(&rt, iters, |env, n| {
                Box::pin(async move {
                    let (session, text) = (format!("bench-{n}"), format!("hello {n}"));
                    let start = Instant::now();
                    env.turn(&session, &text).await;
                    start.elapsed()
                })
            })
        })
    });
    group.bench_function("agent_turn_cleared_session", |b| {
        b.iter_custom(|iters| {
            timed(&rt, iters, |env, n| {
                Box::pin(async move {
                    let text = format!("hello {n}");
                    let start = Instant::now();
                    env.turn_cleared("bench-steady", &text).await;
                    start.elapsed()
                })
            })
        })
    });
    group.bench_function("direct_chat", |b| {
        b.iter_custom(|iters| {
            timed(&rt, iters, |env, n| {
                Box::pin(async move {
                    let request = env.request(&format!("hello {n}"));
                    let start = Instant::now();
                    env.direct_chat(&request).await;
                    start.elapsed()
                })
            })
        })
    });
    group.finish();
}

fn prompt_benches(c: &mut Criterion) {
    let dir = tempfile::tempdir().expect("temp dir");
    let workspace = aged_workspace(dir.path());
    let mut group = c.benchmark_group("prompt");
    group.bench_function("system_prompt", |b| {
        b.iter(|| agent::system_prompt(std::hint::black_box(&workspace)))
    });
    group.bench_function("user_message", |b| {
        b.iter(|| agent::user_message(std::hint::black_box("hello there"), Local::now()))
    });
    group.bench_function("tool_specs", |b| b.iter(egirl::tools::specs));
    // What a turn offers under the default config (Chromium and claude
    // looked up on PATH, the answer kept a minute).
    let config = Config::default();
    group.bench_function("tools_offered", |b| {
        b.iter(|| egirl::tools::offered(std::hint::black_box(&config)))
    });
    group.finish();
}

fn token_benches(c: &mut Criterion) {
    let rt = runtime();
    let mut group = c.benchmark_group("tokens");
    // A new prompt each time: /apply-template + /tokenize, as on every real turn.
    group.bench_function("count_prompt_uncached", |b| {
        b.iter_custom(|iters| {
            timed(&rt, iters, |env, n| {
                Box::pin(async move {
                    let request = env.request(&format!("hello {n}"));
                    let start = Instant::now();
                    env.direct.count_prompt(&request).await.expect("count");
                    start.elapsed()
                })
            })
        })
    });
    // The same prompt again: /apply-template, then the cached /tokenize count.
    group.bench_function("count_prompt_cached", |b| {
        b.iter_custom(|iters| {
            timed(&rt, iters, |env, _| {
                Box::pin(async move {
                    let request = env.request("hello");
                    let start = Instant::now();
                    env.direct.count_prompt(&request).await.expect("count");
                    start.elapsed()
                })
            })
        })
    });
    group.finish();
}

fn record(text: &str) -> Record {
    Record {
        ts: Utc::now(),
        origin: Origin::Cli,
        typed: Some(text.to_string()),
        provider: None,
        message: ChatMessage::user(agent::user_message(text, Local::now())),
        compaction: None,
        details: Default::default(),
    }
}

fn persistence_benches(c: &mut Criterion) {
    let dir = tempfile::tempdir().expect("temp dir");
    let workspace: &Path = dir.path();
    let mut group = c.benchmark_group("persist");
    let (mut transcript, _) = Transcript::open(workspace, "bench").expect("transcript");
    let one = record("hello there");
    group.bench_function("transcript_append", |b| {
        b.iter(|| {
            transcript
                .append(std::hint::black_box(&one))
                .expect("append")
        })
    });
    group.bench_function("transcript_open_new", |b| {
        b.iter(|| Transcript::open(workspace, &format!("open-{}", next_n())).expect("open"))
    });
    group.bench_function("daily_append", |b| {
        b.iter(|| {
            egirl::memory::daily::append(workspace, Local::now(), "user", "cli", "hello there")
                .expect("daily log")
        })
    });
    group.finish();
}

fn fanout_benches(c: &mut Criterion) {
    let mut group = c.benchmark_group("events");
    for subscribers in [1usize, 3] {
        let bus = EventBus::new();
        let mut receivers: Vec<_> = (0..subscribers).map(|_| bus.subscribe()).collect();
        group.bench_function(format!("emit_{subscribers}_subscribers"), |b| {
            b.iter_custom(|iters| {
                let start = Instant::now();
                for _ in 0..iters {
                    bus.emit(
                        "bench-session",
                        &Origin::Cli,
                        EventKind::Delta(AnswerDelta {
                            text: "ok".to_string(),
                        }),
                    );
                }
                let elapsed = start.elapsed();
                // Drained outside the timing. Nobody reads during the
                // batch, so each delta after the first is merged into the
                // one queued (a lagging surface's path, src/protocol/queue.rs).
                for rx in &mut receivers {
                    while rx.try_recv().is_ok() {}
                }
                elapsed
            })
        });
        // A surface that keeps up: each event is read before the next is
        // emitted, so it is queued on its own (emit and read both timed).
        group.bench_function(format!("emit_and_read_{subscribers}_subscribers"), |b| {
            b.iter(|| {
                bus.emit(
                    "bench-session",
                    &Origin::Cli,
                    EventKind::Delta(AnswerDelta {
                        text: "ok".to_string(),
                    }),
                );
                for rx in &mut receivers {
                    while rx.try_recv().is_ok() {}
                }
            })
        });
    }
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .sample_size(30)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(4));
    targets = turn_benches, prompt_benches, token_benches, persistence_benches, fanout_benches
}

/// What a user's turn starts from: an idle process, its runtime's threads
/// parked. Without a pause a step that leaves a thread awake (the work
/// after a turn, a task it spawned) speeds up the step timed after it,
/// the direct exchange included, and the overheads move with it.
const SETTLE: Duration = Duration::from_millis(2);

async fn settle() {
    tokio::time::sleep(SETTLE).await;
}

/// Pairs run on one agent and fake server before both start afresh.
const ENV_PAIRS: usize = 250;

/// Turn, direct, turn, direct, ...: per-turn percentiles and the overhead
/// per pair, under the same machine load, then where a turn's time goes.
fn interleaved(pairs: usize) -> Vec<tempfile::TempDir> {
    let rt = runtime();
    let mut spent = Vec::new();
    let (fresh, directs, cleared, counts) = rt.block_on(async {
        let mut fresh = Vec::with_capacity(pairs);
        let mut directs = Vec::with_capacity(pairs);
        let mut cleared = Vec::with_capacity(pairs);
        let mut counts = Vec::with_capacity(pairs);
        // A fresh fake every `ENV_PAIRS` pairs bounds its request log.
        let mut env = Env::start().await;
        for i in 0..pairs {
            if i > 0 && i % ENV_PAIRS == 0 {
                let old = std::mem::replace(&mut env, Env::start().await);
                // Deleted after the run: deleting hundreds of files slows
                // the creation of the next ones on ext4 for half a minute
                // (docs/benchmarks.md), and no user's turn follows that.
                spent.push(old.dir);
            }
            let n = next_n();
            let text = format!("hello {n}");
            settle().await;
            fresh.push(env.turn(&format!("bench-{n}"), &text).await);

            let request = env.request(&text);
            settle().await;
            let start = Instant::now();
            env.direct_chat(&request).await;
            directs.push(start.elapsed());

            let request = env.request(&format!("count {n}"));
            settle().await;
            let start = Instant::now();
            env.direct.count_prompt(&request).await.expect("count");
            counts.push(start.elapsed());

            env.clear("bench-steady");
            settle().await;
            cleared.push(env.turn("bench-steady", &format!("hi {n}")).await);
        }
        (fresh, directs, cleared, counts)
    });
    let totals = |marks: &[Marks]| -> Vec<Duration> { marks.iter().map(Marks::total).collect() };
    let overhead = |marks: &[Marks]| -> Vec<Duration> {
        marks
            .iter()
            .zip(&directs)
            .map(|(m, d)| m.total().saturating_sub(*d))
            .collect()
    };
    println!();
    println!("interleaved run, {pairs} iterations (times per iteration, µs)");
    print_header("");
    for (name, values) in [
        ("turn through the core (fresh session)", totals(&fresh)),
        ("turn through the core (cleared session)", totals(&cleared)),
        ("direct LlamaCpp::chat", directs.clone()),
        ("overhead per pair (fresh - direct)", overhead(&fresh)),
        ("overhead per pair (cleared - direct)", overhead(&cleared)),
        (
            "count_prompt, new prompt (/apply-template + /tokenize)",
            counts.clone(),
        ),
    ] {
        print_row(name, &values);
    }
    let (t, c, d) = (
        Stats::of(&totals(&fresh)),
        Stats::of(&totals(&cleared)),
        Stats::of(&directs),
    );
    println!(
        "overhead = p50(turn) - p50(direct): fresh session {:.1} µs, cleared session {:.1} µs (target < 100 µs)",
        t.p50 - d.p50,
        c.p50 - d.p50
    );
    // Each stretch of pairs on one agent and fake: a figure that drifts
    // from the first stretch to the last is the machine (or something
    // that grows), not the turn.
    let stretch = |marks: &[Marks], from: usize, to: usize| {
        Stats::of(&totals(&marks[from..to])).p50 - Stats::of(&directs[from..to]).p50
    };
    let blocks: Vec<String> = (0..pairs)
        .step_by(ENV_PAIRS)
        .map(|from| {
            let to = (from + ENV_PAIRS).min(pairs);
            format!(
                "{:.0} / {:.0}",
                stretch(&fresh, from, to),
                stretch(&cleared, from, to)
            )
        })
        .collect();
    println!(
        "overhead by stretch of {ENV_PAIRS} pairs (fresh / cleared, µs): {}",
        blocks.join(", ")
    );
    for (name, marks) in [("fresh session", &fresh), ("cleared session", &cleared)] {
        println!();
        print_header(&format!("inside a turn, {name}"));
        for (i, phase) in PHASES.iter().enumerate() {
            let values: Vec<Duration> = marks.iter().map(|m| m.phase(i)).collect();
            print_row(phase, &values);
        }
    }
    spent
}

/// The file-system parts one by one, timed singly: criterion's figures are
/// batch means and hide a slow tail.
fn fs_tails(runs: usize) {
    let dir = tempfile::tempdir().expect("temp dir");
    let workspace = aged_workspace(dir.path());
    let (mut transcript, _) = Transcript::open(&workspace, "tails").expect("transcript");
    let one = record("hello there");
    let time = |f: &mut dyn FnMut()| -> Vec<Duration> {
        (0..runs)
            .map(|_| {
                let start = Instant::now();
                f();
                start.elapsed()
            })
            .collect()
    };
    println!();
    print_header(&format!("file-system parts, {runs} single calls each"));
    let open = time(&mut || {
        Transcript::open(&workspace, &format!("tail-{}", next_n())).expect("open");
    });
    print_row("Transcript::open (new session file)", &open);
    let append = time(&mut || transcript.append(&one).expect("append"));
    print_row("Transcript::append (one record)", &append);
    let daily = time(&mut || {
        egirl::memory::daily::append(&workspace, Local::now(), "user", "cli", "hello there")
            .expect("daily log")
    });
    print_row("memory::daily::append", &daily);
    let prompt = time(&mut || {
        std::hint::black_box(agent::system_prompt(&workspace));
    });
    print_row(
        "agent::system_prompt (6 workspace files, kept while unchanged)",
        &prompt,
    );
    let config = Config::default();
    let offered = time(&mut || {
        std::hint::black_box(egirl::tools::offered(&config));
    });
    print_row(
        "tools::offered (default config, PATH lookups kept)",
        &offered,
    );
    let fresh = time(&mut || {
        let browser = &config.tools.browser;
        std::hint::black_box(browser.chromium().is_ok());
        std::hint::black_box(config.delegate.claude_code.executable().is_ok());
    });
    print_row(
        "Chromium + claude looked up on PATH (as every turn did)",
        &fresh,
    );
}

fn print_header(title: &str) {
    println!(
        "{title:<72} {:>9} {:>9} {:>9} {:>9}",
        "p50", "p90", "p99", "mean"
    );
}

fn print_row(name: &str, values: &[Duration]) {
    let s = Stats::of(values);
    println!(
        "{name:<72} {:>9.1} {:>9.1} {:>9.1} {:>9.1}",
        s.p50, s.p90, s.p99, s.mean
    );
}

struct Stats {
    p50: f64,
    p90: f64,
    p99: f64,
    mean: f64,
}

impl Stats {
    fn of(values: &[Duration]) -> Stats {
        let mut us: Vec<f64> = values.iter().map(|d| d.as_secs_f64() * 1e6).collect();
        us.sort_by(f64::total_cmp);
        let at = |q: f64| us[((us.len() - 1) as f64 * q).round() as usize];
        Stats {
            p50: at(0.5),
            p90: at(0.9),
            p99: at(0.99),
            mean: us.iter().sum::<f64>() / us.len() as f64,
        }
    }
}

/// Criterion, then the interleaved run. The interleaved run is skipped in
/// test mode (`cargo test --benches` runs each bench once, without
/// `--bench`) and when a filter names only other benchmarks.
fn main() {
    benches();
    Criterion::default().configure_from_args().final_summary();
    let args: Vec<String> = std::env::args().skip(1).collect();
    if !args.iter().any(|a| a == "--bench") || args.iter().any(|a| a == "--list") {
        return;
    }
    if let Some(filter) = positional_filter(&args)
        && !"interleaved turn".contains(filter.as_str())
    {
        return;
    }
    let pairs = std::env::var("EGIRL_BENCH_PAIRS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1000);
    let spent = interleaved(pairs);
    fs_tails(pairs.max(1) * 2);
    held_sessions(200);
    drop(spent);
}

/// What sessions nobody uses any more hold: `sessions` sessions of one
/// turn each (a 16 KB message, as a pasted file), then the heap in use
/// once they are all over, with every session kept in memory and with
/// each let go after 100 ms of nothing to do (`[agent]
/// session_idle_release`).
fn held_sessions(sessions: usize) {
    let rt = runtime();
    println!();
    println!("{sessions} sessions of one 16 KB turn each, heap in use after them (MiB)");
    for release in [Duration::ZERO, Duration::from_millis(100)] {
        let (before, after, logged) = rt.block_on(async {
            let mut env = Env::start_with(|c| {
                c.agent.session_idle_release = ConfigDuration(release);
            })
            .await;
            let pasted = "let x = 1; // pasted\n".repeat(16 * 1024 / 21);
            let before = heap_in_use();
            for i in 0..sessions {
                env.turn(&format!("held-{}", next_n()), &format!("{i}: {pasted}"))
                    .await;
            }
            // Past the release, and the heap's free pages handed back.
            tokio::time::sleep(Duration::from_millis(600)).await;
            // The fake keeps every request body it was sent (for the tests).
            let logged: usize = env
                .fake
                .requests()
                .iter()
                .map(|b| b.to_string().len())
                .sum();
            (before, heap_in_use(), logged)
        });
        let mib = |b: usize| b as f64 / (1024.0 * 1024.0);
        println!(
            "  session_idle_release {:>6?}: {:.1} before, {:.1} after (+{:.1}; the fake's log of request bodies: {:.1} as JSON text)",
            release,
            mib(before),
            mib(after),
            mib(after.saturating_sub(before)),
            mib(logged)
        );
    }
}

/// Bytes the allocator has handed out and not had back (glibc: the
/// arenas' chunks and the mapped ones).
fn heap_in_use() -> usize {
    // SAFETY: mallinfo2 only reads the allocator's counters.
    let info = unsafe { libc::mallinfo2() };
    info.uordblks + info.hblkhd
}

/// The name filter criterion was given, if any.
fn positional_filter(args: &[String]) -> Option<String> {
    const TAKES_VALUE: [&str; 14] = [
        "--measurement-time",
        "--warm-up-time",
        "--sample-size",
        "--save-baseline",
        "--baseline",
        "--baseline-lenient",
        "--load-baseline",
        "--output-format",
        "--color",
        "--profile-time",
        "--noise-threshold",
        "--confidence-level",
        "--significance-level",
        "--nresamples",
    ];
    let mut skip = false;
    for arg in args {
        if skip {
            skip = false;
            continue;
        }
        if TAKES_VALUE.contains(&arg.as_str()) {
            skip = true;
        } else if !arg.starts_with('-') {
            return Some(arg.clone());
        }
    }
    None
}
