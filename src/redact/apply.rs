//! Where the core applies the `Redactor`: a model's
//! reply before it is stored, shown or acted on, a message before it
//! reaches the transcript and the history (hence every later request), and
//! every event on its way out, as the last guard.

use std::sync::Arc;

use super::Redactor;
use crate::bus::EventGuard;
use crate::chat::ChatMessage;
use crate::protocol::{
    AnswerDelta, ErrorEvent, EventKind, FinalAnswer, Notice, Queued, ReasoningDelta, ToolCallEvent,
    ToolResultEvent, TurnStarted,
};
use crate::providers::ChatResponse;

/// The bus guard: every text field of an event, redacted.
pub fn event_guard(redactor: Arc<Redactor>) -> EventGuard {
    Arc::new(move |kind: &mut EventKind| event(&redactor, kind))
}

pub fn event(r: &Redactor, kind: &mut EventKind) {
    if r.is_empty() {
        return;
    }
    // The frequent events directly. Their fields are all named (no `..`),
    // so a text field added later fails to compile here until handled.
    match kind {
        EventKind::Delta(AnswerDelta { text })
        | EventKind::Reasoning(ReasoningDelta { text })
        | EventKind::Final(FinalAnswer { text })
        | EventKind::TurnStarted(TurnStarted { text, images: _ })
        | EventKind::Queued(Queued { text, position: _ }) => r.redact_string(text),
        EventKind::Notice(Notice { message }) | EventKind::Error(ErrorEvent { message }) => {
            r.redact_string(message)
        }
        EventKind::ToolResult(ToolResultEvent {
            id: _,
            name: _,
            success: _,
            output,
            duration_ms: _,
            diff,
        }) => {
            r.redact_string(output);
            if let Some(diff) = diff {
                r.redact_string(&mut diff.path);
                r.redact_string(&mut diff.text);
            }
        }
        EventKind::ToolCall(ToolCallEvent {
            id: _,
            name: _,
            arguments,
            sandbox: _,
        }) => r.redact_json(arguments),
        // Everything else (and any variant added later) through its JSON
        // form: slower, but no text field is ever missed.
        other => {
            let Ok(mut value) = serde_json::to_value(&*other) else {
                return;
            };
            r.redact_json(&mut value);
            if let Ok(clean) = serde_json::from_value(value) {
                *other = clean;
            }
        }
    }
}

/// A message's text and its tool calls' arguments.
pub fn message(r: &Redactor, message: &mut ChatMessage) {
    if r.is_empty() {
        return;
    }
    r.redact_string(&mut message.content);
    for call in &mut message.tool_calls {
        r.redact_json(&mut call.arguments);
    }
}

/// A model's reply as the turn uses it: the text, the message kept in
/// history, and the calls the tools will run (so a tool never writes a
/// value the model somehow knew: `memory_save` into MEMORY.md, say).
pub fn response(r: &Redactor, response: &mut ChatResponse) {
    if r.is_empty() {
        return;
    }
    r.redact_string(&mut response.content);
    r.redact_string(&mut response.reasoning);
    message(r, &mut response.message);
    for call in &mut response.tool_calls {
        r.redact_json(&mut call.arguments);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::{ApprovalRequest, Escalation, MemoryHit, MemoryHits, Origin};

    fn redactor() -> Redactor {
        Redactor::new([("FOO_TOKEN".to_string(), "foo-token-value".to_string())])
    }

    #[test]
    fn every_text_of_an_event_is_redacted() {
        let r = redactor();
        let secret = "foo-token-value";
        let cases = [
            EventKind::Delta(AnswerDelta {
                text: secret.into(),
            }),
            EventKind::Error(ErrorEvent {
                message: format!("failed: {secret}"),
            }),
            EventKind::ToolCall(ToolCallEvent {
                id: "1".into(),
                name: "exec".into(),
                arguments: serde_json::json!({"command": format!("echo {secret}")}),
                sandbox: None,
            }),
            EventKind::ToolResult(ToolResultEvent {
                id: "1".into(),
                name: "write_file".into(),
                success: true,
                output: "created .envrc".into(),
                duration_ms: 1,
                diff: Some(crate::protocol::FileDiff {
                    path: ".envrc".into(),
                    added: 1,
                    removed: 0,
                    text: format!("@@ -0,0 +1 @@\n+export FOO_TOKEN={secret}"),
                }),
            }),
            EventKind::MemoryHits(MemoryHits {
                query: secret.into(),
                hits: vec![MemoryHit {
                    path: "MEMORY.md".into(),
                    start_line: 1,
                    end_line: 2,
                    score: 0.5,
                    snippet: format!("token {secret}"),
                    ..Default::default()
                }],
            }),
            EventKind::ApprovalRequest(ApprovalRequest {
                id: "1".into(),
                tool: "exec".into(),
                command: format!("echo {secret}"),
                cwd: "/w".into(),
                rule: Some(format!("echo {secret}")),
                rule_covers: Some(format!("exactly `echo {secret}`").into()),
                sandbox: None,
                escalation: Some(format!("failed: {secret}").into()),
            }),
            EventKind::Escalation(Escalation {
                from: "local".into(),
                to: "remote".into(),
                reason: secret.into(),
                trigger: "user".into(),
            }),
        ];
        for mut kind in cases {
            event(&r, &mut kind);
            let shown = serde_json::to_string(&kind).unwrap();
            assert!(!shown.contains(secret), "{shown}");
            assert!(shown.contains("[redacted:FOO_TOKEN]"), "{shown}");
        }
    }

    #[test]
    fn the_bus_guard_redacts_before_any_subscriber() {
        let bus = crate::bus::EventBus::new().with_guard(event_guard(Arc::new(redactor())));
        let mut rx = bus.subscribe();
        bus.emit(
            "s",
            &Origin::Cli,
            EventKind::Notice(Notice {
                message: "key foo-token-value".into(),
            }),
        );
        let got = rx.try_recv().unwrap();
        assert_eq!(
            got.kind,
            EventKind::Notice(Notice {
                message: "key [redacted:FOO_TOKEN]".into()
            })
        );
    }
}
