//! One worker task per session: it runs the session's turns and commands
//! in the order they arrived, opening the session on first use, and
//! counts each message out when its turn ends (`AgentHandle::busy`).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use anyhow::Result;
use tokio::sync::{mpsc, watch};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use super::session::Session;
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

/// What the core holds of a session's worker.
pub(super) struct SessionHandle {
    pub work: mpsc::UnboundedSender<Work>,
    /// Messages sent to the worker whose turn has not ended.
    pub outstanding: Arc<AtomicUsize>,
    cancel: Arc<Mutex<CancellationToken>>,
    pub task: JoinHandle<()>,
}

impl SessionHandle {
    /// Stops the running turn (or compaction), if any.
    pub fn interrupt(&self) {
        lock(&self.cancel).cancel();
    }
}

pub(super) fn start_session(
    shared: &Arc<Shared>,
    id: SessionId,
    busy: &Arc<watch::Sender<usize>>,
    shutdown: &CancellationToken,
) -> SessionHandle {
    let (tx, rx) = mpsc::unbounded_channel();
    let outstanding = Arc::new(AtomicUsize::new(0));
    let cancel = Arc::new(Mutex::new(CancellationToken::new()));
    let worker = Worker {
        shared: shared.clone(),
        id,
        session: None,
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
async fn open_session(shared: &Shared, id: &str) -> Result<Session> {
    let mut session = Session::open(shared, id).await?;
    // A session with no file yet was never pinned.
    if !session.transcript.is_new() {
        session.pinned = super::pin::resumed(shared, id);
    }
    Ok(session)
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

struct Worker {
    shared: Arc<Shared>,
    id: SessionId,
    /// Opened at the first message or command that needs it.
    session: Option<Session>,
    outstanding: Arc<AtomicUsize>,
    busy: Arc<watch::Sender<usize>>,
    /// Where `SessionHandle::interrupt` finds the running turn's token.
    cancel: Arc<Mutex<CancellationToken>>,
    shutdown: CancellationToken,
}

impl Worker {
    async fn run(mut self, mut rx: mpsc::UnboundedReceiver<Work>) {
        while let Some(Work { submission, job }) = rx.recv().await {
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
        if self.session.is_none() {
            match open_session(shared, id).await {
                Ok(s) => self.session = Some(s),
                Err(e) => {
                    shared.bus.emit(
                        id,
                        &origin,
                        EventKind::Error(ErrorEvent {
                            message: format!("{e:#}"),
                        }),
                    );
                    shared.bus.emit(
                        id,
                        &origin,
                        EventKind::TurnEnded(TurnEnded { interrupted: false }),
                    );
                    return;
                }
            }
        }
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
        if let Some(s) = self.session.as_mut() {
            s.apply(command);
        } else if let Ok(mut s) = open_session(&self.shared, &self.id).await {
            s.apply(command);
            self.session = Some(s);
        }
    }

    async fn open(&mut self) -> Result<()> {
        if self.session.is_none() {
            self.session = Some(open_session(&self.shared, &self.id).await?);
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
