//! The requests of one step: to the local server (fitted to its window
//! with the server's own token counts) or to a remote provider (the whole
//! history, with the hand-off note when the turn was escalated).

use anyhow::Result;
use tokio_util::sync::CancellationToken;

use super::prompt::{
    Fixed, count_prompt, message_bound, message_tokens, prompt_messages, text_tokens, tools_text,
};
use super::session::{Counted, Session, Turn};
use super::{local, trim, window};
use crate::chat::ChatMessage;
use crate::protocol::{
    AnswerDelta, ContextTrimmed, EventKind, Notice, Origin, ReasoningDelta, Routing,
};
use crate::providers::endpoints::{Failover, LocalRole};
use crate::providers::remote::RemoteProvider;
use crate::providers::{ChatRequest, ChatResponse, ProviderError, StreamChunk};
use crate::redact::{Redactor, StreamRedactor};
use crate::sessions::{Details, INTERRUPTED_MARKER};

/// One request to the local server, trimmed to its window (and trimmed
/// harder once if the server still reports an overflow). `None`: the user
/// interrupted (what had streamed is kept in the transcript).
pub(super) async fn local_step(
    turn: &Turn<'_>,
    session: &mut Session,
    role: LocalRole,
    fixed: &Fixed,
    current: usize,
    cancel: &CancellationToken,
) -> Result<Option<(ChatResponse, String)>> {
    let shared = turn.shared;
    let mut extra_drop = 0;
    loop {
        let mut request = build_request(turn, session, role, fixed, current, extra_drop).await?;
        super::vision::attach(turn, session, &mut request, Some(role)).await;
        let mut streamed = Streamed::new(&shared.redactor);
        let mut on_chunk = |chunk: StreamChunk| stream_to(turn, &mut streamed, chunk);
        let mut moved = Vec::new();
        let mut on_failover = |m: Failover| moved.push(m);
        let result = shared
            .local_chat(
                role,
                Some(&session.id),
                &request,
                cancel,
                &mut on_chunk,
                &mut on_failover,
            )
            .await;
        streamed.finish(turn);
        for m in &moved {
            turn.emit(EventKind::Notice(Notice {
                message: local::failover_notice(role, m),
            }));
        }
        if let Some(m) = moved.last() {
            turn.emit(EventKind::Routing(Routing {
                route: crate::protocol::Route::Local(role),
                model: shared.role_model(role).to_string(),
                reason: format!("failover: {} failed ({}); now on {}", m.from, m.why, m.to),
                confidence: 1.0,
            }));
        }
        match result {
            Ok(served) => {
                if role == LocalRole::Main {
                    shared
                        .slot_owners
                        .note(&served.endpoint, session.cache_slot(), &session.id);
                    remember_count(session, fixed, current, &served.response);
                }
                session.endpoint = Some(served.endpoint);
                return Ok(Some((served.response, "llamacpp".into())));
            }
            Err(ProviderError::ContextOverflow(detail)) if extra_drop == 0 => {
                tracing::info!(%detail, "server reported a context overflow; trimming and retrying once");
                extra_drop = 1 + session.history.len() / 8;
            }
            Err(ProviderError::Interrupted) => {
                keep_partial(turn, session, &streamed.visible)?;
                return Ok(None);
            }
            Err(e) => return Err(e.into()),
        }
    }
}

/// The server's count of the prompt it just answered: the next prompt's
/// size starts from it (`Counted`). A server that reports no usage leaves
/// no base; the next check then asks it to count.
fn remember_count(session: &mut Session, fixed: &Fixed, current: usize, response: &ChatResponse) {
    let tokens = response.usage.input_tokens;
    session.counted = (tokens > 0).then(|| Counted {
        tokens,
        fixed: fixed.fingerprint,
        from: session.window_start.min(current),
        to: session.history.len(),
    });
}

/// One request to a remote provider: the whole history (its window is
/// far larger), with the hand-off note after the local attempt when the
/// turn was escalated.
pub(super) async fn remote_step(
    turn: &Turn<'_>,
    session: &mut Session,
    remote: &RemoteProvider,
    system: &str,
    specs: &std::sync::Arc<[crate::chat::ToolSpec]>,
    handoff: Option<&(usize, ChatMessage)>,
    cancel: &CancellationToken,
) -> Result<Option<(ChatResponse, String)>, ProviderError> {
    let mut history = session.history.clone();
    if let Some((at, note)) = handoff {
        let mut note = note.clone();
        crate::redact::message(&turn.shared.redactor, &mut note);
        history.insert((*at).min(history.len()), note);
    }
    let mut request = ChatRequest {
        messages: prompt_messages(&turn.shared.redactor, system, &history),
        tools: specs.clone(),
        max_tokens: turn.shared.config.local.max_tokens,
        slot: None,
        images: Default::default(),
    };
    super::vision::attach(turn, session, &mut request, None).await;
    let mut streamed = Streamed::new(&turn.shared.redactor);
    let mut on_chunk = |chunk: StreamChunk| stream_to(turn, &mut streamed, chunk);
    let result = remote.chat(&request, cancel, &mut on_chunk).await;
    streamed.finish(turn);
    match result {
        Ok(response) => Ok(Some((response, remote.name().to_string()))),
        Err(ProviderError::Interrupted) => {
            if let Err(e) = keep_partial(turn, session, &streamed.visible) {
                tracing::warn!("{e:#}");
            }
            Ok(None)
        }
        Err(e) => Err(e),
    }
}

/// What one request streams: deltas go out as they come, except what may
/// be the start of a secret value, held back until the next piece says
/// (a value can be split across deltas; see `StreamRedactor`).
struct Streamed<'a> {
    /// The text as received (redacted when kept after an interrupt).
    visible: String,
    text: StreamRedactor<'a>,
    reasoning: StreamRedactor<'a>,
}

impl<'a> Streamed<'a> {
    fn new(redactor: &'a Redactor) -> Self {
        Self {
            visible: String::new(),
            text: redactor.stream(),
            reasoning: redactor.stream(),
        }
    }

    /// The stream ended (answered, failed or interrupted): what was held back goes out.
    fn finish(&mut self, turn: &Turn<'_>) {
        let text = self.text.finish();
        emit_delta(turn, text);
        let reasoning = self.reasoning.finish();
        if !reasoning.is_empty() {
            turn.emit(EventKind::Reasoning(ReasoningDelta { text: reasoning }));
        }
    }
}

fn stream_to(turn: &Turn<'_>, out: &mut Streamed<'_>, chunk: StreamChunk) {
    match chunk {
        StreamChunk::Text(text) => {
            out.visible.push_str(&text);
            let ready = out.text.push(&text);
            emit_delta(turn, ready);
        }
        StreamChunk::Reasoning(text) => {
            let ready = out.reasoning.push(&text);
            if !ready.is_empty() {
                turn.emit(EventKind::Reasoning(ReasoningDelta { text: ready }));
            }
        }
    }
}

fn emit_delta(turn: &Turn<'_>, text: String) {
    // A heartbeat reply may be a bare HEARTBEAT_OK that must reach no
    // one; its `final` (if any) carries the text instead.
    if !text.is_empty() && turn.origin != Origin::Heartbeat {
        turn.emit(EventKind::Delta(AnswerDelta { text }));
    }
}

/// What streamed before an interrupt stays in the transcript, marked.
fn keep_partial(turn: &Turn<'_>, session: &mut Session, visible: &str) -> Result<()> {
    if !visible.is_empty() {
        // The model reads that it was cut; the transcript says so apart
        // from the text, so a replay shows a marker, not answer text.
        let partial = format!("{visible}{INTERRUPTED_MARKER}");
        let details = Details {
            interrupted: true,
            ..Details::default()
        };
        session.push_detailed(&turn.origin, ChatMessage::assistant(partial), details)?;
    }
    Ok(())
}

/// After a trim the window is refilled to this share of the budget, so the
/// cut point (and the cached prefix) holds for the next several turns.
const REFILL_PERCENT: u64 = 75;

/// The request for the next step: system prompt, as much history as fits, the tools.
async fn build_request(
    turn: &Turn<'_>,
    session: &mut Session,
    role: LocalRole,
    fixed: &Fixed,
    current: usize,
    extra_drop: usize,
) -> Result<ChatRequest> {
    let (system, specs) = (fixed.system.as_str(), &fixed.specs[..]);
    let shared = turn.shared;
    let limits = shared.limits_for(role).await;
    let reply_reserve = shared.config.local.max_tokens.min(limits.n_ctx / 4);
    let budget = limits.n_ctx.saturating_sub(reply_reserve);
    let start = session.window_start.min(current);

    let mut request = ChatRequest {
        messages: prompt_messages(&shared.redactor, system, &session.history[start..]),
        tools: fixed.specs.clone(),
        max_tokens: shared.config.local.max_tokens,
        // The fast role's server has its own slots: any free one.
        slot: session.slot.filter(|_| role == LocalRole::Main),
        images: Default::default(),
    };
    // No token can be shorter than a byte, so a prompt with fewer bytes
    // than the budget fits without asking the server to count it.
    let image_tokens = shared.config.images.local_tokens;
    let mut prompt_tokens = fixed.bound_with(&session.history[start..], image_tokens);
    // Nor does one whose last count plus its new messages' bytes does.
    if prompt_tokens > budget && role == LocalRole::Main {
        let history = &session.history;
        let base = session.counted.as_ref();
        if let Some(base) = base.and_then(|c| c.base_for(fixed.fingerprint, start, history.len())) {
            let new = &history[base.to..];
            let upper = base.tokens
                + new
                    .iter()
                    .map(|m| message_bound(m, image_tokens))
                    .sum::<u64>();
            prompt_tokens = prompt_tokens.min(upper);
        }
    }
    let mut exact = None;
    if prompt_tokens > budget || extra_drop > 0 {
        // Counted by the role's own server, as the request will go out.
        let local = shared.counting_server(role, Some(&session.id)).await;
        exact = count_prompt(shared, &local, &request).await;
        prompt_tokens = exact.unwrap_or(prompt_tokens);
    }
    if prompt_tokens > budget || extra_drop > 0 {
        let window = Target {
            fixed: 0,
            refill: budget * REFILL_PERCENT / 100,
            budget,
            n_ctx: limits.n_ctx,
        };
        let asked = Asked {
            system,
            specs,
            start,
            current,
            extra_drop,
            exact,
        };
        prompt_tokens = fit_history(turn, session, &mut request, window, &asked).await?;
    }
    request.max_tokens = shared
        .config
        .local
        .max_tokens
        .min(limits.n_ctx.saturating_sub(prompt_tokens).max(16));
    Ok(request)
}

/// What `build_request` asks `fit_history` to fit.
struct Asked<'a> {
    system: &'a str,
    specs: &'a [crate::chat::ToolSpec],
    /// Where the window started, and the current turn's user message.
    start: usize,
    current: usize,
    extra_drop: usize,
    /// The server's count of the whole prompt, when it can count.
    exact: Option<u64>,
}

/// The prompt's tokens counted message by message; when they pass the
/// budget, the oldest whole turns are left out (and `context_trimmed`
/// says so) or the current turn's outputs shrink. The byte bound that
/// brought us here counts a token per byte, about four times too many:
/// what fits by the count is sent whole, nothing left out.
async fn fit_history(
    turn: &Turn<'_>,
    session: &mut Session,
    request: &mut ChatRequest,
    window: Target,
    asked: &Asked<'_>,
) -> Result<u64> {
    let shared = turn.shared;
    let Asked {
        start,
        current,
        extra_drop,
        ..
    } = *asked;
    for i in start..session.history.len() {
        if session.tokens[i].is_none() {
            session.tokens[i] = Some(message_tokens(shared, &session.history[i]).await);
        }
    }
    let tokens: Vec<u64> = session.tokens[start..]
        .iter()
        .map(|t| t.unwrap_or(0))
        .collect();
    let estimated: u64 = tokens.iter().sum();
    let fixed = match asked.exact {
        // What the exact count adds beyond the messages is the fixed part.
        Some(total) => total.saturating_sub(estimated),
        None => {
            text_tokens(shared, asked.system).await
                + text_tokens(shared, &tools_text(asked.specs)).await
        }
    };
    let sent = asked.exact.unwrap_or(fixed + estimated);
    if sent <= window.budget && extra_drop == 0 {
        return Ok(sent);
    }
    let Target {
        refill,
        budget,
        n_ctx,
        ..
    } = window;
    let history = &session.history[start..];
    let fit = window::fit(history, &tokens, fixed, refill, current - start, extra_drop)
        .or_else(|_| window::fit(history, &tokens, fixed, budget, current - start, extra_drop));
    // After the server still reported an overflow with only the
    // current turn left, the counts were low (a server that cannot
    // count tokens): its outputs shrink to a tighter target.
    let retried_alone = |fit: &window::Fit| extra_drop > 0 && fit.first_kept >= current - start;
    let fit = match fit {
        Ok(fit) if !retried_alone(&fit) => fit,
        // The current turn alone is too large: its tool outputs shrink.
        fit => {
            let target = match fit.is_ok() {
                false => Target { fixed, ..window },
                true => Target {
                    fixed,
                    refill: refill / 2,
                    budget: refill * 2 / 3,
                    n_ctx,
                },
            };
            trim_outputs(turn, session, start, current, &target).await?
        }
    };
    session.window_start = start + fit.first_kept;
    request.messages = prompt_messages(
        &shared.redactor,
        asked.system,
        &session.history[session.window_start..],
    );
    // Said once, when more is left out than before; not on every request.
    if session.window_start > start {
        turn.emit(EventKind::ContextTrimmed(ContextTrimmed {
            dropped_messages: session.window_start,
            prompt_tokens: fit.prompt_tokens,
            context_length: n_ctx,
        }));
    }
    Ok(fit.prompt_tokens)
}

/// What the current turn must fit in (tokens).
#[derive(Clone, Copy)]
struct Target {
    /// System prompt and tool list.
    fixed: u64,
    /// What trimming aims at, leaving room for the next steps' outputs.
    refill: u64,
    /// What the prompt may not exceed.
    budget: u64,
    n_ctx: u64,
}

/// Sends the current turn only, its tool outputs trimmed (see `trim`) until
/// it fits; fails as before when even outputs cut to the floor do not.
async fn trim_outputs(
    turn: &Turn<'_>,
    session: &mut Session,
    start: usize,
    current: usize,
    target: &Target,
) -> Result<window::Fit> {
    let shared = turn.shared;
    // Earlier turns are never trimmed again: their originals can go.
    session.untrimmed.retain(|&index, _| index >= current);
    let (mut trimmed, mut left_out) = (0, 0);
    // Token counts of trimmed text are estimates until recounted: a few rounds.
    for _ in 0..4 {
        for i in current..session.history.len() {
            if session.tokens[i].is_none() {
                session.tokens[i] = Some(message_tokens(shared, &session.history[i]).await);
            }
        }
        let sent = target.fixed + session.tokens[current..].iter().flatten().sum::<u64>();
        if sent <= target.budget {
            if trimmed > 0 {
                turn.emit(EventKind::Notice(Notice {
                    message: format!(
                        "trimmed {trimmed} tool output(s) of this turn to fit the {}-token window ({left_out} bytes left out of the request; the transcript keeps them whole)",
                        target.n_ctx
                    ),
                }));
            }
            return Ok(window::Fit {
                first_kept: current - start,
                dropped: current - start,
                prompt_tokens: sent,
            });
        }
        let outputs = trim::outputs(&session.history, current, &session.tokens);
        let need = sent - target.refill.min(sent);
        let Some(cuts) = trim::plan(&outputs, need) else {
            break;
        };
        for (index, keep) in cuts {
            trimmed += usize::from(!session.untrimmed.contains_key(&index));
            let original = session
                .untrimmed
                .entry(index)
                .or_insert_with(|| session.history[index].content.clone());
            let shorter = trim::head_tail(original, keep);
            left_out += session.history[index]
                .content
                .len()
                .saturating_sub(shorter.len());
            session.history[index].content = shorter;
            session.tokens[index] = None;
        }
    }
    let needed = target.fixed + session.tokens[current..].iter().flatten().sum::<u64>();
    Err(window::DoesNotFit {
        needed,
        budget: target.budget,
    }
    .into())
}

/// Whether the model refused to answer (`finish_reason` `refusal`, as
/// Anthropic's stop reason is kept, or OpenAI's `content_filter`): then
/// `refused` says so, and the reply is the turn's answer.
pub(super) fn refused(turn: &Turn<'_>, provider: &str, response: &ChatResponse) -> bool {
    let reason = response.finish_reason.as_deref();
    let Some(reason) = reason.filter(|r| matches!(*r, "refusal" | "content_filter")) else {
        return false;
    };
    turn.emit(EventKind::Refused(crate::protocol::Refused {
        provider: provider.to_string(),
        reason: reason.to_string(),
    }));
    true
}
