//! The open end of a streaming answer, made to render as it will once it
//! is whole, so the screen does not jump when the rest arrives: a table
//! whose delimiter row has not arrived yet (only `| a | b |` so far)
//! shows as a table rather than as raw `|` text, a fence still being
//! typed (`` ` ``, ``` `` ```) is held back rather than shown as text, and
//! a `**` or `` ` `` opened on the last line is closed.

use std::borrow::Cow;

/// `text` (the part of an answer still streaming) completed so that
/// half-arrived markdown renders as what it becomes. Text inside an open
/// code fence is left alone.
pub fn provisional(text: &str) -> Cow<'_, str> {
    let body = text.strip_suffix('\n').unwrap_or(text);
    let lines: Vec<&str> = body.split('\n').collect();
    let last = lines.len() - 1;
    let line = lines[last];
    // A fence being typed (opening or closing): hold it back until it is one.
    let typed = !text.ends_with('\n') && matches!(line.trim_start(), "`" | "``" | "~" | "~~");
    if typed {
        return Cow::Owned(join(&lines[..last]));
    }
    if in_fence(&lines[..last]) {
        return Cow::Borrowed(text);
    }
    // A row with no cell yet (`|`) would end a table: hold it back too.
    if line.trim() == "|" && last > 0 {
        let rest = join(&lines[..last]) + "\n";
        return Cow::Owned(provisional(&rest).into_owned());
    }
    if let Some(table) = half_table(&lines) {
        return Cow::Owned(table);
    }
    let mut out = text.to_string();
    let opener = ["|", "```", "~~~"];
    if !text.ends_with('\n') && !opener.iter().any(|o| line.trim_start().starts_with(o)) {
        // The closing marker of an emphasis or code span still to come.
        if line.matches('`').count() % 2 == 1 {
            out.push('`');
        } else if line.matches("**").count() % 2 == 1 && !line.trim_end().ends_with("**") {
            out.push_str("**");
        }
    }
    if out == text {
        Cow::Borrowed(text)
    } else {
        Cow::Owned(out)
    }
}

/// Whether `lines` leave a code fence open.
fn in_fence(lines: &[&str]) -> bool {
    lines
        .iter()
        .filter(|l| {
            let t = l.trim_start();
            t.starts_with("```") || t.starts_with("~~~")
        })
        .count()
        % 2
        == 1
}

/// A table whose header row has arrived but whose delimiter row has not
/// (or only in part): the lines with a delimiter row for the header's
/// cells in its place. `None` when the end is no such table.
fn half_table(lines: &[&str]) -> Option<String> {
    let n = lines.len();
    let is_row = |l: &str| l.trim_start().starts_with('|');
    let starts_block = |i: usize| i == 0 || lines[i - 1].trim().is_empty();
    // The header alone, or the header and a delimiter being typed.
    let header = if is_row(lines[n - 1]) && starts_block(n - 1) {
        n - 1
    } else if n >= 2 && is_row(lines[n - 2]) && starts_block(n - 2) && is_delimiter(lines[n - 1]) {
        // A whole delimiter row (its alignment colons count): a table already.
        let whole = lines[n - 1].trim_end().ends_with('|');
        if whole && cells(lines[n - 1]) == cells(lines[n - 2]) {
            return None;
        }
        n - 2
    } else {
        return None;
    };
    let cells = cells(lines[header]);
    let mut out = join(&lines[..header]);
    if !out.is_empty() {
        out.push('\n');
    }
    if cells == 0 {
        // Just `|` so far: nothing to show yet.
        return Some(out);
    }
    out.push_str(lines[header]);
    out.push_str("\n|");
    out.push_str(&"---|".repeat(cells));
    out.push('\n');
    Some(out)
}

/// Whether a line is (the start of) a delimiter row: pipes, dashes,
/// colons and blanks only.
fn is_delimiter(line: &str) -> bool {
    let t = line.trim();
    t.starts_with('|') && t.chars().all(|c| matches!(c, '|' | '-' | ':' | ' '))
}

/// The cells of a table row: text between unescaped pipes, the outer
/// pipes optional.
fn cells(row: &str) -> usize {
    let t = row.trim();
    let t = t.strip_prefix('|').unwrap_or(t);
    let t = t
        .strip_suffix('|')
        .filter(|s| !s.ends_with('\\'))
        .unwrap_or(t);
    if t.trim().is_empty() {
        return 0;
    }
    let mut count = 1;
    let mut escaped = false;
    for c in t.chars() {
        match c {
            '\\' => escaped = !escaped,
            '|' if !escaped => count += 1,
            _ => escaped = false,
        }
    }
    count
}

fn join(lines: &[&str]) -> String {
    lines.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_header_alone_gets_its_delimiter_row() {
        assert_eq!(provisional("| a | b |"), "| a | b |\n|---|---|\n");
        assert_eq!(
            provisional("intro\n\n| a | b"),
            "intro\n\n| a | b\n|---|---|\n"
        );
        assert_eq!(provisional("| a | b |\n|--"), "| a | b |\n|---|---|\n");
        assert_eq!(provisional("intro\n\n|"), "intro\n\n");
        // A whole table, a pipe inside a paragraph, code: as they are.
        let whole = "| a | b |\n|---|---|\n| 1";
        assert_eq!(provisional(whole), whole);
        assert_eq!(provisional("| a |\n|---|\n|"), "| a |\n|---|\n");
        assert_eq!(provisional("| a |\n|"), "| a |\n|---|\n");
        assert_eq!(provisional("x\n| a |"), "x\n| a |");
        assert_eq!(provisional("```\n| a |"), "```\n| a |");
    }

    #[test]
    fn a_fence_being_typed_is_held_back_and_open_spans_are_closed() {
        assert_eq!(provisional("Run:\n\n``"), "Run:\n");
        assert_eq!(provisional("some **bold"), "some **bold**");
        assert_eq!(provisional("call `make"), "call `make`");
        assert_eq!(provisional("done **bold**"), "done **bold**");
        assert_eq!(provisional("```sh\nls `pwd"), "```sh\nls `pwd");
        assert_eq!(provisional("```sh"), "```sh");
        assert_eq!(provisional("```sh\nls\n``"), "```sh\nls");
    }
}
