//! Secret values out of everything egirl shows, stores or sends.
//!
//! One [`Redactor`] is built at start-up from what egirl knows to be
//! secret: its own keys (`SECRET_VARS`), every variable of the `.env`
//! files it loaded (their values as the files and the environment hold
//! them), and every variable whose name ends in `_KEY`, `_TOKEN`,
//! `_SECRET` or `_PASSWORD`, and the secrets `[mcp.servers]` passes on
//! (`mcp::entries`). Any of those values in a text becomes
//! `[redacted:NAME]`. The core redacts at the sources (tool outputs, model
//! replies, what it stores and sends), the event bus and the log files
//! once more.
//!
//! Where the core applies it is `apply`: a model's reply before it is
//! stored, shown or acted on, a message before it reaches the transcript
//! and the history, and every event on its way out (the bus guard).
//!
//! All values are found in one pass (Aho-Corasick, leftmost-longest). With
//! no secrets, redacting is a length check.

mod apply;
mod mcp;

pub use apply::{event, event_guard, message, response};

use std::borrow::Cow;
use std::path::PathBuf;

use aho_corasick::{AhoCorasick, MatchKind};

use crate::config::McpConfig;
use crate::config::secrets::{SECRET_VARS, dotenv_entries, is_secret_name};

/// Values shorter than this are not redacted: `DEBUG_KEY=1` or
/// `PORT_TOKEN=on` would turn every `1` or `on` of ordinary text into a
/// marker, and a value that short is no credential anyway.
pub const MIN_SECRET_LEN: usize = 8;

#[derive(Default)]
pub struct Redactor {
    /// Pattern `i` of `matcher` is `values[i]`, known as `names[i]`.
    names: Vec<String>,
    values: Vec<String>,
    /// None when there is nothing to redact.
    matcher: Option<AhoCorasick>,
    longest: usize,
}

impl std::fmt::Debug for Redactor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The names only: the values are what this type exists to hide.
        f.debug_struct("Redactor")
            .field("names", &self.names)
            .finish()
    }
}

impl Redactor {
    /// From `(name, value)` pairs, first name first: a value known under
    /// two names is shown as the first. Values are trimmed; short ones
    /// are left out (see `MIN_SECRET_LEN`).
    pub fn new(entries: impl IntoIterator<Item = (String, String)>) -> Self {
        let mut names = Vec::new();
        let mut values: Vec<String> = Vec::new();
        for (name, value) in entries {
            let value = value.trim();
            if value.len() < MIN_SECRET_LEN || values.iter().any(|v| v == value) {
                continue;
            }
            names.push(name);
            values.push(value.to_string());
        }
        let matcher = if values.is_empty() {
            None
        } else {
            match AhoCorasick::builder()
                .match_kind(MatchKind::LeftmostLongest)
                .build(&values)
            {
                Ok(m) => Some(m),
                Err(e) => {
                    // Only a pattern set past the automaton's size limits
                    // fails here; egirl's handful of values never does.
                    tracing::error!("secret redaction is off: {e}");
                    None
                }
            }
        };
        let longest = values.iter().map(String::len).max().unwrap_or(0);
        Self {
            names,
            values,
            matcher,
            longest,
        }
    }

    /// What this process holds: egirl's keys, the variables of the loaded
    /// `.env` files, every variable named like a secret, and the secrets
    /// the MCP config hands to servers (see `mcp::entries`).
    pub fn from_environment(env_files: &[PathBuf], mcp: &McpConfig) -> Self {
        let mut entries: Vec<(String, String)> = Vec::new();
        let var = |name: &str| std::env::var(name).ok();
        for name in SECRET_VARS {
            entries.extend(var(name).map(|v| (name.to_string(), v)));
        }
        for (name, value) in dotenv_entries(env_files) {
            // The environment wins over a .env at load; both are secret.
            entries.extend(var(&name).map(|v| (name.clone(), v)));
            entries.push((name, value));
        }
        for (name, value) in std::env::vars_os() {
            if let (Some(name), Some(value)) = (name.to_str(), value.to_str())
                && is_secret_name(name)
            {
                entries.push((name.to_string(), value.to_string()));
            }
        }
        entries.extend(mcp::entries(mcp));
        // The gateway's token and a client's device token, from their files.
        entries.extend(crate::config::gateway::secret_entries());
        Self::new(entries)
    }

    pub fn is_empty(&self) -> bool {
        self.matcher.is_none()
    }

    /// The names whose values are redacted (for `egirl doctor`).
    pub fn names(&self) -> &[String] {
        &self.names
    }

    /// The text with every secret value replaced by `[redacted:NAME]`;
    /// borrowed as it was when it holds none.
    pub fn redact<'a>(&self, text: &'a str) -> Cow<'a, str> {
        let Some(matcher) = &self.matcher else {
            return Cow::Borrowed(text);
        };
        if text.len() < MIN_SECRET_LEN {
            return Cow::Borrowed(text);
        }
        let mut out = String::new();
        let mut last = 0;
        for m in matcher.find_iter(text) {
            out.push_str(&text[last..m.start()]);
            out.push_str("[redacted:");
            out.push_str(&self.names[m.pattern().as_usize()]);
            out.push(']');
            last = m.end();
        }
        if last == 0 {
            return Cow::Borrowed(text);
        }
        out.push_str(&text[last..]);
        Cow::Owned(out)
    }

    /// Redacts `text` in place.
    pub fn redact_string(&self, text: &mut String) {
        if let Cow::Owned(clean) = self.redact(text) {
            *text = clean;
        }
    }

    /// Redacts every string in a JSON value (tool-call arguments).
    pub fn redact_json(&self, value: &mut serde_json::Value) {
        if self.is_empty() {
            return;
        }
        match value {
            serde_json::Value::String(s) => self.redact_string(s),
            serde_json::Value::Array(items) => items.iter_mut().for_each(|v| self.redact_json(v)),
            serde_json::Value::Object(fields) => {
                fields.values_mut().for_each(|v| self.redact_json(v))
            }
            _ => {}
        }
    }

    /// For text that arrives in pieces (a model's streamed deltas).
    pub fn stream(&self) -> StreamRedactor<'_> {
        StreamRedactor {
            redactor: self,
            pending: String::new(),
        }
    }
}

/// Redacts a stream whose pieces may split a secret: what could still be
/// the start of one is held back until the next piece (or `finish`)
/// decides it. At most `longest value - 1` bytes wait.
pub struct StreamRedactor<'a> {
    redactor: &'a Redactor,
    pending: String,
}

impl StreamRedactor<'_> {
    /// The part of what has arrived so far that is safe to show now.
    pub fn push(&mut self, piece: &str) -> String {
        let Some(matcher) = &self.redactor.matcher else {
            return piece.to_string();
        };
        self.pending.push_str(piece);
        let pending = &self.pending;
        let values = &self.redactor.values;
        // The earliest tail that a longer value starts with: it may still
        // grow into that value.
        let window = pending.len().saturating_sub(self.redactor.longest - 1);
        let mut hold = pending
            .char_indices()
            .map(|(i, _)| i)
            .filter(|&i| i >= window)
            .find(|&i| {
                let tail = &pending[i..];
                values
                    .iter()
                    .any(|v| v.len() > tail.len() && v.starts_with(tail))
            })
            .unwrap_or(pending.len());
        // A whole value across the cut is held back whole.
        if let Some(m) = matcher
            .find_iter(pending.as_str())
            .find(|m| m.start() < hold && hold < m.end())
        {
            hold = m.start();
        }
        let ready = self.redactor.redact(&pending[..hold]).into_owned();
        self.pending.drain(..hold);
        ready
    }

    /// What is still held back, redacted: the stream has ended.
    pub fn finish(&mut self) -> String {
        let rest = std::mem::take(&mut self.pending);
        self.redactor.redact(&rest).into_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn redactor(pairs: &[(&str, &str)]) -> Redactor {
        Redactor::new(pairs.iter().map(|(n, v)| (n.to_string(), v.to_string())))
    }

    #[test]
    fn values_become_markers_with_their_names() {
        let r = redactor(&[
            ("ANTHROPIC_API_KEY", "sk-ant-0123456789"),
            ("FOO_TOKEN", " foo-token-value \n"),
        ]);
        assert_eq!(
            r.redact("key=sk-ant-0123456789, foo=foo-token-value."),
            "key=[redacted:ANTHROPIC_API_KEY], foo=[redacted:FOO_TOKEN]."
        );
        assert!(matches!(r.redact("nothing here at all"), Cow::Borrowed(_)));
    }

    #[test]
    fn short_values_and_duplicates_are_left_out() {
        let r = redactor(&[
            ("DEBUG_KEY", "1"),
            ("A_TOKEN", "shared-value-123"),
            ("B_TOKEN", "shared-value-123"),
        ]);
        assert_eq!(r.names(), ["A_TOKEN"]);
        assert_eq!(r.redact("1 shared-value-123"), "1 [redacted:A_TOKEN]");
        assert!(redactor(&[("X_KEY", "short")]).is_empty());
    }

    #[test]
    fn the_longest_value_wins_where_two_overlap() {
        let r = redactor(&[("SHORT_KEY", "abc12345"), ("LONG_KEY", "abc12345678")]);
        assert_eq!(r.redact("[abc12345678]"), "[[redacted:LONG_KEY]]");
        assert_eq!(r.redact("[abc12345]"), "[[redacted:SHORT_KEY]]");
    }

    #[test]
    fn json_strings_are_redacted_everywhere() {
        let r = redactor(&[("FOO_TOKEN", "foo-token-value")]);
        let mut v =
            serde_json::json!({"a": ["x foo-token-value", 1], "b": {"c": "foo-token-value"}});
        r.redact_json(&mut v);
        assert_eq!(
            v,
            serde_json::json!({"a": ["x [redacted:FOO_TOKEN]", 1], "b": {"c": "[redacted:FOO_TOKEN]"}})
        );
    }

    fn streamed(r: &Redactor, pieces: &[&str]) -> (Vec<String>, String) {
        let mut s = r.stream();
        let mut shown: Vec<String> = pieces.iter().map(|p| s.push(p)).collect();
        shown.push(s.finish());
        let joined = shown.concat();
        (shown, joined)
    }

    #[test]
    fn a_value_split_across_pieces_never_shows() {
        let r = redactor(&[("DISCORD_TOKEN", "discord-token-abcdef")]);
        let (shown, joined) = streamed(&r, &["Found ", "discord-", "token-abc", "def", " there."]);
        assert_eq!(joined, "Found [redacted:DISCORD_TOKEN] there.");
        for piece in &shown {
            assert!(
                !piece.contains("discord-") && !piece.contains("abc"),
                "{shown:?}"
            );
        }
        // Text that only looked like a start is shown once it diverges.
        let (shown, joined) = streamed(&r, &["a disc", "o ball"]);
        assert_eq!(joined, "a disco ball");
        assert_eq!(shown[0], "a ");
    }

    #[test]
    fn streaming_matches_redacting_the_whole_text() {
        let r = redactor(&[
            ("SHORT_KEY", "abc12345"),
            ("LONG_KEY", "abc12345678"),
            ("UTF_TOKEN", "clé-secrète-ü"),
        ]);
        let text = "x abc12345678 y abc12345 z clé-secrète-ü abc1234 end";
        let whole = r.redact(text).into_owned();
        // Every way of cutting the text into pieces of 1 to 4 characters.
        let chars: Vec<char> = text.chars().collect();
        for size in 1..=4 {
            let pieces: Vec<String> = chars.chunks(size).map(|c| c.iter().collect()).collect();
            let refs: Vec<&str> = pieces.iter().map(String::as_str).collect();
            let (shown, joined) = streamed(&r, &refs);
            assert_eq!(joined, whole, "pieces of {size}");
            assert!(shown.iter().all(|p| !p.contains("345678")), "{shown:?}");
        }
    }

    #[test]
    fn self_overlapping_values_stream_like_the_whole_text() {
        let r = redactor(&[("A_KEY", "aaaaaaab"), ("B_KEY", "aaab-aaaaaaab")]);
        let text = "aaaaaaaaaaab aaab-aaaaaaab aaaab-aaaaaaaab aaaaaaa";
        let whole = r.redact(text).into_owned();
        assert_eq!(
            whole,
            "aaaa[redacted:A_KEY] [redacted:B_KEY] aaaab-a[redacted:A_KEY] aaaaaaa"
        );
        for size in 1..=6 {
            let chars: Vec<char> = text.chars().collect();
            let pieces: Vec<String> = chars.chunks(size).map(|c| c.iter().collect()).collect();
            let refs: Vec<&str> = pieces.iter().map(String::as_str).collect();
            let (_, joined) = streamed(&r, &refs);
            assert_eq!(joined, whole, "pieces of {size}");
        }
    }

    #[test]
    fn nothing_is_held_back_without_secrets() {
        let r = Redactor::default();
        let mut s = r.stream();
        assert_eq!(s.push("abc"), "abc");
        assert_eq!(s.finish(), "");
        assert_eq!(r.redact("abc"), "abc");
    }

    #[test]
    fn debug_shows_names_only() {
        let r = redactor(&[("FOO_TOKEN", "foo-token-value")]);
        let shown = format!("{r:?}");
        assert!(shown.contains("FOO_TOKEN") && !shown.contains("foo-token-value"));
    }
}
