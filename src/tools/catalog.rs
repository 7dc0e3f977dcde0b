//! The tool catalog: the built-ins most turns do not need are named in one
//! tool's description with a one-line purpose, and their schemas come on
//! demand (the design of the `mcp` tool, applied to built-ins), so the
//! fixed prompt stays small however many of them there are.
//!
//! `more_tools {name}` gives the tool's schema; `more_tools {name,
//! arguments}` runs it. The agent turns such a call into the named tool's
//! own call before anything else sees it (`ChatMessage`'s
//! `ToolCall::resolved`), so approvals, hooks, checkpoints, the webhook
//! check and the events are the real tool's; [`run`] with arguments is the
//! same call for callers outside a turn. A tool may also be called by its
//! own name directly.

use serde_json::Value;

use super::registry::{self, BUILTIN_TOOLS, Listing};
use super::{ToolContext, ToolOutput, arg_str};
use crate::chat::{CATALOG_TOOL, ToolCall, ToolSpec};

/// The catalog tool's name.
pub const NAME: &str = CATALOG_TOOL;

/// The catalog tool naming `listed` (name, purpose) in order; none listed:
/// no tool. The text depends only on what is listed, so it is
/// byte-identical from request to request (prefix cache).
pub fn spec(listed: &[(&'static str, &'static str)]) -> Option<ToolSpec> {
    if listed.is_empty() {
        return None;
    }
    let lines: Vec<String> = listed
        .iter()
        .map(|(name, purpose)| format!("{name}: {purpose}"))
        .collect();
    let description = super::mcp::intern(format!(
        "More tools. name alone: its schema; add arguments to run it.\n{}",
        lines.join("\n")
    ));
    Some(ToolSpec {
        name: NAME,
        description,
        parameters: serde_json::json!({
            "type": "object",
            "properties": {"name": {"type": "string"}, "arguments": {"type": "object"}},
            "required": ["name"]
        }),
    })
}

/// `{name}`: the schema; `{name, arguments}`: the tool's run.
pub async fn run(args: &Value, ctx: &ToolContext) -> ToolOutput {
    let name = match arg_str(args, "name") {
        Ok(name) => name.trim(),
        Err(e) => return e,
    };
    let call = ToolCall {
        id: ctx.call_id.clone(),
        name: NAME.to_string(),
        arguments: args.clone(),
        arguments_error: None,
    };
    let resolved = call.resolved();
    if resolved.name != NAME {
        if let Some(why) = &resolved.arguments_error {
            return ToolOutput::fail(format!("{why}; send `arguments` as a JSON object"));
        }
        return match registry::entry(&resolved.name) {
            Some(tool) => (tool.run)(&resolved.arguments, ctx).await,
            None => unknown(&resolved.name),
        };
    }
    match registry::entry(name) {
        Some(tool) => schema(tool),
        None => unknown(name),
    }
}

/// A tool's purpose and parameters, and how to call it.
fn schema(tool: &registry::ToolEntry) -> ToolOutput {
    let spec = (tool.spec)();
    ToolOutput::ok(format!(
        "{}: {}\nparameters: {}\ncall: {NAME} {{\"name\": \"{}\", \"arguments\": {{...}}}} (or {} directly)",
        spec.name, spec.description, spec.parameters, spec.name, spec.name
    ))
}

/// An unknown name: what the catalog has, and what is listed whole.
fn unknown(name: &str) -> ToolOutput {
    let named = |whole: bool| -> Vec<&str> {
        BUILTIN_TOOLS
            .iter()
            .filter(|tool| (tool.listing == Listing::Whole) == whole)
            .map(|tool| tool.name)
            .collect()
    };
    ToolOutput::fail(format!(
        "unknown tool `{name}`; {NAME} has: {}; listed whole: {}",
        named(false).join(", "),
        named(true).join(", ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn context() -> (tempfile::TempDir, ToolContext) {
        let dir = tempfile::tempdir().unwrap();
        let ctx = crate::tools::approval::test_context(dir.path(), Default::default());
        (dir, ctx)
    }

    #[tokio::test]
    async fn a_name_gives_the_schema_and_arguments_run_the_tool() {
        let (_d, ctx) = context();
        let out = run(&serde_json::json!({"name": "cron_remove"}), &ctx).await;
        assert!(out.success, "{}", out.output);
        assert!(
            out.output
                .starts_with("cron_remove: Delete a scheduled job"),
            "{}",
            out.output
        );
        assert!(
            out.output.contains(r#""required":["name"]"#),
            "{}",
            out.output
        );

        let call = serde_json::json!({"name": "cron_list", "arguments": "{}"});
        let out = run(&call, &ctx).await;
        let direct = registry::run("cron_list", &serde_json::json!({}), &ctx).await;
        assert_eq!(out, direct);
    }

    #[tokio::test]
    async fn an_unknown_name_lists_what_exists() {
        let (_d, ctx) = context();
        let out = run(&serde_json::json!({"name": "crontab"}), &ctx).await;
        assert!(!out.success);
        assert!(
            out.output
                .starts_with("unknown tool `crontab`; more_tools has: memory_get, "),
            "{}",
            out.output
        );
        assert!(
            out.output.contains("listed whole: read_file, "),
            "{}",
            out.output
        );
        let bad = serde_json::json!({"name": "cron_list", "arguments": "{nope"});
        let out = run(&bad, &ctx).await;
        assert!(
            !out.success && out.output.contains("not JSON"),
            "{}",
            out.output
        );
    }

    #[test]
    fn the_catalog_names_each_tool_with_its_purpose_and_nothing_listed_is_no_tool() {
        assert_eq!(spec(&[]), None);
        let listed = spec(&[("cron_list", "list jobs"), ("memory_get", "read memory")]).unwrap();
        assert_eq!(
            listed.description,
            "More tools. name alone: its schema; add arguments to run it.\ncron_list: list jobs\nmemory_get: read memory"
        );
        // The same listing is the same text (prefix cache).
        let again = spec(&[("cron_list", "list jobs"), ("memory_get", "read memory")]).unwrap();
        assert!(std::ptr::eq(listed.description, again.description));
    }
}
