//! The requests of one step: to the local server (fitted to its window
//! with the server's own token counts) or to a remote provider (the whole
//! history, with the hand-off note when the turn was escalated).

use std::sync::atomic::Ordering;

use anyhow::Result;
use tokio_util::sync::CancellationToken;

use super::session::{Session, Turn};
use super::shared::Shared;
use super::{local, trim, window};
use crate::chat::ChatMessage;
use crate::protocol::{
    AnswerDelta, ContextTrimmed, EventKind, Notice, Origin, ReasoningDelta, Routing,
};
use crate::providers::endpoints::{Failover, LocalRole};
use crate::providers::llamacpp::LlamaCpp;
use crate::providers::remote::RemoteProvider;
use crate::providers::{ChatRequest, ChatResponse, ProviderError, StreamChunk};
use crate::redact;
use crate::redact::{Redactor, StreamRedactor};

/// Per-message template overhead when counting message by message
/// (`<|im_start|>role\n` ... `<|im_end|>\n`); the exact total comes from the server.
const MESSAGE_OVERHEAD_TOKENS: u64 = 6;

/// One request to the local server, trimmed to its window (and trimmed
/// harder once if the server still reports an overflow). `None`: the user
/// interrupted (what had streamed is kept in the transcript).
pub(super) async fn local_step(
    turn: &Turn<'_>,
    session: &mut Session,
    role: LocalRole,
    system: &str,
    specs: &[crate::chat::ToolSpec],
    current: usize,
    cancel: &CancellationToken,
) -> Result<Option<(ChatResponse, String)>> {
    let shared = turn.shared;
    let mut extra_drop = 0;
    loop {
        let request =
            build_request(turn, session, role, system, specs, current, extra_drop).await?;
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

/// One request to a remote provider: the whole history (its window is
/// far larger), with the hand-off note after the local attempt when the
/// turn was escalated.
pub(super) async fn remote_step(
    turn: &Turn<'_>,
    session: &mut Session,
    remote: &RemoteProvider,
    system: &str,
    specs: &[crate::chat::ToolSpec],
    handoff: Option<&(usize, ChatMessage)>,
    cancel: &CancellationToken,
) -> Result<Option<(ChatResponse, String)>, ProviderError> {
    let mut history = session.history.clone();
    if let Some((at, note)) = handoff {
        history.insert((*at).min(history.len()), note.clone());
    }
    let request = ChatRequest {
        messages: prompt_messages(&turn.shared.redactor, system, &history),
        tools: specs.to_vec(),
        max_tokens: turn.shared.config.local.max_tokens,
        slot: None,
    };
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
        let partial = format!("{visible}\n\n[interrupted by the user]");
        session.push(&turn.origin, None, ChatMessage::assistant(partial))?;
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
    system: &str,
    specs: &[crate::chat::ToolSpec],
    current: usize,
    extra_drop: usize,
) -> Result<ChatRequest> {
    let shared = turn.shared;
    let limits = shared.limits_for(role).await;
    // Counted by the role's own server, as the request will go out.
    let local = shared.counting_server(role, Some(&session.id)).await;
    let reply_reserve = shared.config.local.max_tokens.min(limits.n_ctx / 4);
    let budget = limits.n_ctx.saturating_sub(reply_reserve);
    let start = session.window_start.min(current);

    let mut request = ChatRequest {
        messages: prompt_messages(&shared.redactor, system, &session.history[start..]),
        tools: specs.to_vec(),
        max_tokens: shared.config.local.max_tokens,
        // The fast role's server has its own slots: any free one.
        slot: session.slot.filter(|_| role == LocalRole::Main),
    };
    // No token can be shorter than a byte, so a prompt with fewer bytes
    // than the budget fits without asking the server to count it.
    let mut prompt_tokens = byte_bound(&request);
    let mut exact = None;
    if prompt_tokens > budget || extra_drop > 0 {
        exact = count_prompt(shared, &local, &request).await;
        prompt_tokens = exact.unwrap_or(prompt_tokens);
    }
    if prompt_tokens > budget || extra_drop > 0 {
        let window = &session.history[start..];
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
        let fixed = match exact {
            // What the exact count adds beyond the messages is the fixed part.
            Some(total) => total.saturating_sub(estimated),
            None => {
                text_tokens(shared, system).await + text_tokens(shared, &tools_text(specs)).await
            }
        };
        let refill = budget * REFILL_PERCENT / 100;
        let fit = window::fit(window, &tokens, fixed, refill, current - start, extra_drop)
            .or_else(|_| window::fit(window, &tokens, fixed, budget, current - start, extra_drop));
        // After the server still reported an overflow with only the
        // current turn left, the counts were low (a server that cannot
        // count tokens): its outputs shrink to a tighter target.
        let retried_alone = |fit: &window::Fit| extra_drop > 0 && fit.first_kept >= current - start;
        let fit = match fit {
            Ok(fit) if !retried_alone(&fit) => fit,
            // The current turn alone is too large: its tool outputs shrink.
            fit => {
                let target = match fit.is_ok() {
                    false => Target {
                        fixed,
                        refill,
                        budget,
                        n_ctx: limits.n_ctx,
                    },
                    true => Target {
                        fixed,
                        refill: refill / 2,
                        budget: refill * 2 / 3,
                        n_ctx: limits.n_ctx,
                    },
                };
                trim_outputs(turn, session, start, current, &target).await?
            }
        };
        session.window_start = start + fit.first_kept;
        request.messages = prompt_messages(
            &shared.redactor,
            system,
            &session.history[session.window_start..],
        );
        turn.emit(EventKind::ContextTrimmed(ContextTrimmed {
            dropped_messages: session.window_start,
            prompt_tokens: fit.prompt_tokens,
            context_length: limits.n_ctx,
        }));
        prompt_tokens = fit.prompt_tokens;
    }
    request.max_tokens = shared
        .config
        .local
        .max_tokens
        .min(limits.n_ctx.saturating_sub(prompt_tokens).max(16));
    Ok(request)
}

/// What the current turn must fit in (tokens).
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

/// The system prompt and the history as sent. The history was redacted as
/// it was pushed; this guards the system prompt (workspace files, MEMORY.md)
/// and transcripts written before redaction existed.
pub(super) fn prompt_messages(
    redactor: &Redactor,
    system: &str,
    history: &[ChatMessage],
) -> Vec<ChatMessage> {
    let mut messages = Vec::with_capacity(history.len() + 1);
    messages.push(ChatMessage::system(redactor.redact(system)));
    messages.extend(history.iter().cloned());
    for message in &mut messages[1..] {
        redact::message(redactor, message);
    }
    messages
}

/// An upper bound on the prompt's tokens: its bytes plus the template's
/// special tokens per message.
pub(super) fn byte_bound(request: &ChatRequest) -> u64 {
    let messages: usize = request
        .messages
        .iter()
        .map(|m| {
            m.content.len()
                + m.tool_calls
                    .iter()
                    .map(|c| c.name.len() + c.arguments.to_string().len() + 32)
                    .sum::<usize>()
                + 16
        })
        .sum();
    let tools: usize = request
        .tools
        .iter()
        .map(|t| t.to_openai_json().to_string().len())
        .sum();
    // The Qwen3 tools block adds its instructions around the tool list.
    (messages + tools + 1024) as u64
}

/// The server's exact count; a server without the endpoints (vLLM, Ollama)
/// is not asked again.
pub(super) async fn count_prompt(
    shared: &Shared,
    local: &LlamaCpp,
    request: &ChatRequest,
) -> Option<u64> {
    if !shared.server_counts_tokens.load(Ordering::Relaxed) {
        return None;
    }
    match local.count_prompt(request).await {
        Ok(n) => Some(n),
        Err(e) => {
            if matches!(
                e,
                ProviderError::Http {
                    status: 404 | 405 | 501,
                    ..
                } | ProviderError::BadReply { .. }
            ) {
                tracing::info!(
                    "the local server cannot count tokens ({e}); estimating from here on"
                );
                shared.server_counts_tokens.store(false, Ordering::Relaxed);
            }
            None
        }
    }
}

fn tools_text(specs: &[crate::chat::ToolSpec]) -> String {
    specs
        .iter()
        .map(|s| s.to_openai_json().to_string())
        .collect::<Vec<_>>()
        .join("\n")
}

pub(super) async fn message_tokens(shared: &Shared, message: &ChatMessage) -> u64 {
    let mut n = text_tokens(shared, &message.content).await + MESSAGE_OVERHEAD_TOKENS;
    for call in &message.tool_calls {
        let text = format!(
            "{{\"name\": \"{}\", \"arguments\": {}}}",
            call.name, call.arguments
        );
        n += text_tokens(shared, &text).await + 4;
    }
    n
}

/// Exact via /tokenize when the server has it, else about four characters a token.
async fn text_tokens(shared: &Shared, text: &str) -> u64 {
    if !shared.server_counts_tokens.load(Ordering::Relaxed) {
        return (text.len() as u64).div_ceil(4);
    }
    match shared.main.server_for(None).count_tokens(text).await {
        Ok(n) => n,
        Err(_) => (text.len() as u64).div_ceil(4),
    }
}
