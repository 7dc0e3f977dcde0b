//! The paired devices (`devices.toml` in the gateway's secrets dir, 0600):
//! each with its id, name, when it was paired and last seen, and the
//! SHA-256 of its token (the token itself was shown once, to the device).
//! `egirl pair`'s devices are added by the daemon, listed and revoked by
//! `egirl devices` in another process: every change is a locked
//! read-modify-write, and a listener re-reads the file when it changed
//! (a revoked device is refused on its next frame).

use std::os::unix::fs::{DirBuilderExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::SystemTime;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::secret;
use crate::fsutil::lockfile::FileLock;

/// How often `last_seen` is written for one device at most (each write
/// makes every listener re-read the file).
const LAST_SEEN_EVERY_SECS: i64 = 60;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Device {
    pub id: String,
    pub name: String,
    /// Hex SHA-256 of the device's token.
    pub token_sha256: String,
    pub paired_at: DateTime<Utc>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_seen: Option<DateTime<Utc>>,
}

#[derive(Default, Serialize, Deserialize)]
struct DevicesFile {
    #[serde(default, rename = "device")]
    devices: Vec<Device>,
}

/// The devices file and the lock its writers take.
#[derive(Clone, Debug)]
pub struct DeviceStore {
    path: PathBuf,
}

impl DeviceStore {
    pub fn at(path: PathBuf) -> Self {
        Self { path }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The devices now (none when the file does not exist).
    pub fn load(&self) -> Result<Vec<Device>, String> {
        let Some(text) = secret::read_private(&self.path)? else {
            return Ok(Vec::new());
        };
        toml::from_str::<DevicesFile>(&text)
            .map(|f| f.devices)
            .map_err(|e| format!("{}: {}", self.path.display(), e.message()))
    }

    /// Adds a device named `name` with a fresh token: its entry and the
    /// token, which only the device keeps.
    pub fn add(&self, name: &str) -> Result<(Device, String), String> {
        let token = secret::new_token("egd_")?;
        let id = secret::new_token("")?[..8].to_string();
        let device = Device {
            id,
            name: name.to_string(),
            token_sha256: secret::sha256_hex(&token),
            paired_at: Utc::now(),
            last_seen: None,
        };
        self.change(|devices| devices.push(device.clone()))?;
        Ok((device, token))
    }

    /// Removes the device `id`; false when there was none.
    pub fn revoke(&self, id: &str) -> Result<bool, String> {
        let mut found = false;
        self.change(|devices| {
            let before = devices.len();
            devices.retain(|d| d.id != id);
            found = devices.len() != before;
        })?;
        Ok(found)
    }

    /// Notes that `id` was seen now (at most once a minute).
    pub fn seen(&self, id: &str) -> Result<(), String> {
        let now = Utc::now();
        self.change(|devices| {
            if let Some(d) = devices.iter_mut().find(|d| d.id == id)
                && d.last_seen
                    .is_none_or(|t| (now - t).num_seconds() >= LAST_SEEN_EVERY_SECS)
            {
                d.last_seen = Some(now);
            }
        })
    }

    /// A locked read-modify-write; the file is written only when `edit`
    /// changed something.
    fn change(&self, edit: impl FnOnce(&mut Vec<Device>)) -> Result<(), String> {
        let dir = self.path.parent().unwrap_or(Path::new("."));
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        let _lock = FileLock::acquire(&dir.join("devices.lock")).map_err(|e| format!("{e:#}"))?;
        let mut devices = self.load()?;
        let before = devices.clone();
        edit(&mut devices);
        if devices == before {
            return Ok(());
        }
        let text = toml::to_string(&DevicesFile { devices })
            .map_err(|e| format!("cannot write {}: {e}", self.path.display()))?;
        secret::write_private(&self.path, &text)
            .map_err(|e| format!("cannot write {}: {e}", self.path.display()))
    }
}

/// The devices as a listener last read them, re-read when the file
/// changes (its inode, size or modification time).
pub struct DeviceCache {
    store: DeviceStore,
    cached: Mutex<(Option<Stamp>, Vec<Device>)>,
}

type Stamp = (u64, u64, Option<SystemTime>);

impl DeviceCache {
    pub fn new(store: DeviceStore) -> Self {
        Self {
            store,
            cached: Mutex::new((None, Vec::new())),
        }
    }

    pub fn store(&self) -> &DeviceStore {
        &self.store
    }

    /// The devices now. An unreadable file admits no device (and says why
    /// in the log).
    pub fn current(&self) -> Vec<Device> {
        let stamp = std::fs::metadata(self.store.path())
            .ok()
            .map(|m| (m.ino(), m.len(), m.modified().ok()));
        let mut cached = self.cached.lock().unwrap_or_else(|e| e.into_inner());
        if cached.0.is_none() || cached.0 != stamp {
            let devices = self.store.load().unwrap_or_else(|e| {
                tracing::warn!("gateway: {e}; no device is admitted until it is fixed");
                Vec::new()
            });
            *cached = (stamp, devices);
        }
        cached.1.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn devices_are_added_seen_and_revoked_and_the_cache_follows() {
        let dir = tempfile::tempdir().unwrap();
        let store = DeviceStore::at(dir.path().join("gateway/devices.toml"));
        let cache = DeviceCache::new(store.clone());
        assert!(cache.current().is_empty());
        let (phone, token) = store.add("phone").unwrap();
        assert!(token.starts_with("egd_"));
        let text = std::fs::read_to_string(store.path()).unwrap();
        assert!(!text.contains(&token), "only the hash is stored");
        assert_eq!(cache.current(), vec![phone.clone()]);
        store.seen(&phone.id).unwrap();
        assert!(store.load().unwrap()[0].last_seen.is_some());
        assert!(store.revoke(&phone.id).unwrap());
        assert!(!store.revoke(&phone.id).unwrap());
        assert!(cache.current().is_empty());
    }
}
