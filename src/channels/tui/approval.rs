//! Pending approval requests from any session, oldest first. The modal
//! shows the first; answering sends the decision and shows the next. A
//! request decided elsewhere (Discord, a timeout, an interrupt) leaves the
//! queue quietly when its `approval_decision` event arrives.

use std::collections::VecDeque;

use crate::protocol::{Op, Origin, ReviewDecision, SessionId};

#[derive(Clone, Debug, PartialEq)]
pub struct Request {
    pub id: String,
    pub session: SessionId,
    pub origin: Origin,
    pub tool: String,
    pub command: String,
    pub cwd: String,
    /// What `a`/`p` would remember, as the core derived it.
    pub rule: Option<String>,
    /// The sandbox the command runs in, as the core says it.
    pub sandbox: Option<String>,
    /// Set when this asks to re-run a failed command outside the sandbox:
    /// the reason (the lines that look like the sandbox refused).
    pub escalation: Option<String>,
}

#[derive(Debug, Default)]
pub struct Approvals {
    queue: VecDeque<Request>,
}

impl Approvals {
    /// Queues a request; true when it opens the modal (nothing was showing).
    pub fn push(&mut self, request: Request) -> bool {
        if self.queue.iter().any(|r| r.id == request.id) {
            return false;
        }
        self.queue.push_back(request);
        self.queue.len() == 1
    }

    pub fn current(&self) -> Option<&Request> {
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
        self.queue.retain(|r| r.id != id);
    }

    /// The decision for the shown request, by key: `y` once, `a` the
    /// prefix for the session, `p` the prefix permanently, `n`/Esc deny.
    pub fn answer(&mut self, decision: ReviewDecision) -> Option<Op> {
        let request = self.queue.pop_front()?;
        Some(Op::ApprovalDecision {
            id: request.id,
            decision,
            by: Origin::Tui,
        })
    }
}
