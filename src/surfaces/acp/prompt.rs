//! `session/prompt`: one turn of the core, streamed as `session/update`s
//! until it ends. Ends `end_turn`; `cancelled` after `session/cancel`
//! (never an error); `max_turn_requests` when the turn ran out of model
//! requests (`[agent] max_turns`); `refusal` when the model declined
//! (the core's `refused`); a failed turn is an error with the core's
//! one line.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use agent_client_protocol::v1::schema::{ContentBlock, PromptRequest, PromptResponse, StopReason};
use serde_json::Value;

use super::commands::{self, Slash};
use super::session::ask_core;
use super::{Acp, content, files, permission, updates};
use crate::jsonrpc::RpcError;
use crate::protocol::{
    ApprovalRules, Command, Compacted, Event, EventKind, ImagePart, MemoryHits, Op, Origin,
    Rewound, Submission,
};

/// The start of the error a turn ends with when it used up `[agent]
/// max_turns` requests (`agent::turn`).
const OUT_OF_REQUESTS: &str = "stopped after ";

/// Characters of a tool's progress shown under its call (the newest).
const PROGRESS_CHARS: usize = 4000;

pub async fn run(acp: &Arc<Acp>, params: Value) -> Result<Value, RpcError> {
    let request: PromptRequest = serde_json::from_value(params)
        .map_err(|e| RpcError::invalid(format!("bad params: {e}")))?;
    let session = request.session_id.0.to_string();
    let cancelled = Arc::new(AtomicBool::new(false));
    {
        let mut open = acp.lock();
        let Some(state) = open.get_mut(&session) else {
            return Err(RpcError::not_found(format!(
                "no session `{session}` is open here: session/new or session/load first"
            )));
        };
        if state.cancelled.is_some() {
            return Err(RpcError::invalid(
                "a prompt is already running in this session; cancel it first",
            ));
        }
        state.cancelled = Some(cancelled.clone());
    }
    let stop = prompt(acp, &session, &request.prompt, &cancelled).await;
    if let Some(state) = acp.lock().get_mut(&session) {
        state.cancelled = None;
    }
    let stop = stop?;
    serde_json::to_value(PromptResponse::new(stop)).map_err(|e| RpcError::internal(e.to_string()))
}

async fn prompt(
    acp: &Arc<Acp>,
    session: &str,
    blocks: &[ContentBlock],
    cancelled: &AtomicBool,
) -> Result<StopReason, RpcError> {
    let (text, images) = content::prompt(blocks, &acp.options.workspace)?;
    if text.trim().is_empty() {
        return Err(RpcError::invalid("the prompt has no text"));
    }
    let text = match commands::parse(acp, &text) {
        None => text,
        Some(Slash::Message(text)) => text,
        Some(Slash::Bad(why)) => return Ok(say(acp, session, &why)),
        Some(Slash::Silent(command, line)) => {
            acp.link.submit(Op::Command {
                session: session.to_string(),
                command,
            });
            return Ok(say(acp, session, line));
        }
        Some(Slash::Core(command)) => return command_turn(acp, session, command).await,
    };
    turn(acp, session, text, images, cancelled).await
}

/// One line of the agent's, and the turn is over.
fn say(acp: &Acp, session: &str, line: &str) -> StopReason {
    acp.update(session, updates::answer_chunk(line));
    StopReason::EndTurn
}

/// A built-in command: the core's answer, in words.
async fn command_turn(acp: &Acp, session: &str, command: Command) -> Result<StopReason, RpcError> {
    let answer = ask_core(acp, session, command, |kind| match kind {
        EventKind::Compaction(Compacted {
            summarized_messages,
            before_tokens,
            after_tokens,
            ..
        }) => Some(format!(
            "compacted {summarized_messages} messages ({before_tokens} → {after_tokens} tokens)"
        )),
        EventKind::MemoryHits(MemoryHits { query, hits }) if hits.is_empty() => {
            Some(format!("nothing in memory matches `{query}`"))
        }
        EventKind::MemoryHits(MemoryHits { hits, .. }) => Some(
            hits.iter()
                .map(|h| {
                    format!(
                        "- {}:{} {}",
                        h.path,
                        h.best_line.max(h.start_line),
                        h.matched_line()
                    )
                })
                .collect::<Vec<_>>()
                .join("\n"),
        ),
        EventKind::ApprovalRules(ApprovalRules { rules }) if rules.is_empty() => {
            Some("no approval rules in force".to_string())
        }
        EventKind::ApprovalRules(ApprovalRules { rules }) => Some(
            rules
                .iter()
                .map(|r| {
                    format!(
                        "- {} `{}` ({}, {})",
                        r.kind.heading(),
                        r.rule,
                        r.scope.name(),
                        r.source
                    )
                })
                .collect::<Vec<_>>()
                .join("\n"),
        ),
        EventKind::Rewound(Rewound {
            turn,
            restored,
            removed,
            ..
        }) => Some(format!(
            "went back to before message {turn}; {} file(s) restored, {} removed",
            restored.len(),
            removed.len()
        )),
        _ => None,
    })
    .await
    .map_err(RpcError::internal)?;
    Ok(say(acp, session, &answer))
}

/// A message's turn, streamed, until the core says it ended.
async fn turn(
    acp: &Arc<Acp>,
    session: &str,
    text: String,
    images: Vec<ImagePart>,
    cancelled: &AtomicBool,
) -> Result<StopReason, RpcError> {
    let mut events = acp.link.subscribe();
    let submission = Submission::new(Op::UserMessage {
        session: session.to_string(),
        origin: Origin::Acp,
        text,
        images,
    });
    let id = submission.id.clone();
    acp.link.submit_with(submission);
    let mut stream = Stream::default();
    while let Some(event) = events.recv().await {
        // An event emitted from a task of its own carries no id.
        let ours = event.submission.as_ref().is_none_or(|s| *s == id);
        if event.session != session || !ours {
            continue;
        }
        if let Some(end) = stream.event(acp, session, event) {
            let interrupted = end || cancelled.load(Ordering::SeqCst);
            if stream.refused && !interrupted {
                return Ok(StopReason::Refusal);
            }
            return stop_reason(interrupted, stream.error);
        }
    }
    Err(RpcError::internal("the core stopped before the turn ended"))
}

fn stop_reason(interrupted: bool, error: Option<String>) -> Result<StopReason, RpcError> {
    match error {
        _ if interrupted => Ok(StopReason::Cancelled),
        Some(e) if e.starts_with(OUT_OF_REQUESTS) => Ok(StopReason::MaxTurnRequests),
        Some(e) => Err(RpcError::internal(e)),
        None => Ok(StopReason::EndTurn),
    }
}

/// What a turn has streamed so far.
#[derive(Default)]
struct Stream {
    /// Answer text went out since the last tool call: the final answer
    /// needs not go again.
    answered: bool,
    /// Calls started and not ended: an approval request names its call.
    running: Vec<(String, String)>,
    progress: HashMap<String, String>,
    error: Option<String>,
    /// The model declined to answer.
    refused: bool,
}

impl Stream {
    /// Sends what `event` shows; `Some(interrupted)` when the turn ended.
    fn event(&mut self, acp: &Arc<Acp>, session: &str, event: Event) -> Option<bool> {
        let workspace = &acp.options.workspace;
        let update = match event.kind {
            EventKind::Delta(delta) => {
                self.answered = true;
                updates::answer_chunk(&delta.text)
            }
            EventKind::Reasoning(delta) => updates::thought_chunk(&delta.text),
            EventKind::ToolCall(call) => {
                self.answered = false;
                self.running.push((call.id.clone(), call.name.clone()));
                let cwd = acp.cwd(session);
                updates::tool_call(&call.id, &call.name, &call.arguments, &cwd)
            }
            EventKind::ApprovalRequest(request) => {
                let call = self.call_for(&request.tool);
                let acp = acp.clone();
                let session = session.to_string();
                tokio::spawn(async move { permission::ask(&acp, &session, call, request).await });
                return None;
            }
            EventKind::FileRequest(request) => {
                let acp = acp.clone();
                let session = session.to_string();
                tokio::spawn(async move { files::serve(&acp, &session, request).await });
                return None;
            }
            EventKind::ToolProgress(progress) => {
                let so_far = self.progress.entry(progress.id.clone()).or_default();
                so_far.push_str(&progress.text);
                so_far.push('\n');
                let start = so_far.len().saturating_sub(PROGRESS_CHARS);
                let start = (start..so_far.len())
                    .find(|i| so_far.is_char_boundary(*i))
                    .unwrap_or(0);
                updates::tool_progress(&progress.id, &so_far[start..])
            }
            EventKind::ToolResult(result) => {
                self.running.retain(|(id, _)| *id != result.id);
                self.progress.remove(&result.id);
                updates::tool_result(
                    &result.id,
                    result.success,
                    &result.output,
                    result.diff.as_ref(),
                    workspace,
                )
            }
            EventKind::Usage(usage) => updates::usage(&usage)?,
            EventKind::Final(answer) if !self.answered && !answer.text.is_empty() => {
                self.answered = true;
                updates::answer_chunk(&answer.text)
            }
            EventKind::Notice(notice) => updates::thought_chunk(&format!("({})\n", notice.message)),
            EventKind::Error(error) => {
                self.error = Some(error.message);
                return None;
            }
            EventKind::Refused(_) => {
                self.refused = true;
                return None;
            }
            EventKind::TurnEnded(ended) => return Some(ended.interrupted),
            _ => return None,
        };
        acp.update(session, update);
        None
    }

    /// The running call an approval request for `tool` is about: the
    /// newest of that tool (an MCP request names the tool by its full
    /// name); none for a delegated agent's own requests, which are not
    /// the delegation call itself.
    fn call_for(&self, tool: &str) -> Option<String> {
        self.running
            .iter()
            .rev()
            .find(|(_, name)| name == tool)
            .map(|(id, _)| id.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_turn_end_maps_to_a_stop_reason() {
        assert_eq!(stop_reason(false, None), Ok(StopReason::EndTurn));
        assert_eq!(
            stop_reason(true, Some("x".into())),
            Ok(StopReason::Cancelled)
        );
        let out = "stopped after 20 model requests without a final answer".to_string();
        assert_eq!(
            stop_reason(false, Some(out)),
            Ok(StopReason::MaxTurnRequests)
        );
        assert!(stop_reason(false, Some("the model failed".into())).is_err());
    }
}
