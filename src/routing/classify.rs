//! Asking the local model "local or remote?" when the heuristics are
//! unsure: the prompt (a few examples, one-word answers) and a tolerant
//! reader of the answer. The core sends the prompt with
//! `CLASSIFY_MAX_TOKENS`, temperature 0, under `[routing] classify_timeout`,
//! and passes what it got (or `None`) to `Router::apply_classification`.

use crate::chat::ChatMessage;
use crate::protocol::Target;

/// Enough for one word (and a stray space or period).
pub const CLASSIFY_MAX_TOKENS: u64 = 4;

/// How much of a message the local model is shown: the request and the
/// start of any paste decide; the rest only costs prompt time.
const MAX_MESSAGE_CHARS: usize = 1200;

const SYSTEM: &str = "You route messages for a personal assistant. A small local model \
answers simple things; a large remote model handles hard ones.\n\
local: greetings, thanks, chit-chat, quick facts, recalling what the user said before, \
notes, reminders and scheduling, simple file and shell tasks, small edits, \
summarizing or translating a pasted text.\n\
remote: writing, reviewing or debugging code, multi-step reasoning and puzzles, \
planning, analysis and comparisons, long writing (letters, essays, posts, docs, stories).\n\
Judge what the user asks, not the words of pasted text. Answer with one word: local or remote.";

/// Example messages, written for this prompt (none is from the routing
/// table), with the answer a careful user would give.
const EXAMPLES: &[(&str, &str)] = &[
    ("hey! how was your weekend?", "local"),
    (
        "write a Go function that merges two sorted slices without allocating",
        "remote",
    ),
    (
        "remind me on Thursday at 8 to renew the parking permit",
        "local",
    ),
    (
        "summarize this for me\n\nHi team, the office will be closed on Monday for maintenance. Please take your laptops home on Friday.",
        "local",
    ),
    (
        "why does this panic?\n\nthread 'main' panicked at src/lib.rs:10:5: index out of bounds",
        "remote",
    ),
    ("what's the boiling point of water at 2000 m?", "local"),
    (
        "plan a two-week trip through Portugal on a tight budget, with train times",
        "remote",
    ),
    ("rename notes.txt to notes-old.txt", "local"),
];

/// The messages to send to the local model.
pub fn classification_messages(message: &str) -> Vec<ChatMessage> {
    let mut messages = Vec::with_capacity(2 + EXAMPLES.len() * 2);
    messages.push(ChatMessage::system(SYSTEM));
    for (example, answer) in EXAMPLES {
        messages.push(ChatMessage::user(format!("Message:\n{example}")));
        messages.push(ChatMessage::assistant(*answer));
    }
    messages.push(ChatMessage::user(format!("Message:\n{}", clip(message))));
    messages
}

fn clip(message: &str) -> String {
    let total = message.chars().count();
    if total <= MAX_MESSAGE_CHARS {
        return message.to_string();
    }
    let kept: String = message.chars().take(MAX_MESSAGE_CHARS).collect();
    format!(
        "{kept}\n[... {} more characters]",
        total - MAX_MESSAGE_CHARS
    )
}

/// Reads the model's answer: the first of "local" / "remote" (or "escalate")
/// as a word, ignoring case, punctuation, markdown and a `<think>` block.
/// `None` when neither appears.
pub fn parse_classification(reply: &str) -> Option<Target> {
    let visible = strip_think(reply).to_lowercase();
    visible
        .split(|c: char| !c.is_alphanumeric())
        .find_map(|word| match word {
            "local" => Some(Target::Local),
            "remote" | "escalate" => Some(Target::Remote),
            _ => None,
        })
}

/// The text outside `<think>…</think>`; an unclosed block hides the rest.
fn strip_think(reply: &str) -> String {
    let mut out = String::new();
    let mut rest = reply;
    while let Some(start) = rest.find("<think>") {
        out.push_str(&rest[..start]);
        match rest[start..].find("</think>") {
            Some(end) => rest = &rest[start + end + "</think>".len()..],
            None => return out,
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::Role;

    #[test]
    fn answers_are_read_tolerantly() {
        assert_eq!(parse_classification("remote"), Some(Target::Remote));
        assert_eq!(parse_classification(" Local."), Some(Target::Local));
        assert_eq!(parse_classification("**REMOTE**"), Some(Target::Remote));
        assert_eq!(parse_classification("Answer: local"), Some(Target::Local));
        assert_eq!(
            parse_classification("<think>local seems fine... no</think>remote"),
            Some(Target::Remote)
        );
        assert_eq!(parse_classification("escalate"), Some(Target::Remote));
        assert_eq!(parse_classification("remotely"), None);
        assert_eq!(parse_classification("<think>local"), None);
        assert_eq!(parse_classification(""), None);
        assert_eq!(parse_classification("I am not sure"), None);
    }

    #[test]
    fn prompt_is_few_shot_and_ends_with_the_clipped_message() {
        let long = "x".repeat(5000);
        let messages = classification_messages(&long);
        assert_eq!(messages[0].role, Role::System);
        assert_eq!(messages.len(), 2 + EXAMPLES.len() * 2);
        for pair in messages[1..messages.len() - 1].chunks(2) {
            assert_eq!(pair[0].role, Role::User);
            assert_eq!(pair[1].role, Role::Assistant);
            assert!(pair[1].content == "local" || pair[1].content == "remote");
        }
        let last = &messages[messages.len() - 1];
        assert!(last.content.ends_with("[... 3800 more characters]"));
        assert!(last.content.chars().count() < 1300);
    }
}
