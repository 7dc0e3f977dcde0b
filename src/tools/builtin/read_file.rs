//! `read_file {path, offset?, limit?}`: a range of lines of a text file.
//!
//! The file is streamed, never loaded whole: only the requested lines are
//! kept, and the output stops at [`MAX_OUTPUT`] bytes with a note saying which
//! offset continues. Lines are shown without numbers (they cost tokens and
//! small models copy them into `edit_file`); the header gives the range.

use std::io::{BufRead, BufReader};
use std::path::Path;

use crate::chat::ToolSpec;
use crate::tools::client_files;
use crate::tools::paths::{self, Access};
use crate::tools::{ToolContext, ToolOutput, arg_str, arg_u64};

const DEFAULT_LIMIT: u64 = 400;
/// Bytes of file text returned per call.
pub const MAX_OUTPUT: usize = 32 * 1024;
/// Bigger files are not scanned to the end just to count their lines.
const COUNT_LINES_UP_TO: u64 = 10 * 1024 * 1024;
/// A NUL byte in the first this-many bytes means binary (git's heuristic).
const SNIFF_BYTES: usize = 8192;

pub fn spec() -> ToolSpec {
    ToolSpec {
        name: "read_file",
        description: "Read a text file, 400 lines at most (offset: 1-based first line; limit: line count), or look at an image (PNG, JPEG, WebP, GIF).",
        parameters: serde_json::json!({
            "type": "object",
            "properties": {
                "path": {"type": "string"},
                "offset": {"type": "integer"},
                "limit": {"type": "integer"}
            },
            "required": ["path"]
        }),
    }
}

pub async fn run(args: &serde_json::Value, ctx: &ToolContext) -> ToolOutput {
    let requested = match arg_str(args, "path") {
        Ok(p) => p,
        Err(e) => return e,
    };
    let (offset, limit) = match (arg_u64(args, "offset"), arg_u64(args, "limit")) {
        (Ok(o), Ok(l)) => (o, l),
        (Err(e), _) | (_, Err(e)) => return e,
    };
    // 0 is what small models send for "from the start" / "default".
    let first = offset.filter(|&o| o > 0).unwrap_or(1);
    let limit = limit.filter(|&l| l > 0).unwrap_or(DEFAULT_LIMIT);
    let path = match ctx.resolve(requested, Access::Read) {
        Ok(p) => p,
        Err(e) => return ToolOutput::fail(e),
    };
    let shown = paths::display(&ctx.workspace, &path);
    if super::read_image::is_image(&path) {
        return super::read_image::run(path, shown, ctx).await;
    }
    // A skill's `{baseDir}` means its folder: the model reads it resolved.
    let base_dir = ctx
        .skills
        .snapshot()
        .by_file(&path)
        .map(|s| s.base_dir.clone());
    // Through the session's editor when it serves files: its text, an
    // unsaved buffer included (`tools::client_files`).
    let editor = match path.is_dir() {
        true => None,
        false => client_files::read(ctx, &path).await,
    };
    let job = match editor {
        Some(Ok(text)) => tokio::task::spawn_blocking(move || {
            let size = text.len() as u64;
            read_lines(text.as_bytes(), size, &shown, first, limit)
        }),
        Some(Err(e)) => {
            return ToolOutput::fail(format!("cannot read `{shown}` in the editor: {e}"));
        }
        None => tokio::task::spawn_blocking(move || read(&path, &shown, first, limit)),
    };
    match job.await {
        Ok(Ok(text)) => ToolOutput::ok(match base_dir {
            Some(dir) => crate::skills::skill::expand_base_dir(&text, &dir),
            None => text,
        }),
        Ok(Err(e)) => ToolOutput::fail(e),
        Err(e) => ToolOutput::fail(format!("read_file failed: {e}")),
    }
}

/// Reads lines `first..first+limit` (1-based) of `path`.
fn read(path: &Path, shown: &str, first: u64, limit: u64) -> Result<String, String> {
    let meta = match std::fs::metadata(path) {
        Ok(meta) => meta,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(format!("file not found: `{shown}`; use glob to find files"));
        }
        Err(e) => return Err(format!("cannot read `{shown}`: {e}")),
    };
    if meta.is_dir() {
        return Err(format!(
            "`{shown}` is a directory; use glob to list its files"
        ));
    }
    if !meta.is_file() {
        return Err(format!("`{shown}` is not a regular file"));
    }
    let file = crate::fsutil::regular_file::open(path)
        .map_err(|e| format!("cannot read `{shown}`: {e}"))?;
    let reader = BufReader::with_capacity(64 * 1024, file);
    read_lines(reader, meta.len(), shown, first, limit)
}

/// Lines `first..first+limit` (1-based) of what `reader` reads (`size`
/// bytes in all): the file, or the editor's text of it.
fn read_lines(
    mut reader: impl BufRead,
    size: u64,
    shown: &str,
    first: u64,
    limit: u64,
) -> Result<String, String> {
    let io_err = |e: std::io::Error| format!("cannot read `{shown}`: {e}");

    let head = reader.fill_buf().map_err(io_err)?;
    if head[..head.len().min(SNIFF_BYTES)].contains(&0) {
        return Err(format!(
            "`{shown}` looks binary (it contains NUL bytes); read_file reads text only"
        ));
    }

    let last = first.saturating_add(limit - 1);
    let mut scan = Scan::new(first, last);
    let mut reached_eof = false;
    loop {
        let chunk = reader.fill_buf().map_err(io_err)?;
        if chunk.is_empty() {
            reached_eof = true;
            break;
        }
        let len = chunk.len();
        scan.feed(chunk);
        reader.consume(len);
        if (scan.line > last || scan.full) && size > COUNT_LINES_UP_TO {
            break;
        }
    }
    let total = reached_eof.then(|| scan.total_lines());

    if total == Some(0) {
        return Ok(format!("{shown} (empty file)"));
    }
    if let Some(n) = total.filter(|&n| first > n) {
        return Err(format!(
            "offset {first} is past the end of `{shown}` ({n} lines)"
        ));
    }
    let shown_last = scan.last_shown;
    let header = match total {
        Some(n) if first == 1 && shown_last == n && !scan.cut_line => {
            format!("{shown} ({n} lines)")
        }
        Some(n) => format!("{shown} (lines {first}-{shown_last} of {n})"),
        None => format!(
            "{shown} (lines {first}-{shown_last} of a {} MiB file)",
            size / (1024 * 1024)
        ),
    };
    let mut text = String::from_utf8_lossy(&scan.out).into_owned();
    if text.ends_with('\n') {
        text.pop();
    }
    let more = total.is_none_or(|n| shown_last < n);
    let mut footer = String::new();
    if scan.cut_line {
        footer = format!(
            "\n[line {shown_last} is longer than {} KiB and was cut]",
            MAX_OUTPUT / 1024
        );
    }
    if more {
        footer.push_str(&format!(
            "\n[more: read_file with offset={}]",
            shown_last + 1
        ));
    }
    Ok(format!("{header}\n{text}{footer}"))
}

/// Line bookkeeping over a stream of chunks, keeping only the wanted lines.
struct Scan {
    first: u64,
    last: u64,
    /// The line the next byte belongs to (1-based).
    line: u64,
    at_line_start: bool,
    newlines: u64,
    ends_with_newline: bool,
    any_bytes: bool,
    out: Vec<u8>,
    /// Where the current line starts in `out`, to drop it if it does not fit.
    line_start: usize,
    last_shown: u64,
    /// The output cap was hit: nothing more is kept.
    full: bool,
    cut_line: bool,
}

impl Scan {
    fn new(first: u64, last: u64) -> Self {
        Self {
            first,
            last,
            line: 1,
            at_line_start: true,
            newlines: 0,
            ends_with_newline: false,
            any_bytes: false,
            out: Vec::new(),
            line_start: 0,
            last_shown: first - 1,
            full: false,
            cut_line: false,
        }
    }

    fn feed(&mut self, chunk: &[u8]) {
        self.any_bytes = true;
        self.ends_with_newline = chunk.last() == Some(&b'\n');
        let mut rest = chunk;
        while !rest.is_empty() {
            let (piece, has_newline) = match rest.iter().position(|&b| b == b'\n') {
                Some(i) => (&rest[..=i], true),
                None => (rest, false),
            };
            rest = &rest[piece.len()..];
            if !self.full && (self.first..=self.last).contains(&self.line) {
                self.keep(piece);
            }
            self.at_line_start = has_newline;
            if has_newline {
                self.line += 1;
                self.newlines += 1;
            }
        }
    }

    fn keep(&mut self, piece: &[u8]) {
        if self.at_line_start {
            self.line_start = self.out.len();
        }
        let room = MAX_OUTPUT - self.out.len();
        if piece.len() <= room {
            self.out.extend_from_slice(piece);
            self.last_shown = self.line;
        } else if self.line == self.first {
            // One huge line (minified JSON): show its start rather than nothing.
            self.out.extend_from_slice(&piece[..room]);
            self.last_shown = self.line;
            self.cut_line = true;
            self.full = true;
        } else {
            self.out.truncate(self.line_start);
            self.last_shown = self.line - 1;
            self.full = true;
        }
    }

    fn total_lines(&self) -> u64 {
        let unterminated = self.any_bytes && !self.ends_with_newline;
        self.newlines + u64::from(unterminated)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::ExecApproval;
    use crate::tools::approval::test_context;
    use serde_json::json;

    fn numbered(n: usize) -> String {
        (1..=n).map(|i| format!("line {i}\n")).collect()
    }

    async fn read_args(dir: &Path, args: serde_json::Value) -> ToolOutput {
        let ctx = test_context(dir, ExecApproval::Deny);
        run(&args, &ctx).await
    }

    #[tokio::test]
    async fn whole_small_file() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.txt"), "x\ny").unwrap();
        let out = read_args(dir.path(), json!({"path": "a.txt"})).await;
        assert!(out.success);
        assert_eq!(out.output, "a.txt (2 lines)\nx\ny");
    }

    #[tokio::test]
    async fn ranges_and_continuation_hint() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("n.txt"), numbered(1000)).unwrap();
        let out = read_args(
            dir.path(),
            json!({"path": "n.txt", "offset": 10, "limit": 3}),
        )
        .await;
        assert_eq!(
            out.output,
            "n.txt (lines 10-12 of 1000)\nline 10\nline 11\nline 12\n[more: read_file with offset=13]"
        );
        let out = read_args(dir.path(), json!({"path": "n.txt"})).await;
        assert!(
            out.output
                .starts_with("n.txt (lines 1-400 of 1000)\nline 1\n")
        );
        assert!(
            out.output
                .ends_with("line 400\n[more: read_file with offset=401]")
        );
        // Quoted numbers are fine; the last lines end without a hint.
        let out = read_args(dir.path(), json!({"path": "n.txt", "offset": "999"})).await;
        assert_eq!(
            out.output,
            "n.txt (lines 999-1000 of 1000)\nline 999\nline 1000"
        );
        let out = read_args(dir.path(), json!({"path": "n.txt", "offset": 2000})).await;
        assert!(
            !out.success && out.output.contains("past the end"),
            "{}",
            out.output
        );
    }

    #[tokio::test]
    async fn output_is_capped_at_whole_lines() {
        let dir = tempfile::tempdir().unwrap();
        let line = "y".repeat(99) + "\n";
        std::fs::write(dir.path().join("big.txt"), line.repeat(1000)).unwrap();
        let out = read_args(dir.path(), json!({"path": "big.txt", "limit": 1000})).await;
        assert!(out.success);
        assert!(out.output.len() < MAX_OUTPUT + 200);
        let shown = MAX_OUTPUT / 100;
        assert!(
            out.output
                .starts_with(&format!("big.txt (lines 1-{shown} of 1000)"))
        );
        assert!(
            out.output
                .ends_with(&format!("[more: read_file with offset={}]", shown + 1))
        );
    }

    #[tokio::test]
    async fn one_huge_line_is_cut() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("min.json"), "z".repeat(100_000) + "\nend\n").unwrap();
        let out = read_args(dir.path(), json!({"path": "min.json"})).await;
        assert!(out.success);
        assert!(
            out.output
                .contains("[line 1 is longer than 32 KiB and was cut]")
        );
        assert!(out.output.ends_with("[more: read_file with offset=2]"));
    }

    #[tokio::test]
    async fn refuses_binary_missing_dirs_and_escapes() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("img.png"), b"\x89PNG\0\0data").unwrap();
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        let out = read_args(dir.path(), json!({"path": "img.png"})).await;
        assert!(
            !out.success && out.output.contains("binary"),
            "{}",
            out.output
        );
        let out = read_args(dir.path(), json!({"path": "nope.md"})).await;
        assert!(
            !out.success && out.output.contains("not found"),
            "{}",
            out.output
        );
        let out = read_args(dir.path(), json!({"path": "sub"})).await;
        assert!(
            !out.success && out.output.contains("directory"),
            "{}",
            out.output
        );
        let out = read_args(dir.path(), json!({"path": "/etc/passwd"})).await;
        assert!(
            !out.success && out.output.contains("outside"),
            "{}",
            out.output
        );
        let out = read_args(dir.path(), json!({"path": "../x"})).await;
        assert!(
            !out.success && out.output.contains("outside"),
            "{}",
            out.output
        );
    }

    #[tokio::test]
    async fn empty_file() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("e"), "").unwrap();
        let out = read_args(dir.path(), json!({"path": "e"})).await;
        assert_eq!(out.output, "e (empty file)");
    }
}
