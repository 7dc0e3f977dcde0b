//! `[tools] allow` / `deny` (an agent's, merged with the base's by
//! `Config::for_agent`): which tools its model is offered and may run.
//! A denied tool is in neither the prompt nor the catalog, and a call the
//! model makes to it anyway is refused in one line without running.
//!
//! An entry is a tool's name (`exec`, `write_file`), an MCP tool's
//! `server__tool` (or `mcp__server__tool`), `mcp` (every MCP tool), or a
//! prefix ending in `*` (`web_*`, `github__*`).

use crate::config::Config;

/// Whether the built-in `name` may be offered and run.
pub fn permitted(config: &Config, name: &str) -> bool {
    permitted_as(config, &[name])
}

/// Whether the MCP tool `tool` of `server` may be offered and run: no
/// rule leaves it out (the servers an agent's `mcp` list leaves out are
/// denied as `server__*`: see [`deny_servers_left_out`]).
pub fn mcp_permitted(config: &Config, server: &str, tool: &str) -> bool {
    let short = format!("{server}__{tool}");
    let full = crate::mcp::naming::full_name(server, tool);
    let tools = &config.tools;
    let denied = tools
        .deny
        .iter()
        .any(|rule| rule == "mcp" || matches(rule, &short) || matches(rule, &full));
    let allowed = tools.allow.is_empty()
        || tools
            .allow
            .iter()
            .any(|rule| rule == "mcp" || matches(rule, &short) || matches(rule, &full));
    !denied && allowed
}

/// Denies every tool of the servers `base` has and the agent's `config`
/// does not (its `[agents.NAME] mcp` list left them out): they run once
/// for the whole process, and this agent is offered none of their tools.
pub fn deny_servers_left_out(base: &Config, config: &mut Config) {
    for server in base.mcp.servers.keys() {
        if !config.mcp.servers.contains_key(server) {
            config.tools.deny.push(format!("{server}__*"));
        }
    }
}

/// Whether the `mcp` tool itself (the listing of servers) may be offered.
pub fn mcp_offered(config: &Config) -> bool {
    let tools = &config.tools;
    !tools.deny.iter().any(|rule| rule == "mcp")
        && (tools.allow.is_empty()
            || tools
                .allow
                .iter()
                .any(|rule| rule == "mcp" || rule.contains("__")))
}

fn permitted_as(config: &Config, names: &[&str]) -> bool {
    let tools = &config.tools;
    let denied = tools
        .deny
        .iter()
        .any(|rule| names.iter().any(|name| matches(rule, name)));
    let allowed = tools.allow.is_empty()
        || tools
            .allow
            .iter()
            .any(|rule| names.iter().any(|name| matches(rule, name)));
    !denied && allowed
}

fn matches(rule: &str, name: &str) -> bool {
    match rule.strip_suffix('*') {
        Some(prefix) => name.starts_with(prefix),
        None => rule == name,
    }
}

/// What the model reads when it calls a tool the policy leaves out.
pub fn refusal(name: &str) -> String {
    format!("`{name}` is not available to this agent ([tools] allow/deny leaves it out)")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(allow: &[&str], deny: &[&str]) -> Config {
        let text = "[mcp.servers.gh]\ncommand = \"gh-mcp\"\n";
        let mut config = crate::config::parse(text, std::path::Path::new("egirl.toml")).unwrap();
        config.tools.allow = allow.iter().map(|s| s.to_string()).collect();
        config.tools.deny = deny.iter().map(|s| s.to_string()).collect();
        config
    }

    #[test]
    fn deny_wins_and_an_empty_allow_allows_everything() {
        let c = config(&[], &["exec"]);
        assert!(!permitted(&c, "exec"));
        assert!(permitted(&c, "read_file"));
        let c = config(&["read_file", "exec"], &["exec"]);
        assert!(!permitted(&c, "exec"));
        assert!(permitted(&c, "read_file"));
        assert!(!permitted(&c, "write_file"));
        let c = config(&["web_*"], &[]);
        assert!(permitted(&c, "web_fetch") && !permitted(&c, "exec"));
    }

    #[test]
    fn mcp_tools_by_server_and_tool() {
        let c = config(&[], &["gh__delete_repo"]);
        assert!(!mcp_permitted(&c, "gh", "delete_repo"));
        assert!(mcp_permitted(&c, "gh", "list_issues"));
        let mut agent = c.clone();
        agent.mcp.servers.clear();
        deny_servers_left_out(&c, &mut agent);
        assert!(
            !mcp_permitted(&agent, "gh", "list_issues"),
            "not its server"
        );
        let c = config(&[], &["mcp"]);
        assert!(!mcp_permitted(&c, "gh", "list_issues") && !mcp_offered(&c));
        let c = config(&["read_file", "gh__*"], &[]);
        assert!(mcp_permitted(&c, "gh", "list_issues") && mcp_offered(&c));
        let c = config(&["read_file"], &[]);
        assert!(!mcp_permitted(&c, "gh", "list_issues") && !mcp_offered(&c));
    }
}
