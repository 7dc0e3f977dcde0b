//! A compaction's summary as it sits in the history: the two messages
//! that replace what was summarized, and the history a resumed session
//! starts from (each compaction record in the transcript replacing what
//! came before its kept messages). Below both the session, which resumes
//! from it, and compaction, which writes it.

use crate::chat::ChatMessage;
use crate::sessions::Record;

/// What precedes the summary in the history the model sees.
const SUMMARY_HEADER: &str = "[Summary of our earlier conversation, which was compacted]";
/// The assistant's side after the summary, so roles still alternate
/// (several chat templates refuse two user messages in a row).
const SUMMARY_ACK: &str = "Noted; I will continue from this summary.";
/// The summary and its acknowledgement: what replaces the history before the cut.
pub(super) const SUMMARY_MESSAGES: usize = 2;

/// The history a resumed session starts from: the records in order, each
/// compaction record replacing what came before its kept messages with
/// its summary.
pub(super) fn resume(records: Vec<Record>) -> Vec<ChatMessage> {
    let mut history: Vec<ChatMessage> = Vec::with_capacity(records.len());
    for record in records {
        match record.compaction {
            Some(c) => {
                let kept = history.split_off(history.len().saturating_sub(c.kept));
                history = summary_messages(&record.message.content);
                history.extend(kept);
            }
            None => history.push(record.message),
        }
    }
    history
}

/// The summary and its acknowledgement, first in the history.
pub(super) fn summary_messages(summary: &str) -> Vec<ChatMessage> {
    vec![
        ChatMessage::user(format!("{SUMMARY_HEADER}\n{summary}")),
        ChatMessage::assistant(SUMMARY_ACK),
    ]
}

#[cfg(test)]
pub(super) mod tests {
    use chrono::Utc;

    use super::*;
    use crate::chat::ToolCall;
    use crate::protocol::Origin;
    use crate::sessions::Compaction;

    /// A user question, a tool call and its result, and the answer.
    pub(in crate::agent) fn turn_with_tool(n: usize) -> Vec<ChatMessage> {
        let call = ToolCall {
            id: format!("call_{n}"),
            name: "glob".into(),
            arguments: serde_json::json!({"pattern": "*"}),
            arguments_error: None,
        };
        let mut asked = ChatMessage::assistant("");
        asked.tool_calls = vec![call.clone()];
        vec![
            ChatMessage::user(format!("question {n}")),
            asked,
            ChatMessage::tool_result(&call, "a.md"),
            ChatMessage::assistant(format!("answer {n}")),
        ]
    }

    fn record(message: ChatMessage, compaction: Option<Compaction>) -> Record {
        Record {
            ts: Utc::now(),
            origin: Origin::Cli,
            typed: None,
            provider: None,
            message,
            compaction,
        }
    }

    #[test]
    fn resume_starts_from_the_summary_and_the_kept_messages() {
        let mut records: Vec<Record> = (0..3)
            .flat_map(turn_with_tool)
            .map(|m| record(m, None))
            .collect();
        let mark = |kept| Compaction {
            kept,
            summarized_messages: 8,
            before_tokens: 100,
            after_tokens: 10,
            model: "local".into(),
        };
        records.push(record(ChatMessage::system("first summary"), Some(mark(4))));
        records.push(record(ChatMessage::user("after"), None));
        let history = resume(records.clone());
        assert_eq!(history.len(), 2 + 4 + 1);
        assert!(history[0].content.ends_with("first summary"));
        assert_eq!(history[1].content, SUMMARY_ACK);
        assert_eq!(history[2].content, "question 2");
        assert_eq!(history[6].content, "after");
        // A second compaction summarizes the first summary too.
        records.push(record(ChatMessage::system("second"), Some(mark(1))));
        let history = resume(records);
        assert_eq!(history.len(), 3);
        assert!(history[0].content.ends_with("second"));
        assert_eq!(history[2].content, "after");
    }
}
