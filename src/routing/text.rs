//! Turns a message into what the classifier reads: the user's own request,
//! normalized for cue matching, and a description of any pasted material
//! (code, a stack trace, a diff, a log, an email) that follows it.
//!
//! The split matters because a careful user judges the request, not the
//! paste: "summarize this email" stays local however many times the email
//! says "debug" or "refactor".

use super::material::{self, Material};

/// The request, ready for the matcher.
#[derive(Debug, Default)]
pub(crate) struct Prepared {
    /// Lowercased, accent-folded words separated by single spaces. `|` ends
    /// a sentence and `,` a clause (each its own word); `#` stands for a
    /// file path, `` ` `` for inline code and `"` for quoted text, whose
    /// words are content, not intent. Scripts written without spaces (CJK)
    /// are kept as runs, spaced from other scripts.
    pub norm: String,
    /// Characters of the user's own words (material excluded).
    pub request_chars: usize,
    /// Number-like tokens in the request ("$1.10", "6%", "1000-word").
    pub numbers: usize,
    /// The request's last sentence ends with a question mark (or opens with ¿).
    pub question: bool,
    pub material: Material,
}

pub(crate) fn prepare(message: &str) -> Prepared {
    let split = material::split(message);
    let mut prepared = Prepared {
        material: split.material,
        ..Prepared::default()
    };
    let mut normalizer = Normalizer::new(&mut prepared);
    for part in &split.request {
        normalizer.line_break();
        normalizer.text(part);
    }
    normalizer.finish();
    prepared
}

/// A phrase (a skill name, a trigger, a lexicon pattern) normalized the
/// same way as a request, without sentence markers.
pub(crate) fn normalize_phrase(phrase: &str) -> String {
    let mut scratch = Prepared::default();
    let mut normalizer = Normalizer::new(&mut scratch);
    normalizer.keep_markers = false;
    normalizer.text(phrase);
    normalizer.finish();
    scratch.norm
}

pub(crate) fn is_cjk(c: char) -> bool {
    matches!(c,
        '\u{3040}'..='\u{30FF}'   // hiragana, katakana
        | '\u{3400}'..='\u{4DBF}' // CJK extension A
        | '\u{4E00}'..='\u{9FFF}' // CJK unified ideographs
        | '\u{AC00}'..='\u{D7AF}' // hangul
        | '\u{FF66}'..='\u{FF9F}' // halfwidth katakana
        | '\u{3005}')
}

fn is_sentence_end(c: char) -> bool {
    matches!(c, '.' | '?' | '!' | ';' | '…' | '。' | '？' | '！' | '；')
}

fn is_clause_break(c: char) -> bool {
    matches!(c, ',' | ':' | '、' | '，' | '：')
}

/// Lowercases and strips the accents a user may or may not type, so
/// "recuérdame" and "recuerdame" read the same.
fn fold_into(c: char, out: &mut String) {
    if c.is_ascii() {
        out.push(c.to_ascii_lowercase());
        return;
    }
    for lower in c.to_lowercase() {
        let base = match lower {
            'à' | 'á' | 'â' | 'ã' | 'ä' | 'å' | 'ā' | 'ą' => 'a',
            'ç' | 'č' | 'ć' => 'c',
            'è' | 'é' | 'ê' | 'ë' | 'ē' | 'ę' | 'ě' => 'e',
            'ì' | 'í' | 'î' | 'ï' | 'ī' => 'i',
            'ñ' | 'ń' => 'n',
            'ò' | 'ó' | 'ô' | 'õ' | 'ö' | 'ø' | 'ō' => 'o',
            'ù' | 'ú' | 'û' | 'ü' | 'ū' => 'u',
            'ý' | 'ÿ' => 'y',
            'ł' => 'l',
            'š' => 's',
            'ž' => 'z',
            'ř' => 'r',
            'ё' => 'е',
            'ß' => {
                out.push_str("ss");
                continue;
            }
            'œ' => {
                out.push_str("oe");
                continue;
            }
            'æ' => {
                out.push_str("ae");
                continue;
            }
            other => other,
        };
        out.push(base);
    }
}

struct Normalizer<'a> {
    out: &'a mut Prepared,
    keep_markers: bool,
    /// The last sentence-ending mark seen, for `question`.
    last_end: Option<char>,
    opened_with_inverted_question: bool,
}

impl<'a> Normalizer<'a> {
    fn new(out: &'a mut Prepared) -> Self {
        Normalizer {
            out,
            keep_markers: true,
            last_end: None,
            opened_with_inverted_question: false,
        }
    }

    fn finish(self) {
        while self.out.norm.ends_with(' ') {
            self.out.norm.pop();
        }
        self.out.question = self.last_end.is_some_and(|c| matches!(c, '?' | '？'))
            || self.opened_with_inverted_question;
    }

    fn space(&mut self) {
        if !self.out.norm.is_empty() && !self.out.norm.ends_with(' ') {
            self.out.norm.push(' ');
        }
    }

    fn marker(&mut self, marker: char) {
        if !self.keep_markers {
            self.space();
            return;
        }
        self.space();
        self.out.norm.push(marker);
        self.out.norm.push(' ');
    }

    /// One stretch of request text: quotes and inline code become markers,
    /// then each whitespace-separated token is normalized.
    fn text(&mut self, text: &str) {
        self.out.request_chars += text.chars().count();
        if self.out.norm.is_empty() && text.trim_start().starts_with('¿') {
            self.opened_with_inverted_question = true;
        }
        let mut rest = text;
        while !rest.is_empty() {
            match find_quoted(rest) {
                Some((start, end, marker)) => {
                    self.tokens(&rest[..start]);
                    self.marker(marker);
                    rest = &rest[end..];
                }
                None => {
                    self.tokens(rest);
                    break;
                }
            }
        }
    }

    /// Whitespace-separated tokens; a line break ends a sentence.
    fn tokens(&mut self, text: &str) {
        let bytes = text.as_bytes();
        let char_at = |i: usize| text[i..].chars().next().unwrap_or(' ');
        let mut i = 0;
        while i < bytes.len() {
            let b = bytes[i];
            if b == b'\n' {
                self.line_break();
                i += 1;
                continue;
            }
            if b.is_ascii_whitespace() {
                i += 1;
                continue;
            }
            if b >= 0x80 && char_at(i).is_whitespace() {
                i += char_at(i).len_utf8();
                continue;
            }
            // One pass finds the token's end and whether it is a plain
            // ASCII word (most are), which skips the general path.
            let start = i;
            let mut plain = true;
            while i < bytes.len() {
                let b = bytes[i];
                if b.is_ascii_alphanumeric() {
                    i += 1;
                } else if b.is_ascii_whitespace() {
                    break;
                } else if b < 0x80 {
                    plain = false;
                    i += 1;
                } else {
                    let c = char_at(i);
                    if c.is_whitespace() {
                        break;
                    }
                    plain = false;
                    i += c.len_utf8();
                }
            }
            let token = &text[start..i];
            if plain {
                if bytes[start].is_ascii_digit() {
                    self.out.numbers += 1;
                }
                self.ascii_word(token);
            } else {
                self.token(token);
            }
        }
    }

    /// A line break ends a sentence when the line did not.
    fn line_break(&mut self) {
        if self.keep_markers && !self.out.norm.is_empty() && !self.out.norm.ends_with("| ") {
            self.marker('|');
        }
    }

    /// A token with punctuation or non-ASCII letters in it.
    fn token(&mut self, token: &str) {
        let is_edge = |c: char| {
            !(c.is_alphanumeric() || matches!(c, '~' | '/' | '$' | '€' | '£' | '+' | '#'))
        };
        let after_leading = token.trim_start_matches(is_edge);
        let core = after_leading.trim_end_matches(is_edge);
        let trailing = &after_leading[core.len()..];
        if core.is_empty() {
            // "bonjour !" ends a sentence; an operator such as "!=" does not.
            if token
                .chars()
                .all(|c| is_sentence_end(c) || is_clause_break(c))
            {
                self.trailing_marks(token);
            }
            return;
        }
        if core.starts_with(|c: char| c.is_ascii_digit() || matches!(c, '$' | '€' | '£')) {
            self.out.numbers += 1;
        }
        let starts = |prefix: &str| {
            core.len() >= prefix.len()
                && core.as_bytes()[..prefix.len()].eq_ignore_ascii_case(prefix.as_bytes())
        };
        if starts("http://") || starts("https://") || starts("www.") {
            // A URL says nothing about intent.
        } else if core.bytes().all(|b| b.is_ascii_alphanumeric()) {
            self.ascii_word(core);
        } else if is_path(core) {
            self.marker('#');
        } else if core.eq_ignore_ascii_case("c++") {
            self.word("cpp");
        } else if core.eq_ignore_ascii_case("c#") {
            self.word("csharp");
        } else if core.eq_ignore_ascii_case("f#") {
            self.word("fsharp");
        } else if core.eq_ignore_ascii_case("tl;dr") {
            self.word("tldr");
        } else {
            self.chars(core);
        }
        self.trailing_marks(trailing);
    }

    fn trailing_marks(&mut self, trailing: &str) {
        if let Some(end) = trailing.chars().rev().find(|c| is_sentence_end(*c)) {
            self.last_end = Some(end);
            self.marker('|');
        } else if trailing.chars().any(is_clause_break) {
            self.marker(',');
        }
    }

    fn ascii_word(&mut self, word: &str) {
        self.space();
        let norm = &mut self.out.norm;
        norm.reserve(word.len() + 1);
        norm.extend(word.bytes().map(|b| char::from(b.to_ascii_lowercase())));
        norm.push(' ');
    }

    fn word(&mut self, word: &str) {
        self.space();
        self.out.norm.push_str(word);
        self.out.norm.push(' ');
    }

    /// The characters of one token: letters folded, inner punctuation made
    /// a separator or a marker, scripts without spaces spaced from others.
    fn chars(&mut self, core: &str) {
        self.space();
        let mut prev: Option<char> = None;
        let mut iter = core.chars().peekable();
        while let Some(c) = iter.next() {
            let next = iter.peek().copied();
            if c.is_alphanumeric() {
                if let Some(p) = prev
                    && p.is_alphanumeric()
                    && is_cjk(p) != is_cjk(c)
                {
                    self.space();
                }
                fold_into(c, &mut self.out.norm);
                prev = Some(c);
                continue;
            }
            let between_letters =
                prev.is_some_and(char::is_alphanumeric) && next.is_some_and(char::is_alphanumeric);
            if matches!(c, '\'' | '’' | 'ʼ') && between_letters {
                self.out.norm.push('\'');
            } else if is_sentence_end(c) && !(c == '.' && between_letters) {
                self.last_end = Some(c);
                self.marker('|');
            } else if is_clause_break(c) && !between_letters {
                self.marker(',');
            } else {
                self.space();
            }
            prev = Some(c);
        }
        self.space();
    }
}

/// A path the file tools would take: has a slash and looks like a path
/// (`~/notes/a.md`, `logs/`, `/users`), or ends in a common file extension
/// (`README.md`, `retry.rs`). "async/await" and "km/h" are words.
fn is_path(token: &str) -> bool {
    const EXTENSIONS: &[&str] = &[
        "md", "txt", "rs", "py", "json", "toml", "yaml", "yml", "log", "csv", "sh", "c", "h",
        "cpp", "hpp", "html", "css", "conf", "cfg", "ini", "env", "xml", "sql", "pdf", "doc",
        "docx", "xlsx", "png", "jpg", "jpeg", "gif", "zip", "gz", "tgz", "lock", "rb", "java",
        "kt", "swift", "php", "lua", "go", "ts", "tsx", "jsx", "vue", "bak", "org", "tex",
    ];
    let token = token.trim_end_matches(['.', ',', ':', ';', '?', '!', ')']);
    if token.contains('/') {
        let last = token.rsplit('/').next().unwrap_or("");
        return token.starts_with(['/', '~', '.'])
            || token.ends_with('/')
            || has_extension(last, EXTENSIONS);
    }
    has_extension(token, EXTENSIONS)
}

fn has_extension(name: &str, extensions: &[&str]) -> bool {
    match name.rsplit_once('.') {
        Some((stem, ext)) if !stem.is_empty() => {
            extensions.contains(&ext.to_ascii_lowercase().as_str())
        }
        _ => false,
    }
}

/// The first quoted span or inline code in `text`: (start, end, marker).
/// An apostrophe opens a quote only after a space or the start and closes
/// before a non-letter, so "mom's" and "c'est" are words.
fn find_quoted(text: &str) -> Option<(usize, usize, char)> {
    // The openers' first bytes: ` " ' and the lead bytes of « (C2), “ „ ‘
    // (E2) and 「 『 (E3); the match below checks the whole character.
    let could_open = |b: &u8| matches!(b, b'`' | b'"' | b'\'' | 0xC2 | 0xE2 | 0xE3);
    let mut from = 0;
    while let Some(offset) = text.as_bytes()[from..].iter().position(could_open) {
        let i = from + offset;
        let c = text[i..].chars().next()?;
        let after = i + c.len_utf8();
        from = after;
        let prev = text[..i].chars().next_back();
        let opens_word = prev.is_none_or(|p| p.is_whitespace() || matches!(p, '(' | ':' | '['));
        let (closers, marker): (&[char], char) = match c {
            '`' => (&['`'], '`'),
            '"' if opens_word => (&['"', '”'], '"'),
            '“' => (&['”', '"'], '"'),
            '«' => (&['»'], '"'),
            '„' => (&['“', '”'], '"'),
            '「' => (&['」'], '"'),
            '『' => (&['』'], '"'),
            '‘' if opens_word => (&['’'], '"'),
            '\'' if opens_word => (&['\''], '"'),
            _ => continue,
        };
        if let Some(end) = find_closer(&text[after..], closers, c == '\'' || c == '‘') {
            return Some((i, after + end, marker));
        }
    }
    None
}

/// Where the quote opened just before `rest` closes (the index after the
/// closer), on the same line and within a sentence's length.
fn find_closer(rest: &str, closers: &[char], apostrophe: bool) -> Option<usize> {
    let mut prev: Option<char> = None;
    for (i, c) in rest.char_indices() {
        if c == '\n' || i > 240 {
            return None;
        }
        if closers.contains(&c) && prev.is_some_and(|p| !p.is_whitespace()) {
            let next = rest[i + c.len_utf8()..].chars().next();
            if !apostrophe || next.is_none_or(|n| !n.is_alphanumeric()) {
                return Some(i + c.len_utf8());
            }
        }
        prev = Some(c);
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotes_paths_and_inline_code_become_markers() {
        let p = prepare("add 'call the plumber' to the top of todo.md");
        assert_eq!(p.norm, "add \" to the top of #");
        let p = prepare("rename the variable `cnt` to `count` in stats.py");
        assert_eq!(p.norm, "rename the variable ` to ` in #");
        let p = prepare("what's in ~/notes/ideas.md? and mom's list");
        assert_eq!(p.norm, "what's in # | and mom's list");
        let p = prepare("refactor this to async/await, at 90 km/h");
        assert_eq!(p.norm, "refactor this to async await , at 90 km h");
    }

    #[test]
    fn accents_case_and_scripts_are_normalized() {
        assert_eq!(prepare("¿Qué te DIJE?").norm, "que te dije |");
        assert!(prepare("¿Qué te dije sobre Sevilla").question);
        assert_eq!(prepare("用Python写一个爬虫").norm, "用 python 写一个爬虫");
        assert_eq!(
            prepare("rappelle-moi de payer").norm,
            "rappelle moi de payer"
        );
        assert_eq!(prepare("a C++ or C# app").norm, "a cpp or csharp app");
        assert_eq!(normalize_phrase("PDF-Tools, v2"), "pdf tools v2");
    }

    #[test]
    fn numbers_and_questions_are_counted() {
        let p = prepare("if I invest $500 at 6% for 20 years, which wins?");
        assert_eq!(p.numbers, 3);
        assert!(p.question);
        assert!(!prepare("remember it? write it in Rust.").question);
    }
}
