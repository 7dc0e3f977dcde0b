//! One-time pairing codes: `egirl pair` writes a code's SHA-256 and expiry
//! to `pairing.toml` (0600) and shows the code; the daemon, in another
//! process, reads it when a `pair` frame arrives. The code works once (the
//! file is removed when it is used) and for [`VALIDITY`] only.

use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::secret;
use crate::fsutil::lockfile::FileLock;

/// How long a code is valid.
pub const VALIDITY: chrono::TimeDelta = chrono::TimeDelta::minutes(5);

#[derive(Serialize, Deserialize)]
struct Pending {
    /// Hex SHA-256 of the code's 8 digits.
    code_sha256: String,
    expires_at: DateTime<Utc>,
    /// The device's name as `egirl pair --name` gave it (else the client's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    name: Option<String>,
}

/// The pending code's file.
#[derive(Clone, Debug)]
pub struct PairingCodes {
    path: PathBuf,
}

impl PairingCodes {
    pub fn at(path: PathBuf) -> Self {
        Self { path }
    }

    /// A fresh code (`4821-0937`, replacing any pending one) and when it
    /// expires.
    pub fn issue(&self, name: Option<&str>) -> Result<(String, DateTime<Utc>), String> {
        let code = new_code()?;
        let expires_at = Utc::now() + VALIDITY;
        let pending = Pending {
            code_sha256: secret::sha256_hex(&digits(&code)),
            expires_at,
            name: name.map(str::to_string),
        };
        let text = toml::to_string(&pending).map_err(|e| e.to_string())?;
        let _lock = self.lock()?;
        secret::write_private(&self.path, &text)
            .map_err(|e| format!("cannot write {}: {e}", self.path.display()))?;
        Ok((code, expires_at))
    }

    /// Uses up the pending code if `code` is it and it has not expired:
    /// the name `egirl pair --name` gave, if any. Why not, as one line.
    pub fn redeem(&self, code: &str) -> Result<Option<String>, String> {
        let _lock = self.lock()?;
        let Some(text) = secret::read_private(&self.path)? else {
            return Err(
                "no pairing code is pending (run `egirl pair` on the daemon's machine)".into(),
            );
        };
        let pending: Pending = toml::from_str(&text)
            .map_err(|e| format!("{}: {}", self.path.display(), e.message()))?;
        if Utc::now() >= pending.expires_at {
            let _ = std::fs::remove_file(&self.path);
            return Err("the pairing code expired (run `egirl pair` again)".into());
        }
        if !secret::same(&secret::sha256_hex(&digits(code)), &pending.code_sha256) {
            return Err("wrong pairing code".into());
        }
        std::fs::remove_file(&self.path)
            .map_err(|e| format!("cannot use up {}: {e}", self.path.display()))?;
        Ok(pending.name)
    }

    fn lock(&self) -> Result<FileLock, String> {
        let dir = self.path.parent().unwrap_or(Path::new("."));
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        FileLock::acquire(&dir.join("pairing.lock")).map_err(|e| format!("{e:#}"))
    }
}

/// 8 digits from the OS RNG, uniform (draws past the last whole
/// multiple of 10^8 are thrown away), shown as two groups of four.
fn new_code() -> Result<String, String> {
    const SPACE: u32 = 100_000_000;
    let limit = u32::MAX - u32::MAX % SPACE;
    loop {
        let mut bytes = [0u8; 4];
        getrandom::fill(&mut bytes).map_err(|e| format!("the OS random source failed: {e}"))?;
        let n = u32::from_le_bytes(bytes);
        if n < limit {
            let n = n % SPACE;
            return Ok(format!("{:04}-{:04}", n / 10_000, n % 10_000));
        }
    }
}

/// The code's digits (`4821-0937`, `4821 0937` and `48210937` are one code).
fn digits(code: &str) -> String {
    code.chars().filter(char::is_ascii_digit).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_code_works_once_and_a_wrong_one_leaves_it_pending() {
        let dir = tempfile::tempdir().unwrap();
        let codes = PairingCodes::at(dir.path().join("gateway/pairing.toml"));
        assert!(codes.redeem("1234-5678").is_err());
        let (code, _) = codes.issue(Some("phone")).unwrap();
        assert_eq!(code.len(), 9);
        assert!(
            !std::fs::read_to_string(&codes.path)
                .unwrap()
                .contains(&digits(&code))
        );
        let wrong = if code == "0000-0000" {
            "0000-0001"
        } else {
            "0000-0000"
        };
        assert_eq!(codes.redeem(wrong).unwrap_err(), "wrong pairing code");
        assert_eq!(
            codes.redeem(&digits(&code)).unwrap().as_deref(),
            Some("phone")
        );
        assert!(codes.redeem(&code).is_err());
    }

    #[test]
    fn an_expired_code_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let codes = PairingCodes::at(dir.path().join("pairing.toml"));
        let (code, _) = codes.issue(None).unwrap();
        let text = std::fs::read_to_string(&codes.path).unwrap();
        let mut pending: Pending = toml::from_str(&text).unwrap();
        pending.expires_at = Utc::now() - chrono::TimeDelta::seconds(1);
        std::fs::write(&codes.path, toml::to_string(&pending).unwrap()).unwrap();
        assert!(codes.redeem(&code).unwrap_err().contains("expired"));
    }
}
