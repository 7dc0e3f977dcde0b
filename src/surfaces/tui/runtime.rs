//! The real terminal: raw mode, alternate screen, bracketed paste, mouse
//! capture, the keyboard protocol; the loop itself is `driver::drive`.
//! The terminal is restored on every way out, a panic included.

use std::io::{self, Write};
use std::path::PathBuf;
use std::sync::Once;
use std::sync::atomic::{AtomicBool, Ordering};

use anyhow::Context;
use crossterm::event::{
    DisableBracketedPaste, DisableMouseCapture, EnableBracketedPaste, EnableMouseCapture,
    EventStream, KeyboardEnhancementFlags, PopKeyboardEnhancementFlags,
    PushKeyboardEnhancementFlags,
};
use crossterm::execute;
use crossterm::terminal::{
    Clear, ClearType, EnterAlternateScreen, LeaveAlternateScreen, disable_raw_mode, enable_raw_mode,
};
use ratatui::Terminal;
use ratatui::backend::CrosstermBackend;
use tokio::sync::{mpsc, watch};

use super::app::{App, AppOptions, Effect};
use super::conversation::Level;
use super::driver::{AppEvent, Host, draw_synchronized, drive};
use super::theme::Theme;
use crate::link::CoreLink;
use crate::protocol::wire::CoreStatus;
use crate::protocol::{Command, Op, SessionId, Submission};

/// What start-up knows that the TUI shows.
pub struct TuiOptions {
    pub session: SessionId,
    /// `[ui] theme`.
    pub theme: String,
    pub workspace: PathBuf,
    pub model: String,
    pub endpoint: String,
    pub context_length: u64,
    /// Start-up news for the user (a remote provider left out, and why).
    pub notices: Vec<String>,
    /// The skills the core uses (slash commands, `/skills`).
    pub skills: Option<std::sync::Arc<crate::skills::Registry>>,
    /// Attached: the sessions the core had open when this client said
    /// hello (they join the session list).
    pub live_sessions: Vec<crate::protocol::wire::LiveSession>,
    /// `[ui] notify`, `notify_after`.
    pub notify: super::notify::NotifySettings,
    /// `--model`: the first session runs on it (`pin_model`).
    pub pin: Option<String>,
    /// `[images]`: how large a pasted picture may be and is stored.
    pub images: crate::images::Limits,
    /// The config's agents (none: no `[agents]`); attached, the daemon's
    /// status names its own.
    pub agents: super::agents::AgentDirectory,
}

/// How the TUI ended; `cli` turns it into the process's exit code (a
/// surface knows nothing of exit codes, the layer above it does).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TuiOutcome {
    /// The user quit.
    Quit,
    /// The terminal could not be set up or the loop failed; the reason has
    /// been printed.
    Failed,
}

/// A resumed session's pin, for the status line before its first turn
/// (the core keeps the pin itself: `pin_model`).
fn resumed_pin(app: &mut App, transcript: &std::path::Path) {
    let entries = crate::sessions::load_entries(transcript).unwrap_or_default();
    let pinned = crate::sessions::pinned_model(&entries);
    if let Some(info) = app.sessions.get_mut(&app.session) {
        info.pinned = pinned;
    }
}

/// `--model`: the first session runs on it (at its agent, with agents).
fn pin_first_session(core: &CoreLink, app: &App, model: String) {
    let op = Op::Command {
        session: app.session.clone(),
        command: Command::PinModel { model },
    };
    for effect in app.address(vec![Effect::submit(op)]) {
        if let Effect::Submit(submission) = effect {
            core.submit_with(submission);
        }
    }
}

type Term = Terminal<CrosstermBackend<io::Stdout>>;

/// Runs the TUI until the user quits.
pub async fn run(core: &CoreLink, options: TuiOptions) -> TuiOutcome {
    // Subscribe before anything can be submitted: no event is missed.
    let events = core.subscribe();
    let mut dirs = vec![options.workspace.clone()];
    if let Ok(cwd) = std::env::current_dir() {
        dirs.push(cwd);
    }
    let (theme, theme_error) = match Theme::load(&options.theme, &dirs) {
        Ok(t) => (t, None),
        Err(e) => (Theme::default(), Some(e)),
    };
    let mut app = App::new(AppOptions {
        session: options.session,
        theme,
        theme_dirs: dirs,
        model: options.model,
        endpoint: options.endpoint.clone(),
        context_length: options.context_length,
    });
    app.skills = options.skills;
    app.notify = options.notify;
    app.status.no_remote = core.status.borrow().no_remote.clone();
    app.status.budget = core.status.borrow().budget.clone();
    app.set_agents(options.agents, core.status.borrow().agents.clone());
    if let Some(label) = &core.attached {
        app.attach(label.clone(), &options.live_sessions);
    }
    if let Some(e) = theme_error {
        app.notice(Level::Error, format!("{e}; using the default theme"));
    }
    for notice in &options.notices {
        app.notice(Level::Warning, notice.clone());
    }
    app.sessions_dir = Some(options.workspace.join("sessions"));
    // `--session ID`: show the conversation so far, as the core resumes it.
    if let Some(transcript) = app.find_transcript() {
        match crate::sessions::load(&transcript) {
            Ok(records) => {
                let id = app.session.clone();
                app.load_history(&id, &records);
            }
            Err(e) => app.notice(Level::Error, format!("{e:#}")),
        }
        resumed_pin(&mut app, &transcript);
    }
    app.image_store = Some(crate::images::Store {
        workspace: options.workspace.clone(),
        limits: options.images,
    });
    if let Some(model) = options.pin {
        pin_first_session(core, &app, model);
    }
    let mut terminal = match enter() {
        Ok(t) => t,
        Err(e) => {
            restore();
            crate::print::err(format_args!(
                "egirl: cannot start the TUI ({e:#}); use -m for a headless turn"
            ));
            return TuiOutcome::Failed;
        }
    };
    let (tx, internal) = mpsc::unbounded_channel();
    let ready = tx.clone();
    super::highlight::load_when_needed(move || {
        let _ = ready.send(AppEvent::HighlighterReady);
    });
    watch_signals(tx.clone());
    super::link::watch_connection(core.connection.clone(), tx.clone());
    watch_status(core.watch_status(), tx);
    // The first frame before the MCP servers spawn and handshake, which
    // would compete with it for the CPU; the loop draws again at once.
    let mut host = Crossterm { core };
    let _ = draw_synchronized(&mut terminal, &app, &mut host);
    core.start_mcp();
    let trimming = tokio::spawn(trim_after_start());
    let result = drive(
        &mut terminal,
        &mut app,
        EventStream::new(),
        events,
        internal,
        &mut host,
    )
    .await;
    trimming.abort();
    restore();
    match result {
        Ok(_) => {
            print_resume(&app);
            TuiOutcome::Quit
        }
        Err(e) => {
            crate::print::err(format_args!("egirl: {e:#}"));
            TuiOutcome::Failed
        }
    }
}

/// Start-up is over this long after the first frame (the MCP servers
/// started, the in-process core's services up).
const SETTLE_AFTER_START: std::time::Duration = std::time::Duration::from_secs(2);

/// Hands back what start-up alone used (`trim::after_burst`): code and
/// heap the TUI does not touch again; what it does comes back on use.
async fn trim_after_start() {
    tokio::time::sleep(SETTLE_AFTER_START).await;
    let _ = tokio::task::spawn_blocking(crate::trim::after_burst).await;
}

/// Says how to come back to the session the input went to last (as codex
/// does on exit), when it has a transcript to come back to.
fn print_resume(app: &App) {
    let saved = app
        .transcript_of(&app.session)
        .is_some_and(|path| path.is_file());
    if saved {
        let line = format!("resume this session: egirl --session {}\n", app.session);
        let _ = crate::print::out(&line);
    }
}

/// The real terminal as the loop's host.
struct Crossterm<'a> {
    core: &'a CoreLink,
}

impl Host<CrosstermBackend<io::Stdout>> for Crossterm<'_> {
    fn submit(&mut self, submission: Submission) -> bool {
        self.core.submit_with(submission)
    }

    fn effect(&mut self, term: &mut Term, effect: Effect) -> anyhow::Result<()> {
        let out = term.backend_mut();
        match effect {
            Effect::Bell => {
                out.write_all(b"\x07")?;
                out.flush()?;
            }
            Effect::Notify(bytes) => {
                out.write_all(&bytes)?;
                out.flush()?;
            }
            Effect::SetMouseCapture(true) => execute!(out, EnableMouseCapture)?,
            Effect::SetMouseCapture(false) => execute!(out, DisableMouseCapture)?,
            Effect::Copy(text) => {
                // OSC 52: the terminal sets the clipboard, over SSH too.
                write!(
                    out,
                    "\x1b]52;c;{}\x07",
                    crate::images::base64(text.as_bytes())
                )?;
                out.flush()?;
                copy_to_system_clipboard(text);
            }
            Effect::Submit(_) | Effect::Quit => {}
        }
        Ok(())
    }

    fn frame_bracket(&mut self, term: &mut Term, open: bool) -> anyhow::Result<()> {
        // Synchronized output (`CSI ? 2026 h` … `l`): the terminal shows
        // the frame once whole, not row by row as it arrives.
        let out = term.backend_mut();
        if open {
            crossterm::queue!(out, crossterm::terminal::BeginSynchronizedUpdate)?;
        } else {
            execute!(out, crossterm::terminal::EndSynchronizedUpdate)?;
        }
        Ok(())
    }
}

/// SIGTERM and SIGHUP end the loop like /quit, so the terminal is restored.
fn watch_signals(tx: mpsc::UnboundedSender<AppEvent>) {
    use tokio::signal::unix::{SignalKind, signal};
    tokio::spawn(async move {
        let (Ok(mut term), Ok(mut hup)) = (
            signal(SignalKind::terminate()),
            signal(SignalKind::hangup()),
        ) else {
            tracing::warn!("cannot watch SIGTERM/SIGHUP");
            return;
        };
        tokio::select! {
            _ = term.recv() => {}
            _ = hup.recv() => {}
        }
        let _ = tx.send(AppEvent::Quit);
    });
}

/// Forwards the core's status (bots, MCP servers, local health) to the
/// loop as it changes, each part only when it changed.
fn watch_status(mut status: watch::Receiver<CoreStatus>, tx: mpsc::UnboundedSender<AppEvent>) {
    tokio::spawn(async move {
        let mut shown = CoreStatus::default();
        let mut first = true;
        loop {
            let now = status.borrow_and_update().clone();
            for event in status_changes(&shown, &now, first) {
                if tx.send(event).is_err() {
                    return;
                }
            }
            shown = now;
            first = false;
            if status.changed().await.is_err() {
                return;
            }
        }
    });
}

/// The loop's messages for what differs between `old` and `new`.
fn status_changes(old: &CoreStatus, new: &CoreStatus, first: bool) -> Vec<AppEvent> {
    let mut out = Vec::new();
    if let Some(bot) = new
        .discord
        .as_ref()
        .filter(|b| first || old.discord.as_ref() != Some(b))
    {
        out.push(AppEvent::Discord(bot.clone()));
    }
    if let Some(bot) = new
        .telegram
        .as_ref()
        .filter(|b| first || old.telegram.as_ref() != Some(b))
    {
        out.push(AppEvent::Telegram(bot.clone()));
    }
    if old.mcp != new.mcp {
        out.push(AppEvent::Mcp(new.mcp.clone()));
    }
    if first || old.no_remote != new.no_remote {
        out.push(AppEvent::NoRemote(new.no_remote.clone()));
    }
    if first || old.budget != new.budget {
        out.push(AppEvent::Budget(new.budget.clone()));
    }
    if old.agents != new.agents {
        out.push(AppEvent::Agents(new.agents.clone()));
    }
    if let Some(local) = new.local.filter(|l| old.local != Some(*l)) {
        if local.total > 1 {
            out.push(AppEvent::Replicas(local.up, local.total));
        }
        out.push(AppEvent::LocalHealth(local.up > 0));
    }
    out
}

/// Also hands copied text to the desktop's clipboard tool when there is
/// one (OSC 52 alone is ignored by some terminals); quietly does nothing
/// otherwise.
fn copy_to_system_clipboard(text: String) {
    let candidates: &[(&str, &[&str])] = if std::env::var_os("WAYLAND_DISPLAY").is_some() {
        &[("wl-copy", &[])]
    } else if std::env::var_os("DISPLAY").is_some() {
        &[
            ("xclip", &["-selection", "clipboard"]),
            ("xsel", &["--clipboard", "--input"]),
        ]
    } else if cfg!(target_os = "macos") {
        &[("pbcopy", &[])]
    } else {
        &[]
    };
    if candidates.is_empty() {
        return;
    }
    tokio::task::spawn_blocking(move || {
        use std::process::{Command, Stdio};
        for (program, args) in candidates {
            let child = Command::new(program)
                .args(*args)
                .stdin(Stdio::piped())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn();
            let Ok(mut child) = child else { continue };
            if let Some(mut stdin) = child.stdin.take() {
                let _ = stdin.write_all(text.as_bytes());
            }
            let _ = child.wait();
            return;
        }
    });
}

/// Whether the terminal is in TUI mode (so `restore` runs once).
static ACTIVE: AtomicBool = AtomicBool::new(false);

fn enter() -> anyhow::Result<Term> {
    install_panic_hook();
    enable_raw_mode().context("raw mode")?;
    ACTIVE.store(true, Ordering::SeqCst);
    let mut out = io::stdout();
    execute!(
        out,
        EnterAlternateScreen,
        // Not `Terminal::clear`: that asks the terminal where the cursor
        // is, and one that never answers would stall start-up.
        Clear(ClearType::All),
        EnableBracketedPaste,
        EnableMouseCapture,
        // Focus reports (`CSI I`/`CSI O`): notifications only while the
        // window is not focused.
        crossterm::event::EnableFocusChange,
        // Lets terminals that speak the kitty protocol report Shift+Enter;
        // the others ignore it.
        PushKeyboardEnhancementFlags(KeyboardEnhancementFlags::DISAMBIGUATE_ESCAPE_CODES),
    )
    .context("terminal setup")?;
    let mut term = Terminal::new(CrosstermBackend::new(out)).context("terminal")?;
    term.hide_cursor()?;
    Ok(term)
}

/// Puts the terminal back; safe to call more than once and from a panic.
fn restore() {
    if !ACTIVE.swap(false, Ordering::SeqCst) {
        return;
    }
    let mut out = io::stdout();
    let _ = execute!(
        out,
        PopKeyboardEnhancementFlags,
        DisableMouseCapture,
        crossterm::event::DisableFocusChange,
        DisableBracketedPaste,
        LeaveAlternateScreen,
        crossterm::cursor::Show,
    );
    let _ = disable_raw_mode();
}

/// A panic of the TUI's own thread restores the terminal before the
/// message prints, so it is readable and the shell is usable. A panic on
/// another thread is a task's (a tool's, a session's), which tokio or the
/// core catches while the TUI goes on: it goes to the log, not over the
/// screen.
fn install_panic_hook() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let tui_thread = std::thread::current().id();
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if std::thread::current().id() == tui_thread {
                restore();
                previous(info);
            } else {
                tracing::error!("panic in a background task: {info}");
            }
        }));
    });
}
