//! One turn: the user's message in, the model called until it answers
//! without tool calls (or `max_turns` requests), every step persisted before
//! the next one runs.

use std::collections::HashSet;

use anyhow::Result;
use chrono::Local;
use tokio_util::sync::CancellationToken;

use super::session::{Session, Turn};
use super::shared::Shared;
use super::steps::{local_step, remote_step};
use super::tool_calls::run_tools;
use super::usage::emit_usage;
use super::{context, local, redact, route, unattended};
use crate::protocol::{EventKind, Origin, Target};
use crate::providers::{ChatMessage, ProviderError};
use crate::routing::escalation;
use crate::tools;

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
    turn.emit(EventKind::TurnStarted {
        text: typed.clone(),
    });
    let interrupted = match run_steps(&turn, session, &typed, &cancel).await {
        Ok(interrupted) => interrupted,
        Err(e) => {
            turn.emit(EventKind::Error {
                message: format!("{e:#}"),
            });
            false
        }
    };
    turn.emit(EventKind::TurnEnded { interrupted });
    // Old and excess file checkpoints go between turns.
    let checkpoints = shared.checkpoints.clone();
    let _ = tokio::task::spawn_blocking(move || {
        checkpoints.prune(std::time::SystemTime::now());
    })
    .await;
}

/// Returns whether the turn was interrupted.
async fn run_steps(
    turn: &Turn<'_>,
    session: &mut Session,
    typed: &str,
    cancel: &CancellationToken,
) -> Result<bool> {
    let shared = turn.shared;
    let now = Local::now();
    // One snapshot for the whole turn: a reload meanwhile waits for the next.
    let skills = shared.skills.snapshot();
    let content = context::user_message_with_skill(typed, now, skills.preselect(typed));
    session.push(
        &turn.origin,
        Some(typed.to_string()),
        ChatMessage::user(content),
    )?;
    session.turns += 1;
    let checkpoint = shared.checkpoints.turn(&session.id, session.turns);
    // The heartbeat's standing prompt is not news; only what it finds is.
    if turn.origin != Origin::Heartbeat {
        log_daily(turn, "user", typed);
    }
    let current = session.history.len() - 1;

    let forced = session.forced.take();
    let history_bytes: usize = session.history[..current]
        .iter()
        .map(|m| m.content.len())
        .sum();
    let mut decision =
        route::decide(shared, typed, history_bytes, forced, &skills.router, cancel).await;
    let mut remote = shared.remote.preferred();
    // "use claude" in the message itself sends it remote from the start.
    let mut asked_for_remote = None;
    if let Some(asked) = escalation::user_asked(typed)
        && let Some(r) = remote
        && forced != Some(Target::Local)
    {
        decision.target = Target::Remote;
        decision.reason = asked.reason.clone();
        decision.confidence = 1.0;
        asked_for_remote = Some((r, asked));
    }
    let mut target = match remote {
        Some(_) => decision.target,
        None => Target::Local,
    };
    let role = local::turn_role(shared, &turn.origin, &decision);
    let (provider, model) = match (target, remote) {
        (Target::Remote, Some(r)) => (r.name().to_string(), r.model().to_string()),
        _ => ("llamacpp".to_string(), shared.role_model(role).to_string()),
    };
    turn.emit(EventKind::Routing {
        target,
        provider,
        model,
        reason: decision.reason.clone(),
        confidence: decision.confidence,
        role: match target {
            Target::Remote => "remote".to_string(),
            Target::Local => role.as_str().to_string(),
        },
    });
    // The user's own "escalate" is an escalation too (event and log).
    if let Some((r, asked)) = asked_for_remote {
        route::record(shared, &|k| turn.emit(k), &session.id, r, &asked);
    }

    // Workspace files and MEMORY.md go to the model (and to /tokenize).
    let system = context::system_prompt_with_skills(&shared.workspace, &skills.prompt);
    let mut system = shared.redactor.redact(&system).into_owned();
    let mut all_tools = tools::offered(&shared.config);
    all_tools.extend(tools::mcp::specs(&shared.mcp));
    let specs = unattended::offered_tools(&turn.origin, all_tools, &shared.config.webhook.tools);
    let current =
        super::compact::before_request(turn, session, &mut system, &specs, current, cancel).await;
    let mut seen_calls: HashSet<String> = HashSet::new();
    let mut outcomes: Vec<(String, bool, bool)> = Vec::new();
    // After a weak local answer: where the note to the remote model goes.
    let mut handoff: Option<(usize, ChatMessage)> = None;
    let max_turns = shared.config.agent.max_turns;
    for _ in 0..max_turns {
        let step = match (target, remote) {
            (Target::Remote, Some(r)) => {
                match remote_step(turn, session, r, &system, &specs, handoff.as_ref(), cancel).await
                {
                    Err(ProviderError::Interrupted) => None,
                    // The remote side failing is no reason to leave the user
                    // without an answer: say so and go on locally.
                    Err(e) => {
                        turn.emit(EventKind::Notice {
                            message: format!("{} failed ({e}); answering locally", r.name()),
                        });
                        target = Target::Local;
                        handoff = None;
                        // Not again this turn: a weak local answer would
                        // escalate into the same failure at every step.
                        remote = None;
                        continue;
                    }
                    Ok(step) => step,
                }
            }
            _ => local_step(turn, session, role, &system, &specs, current, cancel).await?,
        };
        let Some((mut response, provider)) = step else {
            return Ok(true);
        };
        redact::response(&shared.redactor, &mut response);
        let (configured, endpoint) = match remote.filter(|r| r.name() == provider) {
            Some(r) => (r.model(), None),
            None => (shared.role_model(role), session.endpoint.clone()),
        };
        emit_usage(turn, &provider, configured, endpoint, &response);
        // The server kept streaming past the reply cap: say so, go on with what arrived.
        if let Some(message) = response.cut.clone() {
            turn.emit(EventKind::Notice { message });
        }
        session.push_reply(&turn.origin, &provider, response.message.clone())?;

        if response.tool_calls.is_empty() {
            // A weak local answer goes to the remote model, once. A bare
            // HEARTBEAT_OK is the right answer to a quiet heartbeat, not a
            // too-short one.
            let heartbeat_ack = turn.origin == Origin::Heartbeat
                && unattended::heartbeat_reply(&response.content).is_none();
            if target == Target::Local
                && !heartbeat_ack
                && let Some(r) = remote
            {
                let reply = escalation::LocalReply {
                    answer: &response.content,
                    confidence: response.confidence,
                    threshold: shared.config.routing.escalation_threshold,
                    substantive: route::substantive(&decision, typed),
                    used_tools: !outcomes.is_empty(),
                };
                if let Some(trigger) = escalation::after_reply(&reply) {
                    route::record(shared, &|k| turn.emit(k), &session.id, r, &trigger);
                    handoff = Some((session.history.len(), route::handoff_note(&trigger)));
                    target = Target::Remote;
                    continue;
                }
            }
            deliver_final(turn, response.content);
            return Ok(false);
        }
        let results = run_tools(
            turn,
            &session.id,
            &response.tool_calls,
            &mut seen_calls,
            cancel,
            checkpoint.clone(),
        )
        .await;
        for (call, output) in response.tool_calls.iter().zip(results) {
            outcomes.push((call.name.clone(), output.success, output.suggest_escalation));
            session.push(
                &turn.origin,
                None,
                ChatMessage::tool_result(call, output.output),
            )?;
        }
        if cancel.is_cancelled() {
            return Ok(true);
        }
        if target == Target::Local
            && let Some(r) = remote
        {
            let seen: Vec<escalation::ToolOutcome<'_>> = outcomes
                .iter()
                .map(|(name, success, suggest)| escalation::ToolOutcome {
                    name,
                    success: *success,
                    suggest_escalation: *suggest,
                })
                .collect();
            // The remote model picks up from the tool history as it stands.
            if let Some(trigger) = escalation::after_tools(&seen) {
                route::record(shared, &|k| turn.emit(k), &session.id, r, &trigger);
                target = Target::Remote;
            }
        }
    }
    anyhow::bail!(
        "stopped after {max_turns} model requests without a final answer (raise [agent] max_turns to allow more)"
    )
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
    log_daily(turn, "egirl", &text);
    turn.emit(EventKind::Final { text });
}

fn log_daily(turn: &Turn<'_>, who: &str, text: &str) {
    if text.trim().is_empty() {
        return;
    }
    let origin = turn.origin.to_string();
    let text = turn.shared.redactor.redact(text);
    if let Err(e) =
        crate::memory::daily::append(&turn.shared.workspace, Local::now(), who, &origin, &text)
    {
        turn.emit(EventKind::Notice {
            message: format!("could not append to the daily log: {e}"),
        });
    }
}
