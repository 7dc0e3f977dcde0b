//! `edit_file {path, old_text, new_text}`: replaces one exact, unique match.
//!
//! No fuzzy matching: a wrong edit is worse than a failed one. When the text
//! is not found the failure says what is close (a whitespace-only
//! difference, or where its first line is) and suggests escalation, since a
//! model that cannot quote the file back usually will not manage the edit.

use std::path::Path;

use crate::chat::ToolSpec;
use crate::fsutil::atomic::write_atomic;
use crate::tools::checkpoints::TurnCheckpoint;
use crate::tools::client_files;
use crate::tools::diff;
use crate::tools::paths::{self, Access};
use crate::tools::{ToolContext, ToolOutput, arg_str};

/// Files bigger than this are not edited in memory.
const MAX_EDIT_BYTES: u64 = 10 * 1024 * 1024;

pub fn spec() -> ToolSpec {
    ToolSpec {
        name: "edit_file",
        description: "Replace old_text (must match exactly once) with new_text in a file.",
        parameters: serde_json::json!({
            "type": "object",
            "properties": {
                "path": {"type": "string"},
                "old_text": {"type": "string"},
                "new_text": {"type": "string"}
            },
            "required": ["path", "old_text", "new_text"]
        }),
    }
}

pub async fn run(args: &serde_json::Value, ctx: &ToolContext) -> ToolOutput {
    let (requested, old_text, new_text) = match string_args(args) {
        Ok(strings) => strings,
        Err(e) => return e,
    };
    if old_text.is_empty() {
        return ToolOutput::fail(
            "old_text is empty; to create or replace a whole file use write_file",
        );
    }
    if old_text == new_text {
        return ToolOutput::fail("old_text and new_text are the same; nothing to change");
    }
    let path = match ctx.resolve(requested, Access::Write) {
        Ok(p) => p,
        Err(e) => return ToolOutput::fail(e),
    };
    let shown = paths::display(&ctx.workspace, &path);
    if ctx.client_files.offered(&ctx.session).write {
        return through_editor(ctx, &path, &shown, old_text, new_text).await;
    }
    let (old_text, new_text) = (old_text.to_string(), new_text.to_string());
    let checkpoint = ctx.checkpoint.clone();
    let job = tokio::task::spawn_blocking(move || {
        edit(&path, &shown, &old_text, &new_text, checkpoint.as_deref())
    });
    match job.await {
        Ok(output) => output,
        Err(e) => ToolOutput::fail(format!("edit_file failed: {e}")),
    }
}

fn string_args(args: &serde_json::Value) -> Result<(&str, &str, &str), ToolOutput> {
    Ok((
        arg_str(args, "path")?,
        arg_str(args, "old_text")?,
        arg_str(args, "new_text")?,
    ))
}

/// The edit through the session's editor (`tools::client_files`): the
/// text as the editor has it (its unsaved buffer), else the disk's, and
/// the result written back through the editor.
async fn through_editor(
    ctx: &ToolContext,
    path: &Path,
    shown: &str,
    old_text: &str,
    new_text: &str,
) -> ToolOutput {
    let content = match client_files::read(ctx, path).await {
        Some(Ok(text)) => Ok(text),
        Some(Err(e)) => Err(format!("cannot read `{shown}` in the editor: {e}")),
        None => {
            let (path, shown) = (path.to_path_buf(), shown.to_string());
            tokio::task::spawn_blocking(move || load(&path, &shown))
                .await
                .unwrap_or_else(|e| Err(format!("edit_file failed: {e}")))
        }
    };
    let content = match content {
        Ok(content) => content,
        Err(e) => return ToolOutput::fail(e),
    };
    let (updated, summary) = match apply(&content, shown, old_text, new_text) {
        Ok(done) => done,
        Err(output) => return output,
    };
    if let Some(checkpoint) = &ctx.checkpoint {
        checkpoint.before_write(path, shown);
    }
    if let Some(Err(e)) = client_files::write(ctx, path, &updated).await {
        return ToolOutput::fail(format!("cannot write `{shown}` in the editor: {e}"));
    }
    let diff = diff::between(shown, Some(content.as_bytes()), updated.as_bytes());
    ToolOutput::ok(summary).with_diff(diff)
}

fn edit(
    path: &Path,
    shown: &str,
    old_text: &str,
    new_text: &str,
    checkpoint: Option<&TurnCheckpoint>,
) -> ToolOutput {
    let content = match load(path, shown) {
        Ok(c) => c,
        Err(e) => return ToolOutput::fail(e),
    };
    let (updated, summary) = match apply(&content, shown, old_text, new_text) {
        Ok(done) => done,
        Err(output) => return output,
    };
    // Kept for `/rewind` before it changes.
    if let Some(checkpoint) = checkpoint {
        checkpoint.before_write(path, shown);
    }
    if let Err(e) = write_atomic(path, updated.as_bytes()) {
        return ToolOutput::fail(format!("cannot write `{shown}`: {e}"));
    }
    let diff = diff::between(shown, Some(content.as_bytes()), updated.as_bytes());
    ToolOutput::ok(summary).with_diff(diff)
}

/// `content` with the one match of `old_text` replaced, and the line
/// that reports it; the failure to tell the model otherwise.
fn apply(
    content: &str,
    shown: &str,
    old_text: &str,
    new_text: &str,
) -> Result<(String, String), ToolOutput> {
    // Models write `\n`; a CRLF file would otherwise never match. Convert
    // both sides so the file keeps its line endings.
    let (old_text, new_text) = if content.contains("\r\n") && !old_text.contains('\r') {
        (
            old_text.replace('\n', "\r\n"),
            new_text.replace('\n', "\r\n"),
        )
    } else {
        (old_text.to_string(), new_text.to_string())
    };
    let starts = match_starts(content, &old_text);
    match starts.as_slice() {
        [] => Err(ToolOutput::fail_escalate(not_found_hint(
            content, &old_text, shown,
        ))),
        [start] => {
            let mut updated = String::with_capacity(content.len() + new_text.len());
            updated.push_str(&content[..*start]);
            updated.push_str(&new_text);
            updated.push_str(&content[start + old_text.len()..]);
            let line = line_of(content, *start);
            let removed = old_text.lines().count().max(1);
            let added = new_text.lines().count();
            Ok((
                updated,
                format!(
                    "edited {shown}: replaced {removed} line(s) at line {line} with {added} line(s)"
                ),
            ))
        }
        many => {
            let lines: Vec<String> = many
                .iter()
                .take(5)
                .map(|&s| line_of(content, s).to_string())
                .collect();
            Err(ToolOutput::fail(format!(
                "old_text matches {} times in {shown} (lines {}); include more surrounding lines so it matches once",
                many.len(),
                lines.join(", ")
            )))
        }
    }
}

fn load(path: &Path, shown: &str) -> Result<String, String> {
    let meta = std::fs::metadata(path).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => {
            format!("file not found: `{shown}`; to create it use write_file")
        }
        _ => format!("cannot read `{shown}`: {e}"),
    })?;
    if !meta.is_file() {
        return Err(format!("`{shown}` is not a regular file"));
    }
    if meta.len() > MAX_EDIT_BYTES {
        return Err(format!(
            "`{shown}` is {} MiB; edit_file handles files up to 10 MiB",
            meta.len() / (1024 * 1024)
        ));
    }
    let bytes = crate::fsutil::regular_file::read(path)
        .map_err(|e| format!("cannot read `{shown}`: {e}"))?;
    if bytes.contains(&0) {
        return Err(format!(
            "`{shown}` looks binary (it contains NUL bytes); edit_file edits text only"
        ));
    }
    String::from_utf8(bytes)
        .map_err(|_| format!("`{shown}` is not valid UTF-8; edit_file edits UTF-8 text only"))
}

/// Byte offsets of every match, overlapping ones included (`aa` in `aaa` is
/// two matches: replacing "the" one would be a guess).
fn match_starts(haystack: &str, needle: &str) -> Vec<usize> {
    let mut starts = Vec::new();
    let mut from = 0;
    while let Some(i) = haystack[from..].find(needle) {
        let at = from + i;
        starts.push(at);
        // Step one character, not one byte, to stay on a char boundary.
        from = at + haystack[at..].chars().next().map_or(1, char::len_utf8);
    }
    starts
}

fn line_of(content: &str, byte: usize) -> usize {
    content[..byte].matches('\n').count() + 1
}

/// Why nothing matched, as precisely as is cheap to tell.
fn not_found_hint(content: &str, old_text: &str, shown: &str) -> String {
    let squeeze = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
    let wanted = squeeze(old_text);
    // Compare line windows of the same height, ignoring whitespace.
    let height = old_text.trim_end_matches('\n').lines().count().max(1);
    let lines: Vec<&str> = content.lines().collect();
    if !wanted.is_empty() && height <= lines.len() {
        for (i, window) in lines.windows(height).enumerate() {
            if squeeze(&window.join("\n")) == wanted {
                let at = match height {
                    1 => format!("line {}", i + 1),
                    _ => format!("lines {}-{}", i + 1, i + height),
                };
                return format!(
                    "old_text is not in {shown} exactly, but {at} match when whitespace is ignored; copy the text exactly (indentation, tabs, trailing spaces) from read_file"
                );
            }
        }
    }
    let first_line = old_text.lines().map(str::trim).find(|l| !l.is_empty());
    if let Some(first_line) = first_line
        && let Some(i) = lines.iter().position(|l| l.contains(first_line))
    {
        let line = i + 1;
        return format!(
            "old_text is not in {shown}; its first line appears at line {line}, but what follows differs; read_file from offset {line} and copy the text exactly"
        );
    }
    format!(
        "old_text is not in {shown}; read the file with read_file and copy the text to replace exactly"
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::ExecApproval;
    use crate::tools::approval::test_context;
    use serde_json::json;

    async fn edit_args(dir: &Path, old: &str, new: &str) -> ToolOutput {
        let ctx = test_context(dir, ExecApproval::Deny);
        run(
            &json!({"path": "f.rs", "old_text": old, "new_text": new}),
            &ctx,
        )
        .await
    }

    fn setup(content: &str) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("f.rs"), content).unwrap();
        dir
    }

    fn content(dir: &tempfile::TempDir) -> String {
        std::fs::read_to_string(dir.path().join("f.rs")).unwrap()
    }

    #[tokio::test]
    async fn unique_match_is_replaced() {
        let dir = setup("fn a() {\n    1\n}\nfn b() {}\n");
        let out = edit_args(dir.path(), "    1\n", "    2\n    3\n").await;
        assert!(out.success, "{}", out.output);
        assert_eq!(
            out.output,
            "edited f.rs: replaced 1 line(s) at line 2 with 2 line(s)"
        );
        assert_eq!(content(&dir), "fn a() {\n    2\n    3\n}\nfn b() {}\n");
        // The user sees what changed; the model only the line above.
        let diff = out.diff.unwrap();
        assert_eq!((diff.added, diff.removed), (2, 1));
        assert_eq!(
            diff.text,
            "@@ -1,4 +1,5 @@\n fn a() {\n-    1\n+    2\n+    3\n }\n fn b() {}"
        );
    }

    #[tokio::test]
    async fn no_match_fails_with_escalation_and_hint() {
        let dir = setup("fn a() {\n\tlet x = 1;\n}\n");
        let out = edit_args(dir.path(), "    let x = 1;", "let x = 2;").await;
        assert!(!out.success && out.suggest_escalation);
        assert!(
            out.output.contains("whitespace is ignored") && out.output.contains("line 2 match"),
            "{}",
            out.output
        );

        let out = edit_args(dir.path(), "fn a() {\n    let y = 1;", "x").await;
        assert!(out.suggest_escalation);
        assert!(
            out.output.contains("first line appears at line 1"),
            "{}",
            out.output
        );

        let out = edit_args(dir.path(), "nothing like it", "x").await;
        assert!(out.suggest_escalation);
        assert!(out.output.contains("not in f.rs"), "{}", out.output);
        assert_eq!(content(&dir), "fn a() {\n\tlet x = 1;\n}\n");
    }

    #[tokio::test]
    async fn several_matches_fail_with_count_and_lines() {
        let dir = setup("x = 1\ny = 2\nx = 1\n");
        let out = edit_args(dir.path(), "x = 1", "x = 3").await;
        assert!(!out.success && !out.suggest_escalation);
        assert!(
            out.output.contains("matches 2 times") && out.output.contains("lines 1, 3"),
            "{}",
            out.output
        );
        // Overlapping matches count too.
        let dir = setup("aaa");
        let out = edit_args(dir.path(), "aa", "b").await;
        assert!(out.output.contains("matches 2 times"), "{}", out.output);
    }

    #[tokio::test]
    async fn crlf_files_keep_their_line_endings() {
        let dir = setup("one\r\ntwo\r\nthree\r\n");
        let out = edit_args(dir.path(), "one\ntwo\n", "1\n2\n").await;
        assert!(out.success, "{}", out.output);
        assert_eq!(content(&dir), "1\r\n2\r\nthree\r\n");
        let diff = out.diff.unwrap();
        assert_eq!((diff.added, diff.removed), (2, 2));
        assert!(!diff.text.contains('\r'), "{:?}", diff.text);
    }

    #[tokio::test]
    async fn refuses_missing_files_and_empty_old_text() {
        let dir = setup("x");
        let out = edit_args(dir.path(), "", "y").await;
        assert!(!out.success && out.output.contains("write_file"));
        let ctx = test_context(dir.path(), ExecApproval::Deny);
        let out = run(
            &json!({"path": "nope", "old_text": "a", "new_text": "b"}),
            &ctx,
        )
        .await;
        assert!(
            !out.success && out.output.contains("not found"),
            "{}",
            out.output
        );
        let out = run(
            &json!({"path": "../f.rs", "old_text": "a", "new_text": "b"}),
            &ctx,
        )
        .await;
        assert!(
            !out.success && out.output.contains("outside"),
            "{}",
            out.output
        );
    }
}
