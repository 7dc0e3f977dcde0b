//! Pending approval requests from any session, oldest first. The modal
//! shows the first; answering sends the decision and shows the next. A
//! request decided elsewhere (Discord, a timeout, an interrupt) leaves the
//! queue quietly when its `approval_decision` event arrives.

use std::collections::VecDeque;

use crate::protocol::{ApprovalRequest, Op, Origin, ReviewDecision, SessionId};

/// A request waiting for the modal: the core's request as it came, and
/// the session it is for.
#[derive(Clone, Debug, PartialEq)]
pub struct PendingApproval {
    pub session: SessionId,
    pub origin: Origin,
    pub request: ApprovalRequest,
}

#[derive(Debug, Default)]
pub struct Approvals {
    queue: VecDeque<PendingApproval>,
}

impl Approvals {
    /// Queues a request; true when it opens the modal (nothing was showing).
    pub fn push(&mut self, pending: PendingApproval) -> bool {
        if self
            .queue
            .iter()
            .any(|p| p.request.id == pending.request.id)
        {
            return false;
        }
        self.queue.push_back(pending);
        self.queue.len() == 1
    }

    pub fn current(&self) -> Option<&PendingApproval> {
        self.queue.front()
    }

    pub fn len(&self) -> usize {
        self.queue.len()
    }

    pub fn is_empty(&self) -> bool {
        self.queue.is_empty()
    }

    /// Drops a request decided anywhere.
    pub fn remove(&mut self, id: &str) {
        self.queue.retain(|p| p.request.id != id);
    }

    /// The decision for the shown request, by key: `y` once, `a` the
    /// prefix for the session, `p` the prefix permanently, `n`/Esc deny.
    pub fn answer(&mut self, decision: ReviewDecision) -> Option<Op> {
        let pending = self.queue.pop_front()?;
        Some(Op::ApprovalDecision {
            id: pending.request.id,
            decision,
            by: Origin::Tui,
        })
    }
}
