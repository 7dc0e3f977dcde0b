//! One turn: the user's message in, the model called until it answers
//! without tool calls (or `max_turns` requests), every step persisted before
//! the next one runs.

use std::collections::HashSet;
use std::sync::atomic::Ordering;
use std::time::Instant;

use anyhow::Result;
use chrono::{Local, Utc};
use futures_util::future::join_all;
use tokio_util::sync::CancellationToken;

use super::{Shared, context, slots, window};
use crate::protocol::{Command, EventKind, Origin, Target};
use crate::providers::llamacpp::{ChatRequest, LlamaCpp};
use crate::providers::{ChatMessage, ProviderError, StreamChunk, ToolCall};
use crate::sessions::{Record, Transcript};
use crate::tools::{self, ToolContext};

/// Per-message template overhead when counting message by message
/// (`<|im_start|>role\n` ... `<|im_end|>\n`); the exact total comes from the server.
const MESSAGE_OVERHEAD_TOKENS: u64 = 6;

pub(crate) struct Session {
    pub id: String,
    transcript: Transcript,
    history: Vec<ChatMessage>,
    /// Token cost of each history message, filled lazily.
    tokens: Vec<Option<u64>>,
    forced: Option<Target>,
    slot: Option<u32>,
    /// History before this index is no longer sent. It only moves forward,
    /// and when it must, well past the minimum, so that the sent prefix
    /// stays the same for many turns (llama.cpp's prefix cache).
    window_start: usize,
}

impl Session {
    pub async fn open(shared: &Shared, id: &str) -> Result<Self> {
        let (transcript, records) = Transcript::open(&shared.workspace, id)?;
        let history: Vec<ChatMessage> = records.into_iter().map(|r| r.message).collect();
        let limits = shared.limits().await;
        let session = Self {
            id: id.to_string(),
            transcript,
            tokens: vec![None; history.len()],
            history,
            forced: None,
            slot: shared.assign_slot(limits.total_slots),
            window_start: 0,
        };
        // Resumed after a restart: the cache the last run saved makes the
        // first turn warm (where the server supports it).
        if !session.history.is_empty() {
            slots::restore(shared, session.cache_slot(), id).await;
        }
        Ok(session)
    }

    /// The server slot holding this session's KV cache.
    fn cache_slot(&self) -> u32 {
        self.slot.unwrap_or(0)
    }

    pub fn apply(&mut self, command: Command) {
        match command {
            Command::ForceTarget(target) => self.forced = Some(target),
            Command::Clear => {
                self.history.clear();
                self.tokens.clear();
                self.window_start = 0;
            }
        }
    }

    /// Appends to the transcript first, then to the in-memory history.
    fn push(&mut self, origin: &Origin, typed: Option<String>, message: ChatMessage) -> Result<()> {
        self.transcript.append(&Record {
            ts: Utc::now(),
            origin: origin.clone(),
            typed,
            message: message.clone(),
        })?;
        self.history.push(message);
        self.tokens.push(None);
        Ok(())
    }
}

struct Turn<'a> {
    shared: &'a Shared,
    session_id: String,
    origin: Origin,
}

impl Turn<'_> {
    fn emit(&self, kind: EventKind) {
        self.shared.bus.emit(&self.session_id, &self.origin, kind);
    }
}

pub(crate) async fn run_turn(
    shared: &Shared,
    session: &mut Session,
    origin: Origin,
    typed: String,
    cancel: CancellationToken,
) {
    let turn = Turn {
        shared,
        session_id: session.id.clone(),
        origin: origin.clone(),
    };
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
    let content = context::user_message(typed, now);
    session.push(
        &turn.origin,
        Some(typed.to_string()),
        ChatMessage::user(content),
    )?;
    log_daily(turn, "user", typed);
    let current = session.history.len() - 1;

    // The router arrives with remote providers; until then every turn is local.
    let forced = session.forced.take();
    let reason = match forced {
        Some(Target::Local) => "forced local with /local",
        Some(Target::Remote) => {
            "/remote asked for, but no remote provider is configured yet; staying local"
        }
        None => "local by default",
    };
    turn.emit(EventKind::Routing {
        target: Target::Local,
        provider: "llamacpp".into(),
        model: shared.config.local.model.clone(),
        reason: reason.into(),
        confidence: 1.0,
    });

    let system = context::system_prompt(&shared.workspace);
    let specs = tools::specs();
    let mut seen_calls: HashSet<String> = HashSet::new();
    let max_turns = shared.config.agent.max_turns;
    for _ in 0..max_turns {
        let mut extra_drop = 0;
        let response = loop {
            let request =
                build_request(turn, session, &system, &specs, current, extra_drop).await?;
            let mut visible = String::new();
            let permit = tokio::select! {
                p = shared.local_permits.acquire() => p?,
                _ = cancel.cancelled() => return Ok(true),
            };
            let mut on_chunk = |chunk: StreamChunk| match chunk {
                StreamChunk::Text(text) => {
                    visible.push_str(&text);
                    turn.emit(EventKind::Delta { text });
                }
                StreamChunk::Reasoning(text) => turn.emit(EventKind::Reasoning { text }),
            };
            let limits = shared.limits().await;
            let local = shared.local_for(&limits);
            shared.slot_owners.note(session.cache_slot(), &session.id);
            let result = local.chat(&request, cancel, &mut on_chunk).await;
            drop(permit);
            match result {
                Ok(response) => break response,
                Err(ProviderError::ContextOverflow(detail)) if extra_drop == 0 => {
                    tracing::info!(%detail, "server reported a context overflow; trimming and retrying once");
                    extra_drop = 1 + session.history.len() / 8;
                }
                Err(ProviderError::Interrupted) => {
                    if !visible.is_empty() {
                        let partial = format!("{visible}\n\n[interrupted by the user]");
                        session.push(&turn.origin, None, ChatMessage::assistant(partial))?;
                    }
                    return Ok(true);
                }
                Err(e) => return Err(e.into()),
            }
        };
        emit_usage(turn, &response);
        session.push(&turn.origin, None, response.message.clone())?;

        if response.tool_calls.is_empty() {
            log_daily(turn, "egirl", &response.content);
            turn.emit(EventKind::Final {
                text: response.content,
            });
            return Ok(false);
        }
        let results = run_tools(
            turn,
            &session.id,
            &response.tool_calls,
            &mut seen_calls,
            cancel,
        )
        .await;
        for (call, output) in response.tool_calls.iter().zip(results) {
            session.push(&turn.origin, None, ChatMessage::tool_result(call, output))?;
        }
        if cancel.is_cancelled() {
            return Ok(true);
        }
    }
    anyhow::bail!(
        "stopped after {max_turns} model requests without a final answer (raise [agent] max_turns to allow more)"
    )
}

/// After a trim the window is refilled to this share of the budget, so the
/// cut point (and the cached prefix) holds for the next several turns.
const REFILL_PERCENT: u64 = 75;

/// The request for the next step: system prompt, as much history as fits, the tools.
async fn build_request(
    turn: &Turn<'_>,
    session: &mut Session,
    system: &str,
    specs: &[crate::providers::ToolSpec],
    current: usize,
    extra_drop: usize,
) -> Result<ChatRequest> {
    let shared = turn.shared;
    let limits = shared.limits().await;
    let local = shared.local_for(&limits);
    let reply_reserve = shared.config.local.max_tokens.min(limits.n_ctx / 4);
    let budget = limits.n_ctx.saturating_sub(reply_reserve);
    let start = session.window_start.min(current);

    let mut request = ChatRequest {
        messages: prompt_messages(system, &session.history[start..]),
        tools: specs.to_vec(),
        max_tokens: shared.config.local.max_tokens,
        slot: session.slot,
    };
    // No token can be shorter than a byte, so a prompt with fewer bytes
    // than the budget fits without asking the server to count it.
    let mut prompt_tokens = byte_bound(&request);
    let mut exact = None;
    if prompt_tokens > budget || extra_drop > 0 {
        exact = count_prompt(shared, local, &request).await;
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
            .or_else(|_| {
                window::fit(window, &tokens, fixed, budget, current - start, extra_drop)
            })?;
        session.window_start = start + fit.first_kept;
        request.messages = prompt_messages(system, &session.history[session.window_start..]);
        turn.emit(EventKind::ContextTrimmed {
            dropped_messages: session.window_start,
            prompt_tokens: fit.prompt_tokens,
            context_length: limits.n_ctx,
        });
        prompt_tokens = fit.prompt_tokens;
    }
    request.max_tokens = shared
        .config
        .local
        .max_tokens
        .min(limits.n_ctx.saturating_sub(prompt_tokens).max(16));
    Ok(request)
}

fn prompt_messages(system: &str, history: &[ChatMessage]) -> Vec<ChatMessage> {
    let mut messages = Vec::with_capacity(history.len() + 1);
    messages.push(ChatMessage::system(system));
    messages.extend(history.iter().cloned());
    messages
}

/// An upper bound on the prompt's tokens: its bytes plus the template's
/// special tokens per message.
fn byte_bound(request: &ChatRequest) -> u64 {
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
async fn count_prompt(shared: &Shared, local: &LlamaCpp, request: &ChatRequest) -> Option<u64> {
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

fn tools_text(specs: &[crate::providers::ToolSpec]) -> String {
    specs
        .iter()
        .map(|s| s.to_openai_json().to_string())
        .collect::<Vec<_>>()
        .join("\n")
}

async fn message_tokens(shared: &Shared, message: &ChatMessage) -> u64 {
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
    match shared.local.count_tokens(text).await {
        Ok(n) => n,
        Err(_) => (text.len() as u64).div_ceil(4),
    }
}

fn emit_usage(turn: &Turn<'_>, response: &crate::providers::ChatResponse) {
    let config = &turn.shared.config;
    let model = if response.model.is_empty() {
        config.local.model.clone()
    } else {
        response.model.clone()
    };
    let pricing = config
        .pricing
        .get(&model)
        .or_else(|| config.pricing.get(&config.local.model));
    turn.emit(EventKind::Usage {
        provider: "llamacpp".into(),
        cost_usd: crate::tracking::cost_usd(pricing, &response.usage),
        model,
        input_tokens: response.usage.input_tokens,
        output_tokens: response.usage.output_tokens,
        cached_tokens: response.usage.cached_tokens,
        tokens_per_sec: response.usage.tokens_per_sec(),
    });
}

/// Runs the calls concurrently; results come back in call order.
async fn run_tools(
    turn: &Turn<'_>,
    session_id: &str,
    calls: &[ToolCall],
    seen: &mut HashSet<String>,
    cancel: &CancellationToken,
) -> Vec<String> {
    let shared = turn.shared;
    let ctx = ToolContext {
        workspace: shared.workspace.clone(),
        allowed_paths: shared.allowed_paths.clone(),
        exec: shared.config.tools.exec.clone(),
        session: session_id.to_string(),
        origin: turn.origin.clone(),
        approver: shared.approver.clone(),
        cancel: cancel.clone(),
    };
    let mut jobs = Vec::with_capacity(calls.len());
    for call in calls {
        turn.emit(EventKind::ToolCall {
            id: call.id.clone(),
            name: call.name.clone(),
            arguments: call.arguments.clone(),
        });
        // The same call twice in one turn is a loop the model needs to hear about.
        let repeated = !seen.insert(format!("{}:{}", call.name, call.arguments));
        let ctx = &ctx;
        jobs.push(async move {
            let started = Instant::now();
            let output = if let Some(err) = &call.arguments_error {
                tools::ToolOutput::fail(format!(
                    "your call to `{}` had invalid JSON arguments ({err}); send it again with a valid JSON object",
                    call.name
                ))
            } else if repeated {
                tools::ToolOutput::fail(format!(
                    "you already called `{}` with exactly these arguments in this turn; its result is above. Use it, or try something different",
                    call.name
                ))
            } else {
                tools::run(&call.name, &call.arguments, ctx).await
            };
            turn.emit(EventKind::ToolResult {
                id: call.id.clone(),
                name: call.name.clone(),
                success: output.success,
                output: output.output.clone(),
                duration_ms: started.elapsed().as_millis() as u64,
            });
            output.output
        });
    }
    join_all(jobs).await
}

fn log_daily(turn: &Turn<'_>, who: &str, text: &str) {
    if text.trim().is_empty() {
        return;
    }
    let origin = turn.origin.to_string();
    if let Err(e) =
        crate::memory::daily::append(&turn.shared.workspace, Local::now(), who, &origin, text)
    {
        turn.emit(EventKind::Notice {
            message: format!("could not append to the daily log: {e}"),
        });
    }
}
