//! The TUI event loop in real time, through the real
//! `driver::drive` on ratatui's `TestBackend` with the wall clock (not
//! tokio's paused time):
//!
//! - **streaming**: deltas arrive at 5,000 tokens/s (a token ~4 bytes;
//!   prose, lists, tables and code fences) for 10 s, then `usage`, `final`
//!   and `turn_ended` as the core sends them. Reported: redraws (the cap
//!   is 60/s, so at most 601 in 10 s), the backlog (events sent but not
//!   yet applied) sampled every millisecond, and the time from sending the
//!   last delta to its text being in a drawn frame.
//! - **idle**: nothing happens for 5 s after the first frame; redraws and
//!   the CPU time the process used meanwhile.
//!
//! Each runs on an empty transcript and on the 2,000-message one of the
//! render bench. `cargo bench --bench tui_loop` (about 40 s) prints a
//! table; figures in docs/benchmarks.md. Not criterion: each figure is one
//! 10-second (or 5-second) run, not a per-iteration time.
//!
//! How the backlog is seen without touching the loop: each delta's text is
//! allocated with a capacity no other allocation in this process has, and
//! the global allocator counts the frees of that size. An event is freed
//! right after `App::apply`, so sent − freed is what waits in the channel.

use std::alloc::{GlobalAlloc, Layout, System};
use std::io;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use crossterm::event::Event as TermEvent;
use egirl::bus::{EventBus, EventReceiver};
use egirl::protocol::{
    AnswerDelta, Event, EventKind, FinalAnswer, Origin, Submission, TokenUsage, TurnEnded,
    TurnStarted,
};
use egirl::surfaces::tui::driver::{AppEvent, Host, drive};
use egirl::surfaces::tui::{App, AppOptions, Effect, Theme};
use ratatui::Terminal;
use tokio::sync::mpsc;

#[path = "../tests/support/tui_corpus.rs"]
#[allow(dead_code)] // the start-up measurement uses the session records
mod corpus;
#[path = "tui_loop/probe.rs"]
mod probe;

use probe::Probe;

const WIDTH: u16 = 200;
const HEIGHT: u16 = 50;
const TOKENS_PER_SEC: u64 = 5000;
const STREAM_FOR: Duration = Duration::from_secs(10);
const IDLE_FOR: Duration = Duration::from_secs(5);
/// The last words of the streamed answer: no spaces, so wrapping never
/// splits it, and found nowhere else on screen.
const MARKER: &str = "done-7f3a.";
/// The capacity of every delta's text (see the module comment).
const TAG_BYTES: usize = 4099;

struct CountingAlloc;

static TAGGED_FREES: AtomicU64 = AtomicU64::new(0);

// SAFETY: every call is forwarded to the system allocator unchanged; the
// counter is a side effect only.
unsafe impl GlobalAlloc for CountingAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract is passed on as is.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        if layout.size() == TAG_BYTES {
            TAGGED_FREES.fetch_add(1, Ordering::Relaxed);
        }
        // SAFETY: as above.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if layout.size() == TAG_BYTES && new_size != TAG_BYTES {
            TAGGED_FREES.fetch_add(1, Ordering::Relaxed);
        }
        // SAFETY: as above.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOC: CountingAlloc = CountingAlloc;

/// The loop's host: the core is not there, effects are ignored.
struct NoCore;

impl Host<Probe> for NoCore {
    fn submit(&mut self, _: Submission) -> bool {
        true
    }

    fn effect(&mut self, _: &mut Terminal<Probe>, _: Effect) -> anyhow::Result<()> {
        Ok(())
    }
}

fn app(events: &[Event]) -> App {
    let mut app = App::new(AppOptions {
        session: corpus::SESSION.into(),
        theme: Theme::default(),
        theme_dirs: Vec::new(),
        model: "qwen3-8b".into(),
        endpoint: "http://127.0.0.1:8080".into(),
        context_length: 32768,
    });
    for e in events {
        app.apply(e.clone());
    }
    app
}

fn ev(kind: EventKind) -> Event {
    Event {
        agent: None,
        submission: None,
        session: corpus::SESSION.into(),
        origin: Origin::Tui,
        kind,
    }
}

/// Runs `drive` on this thread (the App is not `Send`) until `Quit`.
fn run_loop(
    app: &mut App,
    core: EventReceiver,
    internal: mpsc::UnboundedReceiver<AppEvent>,
    probe: Probe,
) -> u64 {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .expect("runtime");
    let mut term = Terminal::new(probe).expect("terminal");
    let input = futures_util::stream::pending::<io::Result<TermEvent>>();
    rt.block_on(drive(&mut term, app, input, core, internal, &mut NoCore))
        .expect("loop")
}

struct StreamResult {
    frames_in_window: usize,
    frames_total: u64,
    sent: u64,
    /// Max backlog per second of the stream.
    backlog_by_second: Vec<i64>,
    latency: Option<Duration>,
}

fn stream(events: &[Event]) -> StreamResult {
    let total_tokens = TOKENS_PER_SEC * STREAM_FOR.as_secs();
    let text = corpus::long_answer(total_tokens as usize * 4, &format!(" {MARKER}"));
    let tokens: Vec<String> = corpus::tokens(&text)
        .into_iter()
        .take(total_tokens as usize - 1)
        .map(str::to_string)
        .collect();
    // The rest of the text (the marker included) is the last delta.
    let consumed: usize = tokens.iter().map(String::len).sum();
    let last = text[consumed..].to_string();

    let mut app = app(events);
    let core_tx = EventBus::new();
    let core = core_tx.subscribe();
    let (quit_tx, internal) = mpsc::unbounded_channel();
    let sent = Arc::new(AtomicU64::new(0));
    let streaming = Arc::new(AtomicBool::new(true));
    let probe = Probe::new(WIDTH, HEIGHT, MARKER);
    let watch = probe.watch();
    let start = Instant::now();
    let frees_before = TAGGED_FREES.load(Ordering::Relaxed);

    let producer = {
        let sent = sent.clone();
        let streaming = streaming.clone();
        let watch = watch.clone();
        std::thread::spawn(move || {
            core_tx.send(ev(EventKind::TurnStarted(TurnStarted {
                text: "write it all up".into(),
                ..Default::default()
            })));
            let tagged = |t: &str| {
                let mut s = String::with_capacity(TAG_BYTES);
                s.push_str(t);
                s
            };
            // Paced against the start, not the previous send, so the rate
            // stays 5,000/s however late a wake-up is.
            let mut i = 0usize;
            while i < tokens.len() {
                let due = (start.elapsed().as_micros() as u64 * TOKENS_PER_SEC / 1_000_000)
                    .min(tokens.len() as u64) as usize;
                while i < due {
                    core_tx.send(ev(EventKind::Delta(AnswerDelta {
                        text: tagged(&tokens[i]),
                    })));
                    sent.fetch_add(1, Ordering::Relaxed);
                    i += 1;
                }
                std::thread::sleep(Duration::from_micros(500));
            }
            let wait = (start + STREAM_FOR).saturating_duration_since(Instant::now());
            std::thread::sleep(wait);
            core_tx.send(ev(EventKind::Delta(AnswerDelta {
                text: tagged(&last),
            })));
            sent.fetch_add(1, Ordering::Relaxed);
            watch.last_sent(Instant::now());
            for kind in [
                EventKind::Usage(TokenUsage {
                    provider: "llamacpp".into(),
                    model: "qwen3-8b".into(),
                    input_tokens: 4000,
                    output_tokens: total_tokens,
                    cached_tokens: 3500,
                    cost_usd: 0.0,
                    tokens_per_sec: Some(TOKENS_PER_SEC as f64),
                    latency_ms: None,
                    endpoint: None,
                    context: None,
                }),
                EventKind::Final(FinalAnswer { text }),
                EventKind::TurnEnded(TurnEnded { interrupted: false }),
            ] {
                core_tx.send(ev(kind));
            }
            streaming.store(false, Ordering::Relaxed);
            // Quit once the last delta is on screen (or it never will be).
            let give_up = Instant::now() + Duration::from_secs(30);
            while !watch.seen() && Instant::now() < give_up {
                std::thread::sleep(Duration::from_millis(5));
            }
            std::thread::sleep(Duration::from_millis(200));
            let _ = quit_tx.send(AppEvent::Quit);
            // Hold the channel open until the loop has quit.
            std::thread::sleep(Duration::from_millis(500));
            drop(core_tx);
        })
    };

    let sampler = {
        let sent = sent.clone();
        std::thread::spawn(move || {
            let mut by_second = vec![0i64; STREAM_FOR.as_secs() as usize + 1];
            while streaming.load(Ordering::Relaxed) {
                let freed = TAGGED_FREES.load(Ordering::Relaxed) - frees_before;
                let backlog = sent.load(Ordering::Relaxed) as i64 - freed as i64;
                let s = (start.elapsed().as_secs() as usize).min(by_second.len() - 1);
                by_second[s] = by_second[s].max(backlog);
                std::thread::sleep(Duration::from_millis(1));
            }
            by_second
        })
    };

    let frames_total = run_loop(&mut app, core, internal, probe);
    producer.join().expect("producer");
    let backlog_by_second = sampler.join().expect("sampler");
    let end = start + STREAM_FOR;
    StreamResult {
        frames_in_window: watch.frame_times().iter().filter(|t| **t <= end).count(),
        frames_total,
        sent: sent.load(Ordering::Relaxed),
        backlog_by_second,
        latency: watch.latency(),
    }
}

struct IdleResult {
    frames_after_first: u64,
    cpu: Duration,
}

fn idle(events: &[Event]) -> IdleResult {
    let mut app = app(events);
    let _core_tx = EventBus::new();
    let core = _core_tx.subscribe();
    let (quit_tx, internal) = mpsc::unbounded_channel();
    let probe = Probe::new(WIDTH, HEIGHT, MARKER);
    let watch = probe.watch();
    let monitor = std::thread::spawn(move || {
        while watch.frames() == 0 {
            std::thread::sleep(Duration::from_millis(1));
        }
        let (frames, cpu) = (watch.frames(), cpu_time());
        std::thread::sleep(IDLE_FOR);
        let result = IdleResult {
            frames_after_first: watch.frames() - frames,
            cpu: cpu_time().saturating_sub(cpu),
        };
        let _ = quit_tx.send(AppEvent::Quit);
        result
    });
    run_loop(&mut app, core, internal, probe);
    monitor.join().expect("monitor")
}

/// User + system CPU time of the whole process so far.
fn cpu_time() -> Duration {
    // SAFETY: a zeroed rusage is a valid out-parameter.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: RUSAGE_SELF with a valid pointer.
    if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) } != 0 {
        return Duration::ZERO;
    }
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    tv(usage.ru_utime) + tv(usage.ru_stime)
}

fn main() {
    // `cargo test --benches` runs each bench binary without `--bench`:
    // a 30-second run has no place there.
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    let turns = corpus::turns(corpus::turns_for_entries(2000));
    let loaded = corpus::events(&turns);
    let cases: [(&str, &[Event]); 2] = [("empty transcript", &[]), ("2,000 messages", &loaded)];
    let cap = STREAM_FOR.as_secs() * 60 + 1;
    println!("streaming: {TOKENS_PER_SEC} tokens/s for {STREAM_FOR:?} at {WIDTH}x{HEIGHT}");
    for (name, events) in cases {
        let r = stream(events);
        let secs = &r.backlog_by_second;
        let at = |s: usize| secs.get(s.saturating_sub(1)).copied().unwrap_or(0);
        println!(
            "  {name:<17} redraws {:>3} in 10 s (cap {cap}), {} in all | deltas sent {} | max backlog 0-1 s {:>4}, 4-5 s {:>4}, 9-10 s {:>4}, overall {:>4} | last delta on screen after {}",
            r.frames_in_window,
            r.frames_total,
            r.sent,
            at(1),
            at(5),
            at(10),
            secs.iter().max().copied().unwrap_or(0),
            r.latency
                .map(|d| format!("{:.1} ms", d.as_secs_f64() * 1e3))
                .unwrap_or_else(|| "never".into()),
        );
        println!("    max backlog per second: {secs:?}");
    }
    println!("idle: {IDLE_FOR:?} after the first frame");
    for (name, events) in cases {
        let r = idle(events);
        println!(
            "  {name:<17} redraws {} | CPU time {:.2} ms",
            r.frames_after_first,
            r.cpu.as_secs_f64() * 1e3
        );
    }
}
