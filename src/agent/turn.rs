//! One turn: the user's message in, the model called until it answers
//! without tool calls (or `max_turns` requests), every step persisted before
//! the next one runs.
//!
//! It reads top to bottom: `plan` (the message stored, the route decided
//! and announced), `prepare` (system prompt and tools, compaction when the
//! window is full), then one `step` after another, each ending in a `Next`
//! that the loop in `run_steps` acts on.

use std::collections::HashSet;
use std::sync::Arc;

use anyhow::Result;
use chrono::Local;
use tokio_util::sync::CancellationToken;

use super::hooks;
use super::prompt::{Fixed, estimate_tokens};
use super::route::TurnRoute;
use super::session::{Session, Turn};
use super::shared::Shared;
use super::steps::{local_step, remote_step};
use super::tool_calls::run_tools;
use super::usage::emit_usage;
use super::{budget, context, local, pin, route, unattended};
use crate::chat::{ChatMessage, ToolCall};
use crate::protocol::{ContextUse, EventKind, Origin, Target};
use crate::protocol::{ErrorEvent, FinalAnswer, Notice, Route, Routing, TurnEnded, TurnStarted};
use crate::providers::ProviderError;
use crate::providers::endpoints::LocalRole;
use crate::providers::remote::RemoteProvider;
use crate::redact;
use crate::routing::Decision;
use crate::routing::escalation::{self, Trigger};
use crate::sessions::{Details, ToolOutcome};
use crate::skills::Snapshot;
use crate::tools;
use crate::tools::checkpoints::TurnCheckpoint;

/// How a turn ended.
enum TurnEnd {
    /// The model answered (the answer may have been a heartbeat's silent ack).
    Answered,
    /// The user (or shutdown) stopped it.
    Interrupted,
    /// It could not go on; the error goes to the user as one line.
    Failed(anyhow::Error),
}

/// What the turn does after a step.
enum Next<'a> {
    /// The reply is the answer.
    Final(String),
    /// A weak local answer: the remote model answers again, after a note.
    Escalate(Trigger),
    /// The model asked for tools: run them, then ask it again.
    RunTools(Vec<ToolCall>),
    /// The remote provider failed: say so and go on locally.
    FallBackLocal(&'a RemoteProvider, ProviderError),
    /// The spend caps stop the next remote request (why): go on locally.
    OverBudget(String),
    /// The user interrupted while the model was answering.
    Interrupted,
}

/// What a turn settles before its first request and keeps to its end.
struct TurnContext {
    /// The router's decision (with the user's own "use claude" applied).
    decision: Decision,
    /// The local model the turn's local requests go to.
    role: LocalRole,
    /// Where the file tools keep this turn's copies for `/rewind`.
    checkpoint: Option<Arc<TurnCheckpoint>>,
    /// The index of the turn's user message in the history.
    current: usize,
    /// The system prompt and the tools offered.
    fixed: Fixed,
}

/// The tool calls of the turn so far: repeats are refused, outcomes feed
/// the escalation checks.
#[derive(Default)]
struct ToolsSoFar {
    seen_calls: HashSet<String>,
    /// Name, success, and whether the tool asked for a stronger model.
    outcomes: Vec<(String, bool, bool)>,
}

impl ToolsSoFar {
    fn outcomes(&self) -> Vec<escalation::ToolOutcome<'_>> {
        self.outcomes
            .iter()
            .map(|(name, success, suggest)| escalation::ToolOutcome {
                name,
                success: *success,
                suggest_escalation: *suggest,
            })
            .collect()
    }
}

pub(crate) async fn run_turn(
    shared: &Shared,
    session: &mut Session,
    origin: Origin,
    typed: String,
    cancel: CancellationToken,
) {
    // What the user typed is kept, but never a secret value in it.
    let typed = shared.redactor.redact(&typed).into_owned();
    let turn = Turn::new(shared, &session.id, origin.clone());
    turn.emit(EventKind::TurnStarted(TurnStarted {
        text: typed.clone(),
        images: session.incoming_images.clone(),
    }));
    hooks::at_turn_start(&turn, session, &typed).await;
    let end = run_steps(&turn, session, &typed, &cancel)
        .await
        .unwrap_or_else(TurnEnd::Failed);
    let interrupted = match end {
        TurnEnd::Answered => false,
        TurnEnd::Interrupted => true,
        TurnEnd::Failed(e) => {
            turn.emit(EventKind::Error(ErrorEvent {
                message: format!("{e:#}"),
            }));
            false
        }
    };
    // Before `turn_ended`: a headless run ends on that event, and the
    // session's next turn waits for these hooks.
    hooks::at_turn_end(&turn, &session.id, interrupted).await;
    turn.emit(EventKind::TurnEnded(TurnEnded { interrupted }));
    // The daily log is memory's digest of the transcript (which has every
    // message already): written after the turn's end, with no await
    // between, so no answer waits for it. The worker takes the session's
    // next job, and `AgentHandle::idle` resolves, only after it. A turn
    // that did not answer still logs what the user said. The same goes
    // for the next new session's spare file, when this session made its file.
    turn.write_daily();
    session.transcript.refill_spare();
    // Old and excess file checkpoints go between turns (when some may be due).
    if shared.checkpoints.prune_due(&session.id, session.turns) {
        let checkpoints = shared.checkpoints.clone();
        let _ = tokio::task::spawn_blocking(move || {
            checkpoints.prune(std::time::SystemTime::now());
        })
        .await;
    }
}

/// The turn's steps; an error is the turn's failure (`TurnEnd::Failed`).
async fn run_steps(
    turn: &Turn<'_>,
    session: &mut Session,
    typed: &str,
    cancel: &CancellationToken,
) -> Result<TurnEnd> {
    let shared = turn.shared;
    // One snapshot for the whole turn: a reload meanwhile waits for the next.
    let skills = shared.skills.snapshot();
    let (mut route, planned) = plan(turn, session, typed, &skills, cancel).await?;
    let ctx = prepare(turn, session, &skills, planned, cancel).await;
    let mut tools = ToolsSoFar::default();
    let max_turns = shared.config.agent.max_turns;
    for _ in 0..max_turns {
        match step(turn, session, typed, &ctx, &mut route, &tools, cancel).await? {
            Next::Final(answer) => {
                deliver_final(turn, answer);
                return Ok(TurnEnd::Answered);
            }
            Next::Escalate(trigger) => {
                // The note goes after the local answer just stored.
                let at = Some(session.history.len());
                route.escalate(shared, &|k| turn.emit(k), &session.id, &trigger, at);
            }
            Next::RunTools(calls) => {
                run_tool_calls(turn, session, &ctx, &mut tools, &calls, cancel).await?;
                if cancel.is_cancelled() {
                    return Ok(TurnEnd::Interrupted);
                }
                // The remote model picks up from the tool history as it stands.
                let outcomes = tools.outcomes();
                if let Some(trigger) = escalation::on_tool_outcomes(route.standing(), &outcomes) {
                    route.escalate(shared, &|k| turn.emit(k), &session.id, &trigger, None);
                }
            }
            Next::FallBackLocal(r, e) => {
                // The remote side failing is no reason to leave the user
                // without an answer: say so and go on locally.
                turn.emit(EventKind::Notice(Notice {
                    message: format!("{} failed ({e}); answering locally", r.name()),
                }));
                route.fall_back_local();
            }
            Next::OverBudget(why) => {
                turn.emit(EventKind::Notice(Notice {
                    message: format!("remote request not sent ({why}); answering locally"),
                }));
                route.fall_back_local();
            }
            Next::Interrupted => return Ok(TurnEnd::Interrupted),
        }
    }
    anyhow::bail!(
        "stopped after {max_turns} model requests without a final answer (raise [agent] max_turns to allow more)"
    )
}

/// What `plan` settles; `prepare` adds the prompt.
struct Planned {
    decision: Decision,
    role: LocalRole,
    checkpoint: Option<Arc<TurnCheckpoint>>,
    current: usize,
}

/// The user's message stored, the route decided and announced (`routing`,
/// and `escalation` when the user asked for the remote model).
async fn plan<'a>(
    turn: &Turn<'a>,
    session: &mut Session,
    typed: &str,
    skills: &Snapshot,
    cancel: &CancellationToken,
) -> Result<(TurnRoute<'a>, Planned)> {
    let shared = turn.shared;
    let now = Local::now();
    let content = context::user_message_with_skill(typed, now, skills.preselect(typed));
    let message =
        ChatMessage::user(content).with_images(std::mem::take(&mut session.incoming_images));
    session.push(&turn.origin, Some(typed.to_string()), message)?;
    session.turns += 1;
    let checkpoint = shared.checkpoints.turn(&session.id, session.turns);
    // The heartbeat's standing prompt is not news; only what it finds is.
    if turn.origin != Origin::Heartbeat {
        turn.log_daily("user", typed);
    }
    let current = session.history.len() - 1;

    let forced = session.forced.take();
    let history_bytes: usize = session.history[..current]
        .iter()
        .map(|m| m.content.len())
        .sum();
    // A pinned session asks the local model nothing: the pin decides.
    let ask = session.pinned.is_none() || forced.is_some();
    let mut decision = route::decide(
        shared,
        typed,
        history_bytes,
        forced,
        &skills.router,
        ask,
        cancel,
    )
    .await;
    let remote = shared.remote.preferred();
    // "use claude" in the message itself sends it remote from the start.
    let asked_for_remote = remote.zip(escalation::on_user_text(typed, remote.is_some(), forced));
    if let Some((_, asked)) = &asked_for_remote {
        decision.target = Target::Remote;
        decision.reason = asked.reason.clone();
        decision.confidence = 1.0;
    }
    let user_asked = forced.is_some() || asked_for_remote.is_some();
    let pinned = pin::pinned_route(shared, session.pinned.as_ref(), user_asked, &mut decision);
    let (remote, pinned_role) = pinned.map_or((remote, None), |(r, role)| (r, Some(role)));
    // A remote pin asks for the remote model each turn, as `/remote` does:
    // a spent cap says so every time, not once a day.
    let asked = asked_for_remote.is_some()
        || forced == Some(Target::Remote)
        || (pinned_role.is_some() && remote.is_some());
    let prompt_tokens = (history_bytes + typed.len()).div_ceil(4) as u64;
    let (remote, budget) = budget::gate(turn, &mut decision, remote, asked, prompt_tokens);
    let asked_for_remote = asked_for_remote.filter(|_| remote.is_some());
    let role = match pinned_role {
        Some(role) => role,
        None => local::routed_role(
            shared,
            &turn.origin,
            &mut decision,
            typed,
            session.cache_role,
        ),
    };
    let unpinned = remote.filter(|_| pinned_role.is_none());
    let history = &session.history[session.window_start..];
    let role = super::vision::steer(shared, history, role, &mut decision, unpinned).await;
    let route = TurnRoute::new(decision.target, remote, budget, prompt_tokens);
    // Once the main model holds the session, a quick turn on the fast one
    // does not move it: the depth and the long prefix are the main's.
    if route.remote_now().is_none() && session.cache_role != Some(LocalRole::Main) {
        session.cache_role = Some(role);
    }
    let (routed, model) = match route.remote_now() {
        Some(r) => (Route::Remote(r.name().into()), r.model().to_string()),
        None => (Route::Local(role), shared.role_model(role).to_string()),
    };
    turn.emit(EventKind::Routing(Routing {
        route: routed,
        model,
        reason: decision.reason.clone(),
        confidence: decision.confidence,
    }));
    // The user's own "escalate" is an escalation too (event and log).
    if let Some((r, asked)) = asked_for_remote {
        route::record(shared, &|k| turn.emit(k), &session.id, r, &asked);
    }
    let planned = Planned {
        decision,
        role,
        checkpoint,
        current,
    };
    Ok((route, planned))
}

/// The system prompt and the tools offered, then a compaction when the
/// first request would fill too much of the window.
async fn prepare(
    turn: &Turn<'_>,
    session: &mut Session,
    skills: &Snapshot,
    planned: Planned,
    cancel: &CancellationToken,
) -> TurnContext {
    let shared = turn.shared;
    // Workspace files and MEMORY.md go to the model (and to /tokenize).
    let system = shared
        .system_prompt
        .get(&shared.memory, &skills.prompt, &shared.redactor);
    // The last compaction's summary, fenced after the prompt (`summary`).
    let system = super::summary::with_summary(&system, session.summary.as_deref());
    let mcp = tools::mcp::specs_for(&shared.mcp, &shared.config, &session.id).await;
    let specs = shared.tool_lists.offered(&turn.origin, &shared.config, mcp);
    let mut fixed = Fixed::new(system, specs);
    let current =
        super::compact::before_request(turn, session, &mut fixed, planned.current, cancel).await;
    TurnContext {
        decision: planned.decision,
        role: planned.role,
        checkpoint: planned.checkpoint,
        current,
        fixed,
    }
}

/// One request where the route says, its reply stored, and what follows.
async fn step<'a>(
    turn: &Turn<'_>,
    session: &mut Session,
    typed: &str,
    ctx: &TurnContext,
    route: &mut TurnRoute<'a>,
    tools: &ToolsSoFar,
    cancel: &CancellationToken,
) -> Result<Next<'a>> {
    let shared = turn.shared;
    let (system, specs) = (&ctx.fixed.system, &ctx.fixed.specs);
    let step = match route.remote_now() {
        Some(r) => {
            let prompt = budget::prompt_estimate(system, &session.history);
            if let Some(why) = route.over_budget(prompt) {
                return Ok(Next::OverBudget(why));
            }
            match remote_step(turn, session, r, system, specs, route.handoff(), cancel).await {
                Err(ProviderError::Interrupted) => None,
                Err(e) => return Ok(Next::FallBackLocal(r, e)),
                Ok(step) => step,
            }
        }
        None => local_step(turn, session, ctx.role, &ctx.fixed, ctx.current, cancel).await?,
    };
    let Some((mut response, provider)) = step else {
        return Ok(Next::Interrupted);
    };
    redact::response(&shared.redactor, &mut response);
    let (configured, endpoint) = match route.remote().filter(|r| r.name() == provider) {
        Some(r) => (r.model(), None),
        None => (shared.role_model(ctx.role), session.endpoint.clone()),
    };
    // The next request carries this prompt and the reply as kept (its
    // reasoning is not sent again).
    let context = ContextUse {
        used: response.usage.input_tokens + estimate_tokens(&response.message),
        length: shared.limits_for(ctx.role).await.n_ctx,
    };
    let cost = emit_usage(
        turn,
        &provider,
        configured,
        endpoint,
        &response,
        Some(context),
    );
    let remote_cost = if route.remote().is_some_and(|r| r.name() == provider) {
        cost
    } else {
        0.0
    };
    route.answered(remote_cost, context.used);
    // The server kept streaming past the reply cap: say so, go on with what arrived.
    if let Some(message) = response.cut.clone() {
        turn.emit(EventKind::Notice(Notice { message }));
    }
    session.push_reply(
        &turn.origin,
        &provider,
        response.message.clone(),
        Some(context),
    )?;
    if !response.tool_calls.is_empty() {
        return Ok(Next::RunTools(response.tool_calls));
    }
    if super::steps::refused(turn, &provider, &response) {
        return Ok(Next::Final(response.content));
    }
    // A weak local answer goes to the remote model, once.
    let heartbeat_ack = turn.origin == Origin::Heartbeat
        && unattended::heartbeat_reply(&response.content).is_none();
    let reply = escalation::LocalReply {
        answer: &response.content,
        confidence: response.confidence,
        threshold: shared.config.routing.escalation_threshold,
        substantive: route::substantive(&ctx.decision, typed),
        used_tools: !tools.outcomes.is_empty(),
    };
    Ok(
        match escalation::on_local_reply(route.standing(), heartbeat_ack, &reply) {
            Some(trigger) => Next::Escalate(trigger),
            None => Next::Final(response.content),
        },
    )
}

/// Runs one batch of calls; their results join the history in call order.
async fn run_tool_calls(
    turn: &Turn<'_>,
    session: &mut Session,
    ctx: &TurnContext,
    tools: &mut ToolsSoFar,
    calls: &[ToolCall],
    cancel: &CancellationToken,
) -> Result<()> {
    let results = run_tools(
        turn,
        &session.id,
        calls,
        &mut tools.seen_calls,
        cancel,
        ctx.checkpoint.clone(),
    )
    .await;
    for (call, output) in calls.iter().zip(results) {
        // By the tool a catalog call ran (two tools failing are not one failing twice).
        let (name, ok) = (call.resolved().name.clone(), output.success);
        tools.outcomes.push((name, ok, output.suggest_escalation));
        let outcome = match output.refused || ToolOutcome::guessed(&output.output).is_some() {
            true => ToolOutcome::Denied,
            false if output.success => ToolOutcome::Ok,
            false => ToolOutcome::Failed,
        };
        let details = Details {
            outcome: Some(outcome),
            diff: output.diff,
            ..Details::default()
        };
        session.push_detailed(
            &turn.origin,
            ChatMessage::tool_result(call, output.output).with_images(output.images),
            details,
        )?;
    }
    Ok(())
}

/// The answer goes to the daily log and out as `final`, except a heartbeat
/// reply that only acknowledges (`HEARTBEAT_OK`): that one stays in the
/// transcript and goes nowhere else, so no surface ever delivers it.
fn deliver_final(turn: &Turn<'_>, answer: String) {
    let text = if turn.origin == Origin::Heartbeat {
        match unattended::heartbeat_reply(&answer) {
            Some(news) => news,
            None => {
                tracing::debug!("heartbeat: nothing to report");
                return;
            }
        }
    } else {
        answer
    };
    turn.log_daily("egirl", &text);
    turn.emit(EventKind::Final(FinalAnswer { text }));
}
