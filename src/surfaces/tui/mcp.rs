//! MCP servers in the TUI: `mcp 2/3` on the status line, `/mcp` listing
//! each server (state, tools, last error) in the conversation, and MCP
//! calls named `server/tool` in the tools pane. The state comes from the
//! core's watch (`AgentHandle::mcp`), a protocol type only.

use crate::protocol::McpServerInfo;

/// Tool names shown per server in `/mcp` before "and N more".
const TOOLS_SHOWN: usize = 12;

/// `(ready, total)`; None without servers.
pub fn counts(servers: &[McpServerInfo]) -> Option<(usize, usize)> {
    if servers.is_empty() {
        return None;
    }
    let ready = servers.iter().filter(|s| s.state == "ready").count();
    Some((ready, servers.len()))
}

/// What `/mcp` shows.
pub fn listing(servers: &[McpServerInfo]) -> String {
    if servers.is_empty() {
        return "no MCP servers: add [mcp.servers.NAME] to egirl.toml".into();
    }
    let (ready, total) = counts(servers).unwrap_or_default();
    let mut out = format!("MCP servers: {ready}/{total} ready");
    for s in servers {
        out.push_str(&format!(
            "\n  {} ({}) {}, {} tool(s)",
            s.name,
            s.transport,
            s.state,
            s.tools.len()
        ));
        if !s.tools.is_empty() {
            let shown: Vec<&str> = s
                .tools
                .iter()
                .take(TOOLS_SHOWN)
                .map(String::as_str)
                .collect();
            let more = s.tools.len().saturating_sub(TOOLS_SHOWN);
            out.push_str(&format!("\n    {}", shown.join(", ")));
            if more > 0 {
                out.push_str(&format!(" and {more} more"));
            }
        }
        if let Some(error) = &s.last_error {
            out.push_str(&format!("\n    last error: {error}"));
        }
    }
    out
}

/// A call's name as the tools pane shows it: `mcp server/tool` for an MCP
/// tool (called by full name, or through `mcp {name}`), else the name.
pub fn call_name(name: &str, arguments: &serde_json::Value) -> String {
    let target = match name.strip_prefix("mcp__") {
        Some(rest) => Some(rest.to_string()),
        None if name == "mcp" => arguments
            .get("name")
            .and_then(|n| n.as_str())
            .map(|n| n.strip_prefix("mcp__").unwrap_or(n).to_string()),
        None => None,
    };
    match target {
        Some(t) => match t.split_once("__") {
            Some((server, tool)) => format!("mcp {server}/{tool}"),
            None => format!("mcp {t}"),
        },
        None => name.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn server(name: &str, state: &str, tools: &[&str], error: Option<&str>) -> McpServerInfo {
        McpServerInfo {
            name: name.into(),
            transport: "stdio".into(),
            state: state.into(),
            tools: tools.iter().map(|t| t.to_string()).collect(),
            last_error: error.map(str::to_string),
        }
    }

    #[test]
    fn the_listing_names_state_tools_and_last_error() {
        let servers = [
            server("everything", "ready", &["echo", "get-sum"], None),
            server("never", "failed", &[], Some("did not start within 1s")),
        ];
        assert_eq!(counts(&servers), Some((1, 2)));
        assert_eq!(
            listing(&servers),
            "MCP servers: 1/2 ready\n  everything (stdio) ready, 2 tool(s)\n    echo, get-sum\n  never (stdio) failed, 0 tool(s)\n    last error: did not start within 1s"
        );
        assert_eq!(counts(&[]), None);
    }

    #[test]
    fn mcp_calls_show_server_and_tool() {
        assert_eq!(
            call_name("mcp__fs__read_file", &json!({})),
            "mcp fs/read_file"
        );
        assert_eq!(
            call_name("mcp", &json!({"name": "everything__echo"})),
            "mcp everything/echo"
        );
        assert_eq!(call_name("mcp", &json!({"name": "fs"})), "mcp fs");
        assert_eq!(call_name("exec", &json!({})), "exec");
    }
}
