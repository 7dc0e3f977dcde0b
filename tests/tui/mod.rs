//! The TUI without a terminal: the state driven by events and keys,
//! rendered on ratatui's `TestBackend` and compared with insta snapshots
//! (`tests/tui/snapshots/`). A visible change needs a reviewed snapshot
//! update: `INSTA_UPDATE=always cargo test --test all tui::`, then read
//! the `.snap` diff.

mod compaction;
mod diffs;
mod driver;
mod guard;
mod keys;
mod mcp;
mod proactive;
pub(crate) mod pty;
mod rewind;
mod sandbox;
mod screenshots;
mod sessions;
mod skills;
mod snapshots;
mod startup;
mod telegram;

use std::time::Instant;

use crossterm::event::{Event as TermEvent, KeyCode, KeyEvent, KeyModifiers};
use egirl::protocol::{
    AnswerDelta, Event, EventKind, FinalAnswer, LocalRole, Op, Origin, Route, Routing, TokenUsage,
    TurnEnded, TurnStarted,
};
use egirl::surfaces::tui::{App, AppOptions, Effect, Theme, draw};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::buffer::Buffer;
use ratatui::style::{Color, Modifier};

pub const SESSION: &str = "tui-test";

pub fn app() -> App {
    App::new(AppOptions {
        session: SESSION.into(),
        theme: Theme::default(),
        theme_dirs: Vec::new(),
        model: "qwen3-8b".into(),
        endpoint: "http://127.0.0.1:8080".into(),
        context_length: 32768,
    })
}

/// An event of the TUI's own session.
pub fn ev(kind: EventKind) -> Event {
    Event {
        agent: None,
        submission: None,
        session: SESSION.into(),
        origin: Origin::Tui,
        kind,
    }
}

pub fn ev_from(session: &str, origin: Origin, kind: EventKind) -> Event {
    Event {
        agent: None,
        submission: None,
        session: session.into(),
        origin,
        kind,
    }
}

pub fn apply_all(app: &mut App, events: impl IntoIterator<Item = Event>) -> Vec<Effect> {
    events.into_iter().flat_map(|e| app.apply(e)).collect()
}

pub fn key(code: KeyCode) -> KeyEvent {
    KeyEvent::new(code, KeyModifiers::NONE)
}

pub fn press(app: &mut App, key: KeyEvent) -> Vec<Effect> {
    app.handle_event(TermEvent::Key(key), Instant::now())
}

/// The approval modal as the loop arms it: a frame shows it, the quiet
/// period passes on the timer, the frame lighting its keys goes out.
/// Without this, keys pressed at a request go to the input box.
pub fn arm(app: &mut App) {
    let shown = Instant::now();
    let lit = shown + egirl::surfaces::tui::approval::ARM_AFTER;
    app.frame_drawn(shown);
    app.tick(lit);
    app.frame_drawn(lit);
    assert!(app.approvals.is_armed() || app.approvals.is_empty());
}

pub fn type_text(app: &mut App, text: &str) {
    for c in text.chars() {
        press(app, key(KeyCode::Char(c)));
    }
}

/// The ops among effects.
pub fn ops(effects: Vec<Effect>) -> Vec<Op> {
    effects
        .into_iter()
        .filter_map(|e| match e {
            Effect::Submit(submission) => Some(submission.op),
            _ => None,
        })
        .collect()
}

pub fn buffer(app: &App, width: u16, height: u16) -> Buffer {
    let mut terminal = Terminal::new(TestBackend::new(width, height)).expect("test terminal");
    terminal.draw(|f| draw(app, f)).expect("draw");
    terminal.backend().buffer().clone()
}

/// The screen as text, one row per line, trailing blanks trimmed.
pub fn screen(app: &App, width: u16, height: u16) -> String {
    text(&buffer(app, width, height))
}

pub fn text(buf: &Buffer) -> String {
    let area = buf.area;
    let mut out = String::new();
    for y in area.top()..area.bottom() {
        let mut row = String::new();
        let mut skip = 0;
        for x in area.left()..area.right() {
            // The cell after a double-width character is a placeholder.
            if skip > 0 {
                skip -= 1;
                continue;
            }
            let symbol = buf[(x, y)].symbol();
            skip = unicode_width::UnicodeWidthStr::width(symbol).saturating_sub(1);
            row.push_str(symbol);
        }
        out.push_str(row.trim_end());
        out.push('\n');
    }
    out
}

/// The styles of rows `rows` as runs: `row: from-to fg bg modifiers`,
/// skipping unstyled cells, so a snapshot shows colors too.
pub fn styles(buf: &Buffer, rows: std::ops::Range<u16>) -> String {
    let mut out = String::new();
    let describe = |x: u16, y: u16| {
        let c = &buf[(x, y)];
        let mut parts = Vec::new();
        if c.fg != Color::Reset {
            parts.push(format!("fg={}", c.fg));
        }
        if c.bg != Color::Reset {
            parts.push(format!("bg={}", c.bg));
        }
        if c.modifier != Modifier::empty() {
            parts.push(format!("{:?}", c.modifier));
        }
        parts.join(" ")
    };
    for y in rows {
        let mut runs = Vec::new();
        let mut x = buf.area.left();
        while x < buf.area.right() {
            let style = describe(x, y);
            let start = x;
            while x < buf.area.right() && describe(x, y) == style {
                x += 1;
            }
            if !style.is_empty() {
                runs.push(format!("{start}-{} {style}", x - 1));
            }
        }
        if !runs.is_empty() {
            out.push_str(&format!("{y:>2}: {}\n", runs.join(" | ")));
        }
    }
    out
}

/// A whole turn of the TUI session: the user's text, a local routing
/// decision, the answer streamed in chunks, usage, the end.
pub fn turn(user: &str, answer: &str) -> Vec<Event> {
    let mut events = vec![
        ev(EventKind::TurnStarted(TurnStarted {
            text: user.into(),
            ..Default::default()
        })),
        ev(EventKind::Routing(Routing {
            route: Route::Local(LocalRole::Main),
            model: "qwen3-8b".into(),
            reason: "local by default".into(),
            confidence: 1.0,
        })),
    ];
    let chars: Vec<char> = answer.chars().collect();
    for chunk in chars.chunks(7) {
        events.push(ev(EventKind::Delta(AnswerDelta {
            text: chunk.iter().collect(),
        })));
    }
    events.push(ev(EventKind::Usage(TokenUsage {
        provider: "llamacpp".into(),
        model: "qwen3-8b".into(),
        input_tokens: 1200,
        output_tokens: 300,
        cached_tokens: 1000,
        cost_usd: 0.0,
        tokens_per_sec: Some(42.5),
        latency_ms: None,
        endpoint: None,
        context: None,
    })));
    events.push(ev(EventKind::Final(FinalAnswer {
        text: answer.into(),
    })));
    events.push(ev(EventKind::TurnEnded(TurnEnded { interrupted: false })));
    events
}
