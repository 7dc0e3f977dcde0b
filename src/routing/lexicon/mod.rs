//! The cue words the classifier looks for, in every language of the
//! routing table (English, Spanish, French, German, Portuguese, Russian,
//! Japanese, Chinese), compiled once into one trie.
//!
//! Pattern syntax: lowercase words as a user types them (accents are
//! folded, so "recuérdame" also matches "recuerdame"); a trailing `*`
//! matches any word starting so ("remind*" → "reminders"); patterns in
//! scripts written without spaces match anywhere. The longest pattern at a
//! position wins, which is how exceptions are written: "who wrote" is a
//! quick-fact cue that hides the verb "wrote", "planning to" a neutral one
//! that hides "plan".

mod local;
mod remote;

use std::sync::LazyLock;

use super::Category;
use super::matcher::{Hit, Trie};
use super::text;

/// Verbs whose meaning depends on their object: "write a function" is
/// code, "write a cover letter" long-form, "write this to notes.md" a file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Verb {
    /// write, create, build, implement, draft, escribe, напиши, 写, 実装…
    Make,
    /// refactor, rewrite, port this, optimize.
    Rewrite,
    Fix,
    /// review, look over, what do you think of.
    Review,
    Explain,
    /// show, open, read, list, find.
    Show,
    Save,
    /// rename, move, copy, delete.
    FileOp,
    Add,
    /// change, replace, set, edit.
    Change,
    Translate,
}

/// What a verb can act on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Object {
    /// function, script, parser, API, regex, query…
    Code,
    Test,
    /// letter, essay, post, story, README, documentation.
    Doc,
    /// email, reply: long-form only when asked for at length.
    Email,
    /// haiku, a quick text, a playlist.
    ShortText,
    /// file, folder, directory.
    File,
    /// A path in the request (`#` in the normalized text).
    Path,
    /// Quoted text (`"`): content, such as a line to add.
    Quoted,
    /// Inline code (`` ` ``).
    InlineCode,
    /// plan, itinerary, roadmap, schedule.
    Plan,
    /// reminder, alarm, calendar.
    Reminder,
    /// bug, error, crash.
    Bug,
    /// typo, title, variable: the small things edits change.
    EditTarget,
    /// A programming language (also a cue of its own).
    Lang,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Cue {
    /// Names a task outright ("pros and cons", "what did I say").
    Intent(Category, f32),
    /// Names a task whose content is the rest of the sentence ("remind me
    /// to write the blog post", "make a note: the analysis meeting…"):
    /// later cues in the sentence, and pasted material, count for little.
    Lead(Category, f32),
    /// A lead only in the first words of its sentence ("run cargo test");
    /// elsewhere an intent.
    LeadAtStart(Category, f32),
    /// A lead only when material was pasted ("summarize this"); without
    /// it, a weak intent ("summarize the tradeoffs of Raft vs Paxos").
    LeadWithMaterial(Category, f32),
    Verb(Verb),
    Object(Object),
    /// Weighs by how short the message is: "hey" is a greeting, "hey,
    /// quick one: can you write…" is not.
    Greeting,
    /// Thanks and reactions ("ok", "perfect"), weighed like greetings.
    Thanks,
    /// Technical vocabulary: supports a code reading, never makes one.
    Tech,
    /// Asks for length or depth ("detailed", "1000-word").
    Depth,
    /// "if", "suppose": with several numbers, a word problem.
    Conditional,
    /// "words" after a number ("a 1000-word essay").
    WordsUnit,
    /// Hides a shorter pattern ("planning to", "go ahead", "zip code").
    Neutral,
}

pub(crate) struct Group {
    pub cue: Cue,
    pub patterns: &'static [&'static str],
}

/// One pattern of the lexicon: as written (shown in routing reasons) and its cue.
pub(crate) struct Entry {
    pub pattern: &'static str,
    pub cue: Cue,
}

/// Word endings that carry a cue in languages that compound words
/// ("Trainingsplan", "Python-Skript") and in error names ("TypeError").
const SUFFIXES: &[(&str, Cue)] = &[
    ("plan", Cue::Object(Object::Plan)),
    ("skript", Cue::Object(Object::Code)),
    ("funktion", Cue::Object(Object::Code)),
    ("programm", Cue::Object(Object::Code)),
    ("error", Cue::Object(Object::Bug)),
    ("exception", Cue::Object(Object::Bug)),
    ("dokumentation", Cue::Object(Object::Doc)),
];

pub(crate) struct Lexicon {
    trie: Trie,
    pub entries: Vec<Entry>,
    /// Entry index of each suffix in `SUFFIXES`.
    suffix_entries: Vec<u16>,
}

pub(crate) static LEXICON: LazyLock<Lexicon> = LazyLock::new(Lexicon::build);

impl Lexicon {
    fn build() -> Lexicon {
        let mut lexicon = Lexicon {
            trie: Trie::new(),
            entries: Vec::new(),
            suffix_entries: Vec::new(),
        };
        for group in local::GROUPS.iter().chain(remote::GROUPS) {
            for pattern in group.patterns {
                lexicon.add(pattern, group.cue);
            }
        }
        for (suffix, cue) in SUFFIXES {
            let id = lexicon.entries.len() as u16;
            lexicon.entries.push(Entry {
                pattern: suffix,
                cue: *cue,
            });
            lexicon.suffix_entries.push(id);
        }
        lexicon.trie.freeze();
        lexicon
    }

    fn add(&mut self, pattern: &'static str, cue: Cue) {
        let id = self.entries.len() as u16;
        self.entries.push(Entry { pattern, cue });
        let (body, prefix) = match pattern.strip_suffix('*') {
            Some(body) => (body, true),
            None => (pattern, false),
        };
        // Markers (`#`, `"`, `` ` ``) are inserted as they are.
        let normalized = if body.chars().all(|c| matches!(c, '#' | '"' | '`')) {
            body.to_string()
        } else {
            text::normalize_phrase(body)
        };
        self.trie.insert(&normalized, prefix, id);
    }

    pub fn cue(&self, hit: &Hit) -> Cue {
        self.entries[hit.entry as usize].cue
    }

    /// The pattern as written, without its `*`.
    pub fn display(&self, entry: u16) -> &'static str {
        self.entries[entry as usize].pattern.trim_end_matches('*')
    }

    /// Every cue in a normalized request.
    pub fn scan(&self, norm: &str, hits: &mut Vec<Hit>) {
        // A suffix cue needs at least three letters before it.
        const MIN_WORD: usize = 7;
        self.trie.scan(norm, hits, MIN_WORD, |word| {
            SUFFIXES
                .iter()
                .zip(&self.suffix_entries)
                .find(|((suffix, _), _)| word.len() >= suffix.len() + 3 && word.ends_with(suffix))
                .map(|(_, id)| *id)
        });
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;

    /// Two groups claiming the same pattern would silently shadow one another.
    #[test]
    fn no_pattern_is_listed_twice() {
        let mut seen: HashMap<(String, bool), &str> = HashMap::new();
        let mut duplicates = Vec::new();
        for group in local::GROUPS.iter().chain(remote::GROUPS) {
            for pattern in group.patterns {
                let prefix = pattern.ends_with('*');
                let body = pattern.trim_end_matches('*');
                let normalized = if body.chars().all(|c| matches!(c, '#' | '"' | '`')) {
                    body.to_string()
                } else {
                    text::normalize_phrase(body)
                };
                let key = (normalized, prefix);
                if let Some(first) = seen.insert(key, pattern) {
                    duplicates.push(format!("{first} / {pattern}"));
                }
            }
        }
        assert!(duplicates.is_empty(), "duplicates: {duplicates:?}");
    }

    #[test]
    fn every_pattern_normalizes_to_itself_shape() {
        for entry in &LEXICON.entries {
            let body = entry.pattern.trim_end_matches('*');
            assert!(!body.is_empty());
            assert!(!body.contains('|'), "{body}");
        }
    }

    #[test]
    fn suffixes_catch_compounds_and_error_names() {
        let mut hits = Vec::new();
        LEXICON.scan("erstelle einen trainingsplan | typeerror", &mut hits);
        let cues: Vec<Cue> = hits.iter().map(|h| LEXICON.cue(h)).collect();
        assert!(cues.contains(&Cue::Object(Object::Plan)), "{cues:?}");
        assert!(cues.contains(&Cue::Object(Object::Bug)), "{cues:?}");
        assert!(cues.contains(&Cue::Verb(Verb::Make)), "{cues:?}");
    }
}
