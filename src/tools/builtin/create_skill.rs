//! `create_skill {name, description, instructions, overwrite?}`: the agent
//! writes itself a skill, `<workspace>/skills/<name>/SKILL.md`, and the
//! registry reloads at once so the next request lists it.

use crate::chat::ToolSpec;
use crate::fsutil::atomic::write_atomic;
use crate::skills::author;
use crate::tools::paths::{self, Access};
use crate::tools::{ToolContext, ToolOutput, arg_str};

pub fn spec() -> ToolSpec {
    ToolSpec {
        name: "create_skill",
        description: "Save a reusable skill: name (lowercase-hyphens), description (when to use), instructions (Markdown).",
        parameters: serde_json::json!({
            "type": "object",
            "properties": {
                "name": {"type": "string"},
                "description": {"type": "string"},
                "instructions": {"type": "string"},
                "overwrite": {"type": "boolean"}
            },
            "required": ["name", "description", "instructions"]
        }),
    }
}

pub async fn run(args: &serde_json::Value, ctx: &ToolContext) -> ToolOutput {
    let (name, description, instructions) = match (
        arg_str(args, "name"),
        arg_str(args, "description"),
        arg_str(args, "instructions"),
    ) {
        (Ok(n), Ok(d), Ok(i)) => (n.trim(), d, i),
        (Err(e), _, _) | (_, Err(e), _) | (_, _, Err(e)) => return e,
    };
    // Small models send `"true"` as often as `true`.
    let overwrite = match args.get("overwrite") {
        Some(serde_json::Value::Bool(b)) => *b,
        Some(serde_json::Value::String(s)) => s.eq_ignore_ascii_case("true"),
        _ => false,
    };
    let text = match author::render(name, description, instructions) {
        Ok(t) => t,
        Err(e) => return ToolOutput::fail(e),
    };
    let relative = format!("skills/{name}/SKILL.md");
    let path = match paths::resolve(&ctx.workspace, &[], &relative, Access::Write) {
        Ok(p) => p,
        Err(e) => return ToolOutput::fail(e),
    };
    if let Some(why) = ctx.protected.write_refusal(&path, &relative) {
        return ToolOutput::fail(why);
    }
    let before = ctx.skills.snapshot();
    let existing = before
        .get(name)
        .map(|s| s.location.clone())
        .or_else(|| path.exists().then(|| relative.clone()));
    if let Some(location) = &existing
        && !overwrite
    {
        return ToolOutput::fail(format!(
            "a skill named `{name}` already exists ({location}); pick another name, or pass overwrite: true to replace it"
        ));
    }
    let target = path.clone();
    let job = tokio::task::spawn_blocking(move || {
        if let Some(parent) = target.parent() {
            std::fs::create_dir_all(parent)?;
        }
        write_atomic(&target, text.as_bytes())
    });
    match job.await {
        Ok(Ok(())) => {}
        Ok(Err(e)) => return ToolOutput::fail(format!("cannot write {relative}: {e}")),
        Err(e) => return ToolOutput::fail(format!("create_skill failed: {e}")),
    }
    let after = ctx.skills.reload();
    let verb = if existing.is_some() {
        "replaced"
    } else {
        "created"
    };
    match after.get(name) {
        Some(skill) if skill.path == path => {
            let state = match &skill.unavailable {
                None => "it is available now".to_string(),
                Some(reason) => format!("it is unavailable here: {reason}"),
            };
            ToolOutput::ok(format!("{verb} skill `{name}` at {relative}; {state}"))
        }
        // Written, but something else answers to the name (or it did not load).
        _ => ToolOutput::fail(format!(
            "wrote {relative}, but the skill did not load as `{name}`; list_skills shows why"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::ExecApproval;
    use crate::tools::approval::test_context;
    use serde_json::json;

    #[tokio::test]
    async fn creates_refuses_duplicates_and_overwrites() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("skills")).unwrap();
        let ctx = test_context(dir.path(), ExecApproval::Deny);
        let args =
            json!({"name": "say-hi", "description": "Greets: warmly", "instructions": "Say hi."});
        let out = run(&args, &ctx).await;
        assert!(out.success, "{}", out.output);
        assert!(out.output.contains("available now"), "{}", out.output);
        assert_eq!(
            ctx.skills.snapshot().get("say-hi").unwrap().description,
            "Greets: warmly"
        );

        let again = run(&args, &ctx).await;
        assert!(
            !again.success && again.output.contains("overwrite"),
            "{}",
            again.output
        );

        let args = json!({"name": "say-hi", "description": "Greets", "instructions": "Wave.", "overwrite": "true"});
        let out = run(&args, &ctx).await;
        assert!(
            out.success && out.output.starts_with("replaced"),
            "{}",
            out.output
        );
        let text = std::fs::read_to_string(dir.path().join("skills/say-hi/SKILL.md")).unwrap();
        assert!(text.ends_with("\nWave.\n"), "{text}");

        let bad = run(
            &json!({"name": "../up", "description": "d", "instructions": "i"}),
            &ctx,
        )
        .await;
        assert!(
            !bad.success && bad.output.contains("not a valid skill name"),
            "{}",
            bad.output
        );
    }
}
