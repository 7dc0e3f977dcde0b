//! One surface's event queue: unbounded in count like an mpsc channel (an
//! approval, a `final`, a `turn_ended` is never dropped or delayed behind
//! a limit), but streamed text does not pile up as events. A `delta` (or
//! `reasoning`) that finds the previous one of its session still waiting
//! in the queue is appended to it.
//!
//! Why coalescing rather than a byte budget that drops deltas: nothing is
//! lost (the `--json` stream and the TUI still get every byte, in order),
//! and what a lagging surface holds is the streamed text itself, which the
//! reply cap bounds (`providers::bounds`), instead of one event of ~150
//! bytes per token-sized delta: that overhead is what grew egirl by
//! gigabytes behind a runaway stream. A surface that keeps up sees the
//! deltas as they were emitted.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard};

use tokio::sync::Notify;
use tokio::sync::mpsc::error::TryRecvError;

use crate::protocol::{AnswerDelta, Event, EventKind, ReasoningDelta};

/// A merged delta grows to about this size, then a new one starts (so one
/// event stays small enough to draw and to write as one line).
const MAX_MERGED_BYTES: usize = 64 * 1024;

#[derive(Default)]
struct State {
    events: VecDeque<Event>,
    /// The bus is gone: no more events will come.
    closed: bool,
    /// The receiver is gone: the bus forgets this queue.
    abandoned: bool,
}

#[derive(Default)]
struct Queue {
    state: Mutex<State>,
    ready: Notify,
}

impl Queue {
    fn lock(&self) -> MutexGuard<'_, State> {
        // Plain data: a panic while holding the lock leaves it usable.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The bus's end of one queue. Dropped with the last bus: the receiver
/// then drains what is left and gets `None`.
pub(super) struct Subscriber(Arc<Queue>);

/// A surface's end: `recv().await` / `try_recv()`, as with an mpsc receiver.
pub struct EventReceiver(Arc<Queue>);

pub(super) fn queue() -> (Subscriber, EventReceiver) {
    let queue = Arc::new(Queue::default());
    (Subscriber(queue.clone()), EventReceiver(queue))
}

impl Subscriber {
    /// Queues the event; false when the receiver is gone.
    pub(super) fn send(&self, event: Event) -> bool {
        let mut state = self.0.lock();
        if state.abandoned {
            return false;
        }
        let merged = match state.events.back_mut() {
            Some(last) => merge(last, &event),
            None => false,
        };
        if !merged {
            state.events.push_back(event);
        }
        drop(state);
        self.0.ready.notify_one();
        true
    }
}

impl Drop for Subscriber {
    fn drop(&mut self) {
        self.0.lock().closed = true;
        self.0.ready.notify_one();
    }
}

/// Appends `next` to `last` when both are streamed text of one session
/// and origin, of one kind.
fn merge(last: &mut Event, next: &Event) -> bool {
    if last.session != next.session || last.origin != next.origin {
        return false;
    }
    match (&mut last.kind, &next.kind) {
        (EventKind::Delta(AnswerDelta { text }), EventKind::Delta(AnswerDelta { text: more }))
        | (
            EventKind::Reasoning(ReasoningDelta { text }),
            EventKind::Reasoning(ReasoningDelta { text: more }),
        ) if text.len() < MAX_MERGED_BYTES => {
            text.push_str(more);
            true
        }
        _ => false,
    }
}

impl EventReceiver {
    /// The next event; `None` once the bus is gone and the queue is empty.
    /// Cancel-safe: an event is taken only when it is returned.
    pub async fn recv(&mut self) -> Option<Event> {
        let queue = self.0.clone();
        loop {
            let ready = queue.ready.notified();
            match self.try_recv() {
                Ok(event) => return Some(event),
                Err(TryRecvError::Disconnected) => return None,
                Err(TryRecvError::Empty) => ready.await,
            }
        }
    }

    pub fn try_recv(&mut self) -> Result<Event, TryRecvError> {
        let mut state = self.0.lock();
        match state.events.pop_front() {
            Some(event) => Ok(event),
            None if state.closed => Err(TryRecvError::Disconnected),
            None => Err(TryRecvError::Empty),
        }
    }
}

impl Drop for EventReceiver {
    fn drop(&mut self) {
        let mut state = self.0.lock();
        state.abandoned = true;
        state.events.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::{FinalAnswer, Origin, TurnEnded};

    fn ev(session: &str, kind: EventKind) -> Event {
        Event {
            agent: None,
            submission: None,
            session: session.into(),
            origin: Origin::Cli,
            kind,
        }
    }

    fn delta(session: &str, text: &str) -> Event {
        ev(session, EventKind::Delta(AnswerDelta { text: text.into() }))
    }

    #[tokio::test]
    async fn waiting_deltas_of_one_session_merge_and_nothing_else_does() {
        let (tx, mut rx) = queue();
        tx.send(delta("a", "one "));
        tx.send(delta("a", "two "));
        tx.send(delta("b", "other"));
        tx.send(delta("a", "three"));
        tx.send(ev(
            "a",
            EventKind::TurnEnded(TurnEnded { interrupted: false }),
        ));
        tx.send(delta("a", "four"));
        let got: Vec<Event> = std::iter::from_fn(|| rx.try_recv().ok()).collect();
        assert_eq!(
            got,
            vec![
                delta("a", "one two "),
                delta("b", "other"),
                delta("a", "three"),
                ev("a", EventKind::TurnEnded(TurnEnded { interrupted: false })),
                delta("a", "four"),
            ]
        );
    }

    #[tokio::test]
    async fn a_lagging_receiver_holds_the_text_not_an_event_per_delta() {
        let (tx, mut rx) = queue();
        for _ in 0..1_000_000 {
            tx.send(delta("a", "x"));
        }
        tx.send(ev(
            "a",
            EventKind::Final(FinalAnswer {
                text: "done".into(),
            }),
        ));
        let queued = tx.0.lock().events.len();
        assert_eq!(queued, 1_000_000 / MAX_MERGED_BYTES + 2);
        let mut text = 0;
        while let Ok(event) = rx.try_recv() {
            match event.kind {
                EventKind::Delta(AnswerDelta { text: t }) => text += t.len(),
                EventKind::Final(_) => break,
                other => panic!("{other:?}"),
            }
        }
        assert_eq!(text, 1_000_000);
    }

    #[tokio::test]
    async fn recv_waits_then_ends_when_the_bus_is_gone() {
        let (tx, mut rx) = queue();
        let reader = tokio::spawn(async move {
            let mut got = Vec::new();
            while let Some(event) = rx.recv().await {
                got.push(event);
            }
            got
        });
        tokio::task::yield_now().await;
        tx.send(delta("a", "hi"));
        drop(tx);
        assert_eq!(reader.await.unwrap(), vec![delta("a", "hi")]);
    }

    #[test]
    fn a_dropped_receiver_is_reported_to_the_bus() {
        let (tx, rx) = queue();
        assert!(tx.send(delta("a", "x")));
        drop(rx);
        assert!(!tx.send(delta("a", "y")));
    }
}
