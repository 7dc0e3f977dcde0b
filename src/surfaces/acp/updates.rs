//! The core's events as ACP `session/update`s: a tool call's kind, title
//! and file locations, its result with the change a file tool made as a
//! `diff`, the context meter as `usage_update`.

use std::path::{Path, PathBuf};

use agent_client_protocol::v1::schema::{
    ContentBlock, ContentChunk, Cost, Diff, SessionUpdate, TextContent, ToolCall, ToolCallContent,
    ToolCallLocation, ToolCallStatus, ToolCallUpdate, ToolCallUpdateFields, ToolKind, UsageUpdate,
};
use serde_json::Value;

use crate::protocol::{FileDiff, TokenUsage};

/// A text chunk of the answer.
pub fn answer_chunk(text: &str) -> SessionUpdate {
    SessionUpdate::AgentMessageChunk(ContentChunk::new(text_block(text)))
}

/// A chunk of the model's reasoning.
pub fn thought_chunk(text: &str) -> SessionUpdate {
    SessionUpdate::AgentThoughtChunk(ContentChunk::new(text_block(text)))
}

/// A chunk of what the user said (a replayed session).
pub fn user_chunk(text: &str) -> SessionUpdate {
    SessionUpdate::UserMessageChunk(ContentChunk::new(text_block(text)))
}

pub fn text_block(text: &str) -> ContentBlock {
    ContentBlock::Text(TextContent::new(text))
}

/// How an editor groups a tool: by what it does.
pub fn kind_of(tool: &str) -> ToolKind {
    match tool {
        "read_file" | "memory_get" => ToolKind::Read,
        "write_file" | "edit_file" | "memory_save" | "create_skill" => ToolKind::Edit,
        "exec" => ToolKind::Execute,
        "web_fetch" | "browser" => ToolKind::Fetch,
        "glob" | "web_search" | "memory_search" => ToolKind::Search,
        _ => ToolKind::Other,
    }
}

/// The call as one line: what it runs, reads, writes or fetches.
pub fn title_of(tool: &str, arguments: &Value) -> String {
    let arg = |key: &str| arguments.get(key).and_then(Value::as_str).unwrap_or("");
    let line = match tool {
        "exec" => format!("Run `{}`", arg("command")),
        "read_file" => format!("Read {}", arg("path")),
        "write_file" => format!("Write {}", arg("path")),
        "edit_file" => format!("Edit {}", arg("path")),
        "glob" => format!("Find {}", arg("pattern")),
        "web_fetch" => format!("Fetch {}", arg("url")),
        "web_search" | "memory_search" => format!("Search {}", arg("query")),
        _ => tool.to_string(),
    };
    // A call with its argument missing still gets a name.
    if line.ends_with(' ') || line.ends_with("``") {
        tool.to_string()
    } else {
        line
    }
}

/// The files a call touches, absolute (relative paths start in `cwd`,
/// where the session works).
pub fn locations_of(tool: &str, arguments: &Value, cwd: &Path) -> Vec<ToolCallLocation> {
    if !matches!(tool, "read_file" | "write_file" | "edit_file") {
        return Vec::new();
    }
    let Some(path) = arguments.get("path").and_then(Value::as_str) else {
        return Vec::new();
    };
    let mut location = ToolCallLocation::new(absolute(cwd, path));
    if tool == "read_file"
        && let Some(offset) = arguments.get("offset").and_then(Value::as_u64)
    {
        location = location.line(u32::try_from(offset).ok());
    }
    vec![location]
}

fn absolute(workspace: &Path, path: &str) -> PathBuf {
    let expanded = crate::config::expand_home(path);
    if expanded.is_absolute() {
        expanded
    } else {
        workspace.join(expanded)
    }
}

/// A call that starts (`tool_call`, in progress); `cwd`: where the
/// session's relative paths start.
pub fn tool_call(id: &str, tool: &str, arguments: &Value, cwd: &Path) -> SessionUpdate {
    SessionUpdate::ToolCall(
        ToolCall::new(id.to_string(), title_of(tool, arguments))
            .kind(kind_of(tool))
            .status(ToolCallStatus::InProgress)
            .locations(locations_of(tool, arguments, cwd))
            .raw_input(arguments.clone()),
    )
}

/// A call that ended: its status, and its output, or for a file tool the
/// change it made as a diff.
pub fn tool_result(
    id: &str,
    success: bool,
    output: &str,
    diff: Option<&FileDiff>,
    workspace: &Path,
) -> SessionUpdate {
    let status = if success {
        ToolCallStatus::Completed
    } else {
        ToolCallStatus::Failed
    };
    let mut content = Vec::new();
    if let Some(diff) = diff.and_then(|d| diff_content(d, workspace)) {
        content.push(diff);
    }
    if !output.is_empty() {
        content.push(ToolCallContent::from(text_block(output)));
    }
    SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(
        id.to_string(),
        ToolCallUpdateFields::new()
            .status(status)
            .content(content)
            .raw_output(Value::String(output.to_string())),
    ))
}

/// A running call's progress (a delegated agent's steps so far).
pub fn tool_progress(id: &str, so_far: &str) -> SessionUpdate {
    SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(
        id.to_string(),
        ToolCallUpdateFields::new().content(vec![ToolCallContent::from(text_block(so_far))]),
    ))
}

/// The change as ACP's `diff`: the old and new text of the changed
/// region, rebuilt from the unified hunks the core keeps (context and
/// removed lines; context and added lines; hunks apart by a blank line).
/// `None` when there are no hunks (binary, too large, no change).
pub fn diff_content(diff: &FileDiff, workspace: &Path) -> Option<ToolCallContent> {
    let (mut old, mut new) = (String::new(), String::new());
    let mut hunks = 0;
    for line in diff.text.lines() {
        if line.starts_with("@@") {
            if hunks > 0 {
                old.push('\n');
                new.push('\n');
            }
            hunks += 1;
            continue;
        }
        if hunks == 0 {
            continue;
        }
        // The cap's `… N more lines` marker, or anything else, is not text.
        let (to_old, to_new, rest) = match line.chars().next() {
            Some(' ') => (true, true, &line[1..]),
            Some('-') => (true, false, &line[1..]),
            Some('+') => (false, true, &line[1..]),
            _ => continue,
        };
        for (wanted, text) in [(to_old, &mut old), (to_new, &mut new)] {
            if wanted {
                text.push_str(rest);
                text.push('\n');
            }
        }
    }
    if hunks == 0 {
        return None;
    }
    let path = absolute(workspace, &diff.path);
    // A new file has no old text.
    let old = (diff.removed > 0 || !old.is_empty()).then_some(old);
    Some(ToolCallContent::Diff(Diff::new(path, new).old_text(old)))
}

/// The context meter: the prompt the next request carries and the window
/// it goes into, with what the request cost when it was paid.
pub fn usage(usage: &TokenUsage) -> Option<SessionUpdate> {
    let context = usage.context?;
    let mut update = UsageUpdate::new(context.used, context.length);
    if usage.cost_usd > 0.0 {
        update = update.cost(Cost::new(usage.cost_usd, "USD"));
    }
    Some(SessionUpdate::UsageUpdate(update))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn tools_get_the_kind_an_editor_groups_them_by() {
        assert_eq!(kind_of("read_file"), ToolKind::Read);
        assert_eq!(kind_of("edit_file"), ToolKind::Edit);
        assert_eq!(kind_of("exec"), ToolKind::Execute);
        assert_eq!(kind_of("web_fetch"), ToolKind::Fetch);
        assert_eq!(kind_of("glob"), ToolKind::Search);
        assert_eq!(kind_of("mcp__fs__read"), ToolKind::Other);
        assert_eq!(
            title_of("exec", &json!({"command": "ls -l"})),
            "Run `ls -l`"
        );
        assert_eq!(title_of("exec", &json!({})), "exec");
    }

    #[test]
    fn a_file_tool_names_its_file_absolute() {
        let ws = Path::new("/ws");
        let locations = locations_of("read_file", &json!({"path": "a/b.rs", "offset": 7}), ws);
        assert_eq!(locations, vec![ToolCallLocation::new("/ws/a/b.rs").line(7)]);
        assert!(locations_of("exec", &json!({"path": "x"}), ws).is_empty());
    }

    #[test]
    fn hunks_become_the_old_and_new_text_of_the_change() {
        let diff = FileDiff {
            path: "notes.md".into(),
            added: 1,
            removed: 1,
            text: "@@ -1,2 +1,2 @@\n keep\n-old\n+new\n… 3 more lines".into(),
        };
        let Some(ToolCallContent::Diff(d)) = diff_content(&diff, Path::new("/ws")) else {
            panic!("no diff");
        };
        assert_eq!(d.path, PathBuf::from("/ws/notes.md"));
        assert_eq!(d.old_text.as_deref(), Some("keep\nold\n"));
        assert_eq!(d.new_text, "keep\nnew\n");
        let created = FileDiff {
            path: "n.txt".into(),
            added: 1,
            removed: 0,
            text: "@@ -0,0 +1 @@\n+hi".into(),
        };
        let Some(ToolCallContent::Diff(d)) = diff_content(&created, Path::new("/ws")) else {
            panic!("no diff");
        };
        assert_eq!(d.old_text, None);
        assert_eq!(d.new_text, "hi\n");
        let none = FileDiff {
            text: "binary file".into(),
            ..FileDiff::default()
        };
        assert!(diff_content(&none, Path::new("/ws")).is_none());
    }
}
