//! When a local answer is not good enough: the checks run after the local
//! model replied (or a tool reported), and the user's own "use claude".
//! Each returns the trigger and a one-line reason for the `escalation`
//! event and `.egirl/escalation.jsonl`. Pure: the core decides what to do.

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
mod tests {
    use super::*;

    fn reply(answer: &str) -> LocalReply<'_> {
        LocalReply {
            answer,
            confidence: None,
            threshold: 0.4,
            substantive: false,
            used_tools: false,
        }
    }

    #[test]
    fn the_user_asking_escalates_in_several_languages() {
        for text in [
            "hmm, use claude for this one",
            "Escalate please",
            "ok ask GPT then",
            "usa claude para esto",
            "demande à claude stp",
            "frag Claude mal",
        ] {
            let t = user_asked(text).unwrap_or_else(|| panic!("{text}"));
            assert_eq!(t.trigger, "user", "{text}");
        }
        // Words that merely contain the phrase do not count.
        assert_eq!(user_asked("the escalated ticket is closed"), None);
        assert_eq!(user_asked("what does claude's pricing look like?"), None);
    }

    #[test]
    fn low_confidence_comes_first_and_names_the_numbers() {
        let mut r = reply("Canberra.");
        r.confidence = Some(0.31);
        let t = after_reply(&r).expect("escalates");
        assert_eq!(t.trigger, "low_confidence");
        assert_eq!(
            t.reason,
            "local confidence 0.31 is below the threshold 0.40"
        );
        r.confidence = Some(0.9);
        assert_eq!(after_reply(&r), None);
    }

    #[test]
    fn hedging_counts_in_prose_not_in_code() {
        let t = after_reply(&reply("I'm not sure, but it might be Sydney.")).expect("hedge");
        assert_eq!(t.trigger, "hedging");
        assert!(t.reason.contains("i'm not sure"), "{}", t.reason);
        // Typographic apostrophes too.
        assert!(after_reply(&reply("I’m not sure it is Canberra.")).is_some());
        // In another language.
        assert!(after_reply(&reply("No estoy seguro, quizá Sídney.")).is_some());
        // Inside code or quoted output it is not the model hedging.
        let code = "The capital is Canberra.\n```python\n# I'm not sure this import is needed\nimport os\n```";
        assert_eq!(after_reply(&reply(code)), None);
        assert_eq!(
            after_reply(&reply("It is `i don't know` in the log.")),
            None
        );
        // A caveat deep in a long answer is not a failed answer.
        let long = format!(
            "{}\n\nThat said, I might be wrong about the 1911 date.",
            "Canberra was chosen as a compromise between Sydney and Melbourne. ".repeat(12)
        );
        assert_eq!(after_reply(&reply(&long)), None);
        // "can't" about the world, not about itself, is fine.
        assert_eq!(
            after_reply(&reply("You can't fly there directly; it is Canberra.")),
            None
        );
    }

    #[test]
    fn a_terse_answer_escalates_only_a_substantive_ask_without_tools() {
        let substantive = |answer| LocalReply {
            substantive: true,
            ..reply(answer)
        };
        let t = after_reply(&substantive("Yes.")).expect("too short");
        assert_eq!(t.trigger, "too_short");
        assert_eq!(t.reason, "a 4-character answer to a substantive request");
        assert_eq!(after_reply(&reply("Hi!")), None);
        let mut after_tool = substantive("Done.");
        after_tool.used_tools = true;
        assert_eq!(after_reply(&after_tool), None);
        assert_eq!(
            after_reply(&substantive("It was settled in 1913, as Canberra.")),
            None
        );
    }

    #[test]
    fn tools_that_ask_or_fail_twice_escalate() {
        let ok = |name| ToolOutcome {
            name,
            success: true,
            suggest_escalation: false,
        };
        let failed = |name| ToolOutcome {
            name,
            success: false,
            suggest_escalation: false,
        };
        let suggests = ToolOutcome {
            name: "edit_file",
            success: false,
            suggest_escalation: true,
        };
        assert_eq!(after_tools(&[ok("glob"), ok("read_file")]), None);
        // One failure the model may still recover from.
        assert_eq!(after_tools(&[failed("exec"), ok("read_file")]), None);
        let t = after_tools(&[failed("exec"), ok("read_file"), failed("exec")]).expect("again");
        assert_eq!(t.trigger, "tool_failed");
        assert_eq!(t.reason, "`exec` failed again after the model retried it");
        let t = after_tools(&[ok("read_file"), suggests]).expect("suggested");
        assert_eq!(t.trigger, "tool_suggested");
    }

    #[test]
    fn confidence_is_the_geometric_mean_probability() {
        assert_eq!(confidence_from_logprobs(&[]), None);
        let c = confidence_from_logprobs(&[0.0, 0.0]).expect("some");
        assert!((c - 1.0).abs() < 1e-12);
        let half = 0.5f64.ln();
        let c = confidence_from_logprobs(&[half, half, f64::NEG_INFINITY]).expect("some");
        assert!((c - 0.5).abs() < 1e-12, "{c}");
    }
}
