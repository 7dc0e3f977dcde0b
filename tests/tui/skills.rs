//! Skills in the TUI: `/skills` in the conversation, skill slash commands
//! in completion, the input hint and help, and what running one sends.

use std::sync::Arc;

use crossterm::event::KeyCode;
use egirl::config::SkillsConfig;
use egirl::protocol::Op;
use egirl::skills::Registry;
use insta::assert_snapshot;

use super::*;

/// An app whose workspace has a runnable skill, one the model may not
/// start itself, one that cannot run here, and a broken file.
fn app_with_skills() -> (tempfile::TempDir, App) {
    let dir = tempfile::tempdir().expect("temp dir");
    let skills = dir.path().join("skills");
    let write = |name: &str, text: &str| {
        std::fs::create_dir_all(skills.join(name)).expect("dir");
        std::fs::write(skills.join(name).join("SKILL.md"), text).expect("skill");
    };
    write(
        "greet",
        "---\nname: greet\ndescription: Greets people warmly, in their own language.\n---\n",
    );
    write(
        "vault",
        "---\nname: vault\ndescription: Reads secrets from the vault.\ndisable-model-invocation: true\n---\n",
    );
    write(
        "mac-notes",
        "---\nname: mac-notes\ndescription: Apple Notes.\nmetadata: {\"openclaw\": {\"os\": [\"darwin\"], \"requires\": {\"bins\": [\"egirl-test-no-such-binary\"]}}}\n---\n",
    );
    write("broken", "---\nname: broken\n---\n");
    let registry = Registry::load(&SkillsConfig::default(), dir.path());
    let mut app = app();
    app.skills = Some(Arc::new(registry));
    (dir, app)
}

#[test]
fn skills_command_lists_them_in_the_conversation() {
    let (_dir, mut app) = app_with_skills();
    type_text(&mut app, "/skills");
    let effects = press(&mut app, key(KeyCode::Enter));
    assert!(
        ops(effects).is_empty(),
        "/skills is answered by the TUI itself"
    );
    let shown = screen(&app, 110, 20);
    if std::env::consts::OS == "macos" {
        return; // the gating line differs; the snapshot is Linux's
    }
    assert_snapshot!("skills_listing", shown);
}

#[test]
fn skill_commands_complete_show_a_hint_and_appear_in_help() {
    let (_dir, mut app) = app_with_skills();
    type_text(&mut app, "/gr");
    assert_snapshot!("skill_command_hint", screen(&app, 100, 12));
    press(&mut app, key(KeyCode::Tab));
    assert_eq!(app.input.text(), "/greet ");
    // Unavailable and broken skills are not commands.
    press(&mut app, key(KeyCode::Esc));
    app.input.clear();
    type_text(&mut app, "/mac");
    press(&mut app, key(KeyCode::Tab));
    assert_eq!(app.input.text(), "/mac");
    app.input.clear();

    press(&mut app, key(KeyCode::Char('?')));
    assert_snapshot!("help_overlay_with_skills", screen(&app, 100, 48));
}

#[test]
fn running_a_skill_asks_the_model_to_use_it() {
    let (_dir, mut app) = app_with_skills();
    type_text(&mut app, "/greet my aunt in Lisbon");
    let sent = ops(press(&mut app, key(KeyCode::Enter)));
    let [Op::UserMessage { text, .. }] = sent.as_slice() else {
        panic!("one message: {sent:?}");
    };
    assert_eq!(
        text,
        "Use the greet skill for this: read skills/greet/SKILL.md first and follow it.\n\nmy aunt in Lisbon"
    );
    // A skill the model may not start is still the user's to run.
    type_text(&mut app, "/vault");
    let sent = ops(press(&mut app, key(KeyCode::Enter)));
    assert!(
        matches!(sent.as_slice(), [Op::UserMessage { text, .. }] if text.starts_with("Use the vault skill")),
        "{sent:?}"
    );
    // Unknown stays unknown.
    type_text(&mut app, "/mac-notes");
    assert!(ops(press(&mut app, key(KeyCode::Enter))).is_empty());
}
