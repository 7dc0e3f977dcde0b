//! The gateway's secrets as values and files: random tokens from the OS
//! RNG, their SHA-256, constant-time comparison, and files only their
//! owner may read (0600 in a 0700 directory).

use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::Path;

use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

/// A fresh token: 32 bytes from the OS RNG as hex, after a prefix that
/// says what it is (`egt_` the gateway's, `egd_` a device's).
pub fn new_token(prefix: &str) -> Result<String, String> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).map_err(|e| format!("the OS random source failed: {e}"))?;
    Ok(format!("{prefix}{}", hex(&bytes)))
}

/// Hex SHA-256: how device tokens and pairing codes are stored.
pub fn sha256_hex(text: &str) -> String {
    hex(&Sha256::digest(text.as_bytes()))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Compares in time independent of where the first difference is.
pub fn same(presented: &str, expected: &str) -> bool {
    presented.as_bytes().ct_eq(expected.as_bytes()).into()
}

/// Writes `text` to `path` readable by its owner only (0600; the
/// directory 0700), through a temporary file and a rename so a reader
/// never sees half of it.
pub fn write_private(path: &Path, text: &str) -> std::io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)?;
    // An existing directory made by hand may be wider: tighten it.
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))?;
    let name = path
        .file_name()
        .map_or("secret".into(), |n| n.to_string_lossy());
    let tmp = dir.join(format!(".{name}.{}.tmp", std::process::id()));
    let written = (|| {
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&tmp)?;
        file.write_all(text.as_bytes())?;
        file.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written
}

/// Reads a secret file; None when it does not exist. A file others may
/// read is tightened to 0600 first. A symlink is refused, not followed:
/// the tightening would change its target's mode, and a secret read
/// through a link is not the file egirl wrote.
pub fn read_private(path: &Path) -> Result<Option<String>, String> {
    match std::fs::symlink_metadata(path) {
        Ok(meta) if !meta.file_type().is_file() => {
            return Err(format!(
                "{} is not a regular file (a symlink?); remove it",
                path.display()
            ));
        }
        Ok(meta) if meta.permissions().mode() & 0o077 != 0 => {
            std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))
                .map_err(|e| format!("cannot make {} private: {e}", path.display()))?;
        }
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("cannot read {}: {e}", path.display())),
    }
    crate::fsutil::regular_file::read_to_string(path)
        .map(Some)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))
}

/// The gateway token in `path`, made on the first call (never printed:
/// the user reads the file).
pub fn ensure_token(path: &Path) -> Result<String, String> {
    if let Some(text) = read_private(path)? {
        let token = text.trim();
        if !token.is_empty() {
            return Ok(token.to_string());
        }
    }
    let token = new_token("egt_")?;
    write_private(path, &format!("{token}\n"))
        .map_err(|e| format!("cannot write the gateway token {}: {e}", path.display()))?;
    Ok(token)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_token_is_made_once_and_private() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("gateway/token");
        let first = ensure_token(&path).unwrap();
        assert!(first.starts_with("egt_") && first.len() == 68);
        assert_eq!(ensure_token(&path).unwrap(), first);
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        let dir_mode = std::fs::metadata(path.parent().unwrap())
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(dir_mode & 0o777, 0o700);
        assert!(same(&first, &first) && !same(&first, "egt_"));
    }

    #[test]
    fn a_symlinked_secret_is_refused_and_its_target_left_alone() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("elsewhere.txt");
        std::fs::write(&target, "not a secret").unwrap();
        std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o644)).unwrap();
        let link = dir.path().join("devices.toml");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        let err = read_private(&link).unwrap_err();
        assert!(err.contains("not a regular file"), "{err}");
        let mode = std::fs::metadata(&target).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o644, "the target's mode is unchanged");
    }
}
