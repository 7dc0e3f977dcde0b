//! The server's numbered stream: one subscriber of the core's bus gives
//! every event the next `seq` and appends it to a bounded replay ring; a
//! tracker fed by the same appends knows the approvals still open and the
//! live sessions. Connections only read it (each keeps its own cursor), so
//! a slow client costs the core one append per event and nothing more.

use std::collections::{BTreeMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard};

use tokio::sync::watch;

use crate::protocol::wire::LiveSession;
use crate::protocol::{Event, EventKind, SessionId};

/// The ring keeps at most this many events...
pub const RING_EVENTS: usize = 16 * 1024;
/// ...and at most about this much of their JSON.
pub const RING_BYTES: usize = 16 * 1024 * 1024;
/// The tracker forgets the oldest idle sessions beyond this many.
const MAX_TRACKED_SESSIONS: usize = 4096;

/// How much an event counts against [`RING_BYTES`]: its JSON's length,
/// estimated without serializing the streamed text (the most frequent).
pub fn approx_bytes(event: &Event) -> usize {
    let envelope = 96 + event.session.len();
    match &event.kind {
        EventKind::Delta(d) => envelope + d.text.len(),
        EventKind::Reasoning(r) => envelope + r.text.len(),
        _ => serde_json::to_vec(event).map_or(envelope, |json| json.len()),
    }
}

/// A cursor that fell out of the ring: what it wanted is gone.
#[derive(Debug, PartialEq, Eq)]
pub struct Lost;

struct Stored {
    seq: u64,
    event: Arc<Event>,
    bytes: usize,
}

/// The last events, numbered; bounded in count and bytes.
pub struct Ring {
    events: VecDeque<Stored>,
    bytes: usize,
    max_events: usize,
    max_bytes: usize,
    newest: u64,
}

impl Ring {
    pub fn new(max_events: usize, max_bytes: usize) -> Self {
        Ring {
            events: VecDeque::new(),
            bytes: 0,
            max_events: max_events.max(1),
            max_bytes,
            newest: 0,
        }
    }

    /// Appends the event under the next number, dropping the oldest past
    /// the bounds; its number.
    pub fn push(&mut self, event: Arc<Event>) -> u64 {
        self.newest += 1;
        let bytes = approx_bytes(&event);
        self.bytes += bytes;
        self.events.push_back(Stored {
            seq: self.newest,
            event,
            bytes,
        });
        while self.events.len() > self.max_events
            || (self.bytes > self.max_bytes && self.events.len() > 1)
        {
            if let Some(old) = self.events.pop_front() {
                self.bytes -= old.bytes;
            }
        }
        self.newest
    }

    /// The number of the last event appended (0 before the first).
    pub fn newest(&self) -> u64 {
        self.newest
    }

    /// Whether a client that applied everything up to `cursor` can go on
    /// from here without missing an event.
    pub fn holds_after(&self, cursor: u64) -> bool {
        let first = self.newest + 1 - self.events.len() as u64;
        cursor <= self.newest && cursor + 1 >= first
    }

    /// Up to `max` events after `cursor`; [`Lost`] when some of them are
    /// no longer here.
    pub fn after(&self, cursor: u64, max: usize) -> Result<Vec<(u64, Arc<Event>)>, Lost> {
        if !self.holds_after(cursor) {
            return Err(Lost);
        }
        let first = self.newest + 1 - self.events.len() as u64;
        let from = (cursor + 1 - first) as usize;
        Ok(self
            .events
            .range(from..)
            .take(max)
            .map(|s| (s.seq, s.event.clone()))
            .collect())
    }
}

/// What `hello` and a resynchronised client need besides the ring: the
/// approvals still open (request until its decision) and the sessions.
#[derive(Default)]
pub struct Tracker {
    approvals: Vec<(u64, Arc<Event>)>,
    sessions: BTreeMap<SessionId, LiveSession>,
}

impl Tracker {
    pub fn observe(&mut self, seq: u64, event: &Arc<Event>) {
        match &event.kind {
            EventKind::ApprovalRequest(request) => {
                self.approvals
                    .retain(|(_, e)| approval_id(e) != Some(&request.id));
                self.approvals.push((seq, event.clone()));
            }
            EventKind::ApprovalDecision(decision) => {
                self.approvals
                    .retain(|(_, e)| approval_id(e) != Some(&decision.id));
            }
            _ => {}
        }
        let busy = match &event.kind {
            EventKind::TurnStarted(_) | EventKind::Queued(_) => Some(true),
            EventKind::TurnEnded(_) => Some(false),
            _ => None,
        };
        // Streamed text (most events) changes nothing here: no allocation.
        let known = self.sessions.get_mut(&event.session);
        match (known, busy) {
            (Some(_), None) => {}
            (Some(session), Some(busy)) => {
                session.busy = busy;
                session.origin = event.origin.to_string();
            }
            (None, busy) => {
                let session = LiveSession {
                    id: event.session.clone(),
                    origin: event.origin.to_string(),
                    busy: busy.unwrap_or(false),
                    agent: event.agent.clone(),
                };
                self.sessions.insert(event.session.clone(), session);
            }
        }
        if self.sessions.len() > MAX_TRACKED_SESSIONS {
            let idle = self.sessions.iter().find(|(_, s)| !s.busy);
            if let Some(id) = idle.map(|(id, _)| id.clone()) {
                self.sessions.remove(&id);
            }
        }
    }

    /// The open approval requests, oldest first, with their numbers.
    pub fn approvals(&self) -> Vec<(u64, Arc<Event>)> {
        self.approvals.clone()
    }

    pub fn sessions(&self) -> Vec<LiveSession> {
        self.sessions.values().cloned().collect()
    }
}

fn approval_id(event: &Event) -> Option<&String> {
    match &event.kind {
        EventKind::ApprovalRequest(request) => Some(&request.id),
        _ => None,
    }
}

pub struct StreamState {
    pub ring: Ring,
    pub tracker: Tracker,
}

/// The ring and the tracker under one lock (so `hello`'s numbers and its
/// open approvals agree), and the newest number as a watch the
/// connections' writers wait on.
pub struct Stream {
    state: Mutex<StreamState>,
    newest: watch::Sender<u64>,
}

impl Stream {
    pub fn new(max_events: usize, max_bytes: usize) -> Self {
        Stream {
            state: Mutex::new(StreamState {
                ring: Ring::new(max_events, max_bytes),
                tracker: Tracker::default(),
            }),
            newest: watch::channel(0).0,
        }
    }

    /// Numbers the event and keeps it; what the sequencer does per event.
    pub fn append(&self, event: Event) -> u64 {
        let event = Arc::new(event);
        let seq = {
            let mut state = self.lock();
            let seq = state.ring.push(event.clone());
            state.tracker.observe(seq, &event);
            seq
        };
        self.newest.send_replace(seq);
        seq
    }

    pub fn lock(&self) -> MutexGuard<'_, StreamState> {
        // Plain data: a panic while holding the lock leaves it usable.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Changes whenever an event is appended.
    pub fn watch(&self) -> watch::Receiver<u64> {
        self.newest.subscribe()
    }
}

#[cfg(test)]
#[path = "ring_tests.rs"]
mod tests;
