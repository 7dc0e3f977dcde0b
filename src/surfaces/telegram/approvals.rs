//! Exec approvals as inline-keyboard buttons in the chat that asked: run
//! once / allow the prefix for the session / always / deny. A press
//! resolves the parked request by id; the core takes the first answer from
//! any surface, and when the decision comes (from here, the TUI or the
//! timeout) the prompt is edited to say who decided, without buttons.

use std::sync::Mutex;

use teloxide::types::{InlineKeyboardButton, InlineKeyboardMarkup, MessageId};

use super::html::escape;
use crate::protocol::ReviewDecision;

/// A request posted in a chat, waiting for an answer.
#[derive(Clone, Debug)]
pub struct Waiting {
    pub id: String,
    pub chat: i64,
    pub command: String,
    /// The message with the buttons, once posted.
    pub prompt: Option<MessageId>,
}

#[derive(Default)]
pub struct Pending {
    waiting: Mutex<Vec<Waiting>>,
}

impl Pending {
    pub fn insert(&self, id: &str, chat: i64, command: &str) {
        super::lock(&self.waiting).push(Waiting {
            id: id.to_string(),
            chat,
            command: command.to_string(),
            prompt: None,
        });
    }

    pub fn set_prompt(&self, id: &str, prompt: MessageId) {
        if let Some(w) = super::lock(&self.waiting).iter_mut().find(|w| w.id == id) {
            w.prompt = Some(prompt);
        }
    }

    /// Forgets a request (decided anywhere) and returns it.
    pub fn remove(&self, id: &str) -> Option<Waiting> {
        let mut waiting = super::lock(&self.waiting);
        let at = waiting.iter().position(|w| w.id == id)?;
        Some(waiting.remove(at))
    }

    /// Whether `id` waits for an answer on exactly this prompt (a press on
    /// any other message, or for a request decided already, counts for
    /// nothing).
    pub fn is_prompt(&self, id: &str, chat: i64, message: MessageId) -> bool {
        super::lock(&self.waiting)
            .iter()
            .any(|w| w.id == id && w.chat == chat && w.prompt == Some(message))
    }
}

/// A button's `callback_data`: `ap:<o|s|a|d>:<request id>` (under the
/// Bot API's 64 bytes for a uuid).
pub fn callback_data(decision: ReviewDecision, id: &str) -> String {
    let code = match decision {
        ReviewDecision::ApprovedForSession => 's',
        ReviewDecision::ApprovedAlways => 'a',
        ReviewDecision::Denied => 'd',
        // Outside the sandbox is never offered here (the TUI asks it).
        ReviewDecision::ApprovedOnce | ReviewDecision::ApprovedOutsideSandbox => 'o',
    };
    format!("ap:{code}:{id}")
}

/// The decision and request id a button press carries.
pub fn parse_callback(data: &str) -> Option<(ReviewDecision, &str)> {
    let rest = data.strip_prefix("ap:")?;
    let (code, id) = rest.split_once(':')?;
    let decision = match code {
        "o" => ReviewDecision::ApprovedOnce,
        "s" => ReviewDecision::ApprovedForSession,
        "a" => ReviewDecision::ApprovedAlways,
        "d" => ReviewDecision::Denied,
        _ => return None,
    };
    (!id.is_empty()).then_some((decision, id))
}

/// The buttons; the prefix ones only when the command can become a rule.
pub fn keyboard(id: &str, rule: Option<&str>) -> InlineKeyboardMarkup {
    let button = |label: String, d| InlineKeyboardButton::callback(label, callback_data(d, id));
    let mut rows = vec![vec![
        button("✅ Run once".into(), ReviewDecision::ApprovedOnce),
        button("❌ Deny".into(), ReviewDecision::Denied),
    ]];
    if let Some(rule) = rule {
        let rule: String = rule.chars().take(24).collect();
        rows.push(vec![
            button(
                format!("Allow `{rule}` this session"),
                ReviewDecision::ApprovedForSession,
            ),
            button(
                format!("Always allow `{rule}`"),
                ReviewDecision::ApprovedAlways,
            ),
        ]);
    }
    InlineKeyboardMarkup::new(rows)
}

/// The question (HTML).
pub fn prompt_html(command: &str, sandbox: Option<&str>) -> String {
    let mut text = format!(
        "egirl wants to run:\n<pre><code class=\"language-sh\">{}</code></pre>",
        escape(command)
    );
    if let Some(sandbox) = sandbox {
        text.push_str(&format!("\nsandbox: {}", escape(sandbox)));
    }
    text
}

/// The prompt once decided (HTML): the command, the outcome and who.
pub fn decided_html(command: &str, decision: ReviewDecision, by: &str) -> String {
    let outcome = match decision {
        ReviewDecision::ApprovedForSession => "✅ approved for this session",
        ReviewDecision::ApprovedAlways => "✅ approved always",
        ReviewDecision::ApprovedOnce | ReviewDecision::ApprovedOutsideSandbox => "✅ approved once",
        ReviewDecision::Denied => "❌ denied",
    };
    let who = match by {
        "timeout" => "no answer in time".to_string(),
        "interrupt" | "cancelled" => "the turn was stopped".to_string(),
        by => format!("by {by}"),
    };
    format!(
        "egirl wanted to run:\n<pre><code class=\"language-sh\">{}</code></pre>\n{} ({})",
        escape(command),
        outcome,
        escape(&who)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn callback_data_round_trips_within_64_bytes() {
        let id = uuid::Uuid::new_v4().to_string();
        for d in [
            ReviewDecision::ApprovedOnce,
            ReviewDecision::ApprovedForSession,
            ReviewDecision::ApprovedAlways,
            ReviewDecision::Denied,
        ] {
            let data = callback_data(d, &id);
            assert!(data.len() <= 64);
            assert_eq!(parse_callback(&data), Some((d, id.as_str())));
        }
        assert_eq!(parse_callback("ap:x:1"), None);
        assert_eq!(parse_callback("ap:o:"), None);
        assert_eq!(parse_callback("hello"), None);
    }

    #[test]
    fn a_press_counts_only_on_its_own_prompt() {
        let p = Pending::default();
        p.insert("a", 5, "ls");
        assert!(!p.is_prompt("a", 5, MessageId(9)), "not posted yet");
        p.set_prompt("a", MessageId(9));
        assert!(p.is_prompt("a", 5, MessageId(9)));
        assert!(!p.is_prompt("a", 6, MessageId(9)));
        assert!(!p.is_prompt("a", 5, MessageId(10)));
        assert_eq!(p.remove("a").map(|w| w.command), Some("ls".into()));
        assert!(!p.is_prompt("a", 5, MessageId(9)));
    }

    #[test]
    fn prompts_escape_the_command() {
        assert!(prompt_html("echo <b> & x", None).contains("echo &lt;b&gt; &amp; x"));
        let done = decided_html("ls", ReviewDecision::ApprovedForSession, "tui");
        assert!(
            done.ends_with("✅ approved for this session (by tui)"),
            "{done}"
        );
        assert!(
            decided_html("ls", ReviewDecision::Denied, "timeout").ends_with("(no answer in time)")
        );
    }
}
