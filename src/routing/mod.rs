//! The router: decides, before a turn runs, whether the local model or a
//! remote one answers it. Pure and synchronous; it never calls a model
//! (the optional local-model classification is a prompt and a parser the
//! core runs, see `classify`).
//!
//! Order of precedence in `Router::decide`:
//! 1. no remote provider available → local, reason "no remote provider
//!    configured (…)" (a forced `/remote` is ignored and the reason says
//!    so; a forced `/local` still reads "forced by /local");
//! 2. a forced target (`/local`, `/remote` for the next turn);
//! 3. `[routing] always_local` / `always_remote` rules (see `rules`);
//! 4. the turn's prompt over 0.8 of the local n_ctx → remote;
//! 5. a skill the message is about with `egirl.complexity` local or remote;
//! 6. the heuristics (`heuristics`); nothing recognizable → `[routing]
//!    default`. When they are unsure, `Decision::unsure` is set and the core
//!    may ask the local model (`Router::wants_classification`).
//!
//! Wiring, for the core (per turn; a sketch: `local.complete` stands for a
//! short non-streamed request to the local server, temperature 0):
//! ```text
//! let decision = router.decide(&RouteInput { message, prompt_tokens, n_ctx,
//!     forced: session.forced.take(), skills: &skill_index, remote_available });
//! let decision = if router.wants_classification(&decision) {
//!     let answer = timeout(router.classify_timeout(), local.complete(
//!         classify::classification_messages(message), classify::CLASSIFY_MAX_TOKENS)).await;
//!     router.apply_classification(decision, answer.ok().and_then(|r| classify::parse_classification(&r)))
//! } else { decision };
//! emit Routing { target, provider, model, reason: decision.reason, confidence: decision.confidence }
//! ```

mod category;
pub mod classify;
pub mod escalation;
mod frames;
mod heuristics;
mod lexicon;
mod matcher;
mod material;
mod rules;
mod skills;
mod text;

#[cfg(test)]
mod table_tests;

use std::sync::LazyLock;
use std::time::Duration;

pub use category::Category;
pub use rules::RuleError;
pub use skills::{SkillComplexity, SkillHint, SkillIndex, SkillMatch};

use crate::config::RoutingConfig;
use crate::protocol::Target;

/// The reason shown when no remote provider can take a turn.
pub const NO_REMOTE_REASON: &str = "no remote provider configured (a [remote.anthropic], [remote.openai] or [remote.azure] section with ANTHROPIC_API_KEY, OPENAI_API_KEY or AZURE_OPENAI_API_KEY set)";

/// Everything the router looks at for one turn.
#[derive(Clone, Copy, Debug)]
pub struct RouteInput<'a> {
    /// The user's message as typed (pasted material included).
    pub message: &'a str,
    /// Tokens the turn's prompt needs (system, tools, history, message);
    /// 0 when unknown.
    pub prompt_tokens: u64,
    /// The local server's context window; 0 when unknown.
    pub n_ctx: u64,
    /// `/local` or `/remote` typed before this turn.
    pub forced: Option<Target>,
    pub skills: &'a SkillIndex,
    /// Whether any remote provider has a key and a model.
    pub remote_available: bool,
}

impl<'a> RouteInput<'a> {
    /// A message with nothing else known: no skills, no context figures,
    /// a remote provider available.
    pub fn new(message: &'a str) -> Self {
        static NO_SKILLS: LazyLock<SkillIndex> = LazyLock::new(SkillIndex::default);
        RouteInput {
            message,
            prompt_tokens: 0,
            n_ctx: 0,
            forced: None,
            skills: &NO_SKILLS,
            remote_available: true,
        }
    }
}

/// What decided a turn's target.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DecidedBy {
    NoRemote,
    Forced,
    Rule,
    Context,
    Skill,
    Heuristics,
    /// The local model's answer to the classification prompt.
    Classifier,
    /// The session is pinned to a model (`/model`, `--model`); the core
    /// sets it, the router never does.
    Pinned,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Decision {
    pub target: Target,
    /// Short, for the routing pane: "code: write … function", "greeting:
    /// hey", "forced by /remote", "context 85% of n_ctx".
    pub reason: String,
    /// 0..1: how sure the router is of `target`.
    pub confidence: f64,
    /// What the heuristics made of the message, whatever decided.
    pub category: Category,
    /// The heuristics could not tell; the core may ask the local model.
    pub unsure: bool,
    pub decided_by: DecidedBy,
}

#[derive(Clone, Debug)]
pub struct Router {
    rules: rules::Rules,
    default: Target,
    classify: bool,
    classify_timeout: Duration,
}

impl Router {
    /// Checks the rules; an unknown task kind or an empty phrase is an error
    /// that names the list and the rule.
    pub fn new(config: &RoutingConfig) -> Result<Router, RuleError> {
        Ok(Router {
            rules: rules::Rules::parse(&config.always_local, &config.always_remote)?,
            default: config.default,
            classify: config.classify,
            classify_timeout: config.classify_timeout.0,
        })
    }

    /// Builds the shared lexicon (about 2 ms of CPU) now, so neither the
    /// first turn nor, when called from a thread of its own, the first
    /// frame waits for it.
    pub fn warm_up() {
        LazyLock::force(&lexicon::LEXICON);
    }

    pub fn decide(&self, input: &RouteInput) -> Decision {
        let prepared = text::prepare(input.message);
        let verdict = heuristics::classify(&prepared);
        let category = verdict.category;
        let settled = |target: Target, reason: String, confidence: f64, decided_by| Decision {
            target,
            reason,
            confidence,
            category,
            unsure: false,
            decided_by,
        };

        if !input.remote_available && input.forced != Some(Target::Local) {
            let reason = match input.forced {
                Some(Target::Remote) => format!("/remote ignored: {NO_REMOTE_REASON}"),
                _ => NO_REMOTE_REASON.to_string(),
            };
            return settled(Target::Local, reason, 1.0, DecidedBy::NoRemote);
        }
        if let Some(target) = input.forced {
            return settled(
                target,
                format!("forced by /{target}"),
                1.0,
                DecidedBy::Forced,
            );
        }
        if !self.rules.is_empty()
            && let Some(hit) = self.rules.find(input.message, category)
        {
            return settled(hit.target, hit.reason, 1.0, DecidedBy::Rule);
        }
        // Over 0.8 of the window the local model would lose most of the
        // conversation to trimming; a remote model holds it whole.
        if input.n_ctx > 0 && input.prompt_tokens.saturating_mul(5) > input.n_ctx.saturating_mul(4)
        {
            let percent = input.prompt_tokens.saturating_mul(100) / input.n_ctx;
            return settled(
                Target::Remote,
                format!("context {percent}% of n_ctx"),
                1.0,
                DecidedBy::Context,
            );
        }
        if let Some(skill) = input.skills.find(&prepared.norm) {
            let target = match skill.complexity {
                SkillComplexity::Remote => Target::Remote,
                _ => Target::Local,
            };
            return settled(
                target,
                format!("skill {}: {target}", skill.name),
                0.9,
                DecidedBy::Skill,
            );
        }

        let (target, reason) = match category.side() {
            Some(target) if verdict.evidence.is_empty() => (target, category.label().to_string()),
            Some(target) => (
                target,
                format!("{}: {}", category.label(), verdict.evidence),
            ),
            None => (self.default, format!("unclear, default {}", self.default)),
        };
        Decision {
            target,
            reason,
            confidence: verdict.confidence,
            category,
            unsure: verdict.unsure,
            decided_by: DecidedBy::Heuristics,
        }
    }

    /// Whether to ask the local model before settling (`[routing] classify`
    /// is on and the heuristics were unsure).
    pub fn wants_classification(&self, decision: &Decision) -> bool {
        self.classify && decision.unsure
    }

    /// How long the classification may take (`[routing] classify_timeout`).
    pub fn classify_timeout(&self) -> Duration {
        self.classify_timeout
    }

    /// Settles an unsure decision with the local model's answer (`None`:
    /// timed out or unreadable, the heuristics' guess stands).
    pub fn apply_classification(&self, decision: Decision, answer: Option<Target>) -> Decision {
        if !decision.unsure {
            return decision;
        }
        match answer {
            Some(target) => Decision {
                target,
                reason: format!(
                    "local model says {target} (heuristics unsure: {})",
                    decision.reason
                ),
                confidence: 0.6,
                unsure: false,
                decided_by: DecidedBy::Classifier,
                ..decision
            },
            None => Decision {
                reason: format!("{} (local model gave no answer)", decision.reason),
                unsure: false,
                ..decision
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Odd input never panics: every kind of character, quote, fence and
    /// marker, cut anywhere (a deterministic generator, no extra crates).
    #[test]
    fn decide_never_panics_on_odd_input() {
        const PIECES: &[&str] = &[
            "a",
            "Z",
            " ",
            "\n",
            "\n\n",
            "\t",
            "'",
            "\"",
            "`",
            "```",
            "```rust\n",
            "“",
            "”",
            "«",
            "»",
            "「",
            "」",
            "‘",
            "’",
            "¿",
            "?",
            "!",
            ".",
            ":",
            ",",
            "|",
            "#",
            "~/",
            "/",
            "é",
            "ß",
            "Ä",
            "ё",
            "Я",
            "写",
            "リ",
            "，",
            "。",
            "？",
            "😀",
            "\u{200b}",
            "\u{3000}",
            "C++",
            "tl;dr",
            "1.5",
            "$3",
            "100%",
            "http://x.y",
            "a.md",
            "Error:",
            "éé.BigError: x",
            "2024-01-01 00:00:01 ERROR",
            "diff --git",
            "From:",
            "remind me",
            "write a function",
            "save this",
            "don't",
            "c'est",
            "\u{a0}",
            "\r\n",
        ];
        let router = Router::new(&RoutingConfig::default()).expect("default config");
        let mut seed: u64 = 0x2545_f491_4f6c_dd1d;
        for _ in 0..3000 {
            let mut message = String::new();
            for _ in 0..(seed % 24) {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                message.push_str(PIECES[(seed % PIECES.len() as u64) as usize]);
            }
            let decision = router.decide(&RouteInput::new(&message));
            assert!((0.0..=1.0).contains(&decision.confidence), "{message:?}");
        }
        let empty = router.decide(&RouteInput::new(""));
        assert_eq!(empty.target, Target::Local);
        assert!(!empty.unsure, "nothing to classify");
    }
}
