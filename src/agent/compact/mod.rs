//! Compaction: when the next request would fill more than `[agent]
//! compact_at` of the local window, the older part of the history is
//! replaced by a summary the model writes (after one silent step in which
//! it may `memory_save` what should outlive the session). The last
//! `keep_recent` turns and the current one stay verbatim; a tool call never
//! leaves without its result, since the cut is always at a user message.
//!
//! The summary goes at the end of the system prompt, fenced and labelled
//! as the model's notes, never as the user's words (`summary`): nothing
//! moves it, so the prompt is append-only again from there (llama.cpp's
//! prefix cache). The transcript keeps every original record plus a
//! `compaction` record; resuming starts from the summary and the messages
//! after the cut.
//! A failed summary falls back to leaving the oldest turns out (as the
//! window did before compaction), with a notice.

mod pause;
mod request;
mod size;

use anyhow::{Result, bail};
use chrono::Utc;
use tokio_util::sync::CancellationToken;

use super::prompt::{Fixed, count_prompt, estimated_prompt, prompt_messages};
use super::session::{Session, Turn};
use super::shared::Shared;
use super::summary::with_summary;
use super::{context, unattended, window};
use crate::chat::{ChatMessage, ToolSpec};
use crate::protocol::{Compacted, ErrorEvent, EventKind, Notice, Origin};
use crate::providers::ChatRequest;
use crate::providers::endpoints::LocalRole;
use crate::sessions::{Compaction, Record};

/// What a compaction did, for the event and the transcript record.
struct Done {
    summary: String,
    model: String,
    /// The system prompt the session's requests carry from now on.
    system: String,
    summarized: usize,
    before_tokens: u64,
    after_tokens: u64,
}

/// Before a turn's first request: compacts when the prompt would pass
/// `[agent] compact_at` of the window. `current` is the index of the
/// turn's user message; returns its index afterwards.
pub(super) async fn before_request(
    turn: &Turn<'_>,
    session: &mut Session,
    fixed: &mut Fixed,
    current: usize,
    cancel: &CancellationToken,
) -> usize {
    let shared = turn.shared;
    let at = shared.config.agent.compact_at;
    if at <= 0.0 || cancel.is_cancelled() {
        return current;
    }
    let limits = shared.limits().await;
    let threshold = (limits.n_ctx as f64 * at) as u64;
    let start = session.window_start.min(current);
    // Paused (`compact_again_at`): nothing happens under that mark either.
    let bar = session
        .compact_again_at
        .map_or(threshold, |again| threshold.max(again.saturating_sub(1)));
    if size::surely_below(shared, session, fixed, start, bar) {
        return current;
    }
    let (system, specs) = (&fixed.system, &fixed.specs[..]);
    let tokens = prompt_tokens(shared, system, specs, &session.history[start..]).await;
    if tokens <= threshold {
        return current;
    }
    // The last one could not get under: not again until it can do more.
    if session.compact_again_at.is_some_and(|at| tokens < at) {
        return current;
    }
    let keep_recent = shared.config.agent.keep_recent;
    let Some(cut) = cut_point(&session.history, start, current, keep_recent) else {
        return current;
    };
    match compact(
        turn, session, system, specs, start, cut, tokens, None, cancel,
    )
    .await
    {
        Ok(done) => {
            // The flush may have changed MEMORY.md: this request starts a
            // new prefix anyway, so the change lands here, not on the next turn.
            *fixed = Fixed::new(done.system.clone(), fixed.specs.clone());
            let again = pause::retry_at(done.after_tokens, threshold, limits.n_ctx);
            let told = session.compact_again_at.is_some();
            session.compact_again_at = again;
            let after_tokens = done.after_tokens;
            emit_done(turn, done);
            if let Some(again) = again.filter(|_| !told) {
                turn.emit(EventKind::Notice(Notice {
                    message: pause::notice(after_tokens, threshold, keep_recent, again),
                }));
            }
            current - cut
        }
        Err(_) if cancel.is_cancelled() => current,
        Err(e) => {
            // Never worse than before compaction: the oldest turns are
            // left out of the requests instead (the transcript keeps them).
            session.window_start = cut;
            turn.emit(EventKind::Notice(Notice {
                message: format!(
                    "compaction failed ({e:#}); left the {} oldest messages out of the window instead",
                    cut
                ),
            }));
            current
        }
    }
}

/// `/compact [what to keep]` and `egirl --session ID --compact`: compacts
/// now whatever the size, keeping the last `keep_recent` turns (fewer when
/// the session has no more). Answers with `compaction`, or `error`.
pub(super) async fn now(
    shared: &Shared,
    session: &mut Session,
    origin: Origin,
    focus: Option<String>,
    cancel: CancellationToken,
) {
    let turn = Turn::new(shared, &session.id, origin);
    let (system, specs) = prompt_parts(shared, &turn.origin);
    let system = with_summary(&system, session.summary.as_deref());
    let end = session.history.len();
    let start = session.window_start.min(end);
    let keep_recent = shared.config.agent.keep_recent;
    let result = match cut_point(&session.history, start, end, keep_recent) {
        None => Err(anyhow::anyhow!(
            "nothing to compact yet: this session has no earlier turn"
        )),
        Some(cut) => {
            let tokens = prompt_tokens(shared, &system, &specs, &session.history[start..]).await;
            compact(
                &turn,
                session,
                &system,
                &specs,
                start,
                cut,
                tokens,
                focus.as_deref(),
                &cancel,
            )
            .await
        }
    };
    match result {
        Ok(done) => {
            let limits = shared.limits().await;
            let threshold = (limits.n_ctx as f64 * shared.config.agent.compact_at) as u64;
            session.compact_again_at = pause::retry_at(done.after_tokens, threshold, limits.n_ctx)
                .filter(|_| shared.config.agent.compact_at > 0.0);
            emit_done(&turn, done)
        }
        Err(e) => turn.emit(EventKind::Error(ErrorEvent {
            message: format!("compaction failed: {e:#}"),
        })),
    }
}

/// Where the summarized part ends: the start of the oldest kept turn.
/// The last `keep_recent` turns before `end` stay, but at least one turn
/// goes when there are any; `None` when no whole turn precedes `end`.
fn cut_point(
    history: &[ChatMessage],
    start: usize,
    end: usize,
    keep_recent: usize,
) -> Option<usize> {
    let starts: Vec<usize> = window::turn_starts(history)
        .into_iter()
        .filter(|&s| s >= start && s < end)
        .collect();
    if starts.is_empty() {
        return None;
    }
    let keep = keep_recent.min(starts.len() - 1);
    Some(if keep == 0 {
        end
    } else {
        starts[starts.len() - keep]
    })
    .filter(|&cut| cut > start)
}

/// Flush, summary, then the history replaced and the record appended.
#[allow(clippy::too_many_arguments)]
async fn compact(
    turn: &Turn<'_>,
    session: &mut Session,
    system: &str,
    specs: &[ToolSpec],
    start: usize,
    cut: usize,
    before_tokens: u64,
    focus: Option<&str>,
    cancel: &CancellationToken,
) -> Result<Done> {
    let shared = turn.shared;
    if shared.config.agent.memory_flush {
        request::flush(turn, session, system, specs, start, cut, cancel).await;
        if cancel.is_cancelled() {
            bail!("interrupted");
        }
    }
    let (summary, model) =
        request::summary(turn, session, system, specs, start, cut, focus, cancel).await?;
    let summary = shared.redactor.redact(&summary).into_owned();
    let kept = session.history.len() - cut;
    let next_system = with_summary(&prompt_parts(shared, &turn.origin).0, Some(&summary));
    let after_tokens = prompt_tokens(shared, &next_system, specs, &session.history[cut..]).await;
    // Appended before the history changes: nothing is lost if it fails.
    session.transcript.append(&Record {
        ts: Utc::now(),
        origin: turn.origin.clone(),
        typed: None,
        provider: None,
        message: ChatMessage::system(summary.clone()),
        compaction: Some(Compaction {
            kept,
            summarized_messages: cut,
            before_tokens,
            after_tokens,
            model: model.clone(),
        }),
        details: Default::default(),
    })?;
    session.replace_history(summary.clone(), cut);
    Ok(Done {
        summary,
        model,
        system: next_system,
        summarized: cut,
        before_tokens,
        after_tokens,
    })
}

fn emit_done(turn: &Turn<'_>, done: Done) {
    turn.emit(EventKind::Compaction(Compacted {
        before_tokens: done.before_tokens,
        after_tokens: done.after_tokens,
        summarized_messages: done.summarized,
        model: done.model,
        summary: done.summary,
    }));
}

/// The system prompt and tools a turn from `origin` gets.
fn prompt_parts(shared: &Shared, origin: &Origin) -> (String, Vec<ToolSpec>) {
    let skills = shared.skills.snapshot();
    let system = context::system_prompt_with_skills(&shared.workspace, &skills.prompt);
    let system = shared.redactor.redact(&system).into_owned();
    let specs = unattended::fixed_tools(origin, &shared.config);
    (system, specs)
}

/// The prompt tokens of a request with this history: the server's exact
/// count, else an estimate of a token per four bytes.
async fn prompt_tokens(
    shared: &Shared,
    system: &str,
    specs: &[ToolSpec],
    history: &[ChatMessage],
) -> u64 {
    let request = ChatRequest {
        messages: prompt_messages(&shared.redactor, system, history),
        tools: specs.into(),
        max_tokens: 0,
        slot: None,
        images: Default::default(),
    };
    let server = shared.counting_server(LocalRole::Main, None).await;
    match count_prompt(shared, &server, &request).await {
        Some(n) => n,
        // The estimate the window is fitted by: a compaction decided on a
        // larger one would run while the window still has room.
        None => estimated_prompt(&request, shared.config.images.local_tokens),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::summary::tests::turn_with_tool;

    #[test]
    fn the_cut_is_at_a_user_message_keeping_recent_turns() {
        let mut h: Vec<ChatMessage> = (0..4).flat_map(turn_with_tool).collect();
        h.push(ChatMessage::user("now"));
        // Turns at 0, 4, 8, 12; the current message at 16.
        assert_eq!(cut_point(&h, 0, 16, 2), Some(8));
        assert_eq!(cut_point(&h, 0, 16, 0), Some(16));
        // Too few turns to keep them all: at least the oldest goes.
        assert_eq!(cut_point(&h, 0, 16, 9), Some(4));
        assert_eq!(cut_point(&h, 12, 16, 2), Some(16));
        assert_eq!(cut_point(&h, 16, 16, 2), None);
        assert_eq!(cut_point(&h, 0, 0, 2), None);
    }
}
