//! Where a turn runs and when it moves: the router's decision (settled by
//! the local model when the heuristics are unsure), the turn's route as it
//! changes (escalated, fallen back), and the record of every escalation in
//! `.egirl/escalation.jsonl`. The escalation checks themselves are pure, in
//! `routing::escalation`.

use std::io::Write;

use tokio_util::sync::CancellationToken;

use super::Shared;
use super::budget::TurnBudget;
use crate::chat::ChatMessage;
use crate::protocol::{Escalation, EventKind, LocalRole, Route, RoutedModel, Target};
use crate::providers::endpoints::Failover;
use crate::providers::remote::RemoteProvider;
use crate::providers::{ChatRequest, StreamChunk};
use crate::routing::escalation::{Standing, Trigger};
use crate::routing::{Category, Decision, RouteInput, SkillIndex, classify};

/// Where a turn's requests go now. It moves twice at most: to the remote
/// model on an escalation, and back to local when the remote side fails
/// (then for good: a weak local answer would escalate into the same
/// failure at every step).
pub(super) struct TurnRoute<'a> {
    target: Target,
    /// The remote provider this turn may use; `None` once it failed.
    remote: Option<&'a RemoteProvider>,
    /// After a weak local answer: where the note to the remote model goes.
    handoff: Option<(usize, ChatMessage)>,
    /// The spend caps, when set; checked before every remote request.
    budget: Option<TurnBudget>,
    /// About what the next request carries (prices its worst case).
    prompt_tokens: u64,
}

impl<'a> TurnRoute<'a> {
    /// Without a remote provider every request is local, whatever the router said.
    pub fn new(
        decided: Target,
        remote: Option<&'a RemoteProvider>,
        budget: Option<TurnBudget>,
        prompt_tokens: u64,
    ) -> Self {
        let target = match remote {
            Some(_) => decided,
            None => Target::Local,
        };
        Self {
            target,
            remote,
            handoff: None,
            budget,
            prompt_tokens,
        }
    }

    /// Why the spend caps stop a remote request now (its prompt about
    /// `prompt_tokens`, its reply as long as allowed); `None`: it may go.
    pub fn over_budget(&mut self, prompt_tokens: u64) -> Option<String> {
        self.prompt_tokens = prompt_tokens;
        self.budget.as_ref()?.refusal(prompt_tokens)
    }

    /// A request of this turn was answered: a remote one cost `usd`, and
    /// the next one carries about `prompt_tokens`.
    pub fn answered(&mut self, remote_usd: f64, prompt_tokens: u64) {
        self.prompt_tokens = prompt_tokens;
        if let Some(budget) = &mut self.budget {
            budget.spend(remote_usd);
        }
    }

    /// The remote provider this turn may still use (on it or not).
    pub fn remote(&self) -> Option<&'a RemoteProvider> {
        self.remote
    }

    /// The remote provider when the next request goes to it.
    pub fn remote_now(&self) -> Option<&'a RemoteProvider> {
        match (self.target, self.remote) {
            (Target::Remote, Some(r)) => Some(r),
            _ => None,
        }
    }

    pub fn handoff(&self) -> Option<&(usize, ChatMessage)> {
        self.handoff.as_ref()
    }

    /// What the escalation checks need to know of it.
    pub fn standing(&self) -> Standing {
        // An escalation the caps cannot pay for is no escalation: the
        // local answer stands.
        let affordable = self
            .budget
            .as_ref()
            .is_none_or(|b| b.refusal(self.prompt_tokens).is_none());
        Standing {
            remote_available: self.remote.is_some() && affordable,
            on_remote: self.target == Target::Remote,
        }
    }

    /// Announces and records the escalation, then sends the next requests
    /// remote; after a weak answer, with the hand-off note at `handoff_at`.
    pub fn escalate(
        &mut self,
        shared: &Shared,
        emit: &dyn Fn(EventKind),
        session: &str,
        trigger: &Trigger,
        handoff_at: Option<usize>,
    ) {
        let Some(r) = self.remote else {
            return;
        };
        record(shared, emit, session, r, trigger);
        self.handoff = handoff_at.map(|at| (at, handoff_note(trigger)));
        self.target = Target::Remote;
    }

    /// The remote side failed: the rest of the turn is local.
    pub fn fall_back_local(&mut self) {
        self.target = Target::Local;
        self.handoff = None;
        self.remote = None;
    }
}

/// Most tokens the classification may answer with ("local" is one).
const CLASSIFY_MAX_TOKENS: u64 = 8;

/// The router's decision for a turn, with the local model asked when the
/// heuristics cannot tell and `ask` allows it (time-boxed; its silence
/// keeps their guess).
pub(super) async fn decide(
    shared: &Shared,
    message: &str,
    history_bytes: usize,
    forced: Option<Target>,
    skills: &SkillIndex,
    ask: bool,
    cancel: &CancellationToken,
) -> Decision {
    let limits = shared.limits().await;
    let input = RouteInput {
        message,
        // About four bytes a token: the router's 0.8 rule needs a size, not
        // an exact count, and counting would cost a round trip per turn.
        prompt_tokens: (history_bytes as u64 + message.len() as u64).div_ceil(4),
        n_ctx: limits.n_ctx,
        forced,
        skills,
        remote_available: shared.remote.preferred().is_some(),
    };
    let decision = shared.router.decide(&input);
    if !ask || !shared.router.wants_classification(&decision) || !input.remote_available {
        return decision;
    }
    let answer = tokio::time::timeout(
        shared.router.classify_timeout(),
        classify_locally(shared, message, cancel),
    )
    .await
    .ok()
    .flatten();
    shared.router.apply_classification(decision, answer)
}

/// Asks the local model "local or remote?". Any failure is `None`.
async fn classify_locally(
    shared: &Shared,
    message: &str,
    cancel: &CancellationToken,
) -> Option<Target> {
    let request = ChatRequest {
        messages: classify::classification_messages(message),
        tools: Default::default(),
        max_tokens: CLASSIFY_MAX_TOKENS,
        // Any free slot: the sessions' own caches stay as they are.
        slot: None,
        images: Default::default(),
    };
    let mut ignore = |_: StreamChunk| {};
    let mut moved = |_: Failover| {};
    // `[local.fast]` when there is one: a word from the small model is enough.
    let role = shared.fast_role();
    match shared
        .local_chat(role, None, &request, cancel, &mut ignore, &mut moved)
        .await
    {
        Ok(served) => classify::parse_classification(&served.response.content),
        Err(e) => {
            tracing::info!("routing classification failed ({e}); keeping the heuristics' guess");
            None
        }
    }
}

/// Whether a local answer to this kind of request should say more than a
/// few words (the too-short check). A quick fact ("Wellington.") or a
/// greeting may be one word; a long ask or one the router could not place
/// may not.
pub(super) fn substantive(decision: &Decision, message: &str) -> bool {
    matches!(
        decision.category,
        Category::MemoryRecall | Category::Unknown
    ) || message.split_whitespace().count() >= 25
}

/// Announces an escalation and appends it to `.egirl/escalation.jsonl`
/// (the data for tuning the router later).
pub(super) fn record(
    shared: &Shared,
    emit: &dyn Fn(EventKind),
    session: &str,
    remote: &RemoteProvider,
    trigger: &Trigger,
) {
    let from = RoutedModel {
        route: Route::Local(LocalRole::Main),
        model: Some(shared.config.local.model.clone()),
    };
    let to = RoutedModel {
        route: Route::Remote(remote.name().into()),
        model: Some(remote.model().into()),
    };
    emit(EventKind::Escalation(Escalation {
        from: from.clone(),
        to: to.clone(),
        reason: trigger.reason.clone(),
        trigger: trigger.trigger.to_string(),
    }));
    let line = serde_json::json!({
        "ts": chrono::Utc::now(),
        "session": session,
        "from": from.to_string(),
        "to": to.to_string(),
        "trigger": trigger.trigger,
        "reason": trigger.reason,
    });
    let path = shared.workspace.join(".egirl").join("escalation.jsonl");
    let written = path
        .parent()
        .map_or(Ok(()), std::fs::create_dir_all)
        .and_then(|_| {
            let mut file = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(&path)?;
            writeln!(file, "{line}")
        });
    if let Err(e) = written {
        tracing::warn!("cannot append to {}: {e}", path.display());
    }
}

/// The note that goes (unsaved) after the local attempt when a turn is
/// replayed remotely, so the remote model knows what it is fixing.
fn handoff_note(trigger: &Trigger) -> ChatMessage {
    ChatMessage::user(format!(
        "[egirl] The answer above came from a smaller local model and was judged not good enough ({}). \
Answer my last request properly yourself; use the tools if needed. Do not mention this note.",
        trigger.reason
    ))
}
