//! The two requests of a compaction: the silent memory flush and the
//! summary. Both send the history being summarized with the turn's own
//! system prompt and tools, so the server reuses the prefix it has cached,
//! then one instruction; both are fitted to the window (the oldest whole
//! turns left out when even that part is too large).

use std::collections::HashSet;

use anyhow::{Context, Result, bail};
use tokio_util::sync::CancellationToken;

use super::super::prompt::{byte_bound, count_prompt, message_tokens, prompt_messages};
use super::super::session::{Session, Turn};
use super::super::tool_calls::run_tools;
use super::super::usage::emit_usage;
use super::super::window;
use crate::chat::{ChatMessage, ToolSpec};
use crate::protocol::{EventKind, Notice};
use crate::providers::endpoints::LocalRole;
use crate::providers::{ChatRequest, ChatResponse, StreamChunk};

const FLUSH_PROMPT: &str = "\
The older part of this conversation is about to be replaced by a short summary. \
First save with memory_save each fact worth remembering after this session \
(about the user, decisions, preferences, open tasks), one call per fact. \
Save nothing that only matters to this conversation. If there is nothing, answer NONE.";

const SUMMARY_PROMPT: &str = "\
Summarize the conversation above so that it can go on without it: \
the user's goals and requests, decisions, facts learned, files and commands involved, \
what is done and what is still open. Plain text or short bullet points, no tool calls, \
at most 250 words.";

/// The one tool the flush may run: it can only add notes to memory.
const FLUSH_TOOL: &str = "memory_save";

/// Asks the model to save durable facts; runs only its `memory_save`
/// calls (shown as events), never its text. A failure is a notice: the
/// compaction goes on without it.
pub(super) async fn flush(
    turn: &Turn<'_>,
    session: &mut Session,
    system: &str,
    specs: &[ToolSpec],
    start: usize,
    cut: usize,
    cancel: &CancellationToken,
) {
    let tail = ChatMessage::user(FLUSH_PROMPT);
    let main = LocalRole::Main;
    let response = match fitted(turn, session, main, system, specs, start, cut, tail).await {
        Ok(request) => local_chat(turn, main, &session.id, &request, cancel).await,
        Err(e) => Err(e),
    };
    let response = match response {
        Ok(r) => r,
        Err(_) if cancel.is_cancelled() => return,
        Err(e) => {
            turn.emit(EventKind::Notice(Notice {
                message: format!("memory flush failed ({e:#}); compacting without it"),
            }));
            return;
        }
    };
    // `memory_save` called through the tool catalog counts too.
    let (saves, others): (Vec<_>, Vec<_>) = response
        .tool_calls
        .iter()
        .map(|c| c.resolved().into_owned())
        .partition(|c| c.name == FLUSH_TOOL);
    if !others.is_empty() {
        tracing::debug!(
            "memory flush: {} call(s) to other tools not run",
            others.len()
        );
    }
    if !saves.is_empty() {
        run_tools(turn, &session.id, &saves, &mut HashSet::new(), cancel, None).await;
    }
}

/// The summary and the model that wrote it.
#[allow(clippy::too_many_arguments)]
pub(super) async fn summary(
    turn: &Turn<'_>,
    session: &mut Session,
    system: &str,
    specs: &[ToolSpec],
    start: usize,
    cut: usize,
    focus: Option<&str>,
    cancel: &CancellationToken,
) -> Result<(String, String)> {
    let shared = turn.shared;
    let mut prompt = SUMMARY_PROMPT.to_string();
    if let Some(focus) = focus.map(str::trim).filter(|f| !f.is_empty()) {
        prompt.push_str(&format!("\nKeep in particular: {focus}"));
    }
    // The focus the user gave is their text: redacted like every message
    // before it joins the history.
    let mut tail = ChatMessage::user(prompt);
    crate::redact::message(&shared.redactor, &mut tail);
    let mut model_name = shared.config.agent.compaction_model.as_str();
    if model_name == "remote"
        && let Some(why) = over_budget(turn, system, &session.history[start..cut])
    {
        turn.emit(EventKind::Notice(Notice {
            message: format!("compacting with the local model: {why}"),
        }));
        model_name = "local";
    }
    let (response, model) = match model_name {
        "remote" => {
            let Some(remote) = shared.remote.preferred() else {
                bail!("[agent] compaction_model = \"remote\" but no remote provider has a key");
            };
            let mut history = session.history[start..cut].to_vec();
            history.push(tail);
            let request = ChatRequest {
                messages: prompt_messages(&shared.redactor, system, &history),
                tools: Default::default(),
                max_tokens: shared.config.local.max_tokens,
                slot: None,
                images: Default::default(),
            };
            let response = remote
                .chat(&request, cancel, &mut |_: StreamChunk| {})
                .await
                .with_context(|| format!("{} did not summarize", remote.name()))?;
            emit_usage(turn, remote.name(), remote.model(), None, &response, None);
            (response, remote.model().to_string())
        }
        name => {
            // "fast": `[local.fast]` when configured, else the main model.
            let role = if name == "local" {
                LocalRole::Main
            } else {
                shared.fast_role()
            };
            let request = fitted(turn, session, role, system, specs, start, cut, tail).await?;
            let response = local_chat(turn, role, &session.id, &request, cancel).await?;
            (response, shared.role_model(role).to_string())
        }
    };
    let text = response.content.trim();
    if text.is_empty() {
        bail!("the model wrote no summary");
    }
    Ok((text.to_string(), model))
}

/// Why the spend caps stop a remote summary of `history` (`None`: it may go).
fn over_budget(turn: &Turn<'_>, system: &str, history: &[ChatMessage]) -> Option<String> {
    let remote = turn.shared.remote.preferred()?;
    let prompt = super::super::budget::prompt_estimate(system, history);
    super::super::budget::refusal_now(turn, remote, prompt)
}

/// One silent request to a local role: nothing streams to surfaces. The
/// main role keeps the session's endpoint (and its cache); the pool
/// limits requests per endpoint.
async fn local_chat(
    turn: &Turn<'_>,
    role: LocalRole,
    session: &str,
    request: &ChatRequest,
    cancel: &CancellationToken,
) -> Result<ChatResponse> {
    let shared = turn.shared;
    let session = (role == LocalRole::Main).then_some(session);
    let served = shared
        .local_chat(
            role,
            session,
            request,
            cancel,
            &mut |_: StreamChunk| {},
            &mut |_| {},
        )
        .await?;
    let mut response = served.response;
    crate::redact::response(&shared.redactor, &mut response);
    let configured = shared.role_model(role);
    emit_usage(
        turn,
        "llamacpp",
        configured,
        Some(served.endpoint),
        &response,
        None,
    );
    Ok(response)
}

/// The history `start..cut` and `tail` as one request that fits the
/// window with room for the reply.
#[allow(clippy::too_many_arguments)]
async fn fitted(
    turn: &Turn<'_>,
    session: &mut Session,
    role: LocalRole,
    system: &str,
    specs: &[ToolSpec],
    start: usize,
    cut: usize,
    tail: ChatMessage,
) -> Result<ChatRequest> {
    let shared = turn.shared;
    let limits = shared.limits_for(role).await;
    let reply = shared.config.local.max_tokens.min(limits.n_ctx / 8).max(64);
    let budget = limits.n_ctx.saturating_sub(reply);
    let mut history = session.history[start..cut].to_vec();
    history.push(tail);
    let mut request = ChatRequest {
        messages: prompt_messages(&shared.redactor, system, &history),
        tools: specs.into(),
        max_tokens: reply,
        // The fast role's server has its own slots: any free one.
        slot: session.slot.filter(|_| role == LocalRole::Main),
        images: Default::default(),
    };
    let bound = byte_bound(&request, shared.config.images.local_tokens);
    if bound <= budget {
        return Ok(request);
    }
    let server = shared.counting_server(role, Some(&session.id)).await;
    let total = count_prompt(shared, &server, &request)
        .await
        .unwrap_or(bound / 3);
    if total <= budget {
        return Ok(request);
    }
    for i in start..cut {
        if session.tokens[i].is_none() {
            session.tokens[i] = Some(message_tokens(shared, &session.history[i]).await);
        }
    }
    let mut tokens: Vec<u64> = session.tokens[start..cut]
        .iter()
        .map(|t| t.unwrap_or(0))
        .collect();
    if let Some(last) = history.last() {
        tokens.push(message_tokens(shared, last).await);
    }
    let fixed = total.saturating_sub(tokens.iter().sum());
    let fit = window::fit(&history, &tokens, fixed, budget, history.len() - 1, 0)?;
    request.messages = prompt_messages(&shared.redactor, system, &history[fit.first_kept..]);
    Ok(request)
}
