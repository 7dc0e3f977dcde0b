//! `[gateway]`: the optional TCP + WebSocket listener (off by default), and
//! where its secrets live. They live in egirl's own config dir
//! (`trust::state_dir()/gateway`), never in the workspace the model can
//! write: the gateway token, the paired devices (their tokens hashed), a
//! pending pairing code (hashed) and, on a client, the device token
//! pairing gave it.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::PathBuf;

use serde::Deserialize;

/// The variable that switches the listener's auth off: only from the
/// environment (a workspace file cannot set it), and only for a loopback
/// address.
pub const NO_AUTH_VAR: &str = "EGIRL_GATEWAY_NO_AUTH";

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct GatewayConfig {
    /// `host:port` of the WebSocket listener (`GET /ws`); empty: off.
    pub listen: String,
    /// Host names (besides `localhost` and IP literals) the listener
    /// answers to, as a browser sends them in `Host` (`gpu-box`): any
    /// other name is refused, so a page whose name resolves to this
    /// machine (DNS rebinding) cannot reach it.
    pub hosts: Vec<String>,
}

impl GatewayConfig {
    /// The address to listen on, when the listener is on.
    pub fn listen(&self) -> Option<&str> {
        Some(self.listen.trim()).filter(|l| !l.is_empty())
    }

    /// The listener this section asks for (None: off), or why it cannot
    /// run, as one line (start-up exits 2): `listen` is not an address, or
    /// auth is switched off for an address other machines reach.
    pub fn plan(&self, auth_off: bool) -> Result<Option<TcpPlan>, String> {
        let Some(listen) = self.listen() else {
            return Ok(None);
        };
        let addr = parse_listen(listen).ok_or_else(|| {
            format!(
                "[gateway] listen = \"{listen}\" is not an address (host:port, e.g. 127.0.0.1:7420)"
            )
        })?;
        if auth_off && !addr.ip().is_loopback() {
            return Err(format!(
                "[gateway] listen = \"{listen}\" is not a loopback address: the gateway does not run without auth there (unset {NO_AUTH_VAR})"
            ));
        }
        let hosts = self
            .hosts
            .iter()
            .map(|h| check_host_name(h))
            .collect::<Result<_, _>>()?;
        Ok(Some(TcpPlan {
            addr,
            auth_off,
            hosts,
        }))
    }
}

/// A `hosts` entry as `Host` carries it (lowercase), or why it is not a
/// host name (one line).
fn check_host_name(name: &str) -> Result<String, String> {
    let name = name.trim().to_ascii_lowercase();
    let ok = !name.is_empty()
        && name.len() <= 253
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '.'));
    if ok {
        Ok(name)
    } else {
        Err(format!(
            "[gateway] hosts: \"{}\" is not a host name (letters, digits, `-` and `.`, no port)",
            name.escape_debug()
        ))
    }
}

/// Where and how the listener runs, checked before anything starts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TcpPlan {
    pub addr: SocketAddr,
    /// `EGIRL_GATEWAY_NO_AUTH=1` (loopback only).
    pub auth_off: bool,
    /// `hosts`, checked and lowercase.
    pub hosts: Vec<String>,
}

/// `ip:port`, `[v6]:port` or `localhost:port`.
fn parse_listen(listen: &str) -> Option<SocketAddr> {
    if let Ok(addr) = listen.parse() {
        return Some(addr);
    }
    let port = listen.strip_prefix("localhost:")?.parse().ok()?;
    Some(SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), port))
}

/// The gateway's secrets: a 0700 directory in egirl's config dir.
pub fn secrets_dir() -> PathBuf {
    super::trust::state_dir().join("gateway")
}

/// The gateway token (0600), made on the listener's first start.
pub fn token_path() -> PathBuf {
    secrets_dir().join("token")
}

/// The paired devices, their tokens as SHA-256 (0600).
pub fn devices_path() -> PathBuf {
    secrets_dir().join("devices.toml")
}

/// The pending pairing code, as SHA-256 with its expiry (0600).
pub fn pairing_path() -> PathBuf {
    secrets_dir().join("pairing.toml")
}

/// A client's device token, as pairing returned it (0600).
pub fn device_token_path() -> PathBuf {
    secrets_dir().join("device-token")
}

/// Whether the environment switches auth off (`EGIRL_GATEWAY_NO_AUTH=1`).
pub fn auth_off_by_environment() -> bool {
    std::env::var(NO_AUTH_VAR).is_ok_and(|v| v.trim() == "1")
}

/// The token values on this machine that the redactor hides: the gateway
/// token and a client's device token, when their files exist.
pub fn secret_entries() -> Vec<(String, String)> {
    [
        ("EGIRL_GATEWAY_TOKEN", token_path()),
        ("EGIRL_DEVICE_TOKEN", device_token_path()),
    ]
    .into_iter()
    .filter_map(|(name, path)| {
        let value = std::fs::read_to_string(path).ok()?;
        let value = value.trim();
        (!value.is_empty()).then(|| (name.to_string(), value.to_string()))
    })
    .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(listen: &str) -> GatewayConfig {
        GatewayConfig {
            listen: listen.into(),
            ..Default::default()
        }
    }

    #[test]
    fn the_plan_refuses_a_bad_address_and_no_auth_off_loopback() {
        assert_eq!(config("").plan(false), Ok(None));
        let local = config("localhost:7420").plan(true).unwrap().unwrap();
        assert_eq!(local.addr, "127.0.0.1:7420".parse().unwrap());
        let err = config("nowhere").plan(false).unwrap_err();
        assert!(err.contains("is not an address"), "{err}");
        let err = config("0.0.0.0:7420").plan(true).unwrap_err();
        assert!(err.contains("not a loopback address") && !err.contains('\n'));
        assert!(config("0.0.0.0:7420").plan(false).is_ok());
    }

    #[test]
    fn hosts_are_names_without_ports() {
        let mut with = config("0.0.0.0:7420");
        with.hosts = vec![" GPU-Box ".into(), "box.lan".into()];
        let plan = with.plan(false).unwrap().unwrap();
        assert_eq!(plan.hosts, vec!["gpu-box", "box.lan"]);
        with.hosts = vec!["gpu-box:7420".into()];
        let err = with.plan(false).unwrap_err();
        assert!(
            err.contains("is not a host name") && !err.contains('\n'),
            "{err}"
        );
    }
}
