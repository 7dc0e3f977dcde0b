//! `[routing] always_local` / `always_remote`: what a rule string means and
//! how it is checked.
//!
//! A rule is either
//! - a task kind: a category name (`greeting`, `chat`, `quick_fact`,
//!   `memory_recall`, `note`, `file_task`, `shell_task`, `simple_edit`,
//!   `reminder`, `summarize`, `translate`, `code`, `code_review`,
//!   `debugging`, `reasoning`, `planning`, `analysis`, `long_form`) or one of
//!   the seed config's names (`memory_search`, `memory_get`,
//!   `acknowledgment`, `code_generation`, `complex_reasoning`, `tool_use`,
//!   ...): it matches when the heuristics put the message in that kind; or
//! - `text:<phrase>`: it matches when the message contains the phrase,
//!   ignoring case (a plain substring, not a pattern).
//!
//! Text rules are checked before kind rules (they are more specific), and
//! within each, `always_local` before `always_remote` (local first).

use thiserror::Error;

use super::Category;
use crate::protocol::Target;

#[derive(Debug, Error, PartialEq, Eq)]
pub enum RuleError {
    #[error(
        "[routing] {list}: unknown rule \"{rule}\" (expected a task kind such as \"greeting\", \"code\", \"memory_recall\", or \"text:<phrase>\"; kinds: {kinds})"
    )]
    UnknownKind {
        list: &'static str,
        rule: String,
        kinds: String,
    },
    #[error("[routing] {list}: rule \"{rule}\" has an empty phrase after \"text:\"")]
    EmptyPhrase { list: &'static str, rule: String },
    #[error(
        "[routing] task kind \"{kind}\" is in both always_local and always_remote; keep it in one"
    )]
    Conflict { kind: &'static str },
}

#[derive(Clone, Debug)]
enum Matcher {
    Kinds(&'static [Category]),
    Kind(Category),
    /// Lowercased phrase.
    Text(String),
}

#[derive(Clone, Debug)]
struct Rule {
    /// The rule as written, for the routing reason.
    written: String,
    matcher: Matcher,
    target: Target,
}

/// The parsed `always_local` and `always_remote` lists.
#[derive(Clone, Debug, Default)]
pub(crate) struct Rules {
    text_rules: Vec<Rule>,
    kind_rules: Vec<Rule>,
}

/// A rule that decided: which side and the reason to show.
pub(crate) struct RuleHit {
    pub target: Target,
    pub reason: String,
}

impl Rules {
    pub fn parse(always_local: &[String], always_remote: &[String]) -> Result<Self, RuleError> {
        let mut rules = Rules::default();
        for (list, target, written) in always_local
            .iter()
            .map(|r| ("always_local", Target::Local, r))
            .chain(
                always_remote
                    .iter()
                    .map(|r| ("always_remote", Target::Remote, r)),
            )
        {
            let matcher = parse_one(list, written)?;
            let rule = Rule {
                written: written.trim().to_string(),
                matcher,
                target,
            };
            match rule.matcher {
                Matcher::Text(_) => rules.text_rules.push(rule),
                _ => rules.kind_rules.push(rule),
            }
        }
        rules.check_conflicts()?;
        Ok(rules)
    }

    fn check_conflicts(&self) -> Result<(), RuleError> {
        for local in self.kind_rules.iter().filter(|r| r.target == Target::Local) {
            for remote in self
                .kind_rules
                .iter()
                .filter(|r| r.target == Target::Remote)
            {
                if let Some(kind) = local
                    .categories()
                    .iter()
                    .find(|c| remote.categories().contains(c))
                {
                    return Err(RuleError::Conflict {
                        kind: kind.as_str(),
                    });
                }
            }
        }
        Ok(())
    }

    pub fn is_empty(&self) -> bool {
        self.text_rules.is_empty() && self.kind_rules.is_empty()
    }

    /// The first rule that matches `message` (of kind `category`), in the
    /// documented order.
    pub fn find(&self, message: &str, category: Category) -> Option<RuleHit> {
        let hit = |rule: &Rule| {
            let list = match rule.target {
                Target::Local => "always_local",
                Target::Remote => "always_remote",
            };
            RuleHit {
                target: rule.target,
                reason: format!("{list} rule \"{}\"", rule.written),
            }
        };
        if !self.text_rules.is_empty() {
            let lowered = message.to_lowercase();
            let text_match = by_side(&self.text_rules).find(|rule| match &rule.matcher {
                Matcher::Text(phrase) => lowered.contains(phrase.as_str()),
                _ => false,
            });
            if let Some(rule) = text_match {
                return Some(hit(rule));
            }
        }
        by_side(&self.kind_rules)
            .find(|rule| rule.categories().contains(&category))
            .map(hit)
    }
}

impl Rule {
    fn categories(&self) -> &[Category] {
        match &self.matcher {
            Matcher::Kinds(kinds) => kinds,
            Matcher::Kind(kind) => std::slice::from_ref(kind),
            Matcher::Text(_) => &[],
        }
    }
}

/// Local rules first, then remote, each in the order written.
fn by_side(rules: &[Rule]) -> impl Iterator<Item = &Rule> {
    rules
        .iter()
        .filter(|r| r.target == Target::Local)
        .chain(rules.iter().filter(|r| r.target == Target::Remote))
}

fn parse_one(list: &'static str, written: &str) -> Result<Matcher, RuleError> {
    let trimmed = written.trim();
    if let Some(phrase) = trimmed.strip_prefix("text:") {
        let phrase = phrase.trim();
        if phrase.is_empty() {
            return Err(RuleError::EmptyPhrase {
                list,
                rule: written.to_string(),
            });
        }
        return Ok(Matcher::Text(phrase.to_lowercase()));
    }
    let name = trimmed.to_lowercase().replace(['-', ' '], "_");
    if let Some(category) = Category::from_name(&name).filter(|c| *c != Category::Unknown) {
        return Ok(Matcher::Kind(category));
    }
    if let Some(kinds) = Category::from_alias(&name) {
        return Ok(Matcher::Kinds(kinds));
    }
    Err(RuleError::UnknownKind {
        list,
        rule: written.to_string(),
        kinds: Category::ALL
            .iter()
            .filter(|c| **c != Category::Unknown)
            .map(|c| c.as_str())
            .collect::<Vec<_>>()
            .join(", "),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn kinds_aliases_and_text_rules_parse() {
        let rules = Rules::parse(
            &strings(&["greeting", "memory_search", "text:Grocery"]),
            &strings(&["code_generation", "Long-Form"]),
        )
        .expect("valid rules");
        assert_eq!(rules.text_rules.len(), 1);
        assert_eq!(rules.kind_rules.len(), 4);
        let hit = rules
            .find("add milk to my GROCERY list", Category::Code)
            .expect("text rule");
        assert_eq!(hit.target, Target::Local);
        assert_eq!(hit.reason, "always_local rule \"text:Grocery\"");
        let hit = rules.find("anything", Category::LongForm).expect("kind");
        assert_eq!(hit.target, Target::Remote);
        assert!(rules.find("anything", Category::Chat).is_none());
    }

    #[test]
    fn unknown_kind_empty_phrase_and_conflicts_are_errors() {
        let err = Rules::parse(&strings(&["greetings"]), &[]).unwrap_err();
        assert!(
            err.to_string().contains("unknown rule \"greetings\""),
            "{err}"
        );
        assert!(err.to_string().contains("always_local"), "{err}");
        let err = Rules::parse(&[], &strings(&["text:  "])).unwrap_err();
        assert!(matches!(err, RuleError::EmptyPhrase { .. }), "{err}");
        let err = Rules::parse(&strings(&["code"]), &strings(&["code_generation"])).unwrap_err();
        assert_eq!(err, RuleError::Conflict { kind: "code" });
    }
}
