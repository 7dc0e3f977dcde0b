//! Skills in the TUI: `/skills` lists them in the conversation, and each
//! user-invocable skill is a slash command, `/name args`, that asks the
//! model to use it (as OpenClaw does).

use super::app::App;
use super::commands::skill_command;
use super::wrap;

/// Characters of a description shown per line of `/skills`.
const DESCRIPTION_CHARS: usize = 72;

/// What `/skills` shows: available ones first (with their command when
/// the user may run them), then unavailable with the reason, then broken
/// files with file:line.
pub fn listing(app: &App) -> String {
    let Some(registry) = &app.skills else {
        return "no skills loaded".into();
    };
    let snap = registry.snapshot();
    if snap.skills.is_empty() && snap.broken.is_empty() {
        return format!(
            "no skills yet: add <name>/SKILL.md under {}, or ask for one (create_skill)",
            registry.workspace_dir().display()
        );
    }
    let available = snap.available().count();
    let mut out = format!(
        "skills: {available} available, {} unavailable, {} broken",
        snap.skills.len() - available,
        snap.broken.len()
    );
    for skill in snap.available() {
        let shown = if skill.user_invocable {
            skill_command(&skill.name)
        } else {
            skill.name.clone()
        };
        let only_user = if skill.model_invocable {
            ""
        } else {
            " (only when you run it)"
        };
        out.push_str(&format!(
            "\n✓ {shown} · {}{only_user}",
            wrap::truncate(&skill.description, DESCRIPTION_CHARS)
        ));
    }
    for skill in snap.skills.iter().filter(|s| !s.available()) {
        out.push_str(&format!(
            "\n✗ {} · {}",
            skill.name,
            skill.unavailable.as_deref().unwrap_or_default()
        ));
    }
    for broken in &snap.broken {
        out.push_str(&format!("\n! {} · {}", broken.name, broken.message()));
    }
    out
}

/// The message `/name args` sends, when `name` is a skill the user may run.
pub fn invocation(app: &App, command: &str, args: &str) -> Option<String> {
    let snap = app.skills.as_ref()?.snapshot();
    let skill = snap
        .commands()
        .find(|s| skill_command(&s.name) == command)?;
    let ask = format!(
        "Use the {} skill for this: read {} first and follow it.",
        skill.name, skill.location
    );
    Some(if args.is_empty() {
        ask
    } else {
        format!("{ask}\n\n{args}")
    })
}
