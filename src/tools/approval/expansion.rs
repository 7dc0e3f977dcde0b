//! Words bash rewrites after a rule has looked at them.
//!
//! A rule is checked against the argv `shell_words` reads from the command,
//! but bash runs it, and bash expands: `{-exec,touch,x,{},+}` becomes
//! `-exec touch x {} +`, `$'-delete'` becomes `-delete`, `x$IFS-delete`
//! splits into `x -delete`, and `*` matches a file the model named
//! `-delete`. Any of these lets `allow = ["find ."]` cover `find . -delete`.
//! So a command with such a word is never covered by a rule; it is asked
//! about (or denied under `allowlist`) like a pipe.
//!
//! Refused, outside single quotes: `$` (parameters, `$'...'`, `$"..."`).
//! Unquoted: a `{` that is not `{}` (brace expansion), and a glob
//! (`*`, `?`, `[`) in a word that starts with `-` or with the glob itself,
//! the only words whose matches can start with `-`. `ls src/*.rs` and
//! `find . -name '*.md'` stay coverable. Aliases, history and extglob are
//! off in the non-interactive bash that runs commands.

#[derive(Clone, Copy, PartialEq)]
enum Quote {
    None,
    Single,
    Double,
}

/// Whether bash could turn a word of `command` into something else.
pub fn expands(command: &str) -> bool {
    let mut quote = Quote::None;
    // The word so far, as bash will see it after quote removal.
    let mut word_empty = true;
    let mut word_dash = false;
    let mut chars = command.chars().peekable();
    while let Some(c) = chars.next() {
        match (quote, c) {
            (Quote::Single, '\'') | (Quote::Double, '"') => quote = Quote::None,
            (Quote::None, '\'') => quote = Quote::Single,
            (Quote::None, '"') => quote = Quote::Double,
            (Quote::Single, _) => word_empty = false,
            (_, '$') => return true,
            (_, '\\') => {
                // The next character is literal (bash leaves the backslash
                // in double quotes before most; either way no expansion).
                let escaped = chars.next();
                if word_empty {
                    word_dash = escaped == Some('-');
                }
                word_empty = false;
            }
            (Quote::None, c) if c.is_whitespace() => {
                word_empty = true;
                word_dash = false;
            }
            (Quote::None, '{') if chars.peek() != Some(&'}') => return true,
            (Quote::None, '*' | '?' | '[') if word_empty || word_dash => return true,
            (_, c) => {
                if word_empty {
                    word_dash = c == '-';
                }
                word_empty = false;
            }
        }
    }
    false
}

/// Whether bash could glob a word of `command`: a `*`, `?` or `[`
/// outside quotes and not escaped. A glob's matches are file names the
/// model may have chosen, so a word of program text (a sed script) with
/// one may turn into any text.
pub fn globs(command: &str) -> bool {
    let mut quote = Quote::None;
    let mut chars = command.chars();
    while let Some(c) = chars.next() {
        match (quote, c) {
            (Quote::Single, '\'') | (Quote::Double, '"') => quote = Quote::None,
            (Quote::None, '\'') => quote = Quote::Single,
            (Quote::None, '"') => quote = Quote::Double,
            (Quote::None | Quote::Double, '\\') => {
                chars.next();
            }
            (Quote::None, '*' | '?' | '[') => return true,
            _ => {}
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::{expands, globs};

    #[test]
    fn unquoted_globs_are_found() {
        for (command, expected) in [
            ("sed -n '1a x'*", true),
            ("ls src/*.rs", true),
            ("sed -n 's/a*/b/p' f", false),
            ("sed -n \"s/a*/b/p\" f", false),
            ("ls x\\*", false),
            ("grep -c x f", false),
        ] {
            assert_eq!(globs(command), expected, "{command}");
        }
    }

    #[test]
    fn words_bash_would_rewrite_are_recognised() {
        for command in [
            "find . {-exec,touch,x,{},+}",
            "find . {-delete,}",
            "find . -name a{,b}",
            "find . $'-delete'",
            "find . $\"-delete\"",
            "find . -name x$IFS-delete",
            "find . \"$IFS\"",
            "find . -name keep -o *",
            "ls ?delete",
            "ls [-]delete",
            "ls -*",
            "ls \\-*",
            "git log --output=*",
        ] {
            assert!(expands(command), "{command}");
        }
    }

    #[test]
    fn plain_and_quoted_words_do_not_expand() {
        for command in [
            "find . -name '*.md'",
            "find . -name \"*.md\"",
            "find . -name \\*.md",
            "ls src/*.rs",
            "ls ./*",
            "git log --format='%h {x,y} $HOME'",
            "find . -exec rm {} +",
            "grep -c x f",
            "echo 'it''s'",
            "cargo test --lib",
        ] {
            assert!(!expands(command), "{command}");
        }
    }
}
