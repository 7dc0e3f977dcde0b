//! `write_file {path, content}`: creates or replaces a file, atomically.

use std::path::Path;

use crate::chat::ToolSpec;
use crate::fsutil::atomic::write_atomic;
use crate::protocol::FileDiff;
use crate::tools::checkpoints::TurnCheckpoint;
use crate::tools::client_files;
use crate::tools::diff;
use crate::tools::paths::{self, Access};
use crate::tools::{ToolContext, ToolOutput, arg_str};

pub fn spec() -> ToolSpec {
    ToolSpec {
        name: "write_file",
        description: "Create or overwrite a file; parent directories are created.",
        parameters: serde_json::json!({
            "type": "object",
            "properties": {
                "path": {"type": "string"},
                "content": {"type": "string"}
            },
            "required": ["path", "content"]
        }),
    }
}

pub async fn run(args: &serde_json::Value, ctx: &ToolContext) -> ToolOutput {
    let requested = match arg_str(args, "path") {
        Ok(p) => p,
        Err(e) => return e,
    };
    let content = match arg_str(args, "content") {
        Ok(c) => c.to_string(),
        Err(e) => return e,
    };
    let path = match ctx.resolve(requested, Access::Write) {
        Ok(p) => p,
        Err(e) => return ToolOutput::fail(e),
    };
    let shown = paths::display(&ctx.workspace, &path);
    if ctx.client_files.offered(&ctx.session).write && !path.is_dir() {
        return through_editor(ctx, &path, &shown, &content).await;
    }
    let checkpoint = ctx.checkpoint.clone();
    let job =
        tokio::task::spawn_blocking(move || write(&path, &content, &shown, checkpoint.as_deref()));
    match job.await {
        Ok(Ok((summary, diff))) => ToolOutput::ok(summary).with_diff(diff),
        Ok(Err(e)) => ToolOutput::fail(e),
        Err(e) => ToolOutput::fail(format!("write_file failed: {e}")),
    }
}

/// The write through the session's editor (`tools::client_files`): the
/// text before is the editor's (its unsaved buffer) when it reads files
/// too, else the disk's.
async fn through_editor(ctx: &ToolContext, path: &Path, shown: &str, content: &str) -> ToolOutput {
    let before = match client_files::read(ctx, path).await {
        Some(Ok(text)) => Some(text.into_bytes()),
        // Most often: no such file yet.
        Some(Err(_)) => None,
        None => crate::fsutil::regular_file::read(path).ok(),
    };
    if let Some(checkpoint) = &ctx.checkpoint {
        checkpoint.before_write(path, shown);
    }
    if let Some(Err(e)) = client_files::write(ctx, path, content).await {
        return ToolOutput::fail(format!("cannot write `{shown}` in the editor: {e}"));
    }
    let verb = if before.is_some() {
        "overwrote"
    } else {
        "created"
    };
    let lines = content.lines().count();
    let s = if lines == 1 { "" } else { "s" };
    let summary = format!("{verb} {shown} ({lines} line{s}, {} bytes)", content.len());
    let diff = diff::between(shown, before.as_deref(), content.as_bytes());
    ToolOutput::ok(summary).with_diff(diff)
}

fn write(
    path: &Path,
    content: &str,
    shown: &str,
    checkpoint: Option<&TurnCheckpoint>,
) -> Result<(String, FileDiff), String> {
    if path.is_dir() {
        return Err(format!("`{shown}` is a directory; give a file path"));
    }
    // A FIFO, socket or device is refused, not replaced.
    if let Ok(meta) = std::fs::metadata(path) {
        crate::fsutil::regular_file::check(&meta)
            .map_err(|e| format!("cannot write `{shown}`: {e}"))?;
    }
    let existed = path.exists();
    let before = previous(path, existed);
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)
            .map_err(|e| format!("cannot create the directory for `{shown}`: {e}"))?;
    }
    // Kept for `/rewind` before it changes.
    if let Some(checkpoint) = checkpoint {
        checkpoint.before_write(path, shown);
    }
    write_atomic(path, content.as_bytes()).map_err(|e| format!("cannot write `{shown}`: {e}"))?;
    let verb = if existed { "overwrote" } else { "created" };
    let lines = content.lines().count();
    let s = if lines == 1 { "" } else { "s" };
    let summary = format!("{verb} {shown} ({lines} line{s}, {} bytes)", content.len());
    let diff = match before {
        Previous::Bytes(old) => diff::between(shown, old.as_deref(), content.as_bytes()),
        Previous::TooLarge(len) => FileDiff {
            path: shown.to_string(),
            text: format!(
                "(no diff: too large to diff, {len} → {} bytes)",
                content.len()
            ),
            ..FileDiff::default()
        },
    };
    Ok((summary, diff))
}

/// What the file held before the write, for the diff.
enum Previous {
    /// `None`: there was no file (or it could not be read).
    Bytes(Option<Vec<u8>>),
    TooLarge(u64),
}

fn previous(path: &Path, existed: bool) -> Previous {
    if !existed {
        return Previous::Bytes(None);
    }
    match std::fs::metadata(path) {
        Ok(meta) if meta.len() > diff::MAX_INPUT as u64 => Previous::TooLarge(meta.len()),
        _ => Previous::Bytes(crate::fsutil::regular_file::read(path).ok()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::ExecApproval;
    use crate::tools::approval::test_context;
    use serde_json::json;

    #[tokio::test]
    async fn creates_parent_dirs_and_reports_size() {
        let dir = tempfile::tempdir().unwrap();
        let ctx = test_context(dir.path(), ExecApproval::Deny);
        let out = run(&json!({"path": "a/b/c.md", "content": "one\ntwo\n"}), &ctx).await;
        assert!(out.success, "{}", out.output);
        assert_eq!(out.output, "created a/b/c.md (2 lines, 8 bytes)");
        let diff = out.diff.unwrap();
        assert_eq!(
            (diff.path.as_str(), diff.added, diff.removed),
            ("a/b/c.md", 2, 0)
        );
        let text = std::fs::read_to_string(dir.path().join("a/b/c.md")).unwrap();
        assert_eq!(text, "one\ntwo\n");

        let out = run(&json!({"path": "a/b/c.md", "content": "x"}), &ctx).await;
        assert_eq!(out.output, "overwrote a/b/c.md (1 line, 1 bytes)");
        let diff = out.diff.unwrap();
        assert_eq!((diff.added, diff.removed), (1, 2));
        assert!(
            diff.text.ends_with("+x\n\\ No newline at end of file"),
            "{}",
            diff.text
        );
        // No temporary files are left behind.
        assert_eq!(
            std::fs::read_dir(dir.path().join("a/b")).unwrap().count(),
            1
        );
    }

    #[tokio::test]
    async fn refuses_escapes_directories_and_missing_args() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        let ctx = test_context(dir.path(), ExecApproval::Deny);
        let out = run(&json!({"path": "../evil.txt", "content": "x"}), &ctx).await;
        assert!(
            !out.success && out.output.contains("outside"),
            "{}",
            out.output
        );
        let out = run(&json!({"path": "sub", "content": "x"}), &ctx).await;
        assert!(
            !out.success && out.output.contains("directory"),
            "{}",
            out.output
        );
        let out = run(
            &json!({"path": ".egirl/approvals.toml", "content": "allow=['rm']"}),
            &ctx,
        )
        .await;
        assert!(!out.success, "{}", out.output);
        let out = run(&json!({"path": "x"}), &ctx).await;
        assert!(
            !out.success && out.output.contains("content"),
            "{}",
            out.output
        );
    }
}
