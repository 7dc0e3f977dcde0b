//! The spend caps in a turn (`usage::budget`): read from the usage log as
//! the turn starts, the turn's own remote requests added as they cost (the
//! log is written behind, by a bus subscriber), and checked before every
//! remote request at the most it may cost.

use super::session::Turn;
use crate::config::Pricing;
use crate::protocol::{EventKind, Notice, Target};
use crate::providers::remote::RemoteProvider;
use crate::routing::Decision;
use crate::usage::budget::{Budget, request_estimate};

/// The caps as this turn sees them.
pub(super) struct TurnBudget {
    budget: Budget,
    pricing: Option<Pricing>,
    max_output: u64,
}

impl TurnBudget {
    /// `None` without a cap.
    fn read(turn: &Turn<'_>, remote: &RemoteProvider) -> Option<Self> {
        let shared = turn.shared;
        let budget = Budget::of(
            &shared.config.remote,
            &shared.workspace,
            crate::usage::now(),
        )?;
        Some(Self {
            budget,
            pricing: crate::usage::price_for(&shared.config.pricing, remote.model()),
            max_output: remote.max_tokens(),
        })
    }

    /// Why a remote request with a prompt of `prompt_tokens` may not start.
    pub fn refusal(&self, prompt_tokens: u64) -> Option<String> {
        let most = request_estimate(self.pricing.as_ref(), prompt_tokens, self.max_output);
        self.budget.refusal(most)
    }

    /// A remote request of this turn cost `usd`.
    pub fn spend(&mut self, usd: f64) {
        self.budget.spend(usd);
    }
}

/// Why the caps stop a remote request with a prompt of `prompt_tokens`
/// now (outside a turn's route: a compaction); `None` without caps.
pub(super) fn refusal_now(
    turn: &Turn<'_>,
    remote: &RemoteProvider,
    prompt_tokens: u64,
) -> Option<String> {
    TurnBudget::read(turn, remote)?.refusal(prompt_tokens)
}

/// The remote provider the turn may use under the caps, and the caps.
/// When they stop remote calls, a turn the router (or the user) sent
/// remote runs locally and its routing reason says why; the notices due
/// go out (80% once a period, the stop once a day, and always to a user
/// who asked for the remote model: `/remote`, `/escalate`, "use claude").
pub(super) fn gate<'a>(
    turn: &Turn<'_>,
    decision: &mut Decision,
    remote: Option<&'a RemoteProvider>,
    asked: bool,
    prompt_tokens: u64,
) -> (Option<&'a RemoteProvider>, Option<TurnBudget>) {
    let Some(provider) = remote else {
        return (None, None);
    };
    let Some(budget) = TurnBudget::read(turn, provider) else {
        return (remote, None);
    };
    let stopped = budget.refusal(prompt_tokens);
    let workspace = &turn.shared.workspace;
    let quiet_stop = stopped.as_deref().filter(|_| !asked);
    let mut notices = budget.budget.due_notices(workspace, quiet_stop);
    if let Some(why) = stopped.as_deref().filter(|_| asked) {
        notices.push(format!(
            "the remote budget is spent ({why}); answering locally"
        ));
        budget.budget.stop_noticed(workspace);
    }
    for message in notices {
        turn.emit(EventKind::Notice(Notice { message }));
    }
    match stopped {
        Some(why) => {
            if decision.target == Target::Remote {
                decision.target = Target::Local;
                decision.reason = why;
                decision.confidence = 1.0;
            }
            (None, None)
        }
        None => (remote, Some(budget)),
    }
}

/// What a request will carry, about four bytes a token (as the router
/// estimates): enough to price the worst case, no round trip to count.
pub(super) fn prompt_estimate(system: &str, history: &[crate::chat::ChatMessage]) -> u64 {
    let bytes: usize = system.len() + history.iter().map(|m| m.content.len()).sum::<usize>();
    (bytes as u64).div_ceil(4) + super::vision::remote_tokens(history)
}
