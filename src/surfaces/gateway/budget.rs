//! How fast one connection may start work: each `user_message` queues a
//! turn and each `command` may call the model (`/compact`) or copy a
//! transcript (`/fork`), and the core's queue has no bound of its own. A
//! connection gets a burst of [`BURST`] such ops and [`PER_SECOND`] more
//! each second; past that an op is rejected (never dropped unseen), so a
//! runaway script or a stolen device token cannot bury the core in turns.
//! Interrupts and approval decisions are never limited: they stop work.

use std::time::Instant;

use crate::protocol::Op;

/// Ops that start work, accepted at once from a fresh connection.
pub const BURST: f64 = 32.0;
/// Ops that start work, accepted per second after the burst.
pub const PER_SECOND: f64 = 2.0;

pub struct TurnBudget {
    left: f64,
    at: Instant,
}

impl Default for TurnBudget {
    fn default() -> Self {
        Self {
            left: BURST,
            at: Instant::now(),
        }
    }
}

impl TurnBudget {
    /// Takes one op from the budget when `op` starts work; why not when
    /// the connection is over it.
    pub fn take(&mut self, op: &Op) -> Result<(), String> {
        self.take_at(op, Instant::now())
    }

    fn take_at(&mut self, op: &Op, now: Instant) -> Result<(), String> {
        if !matches!(op, Op::UserMessage { .. } | Op::Command { .. }) {
            return Ok(());
        }
        let refill = now.saturating_duration_since(self.at).as_secs_f64() * PER_SECOND;
        self.left = (self.left + refill).min(BURST);
        self.at = now;
        if self.left < 1.0 {
            return Err(format!(
                "too many messages and commands on this connection (at most {PER_SECOND} a second after {BURST}); try again in a moment"
            ));
        }
        self.left -= 1.0;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    /// The time to earn one more op.
    fn one_op() -> Duration {
        Duration::from_secs_f64(1.0 / PER_SECOND)
    }

    fn message() -> Op {
        Op::UserMessage {
            session: "s".into(),
            origin: crate::protocol::Origin::Cli,
            text: "hi".into(),
            images: Vec::new(),
        }
    }

    #[test]
    fn a_flood_is_rejected_after_the_burst_but_interrupts_pass() {
        let mut budget = TurnBudget::default();
        let start = Instant::now();
        for _ in 0..BURST as usize {
            assert!(budget.take_at(&message(), start).is_ok());
        }
        let err = budget.take_at(&message(), start).unwrap_err();
        assert!(err.contains("too many"), "{err}");
        let interrupt = Op::Interrupt {
            session: "s".into(),
        };
        assert!(budget.take_at(&interrupt, start).is_ok());
        assert!(budget.take_at(&message(), start + one_op()).is_ok());
        assert!(budget.take_at(&message(), start + one_op()).is_err());
    }
}
