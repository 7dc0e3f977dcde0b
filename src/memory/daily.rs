//! The daily log: every user and assistant message, appended as markdown.

use std::io::Write;
use std::path::{Path, PathBuf};

use chrono::{DateTime, Local};

pub fn path_for(workspace: &Path, when: DateTime<Local>) -> PathBuf {
    workspace
        .join("memory")
        .join(format!("{}.md", when.format("%Y-%m-%d")))
}

/// Appends one entry (`### HH:MM · who · origin` then the text) and flushes.
pub fn append(
    workspace: &Path,
    when: DateTime<Local>,
    who: &str,
    origin: &str,
    text: &str,
) -> std::io::Result<()> {
    let path = path_for(workspace, when);
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    // Not through a link out of the workspace: into another agent's memory.
    let path = crate::workspace::confined_target(workspace, &path)?;
    let mut file = crate::fsutil::regular_file::open_append_unlinked(&path)?;
    let entry = format!(
        "\n### {} · {who} · {origin}\n\n{}\n",
        when.format("%H:%M"),
        text.trim_end()
    );
    file.write_all(entry.as_bytes())?;
    file.flush()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn appends_entries_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let now = Local::now();
        append(dir.path(), now, "user", "tui", "hello").unwrap();
        append(dir.path(), now, "egirl", "tui", "hi!").unwrap();
        let text = std::fs::read_to_string(path_for(dir.path(), now)).unwrap();
        let user = text.find("hello").unwrap();
        assert!(text.find("hi!").unwrap() > user);
        assert!(text.contains("· user · tui"));
    }
}
