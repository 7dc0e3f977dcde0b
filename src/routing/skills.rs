//! The skill override: a skill's `metadata.egirl.complexity` (local, remote,
//! auto) pins the turns that are about that skill.
//!
//! A message is about a skill when its request part (pasted material is
//! ignored) names the skill (`pdf-tools` matches "pdf tools", "PDF-Tools")
//! or contains one of the skill's trigger phrases, as whole words, ignoring
//! case and accents. Descriptions are not matched: they are sentences of
//! ordinary words and would pin unrelated turns. When several skills match,
//! the first in the order given wins. `auto` skills never decide.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use super::text;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SkillComplexity {
    Local,
    Remote,
    #[default]
    Auto,
}

impl SkillComplexity {
    /// `metadata.egirl.complexity` as written in a SKILL.md; anything else is `Auto`.
    pub fn parse(value: &str) -> SkillComplexity {
        match value.trim().to_ascii_lowercase().as_str() {
            "local" => SkillComplexity::Local,
            "remote" => SkillComplexity::Remote,
            _ => SkillComplexity::Auto,
        }
    }
}

/// What the router needs to know about one loaded skill.
#[derive(Clone, Debug, Default)]
pub struct SkillHint {
    pub name: String,
    /// Kept for the local-model classification prompt; never matched.
    pub description: String,
    /// Extra phrases that mean "this skill" (SKILL.md `triggers`).
    pub triggers: Vec<String>,
    pub complexity: SkillComplexity,
}

/// The skill a message is about.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SkillMatch {
    pub name: String,
    pub complexity: SkillComplexity,
}

/// First word → (the phrase's other words, skill position).
type PhraseIndex = HashMap<String, Vec<(Vec<String>, usize)>, BuildHasherDefault<Fnv>>;

/// The loaded skills, indexed once (when skills are loaded or change) so a
/// decision costs one hash lookup per word of the request.
#[derive(Clone, Debug, Default)]
pub struct SkillIndex {
    skills: Vec<SkillMatch>,
    by_first_word: PhraseIndex,
    /// Bit `len` of entry `b`: some phrase starts with a word of `len`
    /// bytes (63 for longer) beginning with byte `b`. Most words of a
    /// request fail this test and are never hashed.
    first_word_shapes: Vec<u64>,
    /// Phrases in scripts written without spaces (CJK): substring match.
    unspaced: Vec<(String, usize)>,
}

impl SkillIndex {
    pub fn new(hints: &[SkillHint]) -> SkillIndex {
        let mut index = SkillIndex::default();
        for hint in hints {
            if hint.complexity == SkillComplexity::Auto {
                continue;
            }
            let position = index.skills.len();
            index.skills.push(SkillMatch {
                name: hint.name.clone(),
                complexity: hint.complexity,
            });
            let name = hint.name.replace(['-', '_'], " ");
            for phrase in
                std::iter::once(name.as_str()).chain(hint.triggers.iter().map(|t| t.as_str()))
            {
                index.add_phrase(phrase, position);
            }
        }
        index
    }

    fn add_phrase(&mut self, phrase: &str, position: usize) {
        let normalized = text::normalize_phrase(phrase);
        if normalized.chars().count() < 3 {
            return;
        }
        if normalized.chars().any(text::is_cjk) {
            self.unspaced.push((normalized, position));
            return;
        }
        let mut words = normalized.split(' ').map(str::to_string);
        if let Some(first) = words.next()
            && let Some(&first_byte) = first.as_bytes().first()
        {
            if self.first_word_shapes.is_empty() {
                self.first_word_shapes = vec![0; 256];
            }
            self.first_word_shapes[usize::from(first_byte)] |= shape_bit(&first);
            self.by_first_word
                .entry(first)
                .or_default()
                .push((words.collect(), position));
        }
    }

    pub fn is_empty(&self) -> bool {
        self.skills.is_empty()
    }

    /// The first skill a whole message is about, read as the router reads
    /// it (the request part; pasted material is ignored).
    pub fn find_in_message(&self, message: &str) -> Option<&SkillMatch> {
        if self.skills.is_empty() {
            return None;
        }
        self.find(&text::prepare(message).norm)
    }

    /// The first skill (in the order given) the normalized request names.
    pub(crate) fn find(&self, normalized_request: &str) -> Option<&SkillMatch> {
        if self.skills.is_empty() {
            return None;
        }
        let mut best: Option<usize> = None;
        let bytes = normalized_request.as_bytes();
        let mut start = 0;
        while start < bytes.len() {
            let end = bytes[start..]
                .iter()
                .position(|&b| b == b' ')
                .map_or(bytes.len(), |k| start + k);
            let word = &normalized_request[start..end];
            start = end + 1;
            let Some(&first) = word.as_bytes().first() else {
                continue;
            };
            if self.first_word_shapes.is_empty()
                || self.first_word_shapes[usize::from(first)] & shape_bit(word) == 0
            {
                continue;
            }
            let Some(candidates) = self.by_first_word.get(word) else {
                continue;
            };
            let following = normalized_request
                .get(start.min(bytes.len())..)
                .unwrap_or("");
            for (rest, position) in candidates {
                let mut ahead = following.split(' ');
                let follows = rest.iter().all(|r| ahead.next() == Some(r.as_str()));
                if follows && best.is_none_or(|b| *position < b) {
                    best = Some(*position);
                }
            }
        }
        for (phrase, position) in &self.unspaced {
            if best.is_none_or(|b| *position < b) && normalized_request.contains(phrase.as_str()) {
                best = Some(*position);
            }
        }
        best.map(|position| &self.skills[position])
    }
}

fn shape_bit(word: &str) -> u64 {
    1 << word.len().min(63)
}

/// FNV-1a: the index is looked up once per word of every request, and
/// its keys are short words from local skill files (no flooding to fear),
/// so a fast simple hash beats the default SipHash.
#[derive(Clone, Copy, Debug)]
struct Fnv(u64);

impl Default for Fnv {
    fn default() -> Self {
        Fnv(0xcbf2_9ce4_8422_2325)
    }
}

impl Hasher for Fnv {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hint(name: &str, triggers: &[&str], complexity: SkillComplexity) -> SkillHint {
        SkillHint {
            name: name.into(),
            description: "does things with files and words".into(),
            triggers: triggers.iter().map(|t| t.to_string()).collect(),
            complexity,
        }
    }

    #[test]
    fn names_and_triggers_match_as_whole_words_and_auto_never_decides() {
        let index = SkillIndex::new(&[
            hint("weather", &[], SkillComplexity::Auto),
            hint("pdf-tools", &["merge pdfs"], SkillComplexity::Local),
            hint(
                "deep-research",
                &["literature review"],
                SkillComplexity::Remote,
            ),
        ]);
        let find = |text: &str| {
            index
                .find(&text::normalize_phrase(text))
                .map(|m| m.name.clone())
        };
        assert_eq!(find("use PDF-Tools on this"), Some("pdf-tools".into()));
        assert_eq!(find("can you merge pdfs for me"), Some("pdf-tools".into()));
        assert_eq!(
            find("do a literature review on RAG"),
            Some("deep-research".into())
        );
        assert_eq!(find("what's the weather"), None, "auto skills are skipped");
        assert_eq!(find("pdf"), None, "a part of a name is not the name");
        assert_eq!(
            find("words and files"),
            None,
            "descriptions are not matched"
        );
    }

    #[test]
    fn first_skill_in_order_wins() {
        let index = SkillIndex::new(&[
            hint("notes", &["journal"], SkillComplexity::Local),
            hint("journal", &[], SkillComplexity::Remote),
        ]);
        let found = index.find(&text::normalize_phrase("add this to my journal"));
        assert_eq!(found.map(|m| m.complexity), Some(SkillComplexity::Local));
    }
}
