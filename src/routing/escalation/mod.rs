//! When a local answer is not good enough: the checks run after the local
//! model replied (or a tool reported), and the user's own "use claude".
//! Each returns the trigger and a one-line reason for the `escalation`
//! event and `.egirl/escalation.jsonl`. Pure: the core decides what to do.
//!
//! The `on_*` functions are the turn's decisions: whether a check applies
//! at all where the turn stands (a remote model to go to, the turn not
//! already on it, `/local`, a heartbeat's acknowledgement), then the check.

use crate::protocol::Target;

/// Why a turn moves to a remote model.
#[derive(Clone, Debug, PartialEq)]
pub struct Trigger {
    /// `user`, `low_confidence`, `hedging`, `too_short`, `tool_suggested`,
    /// `tool_failed`.
    pub trigger: &'static str,
    pub reason: String,
}

impl Trigger {
    fn new(trigger: &'static str, reason: impl Into<String>) -> Self {
        Self {
            trigger,
            reason: reason.into(),
        }
    }
}

/// Where a turn stands when it asks whether to escalate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Standing {
    /// A remote provider has a key and has not failed in this turn.
    pub remote_available: bool,
    /// The turn's requests already go to the remote model (routed there,
    /// or escalated once already).
    pub on_remote: bool,
}

impl Standing {
    /// A local turn with somewhere to go: the only one a weak answer or a
    /// failing tool moves.
    fn can_escalate(self) -> bool {
        self.remote_available && !self.on_remote
    }
}

/// Before the first request: the user's own words send the turn remote,
/// unless there is no remote model or `/local` forced this turn local.
pub fn on_user_text(
    message: &str,
    remote_available: bool,
    forced: Option<Target>,
) -> Option<Trigger> {
    if !remote_available || forced == Some(Target::Local) {
        return None;
    }
    user_asked(message)
}

/// After a local reply without tool calls. A bare `HEARTBEAT_OK` is the
/// right answer to a quiet heartbeat (`heartbeat_ack`), not a too-short one.
pub fn on_local_reply(
    standing: Standing,
    heartbeat_ack: bool,
    reply: &LocalReply<'_>,
) -> Option<Trigger> {
    if !standing.can_escalate() || heartbeat_ack {
        return None;
    }
    after_reply(reply)
}

/// After a batch of tool results, over all the turn's outcomes so far.
pub fn on_tool_outcomes(standing: Standing, outcomes: &[ToolOutcome<'_>]) -> Option<Trigger> {
    if !standing.can_escalate() {
        return None;
    }
    after_tools(outcomes)
}

/// Phrases that mean "send this to the big model", in the languages the
/// router knows. Matched on word boundaries of the lowercased message.
const USER_ASKS: &[&str] = &[
    "use claude",
    "ask claude",
    "use gpt",
    "ask gpt",
    "use opus",
    "use sonnet",
    "use the big model",
    "use a bigger model",
    "use the remote model",
    "escalate",
    "usa claude",
    "pregúntale a claude",
    "utilise claude",
    "demande à claude",
    "frag claude",
    "benutze claude",
    "nutze claude",
    "use o claude",
    "pergunte ao claude",
];

/// The user asked for a remote model (`/escalate` is handled by the
/// surface and arrives as a command, not text).
pub fn user_asked(message: &str) -> Option<Trigger> {
    let lower = message.to_lowercase();
    USER_ASKS
        .iter()
        .find(|phrase| contains_words(&lower, phrase))
        .map(|phrase| Trigger::new("user", format!("the user asked: \"{phrase}\"")))
}

/// First-person hedges and refusals. Checked in prose only (code and
/// quoted output stripped), so `// I'm not sure this is needed` in a code
/// block does not count.
const HEDGES: &[&str] = &[
    "i'm not sure",
    "i am not sure",
    "i'm not certain",
    "i am not certain",
    "i'm not confident",
    "i don't know",
    "i do not know",
    "i can't help",
    "i cannot help",
    "i can't do",
    "i cannot do",
    "i'm unable to",
    "i am unable to",
    "i'm not able to",
    "i am not able to",
    "i don't have enough information",
    "i don't have access",
    "beyond my capabilities",
    "as an ai",
    "i might be wrong",
    "i may be wrong",
    "no estoy seguro",
    "no estoy segura",
    "no lo sé",
    "no puedo ayudar",
    "je ne suis pas sûr",
    "je ne suis pas certain",
    "je ne sais pas",
    "je ne peux pas",
    "ich bin mir nicht sicher",
    "ich weiß es nicht",
    "ich weiß nicht",
    "ich kann dir nicht helfen",
    "não tenho certeza",
    "não sei",
    "não posso ajudar",
];

/// Hedges deep inside a long, substantive answer are caveats, not a
/// failure: only this many leading characters of prose are checked once
/// the prose is longer than `HEDGE_WHOLE_BELOW`.
const HEDGE_HEAD: usize = 240;
const HEDGE_WHOLE_BELOW: usize = 600;

/// What the core knows about a finished local reply.
#[derive(Clone, Debug)]
pub struct LocalReply<'a> {
    /// The reply's visible text.
    pub answer: &'a str,
    /// Geometric-mean token probability, when the server sent logprobs.
    pub confidence: Option<f64>,
    /// `[routing] escalation_threshold`.
    pub threshold: f64,
    /// The request deserves more than a word (a question, a recall, an
    /// unclassified ask), as the router judged it.
    pub substantive: bool,
    /// Tools ran in this turn (a terse "done" after a tool is fine).
    pub used_tools: bool,
}

/// Checks a local reply, strongest signal first.
pub fn after_reply(reply: &LocalReply<'_>) -> Option<Trigger> {
    if let Some(c) = reply.confidence
        && c < reply.threshold
    {
        return Some(Trigger::new(
            "low_confidence",
            format!(
                "local confidence {c:.2} is below the threshold {:.2}",
                reply.threshold
            ),
        ));
    }
    let prose = strip_code(reply.answer);
    let lower = prose.to_lowercase();
    let checked = if lower.chars().count() > HEDGE_WHOLE_BELOW {
        lower.chars().take(HEDGE_HEAD).collect::<String>()
    } else {
        lower.clone()
    };
    if let Some(hedge) = HEDGES.iter().find(|h| contains_words(&checked, h)) {
        return Some(Trigger::new(
            "hedging",
            format!("the local answer hedged: \"{hedge}\""),
        ));
    }
    let answer = reply.answer.trim();
    if reply.substantive && !reply.used_tools && answer.chars().count() < 24 {
        return Some(Trigger::new(
            "too_short",
            format!(
                "a {}-character answer to a substantive request",
                answer.chars().count()
            ),
        ));
    }
    None
}

/// What a tool reported, as the core sees it.
#[derive(Clone, Debug)]
pub struct ToolOutcome<'a> {
    pub name: &'a str,
    pub success: bool,
    pub suggest_escalation: bool,
}

/// Checks the tool results of a turn so far: a tool that asks for a
/// stronger model, or the same tool failing again after the model saw the
/// first failure.
pub fn after_tools(outcomes: &[ToolOutcome<'_>]) -> Option<Trigger> {
    if let Some(t) = outcomes.iter().find(|t| t.suggest_escalation) {
        return Some(Trigger::new(
            "tool_suggested",
            format!("`{}` suggested a stronger model", t.name),
        ));
    }
    for (i, t) in outcomes.iter().enumerate() {
        if t.success {
            continue;
        }
        let failed_again = outcomes[i + 1..]
            .iter()
            .any(|later| later.name == t.name && !later.success);
        if failed_again {
            return Some(Trigger::new(
                "tool_failed",
                format!("`{}` failed again after the model retried it", t.name),
            ));
        }
    }
    None
}

/// The geometric mean of token probabilities: `exp(mean(logprob))`. One
/// very unsure token in a long answer moves it little; a reply the model
/// was guessing throughout scores low.
pub fn confidence_from_logprobs(logprobs: &[f64]) -> Option<f64> {
    let finite: Vec<f64> = logprobs.iter().copied().filter(|l| l.is_finite()).collect();
    if finite.is_empty() {
        return None;
    }
    let mean = finite.iter().sum::<f64>() / finite.len() as f64;
    Some(mean.exp().clamp(0.0, 1.0))
}

/// Prose of a markdown answer: fenced blocks, indented quotes of output
/// and inline code removed.
fn strip_code(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut in_fence = false;
    for line in text.lines() {
        let trimmed = line.trim_start();
        if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
            in_fence = !in_fence;
            continue;
        }
        if in_fence || trimmed.starts_with('>') {
            continue;
        }
        let mut in_tick = false;
        for c in line.chars() {
            if c == '`' {
                in_tick = !in_tick;
            } else if !in_tick {
                out.push(c);
            }
        }
        out.push('\n');
    }
    out
}

/// `phrase` occurs in `text` with no letter or digit touching either end.
fn contains_words(text: &str, phrase: &str) -> bool {
    const APOSTROPHES: [char; 2] = ['’', 'ʼ'];
    let normalized: String;
    let text = if text.contains(APOSTROPHES) {
        normalized = text.replace(APOSTROPHES, "'");
        &normalized
    } else {
        text
    };
    let mut from = 0;
    while let Some(i) = text[from..].find(phrase) {
        let start = from + i;
        let end = start + phrase.len();
        let before = text[..start].chars().next_back();
        let after = text[end..].chars().next();
        let boundary = |c: Option<char>| c.is_none_or(|c| !c.is_alphanumeric());
        if boundary(before) && boundary(after) {
            return true;
        }
        from = start + phrase.len().max(1);
    }
    false
}

#[cfg(test)]
mod tests;
