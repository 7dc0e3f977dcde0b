//! MCP tools as the model sees them: `mcp_schema {name}` (a tool's
//! description and argument schema, on demand), `mcp_call {name,
//! arguments}`, and every connected tool by its full name
//! `mcp__<server>__<tool>`, listed or not. The prompt carries only the
//! tools' names, grouped by server, in `mcp_schema`'s description, so any
//! number of connected tools costs a few tokens each.
//!
//! A call is checked against the tool's schema, approved (read-only tools
//! and trusted servers run; the others ask like exec; unattended turns
//! deny what would ask; webhook turns get read-only tools only), run with
//! the server's `tool_timeout`, and its result turned into text and capped.
//! The agent redacts it like any tool's output.

use std::collections::HashSet;
use std::sync::{Mutex, OnceLock};

use serde_json::Value;

use crate::mcp::{McpApproval, McpManager, McpTool, listing, naming, result, schema};
use crate::protocol::Origin;
use crate::providers::ToolSpec;
use crate::tools::{ToolContext, ToolOutput, arg_str};

/// Output past this many characters keeps its head and tail.
const MAX_OUTPUT_CHARS: usize = 16_000;
const TAIL_CHARS: usize = 4_000;

/// The two tools, when any MCP tool is connected (none: nothing listed,
/// nothing spent).
pub fn specs(manager: &McpManager) -> Vec<ToolSpec> {
    let tools = manager.tools();
    if tools.is_empty() {
        return Vec::new();
    }
    let description = intern(format!(
        "Get an MCP tool's arguments. MCP tools (server: tools); call as mcp__<server>__<tool> or with mcp_call:\n{}",
        listing(&tools)
    ));
    vec![
        ToolSpec {
            name: "mcp_schema",
            description,
            parameters: serde_json::json!({
                "type": "object",
                "properties": {"name": {"type": "string"}},
                "required": ["name"]
            }),
        },
        ToolSpec {
            name: "mcp_call",
            description: "Call an MCP tool (name: server__tool) with its arguments.",
            parameters: serde_json::json!({
                "type": "object",
                "properties": {"name": {"type": "string"}, "arguments": {"type": "object"}},
                "required": ["name"]
            }),
        },
    ]
}

/// Whether `name` is one of the MCP tools' names (for dispatch and the
/// webhook check).
pub fn is_mcp_tool(name: &str) -> bool {
    name == "mcp_schema" || name == "mcp_call" || naming::is_mcp(name)
}

/// Runs `mcp_schema`, `mcp_call` or a tool by its full name.
pub async fn run(name: &str, args: &Value, ctx: &ToolContext) -> ToolOutput {
    match name {
        "mcp_schema" => describe(args, ctx).await,
        "mcp_call" => {
            let target = match arg_str(args, "name") {
                Ok(n) => n,
                Err(e) => return e,
            };
            let arguments = match args.get("arguments") {
                None | Some(Value::Null) => Value::Object(Default::default()),
                // Small models often send the object as a JSON string.
                Some(Value::String(s)) => match serde_json::from_str(s) {
                    Ok(v) => v,
                    Err(e) => {
                        return ToolOutput::fail(format!("`arguments` is not a JSON object: {e}"));
                    }
                },
                Some(v) => v.clone(),
            };
            call(target, &arguments, ctx).await
        }
        full => call(full, args, ctx).await,
    }
}

/// The tool, waiting for servers still starting when it is not there yet.
async fn find(name: &str, ctx: &ToolContext) -> Result<McpTool, String> {
    match ctx.mcp.find(name) {
        Ok(tool) => Ok(tool),
        Err(_) => {
            ctx.mcp.settled().await;
            ctx.mcp.find(name)
        }
    }
}

async fn describe(args: &Value, ctx: &ToolContext) -> ToolOutput {
    let name = match arg_str(args, "name") {
        Ok(n) => n,
        Err(e) => return e,
    };
    match find(name, ctx).await {
        Ok(tool) => ToolOutput::ok(format!(
            "{}{}\n{}\narguments schema: {}",
            tool.full_name,
            if tool.read_only { " (read-only)" } else { "" },
            tool.description,
            tool.schema
        )),
        Err(why) => ToolOutput::fail(why),
    }
}

async fn call(name: &str, args: &Value, ctx: &ToolContext) -> ToolOutput {
    let tool = match find(name, ctx).await {
        Ok(tool) => tool,
        Err(why) => return ToolOutput::fail(why),
    };
    if ctx.origin == Origin::Webhook && !tool.read_only {
        return ToolOutput::fail(format!(
            "`{}` is not read-only, and a webhook-started turn gets read-only MCP tools only (its text came from the network)",
            tool.full_name
        ));
    }
    let Value::Object(arguments) = args else {
        return ToolOutput::fail(format!(
            "the arguments of `{}` must be a JSON object",
            tool.full_name
        ));
    };
    let problems = schema::check(&tool.schema, args);
    if !problems.is_empty() {
        return ToolOutput::fail(format!(
            "invalid arguments for `{}`: {}. mcp_schema {{\"name\": \"{}\"}} shows the schema",
            tool.full_name,
            problems.join("; "),
            tool.full_name
        ));
    }
    if let Err(why) = approve(&tool, args, ctx).await {
        return ToolOutput::fail(why);
    }
    match ctx.mcp.call(&tool, arguments.clone(), &ctx.cancel).await {
        Ok(outcome) => {
            let text = cap(result::to_text(&outcome));
            if outcome.get("isError").and_then(Value::as_bool) == Some(true) {
                ToolOutput::fail(format!("`{}` failed: {text}", tool.full_name))
            } else {
                ToolOutput::ok(text)
            }
        }
        Err(why) => ToolOutput::fail(why),
    }
}

async fn approve(tool: &McpTool, args: &Value, ctx: &ToolContext) -> Result<String, String> {
    if tool.read_only {
        return Ok("read-only (readOnlyHint)".into());
    }
    if ctx.mcp.approval(&tool.server) == McpApproval::Allow {
        return Ok(format!(
            "trusted server ([mcp.servers.{}] approval = \"allow\")",
            tool.server
        ));
    }
    ctx.approver.check_mcp(tool, args, ctx).await
}

/// Head and tail of a long result, with what was cut in between.
fn cap(text: String) -> String {
    let total = text.chars().count();
    if total <= MAX_OUTPUT_CHARS {
        return text;
    }
    let head: String = text.chars().take(MAX_OUTPUT_CHARS - TAIL_CHARS).collect();
    let tail: String = text.chars().skip(total - TAIL_CHARS).collect();
    let cut = total - MAX_OUTPUT_CHARS;
    format!("{head}\n[… {cut} characters cut …]\n{tail}")
}

/// `ToolSpec` descriptions are `&'static str`; the listing changes only
/// when a server's tools do, so each distinct listing is leaked once and
/// reused (a handful of strings over a process's life).
fn intern(text: String) -> &'static str {
    static SEEN: OnceLock<Mutex<HashSet<&'static str>>> = OnceLock::new();
    let mut seen = SEEN
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    if let Some(known) = seen.get(text.as_str()) {
        return known;
    }
    let leaked: &'static str = Box::leak(text.into_boxed_str());
    seen.insert(leaked);
    leaked
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_results_keep_head_and_tail() {
        let text = format!("{}{}", "a".repeat(20_000), "z".repeat(10));
        let capped = cap(text);
        assert!(capped.starts_with(&"a".repeat(100)));
        assert!(capped.ends_with(&"z".repeat(10)));
        assert!(capped.contains("[… 4010 characters cut …]"));
        assert_eq!(cap("short".into()), "short");
    }

    #[test]
    fn the_same_listing_is_interned_once() {
        let a = intern("listing one".to_string());
        let b = intern("listing one".to_string());
        assert!(std::ptr::eq(a, b));
    }
}
