//! `create_skill`, `list_skills` and `read_file` on skill directories.

use std::sync::Arc;

use egirl::skills::Registry;
use egirl::tools;
use serde_json::json;

use super::{config, fixtures, tool_context, workspace};

#[tokio::test]
async fn create_skill_round_trip_and_slug_validation() {
    let (_tmp, ws) = workspace();
    let registry = Arc::new(Registry::load(&config(&[]), &ws));
    let ctx = tool_context(&ws, registry.clone());
    let description = "Check the weather: \"today\" or this week — for any city";
    let args = json!({
        "name": "check-weather",
        "description": description,
        "instructions": "# Weather\n\nRun `curl -s wttr.in/{city}?format=3`.",
    });
    let out = tools::run("create_skill", &args, &ctx).await;
    assert!(out.success, "{}", out.output);
    assert_eq!(
        out.output,
        "created skill `check-weather` at skills/check-weather/SKILL.md; it is available now"
    );

    // Reloaded at once: listed to the model, readable, and parsed back exactly.
    let snap = registry.snapshot();
    let skill = snap.get("check-weather").expect("loaded without a restart");
    assert_eq!(skill.description, description);
    assert!(
        snap.prompt.contains("- check-weather: Check the weather"),
        "{}",
        snap.prompt
    );
    let text = std::fs::read_to_string(ws.join("skills/check-weather/SKILL.md")).unwrap();
    assert!(
        text.starts_with("---\nname: \"check-weather\"\ndescription: \""),
        "{text}"
    );
    // A slug YAML would read as null or a number stays a name.
    for slug in ["null", "true", "2048"] {
        let made = tools::run(
            "create_skill",
            &json!({"name": slug, "description": "A test.", "instructions": "Do it."}),
            &ctx,
        )
        .await;
        assert!(made.success, "{slug}: {}", made.output);
        assert!(registry.snapshot().get(slug).is_some(), "{slug}");
    }
    let read = tools::run(
        "read_file",
        &json!({"path": "skills/check-weather/SKILL.md"}),
        &ctx,
    )
    .await;
    assert!(read.output.contains("wttr.in"), "{}", read.output);

    let listed = tools::run("list_skills", &json!({}), &ctx).await;
    assert!(listed.success);
    assert!(
        listed.output.contains("- check-weather: Check the weather: \"today\" or this week — for any city [skills/check-weather/SKILL.md]"),
        "{}",
        listed.output
    );

    // Existing names need overwrite.
    let again = tools::run("create_skill", &args, &ctx).await;
    assert!(!again.success);
    assert!(again.output.contains("already exists"), "{}", again.output);
    let replace = json!({"name": "check-weather", "description": "New.", "instructions": "New body.", "overwrite": true});
    let out = tools::run("create_skill", &replace, &ctx).await;
    assert!(
        out.success && out.output.starts_with("replaced"),
        "{}",
        out.output
    );
    assert_eq!(
        registry
            .snapshot()
            .get("check-weather")
            .unwrap()
            .description,
        "New."
    );

    for bad in [
        "Check-Weather",
        "check_weather",
        "../escape",
        "a/b",
        "-x",
        "",
        "x--y",
    ] {
        let args = json!({"name": bad, "description": "d", "instructions": "i"});
        let out = tools::run("create_skill", &args, &ctx).await;
        assert!(!out.success, "{bad}");
        assert!(
            out.output.contains("not a valid skill name"),
            "{bad}: {}",
            out.output
        );
    }
    assert!(!ws.join("escape").exists() && !ws.join("skills/a").exists());
}

#[tokio::test]
async fn a_skill_in_another_dir_counts_as_existing() {
    let (_tmp, ws) = workspace();
    let registry = Arc::new(Registry::load(&config(&[&fixtures()]), &ws));
    let ctx = tool_context(&ws, registry);
    let args = json!({"name": "weather", "description": "Mine.", "instructions": "x"});
    let out = tools::run("create_skill", &args, &ctx).await;
    assert!(!out.success);
    assert!(
        out.output
            .contains("tests/fixtures/skills/weather/SKILL.md"),
        "{}",
        out.output
    );
}

#[tokio::test]
async fn skill_dirs_are_readable_outside_the_workspace_but_never_writable() {
    let (_tmp, ws) = workspace();
    let registry = Arc::new(Registry::load(&config(&[&fixtures()]), &ws));
    let ctx = tool_context(&ws, registry.clone());
    let weather = registry.snapshot().get("weather").unwrap().path.clone();
    let read = tools::run(
        "read_file",
        &json!({"path": weather.display().to_string()}),
        &ctx,
    )
    .await;
    assert!(read.success, "{}", read.output);
    assert!(read.output.contains("wttr.in"));

    // Files beside the SKILL.md too (a skill's references).
    let reference = fixtures().join("himalaya/references/configuration.md");
    let read = tools::run(
        "read_file",
        &json!({"path": reference.display().to_string()}),
        &ctx,
    )
    .await;
    assert!(read.success, "{}", read.output);

    for tool in ["write_file", "edit_file"] {
        let args = json!({"path": weather.display().to_string(), "content": "x", "old_text": "Weather", "new_text": "x"});
        let out = tools::run(tool, &args, &ctx).await;
        assert!(!out.success, "{tool} must not write into a skills dir");
        assert!(
            out.output.contains("outside the allowed roots"),
            "{tool}: {}",
            out.output
        );
    }
    assert!(
        std::fs::read_to_string(&weather)
            .unwrap()
            .contains("# Weather")
    );
}

#[tokio::test]
async fn read_file_resolves_base_dir_in_a_skill() {
    let (_tmp, ws) = workspace();
    let registry = Arc::new(Registry::load(&config(&[&fixtures().join("edge")]), &ws));
    let ctx = tool_context(&ws, registry.clone());
    let skill = registry.snapshot().get("base-dir").unwrap().clone();
    let read = tools::run(
        "read_file",
        &json!({"path": skill.path.display().to_string()}),
        &ctx,
    )
    .await;
    assert!(read.success, "{}", read.output);
    let dir = skill.base_dir.display().to_string();
    assert!(
        read.output.contains(&format!(
            "Run `{dir}/scripts/hello.sh`; the template is {dir}/template.txt."
        )),
        "{}",
        read.output
    );
    assert!(!read.output.contains("{baseDir}"));

    // Only skill files expand: the same text elsewhere is read as written.
    std::fs::write(ws.join("plain.md"), "see {baseDir}/x").unwrap();
    let read = tools::run("read_file", &json!({"path": "plain.md"}), &ctx).await;
    assert!(read.output.contains("{baseDir}/x"), "{}", read.output);
}

/// A SKILL.md without frontmatter is a skill like any: `{baseDir}` in it
/// is its folder when the model reads it.
#[tokio::test]
async fn read_file_resolves_base_dir_in_a_skill_without_frontmatter() {
    let (_tmp, ws) = workspace();
    let registry = Arc::new(Registry::load(&config(&[&fixtures().join("edge")]), &ws));
    let ctx = tool_context(&ws, registry.clone());
    let skill = registry.snapshot().get("no-frontmatter").unwrap().clone();
    let read = tools::run(
        "read_file",
        &json!({"path": skill.path.display().to_string()}),
        &ctx,
    )
    .await;
    assert!(read.success, "{}", read.output);
    let dir = skill.base_dir.display().to_string();
    assert!(
        read.output.contains(&format!("Read `{dir}/template.md`")),
        "{}",
        read.output
    );
}
