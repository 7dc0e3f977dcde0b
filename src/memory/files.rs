//! Reading and appending memory files for the tools: only `MEMORY.md` and
//! markdown under `memory/`, addressed relative to the workspace. Saving
//! only ever appends (and flushes): nothing already written is rewritten.

use std::io::Write;
use std::path::{Component, Path, PathBuf};

use chrono::{DateTime, Local};

use super::daily;

/// Lines returned by one `memory_get` when the caller does not say.
pub const DEFAULT_LINES: usize = 200;
/// Bytes of text one `memory_get` returns at most.
const MAX_BYTES: usize = 32 * 1024;

/// The file behind a memory path, or why it is not one.
pub fn resolve(workspace: &Path, requested: &str) -> Result<PathBuf, String> {
    let requested = requested.trim().trim_start_matches("./");
    let rel = Path::new(requested);
    let plain = rel.components().all(|c| matches!(c, Component::Normal(_)));
    let in_memory = requested == "MEMORY.md"
        || (requested.starts_with("memory/") && requested.ends_with(".md"));
    if !plain || !in_memory {
        return Err(format!(
            "`{requested}` is not a memory file; memory_get reads MEMORY.md and memory/*.md (use the paths memory_search returns)"
        ));
    }
    let path = workspace.join(rel);
    // A link inside memory/ must not lead out of the workspace.
    match (path.canonicalize(), workspace.canonicalize()) {
        (Ok(real), Ok(root)) if real.starts_with(&root) => Ok(real),
        (Err(e), _) if e.kind() == std::io::ErrorKind::NotFound => {
            Err(format!("`{requested}` does not exist"))
        }
        (Err(e), _) => Err(format!("cannot read `{requested}`: {e}")),
        _ => Err(format!("`{requested}` leads outside the workspace")),
    }
}

/// Lines `from..from+lines` (1-based) of a memory file, with a header
/// naming the range and a hint when more follows.
pub fn read_lines(
    workspace: &Path,
    requested: &str,
    from: usize,
    lines: usize,
) -> Result<String, String> {
    let path = resolve(workspace, requested)?;
    let text = crate::fsutil::regular_file::read(&path)
        .map_err(|e| format!("cannot read `{requested}`: {e}"))?;
    let text = String::from_utf8_lossy(&text);
    let all: Vec<&str> = text.lines().collect();
    let total = all.len();
    if total == 0 {
        return Ok(format!("{requested} (empty)"));
    }
    let first = from.max(1);
    if first > total {
        return Err(format!(
            "line {first} is past the end of `{requested}` ({total} lines)"
        ));
    }
    let wanted_last = first.saturating_add(lines.max(1) - 1).min(total);
    let mut out = String::new();
    let mut last = first - 1;
    for (i, line) in all[first - 1..wanted_last].iter().enumerate() {
        if out.len() + line.len() + 1 > MAX_BYTES && i > 0 {
            break;
        }
        out.push_str(line);
        out.push('\n');
        last = first + i;
    }
    out.pop();
    let mut result = format!("{requested} (lines {first}-{last} of {total})\n{out}");
    if last < total {
        result.push_str(&format!("\n[more: memory_get with from={}]", last + 1));
    }
    Ok(result)
}

/// Appends a note: to today's daily log, or to MEMORY.md (`long_term`).
/// Returns the path written, relative to the workspace.
pub fn save(
    workspace: &Path,
    when: DateTime<Local>,
    origin: &str,
    text: &str,
    long_term: bool,
) -> std::io::Result<String> {
    let text = text.trim();
    if !long_term {
        daily::append(workspace, when, "note", origin, text)?;
        let path = daily::path_for(workspace, when);
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        return Ok(format!("memory/{name}"));
    }
    // Not through a link out of the workspace: into another agent's memory.
    let path = crate::workspace::confined_target(workspace, &workspace.join("MEMORY.md"))?;
    let ends_with_newline = match crate::fsutil::regular_file::read(&path) {
        Ok(bytes) => bytes.is_empty() || bytes.ends_with(b"\n"),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => true,
        Err(e) => return Err(e),
    };
    let mut file = crate::fsutil::regular_file::open_append_unlinked(&path)?;
    let lead = if ends_with_newline { "\n" } else { "\n\n" };
    file.write_all(format!("{lead}{text}\n").as_bytes())?;
    file.flush()?;
    Ok("MEMORY.md".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn workspace() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("memory")).unwrap();
        std::fs::write(dir.path().join("MEMORY.md"), "# Memory\n\n- likes tea\n").unwrap();
        std::fs::write(
            dir.path().join("memory/2025-01-02.md"),
            (1..=10).map(|i| format!("l{i}\n")).collect::<String>(),
        )
        .unwrap();
        std::fs::write(dir.path().join("SOUL.md"), "secret soul").unwrap();
        dir
    }

    #[test]
    fn saves_and_the_index_never_go_through_a_link_out_of_the_workspace() {
        let root = tempfile::tempdir().unwrap();
        let (ws, home) = (root.path().join("work"), root.path().join("home"));
        for dir in [&ws, &home] {
            std::fs::create_dir_all(dir.join("memory")).unwrap();
        }
        std::fs::write(home.join("MEMORY.md"), "- home's fact\n").unwrap();
        std::fs::write(home.join("memory/2025-01-02.md"), "- home's day\n").unwrap();
        std::os::unix::fs::symlink(home.join("MEMORY.md"), ws.join("MEMORY.md")).unwrap();
        std::fs::remove_dir(ws.join("memory")).unwrap();
        std::os::unix::fs::symlink(home.join("memory"), ws.join("memory")).unwrap();
        let when = chrono::Local::now();
        assert!(save(&ws, when, "tui", "planted", true).is_err());
        assert!(save(&ws, when, "tui", "planted", false).is_err());
        let home_text = std::fs::read_to_string(home.join("MEMORY.md")).unwrap();
        assert_eq!(home_text, "- home's fact\n");
        assert_eq!(std::fs::read_dir(home.join("memory")).unwrap().count(), 1);
        assert!(super::super::index::memory_files(&ws).is_empty());
        // Links inside the workspace still count.
        std::fs::remove_file(ws.join("MEMORY.md")).unwrap();
        std::fs::write(ws.join("facts.md"), "- likes tea\n").unwrap();
        std::os::unix::fs::symlink("facts.md", ws.join("MEMORY.md")).unwrap();
        assert_eq!(
            save(&ws, when, "tui", "likes ferns", true).unwrap(),
            "MEMORY.md"
        );
        let kept = std::fs::read_to_string(ws.join("facts.md")).unwrap();
        assert!(kept.contains("likes ferns"), "{kept}");
        let files = super::super::index::memory_files(&ws);
        assert_eq!(files.len(), 1, "{files:?}");
    }

    #[test]
    fn reads_ranges_of_memory_files_only() {
        let dir = workspace();
        let ws = dir.path();
        assert_eq!(
            read_lines(ws, "memory/2025-01-02.md", 3, 2).unwrap(),
            "memory/2025-01-02.md (lines 3-4 of 10)\nl3\nl4\n[more: memory_get with from=5]"
        );
        assert_eq!(
            read_lines(ws, "MEMORY.md", 1, DEFAULT_LINES).unwrap(),
            "MEMORY.md (lines 1-3 of 3)\n# Memory\n\n- likes tea"
        );
        for bad in [
            "SOUL.md",
            "../x.md",
            "memory/../SOUL.md",
            "/etc/passwd",
            "memory/x.txt",
        ] {
            let err = read_lines(ws, bad, 1, 10).unwrap_err();
            assert!(err.contains("not a memory file"), "{bad}: {err}");
        }
        assert!(
            read_lines(ws, "memory/none.md", 1, 10)
                .unwrap_err()
                .contains("does not exist")
        );
        assert!(
            read_lines(ws, "MEMORY.md", 9, 1)
                .unwrap_err()
                .contains("past the end")
        );
    }

    #[test]
    fn saving_appends_and_never_rewrites() {
        let dir = workspace();
        let ws = dir.path();
        std::fs::write(ws.join("MEMORY.md"), "# Memory\n- likes tea").unwrap();
        let now = Local::now();
        assert_eq!(
            save(ws, now, "tui", "Birthday is May 3", true).unwrap(),
            "MEMORY.md"
        );
        let text = std::fs::read_to_string(ws.join("MEMORY.md")).unwrap();
        assert_eq!(text, "# Memory\n- likes tea\n\nBirthday is May 3\n");
        let daily = save(ws, now, "tui", "met Ana", false).unwrap();
        assert!(daily.starts_with("memory/") && daily.ends_with(".md"));
        let log = std::fs::read_to_string(ws.join(&daily)).unwrap();
        assert!(log.contains("· note · tui") && log.contains("met Ana"));
    }
}
