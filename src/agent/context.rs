//! The prompt, ordered for llama.cpp's prefix cache (docs/design.md §7): static
//! system text, the byte-identical tool list, slow-changing workspace files,
//! append-only history, and the volatile bits last, inside the new user
//! message, where they stay (history is re-sent byte for byte).

use std::collections::HashMap;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::{LazyLock, Mutex};

use chrono::{DateTime, Local};

use crate::skills::Skill;
use crate::workspace::{PROMPT_FILES, confined, read_unlinked};

/// Never changes between requests; keep it short (prompt economy: the fixed
/// prompt with the tool list stays under 1,500 tokens).
pub const STATIC_SYSTEM: &str = "\
You are egirl, a personal AI agent on the user's own machine. \
You can read, edit and search workspace files and run shell commands (the user approves each). \
For anything about the user or earlier conversations, search memory first (memory_search); \
save lasting facts with memory_save. Use a tool when it answers better than guessing, \
else reply directly.";

/// Character budget for MEMORY.md in the prompt; the rest is left out with a note.
pub const MEMORY_BUDGET_CHARS: usize = 6_000;

/// The system message: static text, then the workspace files.
pub fn system_prompt(workspace: &Path) -> String {
    system_prompt_with_skills(workspace, "")
}

/// The system message with the `<available_skills>` block after the
/// workspace files: it changes only when skills do.
pub fn system_prompt_with_skills(workspace: &Path, skills_block: &str) -> String {
    let mut out = String::from(STATIC_SYSTEM);
    for name in PROMPT_FILES {
        let Some(mut text) = prompt_file(workspace, name) else {
            continue;
        };
        if name == "MEMORY.md" && text.len() > MEMORY_BUDGET_CHARS {
            let cut = floor_char_boundary(&text, MEMORY_BUDGET_CHARS);
            text.truncate(cut);
            text.push_str("\n[... MEMORY.md continues; read it with read_file for the rest]");
        }
        out.push_str("\n\n<file name=\"");
        out.push_str(name);
        out.push_str("\">\n");
        out.push_str(&text);
        out.push_str("\n</file>");
    }
    if !skills_block.is_empty() {
        out.push_str("\n\n");
        out.push_str(skills_block);
    }
    out
}

/// The user message as the model sees it: what was typed, then the volatile
/// block (time; later fresh memory hits). Kept in history exactly as sent.
pub fn user_message(typed: &str, now: DateTime<Local>) -> String {
    user_message_with_skill(typed, now, None)
}

/// `user_message`, naming the skill the message's keywords point to (its
/// `triggers`), so the model reads that SKILL.md first.
pub fn user_message_with_skill(typed: &str, now: DateTime<Local>, skill: Option<&Skill>) -> String {
    let skill_line = skill.map_or(String::new(), |s| {
        format!("\nskill: {} (read {} first)", s.name, s.location)
    });
    format!(
        "{typed}\n\n<context>\nnow: {}{skill_line}\n</context>",
        now.format("%Y-%m-%d %H:%M %Z (%A)")
    )
}

/// A file changed this recently may change again within the file
/// system's clock tick without its metadata showing it: it is read afresh
/// until it is older (as git treats a "racily clean" file).
const SETTLED_SECS: i64 = 2;

/// What a file's metadata says of its content: the same values, the same
/// content (once the file has settled).
#[derive(Clone, Copy, PartialEq, Eq)]
struct FileStamp {
    dev: u64,
    ino: u64,
    len: u64,
    mtime: (i64, i64),
    ctime: (i64, i64),
}

/// The prompt files read, by path: their text as of that stamp.
type Kept = HashMap<PathBuf, (FileStamp, Option<String>)>;
static READ: LazyLock<Mutex<Kept>> = LazyLock::new(Mutex::default);

/// A workspace prompt file's text (as `read_prompt_file` reads it), kept while its
/// metadata is unchanged: every turn builds the system prompt, and a stat
/// costs a fraction of an open and read.
/// A link out of the workspace is left out (`workspace::confined`).
fn prompt_file(workspace: &Path, name: &str) -> Option<String> {
    let (source, meta) = confined(workspace, name)?;
    let path = workspace.join(name);
    let stamp = FileStamp {
        dev: meta.dev(),
        ino: meta.ino(),
        len: meta.len(),
        mtime: (meta.mtime(), meta.mtime_nsec()),
        ctime: (meta.ctime(), meta.ctime_nsec()),
    };
    let now = chrono::Utc::now().timestamp();
    // A write moves the modification time; setting it back moves the
    // change time (in the stamp).
    let settled = meta.is_file() && now - meta.mtime() >= SETTLED_SECS;
    let mut read = READ.lock().unwrap_or_else(|e| e.into_inner());
    if settled && let Some((_, text)) = read.get(&path).filter(|(s, _)| *s == stamp) {
        return text.clone();
    }
    let text = read_unlinked(&source);
    if settled {
        read.insert(path, (stamp, text.clone()));
    }
    text
}

/// The last system prompt built (workspace files and skills, redacted),
/// kept while the memory watcher vouches that no file directly in the
/// workspace changed since it was built: a turn then skips a `stat` of
/// every prompt file. Nothing is kept without a watcher, or when a prompt
/// file is a link (what it points to may be in a folder nobody watches).
#[derive(Default)]
pub(crate) struct KeptSystemPrompt(Mutex<Option<KeptText>>);

struct KeptText {
    /// The watcher's count, read before the files were.
    changes: u64,
    skills_block: String,
    text: String,
}

impl KeptSystemPrompt {
    pub(crate) fn get(
        &self,
        memory: &crate::memory::Memory,
        skills_block: &str,
        redactor: &crate::redact::Redactor,
    ) -> String {
        let mut kept = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(k) = kept.as_ref().filter(|k| {
            k.skills_block == skills_block && memory.workspace_unchanged_since(k.changes)
        }) {
            return k.text.clone();
        }
        let changes = memory.workspace_changes();
        let workspace = memory.workspace();
        let built = system_prompt_with_skills(workspace, skills_block);
        let text = redactor.redact(&built).into_owned();
        *kept = (!any_prompt_file_linked(workspace)).then(|| KeptText {
            changes,
            skills_block: skills_block.to_string(),
            text: text.clone(),
        });
        text
    }
}

fn any_prompt_file_linked(workspace: &Path) -> bool {
    PROMPT_FILES.iter().any(|name| {
        std::fs::symlink_metadata(workspace.join(name)).is_ok_and(|m| m.file_type().is_symlink())
    })
}

fn floor_char_boundary(s: &str, mut i: usize) -> usize {
    while i > 0 && !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn workspace_files_follow_the_static_text_in_order() {
        let dir = tempfile::tempdir().unwrap();
        crate::workspace::ensure(dir.path()).unwrap();
        let p = system_prompt(dir.path());
        assert!(p.starts_with(STATIC_SYSTEM));
        let soul = p.find("name=\"SOUL.md\"").unwrap();
        let memory = p.find("name=\"MEMORY.md\"").unwrap();
        assert!(soul < memory);
        assert!(!p.contains("HEARTBEAT"));
    }

    #[test]
    fn a_prompt_file_linked_out_of_the_workspace_is_left_out() {
        let dir = tempfile::tempdir().unwrap();
        let (work, home) = (dir.path().join("work"), dir.path().join("home"));
        crate::workspace::ensure(&work).unwrap();
        std::fs::create_dir_all(&home).unwrap();
        std::fs::write(home.join("MEMORY.md"), "home's door code is 4711").unwrap();
        std::fs::remove_file(work.join("MEMORY.md")).unwrap();
        std::os::unix::fs::symlink(home.join("MEMORY.md"), work.join("MEMORY.md")).unwrap();
        // A link inside the workspace is still followed.
        std::fs::write(work.join("notes.md"), "likes tea").unwrap();
        std::fs::remove_file(work.join("USER.md")).unwrap();
        std::os::unix::fs::symlink("notes.md", work.join("USER.md")).unwrap();
        let p = system_prompt(&work);
        assert!(!p.contains("4711"), "{p}");
        assert!(p.contains("likes tea"), "{p}");
    }

    /// A kept system prompt is rebuilt once the watcher was told of an
    /// edit; with no watcher, or a prompt file that is a link, nothing is
    /// kept and an edit shows at once.
    #[tokio::test]
    async fn a_kept_system_prompt_follows_the_watcher() {
        use crate::memory::Memory;
        let dir = tempfile::tempdir().unwrap();
        let work = dir.path().join("work");
        crate::workspace::ensure(&work).unwrap();
        let memory = std::sync::Arc::new(Memory::with_embedder(
            &work,
            crate::config::MemoryConfig::default(),
            None,
        ));
        let redactor = crate::redact::Redactor::default();
        let kept = KeptSystemPrompt::default();
        let write = |text: &str| std::fs::write(work.join("USER.md"), text).unwrap();

        write("likes tea");
        assert!(kept.get(&memory, "", &redactor).contains("likes tea"));
        write("likes coffee");
        let unwatched = kept.get(&memory, "", &redactor);
        assert!(unwatched.contains("likes coffee"), "no watcher: read again");

        let _watcher = crate::memory::watch::spawn(memory.clone()).unwrap();
        let before = memory.workspace_changes();
        assert!(kept.get(&memory, "", &redactor).contains("likes coffee"));
        assert!(memory.workspace_unchanged_since(before), "vouching");
        write("likes water");
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        while memory.workspace_unchanged_since(before) {
            assert!(
                std::time::Instant::now() < deadline,
                "the watcher was not told"
            );
            tokio::time::sleep(std::time::Duration::from_millis(5)).await;
        }
        assert!(kept.get(&memory, "", &redactor).contains("likes water"));
        // Kept, it is byte for byte what a build gives (the prefix cache).
        assert_eq!(
            kept.get(&memory, "", &redactor),
            system_prompt_with_skills(&work, "")
        );
        assert!(
            kept.get(&memory, "<skills/>", &redactor)
                .ends_with("<skills/>"),
            "another skills block is another prompt"
        );

        // A link's target may be in a folder nobody watches.
        std::fs::create_dir(work.join("notes")).unwrap();
        std::fs::write(work.join("notes/user.md"), "likes juice").unwrap();
        std::fs::remove_file(work.join("USER.md")).unwrap();
        std::os::unix::fs::symlink("notes/user.md", work.join("USER.md")).unwrap();
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        assert!(kept.get(&memory, "", &redactor).contains("likes juice"));
        std::fs::write(work.join("notes/user.md"), "likes milk").unwrap();
        assert!(kept.get(&memory, "", &redactor).contains("likes milk"));
    }

    #[test]
    fn memory_is_budgeted() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("MEMORY.md"), "é".repeat(10_000)).unwrap();
        let p = system_prompt(dir.path());
        assert!(p.len() < STATIC_SYSTEM.len() + MEMORY_BUDGET_CHARS + 200);
        assert!(p.contains("MEMORY.md continues"));
    }

    #[test]
    fn a_settled_file_is_kept_until_its_metadata_changes_a_fresh_one_is_read_again() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("USER.md");
        let age = |secs| {
            let file = std::fs::File::options().write(true).open(&path).unwrap();
            let then = std::time::SystemTime::now() - std::time::Duration::from_secs(secs);
            file.set_modified(then).unwrap();
        };
        std::fs::write(&path, "likes tea").unwrap();
        // Just written: the same length again is still seen.
        assert_eq!(
            prompt_file(dir.path(), "USER.md").as_deref(),
            Some("likes tea")
        );
        std::fs::write(&path, "likes tee").unwrap();
        assert_eq!(
            prompt_file(dir.path(), "USER.md").as_deref(),
            Some("likes tee")
        );
        let kept = || READ.lock().unwrap().contains_key(&path);
        assert!(!kept(), "a fresh file was kept");
        std::fs::write(&path, "likes coffee").unwrap();
        age(60);
        assert_eq!(
            prompt_file(dir.path(), "USER.md").as_deref(),
            Some("likes coffee")
        );
        assert!(kept(), "a settled file was not kept");
        assert_eq!(
            prompt_file(dir.path(), "USER.md").as_deref(),
            Some("likes coffee")
        );
        // A change shows in the metadata (here the length): read again.
        std::fs::write(&path, "likes water, not coffee").unwrap();
        assert_eq!(
            prompt_file(dir.path(), "USER.md").as_deref(),
            Some("likes water, not coffee")
        );
        std::fs::remove_file(&path).unwrap();
        assert_eq!(prompt_file(dir.path(), "USER.md"), None);
    }
}
