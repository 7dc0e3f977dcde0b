//! History made acceptable to a remote API. Both Anthropic and OpenAI
//! refuse a conversation where a tool call has no result right after it, or
//! a result answers no call; a local session can hold either (an
//! interrupted turn, a trimmed window). Complete histories pass unchanged.

use crate::chat::ChatMessage;
use crate::protocol::Role;

/// What a call that never ran is answered with.
pub(crate) const NO_RESULT: &str = "(no result: this call was not run)";

/// Every assistant tool call followed by its result, in call order (a
/// missing one answered with [`NO_RESULT`]); a result that answers no call
/// of the message before it becomes a user message saying what it was.
pub(crate) fn paired(messages: &[ChatMessage]) -> Vec<ChatMessage> {
    let mut out = Vec::with_capacity(messages.len());
    let mut i = 0;
    while i < messages.len() {
        let message = &messages[i];
        i += 1;
        match message.role {
            Role::Assistant if !message.tool_calls.is_empty() => {
                out.push(message.clone());
                let mut results = Vec::new();
                while i < messages.len() && messages[i].role == Role::Tool {
                    results.push(&messages[i]);
                    i += 1;
                }
                for call in &message.tool_calls {
                    let found = results
                        .iter()
                        .position(|r| r.tool_call_id.as_deref() == Some(call.id.as_str()));
                    match found {
                        Some(at) => out.push(results.remove(at).clone()),
                        None => out.push(ChatMessage::tool_result(call, NO_RESULT)),
                    }
                }
                out.extend(results.into_iter().map(orphan_as_text));
            }
            Role::Tool => out.push(orphan_as_text(message)),
            _ => out.push(message.clone()),
        }
    }
    out
}

fn orphan_as_text(result: &ChatMessage) -> ChatMessage {
    let name = result.name.as_deref().unwrap_or("a tool");
    let id = result.tool_call_id.as_deref().unwrap_or("?");
    ChatMessage::user(format!("Result of {name} (call {id}):\n{}", result.content))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chat::ToolCall;

    fn call(id: &str) -> ToolCall {
        ToolCall {
            id: id.into(),
            name: "read_file".into(),
            arguments: serde_json::json!({}),
            arguments_error: None,
        }
    }

    fn asking(ids: &[&str]) -> ChatMessage {
        ChatMessage {
            tool_calls: ids.iter().map(|id| call(id)).collect(),
            ..ChatMessage::assistant("")
        }
    }

    #[test]
    fn a_complete_history_is_unchanged_but_sorted_by_call() {
        let history = vec![
            ChatMessage::user("hi"),
            asking(&["a", "b"]),
            ChatMessage::tool_result(&call("b"), "B"),
            ChatMessage::tool_result(&call("a"), "A"),
            ChatMessage::assistant("done"),
        ];
        let out = paired(&history);
        assert_eq!(out.len(), 5);
        assert_eq!(out[2].content, "A");
        assert_eq!(out[3].content, "B");
    }

    #[test]
    fn missing_results_are_filled_and_orphans_become_text() {
        let history = vec![
            ChatMessage::tool_result(&call("z"), "stray"),
            asking(&["a", "b"]),
            ChatMessage::tool_result(&call("a"), "A"),
            ChatMessage::tool_result(&call("q"), "late"),
            ChatMessage::user("and?"),
        ];
        let out = paired(&history);
        let roles: Vec<Role> = out.iter().map(|m| m.role).collect();
        assert_eq!(
            roles,
            [
                Role::User,
                Role::Assistant,
                Role::Tool,
                Role::Tool,
                Role::User,
                Role::User
            ]
        );
        assert_eq!(out[0].content, "Result of read_file (call z):\nstray");
        assert_eq!(out[3].tool_call_id.as_deref(), Some("b"));
        assert_eq!(out[3].content, NO_RESULT);
        assert!(out[4].content.ends_with("late"));
    }
}
