//! `[tools.web]`: the web tools (`web_fetch`, `web_search`). They are
//! egirl's own requests, not commands: the exec sandbox's network setting
//! does not apply to them; these keys do.

use serde::Deserialize;

use super::ConfigDuration;

/// `[tools.web] fetch`: what `web_fetch` may do without asking.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum WebFetchPolicy {
    /// Ask before fetching from a host not in `allow_domains` nor approved.
    #[default]
    Ask,
    /// Fetch from any public host without asking.
    Allow,
    /// No `web_fetch` tool at all.
    Off,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct WebConfig {
    pub fetch: WebFetchPolicy,
    /// Hosts fetched without asking; an entry covers its subdomains
    /// (`example.com` covers `docs.example.com`).
    pub allow_domains: Vec<String>,
    /// Whether requests may reach private, loopback and link-local addresses.
    pub allow_private: bool,
    /// Bytes of a response body read at most (the rest is cut).
    pub max_bytes: usize,
    /// The whole request, redirects and body included.
    pub timeout: ConfigDuration,
    /// `[tools.web.search]`: absent, `web_search` is not offered.
    pub search: Option<WebSearchConfig>,
}

impl Default for WebConfig {
    fn default() -> Self {
        Self {
            fetch: WebFetchPolicy::Ask,
            allow_domains: Vec::new(),
            allow_private: false,
            max_bytes: 2 * 1024 * 1024,
            timeout: ConfigDuration::from_secs(30),
            search: None,
        }
    }
}

/// `[tools.web.search] provider`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SearchProvider {
    /// A SearXNG instance's JSON API (`endpoint` required).
    Searxng,
    /// Brave Search's API with `BRAVE_API_KEY`.
    Brave,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WebSearchConfig {
    pub provider: SearchProvider,
    /// SearXNG's base URL; for Brave, a different API base (default
    /// Brave's own).
    #[serde(default)]
    pub endpoint: Option<String>,
}

/// The environment variable Brave's key is read from.
pub const BRAVE_KEY_VAR: &str = "BRAVE_API_KEY";

/// Brave Search's API base when `endpoint` is not set.
pub const BRAVE_DEFAULT_ENDPOINT: &str = "https://api.search.brave.com";

impl WebSearchConfig {
    /// The base URL searches go to, or why searching is unavailable (no
    /// SearXNG endpoint, no Brave key): said by `doctor`, and the tool is
    /// not listed.
    pub fn endpoint(&self) -> Result<String, String> {
        match (self.provider, &self.endpoint) {
            (SearchProvider::Searxng, Some(url)) => Ok(url.trim_end_matches('/').to_string()),
            (SearchProvider::Searxng, None) => {
                Err("[tools.web.search] provider = \"searxng\" needs an endpoint".into())
            }
            (SearchProvider::Brave, url) => {
                if std::env::var(BRAVE_KEY_VAR).is_ok_and(|k| !k.trim().is_empty()) {
                    Ok(url
                        .as_deref()
                        .unwrap_or(BRAVE_DEFAULT_ENDPOINT)
                        .trim_end_matches('/')
                        .to_string())
                } else {
                    Err(format!("{BRAVE_KEY_VAR} is not set"))
                }
            }
        }
    }
}

impl WebConfig {
    /// The values that would make every fetch fail: (key, why).
    pub fn check(&self) -> Result<(), (String, String)> {
        if self.max_bytes == 0 {
            return Err(("tools.web.max_bytes".into(), "must be at least 1".into()));
        }
        if self.timeout.is_zero() {
            return Err(("tools.web.timeout".into(), "must be more than 0".into()));
        }
        Ok(())
    }

    /// Whether `host` is covered by `allow_domains` (the entry itself or a
    /// subdomain of it; case and a trailing dot do not matter).
    pub fn domain_allowed(&self, host: &str) -> bool {
        let host = host.trim_end_matches('.').to_ascii_lowercase();
        self.allow_domains.iter().any(|d| {
            let d = d.trim_end_matches('.').to_ascii_lowercase();
            !d.is_empty()
                && (host == d
                    || host
                        .strip_suffix(&d)
                        .is_some_and(|rest| rest.ends_with('.')))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_allowed_domain_covers_its_subdomains_only() {
        let web = WebConfig {
            allow_domains: vec!["example.com".into()],
            ..WebConfig::default()
        };
        assert!(web.domain_allowed("example.com"));
        assert!(web.domain_allowed("Docs.Example.com."));
        assert!(!web.domain_allowed("badexample.com"));
        assert!(!web.domain_allowed("example.com.evil.net"));
    }

    #[test]
    fn brave_key_is_a_secret_by_its_name() {
        // Redacted everywhere and kept out of commands' environment.
        assert!(crate::config::secrets::is_secret_name(BRAVE_KEY_VAR));
    }
}
