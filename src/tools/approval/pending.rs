//! Approval requests parked until a surface answers, by request id.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use tokio::sync::oneshot;

use super::lock;
use crate::protocol::{Origin, ReviewDecision};

/// A decision and the surface that gave it.
pub(super) type Answer = (ReviewDecision, Origin);

/// Approval requests waiting for a surface to answer, by request id.
#[derive(Clone, Default)]
pub struct PendingApprovals {
    waiting: Arc<Mutex<HashMap<String, oneshot::Sender<Answer>>>>,
}

impl PendingApprovals {
    pub fn new() -> Self {
        Self::default()
    }

    /// Delivers a decision. The first answer wins: later answers for the same
    /// id (another surface, a double key press) return false and do nothing.
    pub fn resolve(&self, id: &str, decision: ReviewDecision, by: Origin) -> bool {
        match lock(&self.waiting).remove(id) {
            Some(tx) => tx.send((decision, by)).is_ok(),
            None => false,
        }
    }

    /// Whether a request is still waiting for an answer.
    pub fn is_pending(&self, id: &str) -> bool {
        lock(&self.waiting).contains_key(id)
    }

    pub(super) fn park(&self, id: &str) -> oneshot::Receiver<Answer> {
        let (tx, rx) = oneshot::channel();
        lock(&self.waiting).insert(id.to_string(), tx);
        rx
    }

    /// Drops a request nobody answered; true when it was still waiting.
    pub(super) fn forget(&self, id: &str) -> bool {
        lock(&self.waiting).remove(id).is_some()
    }
}
