//! Exec approvals answered from Discord (`approve_in_discord = true`): the
//! bridge posts the command, and a "yes"/"no" reply in that channel or a
//! ✅/❌ reaction on the prompt resolves it by id. The core takes the first
//! answer from any surface; a later one finds nothing parked.

use std::sync::Mutex;

use serenity::all::{ChannelId, MessageId};

use crate::protocol::ReviewDecision;

#[derive(Clone, Debug)]
struct Waiting {
    id: String,
    channel: ChannelId,
    /// The message that asked, once posted.
    prompt: Option<MessageId>,
}

/// Approvals of Discord sessions waiting for an answer, oldest first.
#[derive(Default)]
pub struct Pending {
    waiting: Mutex<Vec<Waiting>>,
}

impl Pending {
    pub fn insert(&self, id: &str, channel: ChannelId) {
        super::lock(&self.waiting).push(Waiting {
            id: id.to_string(),
            channel,
            prompt: None,
        });
    }

    pub fn set_prompt(&self, id: &str, prompt: MessageId) {
        if let Some(w) = super::lock(&self.waiting).iter_mut().find(|w| w.id == id) {
            w.prompt = Some(prompt);
        }
    }

    /// Forgets a request (decided anywhere); true when it was waiting here.
    pub fn remove(&self, id: &str) -> bool {
        let mut waiting = super::lock(&self.waiting);
        let before = waiting.len();
        waiting.retain(|w| w.id != id);
        waiting.len() != before
    }

    /// The oldest request waiting in `channel` that `answerable` accepts (a
    /// reply answers that one first).
    pub fn oldest_in_where(
        &self,
        channel: ChannelId,
        answerable: impl Fn(&str) -> bool,
    ) -> Option<String> {
        super::lock(&self.waiting)
            .iter()
            .find(|w| w.channel == channel && answerable(&w.id))
            .map(|w| w.id.clone())
    }

    /// The request whose prompt is `message`.
    pub fn by_prompt(&self, message: MessageId) -> Option<String> {
        super::lock(&self.waiting)
            .iter()
            .find(|w| w.prompt == Some(message))
            .map(|w| w.id.clone())
    }
}

/// A reply that answers an approval; anything else is an ordinary message.
pub fn parse_reply(text: &str) -> Option<ReviewDecision> {
    let word = text.trim().trim_end_matches(['.', '!']).to_lowercase();
    match word.as_str() {
        "y" | "yes" | "approve" | "approved" | "allow" | "ok" | "✅" | "👍" => {
            Some(ReviewDecision::ApprovedOnce)
        }
        "n" | "no" | "deny" | "denied" | "reject" | "❌" | "👎" => Some(ReviewDecision::Denied),
        _ => None,
    }
}

/// A reaction on the prompt that answers it.
pub fn parse_reaction(emoji: &str) -> Option<ReviewDecision> {
    match emoji {
        "✅" | "👍" | "✔️" => Some(ReviewDecision::ApprovedOnce),
        "❌" | "👎" | "🚫" => Some(ReviewDecision::Denied),
        _ => None,
    }
}

/// The prompt posted in Discord.
pub fn prompt_text(command: &str) -> String {
    let fence = if command.contains("```") {
        "~~~"
    } else {
        "```"
    };
    format!(
        "egirl wants to run:\n{fence}sh\n{command}\n{fence}\nReply **yes** or **no**, or react ✅ / ❌."
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replies_and_reactions_answer() {
        assert_eq!(parse_reply(" Yes! "), Some(ReviewDecision::ApprovedOnce));
        assert_eq!(parse_reply("no."), Some(ReviewDecision::Denied));
        assert_eq!(parse_reply("yes but first tell me why"), None);
        assert_eq!(parse_reaction("✅"), Some(ReviewDecision::ApprovedOnce));
        assert_eq!(parse_reaction("❌"), Some(ReviewDecision::Denied));
        assert_eq!(parse_reaction("🎉"), None);
    }

    #[test]
    fn oldest_request_in_a_channel_is_answered_first() {
        let p = Pending::default();
        let c = ChannelId::new(5);
        p.insert("a", c);
        p.insert("b", c);
        p.insert("x", ChannelId::new(6));
        p.set_prompt("b", MessageId::new(99));
        assert_eq!(p.oldest_in_where(c, |_| true).as_deref(), Some("a"));
        // Only one the replying user's agent asked for (here: not `a`).
        assert_eq!(p.oldest_in_where(c, |id| id != "a").as_deref(), Some("b"));
        assert_eq!(p.by_prompt(MessageId::new(99)).as_deref(), Some("b"));
        assert!(p.remove("a"));
        assert!(!p.remove("a"));
        assert_eq!(p.oldest_in_where(c, |_| true).as_deref(), Some("b"));
    }

    #[test]
    fn prompt_keeps_a_command_with_fences_intact() {
        assert!(prompt_text("echo '```'").contains("~~~sh\necho '```'\n~~~"));
    }
}
