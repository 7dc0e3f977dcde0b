//! `session/load`: a transcript replayed as the updates its turns sent
//! (what the user typed, the answers, each tool call and how it ended,
//! with a file tool's diff), so the editor shows the conversation again.

use super::{Acp, updates};
use crate::protocol::{Role, ToolOutcome};
use crate::sessions::Record;

/// Sends `records` as `session/update`s of `session`.
/// (`cwd`: where the calls' relative paths start).
pub fn send(acp: &Acp, session: &str, records: &[Record], cwd: &std::path::Path) {
    for update in replayed(records, &acp.options.workspace, cwd) {
        acp.update(session, update);
    }
}

fn replayed(
    records: &[Record],
    workspace: &std::path::Path,
    cwd: &std::path::Path,
) -> Vec<agent_client_protocol::v1::schema::SessionUpdate> {
    let mut out = Vec::new();
    for record in records.iter().filter(|r| r.compaction.is_none()) {
        let message = &record.message;
        match message.role {
            Role::User => {
                let text = record.typed.as_deref().unwrap_or(&message.content);
                out.push(updates::user_chunk(text));
            }
            Role::Assistant => {
                let text = message
                    .content
                    .strip_suffix(crate::sessions::INTERRUPTED_MARKER)
                    .unwrap_or(&message.content);
                if !text.is_empty() {
                    out.push(updates::answer_chunk(text));
                }
                for call in &message.tool_calls {
                    out.push(updates::tool_call(
                        &call.id,
                        &call.name,
                        &call.arguments,
                        cwd,
                    ));
                }
            }
            Role::Tool => {
                let Some(id) = &message.tool_call_id else {
                    continue;
                };
                let outcome = record
                    .details
                    .outcome
                    .or_else(|| ToolOutcome::guessed(&message.content));
                let success = outcome.is_none_or(|o| o == ToolOutcome::Ok);
                let diff = record.details.diff.as_ref();
                out.push(updates::tool_result(
                    id,
                    success,
                    &message.content,
                    diff,
                    workspace,
                ));
            }
            Role::System => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chat::{ChatMessage, ToolCall};
    use crate::protocol::{FileDiff, Origin};
    use agent_client_protocol::v1::schema::SessionUpdate;

    fn record(message: ChatMessage) -> Record {
        Record::now(Origin::Tui, message)
    }

    #[test]
    fn a_turn_replays_as_the_message_the_calls_and_the_answer() {
        let call = ToolCall {
            id: "c1".into(),
            name: "write_file".into(),
            arguments: serde_json::json!({"path": "a.txt", "content": "hi"}),
            arguments_error: None,
        };
        let mut asked = record(ChatMessage::user("[time] write a"));
        asked.typed = Some("write a".into());
        let mut calling = record(ChatMessage::assistant(""));
        calling.message.tool_calls = vec![call.clone()];
        let mut result = record(ChatMessage::tool_result(&call, "wrote a.txt"));
        result.details.outcome = Some(ToolOutcome::Ok);
        result.details.diff = Some(FileDiff {
            path: "a.txt".into(),
            added: 1,
            removed: 0,
            text: "@@ -0,0 +1 @@\n+hi".into(),
        });
        let answer = record(ChatMessage::assistant("done"));
        let ws = std::path::Path::new("/ws");
        let got = replayed(&[asked, calling, result, answer], ws, ws);
        let kinds: Vec<&str> = got
            .iter()
            .map(|u| match u {
                SessionUpdate::UserMessageChunk(_) => "user",
                SessionUpdate::AgentMessageChunk(_) => "agent",
                SessionUpdate::ToolCall(_) => "call",
                SessionUpdate::ToolCallUpdate(_) => "update",
                _ => "other",
            })
            .collect();
        assert_eq!(kinds, ["user", "call", "update", "agent"]);
        let user = serde_json::to_value(&got[0]).unwrap();
        assert_eq!(user["content"]["text"], "write a");
        let update = serde_json::to_value(&got[2]).unwrap();
        assert_eq!(update["status"], "completed");
        assert_eq!(update["content"][0]["type"], "diff");
        assert_eq!(update["content"][0]["newText"], "hi\n");
    }
}
