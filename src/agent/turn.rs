//! One turn: the user's message in, the model called until it answers
//! without tool calls (or `max_turns` requests), every step persisted before
//! the next one runs.

use std::collections::{HashMap, HashSet};
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::time::Instant;

use anyhow::Result;
use chrono::{Local, Utc};
use futures_util::FutureExt;
use futures_util::future::join_all;
use tokio_util::sync::CancellationToken;

use super::steps::{local_step, remote_step};
use super::{Shared, context, local, redact, route, slots, unattended};
use crate::config::Redactor;
use crate::protocol::{
    Command, ErrorEvent, EventKind, FinalAnswer, Notice, Origin, Route, Routing, Target,
    TokenUsage, ToolCallEvent, ToolResultEvent, TurnEnded, TurnStarted,
};
use crate::providers::{ChatMessage, ChatResponse, ProviderError, ToolCall};
use crate::routing::escalation;
use crate::sessions::{Record, Transcript};
use crate::tools::{self, ToolContext};

pub(crate) struct Session {
    pub id: String,
    pub(super) transcript: Transcript,
    pub(super) history: Vec<ChatMessage>,
    /// Token cost of each history message, filled lazily.
    pub(super) tokens: Vec<Option<u64>>,
    forced: Option<Target>,
    pub(super) slot: Option<u32>,
    /// History before this index is no longer sent. It only moves forward,
    /// and when it must, well past the minimum, so that the sent prefix
    /// stays the same for many turns (llama.cpp's prefix cache).
    pub(super) window_start: usize,
    /// What is pushed is redacted first: the transcript and the history
    /// (every later request) never hold a secret value.
    redactor: Arc<Redactor>,
    /// Tool outputs trimmed to fit the window, as they were (by history
    /// index): a later trim cuts from these, never from a cut text.
    pub(super) untrimmed: HashMap<usize, String>,
    /// User messages in the live transcript: the number of the running
    /// turn, which keys its file checkpoints (`/clear` leaves it).
    turns: usize,
    /// The local endpoint that answered the last local request.
    pub(super) endpoint: Option<String>,
}

impl Session {
    pub async fn open(shared: &Shared, id: &str) -> Result<Self> {
        let (transcript, records) = Transcript::open(&shared.workspace, id)?;
        let turns = crate::sessions::user_turns(&records);
        // From the last compaction's summary on, when there was one.
        let history = super::compact::resume(records);
        let limits = shared.limits().await;
        let session = Self {
            turns,
            id: id.to_string(),
            transcript,
            tokens: vec![None; history.len()],
            history,
            forced: None,
            slot: shared.assign_slot(id, limits.total_slots),
            window_start: 0,
            redactor: shared.redactor.clone(),
            untrimmed: HashMap::new(),
            endpoint: None,
        };
        // Resumed after a restart: the cache the last run saved makes the
        // first turn warm (where the server supports it).
        if !session.history.is_empty() {
            slots::restore(shared, session.cache_slot(), id).await;
        }
        Ok(session)
    }

    /// Reads the history again from the transcript (after a rewind).
    pub fn reload(&mut self, shared: &Shared) -> Result<()> {
        let (transcript, records) = Transcript::open(&shared.workspace, &self.id)?;
        self.turns = crate::sessions::user_turns(&records);
        self.transcript = transcript;
        self.history = super::compact::resume(records);
        self.tokens = vec![None; self.history.len()];
        self.window_start = 0;
        self.untrimmed.clear();
        Ok(())
    }

    /// The server slot holding this session's KV cache.
    pub(super) fn cache_slot(&self) -> u32 {
        self.slot.unwrap_or(0)
    }

    pub fn apply(&mut self, command: Command) {
        match command {
            Command::ForceTarget(target) => self.forced = Some(target),
            Command::Clear => {
                self.history.clear();
                self.tokens.clear();
                self.window_start = 0;
                self.untrimmed.clear();
            }
            // Answered by the core without the session (see `run_core`),
            // or by the session's worker (fork, rewind, `compact::now`).
            Command::MemorySearch { .. }
            | Command::Fork
            | Command::Rewind { .. }
            | Command::Compact { .. } => {}
        }
    }

    /// Appends to the transcript first, then to the in-memory history.
    pub(super) fn push(
        &mut self,
        origin: &Origin,
        typed: Option<String>,
        message: ChatMessage,
    ) -> Result<()> {
        self.push_record(origin, typed, None, message)
    }

    /// A model's reply, with the provider that wrote it (the distillation
    /// export keeps only what a remote model answered).
    fn push_reply(&mut self, origin: &Origin, provider: &str, message: ChatMessage) -> Result<()> {
        self.push_record(origin, None, Some(provider.to_string()), message)
    }

    fn push_record(
        &mut self,
        origin: &Origin,
        typed: Option<String>,
        provider: Option<String>,
        mut message: ChatMessage,
    ) -> Result<()> {
        redact::message(&self.redactor, &mut message);
        let typed = typed.map(|t| self.redactor.redact(&t).into_owned());
        self.transcript.append(&Record {
            ts: Utc::now(),
            origin: origin.clone(),
            typed,
            provider,
            message: message.clone(),
            compaction: None,
        })?;
        self.history.push(message);
        self.tokens.push(None);
        Ok(())
    }

    /// After a compaction: `history` replaced what was before `cut` with
    /// `inserted` messages (the summary); the window starts over.
    pub(super) fn replace_history(
        &mut self,
        history: Vec<ChatMessage>,
        cut: usize,
        inserted: usize,
    ) {
        let kept_tokens = self.tokens.split_off(cut.min(self.tokens.len()));
        self.tokens = vec![None; inserted];
        self.tokens.extend(kept_tokens);
        self.untrimmed = std::mem::take(&mut self.untrimmed)
            .into_iter()
            .filter(|(index, _)| *index >= cut)
            .map(|(index, text)| (index - cut + inserted, text))
            .collect();
        self.history = history;
        self.window_start = 0;
    }
}

pub(super) struct Turn<'a> {
    pub(super) shared: &'a Shared,
    session_id: String,
    pub(super) origin: Origin,
}

impl<'a> Turn<'a> {
    pub(super) fn new(shared: &'a Shared, session_id: &str, origin: Origin) -> Self {
        Self {
            shared,
            session_id: session_id.to_string(),
            origin,
        }
    }

    pub(super) fn emit(&self, kind: EventKind) {
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
    // What the user typed is kept, but never a secret value in it.
    let typed = shared.redactor.redact(&typed).into_owned();
    let turn = Turn {
        shared,
        session_id: session.id.clone(),
        origin: origin.clone(),
    };
    turn.emit(EventKind::TurnStarted(TurnStarted {
        text: typed.clone(),
    }));
    let interrupted = match run_steps(&turn, session, &typed, &cancel).await {
        Ok(interrupted) => interrupted,
        Err(e) => {
            turn.emit(EventKind::Error(ErrorEvent {
                message: format!("{e:#}"),
            }));
            false
        }
    };
    turn.emit(EventKind::TurnEnded(TurnEnded { interrupted }));
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
    let (route, model) = match (target, remote) {
        (Target::Remote, Some(r)) => (Route::Remote(r.name().into()), r.model().to_string()),
        _ => (Route::Local(role), shared.role_model(role).to_string()),
    };
    turn.emit(EventKind::Routing(Routing {
        route,
        model,
        reason: decision.reason.clone(),
        confidence: decision.confidence,
    }));
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
                        turn.emit(EventKind::Notice(Notice {
                            message: format!("{} failed ({e}); answering locally", r.name()),
                        }));
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
            turn.emit(EventKind::Notice(Notice { message }));
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
    turn.emit(EventKind::Final(FinalAnswer { text }));
}

/// Usage under the configured model name, the one the status line shows
/// (llama-server names the path of its GGUF file instead); the server's own
/// id still finds a price, and goes to the debug log.
pub(super) fn emit_usage(
    turn: &Turn<'_>,
    provider: &str,
    configured: &str,
    endpoint: Option<String>,
    response: &ChatResponse,
) {
    let config = &turn.shared.config;
    let served = response.model.as_str();
    let model = if configured.is_empty() {
        served.to_string()
    } else {
        configured.to_string()
    };
    if served != model {
        tracing::debug!(provider, model, served, "usage");
    }
    // Local models cost nothing unless `[pricing]` says so; remote ones
    // have built-in prices (overridable); a dated id is the more exact.
    let pricing = if provider == "llamacpp" {
        config
            .pricing
            .get(&model)
            .or_else(|| config.pricing.get(served))
            .cloned()
    } else {
        crate::tracking::price_for(&config.pricing, served)
            .or_else(|| crate::tracking::price_for(&config.pricing, &model))
    };
    turn.emit(EventKind::Usage(TokenUsage {
        provider: provider.to_string(),
        cost_usd: crate::tracking::cost_usd(pricing.as_ref(), &response.usage),
        model,
        input_tokens: response.usage.input_tokens,
        output_tokens: response.usage.output_tokens,
        cached_tokens: response.usage.cached_tokens,
        tokens_per_sec: response.usage.tokens_per_sec(),
        latency_ms: {
            let ms = response.usage.prompt_ms + response.usage.predicted_ms;
            (ms > 0.0).then(|| ms.round() as u64)
        },
        endpoint,
    }));
}

/// Runs the calls concurrently; results come back in call order.
pub(super) async fn run_tools(
    turn: &Turn<'_>,
    session_id: &str,
    calls: &[ToolCall],
    seen: &mut HashSet<String>,
    cancel: &CancellationToken,
    checkpoint: Option<Arc<tools::checkpoints::TurnCheckpoint>>,
) -> Vec<tools::ToolOutput> {
    let shared = turn.shared;
    let ctx = ToolContext {
        workspace: shared.workspace.clone(),
        allowed_paths: shared.allowed_paths.clone(),
        exec: shared.config.tools.exec.clone(),
        session: session_id.to_string(),
        origin: turn.origin.clone(),
        approver: shared.approver.clone(),
        cancel: cancel.clone(),
        skills: shared.skills.clone(),
        memory: Some(shared.memory.clone()),
        protected: shared.protected.clone(),
        config: std::sync::Arc::new(shared.config.clone()),
        bus: turn.shared.bus.clone(),
        call_id: String::new(),
        checkpoint,
        mcp: shared.mcp.clone(),
    };
    let mut jobs = Vec::with_capacity(calls.len());
    for call in calls {
        turn.emit(EventKind::ToolCall(ToolCallEvent {
            id: call.id.clone(),
            name: call.name.clone(),
            arguments: call.arguments.clone(),
            sandbox: (call.name == "exec").then(|| tools::sandbox::describe(&ctx.exec)),
        }));
        // The same call twice in one turn is a loop the model needs to hear about.
        let repeated = !seen.insert(format!("{}:{}", call.name, call.arguments));
        // Its own id, for the progress it reports.
        let mut call_ctx = ctx.clone();
        call_ctx.call_id = call.id.clone();
        jobs.push(async move {
            let ctx = &call_ctx;
            let started = Instant::now();
            let output = if let Some(err) = &call.arguments_error {
                tools::ToolOutput::fail(format!(
                    "your call to `{}` had invalid JSON arguments ({err}); send it again with a valid JSON object",
                    call.name
                ))
            } else if !unattended::tool_allowed(
                &ctx.origin,
                &call.name,
                &shared.config.webhook.tools,
            ) {
                tools::ToolOutput::fail(unattended::tool_refusal(&call.name))
            } else if repeated {
                tools::ToolOutput::fail(format!(
                    "you already called `{}` with exactly these arguments in this turn; its result is above. Use it, or try something different",
                    call.name
                ))
            } else {
                // A bug in one tool fails that call, not the session's worker.
                AssertUnwindSafe(tools::run(&call.name, &call.arguments, ctx))
                    .catch_unwind()
                    .await
                    .unwrap_or_else(|panic| {
                        let why = panic
                            .downcast_ref::<&str>()
                            .map(|s| s.to_string())
                            .or_else(|| panic.downcast_ref::<String>().cloned())
                            .unwrap_or_else(|| "unknown cause".into());
                        tracing::error!(tool = %call.name, "tool panicked: {why}");
                        tools::ToolOutput::fail(format!("`{}` crashed ({why}); this is a bug in egirl", call.name))
                    })
            };
            // Before it is shown, stored or sent: `env`, `cat .env`...
            let mut output = output;
            shared.redactor.redact_string(&mut output.output);
            turn.emit(EventKind::ToolResult(ToolResultEvent {
                id: call.id.clone(),
                name: call.name.clone(),
                success: output.success,
                output: output.output.clone(),
                duration_ms: started.elapsed().as_millis() as u64,
                // Shown, never sent: the model's result stays one line.
                diff: output.diff.take(),
            }));
            output
        });
    }
    join_all(jobs).await
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
        turn.emit(EventKind::Notice(Notice {
            message: format!("could not append to the daily log: {e}"),
        }));
    }
}
