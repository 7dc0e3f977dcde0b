//! The event bus: fans the protocol's events out to every surface, each on
//! a queue of its own. It sits beside `protocol` (which is only types and
//! their wire form) so that a client on a socket can share the types
//! without the in-process plumbing.

use std::cell::RefCell;
use std::future::Future;
use std::sync::{Arc, Mutex};

use crate::protocol::{Event, EventKind, Origin, SubmissionId};

tokio::task_local! {
    /// The submission the current task is working on: every event emitted
    /// from it carries that id, however deep in the turn or the tools the
    /// emit is, without each layer passing the id along. A session's
    /// worker runs one submission at a time, so it sets this per work item.
    static ANSWERING: RefCell<Option<SubmissionId>>;
}

/// Runs `work` as a task whose events answer `submission` (until
/// [`answer`] says otherwise).
pub fn answering<F: Future>(
    submission: Option<SubmissionId>,
    work: F,
) -> impl Future<Output = F::Output> {
    ANSWERING.scope(RefCell::new(submission), work)
}

/// From now on the current task's events answer `submission` (inside
/// [`answering`]; elsewhere nothing changes).
pub fn answer(submission: Option<SubmissionId>) {
    let _ = ANSWERING.try_with(|current| *current.borrow_mut() = submission);
}

/// The submission the current task answers, if any: for work the task
/// hands to a task of its own, which does not inherit it.
pub fn current_submission() -> Option<SubmissionId> {
    ANSWERING
        .try_with(|current| current.borrow().clone())
        .ok()
        .flatten()
}

mod queue;
pub use queue::EventReceiver;

/// Fans every event out to every subscriber on its own queue.
///
/// tokio's broadcast drops events for a lagging receiver; an approval request
/// must never be dropped, so each surface gets a queue of its own, where
/// streamed text waiting for a lagging surface is merged instead of piling
/// up as events (see `queue`).
#[derive(Clone, Default)]
pub struct EventBus {
    subscribers: Arc<Mutex<Vec<queue::Subscriber>>>,
    /// Applied to every event before it goes out (the core's last guard
    /// against secret values: see `redact::event_guard`).
    guard: Option<EventGuard>,
    /// The agent every event sent through this handle belongs to (see
    /// [`EventBus::for_agent`]).
    agent: Option<crate::protocol::AgentName>,
}

/// Rewrites an event in place before any surface sees it.
pub type EventGuard = Arc<dyn Fn(&mut EventKind) + Send + Sync>;

impl EventBus {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn subscribe(&self) -> EventReceiver {
        let (tx, rx) = queue::queue();
        self.lock().push(tx);
        rx
    }

    /// This bus, with every event passed through `guard` first.
    pub fn with_guard(mut self, guard: EventGuard) -> Self {
        self.guard = Some(guard);
        self
    }

    /// The same bus (same subscribers), stamping `agent` on every event
    /// emitted through the handle returned: each agent's core holds one.
    pub fn for_agent(&self, agent: Option<&str>) -> Self {
        Self {
            agent: agent.map(str::to_string),
            ..self.clone()
        }
    }

    /// The agent this handle stamps, if any.
    pub fn agent(&self) -> Option<&str> {
        self.agent.as_deref()
    }

    /// Sends an event of `session`, carrying the submission the current
    /// task answers (see [`answering`]).
    pub fn emit(&self, session: &str, origin: &Origin, kind: EventKind) {
        self.send(Event {
            agent: self.agent.clone(),
            submission: current_submission(),
            session: session.to_string(),
            origin: origin.clone(),
            kind,
        });
    }

    /// An event built elsewhere (tests and benches feeding a surface).
    pub fn send(&self, mut event: Event) {
        if let Some(guard) = &self.guard {
            guard(&mut event.kind);
        }
        // A closed receiver is a surface that went away; forget it.
        self.lock().retain(|tx| tx.send(event.clone()));
    }

    /// Whether any surface listens (one that went away counts until the
    /// next emit notices).
    pub fn has_subscribers(&self) -> bool {
        !self.lock().is_empty()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<queue::Subscriber>> {
        // A panic while holding this lock cannot leave the Vec inconsistent.
        self.subscribers.lock().unwrap_or_else(|e| e.into_inner())
    }
}

#[cfg(test)]
mod tests;
