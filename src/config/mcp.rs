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

impl McpConfig {
    /// `(server, entry name, "env" | "header")` for each `env`/`headers`
    /// entry whose name marks a secret and whose value is written out in
    /// the config rather than read with `${NAME}` (for `egirl doctor`).
    pub fn literal_secrets(&self) -> Vec<(&str, &str, &'static str)> {
        let mut found = Vec::new();
        for (server, settings) in &self.servers {
            let env = settings.env.iter().map(|e| (e, "env"));
            let headers = settings.headers.iter().map(|e| (e, "header"));
            for ((name, value), kind) in env.chain(headers) {
                if is_secret_entry(name) && referenced_vars(value).is_empty() && !value.is_empty() {
                    found.push((server.as_str(), name.as_str(), kind));
                }
            }
        }
        found
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

/// What is wrong with a server's entry, for the config error (exit 2):
/// the dotted key and the problem.
pub fn validate(config: &McpConfig) -> Result<(), (String, String)> {
    for (name, server) in &config.servers {
        let key = format!("mcp.servers.{name}");
        if name.is_empty()
            || !name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
            || name.contains("__")
            || name.ends_with('_')
        {
            // `mcp__<server>__<tool>` splits at the first `__` after the
            // prefix only when no server name holds `__` or ends in `_`.
            return Err((
                key,
                "a server name is letters, digits, `-` and `_` (no `__`, not ending in `_`)".into(),
            ));
        }
        match (&server.command, &server.url) {
            (Some(_), Some(_)) => {
                return Err((
                    key,
                    "set `command` (stdio) or `url` (HTTP), not both".into(),
                ));
            }
            (None, None) => {
                return Err((key, "set `command` (stdio) or `url` (HTTP)".into()));
            }
            // This build's HTTP client has no TLS (see docs/configuration.md).
            (None, Some(url)) if !url.starts_with("http://") => {
                return Err((
                    format!("{key}.url"),
                    "must start with http:// (this build has no TLS for MCP; put an https server behind a local proxy)".into(),
                ));
            }
            _ => {}
        }
    }
    Ok(())
}

/// Whether an `env` or `headers` entry's name says its value is a
/// secret: a name `is_secret_name` marks (`-` read as `_`, so `X-Api-Key`
/// counts) or a header that carries credentials.
pub fn is_secret_entry(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    matches!(
        lower.as_str(),
        "authorization" | "proxy-authorization" | "cookie"
    ) || super::secrets::is_secret_name(&name.replace('-', "_"))
}

/// The variable `egirl doctor` suggests for a literal secret: the entry's
/// own name for `env`, `<SERVER>_<HEADER>` for a header; named like a
/// secret either way, so that commands never get it (`tools::sandbox::env`).
pub fn suggested_var(server: &str, name: &str, kind: &str) -> String {
    let mut var = match kind {
        "env" => name.to_string(),
        _ => format!("{server}_{name}"),
    }
    .to_ascii_uppercase()
    .replace('-', "_");
    if !super::secrets::is_secret_name(&var) {
        var.push_str("_TOKEN");
    }
    var
}

/// The variables `${NAME}` in `value` reads, in order.
pub fn referenced_vars(value: &str) -> Vec<&str> {
    let mut names = Vec::new();
    let mut rest = value;
    while let Some(start) = rest.find("${") {
        let after = &rest[start + 2..];
        let Some(end) = after.find('}') else {
            break;
        };
        names.push(&after[..end]);
        rest = &after[end + 1..];
    }
    names
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
        assert!(validate(&both).unwrap_err().1.contains("not both"));
        let neither = parse("[servers.fs]\nenabled = true\n");
        assert!(validate(&neither).is_err());
        let bad_name = parse("[servers.\"a__b\"]\ncommand = \"x\"\n");
        assert!(validate(&bad_name).is_err());
        // `a_` beside `a` would make `mcp__a___x` name two tools.
        let trailing = parse("[servers.a_]\ncommand = \"x\"\n");
        assert!(
            validate(&trailing)
                .unwrap_err()
                .1
                .contains("not ending in `_`")
        );
        let https = parse("[servers.gh]\nurl = \"https://example.com/mcp\"\n");
        assert!(validate(&https).unwrap_err().1.contains("no TLS"));
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
    fn secret_entries_by_name_and_variables_by_reference() {
        for name in [
            "Authorization",
            "X-Api-Key",
            "X-Auth-Token",
            "GITHUB_TOKEN",
            "cookie",
        ] {
            assert!(is_secret_entry(name), "{name}");
        }
        for name in ["Content-Type", "NODE_ENV", "Accept", "KEYBOARD"] {
            assert!(!is_secret_entry(name), "{name}");
        }
        assert_eq!(referenced_vars("Bearer ${A}-${B_TOKEN}"), ["A", "B_TOKEN"]);
        let config = parse(
            "[servers.gh]\ncommand = \"x\"\nenv = { GH_TOKEN = \"ghp-1\", OTHER_TOKEN = \"${T}\", MODE = \"fast\" }\nheaders = { Authorization = \"Bearer b\" }\n",
        );
        assert_eq!(suggested_var("gh", "GH_TOKEN", "env"), "GH_TOKEN");
        assert_eq!(
            suggested_var("my-web", "X-Api-Key", "header"),
            "MY_WEB_X_API_KEY"
        );
        assert_eq!(
            suggested_var("web", "Authorization", "header"),
            "WEB_AUTHORIZATION_TOKEN"
        );
        assert_eq!(
            config.literal_secrets(),
            [("gh", "GH_TOKEN", "env"), ("gh", "Authorization", "header")]
        );
        assert!(referenced_vars("plain ${unclosed").is_empty());
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
