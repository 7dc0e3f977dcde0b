//! Who may use the TCP listener: the gateway token (made on the first
//! start, 0600 in egirl's config dir), or a paired device's own token.
//! Both come as `hello.token` (a browser cannot set a WebSocket's
//! headers) or as `Authorization: Bearer` on the upgrade. A device is
//! paired with a one-time code (`egirl pair`) and revoked by `egirl
//! devices revoke`; a revoked device is refused on its next frame.
//!
//! Everything lives in the config dir (`config::gateway::secrets_dir`),
//! outside the workspace the model can write; only `EGIRL_GATEWAY_NO_AUTH=1`
//! in the environment switches auth off, and only on a loopback address.

pub mod devices;
pub mod pairing;
mod rate;
pub mod secret;

use std::net::IpAddr;
use std::path::Path;
use std::sync::Arc;

use secrecy::{ExposeSecret, SecretString};

pub use devices::{Device, DeviceCache, DeviceStore};
pub use pairing::PairingCodes;
pub use rate::ATTEMPTS_PER_MINUTE;

use super::admission::{Admission, Admitted};
use crate::protocol::wire::{PairRequest, Paired};

/// The longest device name kept (longer ones are cut).
const MAX_NAME_CHARS: usize = 64;

/// The listener's auth state, shared by its connections.
pub struct GatewayAuth {
    /// None when auth is off (`EGIRL_GATEWAY_NO_AUTH=1`, loopback only).
    token: Option<SecretString>,
    devices: DeviceCache,
    codes: PairingCodes,
    limit: rate::PairingLimit,
}

impl GatewayAuth {
    /// The secrets in the config dir, the gateway token made if missing.
    pub fn open() -> Result<Self, String> {
        Self::at(&crate::config::gateway::secrets_dir())
    }

    /// The secrets in `dir` (`token`, `devices.toml`, `pairing.toml`).
    pub fn at(dir: &Path) -> Result<Self, String> {
        let token = secret::ensure_token(&dir.join("token"))?;
        Ok(Self {
            token: Some(SecretString::from(token)),
            ..Self::without_auth(dir)
        })
    }

    /// Anyone is admitted (pairing still works).
    pub fn without_auth(dir: &Path) -> Self {
        Self {
            token: None,
            devices: DeviceCache::new(DeviceStore::at(dir.join("devices.toml"))),
            codes: PairingCodes::at(dir.join("pairing.toml")),
            limit: rate::PairingLimit::default(),
        }
    }

    pub fn auth_on(&self) -> bool {
        self.token.is_some()
    }

    /// A connection's admission, from `peer`, `bearer` being the token of
    /// its upgrade's `Authorization` header when it had one.
    pub fn connection(
        self: &Arc<Self>,
        peer: Option<IpAddr>,
        bearer: Option<Admitted>,
    ) -> Arc<dyn Admission> {
        Arc::new(TcpAdmission {
            auth: self.clone(),
            peer,
            bearer,
        })
    }

    /// Whom `token` admits, or why not (never repeating it).
    pub fn check(&self, token: &str) -> Result<Admitted, String> {
        let Some(expected) = &self.token else {
            return Ok(Admitted::Owner);
        };
        if secret::same(token, expected.expose_secret()) {
            return Ok(Admitted::GatewayToken);
        }
        let hash = secret::sha256_hex(token);
        // Every device is compared: the time taken does not say which.
        let mut found = None;
        for device in self.devices.current() {
            if secret::same(&hash, &device.token_sha256) {
                found = Some(device.id);
            }
        }
        let id = found.ok_or_else(|| "wrong token".to_string())?;
        if let Err(e) = self.devices.store().seen(&id) {
            tracing::warn!("gateway: {e}");
        }
        Ok(Admitted::Device(id))
    }

    fn still_admitted(&self, who: &Admitted) -> bool {
        match who {
            Admitted::Device(id) => self.devices.current().iter().any(|d| &d.id == id),
            Admitted::Owner | Admitted::GatewayToken => true,
        }
    }

    /// Trades a pairing code for a new device's token (the web page's
    /// `/api/pair` and the `pair` frame), under the pairing rate limit.
    pub fn pair_device(
        &self,
        peer: Option<IpAddr>,
        request: &PairRequest,
    ) -> Result<Paired, PairRefused> {
        if !self.limit.allow(peer) {
            tracing::warn!(
                ?peer,
                "gateway: a pairing attempt over the limit was refused"
            );
            return Err(PairRefused::Limited(format!(
                "too many pairing attempts (at most {ATTEMPTS_PER_MINUTE} a minute); try again later"
            )));
        }
        let named = self.codes.redeem(&request.code).map_err(|why| {
            tracing::warn!(?peer, "gateway: pairing refused: {why}");
            PairRefused::Code(why)
        })?;
        let name = device_name(named.as_deref().unwrap_or(&request.device));
        let (device, token) = self
            .devices
            .store()
            .add(&name)
            .map_err(PairRefused::Failed)?;
        tracing::info!(?peer, device = %device.id, name = %device.name, "gateway: paired a device");
        Ok(Paired {
            device: device.id,
            token,
        })
    }

    /// Forgets the device `who` is (a browser signing out); false when
    /// `who` is no device or was already gone.
    pub fn revoke(&self, who: &Admitted) -> Result<bool, String> {
        match who {
            Admitted::Device(id) => self.devices.store().revoke(id),
            Admitted::Owner | Admitted::GatewayToken => Ok(false),
        }
    }
}

/// Why a pairing was refused; each a line for the client.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PairRefused {
    /// Over the pairing rate limit.
    Limited(String),
    /// A wrong, used or expired code.
    Code(String),
    /// The device could not be written.
    Failed(String),
}

impl PairRefused {
    pub fn message(&self) -> &str {
        match self {
            PairRefused::Limited(m) | PairRefused::Code(m) | PairRefused::Failed(m) => m,
        }
    }
}

/// A name fit for `egirl devices list`: one line, bounded, without the
/// invisible characters that reorder or hide text (bidi overrides and
/// isolates, zero-width characters), which would let a device's name
/// pass for another's.
fn device_name(name: &str) -> String {
    let clean: String = name
        .chars()
        .filter(|c| !c.is_control() && !is_invisible_format(*c))
        .take(MAX_NAME_CHARS)
        .collect();
    match clean.trim() {
        "" => "device".into(),
        name => name.to_string(),
    }
}

/// Unicode format characters that change how the text around them shows.
fn is_invisible_format(c: char) -> bool {
    matches!(c,
        '\u{00ad}' | '\u{061c}' | '\u{180e}' | '\u{200b}'..='\u{200f}'
        | '\u{202a}'..='\u{202e}' | '\u{2060}'..='\u{206f}' | '\u{feff}')
}

/// One TCP connection's rules: its peer (for the pairing limit) and
/// whom its upgrade's bearer token admitted.
struct TcpAdmission {
    auth: Arc<GatewayAuth>,
    peer: Option<IpAddr>,
    bearer: Option<Admitted>,
}

impl Admission for TcpAdmission {
    fn admit(&self, token: Option<&str>) -> Result<Admitted, String> {
        match (token, &self.bearer) {
            (Some(token), _) => self.auth.check(token),
            (None, Some(who)) => Ok(who.clone()),
            (None, None) if !self.auth.auth_on() => Ok(Admitted::Owner),
            (None, None) => Err(
                "this gateway needs a token: send it in hello (or pair this device with `egirl pair`)"
                    .into(),
            ),
        }
    }

    fn still_admitted(&self, who: &Admitted) -> bool {
        self.auth.still_admitted(who)
    }

    fn pair(&self, request: &PairRequest) -> Result<Paired, String> {
        self.auth
            .pair_device(self.peer, request)
            .map_err(|why| why.message().to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(code: &str) -> PairRequest {
        PairRequest {
            code: code.into(),
            device: "phone\u{1b}[31m\u{202e}\u{200b}".into(),
        }
    }

    #[test]
    fn tokens_admit_and_a_revoked_device_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let auth = Arc::new(GatewayAuth::at(dir.path()).unwrap());
        let conn = auth.connection(None, None);
        assert!(conn.admit(None).is_err());
        let err = conn.admit(Some("egt_nope")).unwrap_err();
        assert_eq!(err, "wrong token");
        let gateway = std::fs::read_to_string(dir.path().join("token")).unwrap();
        assert_eq!(conn.admit(Some(gateway.trim())), Ok(Admitted::GatewayToken));

        let (code, _) = auth.codes.issue(None).unwrap();
        let paired = conn.pair(&request(&code)).unwrap();
        assert!(conn.pair(&request(&code)).is_err(), "a code works once");
        let who = conn.admit(Some(&paired.token)).unwrap();
        assert_eq!(who, Admitted::Device(paired.device.clone()));
        let listed = auth.devices.store().load().unwrap();
        assert_eq!(listed[0].name, "phone[31m");
        assert!(conn.still_admitted(&who));
        assert!(auth.devices.store().revoke(&paired.device).unwrap());
        assert!(!conn.still_admitted(&who));
        assert!(conn.admit(Some(&paired.token)).is_err());
    }

    #[test]
    fn the_bearer_of_the_upgrade_admits_a_hello_without_token() {
        let dir = tempfile::tempdir().unwrap();
        let auth = Arc::new(GatewayAuth::at(dir.path()).unwrap());
        let conn = auth.connection(None, Some(Admitted::GatewayToken));
        assert_eq!(conn.admit(None), Ok(Admitted::GatewayToken));
        let open = Arc::new(GatewayAuth::without_auth(dir.path()));
        assert_eq!(open.connection(None, None).admit(None), Ok(Admitted::Owner));
    }
}
