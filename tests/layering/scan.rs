//! Reading the module paths a source file uses: every `crate::…` and
//! `super::…` path, in `use` lines (groups expanded) and inline, resolved
//! to a path from the crate root. Comments, strings and character literals
//! are blanked first, so a path in a doc comment or a test's fixture text
//! is no import; inline `mod x { … }` blocks (tests) move `super::` one
//! level down, as the compiler reads it.

/// One path a file uses, from the crate root (`["agent", "turn", "Foo"]`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reference {
    /// 1-based line of the path's last segment.
    pub line: usize,
    pub path: Vec<String>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Token {
    Ident(String),
    PathSep,
    Open,
    Close,
    Comma,
    Other(char),
}

/// The paths `text` uses; `module` is the file's own module path.
pub fn references(module: &[String], text: &str) -> Vec<Reference> {
    let tokens = tokenize(&blank_out(text));
    let mut out = Vec::new();
    // Inline modules open here: (name, brace depth inside them).
    let mut inline: Vec<(String, usize)> = Vec::new();
    let mut depth = 0usize;
    let mut i = 0;
    while i < tokens.len() {
        match &tokens[i].1 {
            Token::Open => depth += 1,
            Token::Close => {
                if inline.last().is_some_and(|(_, d)| *d == depth) {
                    inline.pop();
                }
                depth = depth.saturating_sub(1);
            }
            Token::Ident(word) if word == "mod" => {
                if let (Some((_, Token::Ident(name))), Some((_, Token::Open))) =
                    (tokens.get(i + 1), tokens.get(i + 2))
                {
                    inline.push((name.clone(), depth + 1));
                }
            }
            Token::Ident(word) if word == "crate" || word == "super" => {
                let after_dollar = i > 0 && tokens[i - 1].1 == Token::Other('$');
                if !after_dollar && tokens.get(i + 1).is_some_and(|t| t.1 == Token::PathSep) {
                    let mut here: Vec<String> = module.to_vec();
                    here.extend(inline.iter().map(|(name, _)| name.clone()));
                    i = resolve_start(&tokens, i, here, &mut out);
                    continue;
                }
            }
            _ => {}
        }
        i += 1;
    }
    out
}

/// Reads the `crate::` or `super::super::` prefix at `i` and the path tree
/// after it; returns the index after the tree.
fn resolve_start(
    tokens: &[(usize, Token)],
    mut i: usize,
    here: Vec<String>,
    out: &mut Vec<Reference>,
) -> usize {
    let mut base = Vec::new();
    if tokens[i].1 == Token::Ident("super".into()) {
        base = here;
        while tokens
            .get(i)
            .is_some_and(|t| t.1 == Token::Ident("super".into()))
            && tokens.get(i + 1).is_some_and(|t| t.1 == Token::PathSep)
        {
            base.pop();
            i += 2;
        }
    } else {
        i += 2;
    }
    tree(tokens, i, base, out)
}

/// A path or a `{a, b::c}` group after `prefix::`; records each leaf.
fn tree(
    tokens: &[(usize, Token)],
    mut i: usize,
    mut prefix: Vec<String>,
    out: &mut Vec<Reference>,
) -> usize {
    let mut line = tokens.get(i).map_or(0, |t| t.0);
    loop {
        match tokens.get(i).map(|t| &t.1) {
            Some(Token::Ident(seg)) => {
                if seg != "self" {
                    prefix.push(seg.clone());
                }
                line = tokens[i].0;
                i += 1;
                if tokens.get(i).is_some_and(|t| t.1 == Token::PathSep) {
                    i += 1;
                    continue;
                }
                break;
            }
            Some(Token::Open) => {
                i += 1;
                while let Some((_, token)) = tokens.get(i) {
                    match token {
                        Token::Close => {
                            i += 1;
                            break;
                        }
                        Token::Comma => i += 1,
                        _ => i = tree(tokens, i, prefix.clone(), out),
                    }
                }
                return i;
            }
            // `*`, or the path ends at the prefix.
            Some(Token::Other('*')) => {
                i += 1;
                break;
            }
            _ => break,
        }
    }
    if !prefix.is_empty() {
        out.push(Reference { line, path: prefix });
    }
    i
}

fn tokenize(text: &str) -> Vec<(usize, Token)> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut line = 1;
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c == '\n' {
            line += 1;
        } else if c.is_alphabetic() || c == '_' {
            let start = i;
            while i + 1 < chars.len() && (chars[i + 1].is_alphanumeric() || chars[i + 1] == '_') {
                i += 1;
            }
            out.push((line, Token::Ident(chars[start..=i].iter().collect())));
        } else if c == ':' && chars.get(i + 1) == Some(&':') {
            out.push((line, Token::PathSep));
            i += 1;
        } else if c == '{' {
            out.push((line, Token::Open));
        } else if c == '}' {
            out.push((line, Token::Close));
        } else if c == ',' {
            out.push((line, Token::Comma));
        } else if !c.is_whitespace() {
            out.push((line, Token::Other(c)));
        }
        i += 1;
    }
    out
}

/// `text` with comments, string and character literals replaced by spaces
/// (newlines kept, so line numbers hold).
fn blank_out(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < chars.len() {
        let end = literal_end(&chars, i);
        if end > i {
            for &c in &chars[i..end] {
                out.push(if c == '\n' { '\n' } else { ' ' });
            }
            i = end;
        } else {
            out.push(chars[i]);
            i += 1;
        }
    }
    out
}

/// Where a comment or literal starting at `i` ends; `i` when none starts.
fn literal_end(chars: &[char], i: usize) -> usize {
    let at = |k: usize| chars.get(k).copied();
    match (at(i), at(i + 1)) {
        (Some('/'), Some('/')) => (i..chars.len())
            .find(|&k| chars[k] == '\n')
            .unwrap_or(chars.len()),
        (Some('/'), Some('*')) => block_comment_end(chars, i),
        (Some('"'), _) => quoted_end(chars, i + 1, '"'),
        (Some('b'), Some('"')) if !ident_before(chars, i) => quoted_end(chars, i + 2, '"'),
        (Some('r'), Some('"' | '#')) if !ident_before(chars, i) => raw_end(chars, i, i + 1),
        (Some('b'), Some('r'))
            if !ident_before(chars, i) && matches!(at(i + 2), Some('"' | '#')) =>
        {
            raw_end(chars, i, i + 2)
        }
        (Some('\''), Some('\\')) => quoted_end(chars, i + 1, '\''),
        // `'x'` is a character; `'a` alone is a lifetime.
        (Some('\''), Some(_)) if at(i + 2) == Some('\'') => i + 3,
        _ => i,
    }
}

fn ident_before(chars: &[char], i: usize) -> bool {
    i > 0 && (chars[i - 1].is_alphanumeric() || chars[i - 1] == '_')
}

fn block_comment_end(chars: &[char], start: usize) -> usize {
    let mut nesting = 0;
    let mut k = start;
    while k + 1 < chars.len() {
        if chars[k] == '/' && chars[k + 1] == '*' {
            nesting += 1;
            k += 2;
        } else if chars[k] == '*' && chars[k + 1] == '/' {
            nesting -= 1;
            k += 2;
            if nesting == 0 {
                return k;
            }
        } else {
            k += 1;
        }
    }
    chars.len()
}

/// After the opening quote at `from - 1`: the index past the closing one.
fn quoted_end(chars: &[char], from: usize, quote: char) -> usize {
    let mut k = from;
    while k < chars.len() {
        if chars[k] == '\\' {
            k += 2;
        } else if chars[k] == quote {
            return k + 1;
        } else {
            k += 1;
        }
    }
    chars.len()
}

/// `from` is at the `#`s or the quote after `r`; `start` when this is a
/// raw identifier (`r#type`), not a string.
fn raw_end(chars: &[char], start: usize, from: usize) -> usize {
    let hashes = chars[from..].iter().take_while(|&&c| c == '#').count();
    let open = from + hashes;
    if chars.get(open) != Some(&'"') {
        return start;
    }
    let mut k = open + 1;
    while k < chars.len() {
        if chars[k] == '"'
            && chars[k + 1..]
                .iter()
                .take(hashes)
                .filter(|&&c| c == '#')
                .count()
                == hashes
        {
            return k + 1 + hashes;
        }
        k += 1;
    }
    chars.len()
}
