//! MCP tools as the model sees them: one tool, `mcp {name, arguments?}`
//! (a server's name lists its tools with one-line purposes; a tool's name
//! without arguments gives its schema, with arguments calls it), and every
//! connected tool by its full name `mcp__<server>__<tool>`, listed or not.
//! The prompt carries the tools' names grouped by server while they fit in
//! [`LISTING_CHARS`], else the servers and their tool counts: however many
//! tools are connected, MCP costs the fixed prompt a bounded few tokens.
//!
//! A call is checked against the tool's schema, approved (read-only tools
//! and trusted servers run; the others ask like exec; unattended turns
//! deny what would ask; webhook turns get read-only tools only), run with
//! the server's `tool_timeout`, and its result turned into text and capped.
//! The agent redacts it like any tool's output.

use std::collections::HashSet;
use std::sync::{Mutex, OnceLock};

use serde_json::Value;

use crate::chat::ToolSpec;
use crate::config::McpApproval;
use crate::mcp::{McpTool, listing, naming, result, schema};
use crate::protocol::Origin;
use crate::tools::approval::{Granted, Refusal};
use crate::tools::{ToolContext, ToolOutput, arg_str};

/// Output past this many characters keeps its head and tail.
const MAX_OUTPUT_CHARS: usize = 16_000;
const TAIL_CHARS: usize = 4_000;
/// The most the tool names may take in the prompt; past it the prompt
/// names the servers and their tool counts (`mcp {name: server}` lists).
pub const LISTING_CHARS: usize = 240;

/// The `mcp` tool, when any MCP tool is connected (none: nothing listed,
/// nothing spent).
pub fn specs(manager: &crate::mcp::McpManager) -> Vec<ToolSpec> {
    specs_of(manager.tools())
}

/// [`specs`], of the tools `config`'s policy offers (an agent's servers,
/// less what `[tools] allow/deny` leaves out; see `tools::policy`).
pub fn specs_for(
    manager: &crate::mcp::McpManager,
    config: &crate::config::Config,
) -> Vec<ToolSpec> {
    if !super::policy::mcp_offered(config) {
        return Vec::new();
    }
    let mut tools = manager.tools();
    tools.retain(|tool| super::policy::mcp_permitted(config, &tool.server, &tool.name));
    specs_of(tools)
}

fn specs_of(tools: Vec<McpTool>) -> Vec<ToolSpec> {
    if tools.is_empty() {
        return Vec::new();
    }
    let description = intern(format!(
        "MCP tools. name: a server (lists its tools) or server__tool (schema; add arguments to call).\n{}",
        prompt_listing(&tools)
    ));
    vec![ToolSpec {
        name: "mcp",
        description,
        parameters: serde_json::json!({
            "type": "object",
            "properties": {"name": {"type": "string"}, "arguments": {"type": "object"}},
            "required": ["name"]
        }),
    }]
}

/// Names by server while they fit, else servers with counts.
fn prompt_listing(tools: &[McpTool]) -> String {
    let names = listing(tools);
    if names.chars().count() <= LISTING_CHARS {
        return names;
    }
    let mut servers: Vec<(String, usize)> = Vec::new();
    for tool in tools {
        match servers.last_mut() {
            Some((server, n)) if *server == tool.server => *n += 1,
            _ => servers.push((tool.server.clone(), 1)),
        }
    }
    let parts: Vec<String> = servers
        .iter()
        .map(|(server, n)| format!("{server} ({n} tools)"))
        .collect();
    format!("Servers: {}", parts.join(", "))
}

/// Whether `name` is an MCP tool's name (for dispatch and the webhook check).
pub fn is_mcp_tool(name: &str) -> bool {
    name == "mcp" || naming::is_mcp(name)
}

/// Runs `mcp` or a tool by its full name.
pub async fn run(name: &str, args: &Value, ctx: &ToolContext) -> ToolOutput {
    if !super::policy::mcp_offered(&ctx.config) {
        return ToolOutput::fail(super::policy::refusal(name));
    }
    if name != "mcp" {
        return call(name, args, ctx).await;
    }
    let target = match arg_str(args, "name") {
        Ok(n) => n.trim(),
        Err(e) => return e,
    };
    let own_server = super::policy::mcp_permitted(&ctx.config, target, "");
    if let Some(text) = ctx.mcp.server_listing(target).filter(|_| own_server) {
        return ToolOutput::ok(text);
    }
    match args.get("arguments") {
        None | Some(Value::Null) => describe(target, ctx).await,
        // Small models often send the object as a JSON string.
        Some(Value::String(s)) => match serde_json::from_str(s) {
            Ok(arguments) => call(target, &arguments, ctx).await,
            Err(e) => ToolOutput::fail(format!("`arguments` is not a JSON object: {e}")),
        },
        Some(arguments) => call(target, arguments, ctx).await,
    }
}

/// The tool, waiting for servers still starting when it is not there yet.
/// One the agent's policy leaves out is refused as if it were not there.
async fn find(name: &str, ctx: &ToolContext) -> Result<McpTool, String> {
    let tool = match ctx.mcp.find(name) {
        Ok(tool) => tool,
        Err(_) => {
            ctx.mcp.settled().await;
            ctx.mcp.find(name)?
        }
    };
    match super::policy::mcp_permitted(&ctx.config, &tool.server, &tool.name) {
        true => Ok(tool),
        false => Err(super::policy::refusal(&tool.full_name)),
    }
}

async fn describe(name: &str, ctx: &ToolContext) -> ToolOutput {
    match find(name, ctx).await {
        Ok(tool) => ToolOutput::ok(format!(
            "{}{}\n{}\narguments schema: {}\ncall: mcp {{\"name\": \"{}__{}\", \"arguments\": {{...}}}}",
            tool.full_name,
            if tool.read_only { " (read-only)" } else { "" },
            tool.description,
            tool.schema,
            tool.server,
            tool.name
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
            "invalid arguments for `{}`: {}. mcp {{\"name\": \"{}\"}} shows the schema",
            tool.full_name,
            problems.join("; "),
            tool.full_name
        ));
    }
    if let Err(why) = approve(&tool, args, ctx).await {
        return ToolOutput::refused(why);
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

async fn approve(tool: &McpTool, args: &Value, ctx: &ToolContext) -> Result<Granted, Refusal> {
    if tool.read_only {
        return Ok(Granted::Policy("read-only (readOnlyHint)".into()));
    }
    if ctx.mcp.approval(&tool.server) == McpApproval::Allow {
        return Ok(Granted::Policy(format!(
            "trusted server ([mcp.servers.{}] approval = \"allow\")",
            tool.server
        )));
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
pub(super) fn intern(text: String) -> &'static str {
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

    fn tool(server: &str, name: &str, read_only: bool) -> McpTool {
        McpTool {
            full_name: naming::full_name(server, name),
            server: server.into(),
            name: name.into(),
            description: format!("Does {name}. More words."),
            schema: serde_json::json!({
                "type": "object",
                "properties": {"path": {"type": "string"}},
                "required": ["path"]
            }),
            read_only,
        }
    }

    fn context(origin: Origin) -> (tempfile::TempDir, ToolContext) {
        let dir = tempfile::tempdir().unwrap();
        let mut ctx =
            crate::tools::approval::test_context(dir.path(), crate::config::ExecApproval::Ask);
        ctx.origin = origin;
        ctx.mcp = crate::mcp::McpManager::with_tools(vec![
            tool("fs", "read_text_file", true),
            tool("fs", "write_file", false),
        ]);
        (dir, ctx)
    }

    async fn outcome(ctx: &ToolContext, name: &str, args: Value) -> (bool, String) {
        let out = run(name, &args, ctx).await;
        (out.success, out.output)
    }

    #[tokio::test]
    async fn webhook_turns_get_read_only_tools_and_unattended_ones_are_never_asked() {
        let path = serde_json::json!({"path": "a.md"});
        let (_d, webhook) = context(Origin::Webhook);
        let (ok, why) = outcome(&webhook, "mcp__fs__write_file", path.clone()).await;
        assert!(
            !ok && why.contains("webhook-started turn gets read-only MCP tools only"),
            "{why}"
        );
        // A read-only tool gets past every check (then finds no connection here).
        let (ok, why) = outcome(&webhook, "mcp__fs__read_text_file", path.clone()).await;
        assert!(!ok && why.contains("is not connected"), "{why}");

        let (_d, cron) = context(Origin::Cron("nightly".into()));
        let args = serde_json::json!({"name": "fs__write_file", "arguments": path});
        let (ok, why) = outcome(&cron, "mcp", args).await;
        assert!(!ok && why.contains("unattended"), "{why}");
    }

    #[tokio::test]
    async fn the_mcp_tool_lists_describes_and_checks_before_calling() {
        let (_d, ctx) = context(Origin::Tui);
        let (ok, listed) = outcome(&ctx, "mcp", serde_json::json!({"name": "fs"})).await;
        assert!(ok);
        assert!(
            listed.starts_with("fs__read_text_file [read-only]: Does read_text_file.\nfs__write_file: Does write_file.\n"),
            "{listed}"
        );
        let (ok, schema) = outcome(&ctx, "mcp", serde_json::json!({"name": "fs/write_file"})).await;
        assert!(ok && schema.contains(r#""required":["path"]"#), "{schema}");
        let bad = serde_json::json!({"name": "fs__write_file", "arguments": "{\"path\": 3}"});
        let (ok, why) = outcome(&ctx, "mcp", bad).await;
        assert!(
            !ok && why.contains("arguments.path: expected string, got number"),
            "{why}"
        );
        let (ok, why) = outcome(&ctx, "mcp__nope__x", serde_json::json!({})).await;
        assert!(
            !ok && why.contains("connected: mcp__fs__read_text_file, mcp__fs__write_file"),
            "{why}"
        );
    }

    #[test]
    fn the_prompt_names_tools_while_they_fit_else_counts_them() {
        let few = [
            tool("fs", "read_text_file", true),
            tool("fs", "write_file", false),
        ];
        assert_eq!(prompt_listing(&few), "fs: read_text_file, write_file");
        let many: Vec<McpTool> = (0..40)
            .map(|i| {
                tool(
                    if i < 30 { "big" } else { "small" },
                    &format!("tool_{i}"),
                    true,
                )
            })
            .collect();
        assert_eq!(
            prompt_listing(&many),
            "Servers: big (30 tools), small (10 tools)"
        );
    }

    #[test]
    fn the_same_listing_is_interned_once() {
        let a = intern("listing one".to_string());
        let b = intern("listing one".to_string());
        assert!(std::ptr::eq(a, b));
    }
}
