//! Where a key or a value is written in a config's text, for errors that
//! name `file:line:col` (serde gives a position for what it rejects; the
//! checks after it, here and in start-up, find theirs from the key).

use std::path::Path;

use super::ConfigError;

impl ConfigError {
    /// An error about `key` (dotted, `routing.always_local`) found after
    /// parsing: positioned at `value` inside the key's value when given
    /// and found there (a rule in a list), else at the key, else at a
    /// `[key]` table header (an MCP server's name).
    pub fn at(
        text: &str,
        file: &Path,
        key: &str,
        value: Option<&str>,
        message: impl Into<String>,
    ) -> Self {
        let at_key = find_key(text, key);
        let (line, column) = value
            .and_then(|value| find_value(text, at_key.0?, value))
            .map(|(l, c)| (Some(l), Some(c)))
            .or_else(|| at_key.0.is_some().then_some(at_key))
            .or_else(|| find_table(text, key).map(|l| (Some(l), Some(1))))
            .unwrap_or((None, None));
        Self {
            file: file.to_path_buf(),
            line,
            column,
            key: Some(key.to_string()),
            message: message.into(),
        }
    }
}

/// A header's dotted name with the quotes of its parts taken off
/// (`[mcp.servers."fs"]` is `mcp.servers.fs`); None for other lines.
fn header_name(line: &str) -> Option<String> {
    let header = line.trim_start().strip_prefix('[')?;
    let name = header.trim_start_matches('[').split(']').next()?;
    Some(
        name.split('.')
            .map(|p| p.trim().trim_matches('"').trim_matches('\''))
            .collect::<Vec<_>>()
            .join("."),
    )
}

/// Best-effort position of `a.b.c` in the text: the line of `c = ` inside `[a.b]`.
pub(super) fn find_key(text: &str, dotted: &str) -> (Option<usize>, Option<usize>) {
    let dotted = dotted.split('[').next().unwrap_or(dotted);
    let (table, leaf) = dotted.rsplit_once('.').unwrap_or(("", dotted));
    let mut in_table = table.is_empty();
    for (n, line) in text.lines().enumerate() {
        let trimmed = line.trim_start();
        if let Some(name) = header_name(trimmed) {
            in_table = name == table;
            continue;
        }
        if in_table
            && let Some((key, _)) = trimmed.split_once('=')
            && key.trim().trim_matches('"') == leaf
        {
            return (Some(n + 1), Some(line.len() - trimmed.len() + 1));
        }
    }
    (None, None)
}

/// The line and column of the string `value` (quoted) in the value that
/// starts on line `from` (1-based), before the next table header.
fn find_value(text: &str, from: usize, value: &str) -> Option<(usize, usize)> {
    for (n, line) in text.lines().enumerate().skip(from - 1) {
        if n + 1 > from && header_name(line).is_some() {
            return None;
        }
        for quoted in [format!("\"{value}\""), format!("'{value}'")] {
            if let Some(at) = line.find(&quoted) {
                return Some((n + 1, line[..at].chars().count() + 1));
            }
        }
    }
    None
}

/// The line (1-based) of the `[dotted]` table header.
fn find_table(text: &str, dotted: &str) -> Option<usize> {
    text.lines()
        .position(|line| header_name(line).as_deref() == Some(dotted))
        .map(|n| n + 1)
}

/// `table.key` for a `key = value` line (1-based), from the nearest header above.
pub(super) fn key_on_line(text: &str, line: usize) -> Option<String> {
    let lines: Vec<&str> = text.lines().collect();
    let (key, _) = lines.get(line.checked_sub(1)?)?.split_once('=')?;
    let key = key.trim().trim_matches('"');
    if key.is_empty() || key.starts_with('[') || key.starts_with('#') {
        return None;
    }
    let table = lines[..line - 1].iter().rev().find_map(|l| {
        let header = l.trim().strip_prefix('[')?;
        Some(
            header
                .trim_start_matches('[')
                .split(']')
                .next()?
                .trim()
                .to_string(),
        )
    });
    Some(match table {
        Some(t) if !t.is_empty() => format!("{t}.{key}"),
        _ => key.to_string(),
    })
}

pub(super) fn line_col(text: &str, offset: usize) -> (Option<usize>, Option<usize>) {
    let offset = offset.min(text.len());
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (Some(line), Some(column))
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = "[routing]\nalways_local = [\n  \"code\",\n  \"greting\",\n]\n[mcp.servers.\"my fs\"]\ncommand = \"x\"\n";

    #[test]
    fn a_value_in_a_list_a_key_and_a_quoted_table_are_found() {
        let at = |key, value| {
            let e = ConfigError::at(TEXT, Path::new("c.toml"), key, value, "bad");
            (e.line, e.column)
        };
        assert_eq!(
            at("routing.always_local", Some("greting")),
            (Some(4), Some(3))
        );
        assert_eq!(at("routing.always_local", Some("gone")), (Some(2), Some(1)));
        assert_eq!(at("mcp.servers.my fs", None), (Some(6), Some(1)));
        assert_eq!(at("mcp.servers.my fs.command", None), (Some(7), Some(1)));
        assert_eq!(at("heartbeat.active_hours", None), (None, None));
    }
}
