//! One worker task per session: it runs the session's turns and commands
//! in the order they arrived, opening the session on first use, and
//! counts each message out when its turn ends (`AgentHandle::busy`).
//!
//! A worker with nothing to do for `[agent] session_idle_release` lets
//! its session go and ends: a daemon that answers chats for weeks holds
//! no history nobody asks about. It takes no work from then on (its
//! channel is closed); the core starts another for the session's next op
//! (`Agents::send`), which waits for it to finish what it had, takes what
//! the session held outside its transcript, and opens it again.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use anyhow::Result;
use tokio::sync::{mpsc, watch};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use super::session::{Session, Unwritten};
use super::shared::Shared;
use super::{compact, models, rewind, turn};
use crate::protocol::{Command, ErrorEvent, EventKind, Origin, SessionId, SubmissionId, TurnEnded};

/// One submission's work for a session's worker, with its id: the events
/// it causes carry that id.
pub(super) struct Work {
    pub submission: SubmissionId,
    pub job: Job,
}

pub(super) enum Job {
    Message {
        origin: Origin,
        text: String,
        /// As the surface named them; checked against the store first.
        images: Vec<crate::chat::ImagePart>,
    },
    Command(Command),
}

/// Where a worker that let its session go names it ((agent, session),
/// its task), for the core's sweep (`Agents::sweep`).
pub(super) type Released = Arc<Mutex<Vec<((String, SessionId), tokio::task::Id)>>>;

/// What the core holds of a session's worker.
pub(super) struct SessionHandle {
    pub work: mpsc::UnboundedSender<Work>,
    /// Messages sent to the worker whose turn has not ended.
    pub outstanding: Arc<AtomicUsize>,
    cancel: Arc<Mutex<CancellationToken>>,
    /// Ends with what the session held outside its transcript.
    pub task: JoinHandle<Option<Unwritten>>,
}

impl SessionHandle {
    /// Stops the running turn (or compaction), if any.
    pub fn interrupt(&self) {
        lock(&self.cancel).cancel();
    }

    /// What the session held outside its transcript, from a worker that
    /// ended (`task.is_finished()`); `None` from one that did not let it
    /// go, or panicked.
    pub fn ended(mut self) -> Option<Unwritten> {
        let mut done = std::task::Context::from_waker(std::task::Waker::noop());
        // Outside the core's cooperative budget: a spent one would read
        // as not finished.
        let mut task = tokio::task::unconstrained(&mut self.task);
        match std::pin::Pin::new(&mut task).poll(&mut done) {
            std::task::Poll::Ready(Ok(unwritten)) => unwritten,
            _ => None,
        }
    }
}

/// The session's worker; `before`: the one that let the session go and
/// may still be finishing, whose count of messages and interrupt it takes
/// over; `unwritten`: what the session held, from one that ended. A
/// worker that lets its session go names it in `released` as it ends.
pub(super) fn start_session(
    shared: &Arc<Shared>,
    id: SessionId,
    busy: &Arc<watch::Sender<usize>>,
    shutdown: &CancellationToken,
    (before, unwritten): (Option<SessionHandle>, Option<Unwritten>),
    released: &Released,
) -> SessionHandle {
    let (tx, rx) = mpsc::unbounded_channel();
    let (outstanding, cancel, before) = match before {
        Some(handle) => (handle.outstanding, handle.cancel, Some(handle.task)),
        None => (
            Arc::new(AtomicUsize::new(0)),
            Arc::new(Mutex::new(CancellationToken::new())),
            None,
        ),
    };
    let worker = Worker {
        shared: shared.clone(),
        id,
        session: None,
        before,
        unwritten,
        idle_release: false,
        released: released.clone(),
        outstanding: outstanding.clone(),
        busy: busy.clone(),
        cancel: cancel.clone(),
        shutdown: shutdown.clone(),
    };
    SessionHandle {
        work: tx,
        outstanding,
        cancel,
        task: tokio::spawn(crate::bus::answering(None, worker.run(rx))),
    }
}

/// Opens the session with the model it was pinned to (`pin`).
async fn open_session(
    shared: &Shared,
    id: &str,
    unwritten: &mut Option<Unwritten>,
) -> Result<Session> {
    // Opened again after an idle release, it brings its pin along.
    let again = unwritten.is_some();
    let mut session = Session::open(shared, id, unwritten).await?;
    // A session with no file yet was never pinned.
    if !again && !session.transcript.is_new() {
        session.pinned = super::pin::resumed(shared, id);
    }
    Ok(session)
}

/// The data behind `m`; a panic while it was held leaves it usable.
pub(super) fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

struct Worker {
    shared: Arc<Shared>,
    id: SessionId,
    /// Opened at the first message or command that needs it.
    session: Option<Session>,
    /// The worker that let the session go before this one started.
    before: Option<JoinHandle<Option<Unwritten>>>,
    /// What that worker's session held outside its transcript: taken by
    /// the open.
    unwritten: Option<Unwritten>,
    /// It had nothing to do for `session_idle_release`: it takes no more
    /// work and ends.
    idle_release: bool,
    /// Where it names its session as it ends after letting it go.
    released: Released,
    outstanding: Arc<AtomicUsize>,
    busy: Arc<watch::Sender<usize>>,
    /// Where `SessionHandle::interrupt` finds the running turn's token.
    cancel: Arc<Mutex<CancellationToken>>,
    shutdown: CancellationToken,
}

impl Worker {
    async fn run(mut self, mut rx: mpsc::UnboundedReceiver<Work>) -> Option<Unwritten> {
        if let Some(before) = self.before.take() {
            // It may still be finishing what was sent just before it let go.
            self.unwritten = before.await.ok().flatten().or(self.unwritten.take());
        }
        while let Some(Work { submission, job }) = self.next(&mut rx).await {
            crate::bus::answer(Some(submission));
            match job {
                Job::Message {
                    origin,
                    text,
                    images,
                } => {
                    self.message(origin, text, images).await;
                    self.turn_over();
                }
                Job::Command(Command::Fork) => rewind::fork(&self.shared, &self.id),
                Job::Command(Command::Rewind { turn }) => self.rewind(turn),
                Job::Command(Command::Compact { focus, origin }) => {
                    self.compact(origin, focus).await
                }
                Job::Command(Command::PinModel { model }) => {
                    let shared = self.shared.clone();
                    if let Some(s) = self.opened(Origin::Tui).await {
                        models::pin_model(&shared, s, &model);
                    }
                }
                Job::Command(Command::ListModels) => {
                    let shared = self.shared.clone();
                    if let Some(s) = self.opened(Origin::Tui).await {
                        models::list_models(&shared, s).await;
                    }
                }
                Job::Command(command) => self.apply(command).await,
            }
        }
        let unwritten = self.session.take().map(Session::release);
        if !self.idle_release || self.shutdown.is_cancelled() {
            // The core stopped: nobody opens the session again.
            return None;
        }
        // The history just let go goes back to the system.
        let _ = tokio::task::spawn_blocking(crate::trim::free_heap_pages).await;
        let key = (self.shared.agent.clone(), self.id.clone());
        lock(&self.released).push((key, tokio::task::id()));
        unwritten.or(self.unwritten)
    }

    /// The next work; none once the session has had nothing to do for
    /// `session_idle_release` (or the core stopped). What was sent before
    /// the channel closed is still done.
    async fn next(&mut self, rx: &mut mpsc::UnboundedReceiver<Work>) -> Option<Work> {
        let release = self.shared.config.agent.session_idle_release.0;
        if release.is_zero() || self.idle_release {
            return rx.recv().await;
        }
        match tokio::time::timeout(release, rx.recv()).await {
            Ok(work) => work,
            Err(_idle) => {
                tracing::debug!(session = %self.id, "idle: letting the session go");
                self.idle_release = true;
                rx.close();
                rx.recv().await
            }
        }
    }

    /// One message's turn (or its refusal, when egirl is stopping or the
    /// session cannot open); the caller counts it out afterwards.
    async fn message(&mut self, origin: Origin, text: String, images: Vec<crate::chat::ImagePart>) {
        let (shared, id) = (&self.shared, &self.id);
        if self.shutdown.is_cancelled() {
            // Queued when egirl stopped: never started.
            shared.bus.emit(
                id,
                &origin,
                EventKind::TurnEnded(TurnEnded { interrupted: true }),
            );
            return;
        }
        let token = self.new_token();
        if self.opened(origin.clone()).await.is_none() {
            // The error is said; whoever waits for the turn stops waiting.
            let (shared, id) = (&self.shared, &self.id);
            shared.bus.emit(
                id,
                &origin,
                EventKind::TurnEnded(TurnEnded { interrupted: false }),
            );
            return;
        }
        let (shared, id) = (&self.shared, &self.id);
        let (images, refused) = super::vision::verified(shared, images);
        for message in refused {
            shared.bus.emit(
                id,
                &origin,
                EventKind::Notice(crate::protocol::Notice { message }),
            );
        }
        if let Some(s) = self.session.as_mut() {
            s.incoming_images = images;
            turn::run_turn(shared, s, origin, text, token).await;
        }
    }

    /// The next turn reads the history as the rewind left it.
    fn rewind(&mut self, turn: usize) {
        let (shared, id) = (&self.shared, &self.id);
        if rewind::rewind(shared, id, turn)
            && let Some(s) = self.session.as_mut()
            && let Err(e) = s.reload(shared)
        {
            tracing::warn!("session {id} reopens at its next turn: {e:#}");
            self.session = None;
        }
    }

    async fn compact(&mut self, origin: Origin, focus: Option<String>) {
        let token = self.new_token();
        let shared = self.shared.clone();
        if let Some(s) = self.opened(origin.clone()).await {
            compact::now(&shared, s, origin, focus, token).await;
        }
    }

    /// The session, opened when need be; `None` (said as an `error`) when
    /// it cannot open.
    async fn opened(&mut self, origin: Origin) -> Option<&mut Session> {
        if let Err(e) = self.open().await {
            let (shared, id) = (&self.shared, &self.id);
            shared.bus.emit(
                id,
                &origin,
                EventKind::Error(ErrorEvent {
                    message: format!("{e:#}"),
                }),
            );
            return None;
        }
        self.session.as_mut()
    }

    /// `/local`, `/remote`, `/clear`: applied to the session, opened for it
    /// when need be (a session that cannot open ignores them).
    async fn apply(&mut self, command: Command) {
        match self.open().await {
            Ok(()) => {
                if let Some(s) = self.session.as_mut() {
                    s.apply(command);
                }
            }
            // One line in the log; the command itself is not written out.
            Err(e) => tracing::warn!("session {}: a command not applied: {e:#}", self.id),
        }
    }

    /// Opens the session unless it is open; what an earlier worker handed
    /// over stays for the next try when the open fails.
    async fn open(&mut self) -> Result<()> {
        if self.session.is_none() {
            self.session = Some(open_session(&self.shared, &self.id, &mut self.unwritten).await?);
        }
        Ok(())
    }

    /// A token for what runs next, where `interrupt` finds it; shutdown
    /// cancels it too.
    fn new_token(&self) -> CancellationToken {
        let token = self.shutdown.child_token();
        *lock(&self.cancel) = token.clone();
        token
    }

    fn turn_over(&self) {
        self.outstanding.fetch_sub(1, Ordering::SeqCst);
        self.busy.send_modify(|n| *n = n.saturating_sub(1));
    }
}
