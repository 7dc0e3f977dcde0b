//! Printing outside the TUI (`-m`, `skills list`, `memory search`,
//! `stats`, `export`, doctor, errors).
//!
//! Whatever is printed may come from the model, a file or the network, and
//! a terminal obeys escape sequences in it: set the title, write the
//! clipboard (OSC 52), clear the screen, ring the bell. [`clean`] removes
//! every control character and escape sequence but newline and tab, and
//! every print site goes through it. JSON output is escaped by serde_json
//! except for DEL and the C1 controls, which [`json_line`] escapes too.
//!
//! A closed stdout (`egirl memory search x | head -1`) is not an error:
//! [`out`] treats a broken pipe as the end of the output, so the command
//! ends quietly with its usual exit code instead of panicking in
//! `println!`. Stderr writes never fail the command either.

use std::borrow::Cow;
use std::io::{self, Write};

/// `text` without control characters and escape sequences (CSI, OSC, DCS
/// and the other string sequences, two-character escapes, their 8-bit C1
/// forms), keeping newlines and tabs.
pub fn clean(text: &str) -> Cow<'_, str> {
    if !text.chars().any(is_control) {
        return Cow::Borrowed(text);
    }
    let mut kept = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if !is_control(c) {
            kept.push(c);
            continue;
        }
        match c {
            '\u{1b}' => match chars.next() {
                Some('[') => skip_csi(&mut chars),
                Some(']' | 'P' | 'X' | '^' | '_') => skip_string(&mut chars),
                // nF escapes: intermediates, then one final character.
                Some(' '..='/') => {
                    while chars.next_if(|c| (' '..='/').contains(c)).is_some() {}
                    chars.next();
                }
                _ => {}
            },
            '\u{9b}' => skip_csi(&mut chars),
            '\u{9d}' | '\u{90}' | '\u{98}' | '\u{9e}' | '\u{9f}' => skip_string(&mut chars),
            _ => {}
        }
    }
    Cow::Owned(kept)
}

fn is_control(c: char) -> bool {
    c.is_control() && c != '\n' && c != '\t'
}

/// Parameters and intermediates up to the final byte (`@` to `~`).
fn skip_csi(chars: &mut std::iter::Peekable<std::str::Chars<'_>>) {
    for c in chars.by_ref() {
        if ('@'..='~').contains(&c) {
            break;
        }
    }
}

/// A string sequence's body up to its terminator: BEL, `ESC \` or C1 ST.
fn skip_string(chars: &mut std::iter::Peekable<std::str::Chars<'_>>) {
    while let Some(c) = chars.next() {
        match c {
            '\u{7}' | '\u{9c}' => break,
            '\u{1b}' => {
                chars.next_if_eq(&'\\');
                break;
            }
            _ => {}
        }
    }
}

/// A serialized JSON value with DEL and the C1 controls escaped as well
/// (serde_json escapes only those below U+0020). Outside strings JSON is
/// ASCII, so every such character is inside one.
pub fn json_line(json: &str) -> Cow<'_, str> {
    if !json.chars().any(|c| ('\u{7f}'..='\u{9f}').contains(&c)) {
        return Cow::Borrowed(json);
    }
    let mut escaped = String::with_capacity(json.len() + 16);
    for c in json.chars() {
        if ('\u{7f}'..='\u{9f}').contains(&c) {
            escaped.push_str(&format!("\\u{:04x}", u32::from(c)));
        } else {
            escaped.push(c);
        }
    }
    Cow::Owned(escaped)
}

/// Writes `text` cleaned to `w`; a closed pipe is the end of the output,
/// not an error.
pub fn write_clean(w: &mut impl Write, text: &str) -> io::Result<()> {
    quiet_pipe(w.write_all(clean(text).as_bytes()).and_then(|()| w.flush()))
}

/// [`write_clean`] to stdout.
pub fn out(text: &str) -> io::Result<()> {
    write_clean(&mut io::stdout().lock(), text)
}

/// One JSON line to stdout (see [`json_line`]); a closed pipe ends quietly.
pub fn out_json(json: &str) -> io::Result<()> {
    let mut stdout = io::stdout().lock();
    quiet_pipe(writeln!(stdout, "{}", json_line(json)).and_then(|()| stdout.flush()))
}

/// A line to stderr, cleaned; a failure to write it is ignored (there is
/// nowhere left to say so).
pub fn err(line: impl std::fmt::Display) {
    let text = format!("{line}\n");
    let _ = io::stderr().lock().write_all(clean(&text).as_bytes());
}

fn quiet_pipe(result: io::Result<()>) -> io::Result<()> {
    match result {
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Ok(()),
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escape_sequences_and_controls_are_removed() {
        let cases = [
            ("plain text\n\tindented", "plain text\n\tindented"),
            ("\u{1b}]0;pwned title\u{7}after", "after"),
            ("\u{1b}]52;c;ZWNobyBoaQ==\u{1b}\\after", "after"),
            ("\u{1b}[2J\u{1b}[1;1Hcleared", "cleared"),
            ("\u{1b}[38;5;196mred\u{1b}[0m", "red"),
            ("bell\u{7}\u{8}\r\u{0}", "bell"),
            ("\u{9b}31mc1\u{9d}0;t\u{9c}", "c1"),
            ("\u{1b}Pq#0;2;0;0;0\u{1b}\\dcs", "dcs"),
            ("\u{1b}(Bcharset", "charset"),
            ("\u{1b}cfull reset", "full reset"),
            ("cut at the end \u{1b}]0;no end", "cut at the end "),
            ("ünïcödé ✓", "ünïcödé ✓"),
        ];
        for (raw, shown) in cases {
            assert_eq!(clean(raw), shown, "{raw:?}");
        }
    }

    #[test]
    fn json_lines_escape_c1_and_del() {
        let json = serde_json::to_string("a\u{1b}b\u{9b}c\u{7f}").unwrap();
        let line = json_line(&json);
        assert!(line.chars().all(|c| !c.is_control()), "{line}");
        let back: String = serde_json::from_str(&line).unwrap();
        assert_eq!(back, "a\u{1b}b\u{9b}c\u{7f}");
    }

    #[test]
    fn a_broken_pipe_ends_the_output_quietly() {
        struct Closed;
        impl Write for Closed {
            fn write(&mut self, _: &[u8]) -> io::Result<usize> {
                Err(io::ErrorKind::BrokenPipe.into())
            }
            fn flush(&mut self) -> io::Result<()> {
                Ok(())
            }
        }
        assert!(write_clean(&mut Closed, "text").is_ok());
    }
}
