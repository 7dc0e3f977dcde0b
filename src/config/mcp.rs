//! `[mcp.servers.NAME]`: the MCP servers egirl connects to. Only the
//! config file names servers and their commands: nothing the model writes
//! can add one or change how it starts.

use std::collections::BTreeMap;

use serde::Deserialize;

use super::ConfigDuration;

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct McpConfig {
    /// By name; the name becomes the middle of `mcp__<server>__<tool>`.
    pub servers: BTreeMap<String, McpServerConfig>,
}

impl McpConfig {
    /// The servers that are switched on, in name order.
    pub fn enabled(&self) -> impl Iterator<Item = (&String, &McpServerConfig)> {
        self.servers.iter().filter(|(_, s)| s.enabled)
    }
}

/// Whether a server's non-read-only tools ask first.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum McpApproval {
    /// Tools the server marks `readOnlyHint: true` run; the others ask.
    #[default]
    Ask,
    /// The user trusts every tool of this server.
    Allow,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct McpServerConfig {
    /// stdio: the program to start (found on PATH) ...
    pub command: Option<String>,
    /// ... its arguments ...
    pub args: Vec<String>,
    /// ... variables added to its environment (`${NAME}` in a value is read
    /// from egirl's environment: the only way a secret reaches a server) ...
    pub env: BTreeMap<String, String>,
    /// ... and its working directory (`~` expands; default: the workspace).
    pub cwd: Option<String>,
    /// Streamable HTTP: the endpoint (instead of `command`) ...
    pub url: Option<String>,
    /// ... and headers sent with every request (`${NAME}` as in `env`).
    pub headers: BTreeMap<String, String>,
    pub enabled: bool,
    /// How long the connection and the tool listing may take.
    pub startup_timeout: ConfigDuration,
    /// How long one tool call may take.
    pub tool_timeout: ConfigDuration,
    pub tools: McpToolFilter,
    pub approval: McpApproval,
}

impl Default for McpServerConfig {
    fn default() -> Self {
        Self {
            command: None,
            args: Vec::new(),
            env: BTreeMap::new(),
            cwd: None,
            url: None,
            headers: BTreeMap::new(),
            enabled: true,
            startup_timeout: ConfigDuration::from_secs(30),
            tool_timeout: ConfigDuration::from_secs(60),
            tools: McpToolFilter::default(),
            approval: McpApproval::Ask,
        }
    }
}

/// Which of a server's tools egirl offers (by the server's tool names).
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct McpToolFilter {
    /// Only these (empty: all).
    pub allow: Vec<String>,
    /// Never these (wins over `allow`).
    pub deny: Vec<String>,
}

impl McpToolFilter {
    pub fn offers(&self, tool: &str) -> bool {
        (self.allow.is_empty() || self.allow.iter().any(|t| t == tool))
            && !self.deny.iter().any(|t| t == tool)
    }
}

/// What is wrong with a server's entry, for the config error (exit 2).
pub fn validate(config: &McpConfig) -> Result<(), String> {
    for (name, server) in &config.servers {
        if name.is_empty()
            || !name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
            || name.contains("__")
        {
            return Err(format!(
                "[mcp.servers.{name}]: a server name is letters, digits, `-` and `_` (no `__`)"
            ));
        }
        match (&server.command, &server.url) {
            (Some(_), Some(_)) => {
                return Err(format!(
                    "[mcp.servers.{name}]: set `command` (stdio) or `url` (HTTP), not both"
                ));
            }
            (None, None) => {
                return Err(format!(
                    "[mcp.servers.{name}]: set `command` (stdio) or `url` (HTTP)"
                ));
            }
            // This build's HTTP client has no TLS (see docs/configuration.md).
            (None, Some(url)) if !url.starts_with("http://") => {
                return Err(format!(
                    "[mcp.servers.{name}]: `url` must start with http:// (this build has no TLS for MCP; put an https server behind a local proxy)"
                ));
            }
            _ => {}
        }
    }
    Ok(())
}

/// `${NAME}` in `value` replaced by egirl's variable NAME (empty when unset,
/// and named in the error so the user knows which).
pub fn expand_vars(value: &str) -> Result<String, String> {
    let mut out = String::with_capacity(value.len());
    let mut rest = value;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let Some(end) = after.find('}') else {
            return Err(format!("unclosed `${{` in `{value}`"));
        };
        let name = &after[..end];
        match std::env::var(name) {
            Ok(v) => out.push_str(&v),
            Err(_) => return Err(format!("${{{name}}} is not set")),
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> McpConfig {
        toml::from_str(text).unwrap()
    }

    #[test]
    fn a_server_is_stdio_or_http_never_both_nor_neither() {
        let ok = parse("[servers.fs]\ncommand = \"npx\"\nargs = [\"x\"]\n");
        assert!(validate(&ok).is_ok());
        let both = parse("[servers.fs]\ncommand = \"npx\"\nurl = \"http://x\"\n");
        assert!(validate(&both).unwrap_err().contains("not both"));
        let neither = parse("[servers.fs]\nenabled = true\n");
        assert!(validate(&neither).is_err());
        let bad_name = parse("[servers.\"a__b\"]\ncommand = \"x\"\n");
        assert!(validate(&bad_name).is_err());
        let https = parse("[servers.gh]\nurl = \"https://example.com/mcp\"\n");
        assert!(validate(&https).unwrap_err().contains("no TLS"));
    }

    #[test]
    fn deny_wins_over_allow() {
        let filter = McpToolFilter {
            allow: vec!["a".into(), "b".into()],
            deny: vec!["b".into()],
        };
        assert!(filter.offers("a"));
        assert!(!filter.offers("b"));
        assert!(!filter.offers("c"));
        assert!(McpToolFilter::default().offers("anything"));
    }

    #[test]
    fn variables_are_read_only_where_named() {
        // SAFETY: a variable only this test reads.
        unsafe { std::env::set_var("EGIRL_MCP_TEST_TOKEN", "t0k") };
        assert_eq!(
            expand_vars("Bearer ${EGIRL_MCP_TEST_TOKEN}").unwrap(),
            "Bearer t0k"
        );
        assert_eq!(expand_vars("plain $HOME").unwrap(), "plain $HOME");
        assert!(expand_vars("${EGIRL_MCP_SURELY_UNSET}").is_err());
    }
}
