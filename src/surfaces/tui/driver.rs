//! The event loop, generic over the terminal backend and the input
//! stream so tests run it on `TestBackend` with scripted input and paused
//! time: one `select!` over terminal input, core events and an internal
//! channel, and draws only when the frame scheduler's deadline passes.

use std::io;
use std::ops::ControlFlow;
use std::time::Instant;

use anyhow::{Context, anyhow};
use crossterm::event::Event as TermEvent;
use futures_util::{Stream, StreamExt};
use ratatui::Terminal;
use ratatui::backend::Backend;
use tokio::sync::mpsc;

use super::app::{App, Effect};
use super::draw::draw;
use super::scheduler::{FRAME_INTERVAL, FrameScheduler};
use crate::bus::EventReceiver;
use crate::protocol::{Event, Submission};

/// Core events applied per wake-up before a frame is considered: a burst
/// of deltas becomes one redraw, and keys still get their turn.
const EVENT_BATCH: usize = 4096;

/// Messages from helper tasks to the loop.
#[derive(Debug)]
pub enum AppEvent {
    /// SIGTERM or SIGHUP: leave cleanly, restoring the terminal.
    Quit,
    /// Whether the local endpoint answers `/health` (probed in the background).
    LocalHealth(bool),
    /// Several local endpoints: how many answer `/health`, of how many.
    Replicas(usize, usize),
    /// The Discord bot's connection changed.
    Discord(crate::protocol::BotStatus),
    /// The syntax sets loaded in the background are in: code shown plain
    /// until now can be highlighted.
    HighlighterReady,
    /// The Telegram bot's connection changed.
    Telegram(crate::protocol::BotStatus),
    /// The MCP servers' state changed.
    Mcp(Vec<crate::protocol::McpServerInfo>),
    /// Attached: the connection to the core changed.
    Link(crate::link::LinkState),
    /// Why no remote provider can take a turn (`None`: one can).
    NoRemote(Option<String>),
    /// Remote spend against the caps changed.
    Budget(Vec<crate::protocol::wire::SpendPeriod>),
    /// The agents the core's config declares (attached: the daemon's).
    Agents(Vec<crate::protocol::AgentName>),
}

/// What the loop needs from the outside world.
pub trait Host<B: Backend> {
    /// Hands a submission to the core; false when the core is gone.
    fn submit(&mut self, submission: Submission) -> bool;
    /// Bell, mouse capture, clipboard: terminal side effects.
    fn effect(&mut self, term: &mut Terminal<B>, effect: Effect) -> anyhow::Result<()>;
    /// Opens (`true`) or closes a frame: a real terminal is told to show
    /// what comes between at once (synchronized output), so a frame is
    /// never seen half drawn. Nothing by default (test backends).
    fn frame_bracket(&mut self, _term: &mut Terminal<B>, _open: bool) -> anyhow::Result<()> {
        Ok(())
    }
}

/// Runs until the user quits, the input ends or an internal `Quit`;
/// returns the number of frames drawn.
pub async fn drive<B, S, H>(
    term: &mut Terminal<B>,
    app: &mut App,
    mut input: S,
    mut core: EventReceiver,
    mut internal: mpsc::UnboundedReceiver<AppEvent>,
    host: &mut H,
) -> anyhow::Result<u64>
where
    B: Backend,
    B::Error: Send + Sync + 'static,
    S: Stream<Item = io::Result<TermEvent>> + Unpin,
    H: Host<B>,
{
    let mut frames = FrameScheduler::new(FRAME_INTERVAL);
    let mut drawn = 0u64;
    frames.request();
    loop {
        let now = clock();
        let frame_at = frames.deadline(now);
        let tick_at = app.next_deadline();
        let mut effects = Vec::new();
        tokio::select! {
            ev = input.next() => match ev {
                Some(Ok(ev)) => {
                    effects = app.handle_event(ev, clock());
                    frames.request();
                }
                Some(Err(e)) => return Err(e).context("reading the terminal"),
                None => return Ok(drawn),
            },
            ev = core.recv() => {
                let Some(ev) = ev else {
                    return Err(anyhow!("the agent core stopped"));
                };
                effects = apply_batch(app, ev, &mut core);
                frames.request();
                // select! picks among ready branches at random, so under a
                // steady stream the frame branch could lose its turn again
                // and again: draw here once the deadline has passed.
                let now = clock();
                if frames.deadline(now).is_some_and(|at| at <= now) {
                    draw_frame(term, app, &mut frames, host)?;
                    drawn += 1;
                }
            }
            msg = internal.recv() => match msg {
                Some(AppEvent::Quit) | None => return Ok(drawn),
                Some(msg) => {
                    if apply_internal(app, msg) {
                        frames.request();
                    }
                }
            },
            _ = sleep_until(frame_at.unwrap_or(now)), if frame_at.is_some() => {
                draw_frame(term, app, &mut frames, host)?;
                drawn += 1;
            }
            _ = sleep_until(tick_at.unwrap_or(now)), if tick_at.is_some() => {
                app.tick(clock());
                frames.request();
            }
        }
        if run_effects(term, host, effects, &mut frames)?.is_break() {
            return Ok(drawn);
        }
    }
}

/// Applies a core event and those already waiting behind it, up to
/// `EVENT_BATCH`.
fn apply_batch(app: &mut App, first: Event, core: &mut EventReceiver) -> Vec<Effect> {
    let mut effects = app.apply(first);
    for _ in 0..EVENT_BATCH {
        match core.try_recv() {
            Ok(ev) => effects.extend(app.apply(ev)),
            Err(_) => break,
        }
    }
    effects
}

/// Folds a helper task's message into the state; true when the screen
/// changes (a probe that changes nothing draws nothing).
fn apply_internal(app: &mut App, msg: AppEvent) -> bool {
    match msg {
        // The loop leaves before it gets here.
        AppEvent::Quit => false,
        AppEvent::LocalHealth(up) => app.set_local_health(up),
        AppEvent::Replicas(up, total) => replace(&mut app.status.replicas, Some((up, total))),
        AppEvent::Discord(status) => replace(&mut app.status.discord, status),
        AppEvent::Telegram(status) => replace(&mut app.status.telegram, status),
        AppEvent::Mcp(servers) => replace(&mut app.status.mcp, servers),
        AppEvent::Link(state) => app.link_changed(state),
        AppEvent::NoRemote(why) => replace(&mut app.status.no_remote, why),
        AppEvent::Budget(periods) => replace(&mut app.status.budget, periods),
        AppEvent::Agents(names) => app.agents_declared(names),
        AppEvent::HighlighterReady => {
            // Every cached render may hold plain code: redo them (only the
            // visible ones are rendered).
            app.epoch += 1;
            true
        }
    }
}

/// Stores `new` when it differs from what `slot` holds; true when it did.
fn replace<T: PartialEq>(slot: &mut T, new: T) -> bool {
    if *slot == new {
        return false;
    }
    *slot = new;
    true
}

fn draw_frame<B, H>(
    term: &mut Terminal<B>,
    app: &mut App,
    frames: &mut FrameScheduler,
    host: &mut H,
) -> anyhow::Result<()>
where
    B: Backend,
    B::Error: Send + Sync + 'static,
    H: Host<B>,
{
    draw_synchronized(term, app, host)?;
    // Read after the frame is written: a modal counts as seen from here.
    let now = clock();
    frames.drawn(now);
    app.frame_drawn(now);
    Ok(())
}

/// Draws one frame between the host's frame brackets (a terminal that
/// does not know them ignores them). The bracket is closed even when the
/// draw fails, so the terminal never waits for an end that does not come.
pub fn draw_synchronized<B, H>(
    term: &mut Terminal<B>,
    app: &App,
    host: &mut H,
) -> anyhow::Result<()>
where
    B: Backend,
    B::Error: Send + Sync + 'static,
    H: Host<B>,
{
    host.frame_bracket(term, true)?;
    let drawn = term.draw(|f| draw(app, f)).map(drop).context("drawing");
    host.frame_bracket(term, false)?;
    drawn
}

/// Hands submissions to the core and terminal effects to the host, in
/// order; `Break` at a `Quit`.
fn run_effects<B, H>(
    term: &mut Terminal<B>,
    host: &mut H,
    effects: Vec<Effect>,
    frames: &mut FrameScheduler,
) -> anyhow::Result<ControlFlow<()>>
where
    B: Backend,
    H: Host<B>,
{
    for effect in effects {
        match effect {
            Effect::Submit(submission) => {
                if !host.submit(submission) {
                    return Err(anyhow!("the agent core stopped"));
                }
            }
            Effect::Quit => return Ok(ControlFlow::Break(())),
            other => {
                host.effect(term, other)?;
                frames.request();
            }
        }
    }
    Ok(ControlFlow::Continue(()))
}

/// The time as tokio's clock tells it, so tests with paused time see the
/// frame cap and the Ctrl+C window in virtual time.
fn clock() -> Instant {
    tokio::time::Instant::now().into_std()
}

async fn sleep_until(at: Instant) {
    tokio::time::sleep_until(tokio::time::Instant::from_std(at)).await;
}
