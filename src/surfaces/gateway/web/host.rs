//! Which `Host` and `Origin` a request may carry (CSRF and DNS
//! rebinding). A browser names in `Host` the name it resolved: a page of
//! `evil.example` that makes its name resolve to this machine still says
//! `evil.example`, so only `localhost`, an IP literal or a name of
//! `[gateway] hosts` is answered. A request with an `Origin` (a browser's
//! fetch or WebSocket) must come from a page of this very host; a
//! state-changing one (a POST, the WebSocket upgrade) must have one.

use axum::http::{HeaderMap, header};

/// Why a request was refused (answered 403).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Foreign {
    Host,
    Origin,
}

impl Foreign {
    pub fn message(self) -> &'static str {
        match self {
            Foreign::Host => "this listener does not answer to that Host (see [gateway] hosts)",
            Foreign::Origin => "a page of another origin may not use this listener",
        }
    }
}

/// The listener's rules: its port and the names of `[gateway] hosts`.
#[derive(Clone, Debug)]
pub struct HostRules {
    port: u16,
    names: Vec<String>,
}

impl HostRules {
    /// `names` lowercase (as `[gateway] hosts` was checked).
    pub fn new(port: u16, names: Vec<String>) -> Self {
        Self { port, names }
    }

    /// Checks `Host`, and `Origin` when present (required when
    /// `need_origin`): the `Origin` when there is one.
    pub fn check(&self, headers: &HeaderMap, need_origin: bool) -> Result<Option<String>, Foreign> {
        let host = headers
            .get(header::HOST)
            .and_then(|h| h.to_str().ok())
            .map(str::to_ascii_lowercase)
            .filter(|h| self.host_ok(h))
            .ok_or(Foreign::Host)?;
        let origin = match headers.get(header::ORIGIN) {
            None if need_origin => return Err(Foreign::Origin),
            None => return Ok(None),
            Some(origin) => origin.to_str().unwrap_or("").to_ascii_lowercase(),
        };
        let own = origin
            .strip_prefix("http://")
            .or_else(|| origin.strip_prefix("https://"))
            .is_some_and(|rest| rest == host);
        if own {
            Ok(Some(origin))
        } else {
            Err(Foreign::Origin)
        }
    }

    /// `name[:port]` (lowercase): a name this listener answers to, with its
    /// port, or with none (a proxy in front of it on its default port).
    fn host_ok(&self, host: &str) -> bool {
        let Some((name, port)) = split_host(host) else {
            return false;
        };
        if port.is_some_and(|p| p != self.port) {
            return false;
        }
        name == "localhost"
            || name.parse::<std::net::IpAddr>().is_ok()
            || self.names.iter().any(|n| n == name)
    }
}

/// `name:port`, `[v6]:port`, `name` or `[v6]` into the name (a v6 address
/// without brackets) and the port; None when it is neither.
fn split_host(host: &str) -> Option<(&str, Option<u16>)> {
    let (name, port) = if let Some(rest) = host.strip_prefix('[') {
        let (v6, after) = rest.split_once(']')?;
        v6.parse::<std::net::Ipv6Addr>().ok()?;
        (v6, after)
    } else {
        match host.find(':') {
            Some(colon) => host.split_at(colon),
            None => (host, ""),
        }
    };
    let port = match port {
        "" => None,
        port => Some(port.strip_prefix(':')?.parse().ok()?),
    };
    (!name.is_empty()).then_some((name, port))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(host: Option<&str>, origin: Option<&str>) -> HeaderMap {
        let mut headers = HeaderMap::new();
        if let Some(host) = host {
            headers.insert(header::HOST, host.parse().unwrap());
        }
        if let Some(origin) = origin {
            headers.insert(header::ORIGIN, origin.parse().unwrap());
        }
        headers
    }

    #[test]
    fn hosts_are_local_names_ip_literals_and_the_configured_ones() {
        let rules = HostRules::new(7420, vec!["gpu-box".into()]);
        for good in [
            "localhost:7420",
            "127.0.0.1:7420",
            "192.168.1.5:7420",
            "[::1]:7420",
            "GPU-Box:7420",
            "gpu-box",
        ] {
            assert_eq!(
                rules.check(&headers(Some(good), None), false),
                Ok(None),
                "{good}"
            );
        }
        for bad in [
            "evil.example:7420",
            "localhost:7421",
            "127.0.0.1:x",
            "::1:7420",
            "[nope]:7420",
            ":7420",
            "localhost.evil.example:7420",
        ] {
            let got = rules.check(&headers(Some(bad), None), false);
            assert_eq!(got, Err(Foreign::Host), "{bad}");
        }
        assert_eq!(rules.check(&headers(None, None), false), Err(Foreign::Host));
    }

    #[test]
    fn the_origin_is_a_page_of_this_host() {
        let rules = HostRules::new(7420, Vec::new());
        let host = Some("192.168.1.5:7420");
        let own = rules.check(&headers(host, Some("http://192.168.1.5:7420")), true);
        assert_eq!(own, Ok(Some("http://192.168.1.5:7420".into())));
        let tls = rules.check(&headers(host, Some("https://192.168.1.5:7420")), true);
        assert!(tls.is_ok());
        for foreign in [
            "http://evil.example",
            "http://localhost:7420",
            "http://192.168.1.5:7421",
            "null",
        ] {
            let got = rules.check(&headers(host, Some(foreign)), false);
            assert_eq!(got, Err(Foreign::Origin), "{foreign}");
        }
        assert_eq!(
            rules.check(&headers(host, None), true),
            Err(Foreign::Origin)
        );
        assert_eq!(rules.check(&headers(host, None), false), Ok(None));
    }
}
