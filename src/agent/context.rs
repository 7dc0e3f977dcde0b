//! The prompt, ordered for llama.cpp's prefix cache (docs/design.md §7): static
//! system text, the byte-identical tool list, slow-changing workspace files,
//! append-only history, and the volatile bits last, inside the new user
//! message, where they stay (history is re-sent byte for byte).

use std::path::Path;

use chrono::{DateTime, Local};

use crate::skills::Skill;
use crate::workspace::{PROMPT_FILES, read_prompt_file};

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
        let Some(mut text) = read_prompt_file(workspace, name) else {
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
    fn memory_is_budgeted() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("MEMORY.md"), "é".repeat(10_000)).unwrap();
        let p = system_prompt(dir.path());
        assert!(p.len() < STATIC_SYSTEM.len() + MEMORY_BUDGET_CHARS + 200);
        assert!(p.contains("MEMORY.md continues"));
    }
}
