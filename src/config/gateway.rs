//! `[gateway]`: the optional TCP + WebSocket listener (off by default), and
//! where its secrets live. They live in egirl's own config dir
//! (`trust::state_dir()/gateway`), never in the workspace the model can
//! write: the gateway token, the paired devices (their tokens hashed), a
//! pending pairing code (hashed) and, on a client, the device token
//! pairing gave it.

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
}

impl GatewayConfig {
    /// The address to listen on, when the listener is on.
    pub fn listen(&self) -> Option<&str> {
        Some(self.listen.trim()).filter(|l| !l.is_empty())
    }
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
