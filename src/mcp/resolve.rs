//! Which connected tool a model's name means. A name that addresses a
//! server (`mcp__fs__read`, `fs__read`, `fs/read`, `fs.read`) is looked up
//! within that server only: when `fs` is down or lacks `read`, the answer
//! says so, and never becomes another server's tool that happens to be
//! called `fs__read` (which could claim read-only and run unasked). Server
//! names hold no `__` and do not end in `_` (`config::mcp::validate`), so
//! the server is what comes before the first `__`.

use std::sync::Arc;

use super::server::{Server, lock};
use super::{McpManager, McpTool, State, naming};

/// Where a name points before any tool is looked at.
enum Address<'a> {
    /// A configured server and the tool named within it.
    Server(&'a Server, &'a str),
    /// `<server>__...` for a server that is not configured.
    UnknownServer(&'a str),
    /// No server named: a bare tool name.
    Bare,
}

impl McpManager {
    /// The tool a model's name means: its full name, or (forgiving a small
    /// model) `server__tool`, `server/tool`, `server.tool`, each within
    /// that server; or a bare tool name only one server has. Err: what to
    /// tell the model.
    pub fn find(&self, session: &str, name: &str) -> Result<McpTool, String> {
        let name = name.trim();
        let servers = self.servers_for(session);
        let tools: Vec<McpTool> = servers
            .iter()
            .flat_map(|s| lock(&s.inner).tools.clone())
            .collect();
        if let Some(tool) = tools.iter().find(|t| t.full_name == name) {
            return Ok(tool.clone());
        }
        let wanted = name.strip_prefix(naming::PREFIX).unwrap_or(name);
        match address(&servers, wanted) {
            Address::Server(server, tool) => return find_on(server, tool),
            Address::UnknownServer(server) => {
                return Err(format!(
                    "no MCP tool `{name}`: no MCP server `{server}`{}",
                    connected(&tools)
                ));
            }
            Address::Bare => {}
        }
        let by_tool: Vec<&McpTool> = tools.iter().filter(|t| t.name == wanted).collect();
        if let [only] = by_tool.as_slice() {
            return Ok((*only).clone());
        }
        Err(if tools.is_empty() {
            format!("no MCP tool `{name}`: no MCP server is connected")
        } else {
            format!("no MCP tool `{name}`{}", connected(&tools))
        })
    }
}

/// The server `wanted` names, if any. `__` always separates a server,
/// known or not (a tool whose own name holds `__` is called by its
/// server-qualified name; the tools pane reads the server the same
/// way); `/` and `.` only before a configured server's name, since a
/// tool's own name may hold them.
fn address<'a>(servers: &'a [Arc<Server>], wanted: &'a str) -> Address<'a> {
    let configured = |server: &str| servers.iter().find(|s| s.name == server).map(|s| &**s);
    if let Some((server, tool)) = wanted.split_once("__") {
        return match configured(server) {
            Some(found) => Address::Server(found, tool),
            None => Address::UnknownServer(server),
        };
    }
    if let Some(cut) = wanted.find(['/', '.'])
        && let Some(found) = configured(&wanted[..cut])
    {
        return Address::Server(found, &wanted[cut + 1..]);
    }
    Address::Bare
}

/// `tool` on `server` only: its own name, or the cleaned form the full
/// name uses (`get_sum_v2` for `get.sum v2`).
fn find_on(server: &Server, tool: &str) -> Result<McpTool, String> {
    let inner = lock(&server.inner);
    if inner.state != State::Ready {
        let why = inner.last_error.as_deref().unwrap_or("still starting");
        return Err(format!(
            "MCP server `{}` is {} ({why}); try again later or answer without it",
            server.name,
            inner.state.as_str()
        ));
    }
    let full = naming::full_name(&server.name, tool);
    let found = inner
        .tools
        .iter()
        .find(|t| t.name == tool)
        .or_else(|| inner.tools.iter().find(|t| t.full_name == full));
    match found {
        Some(t) => Ok(t.clone()),
        None => Err(format!(
            "MCP server `{}` has no tool `{tool}`; mcp {{\"name\": \"{}\"}} lists its tools",
            server.name, server.name
        )),
    }
}

/// `; connected: a, b` (nothing when no tool is).
fn connected(tools: &[McpTool]) -> String {
    if tools.is_empty() {
        return String::new();
    }
    let names: Vec<&str> = tools.iter().map(|t| t.full_name.as_str()).collect();
    format!("; connected: {}", names.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tool(server: &str, name: &str) -> McpTool {
        McpTool {
            full_name: naming::full_name(server, name),
            server: server.into(),
            name: name.into(),
            description: String::new(),
            schema: serde_json::json!({"type": "object"}),
            read_only: true,
        }
    }

    fn found(manager: &McpManager, name: &str) -> Result<String, String> {
        manager
            .find("s", name)
            .map(|t| format!("{}/{}", t.server, t.name))
    }

    #[test]
    fn a_name_that_addresses_a_server_never_reaches_another() {
        let manager = McpManager::with_tools(vec![
            tool("fs", "read"),
            tool("other", "fs__write"),
            tool("other", "get.sum v2"),
        ]);
        for name in ["mcp__fs__read", "fs__read", "fs/read", "fs.read", "read"] {
            assert_eq!(found(&manager, name).as_deref(), Ok("fs/read"), "{name}");
        }
        // `fs` lacks `write`: the other server's `fs__write` is not it.
        for name in ["mcp__fs__write", "fs__write", "fs/write", "fs.write"] {
            let why = found(&manager, name).unwrap_err();
            assert!(
                why.contains("MCP server `fs` has no tool `write`"),
                "{name}: {why}"
            );
        }
        assert_eq!(
            found(&manager, "mcp__other__fs__write").as_deref(),
            Ok("other/fs__write")
        );
        assert_eq!(
            found(&manager, "other__get_sum_v2").as_deref(),
            Ok("other/get.sum v2")
        );
        assert_eq!(
            found(&manager, "get.sum v2").as_deref(),
            Ok("other/get.sum v2")
        );
        for name in ["mcp__nope__read", "nope__read"] {
            let why = found(&manager, name).unwrap_err();
            assert!(
                why.contains("no MCP server `nope`; connected: mcp__fs__read"),
                "{why}"
            );
        }
    }

    #[test]
    fn a_server_that_is_down_is_named_not_replaced() {
        let manager = McpManager::with_tools(vec![tool("fs", "read"), tool("other", "fs__read")]);
        manager.servers[0].set(|i| {
            i.state = State::Failed;
            i.tools.clear();
            i.last_error = Some("exited".into());
        });
        let why = found(&manager, "mcp__fs__read").unwrap_err();
        assert!(why.contains("MCP server `fs` is failed (exited)"), "{why}");
    }
}
