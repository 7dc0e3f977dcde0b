//! The agent's side: the `<available_skills>` block in the system prompt
//! the (fake) llama-server receives, hot reload after `create_skill`, and
//! a trigger pre-selecting a skill.

use serde_json::Value;

use super::fixtures;
use crate::agent::{final_text, start, tool_results};
use crate::support::fake_llama::{FakeLlama, Reply};

fn system_of(request: &Value) -> String {
    request["messages"][0]["content"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

fn last_user_of(request: &Value) -> String {
    request["messages"]
        .as_array()
        .and_then(|m| m.iter().rev().find(|m| m["role"] == "user"))
        .and_then(|m| m["content"].as_str())
        .unwrap_or_default()
        .to_string()
}

#[tokio::test]
async fn the_system_prompt_lists_skills_and_create_skill_hot_reloads_them() {
    let fake = FakeLlama::start().await;
    fake.push_replies([
        Reply::tool_calls(&[(
            "create_skill",
            r#"{"name": "tea-timer", "description": "Times a pot of tea.", "instructions": "Wait 4 minutes."}"#,
        )]),
        Reply::text("Made it."),
        Reply::text("Second."),
    ]);
    let edge = fixtures().join("edge");
    let mut h = start(&fake, |c| c.skills.dirs = vec![edge.display().to_string()]);
    h.send("s1", "make me a tea timer skill");
    let events = h.turn("s1").await;
    assert_eq!(final_text(&events).as_deref(), Some("Made it."));
    let results = tool_results(&events);
    assert!(results[0].1, "{results:?}");
    h.send("s1", "thanks");
    h.turn("s1").await;

    let requests = fake.requests();
    assert_eq!(requests.len(), 3);
    let first = system_of(&requests[0]);
    // After the workspace files: the slow-changing part of the prompt.
    let block = first.find("<available_skills>").expect("skills block");
    assert!(first.rfind("</file>").is_some_and(|f| f < block));
    assert!(first.ends_with("</available_skills>"), "{first}");
    assert!(
        first.contains("- always: Listed whatever the machine has. ["),
        "{first}"
    );
    assert!(
        !first.contains("- missing-bin"),
        "unavailable skills are not offered"
    );
    assert!(!first.contains("tea-timer"));
    // Byte-identical within the turn (prefix cache).
    assert_eq!(system_of(&requests[1]), first);
    // The next turn sees the new skill without a restart.
    let next = system_of(&requests[2]);
    assert!(
        next.contains("- tea-timer: Times a pot of tea. [skills/tea-timer/SKILL.md]"),
        "{next}"
    );
    // The tool catalog names the two skill tools, after the file tools
    // (listed whole).
    let tools = requests[0]["tools"].as_array().unwrap();
    let names: Vec<&str> = tools
        .iter()
        .filter_map(|t| t["function"]["name"].as_str())
        .collect();
    let at = names
        .iter()
        .position(|n| *n == "more_tools")
        .expect("the tool catalog offered");
    assert!(at > names.iter().position(|n| *n == "exec").unwrap());
    let listing = tools[at]["function"]["description"].as_str().unwrap();
    let skills: Vec<&str> = listing
        .lines()
        .filter(|l| l.contains("skill"))
        .filter_map(|l| l.split_once(':').map(|(name, _)| name))
        .collect();
    assert_eq!(skills, ["create_skill", "list_skills"], "{listing}");
}

#[tokio::test]
async fn a_trigger_points_the_model_at_its_skill() {
    let fake = FakeLlama::start().await;
    let edge = fixtures().join("edge");
    let mut h = start(&fake, |c| c.skills.dirs = vec![edge.display().to_string()]);
    h.send("s1", "please jot down that the plumber comes Tuesday");
    h.turn("s1").await;
    h.send("s1", "what's 2 + 2?");
    h.turn("s1").await;
    let requests = fake.requests();
    let hinted = last_user_of(&requests[0]);
    let location = edge.join("quick-note.md");
    let location = std::fs::canonicalize(location).unwrap();
    assert!(
        hinted.contains(&format!(
            "\nskill: quick-note (read {} first)\n</context>",
            location.display()
        )),
        "{hinted}"
    );
    assert!(!last_user_of(&requests[1]).contains("skill:"));
}

#[tokio::test]
async fn without_skills_the_prompt_has_no_block() {
    let fake = FakeLlama::start().await;
    let mut h = start(&fake, |_| {});
    h.send("s1", "hi");
    h.turn("s1").await;
    assert!(!system_of(&fake.requests()[0]).contains("available_skills"));
}
