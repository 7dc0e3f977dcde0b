//! The unified diff of a `write_file`/`edit_file` change, as surfaces show
//! it under the call. Computed here, in the core (surfaces never import
//! tools); it travels on the `tool_result` event and never to the model,
//! whose prompt budget has room for the one-line summary only.
//!
//! Bounded: a huge change keeps its first lines and bytes and says how many
//! more there were; binary, non-UTF-8 or oversized content says so instead.

use std::time::{Duration, Instant};

use similar::{Algorithm, ChangeTag, TextDiff};

use crate::protocol::FileDiff;

/// Unchanged lines shown around each change.
const CONTEXT: usize = 3;
/// Diff lines kept in the text.
pub const MAX_LINES: usize = 400;
/// Bytes kept in the text.
pub const MAX_BYTES: usize = 32 * 1024;
/// Bytes kept of one line (a minified file is one very long line).
const LINE_BYTES: usize = 1024;
/// Either side above this is not diffed at all.
pub const MAX_INPUT: usize = 4 * 1024 * 1024;
/// Myers on two unrelated large files is quadratic; past this the diff
/// gets coarser (still correct), never slower.
const DEADLINE: Duration = Duration::from_millis(500);

/// The change from `before` (`None`: the file did not exist) to `after`.
pub fn between(path: &str, before: Option<&[u8]>, after: &[u8]) -> FileDiff {
    let old = before.unwrap_or_default();
    let note = |text: String| FileDiff {
        path: path.to_string(),
        added: 0,
        removed: 0,
        text,
    };
    if old.len() > MAX_INPUT || after.len() > MAX_INPUT {
        return note(format!(
            "(no diff: too large to diff, {} → {} bytes)",
            old.len(),
            after.len()
        ));
    }
    let (Some(old_text), Some(new_text)) = (text_of(old), text_of(after)) else {
        return note(format!(
            "(no diff: binary or non-UTF-8 content, {} → {} bytes)",
            old.len(),
            after.len()
        ));
    };
    if old == after {
        return note("(no changes)".into());
    }
    let mut out = Capped::default();
    let crlf = old_text.contains('\r') || new_text.contains('\r');
    if crlf && old_text.replace("\r\n", "\n") == new_text.replace("\r\n", "\n") {
        out.push(String::from("(only line endings changed)"));
    }
    let (skipped, old_mid, new_mid) = trim_common(old_text, new_text);
    let diff = TextDiff::configure()
        .algorithm(Algorithm::Myers)
        .deadline(Instant::now() + DEADLINE)
        .diff_lines(old_mid, new_mid);
    let (mut added, mut removed) = (0, 0);
    for group in diff.grouped_ops(CONTEXT) {
        out.push(hunk_header(&group, skipped));
        for op in &group {
            for change in diff.iter_changes(op) {
                let sign = match change.tag() {
                    ChangeTag::Equal => ' ',
                    ChangeTag::Insert => {
                        added += 1;
                        '+'
                    }
                    ChangeTag::Delete => {
                        removed += 1;
                        '-'
                    }
                };
                let line = change.value();
                let body = line.strip_suffix('\n').unwrap_or(line);
                // A CRLF file shows its lines, not a stray `\r` each.
                let body = body.strip_suffix('\r').unwrap_or(body);
                out.push(format!("{sign}{body}"));
                if !line.ends_with('\n') {
                    out.push(String::from("\\ No newline at end of file"));
                }
            }
        }
    }
    FileDiff {
        path: path.to_string(),
        added,
        removed,
        text: out.finish(),
    }
}

/// The lines both sides share at the start and at the end, past the
/// context a hunk shows, left out: an edit in a big file costs a compare,
/// not a diff of the whole file. Returns the lines skipped at the start.
fn trim_common<'a>(old: &'a str, new: &'a str) -> (usize, &'a str, &'a str) {
    let a: Vec<&str> = old.split_inclusive('\n').collect();
    let b: Vec<&str> = new.split_inclusive('\n').collect();
    let prefix = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let room = a.len().min(b.len()) - prefix;
    let suffix = a
        .iter()
        .rev()
        .zip(b.iter().rev())
        .take(room)
        .take_while(|(x, y)| x == y)
        .count();
    let skip = prefix.saturating_sub(CONTEXT);
    let drop = suffix.saturating_sub(CONTEXT);
    let bytes = |lines: &[&str]| lines.iter().map(|l| l.len()).sum::<usize>();
    let start = bytes(&a[..skip]);
    let old_end = old.len() - bytes(&a[a.len() - drop..]);
    let new_end = new.len() - bytes(&b[b.len() - drop..]);
    (skip, &old[start..old_end], &new[start..new_end])
}

/// `@@ -a,b +c,d @@` for a group of ops on lines offset by `skipped`
/// (unified diff's convention: 1-based; a count of 1 left out; an empty
/// range names the line before it).
fn hunk_header(group: &[similar::DiffOp], skipped: usize) -> String {
    let (Some(first), Some(last)) = (group.first(), group.last()) else {
        return String::new();
    };
    let range = |start: usize, end: usize| {
        let len = end - start;
        match len {
            0 => format!("{},0", start + skipped),
            1 => format!("{}", start + skipped + 1),
            _ => format!("{},{len}", start + skipped + 1),
        }
    };
    format!(
        "@@ -{} +{} @@",
        range(first.old_range().start, last.old_range().end),
        range(first.new_range().start, last.new_range().end)
    )
}

/// Text when the bytes are UTF-8 without NUL bytes (NUL: binary).
fn text_of(bytes: &[u8]) -> Option<&str> {
    if bytes.contains(&0) {
        return None;
    }
    std::str::from_utf8(bytes).ok()
}

/// Lines kept up to the caps; the rest only counted.
#[derive(Default)]
struct Capped {
    text: String,
    lines: usize,
    left_out: usize,
}

impl Capped {
    fn push(&mut self, mut line: String) {
        if line.len() > LINE_BYTES {
            let mut cut = LINE_BYTES;
            while !line.is_char_boundary(cut) {
                cut -= 1;
            }
            line.truncate(cut);
            line.push('…');
        }
        let fits = self.lines < MAX_LINES && self.text.len() + line.len() < MAX_BYTES;
        if self.left_out > 0 || !fits {
            self.left_out += 1;
            return;
        }
        self.text.push_str(&line);
        self.text.push('\n');
        self.lines += 1;
    }

    fn finish(mut self) -> String {
        if self.left_out > 0 {
            let s = if self.left_out == 1 { "" } else { "s" };
            self.text.push_str(&format!(
                "… {} more diff line{s} not shown (capped at {MAX_LINES} lines, {} KiB)\n",
                self.left_out,
                MAX_BYTES / 1024
            ));
        }
        // One line per diff line; no trailing newline to split on.
        self.text.pop();
        self.text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(d: &FileDiff) -> Vec<&str> {
        d.text.lines().collect()
    }

    #[test]
    fn an_edit_shows_its_hunk_with_context_and_counts() {
        let old = "a\nb\nc\nd\ne\nf\ng\nh\n";
        let new = "a\nb\nc\nd\nE\nf\ng\nh\n";
        let d = between("x.txt", Some(old.as_bytes()), new.as_bytes());
        assert_eq!((d.added, d.removed), (1, 1));
        assert_eq!(
            lines(&d),
            [
                "@@ -2,7 +2,7 @@",
                " b",
                " c",
                " d",
                "-e",
                "+E",
                " f",
                " g",
                " h"
            ]
        );
        assert_eq!(d.path, "x.txt");
    }

    #[test]
    fn a_new_file_is_all_additions() {
        let d = between("n.md", None, b"one\ntwo\n");
        assert_eq!((d.added, d.removed), (2, 0));
        assert_eq!(lines(&d), ["@@ -0,0 +1,2 @@", "+one", "+two"]);
        // An empty file that already existed reads the same.
        assert_eq!(between("n.md", Some(b""), b"one\ntwo\n").text, d.text);
    }

    #[test]
    fn no_change_says_so() {
        let d = between("same", Some(b"x\n"), b"x\n");
        assert_eq!((d.added, d.removed), (0, 0));
        assert_eq!(d.text, "(no changes)");
    }

    #[test]
    fn crlf_lines_show_without_carriage_returns() {
        let d = between("w.txt", Some(b"one\r\ntwo\r\n"), b"one\r\n2\r\n");
        assert_eq!((d.added, d.removed), (1, 1));
        assert_eq!(lines(&d), ["@@ -1,2 +1,2 @@", " one", "-two", "+2"]);
        assert!(!d.text.contains('\r'));
        // Only the endings changed: the lines look alike, the note says why.
        let d = between("w.txt", Some(b"one\r\ntwo\r\n"), b"one\ntwo\n");
        assert_eq!((d.added, d.removed), (2, 2));
        assert_eq!(lines(&d)[0], "(only line endings changed)");
    }

    #[test]
    fn far_edits_in_a_long_file_keep_their_line_numbers() {
        let old: String = (1..=10_000).map(|i| format!("l{i}\n")).collect();
        let new = old
            .replacen("l5000\n", "five thousand\n", 1)
            .replacen("l9999\n", "", 1);
        let d = between("long", Some(old.as_bytes()), new.as_bytes());
        assert_eq!((d.added, d.removed), (1, 2));
        assert_eq!(
            lines(&d),
            [
                "@@ -4997,7 +4997,7 @@",
                " l4997",
                " l4998",
                " l4999",
                "-l5000",
                "+five thousand",
                " l5001",
                " l5002",
                " l5003",
                "@@ -9996,5 +9996,4 @@",
                " l9996",
                " l9997",
                " l9998",
                "-l9999",
                " l10000",
            ]
        );
        // Lines added at the very start and removed at the very end.
        let d = between("f", Some(b"a\nb\n"), b"new\na\nb\n");
        assert_eq!(lines(&d), ["@@ -1,2 +1,3 @@", "+new", " a", " b"]);
        let d = between("f", Some(b"a\nb\nc\nd\ne\n"), b"a\nb\nc\nd\n");
        assert_eq!(lines(&d), ["@@ -2,4 +2,3 @@", " b", " c", " d", "-e"]);
    }

    #[test]
    fn a_missing_final_newline_is_marked() {
        let d = between("f", Some(b"a\n"), b"a\nb");
        assert_eq!(
            lines(&d),
            ["@@ -1 +1,2 @@", " a", "+b", "\\ No newline at end of file"]
        );
    }

    #[test]
    fn a_huge_change_is_capped_in_lines_with_a_marker_and_true_counts() {
        let new: String = (0..5000).map(|i| format!("line {i}\n")).collect();
        let d = between("big", None, new.as_bytes());
        assert_eq!((d.added, d.removed), (5000, 0));
        let shown = lines(&d);
        assert_eq!(shown.len(), MAX_LINES + 1);
        assert_eq!(
            shown[MAX_LINES],
            "… 4601 more diff lines not shown (capped at 400 lines, 32 KiB)"
        );
        assert_eq!(shown[MAX_LINES - 1], "+line 398");
    }

    #[test]
    fn long_lines_are_capped_in_bytes() {
        let long = format!("{}\n", "é".repeat(5_000));
        let d = between("wide", None, long.repeat(40).as_bytes());
        assert_eq!(d.added, 40);
        assert!(d.text.len() < MAX_BYTES + 100, "{}", d.text.len());
        let shown = lines(&d);
        // Each line cut at a character boundary, marked; the rest counted.
        assert!(shown[1].len() <= LINE_BYTES + 4 && shown[1].ends_with("é…"));
        let kept = shown.len() - 2;
        assert!(kept < 40);
        assert_eq!(
            shown[shown.len() - 1],
            format!(
                "… {} more diff lines not shown (capped at 400 lines, 32 KiB)",
                40 - kept
            )
        );
    }

    #[test]
    fn binary_non_utf8_and_oversized_content_say_so() {
        let d = between("img.png", Some(b"\x89PNG\0\x01"), b"text\n");
        assert_eq!(
            d.text,
            "(no diff: binary or non-UTF-8 content, 6 → 5 bytes)"
        );
        let d = between("latin1.txt", Some(b"caf\xe9\n"), b"cafe\n");
        assert!(d.text.contains("non-UTF-8"), "{}", d.text);
        assert_eq!((d.added, d.removed), (0, 0));
        let huge = vec![b'a'; MAX_INPUT + 1];
        let d = between("huge", None, &huge);
        assert!(d.text.starts_with("(no diff: too large"), "{}", d.text);
    }
}
