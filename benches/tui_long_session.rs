//! A resumed session of 10,000 messages, as `egirl --session ID`
//! opens it: `sessions::load` of the file (the live records, marks
//! applied), `App::load_history`, the first frame at 120x36 (the start-up
//! bench's terminal); then the resident memory, and the key-to-draw time
//! while typing: each key through `App::handle_event` and a full `draw`
//! on ratatui's `TestBackend` (typing slower than the 60 fps cap, so the
//! frame scheduler draws each key at once and adds nothing). Also what
//! fork and rewind add on such a session: opening the `/rewind` picker (it reads
//! the transcript) and a `/find` over every message.
//!
//! `cargo bench --bench tui_long_session` prints a table (figures in
//! docs/benchmarks.md). Not criterion: the first frame is once per process
//! (cold), the rest are individually timed iterations (p50/p90/p99/max).
//! The real binary, in a pseudo-terminal, is `scripts/bench-tui-startup.sh`;
//! `EGIRL_LONG_SESSION_FILE=PATH` also writes the session file there.

use std::path::Path;
use std::time::{Duration, Instant};

use crossterm::event::{Event as TermEvent, KeyCode, KeyEvent, KeyModifiers};
use egirl::surfaces::tui::{App, AppOptions, Theme, draw};
use ratatui::Terminal;
use ratatui::backend::TestBackend;

#[path = "../tests/support/tui_corpus.rs"]
#[allow(dead_code)] // the event form of the corpus is the render bench's
mod corpus;

const MESSAGES: usize = 10_000;
const WIDTH: u16 = 120;
const HEIGHT: u16 = 36;
const TYPED: &str = "Please look at the failing test in src/agent/turn.rs and tell me why the window fits one message too many when the tools list grows; then propose a patch. ";

fn app(dir: &Path) -> App {
    let mut app = App::new(AppOptions {
        session: corpus::SESSION.into(),
        theme: Theme::default(),
        theme_dirs: Vec::new(),
        model: "qwen3-8b".into(),
        endpoint: "http://127.0.0.1:8080".into(),
        context_length: 32768,
    });
    app.sessions_dir = Some(dir.join("sessions"));
    app
}

/// What `runtime::run` does before its first draw, then the draw.
/// `before_draw` runs where the binary starts loading the syntaxes.
fn resume(
    dir: &Path,
    term: &mut Terminal<TestBackend>,
    before_draw: impl FnOnce(),
) -> (App, [Duration; 3]) {
    let started = Instant::now();
    let path = dir
        .join("sessions")
        .join(format!("{}.jsonl", corpus::SESSION));
    let records = egirl::sessions::load(&path).expect("the session loads");
    assert_eq!(records.len(), MESSAGES);
    let loaded = started.elapsed();
    let mut app = app(dir);
    app.load_history(corpus::SESSION, &records);
    drop(records);
    before_draw();
    let built = started.elapsed();
    term.draw(|f| draw(&app, f)).expect("draw");
    (app, [loaded, built, started.elapsed()])
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn percentiles(label: &str, mut samples: Vec<Duration>) {
    samples.sort();
    let at = |p: f64| {
        let i = ((samples.len() as f64 * p).ceil() as usize).clamp(1, samples.len()) - 1;
        ms(samples[i])
    };
    println!(
        "{label:<46} n={:<5} p50 {:>8.3} ms  p90 {:>8.3} ms  p99 {:>8.3} ms  max {:>8.3} ms",
        samples.len(),
        at(0.5),
        at(0.9),
        at(0.99),
        at(1.0)
    );
}

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

fn key(code: KeyCode) -> TermEvent {
    TermEvent::Key(KeyEvent::new(code, KeyModifiers::NONE))
}

/// Each key of `text` handled and drawn, timed on its own.
fn type_and_draw(app: &mut App, term: &mut Terminal<TestBackend>, text: &str) -> Vec<Duration> {
    text.chars()
        .map(|c| {
            let t = Instant::now();
            app.handle_event(key(KeyCode::Char(c)), Instant::now());
            term.draw(|f| draw(app, f)).expect("draw");
            t.elapsed()
        })
        .collect()
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::create_dir_all(dir.path().join("sessions")).expect("sessions dir");
    let records = corpus::records(&corpus::turns(corpus::turns_for_records(MESSAGES)));
    let mut jsonl = String::new();
    for r in &records {
        jsonl.push_str(&serde_json::to_string(r).expect("record"));
        jsonl.push('\n');
    }
    drop(records);
    let path = dir
        .path()
        .join("sessions")
        .join(format!("{}.jsonl", corpus::SESSION));
    std::fs::write(&path, &jsonl).expect("session file");
    // A copy for measuring the real binary by hand (`--session`).
    if let Some(copy) = std::env::var_os("EGIRL_LONG_SESSION_FILE") {
        std::fs::write(copy, &jsonl).expect("session file copy");
    }
    println!(
        "session: {MESSAGES} records, {:.1} MiB; terminal {WIDTH}x{HEIGHT}",
        jsonl.len() as f64 / (1024.0 * 1024.0)
    );
    drop(jsonl);

    let before = rss_mib();
    let mut term = Terminal::new(TestBackend::new(WIDTH, HEIGHT)).expect("terminal");
    // As `runtime::run`: the first code block drawn starts loading the
    // syntaxes on a thread of their own; the frame shows code plain until
    // they are in, then the TUI redraws (the settled state).
    let (tx, rx) = std::sync::mpsc::channel();
    let (mut app, [loaded, built, first]) = resume(dir.path(), &mut term, || {
        egirl::surfaces::tui::highlight::load_when_needed(move || {
            let _ = tx.send(());
        })
    });
    println!(
        "first frame of the process: {:.1} ms (load {:.1} ms, App {:.1} ms, draw {:.1} ms; code plain until the syntaxes load)",
        ms(first),
        ms(loaded),
        ms(built - loaded),
        ms(first - built)
    );
    let after_first = rss_mib();
    let _ = rx.recv_timeout(Duration::from_secs(30));
    app.epoch += 1;
    term.draw(|f| draw(&app, f)).expect("draw");
    println!(
        "RSS: {before:.1} MiB before, {after_first:.1} MiB after the first frame, {:.1} MiB settled (syntaxes in, redrawn)",
        rss_mib()
    );

    let keys = type_and_draw(&mut app, &mut term, &TYPED.repeat(4));
    percentiles("key-to-draw while typing (600 keys)", keys);
    app.input.clear();

    let scroll = (0..200)
        .map(|_| {
            let t = Instant::now();
            app.handle_event(key(KeyCode::PageUp), Instant::now());
            term.draw(|f| draw(&app, f)).expect("draw");
            t.elapsed()
        })
        .collect::<Vec<_>>();
    println!(
        "first PageUp (measures all {MESSAGES} messages' heights): {:.1} ms",
        ms(scroll[0])
    );
    percentiles("PageUp + draw, after the first", scroll[1..].to_vec());
    app.handle_event(key(KeyCode::End), Instant::now());

    let finds = (0..20)
        .map(|_| {
            let t = Instant::now();
            app.start_search("needle-that-is-nowhere");
            app.start_search("fn ");
            term.draw(|f| draw(&app, f)).expect("draw");
            t.elapsed()
        })
        .collect();
    percentiles("/find (a miss, then a hit) + draw", finds);
    let hits = app.search.as_ref().map_or(0, |s| s.hits.len());
    let jumps = (0..200)
        .map(|_| {
            let t = Instant::now();
            app.handle_event(key(KeyCode::Char('N')), Instant::now());
            term.draw(|f| draw(&app, f)).expect("draw");
            t.elapsed()
        })
        .collect();
    percentiles(&format!("N (previous of {hits} hits) + draw"), jumps);
    app.handle_event(key(KeyCode::Esc), Instant::now());

    let pickers = (0..10)
        .map(|_| {
            let t = Instant::now();
            app.open_rewind_picker();
            term.draw(|f| draw(&app, f)).expect("draw");
            let open = t.elapsed();
            app.handle_event(key(KeyCode::Esc), Instant::now());
            open
        })
        .collect();
    percentiles("/rewind picker open (reads the transcript)", pickers);

    drop(app);
    let warm = (0..10)
        .map(|_| {
            let mut term = Terminal::new(TestBackend::new(WIDTH, HEIGHT)).expect("terminal");
            resume(dir.path(), &mut term, || {}).1[2]
        })
        .collect();
    percentiles("resume to first frame, again in-process", warm);
}
