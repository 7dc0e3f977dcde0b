//! The user's `[[hooks]]` at points of a turn: `session_start`,
//! `user_message`, `pre_tool`, `post_tool` and `turn_end` run in the turn
//! (in config order, each waited for); `approval_request` and `compaction`
//! run as their events pass on the bus. Each run is a `hook` event; a
//! failure or a timeout is a notice, never the turn's end. A `pre_tool`
//! hook that exits 2 blocks the call, its stderr the reason the model reads.

use std::sync::{Arc, Weak};

use serde_json::{Value, json};

use super::session::{Session, Turn};
use super::shared::Shared;
use crate::config::{HookConfig, HookEvent};
use crate::protocol::{EventKind, HookOutcome, HookRun, Notice, Origin};
use crate::tools::hooks::{self, HookEnd, HookRan};

/// The `session_start` hooks at this process's first turn of the
/// session, then the `user_message` hooks with the text as typed (redacted).
pub(super) async fn at_turn_start(turn: &Turn<'_>, session: &mut Session, typed: &str) {
    let point = |event, fields| HookPoint {
        event,
        session: &session.id,
        origin: &turn.origin,
        tool: None,
        call_id: None,
        fields,
    };
    if !session.hooks_started {
        run(turn.shared, point(HookEvent::SessionStart, json!({}))).await;
    }
    run(
        turn.shared,
        point(HookEvent::UserMessage, json!({ "text": typed })),
    )
    .await;
    session.hooks_started = true;
}

/// The `turn_end` hooks. A hook finds the turn's lines in the daily log
/// (written here when one is configured, else after `turn_ended`).
pub(super) async fn at_turn_end(turn: &Turn<'_>, session: &str, interrupted: bool) {
    let shared = turn.shared;
    if shared
        .config
        .hooks
        .iter()
        .any(|h| h.event == HookEvent::TurnEnd)
    {
        turn.write_daily();
    }
    let point = HookPoint {
        event: HookEvent::TurnEnd,
        session,
        origin: &turn.origin,
        tool: None,
        call_id: None,
        fields: json!({ "interrupted": interrupted }),
    };
    run(turn.shared, point).await;
}

/// The exit code with which a `pre_tool` hook blocks the call.
const BLOCK_EXIT: i32 = 2;

/// Where hooks run: the point, and what the hook is told on stdin
/// besides `event`, `session`, `origin` and `workspace`.
pub(super) struct HookPoint<'a> {
    pub event: HookEvent,
    pub session: &'a str,
    pub origin: &'a Origin,
    /// The tool's name (`pre_tool`, `post_tool`, `approval_request`).
    pub tool: Option<&'a str>,
    /// The tool call's id (`pre_tool`, `post_tool`).
    pub call_id: Option<&'a str>,
    /// More fields for stdin (`arguments`, `result`, `text`...).
    pub fields: Value,
}

/// Runs every hook of `point`'s event that matches it; the reason a
/// `pre_tool` hook blocked with, if one did (the later ones do not run).
pub(super) async fn run(shared: &Shared, point: HookPoint<'_>) -> Option<String> {
    let origin = point.origin.to_string();
    let tool = point.tool;
    let matching: Vec<&HookConfig> = shared
        .config
        .hooks
        .iter()
        .filter(|h| h.event == point.event && h.matches(tool, &origin, point.session))
        .collect();
    if matching.is_empty() {
        return None;
    }
    let input = stdin_json(shared, &point, &origin);
    let env = crate::tools::sandbox::env::command_env(
        &shared.config.tools.exec.env_passthrough,
        shared.protected.env_files(),
    );
    for hook in matching {
        let ran = hooks::run(hook, &input, &env, &shared.workspace).await;
        if let Some(reason) = report(shared, &point, hook, ran) {
            return Some(reason);
        }
    }
    None
}

/// One JSON object, its secret values redacted like every event's.
fn stdin_json(shared: &Shared, point: &HookPoint<'_>, origin: &str) -> String {
    let mut input = json!({
        "event": point.event.name(),
        "session": point.session,
        "origin": origin,
        "workspace": shared.workspace,
    });
    if let Some(name) = point.tool {
        input["tool"] = json!(name);
    }
    if let Some(id) = point.call_id {
        input["call_id"] = json!(id);
    }
    if let (Value::Object(all), Value::Object(more)) = (&mut input, &point.fields) {
        all.extend(more.clone());
    }
    shared.redactor.redact_json(&mut input);
    input.to_string()
}

/// The run's `hook` event, and a notice when it failed; the block reason
/// when a `pre_tool` hook exited 2.
fn report(
    shared: &Shared,
    point: &HookPoint<'_>,
    hook: &HookConfig,
    ran: HookRan,
) -> Option<String> {
    let event = point.event.name();
    let shown = hook.shown();
    let blocks = point.event == HookEvent::PreTool;
    let (outcome, exit_code, trouble) = match &ran.end {
        HookEnd::Exited(0) => (HookOutcome::Ok, Some(0), None),
        HookEnd::Exited(BLOCK_EXIT) if blocks => (HookOutcome::Blocked, Some(BLOCK_EXIT), None),
        HookEnd::Exited(code) => (
            HookOutcome::Failed,
            Some(*code),
            Some(format!("exited with {code}{}", first_line(&ran.stderr))),
        ),
        HookEnd::Signalled => (
            HookOutcome::Failed,
            None,
            Some(format!("was ended by a signal{}", first_line(&ran.stderr))),
        ),
        HookEnd::TimedOut(after) => (
            HookOutcome::TimedOut,
            None,
            Some(format!(
                "ran past its timeout ({}s) and was killed",
                after.as_secs_f64()
            )),
        ),
        HookEnd::NotStarted(why) => (
            HookOutcome::Failed,
            None,
            Some(format!("could not start: {why}")),
        ),
    };
    let message = match &ran.end {
        HookEnd::NotStarted(why) => why.clone(),
        _ => ran.stderr.clone(),
    };
    let emit = |kind| shared.bus.emit(point.session, point.origin, kind);
    emit(EventKind::Hook(HookRun {
        event: event.into(),
        command: shown.clone(),
        call_id: point.call_id.map(str::to_string),
        outcome,
        exit_code,
        message: message.clone(),
        duration_ms: ran.duration_ms,
    }));
    if let Some(trouble) = trouble {
        emit(EventKind::Notice(Notice {
            message: format!("hook `{shown}` ({event}) {trouble}"),
        }));
    }
    (outcome == HookOutcome::Blocked).then(|| match message.is_empty() {
        true => format!("blocked by the user's hook `{shown}` (no reason given)"),
        false => format!("blocked by the user's hook `{shown}`: {message}"),
    })
}

/// ": the first stderr line", or nothing.
fn first_line(stderr: &str) -> String {
    stderr
        .lines()
        .find(|l| !l.trim().is_empty())
        .map(|l| format!(": {}", l.trim()))
        .unwrap_or_default()
}

/// Runs the `approval_request` and `compaction` hooks as those events
/// pass on the bus, each event's hooks on a task of their own (an
/// approval waits for the user, not for a hook). Ends with the bus; holds
/// the shared state only while a hook runs.
pub(super) fn spawn_event_hooks(shared: &Arc<Shared>) {
    let wanted = |e: HookEvent| shared.config.hooks.iter().any(|h| h.event == e);
    if !wanted(HookEvent::ApprovalRequest) && !wanted(HookEvent::Compaction) {
        return;
    }
    let mut events = shared.bus.subscribe();
    let weak: Weak<Shared> = Arc::downgrade(shared);
    // The agent's own events only: the bus is every agent's.
    let agent = shared.bus.agent().map(str::to_string);
    tokio::spawn(async move {
        while let Some(event) = events.recv().await {
            if event.agent != agent {
                continue;
            }
            let (hook_event, tool, fields) = match &event.kind {
                EventKind::ApprovalRequest(r) => (
                    HookEvent::ApprovalRequest,
                    Some(r.tool.clone()),
                    json!({
                        "approval_id": r.id,
                        "arguments": {"command": r.command, "cwd": r.cwd},
                    }),
                ),
                EventKind::Compaction(c) => (
                    HookEvent::Compaction,
                    None,
                    json!({
                        "before_tokens": c.before_tokens, "after_tokens": c.after_tokens,
                        "summarized_messages": c.summarized_messages, "model": c.model,
                    }),
                ),
                _ => continue,
            };
            let Some(shared) = weak.upgrade() else {
                return;
            };
            tokio::spawn(async move {
                let point = HookPoint {
                    event: hook_event,
                    session: &event.session,
                    origin: &event.origin,
                    tool: tool.as_deref(),
                    call_id: None,
                    fields,
                };
                run(&shared, point).await;
            });
        }
    });
}
