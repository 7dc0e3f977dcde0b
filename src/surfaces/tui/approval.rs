//! Pending approval requests from any session, oldest first. The modal
//! shows the first; answering sends the decision and shows the next. A
//! request decided elsewhere (Discord, a timeout, an interrupt) leaves the
//! queue quietly when its `approval_decision` event arrives.
//!
//! The modal opens under the user's fingers: a request can arrive while
//! they type a message, and a word holding `y`, `a`, `p` or `n` would
//! decide it. So the shown request carries a guard (`Arming`): it takes
//! no decision until it has been on the screen *and* the keyboard has been
//! quiet for `ARM_AFTER`. Keys typed before that are the message's: the
//! key handler (`keys.rs`) puts them back in the input box, and each of
//! them starts the quiet period again, so a user who keeps typing never
//! decides anything. A key read before the modal was first drawn cannot
//! have been meant for it and counts the same way. `p` (remember the rule
//! permanently) also asks for Enter: a held-down `p` repeats, a second
//! different key does not. Time comes in as an argument, so tests drive
//! the guard with a made-up clock.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use crate::protocol::{ApprovalRequest, Op, Origin, ReviewDecision, SessionId};

/// How long the shown modal must have been drawn, and the keyboard quiet,
/// before a key decides it. Fast typists press a key every 100-250 ms; half
/// a second of silence means they stopped to read.
pub const ARM_AFTER: Duration = Duration::from_millis(500);

/// A request waiting for the modal: the core's request as it came, and
/// the session it is for.
#[derive(Clone, Debug, PartialEq)]
pub struct PendingApproval {
    pub session: SessionId,
    pub origin: Origin,
    pub request: ApprovalRequest,
}

/// Where the shown request's keystroke guard stands. It moves forward
/// only on a drawn frame or the loop's timer, so the keys never decide
/// anything the screen has not shown as armed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Arming {
    /// Not drawn yet: no key can be meant for it.
    #[default]
    Unseen,
    /// On the screen, keys greyed; arms `ARM_AFTER` past `quiet_since`
    /// (its first frame, or the last key typed since, the later).
    Waiting { quiet_since: Instant },
    /// The quiet period passed; the frame lighting the keys is not out yet.
    Lit,
    /// The keys are lit on the screen: `y`, `a`, `p`, `n`, Esc decide.
    Armed,
    /// `p` was pressed while armed: Enter remembers the rule, any other
    /// key goes back to the choices.
    ConfirmAlways,
}

/// What a key does to the shown request.
#[derive(Clone, Debug)]
pub enum KeyOutcome {
    /// Not armed, or not a decision key: the key belongs to the input box.
    ToInput,
    /// A decision key while armed: this op answers the request.
    Decided(Op),
    /// Consumed by the modal with no decision (`p` asking for Enter, a key
    /// backing out of that question, a key no request of this kind takes).
    Held,
}

/// The decision keys, as the handler reads them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ModalKey {
    Once,
    Session,
    Always,
    OutsideSandbox,
    Deny,
    Confirm,
    /// Any other key.
    Other,
}

#[derive(Debug, Default)]
pub struct Approvals {
    queue: VecDeque<PendingApproval>,
    arming: Arming,
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

    /// Drops a request decided anywhere; the next one shown starts unarmed.
    pub fn remove(&mut self, id: &str) {
        if self.current().is_some_and(|p| p.request.id == id) {
            self.arming = Arming::Unseen;
        }
        self.queue.retain(|p| p.request.id != id);
    }

    /// A frame showing the modal reached the terminal at `now`: a newly
    /// shown request starts its quiet period, a lit one is armed.
    pub fn drawn(&mut self, now: Instant) {
        if self.is_empty() {
            return;
        }
        match self.arming {
            Arming::Unseen => self.arming = Arming::Waiting { quiet_since: now },
            Arming::Lit => self.arming = Arming::Armed,
            Arming::Waiting { .. } | Arming::Armed | Arming::ConfirmAlways => {}
        }
    }

    /// The loop's timer: a modal whose quiet period has passed lights its
    /// keys (and stops asking for a timer).
    pub fn tick(&mut self, now: Instant) {
        if self.arms_at().is_some_and(|at| now >= at) {
            self.arming = Arming::Lit;
        }
    }

    /// A key or a paste went to the input box: the quiet period starts
    /// again (a shown modal goes back to waiting).
    pub fn typed(&mut self, now: Instant) {
        if self.arming != Arming::Unseen {
            self.arming = Arming::Waiting { quiet_since: now };
        }
    }

    /// When the waiting modal lights its keys (None: nothing waiting), for
    /// the loop's timer.
    pub fn arms_at(&self) -> Option<Instant> {
        match self.arming {
            Arming::Waiting { quiet_since } if !self.is_empty() => Some(quiet_since + ARM_AFTER),
            _ => None,
        }
    }

    /// Whether a key decides the shown request.
    pub fn is_armed(&self) -> bool {
        matches!(self.arming, Arming::Armed | Arming::ConfirmAlways)
    }

    /// Whether the modal draws its keys lit.
    pub fn shows_armed(&self) -> bool {
        self.is_armed() || self.arming == Arming::Lit
    }

    /// Whether `p` waits for its Enter.
    pub fn confirming_always(&self) -> bool {
        self.arming == Arming::ConfirmAlways
    }

    /// One key for the shown request, read at `now`.
    pub fn key(&mut self, key: ModalKey, now: Instant) -> KeyOutcome {
        let Some(pending) = self.current() else {
            return KeyOutcome::ToInput;
        };
        let escalation = pending.request.escalation.is_some();
        if self.arming == Arming::ConfirmAlways {
            return match key {
                ModalKey::Confirm => self.decide(ReviewDecision::ApprovedAlways),
                ModalKey::Other => {
                    self.typed(now);
                    KeyOutcome::ToInput
                }
                // Back to the choices, armed: the user is reading the modal.
                _ => {
                    self.arming = Arming::Armed;
                    KeyOutcome::Held
                }
            };
        }
        if !self.is_armed() {
            self.typed(now);
            return KeyOutcome::ToInput;
        }
        // A request to re-run outside the sandbox takes `o` or a denial:
        // no other approval applies to it, so no key press slips into one.
        match key {
            ModalKey::OutsideSandbox if escalation => {
                self.decide(ReviewDecision::ApprovedOutsideSandbox)
            }
            ModalKey::Once | ModalKey::Session | ModalKey::Always if escalation => KeyOutcome::Held,
            ModalKey::Once => self.decide(ReviewDecision::ApprovedOnce),
            ModalKey::Session => self.decide(ReviewDecision::ApprovedForSession),
            ModalKey::Always => {
                self.arming = Arming::ConfirmAlways;
                KeyOutcome::Held
            }
            ModalKey::Deny => self.decide(ReviewDecision::Denied),
            ModalKey::OutsideSandbox | ModalKey::Confirm => KeyOutcome::Held,
            // Typing resumed: the key is the message's, and the modal
            // waits for quiet again.
            ModalKey::Other => {
                self.typed(now);
                KeyOutcome::ToInput
            }
        }
    }

    fn decide(&mut self, decision: ReviewDecision) -> KeyOutcome {
        match self.answer(decision) {
            Some(op) => KeyOutcome::Decided(op),
            None => KeyOutcome::ToInput,
        }
    }

    /// The decision for the shown request: `y` once, `a` the prefix for
    /// the session, `p` then Enter the prefix permanently, `n`/Esc deny.
    /// The next request shown starts unarmed.
    pub fn answer(&mut self, decision: ReviewDecision) -> Option<Op> {
        let pending = self.queue.pop_front()?;
        self.arming = Arming::Unseen;
        Some(Op::ApprovalDecision {
            id: pending.request.id,
            decision,
            by: Origin::Tui,
        })
    }
}
