//! TUI frame render: a 2,000-message transcript with 200 fenced
//! code blocks (ten languages, headings, lists, tables, inline code) drawn
//! at 200x50 on ratatui's `TestBackend` through the real `draw()`; target
//! p50 under 2 ms once the per-width caches are warm. Also the first frame
//! with cold caches, and a frame while an answer streams in.
//!
//! The App is built as the core feeds it: `App::new`, then `app.apply` of
//! each event (`turn_started`, `routing`, `tool_call`, `tool_result`, the
//! answer as ~4-byte deltas, `usage`, `final`, `turn_ended`).
//!
//! `cargo bench --bench tui_render` (figures in docs/benchmarks.md). After
//! criterion it times single frames and prints percentiles.

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{BatchSize, Criterion, SamplingMode, criterion_group};
use egirl::protocol::{AnswerDelta, Event, EventKind, Origin, TurnEnded, TurnStarted};
use egirl::surfaces::tui::layout::{Side, layout};
use egirl::surfaces::tui::{App, AppOptions, Theme, draw, panes};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;

#[path = "../tests/support/tui_corpus.rs"]
#[allow(dead_code)] // the start-up measurement uses the session records
mod corpus;

const WIDTH: u16 = 200;
const HEIGHT: u16 = 50;
const MESSAGES: usize = 2000;
/// Deltas between two frames at 5,000 tokens/s and 60 frames/s.
const DELTAS_PER_FRAME: usize = 83;
/// Frames in one streamed answer: 10 s at 60 frames/s.
const STREAM_FRAMES: usize = 600;

fn empty_app() -> App {
    App::new(AppOptions {
        session: corpus::SESSION.into(),
        theme: Theme::default(),
        theme_dirs: Vec::new(),
        model: "qwen3-8b".into(),
        endpoint: "http://127.0.0.1:8080".into(),
        context_length: 32768,
    })
}

fn loaded(events: &[Event]) -> App {
    let mut app = empty_app();
    for e in events {
        app.apply(e.clone());
    }
    assert_eq!(app.conversation.entries.len(), MESSAGES, "transcript size");
    app
}

fn terminal() -> Terminal<TestBackend> {
    Terminal::new(TestBackend::new(WIDTH, HEIGHT)).expect("test terminal")
}

fn frame(term: &mut Terminal<TestBackend>, app: &App) {
    term.draw(|f| draw(app, f)).expect("draw");
}

fn corpus_events() -> Vec<Event> {
    let turns = corpus::turns(corpus::turns_for_entries(MESSAGES));
    let fences = turns
        .iter()
        .map(|t| t.answer.matches("```").count() / 2)
        .sum::<usize>();
    assert_eq!(fences, corpus::CODE_BLOCKS, "code blocks");
    corpus::events(&turns)
}

/// A streaming answer on top of the loaded transcript: `next` applies one
/// frame's worth of deltas; every `STREAM_FRAMES` frames the answer ends
/// (untimed) and a new one starts, so the open message stays the size of
/// a 10-second answer rather than growing for as long as criterion runs.
struct Streaming {
    app: App,
    tokens: Vec<String>,
    next_token: usize,
    frames: usize,
}

impl Streaming {
    fn new(events: &[Event]) -> Self {
        let text = corpus::long_answer(STREAM_FRAMES * DELTAS_PER_FRAME * 4, " done-7f3a.");
        let tokens = corpus::tokens(&text)
            .into_iter()
            .map(str::to_string)
            .collect();
        let mut s = Self {
            app: loaded(events),
            tokens,
            next_token: 0,
            frames: 0,
        };
        s.start();
        s
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

    fn start(&mut self) {
        self.app.apply(Self::ev(EventKind::TurnStarted(TurnStarted {
            text: "write it all up".into(),
            ..Default::default()
        })));
        self.next_token = 0;
        self.frames = 0;
    }

    /// Untimed: ends the answer when it is long enough.
    fn maybe_restart(&mut self, term: &mut Terminal<TestBackend>) {
        if self.frames < STREAM_FRAMES {
            return;
        }
        self.app.apply(Self::ev(EventKind::TurnEnded(TurnEnded {
            interrupted: false,
        })));
        frame(term, &self.app);
        self.start();
    }

    /// Timed: one frame's deltas, then the frame.
    fn step(&mut self, term: &mut Terminal<TestBackend>) {
        for _ in 0..DELTAS_PER_FRAME {
            let text = self.tokens[self.next_token % self.tokens.len()].clone();
            self.next_token += 1;
            self.app
                .apply(Self::ev(EventKind::Delta(AnswerDelta { text })));
        }
        frame(term, &self.app);
        self.frames += 1;
    }
}

fn render_benches(c: &mut Criterion) {
    let events = corpus_events();
    let mut g = c.benchmark_group("tui_render");

    let app = loaded(&events);
    let mut term = terminal();
    frame(&mut term, &app);
    g.bench_function("warm_frame", |b| {
        b.iter(|| frame(&mut term, black_box(&app)))
    });
    drop(app);

    let mut streaming = Streaming::new(&events);
    let mut term = terminal();
    frame(&mut term, &streaming.app);
    g.bench_function("streaming_frame", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                streaming.maybe_restart(&mut term);
                let t = Instant::now();
                streaming.step(&mut term);
                total += t.elapsed();
            }
            total
        })
    });
    drop(streaming);

    g.sample_size(10)
        .sampling_mode(SamplingMode::Flat)
        .measurement_time(Duration::from_secs(20));
    g.bench_function("cold_first_frame", |b| {
        b.iter_batched(
            || (loaded(&events), terminal()),
            |(app, mut term)| {
                frame(&mut term, &app);
                (app, term)
            },
            BatchSize::PerIteration,
        )
    });
    g.finish();
}

criterion_group!(benches, render_benches);

fn percentiles(label: &str, mut samples: Vec<Duration>) {
    samples.sort();
    let at = |p: f64| {
        let i = ((samples.len() as f64 * p).ceil() as usize).clamp(1, samples.len()) - 1;
        samples[i].as_secs_f64() * 1e3
    };
    println!(
        "{label:<34} n={:<5} p50 {:>8.3} ms  p90 {:>8.3} ms  p99 {:>8.3} ms  max {:>8.3} ms",
        samples.len(),
        at(0.5),
        at(0.9),
        at(0.99),
        at(1.0)
    );
}

/// Single frames, each timed on its own.
fn single_frames(events: &[Event]) {
    let app = loaded(events);
    let mut term = terminal();
    frame(&mut term, &app);
    let warm = (0..2000)
        .map(|_| {
            let t = Instant::now();
            frame(&mut term, &app);
            t.elapsed()
        })
        .collect();
    percentiles("warm frame", warm);
    pane_breakdown(&app);
    drop(app);

    let mut streaming = Streaming::new(events);
    let mut term = terminal();
    frame(&mut term, &streaming.app);
    let stream = (0..STREAM_FRAMES)
        .map(|_| {
            let t = Instant::now();
            streaming.step(&mut term);
            t.elapsed()
        })
        .collect();
    percentiles("streaming frame (83 deltas + draw)", stream);
    drop(streaming);

    let cold = (0..10)
        .map(|_| {
            let (app, mut term) = (loaded(events), terminal());
            let t = Instant::now();
            frame(&mut term, &app);
            t.elapsed()
        })
        .collect();
    percentiles("cold first frame", cold);
}

/// Where a warm frame goes: each pane rendered on its own into a buffer,
/// in the rectangles `draw` gives it (`draw` adds the terminal's diff).
fn pane_breakdown(app: &App) {
    type Render = fn(&App, Rect, &mut Buffer);
    let area = Rect::new(0, 0, WIDTH, HEIGHT);
    let rects = layout(area, &app.layout_params(WIDTH));
    let Side::Stacked {
        routing,
        tools,
        memory,
        stats,
    } = rects.side
    else {
        println!("(no pane breakdown: the side panes are not stacked at {WIDTH}x{HEIGHT})");
        return;
    };
    let parts: [(&str, Render, Rect); 7] = [
        (
            "  conversation pane",
            panes::conversation::render,
            rects.conversation,
        ),
        ("  routing pane", panes::routing::render, routing),
        ("  tools pane", panes::tools::render, tools),
        ("  memory pane", panes::memory::render, memory),
        ("  stats pane", panes::stats::render, stats),
        ("  input", panes::input::render, rects.input),
        ("  status line", panes::status::render, rects.status),
    ];
    for (label, render, rect) in parts {
        let mut buf = Buffer::empty(area);
        let times = (0..500)
            .map(|_| {
                let t = Instant::now();
                render(app, rect, &mut buf);
                t.elapsed()
            })
            .collect();
        percentiles(label, times);
    }
}

/// The very first frame of the process: also loads syntect's syntax and
/// theme sets and compiles each grammar's regexes on first use, which a
/// fresh `egirl` pays once. With the process's resident memory before and
/// after (the App's state, then the per-width line caches of every entry
/// and the syntaxes).
fn first_frame_of_process(events: &[Event]) {
    let before = rss_mib();
    let app = loaded(events);
    let with_app = rss_mib();
    let mut term = terminal();
    let t = Instant::now();
    frame(&mut term, &app);
    let elapsed = t.elapsed();
    println!(
        "first frame of the process (syntaxes loaded): {:.1} ms; RSS {before:.1} MiB before the App, {with_app:.1} MiB with it, {:.1} MiB after the frame",
        elapsed.as_secs_f64() * 1e3,
        rss_mib()
    );
}

/// This process's VmRSS.
fn rss_mib() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let kib: f64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .unwrap_or(0.0);
    kib / 1024.0
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let bench_mode = args.iter().any(|a| a == "--bench") && !args.iter().any(|a| a == "--list");
    let events = corpus_events();
    if bench_mode {
        first_frame_of_process(&events);
    }
    benches();
    Criterion::default().configure_from_args().final_summary();
    if bench_mode {
        single_frames(&events);
    }
}
