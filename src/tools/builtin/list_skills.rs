//! `list_skills {}`: every skill egirl found, with where it is and whether
//! it can be used here (and why not), plus the files that failed to load.

use crate::chat::ToolSpec;
use crate::skills::Snapshot;
use crate::tools::{ToolContext, ToolOutput};

pub fn spec() -> ToolSpec {
    ToolSpec {
        name: "list_skills",
        description: "List installed skills and why any is unavailable.",
        parameters: serde_json::json!({"type": "object", "properties": {}}),
    }
}

pub async fn run(_args: &serde_json::Value, ctx: &ToolContext) -> ToolOutput {
    ToolOutput::ok(listing(&ctx.skills.snapshot()))
}

pub fn listing(snapshot: &Snapshot) -> String {
    if snapshot.skills.is_empty() && snapshot.broken.is_empty() {
        return "no skills installed; create_skill makes one".into();
    }
    let available = snapshot.available().count();
    let mut out = format!("{} skills, {available} available:", snapshot.skills.len());
    for skill in &snapshot.skills {
        let mut notes = Vec::new();
        if let Some(reason) = &skill.unavailable {
            notes.push(format!("unavailable: {reason}"));
        }
        if !skill.model_invocable {
            notes.push("only when the user asks for it by name".to_string());
        }
        let notes = if notes.is_empty() {
            String::new()
        } else {
            format!(" ({})", notes.join("; "))
        };
        out.push_str(&format!(
            "\n- {}: {}{notes} [{}]",
            skill.name, skill.description, skill.location
        ));
    }
    if !snapshot.broken.is_empty() {
        out.push_str("\nnot loaded:");
        for broken in &snapshot.broken {
            out.push_str(&format!("\n- {}: {}", broken.name, broken.message()));
        }
    }
    out
}
