//! The tool catalog: the built-ins most turns do not need are named in one
//! tool's description with a one-line purpose, and their schemas come on
//! demand (the design of the `mcp` tool, applied to built-ins), so the
//! fixed prompt stays small however many of them there are.
//!
//! `more_tools {name}` gives the tool's schema; `more_tools {name,
//! arguments}` runs it. The agent turns such a call into the named tool's
//! own call before anything else sees it (`ToolCall::resolved` in
//! `chat`), so approvals, hooks, checkpoints, the webhook check and the
//! events are the real tool's; the registry runs the same call for callers
//! outside a turn. A tool may also be called by its own name directly.
//! Which tools the catalog names is the registry's table (`Listing`).

use crate::chat::{CATALOG_TOOL, ToolSpec};
use crate::tools::ToolOutput;

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

/// A tool's purpose and parameters, and how to call it.
pub fn schema(spec: &ToolSpec) -> ToolOutput {
    ToolOutput::ok(format!(
        "{}: {}\nparameters: {}\ncall: {NAME} {{\"name\": \"{}\", \"arguments\": {{...}}}} (or {} directly)",
        spec.name, spec.description, spec.parameters, spec.name, spec.name
    ))
}

/// An unknown name: what the catalog names, and what is listed whole.
pub fn unknown(name: &str, named: &[&str], whole: &[&str]) -> ToolOutput {
    ToolOutput::fail(format!(
        "unknown tool `{name}`; {NAME} has: {}; listed whole: {}",
        named.join(", "),
        whole.join(", ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

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
