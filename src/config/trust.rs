//! The trust store: the start-up files (configs and `.env`) the user has
//! reviewed and trusted, by canonical path and content hash, kept outside
//! every workspace (`$XDG_CONFIG_HOME/egirl/trusted.toml`). A file the
//! model could have written is loaded only when its exact path and
//! current content are listed here (see `config::reach` for which files
//! those are). A config's trusted text is kept so a later change shows as
//! a diff; a `.env` keeps only its variable names, never a value.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// What kind of start-up file an entry is: decides what is kept of it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum StartUpKind {
    Config,
    Env,
}

impl StartUpKind {
    /// A file named `.env` (or `.env.something`) holds variables; any
    /// other start-up file is a config.
    pub fn of(path: &Path) -> Self {
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
        match name {
            Some(n) if n == ".env" || n.starts_with(".env.") || n.ends_with(".env") => Self::Env,
            _ => Self::Config,
        }
    }
}

/// One trusted file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TrustEntry {
    /// Canonical path.
    pub path: PathBuf,
    pub kind: StartUpKind,
    /// Hex SHA-256 of the content trusted.
    pub sha256: String,
    /// A config's trusted text (for the diff when it changes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// A `.env`'s variable names (its values are secrets: never kept).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub names: Vec<String>,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct StoreFile {
    #[serde(default, rename = "file")]
    files: Vec<TrustEntry>,
}

/// How a file stands with the store.
#[derive(Debug, PartialEq)]
pub enum Verdict {
    /// Listed with this exact content.
    Trusted,
    /// Listed, but its content changed since: the entry trusted before.
    Changed(TrustEntry),
    /// Not listed.
    Unknown,
}

/// The trust store file, read once at start (before any `.env` could
/// change where it is looked for).
#[derive(Debug)]
pub struct TrustStore {
    path: PathBuf,
    entries: Vec<TrustEntry>,
}

/// `$XDG_CONFIG_HOME/egirl`, else `~/.config/egirl`: egirl's own state
/// that no workspace holds (the trust store, the writable roots).
pub fn state_dir() -> PathBuf {
    match std::env::var_os("XDG_CONFIG_HOME").filter(|v| Path::new(v).is_absolute()) {
        Some(dir) => PathBuf::from(dir).join("egirl"),
        None => super::expand_home("~/.config/egirl"),
    }
}

/// Hex SHA-256 of a file's content.
pub fn sha256_hex(content: &[u8]) -> String {
    format!("{:x}", Sha256::digest(content))
}

/// The variable names a `.env` text sets, in order (values left out).
pub fn env_names(content: &[u8]) -> Vec<String> {
    dotenvy::from_read_iter(content)
        .filter_map(Result::ok)
        .map(|(name, _)| name)
        .collect()
}

impl TrustStore {
    /// The store in [`state_dir`]; an unreadable or broken store trusts
    /// nothing (and says why).
    pub fn open() -> Result<Self, String> {
        Self::open_at(state_dir().join("trusted.toml"))
    }

    pub fn open_at(path: PathBuf) -> Result<Self, String> {
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
            Err(e) => return Err(format!("cannot read {}: {e}", path.display())),
        };
        let file: StoreFile =
            toml::from_str(&text).map_err(|e| format!("{}: {}", path.display(), e.message()))?;
        Ok(Self {
            path,
            entries: file.files,
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn entries(&self) -> &[TrustEntry] {
        &self.entries
    }

    /// Where `canonical` with `content` stands.
    pub fn verdict(&self, canonical: &Path, content: &[u8]) -> Verdict {
        match self.entries.iter().find(|e| e.path == canonical) {
            Some(e) if e.sha256 == sha256_hex(content) => Verdict::Trusted,
            Some(e) => Verdict::Changed(e.clone()),
            None => Verdict::Unknown,
        }
    }

    /// Records `canonical` as trusted with `content` (replacing an
    /// earlier entry for it).
    pub fn trust(&mut self, canonical: &Path, content: &[u8]) {
        let kind = StartUpKind::of(canonical);
        let entry = TrustEntry {
            path: canonical.to_path_buf(),
            kind,
            sha256: sha256_hex(content),
            text: (kind == StartUpKind::Config)
                .then(|| String::from_utf8_lossy(content).into_owned()),
            names: match kind {
                StartUpKind::Env => env_names(content),
                StartUpKind::Config => Vec::new(),
            },
        };
        self.entries.retain(|e| e.path != canonical);
        self.entries.push(entry);
    }

    /// Drops the entry for `canonical`; whether there was one.
    pub fn forget(&mut self, canonical: &Path) -> bool {
        let before = self.entries.len();
        self.entries.retain(|e| e.path != canonical);
        self.entries.len() != before
    }

    /// Writes the store (owner-only), replacing the file in one rename.
    pub fn save(&self) -> std::io::Result<()> {
        let text = toml::to_string(&StoreFile {
            files: self.entries.clone(),
        })
        .map_err(std::io::Error::other)?;
        let header = "# Start-up files trusted with `egirl trust` (docs/security.md).\n";
        write_private(&self.path, &format!("{header}{text}"))
    }
}

/// Writes `path` with mode 0600 in a directory made 0700, atomically.
pub(super) fn write_private(path: &Path, text: &str) -> std::io::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)?;
    let tmp = path.with_extension(format!("tmp{}", std::process::id()));
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(&tmp)?;
    file.write_all(text.as_bytes())?;
    file.sync_all()?;
    std::fs::rename(&tmp, path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_is_trusted_only_with_the_content_trusted() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = TrustStore::open_at(dir.path().join("trusted.toml")).unwrap();
        let config = dir.path().join("egirl.toml");
        assert_eq!(store.verdict(&config, b"a = 1"), Verdict::Unknown);
        store.trust(&config, b"a = 1");
        store.save().unwrap();
        let store = TrustStore::open_at(dir.path().join("trusted.toml")).unwrap();
        assert_eq!(store.verdict(&config, b"a = 1"), Verdict::Trusted);
        match store.verdict(&config, b"a = 2") {
            Verdict::Changed(before) => assert_eq!(before.text.as_deref(), Some("a = 1")),
            other => panic!("{other:?}"),
        }
        assert_eq!(
            store.verdict(&dir.path().join("other.toml"), b"a = 1"),
            Verdict::Unknown
        );
    }

    #[test]
    fn an_env_file_keeps_names_never_values() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = TrustStore::open_at(dir.path().join("trusted.toml")).unwrap();
        let env = dir.path().join(".env");
        store.trust(&env, b"API_KEY=very-secret-value\nOTHER=x\n");
        store.save().unwrap();
        let saved = std::fs::read_to_string(dir.path().join("trusted.toml")).unwrap();
        assert!(!saved.contains("very-secret-value"), "{saved}");
        assert!(saved.contains("API_KEY"), "{saved}");
        assert_eq!(store.entries()[0].names, ["API_KEY", "OTHER"]);
        assert_eq!(store.entries()[0].text, None);
    }

    #[test]
    fn forget_drops_the_entry_and_the_store_is_private() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("egirl/trusted.toml");
        let mut store = TrustStore::open_at(path.clone()).unwrap();
        let config = dir.path().join("egirl.toml");
        store.trust(&config, b"x");
        store.trust(&config, b"y");
        assert_eq!(store.entries().len(), 1, "trusting again replaces");
        store.save().unwrap();
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        assert!(store.forget(&config));
        assert!(!store.forget(&config));
        assert_eq!(store.verdict(&config, b"y"), Verdict::Unknown);
    }

    #[test]
    fn a_broken_store_is_an_error_not_an_empty_trust() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("trusted.toml");
        std::fs::write(&path, "[[file]]\npath = 3\n").unwrap();
        assert!(TrustStore::open_at(path).is_err());
    }
}
