//! Secrets the MCP config hands to servers: a server that echoes its
//! environment or a request's headers (a debug tool, an error message)
//! must not show them either. Redacted: each `env`/`headers` entry whose
//! name marks a secret (`config::mcp::is_secret_entry`), as written or
//! expanded, and every variable any entry reads with `${NAME}`: that is
//! how the config says "this is a secret" (docs/mcp.md). A literal under
//! a plain name (`NODE_ENV = "production"`) is left alone: redacting it
//! would blank ordinary words and paths in every output.

use crate::config::McpConfig;
use crate::config::mcp::{expand_vars, is_secret_entry, referenced_vars};

/// Schemes a credential header's value starts with; the part after one
/// is redacted on its own too (a server may echo only the token).
const AUTH_SCHEMES: [&str; 3] = ["Bearer ", "Basic ", "Token "];

/// `(name, value)` pairs for the redactor, named `mcp.<server>.<entry>`
/// (or the variable's own name for a `${NAME}`).
pub fn entries(config: &McpConfig) -> Vec<(String, String)> {
    let mut found = Vec::new();
    for (server, settings) in &config.servers {
        for (name, value) in settings.env.iter().chain(&settings.headers) {
            for var in referenced_vars(value) {
                if let Ok(v) = std::env::var(var) {
                    found.push((var.to_string(), v));
                }
            }
            if !is_secret_entry(name) {
                continue;
            }
            let label = format!("mcp.{server}.{name}");
            // Unset variable: the server does not start, nothing to hide.
            let Ok(value) = expand_vars(value) else {
                continue;
            };
            if let Some(token) = after_scheme(&value) {
                found.push((label.clone(), token.to_string()));
            }
            found.push((label, value));
        }
    }
    found
}

/// The credential after an auth scheme (`Bearer abc` → `abc`). HTTP
/// reads the scheme in any case (`bearer abc` is the same header), so the
/// token alone is redacted however the config spells it.
fn after_scheme(value: &str) -> Option<&str> {
    AUTH_SCHEMES
        .iter()
        .find_map(|scheme| {
            let head = value.get(..scheme.len())?;
            head.eq_ignore_ascii_case(scheme)
                .then(|| value[scheme.len()..].trim_start())
        })
        .filter(|token| !token.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_after_a_scheme_in_any_case_is_found_alone() {
        for value in ["bearer tok-123", "BEARER  tok-123", "token tok-123"] {
            let config: McpConfig = toml::from_str(&format!(
                "[servers.web]\nurl = \"http://127.0.0.1:1/mcp\"\nheaders = {{ Authorization = \"{value}\" }}\n"
            ))
            .unwrap();
            let found = entries(&config);
            assert!(
                found.iter().any(|(_, v)| v == "tok-123"),
                "{value}: {found:?}"
            );
        }
    }

    #[test]
    fn secret_entries_and_referenced_variables_are_found() {
        // SAFETY: a variable only this test reads.
        unsafe { std::env::set_var("EGIRL_REDACT_MCP_TEST_URL", "postgres://u:pw@db/x") };
        let config: McpConfig = toml::from_str(
            r#"
            [servers.gh]
            command = "gh-mcp"
            env = { GITHUB_TOKEN = "ghp-literal-0123456789", NODE_ENV = "production", DB = "${EGIRL_REDACT_MCP_TEST_URL}" }
            [servers.web]
            url = "http://127.0.0.1:1/mcp"
            headers = { Authorization = "Bearer literal-bearer-abcdef", Accept = "application/json" }
            "#,
        )
        .unwrap();
        let mut found = entries(&config);
        found.sort();
        let expected: Vec<(String, String)> = [
            ("EGIRL_REDACT_MCP_TEST_URL", "postgres://u:pw@db/x"),
            ("mcp.gh.GITHUB_TOKEN", "ghp-literal-0123456789"),
            ("mcp.web.Authorization", "Bearer literal-bearer-abcdef"),
            ("mcp.web.Authorization", "literal-bearer-abcdef"),
        ]
        .iter()
        .map(|(n, v)| (n.to_string(), v.to_string()))
        .collect();
        assert_eq!(found, expected);
    }
}
