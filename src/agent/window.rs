//! Fitting a conversation into the context window: drop the oldest whole
//! turns (a user message with everything that answered it), so a tool call
//! is never separated from its result; the system prompt and the current
//! turn always stay.

use crate::chat::ChatMessage;
use crate::protocol::Role;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fit {
    /// History from this index on is sent.
    pub first_kept: usize,
    /// Messages left out.
    pub dropped: usize,
    /// Estimated prompt tokens of what is sent.
    pub prompt_tokens: u64,
}

#[derive(Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "this conversation needs {needed} prompt tokens even with older turns left out, but the window allows {budget}"
)]
pub struct DoesNotFit {
    pub needed: u64,
    pub budget: u64,
}

/// Where each turn starts: every user message.
pub fn turn_starts(history: &[ChatMessage]) -> Vec<usize> {
    history
        .iter()
        .enumerate()
        .filter(|(_, m)| m.role == Role::User)
        .map(|(i, _)| i)
        .collect()
}

/// `tokens[i]` is the cost of `history[i]`; `fixed` is the system prompt and
/// tool list; `current` is the index of the current turn's user message,
/// which is never dropped. `extra_drop` asks for that many more turns to go
/// (used after the server still reported an overflow).
pub fn fit(
    history: &[ChatMessage],
    tokens: &[u64],
    fixed: u64,
    budget: u64,
    current: usize,
    extra_drop: usize,
) -> Result<Fit, DoesNotFit> {
    let total: u64 = fixed + tokens.iter().sum::<u64>();
    let starts: Vec<usize> = turn_starts(history)
        .into_iter()
        .filter(|&s| s <= current)
        .collect();
    let mut kept_from = 0;
    let mut sent = total;
    let mut forced = extra_drop;
    // Candidate cut points: the start of each later turn, oldest first.
    for &cut in starts.iter().skip(1) {
        if sent <= budget && forced == 0 {
            break;
        }
        sent -= tokens[kept_from..cut].iter().sum::<u64>();
        kept_from = cut;
        forced = forced.saturating_sub(1);
    }
    // Orphaned leading messages (history that starts mid-turn) cannot be
    // sent without their user message either.
    if kept_from == 0 && !starts.is_empty() && starts[0] > 0 {
        sent -= tokens[..starts[0]].iter().sum::<u64>();
        kept_from = starts[0];
    }
    if sent > budget {
        return Err(DoesNotFit {
            needed: sent,
            budget,
        });
    }
    Ok(Fit {
        first_kept: kept_from,
        dropped: kept_from,
        prompt_tokens: sent,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chat::ToolCall;

    fn conversation() -> Vec<ChatMessage> {
        let call = ToolCall {
            id: "call_0".into(),
            name: "read_file".into(),
            arguments: serde_json::json!({"path": "a"}),
            arguments_error: None,
        };
        let mut asked = ChatMessage::assistant("");
        asked.tool_calls = vec![call.clone()];
        vec![
            ChatMessage::user("one"),             // 0
            asked,                                // 1
            ChatMessage::tool_result(&call, "x"), // 2
            ChatMessage::assistant("done"),       // 3
            ChatMessage::user("two"),             // 4
            ChatMessage::assistant("ok"),         // 5
            ChatMessage::user("three"),           // 6
        ]
    }

    #[test]
    fn keeps_everything_when_it_fits() {
        let h = conversation();
        let f = fit(&h, &[10; 7], 100, 1000, 6, 0).unwrap();
        assert_eq!(f.dropped, 0);
        assert_eq!(f.prompt_tokens, 170);
    }

    #[test]
    fn drops_whole_oldest_turns_never_splitting_a_tool_call() {
        let h = conversation();
        // 100 + 7*10 = 170 > 150: the first turn (4 messages) must go whole.
        let f = fit(&h, &[10; 7], 100, 150, 6, 0).unwrap();
        assert_eq!(f.first_kept, 4);
        assert_eq!(f.prompt_tokens, 130);
    }

    #[test]
    fn never_drops_the_current_turn() {
        let h = conversation();
        let e = fit(&h, &[10; 7], 100, 105, 6, 0).unwrap_err();
        assert_eq!(e.needed, 110);
    }

    #[test]
    fn extra_drop_after_a_server_overflow() {
        let h = conversation();
        let f = fit(&h, &[10; 7], 100, 1000, 6, 1).unwrap();
        assert_eq!(f.first_kept, 4);
        let f = fit(&h, &[10; 7], 100, 1000, 6, 5).unwrap();
        assert_eq!(f.first_kept, 6);
    }
}
