//! The daily log: every user and assistant message, appended as markdown.
//! A turn's lines go in together, with one append (see `append_all`).

use std::io::Write;
use std::path::{Path, PathBuf};

use chrono::{DateTime, Local};

pub fn path_for(workspace: &Path, when: DateTime<Local>) -> PathBuf {
    workspace
        .join("memory")
        .join(format!("{}.md", when.format("%Y-%m-%d")))
}

/// One entry: `### HH:MM · who · origin`, then the text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    pub when: DateTime<Local>,
    pub who: String,
    pub origin: String,
    pub text: String,
}

/// Appends one entry and flushes.
pub fn append(
    workspace: &Path,
    when: DateTime<Local>,
    who: &str,
    origin: &str,
    text: &str,
) -> std::io::Result<()> {
    let entry = Entry {
        when,
        who: who.to_string(),
        origin: origin.to_string(),
        text: text.to_string(),
    };
    append_all(workspace, std::slice::from_ref(&entry))
}

/// Appends `entries` in order and flushes: those of one day with one open
/// and one write (the log's file is checked and opened once, not once an
/// entry; every write to `memory/` also wakes the memory watcher).
pub fn append_all(workspace: &Path, entries: &[Entry]) -> std::io::Result<()> {
    for day in entries.chunk_by(|a, b| a.when.date_naive() == b.when.date_naive()) {
        let text: String = day.iter().map(markdown).collect();
        append_text(workspace, day[0].when, &text)?;
    }
    Ok(())
}

fn markdown(entry: &Entry) -> String {
    format!(
        "\n### {} · {} · {}\n\n{}\n",
        entry.when.format("%H:%M"),
        entry.who,
        entry.origin,
        entry.text.trim_end()
    )
}

fn append_text(workspace: &Path, when: DateTime<Local>, text: &str) -> std::io::Result<()> {
    let path = path_for(workspace, when);
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    // Not through a link out of the workspace: into another agent's memory.
    let path = crate::workspace::confined_target(workspace, &path)?;
    let mut file = crate::fsutil::regular_file::open_append_unlinked(&path)?;
    file.write_all(text.as_bytes())?;
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

    #[test]
    fn entries_of_one_turn_go_in_together_each_as_a_single_append_would_write_it() {
        let (one, all) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let now = Local::now();
        let entry = |who: &str, text: &str| Entry {
            when: now,
            who: who.into(),
            origin: "tui".into(),
            text: text.into(),
        };
        let entries = [entry("user", "hello\n"), entry("egirl", "hi!")];
        for e in &entries {
            append(one.path(), e.when, &e.who, &e.origin, &e.text).unwrap();
        }
        append_all(all.path(), &entries).unwrap();
        let read = |dir: &tempfile::TempDir| std::fs::read_to_string(path_for(dir.path(), now));
        assert_eq!(read(&all).unwrap(), read(&one).unwrap());
    }

    #[test]
    fn entries_across_midnight_go_to_each_days_log() {
        use chrono::TimeZone;
        let dir = tempfile::tempdir().unwrap();
        let late = Local.with_ymd_and_hms(2026, 3, 9, 23, 59, 0).unwrap();
        let early = Local.with_ymd_and_hms(2026, 3, 10, 0, 1, 0).unwrap();
        let entry = |when, text: &str| Entry {
            when,
            who: "user".into(),
            origin: "tui".into(),
            text: text.into(),
        };
        append_all(dir.path(), &[entry(late, "before"), entry(early, "after")]).unwrap();
        let read = |when| std::fs::read_to_string(path_for(dir.path(), when)).unwrap();
        assert!(read(late).contains("before") && !read(late).contains("after"));
        assert!(read(early).contains("after") && !read(early).contains("before"));
    }
}
