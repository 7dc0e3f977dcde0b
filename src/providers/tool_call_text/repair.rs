//! Lenient JSON for tool calls.
//!
//! Small local models break JSON in a few predictable ways: Python-style
//! single quotes (and `True`/`None`), trailing commas, raw newlines inside
//! strings (a `write_file` body), and braces left open when generation stops
//! at max_tokens. Strict parsing is tried first; only on failure is the text
//! rewritten in one pass and parsed again.

use serde_json::Value;

/// Parses `raw` as JSON, repairing the breakages above.
///
/// A text cut off inside a string is refused even though it could be closed:
/// the value is incomplete (half a file, half a command) and running the
/// tool with it would do the wrong thing quietly.
pub fn parse_lenient(raw: &str) -> Result<Value, String> {
    let strict_error = match serde_json::from_str::<Value>(raw) {
        Ok(value) => return Ok(value),
        Err(e) => e,
    };
    let repaired = rewrite(raw);
    if repaired.cut_in_string {
        return Err("the JSON was cut off inside a string (max_tokens reached?), so the arguments are incomplete".into());
    }
    serde_json::from_str(&repaired.text).map_err(|_| format!("invalid JSON: {strict_error}"))
}

struct Rewritten {
    text: String,
    cut_in_string: bool,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum State {
    Outside,
    Double,
    Single,
}

fn rewrite(raw: &str) -> Rewritten {
    let mut out = String::with_capacity(raw.len() + 8);
    let mut closers: Vec<char> = Vec::new();
    let mut state = State::Outside;
    let mut escaped = false;
    let mut chars = raw.chars().peekable();
    while let Some(c) = chars.next() {
        match state {
            State::Outside => match c {
                '"' => {
                    out.push('"');
                    state = State::Double;
                }
                '\'' => {
                    out.push('"');
                    state = State::Single;
                }
                '{' => {
                    closers.push('}');
                    out.push(c);
                }
                '[' => {
                    closers.push(']');
                    out.push(c);
                }
                '}' | ']' => {
                    drop_trailing_comma(&mut out);
                    if closers.last() == Some(&c) {
                        closers.pop();
                    }
                    out.push(c);
                }
                c if c.is_ascii_alphabetic() => {
                    let mut word = String::from(c);
                    while let Some(&next) = chars.peek() {
                        if !(next.is_ascii_alphanumeric() || next == '_') {
                            break;
                        }
                        word.push(next);
                        chars.next();
                    }
                    out.push_str(match word.as_str() {
                        "True" => "true",
                        "False" => "false",
                        "None" => "null",
                        other => other,
                    });
                }
                _ => out.push(c),
            },
            State::Double => {
                if escaped {
                    out.push(c);
                    escaped = false;
                } else if c == '\\' {
                    out.push(c);
                    escaped = true;
                } else if c == '"' {
                    out.push(c);
                    state = State::Outside;
                } else {
                    push_string_char(&mut out, c);
                }
            }
            State::Single => {
                if escaped {
                    // `\'` only means something inside single quotes; every
                    // other escape is already valid JSON.
                    if c != '\'' {
                        out.push('\\');
                    }
                    push_string_char(&mut out, c);
                    escaped = false;
                } else if c == '\\' {
                    escaped = true;
                } else if c == '\'' {
                    out.push('"');
                    state = State::Outside;
                } else if c == '"' {
                    out.push_str("\\\"");
                } else {
                    push_string_char(&mut out, c);
                }
            }
        }
    }
    let cut_in_string = state != State::Outside;
    drop_trailing_comma(&mut out);
    while let Some(closer) = closers.pop() {
        out.push(closer);
    }
    Rewritten {
        text: out,
        cut_in_string,
    }
}

/// Inside a string: raw control characters are invalid JSON, so escape them.
fn push_string_char(out: &mut String, c: char) {
    match c {
        '\n' => out.push_str("\\n"),
        '\r' => out.push_str("\\r"),
        '\t' => out.push_str("\\t"),
        c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
        c => out.push(c),
    }
}

fn drop_trailing_comma(out: &mut String) {
    let kept = out.trim_end().len();
    if out[..kept].ends_with(',') {
        out.truncate(kept - 1);
    }
}

/// Finds the `"name": "..."` of a call whose JSON could not be repaired, so
/// the error sent back to the model can say which call was broken.
pub fn recover_name(raw: &str) -> Option<String> {
    for key in ["\"name\"", "'name'"] {
        let mut from = 0;
        while let Some(found) = raw[from..].find(key) {
            let after = from + found + key.len();
            from = after;
            let rest = raw[after..].trim_start();
            let Some(rest) = rest.strip_prefix(':') else {
                continue;
            };
            let rest = rest.trim_start();
            let Some(quote) = rest.chars().next().filter(|q| *q == '"' || *q == '\'') else {
                continue;
            };
            let value = &rest[1..];
            if let Some(end) = value.find(quote) {
                let name = &value[..end];
                if !name.is_empty() {
                    return Some(name.to_string());
                }
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn valid_json_is_untouched() {
        assert_eq!(parse_lenient(r#"{"a": [1, 2]}"#), Ok(json!({"a": [1, 2]})));
    }

    #[test]
    fn single_quotes_become_double() {
        let raw = r#"{'name': 'x', 'arguments': {'text': 'say "hi"', 'it': 'it\'s'}}"#;
        assert_eq!(
            parse_lenient(raw),
            Ok(json!({"name": "x", "arguments": {"text": "say \"hi\"", "it": "it's"}}))
        );
    }

    #[test]
    fn trailing_commas_and_python_literals() {
        let raw = "{\"a\": [1, 2,], \"b\": True, \"c\": None, \"d\": False,}";
        assert_eq!(
            parse_lenient(raw),
            Ok(json!({"a": [1, 2], "b": true, "c": null, "d": false}))
        );
    }

    #[test]
    fn unclosed_braces_are_closed() {
        let raw = r#"{"name": "read_file", "arguments": {"path": "a.txt""#;
        assert_eq!(
            parse_lenient(raw),
            Ok(json!({"name": "read_file", "arguments": {"path": "a.txt"}}))
        );
    }

    #[test]
    fn cut_inside_a_string_is_refused() {
        let err = parse_lenient(r#"{"content": "half a fi"#).unwrap_err();
        assert!(err.contains("cut off inside a string"), "{err}");
    }

    #[test]
    fn raw_newlines_in_strings_are_escaped() {
        let raw = "{\"content\": \"line 1\nline 2\"}";
        assert_eq!(parse_lenient(raw), Ok(json!({"content": "line 1\nline 2"})));
    }

    #[test]
    fn hopeless_text_reports_the_strict_error() {
        let err = parse_lenient("{\"a\" 1}").unwrap_err();
        assert!(err.starts_with("invalid JSON: "), "{err}");
        assert!(err.contains("column"), "{err}");
    }

    #[test]
    fn recovers_the_name_of_a_broken_call() {
        assert_eq!(
            recover_name(r#"{"name": "exec", "arguments": {{{"#),
            Some("exec".into())
        );
        assert_eq!(recover_name("{'name':'glob', oops"), Some("glob".into()));
        assert_eq!(recover_name("{\"arguments\": 1}"), None);
    }
}
