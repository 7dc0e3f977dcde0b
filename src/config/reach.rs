//! Which start-up files the model could have written, and the one line
//! that refuses such a file when the trust store does not vouch for it.
//!
//! A file is within the model's reach when it lies in the workspace or an
//! `[tools] allowed_paths` directory of the config being loaded, in any
//! writable root an earlier egirl run recorded (a file planted by a run
//! with another config: `egirl serve --config /etc/...`), or, for a
//! config, when it was found by the working-directory search rather than
//! named: codex and Claude Code ask before trusting a project folder too.

use std::path::{Path, PathBuf};

use super::trust::{TrustEntry, TrustStore, Verdict, state_dir, write_private};

/// Why a directory is writable by the model.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RootKind {
    Workspace,
    AllowedPath,
    EarlierRun,
}

/// The directories the model may write, canonical.
#[derive(Clone, Debug, Default)]
pub struct WritableRoots {
    roots: Vec<(PathBuf, RootKind)>,
}

/// Why one start-up file needs the user's trust.
#[derive(Clone, Debug, PartialEq)]
pub enum Reachable {
    In(RootKind, PathBuf),
    /// A config found as `./egirl.toml`, not named.
    FoundInWorkingDirectory,
}

impl std::fmt::Display for Reachable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::In(RootKind::Workspace, root) => write!(
                f,
                "it lies in the workspace {}, where the model can write",
                root.display()
            ),
            Self::In(RootKind::AllowedPath, root) => write!(
                f,
                "it lies in {}, an [tools] allowed_paths directory the model can write",
                root.display()
            ),
            Self::In(RootKind::EarlierRun, root) => write!(
                f,
                "it lies in {}, where an earlier egirl run let the model write",
                root.display()
            ),
            Self::FoundInWorkingDirectory => write!(
                f,
                "it was found in the working directory, not named with --config"
            ),
        }
    }
}

/// `path` made absolute with symlinks resolved as far as it exists: a
/// workspace not created yet still compares by where it will be.
pub fn canonical_lossy(path: &Path) -> PathBuf {
    let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let mut missing = Vec::new();
    let mut existing = absolute.as_path();
    loop {
        if let Ok(real) = existing.canonicalize() {
            return missing.iter().rev().fold(real, |p, part| p.join(part));
        }
        match (existing.parent(), existing.file_name()) {
            (Some(parent), Some(name)) => {
                missing.push(name.to_os_string());
                existing = parent;
            }
            _ => return absolute,
        }
    }
}

/// `path` absolute with its directory resolved but not its last part:
/// where a symlink itself lies.
fn link_location(path: &Path) -> PathBuf {
    match (path.parent(), path.file_name()) {
        (Some(parent), Some(name)) => {
            let parent = if parent.as_os_str().is_empty() {
                Path::new(".")
            } else {
                parent
            };
            canonical_lossy(parent).join(name)
        }
        _ => canonical_lossy(path),
    }
}

impl WritableRoots {
    /// This start's workspace and allowed paths, and what earlier runs
    /// recorded.
    pub fn new(workspace: &Path, allowed: &[PathBuf], recorded: &[PathBuf]) -> Self {
        let mut roots = vec![(canonical_lossy(workspace), RootKind::Workspace)];
        roots.extend(
            allowed
                .iter()
                .map(|p| (canonical_lossy(p), RootKind::AllowedPath)),
        );
        roots.extend(
            recorded
                .iter()
                .map(|p| (canonical_lossy(p), RootKind::EarlierRun)),
        );
        Self { roots }
    }

    /// The root holding `path`, where the file lies or where it points.
    pub fn holding(&self, path: &Path) -> Option<Reachable> {
        let places = [link_location(path), canonical_lossy(path)];
        self.roots
            .iter()
            .find(|(root, _)| places.iter().any(|p| p.starts_with(root)))
            .map(|(root, kind)| Reachable::In(*kind, root.clone()))
    }

    /// Why `path` needs trust, if it does; `searched` for a config found
    /// by the working-directory search.
    pub fn reach(&self, path: &Path, searched: bool) -> Option<Reachable> {
        self.holding(path)
            .or(searched.then_some(Reachable::FoundInWorkingDirectory))
    }
}

/// A start-up file egirl will not load, as the one line that says so.
#[derive(Debug)]
pub struct Untrusted {
    /// The path as found or named (what `egirl trust` takes).
    pub shown: PathBuf,
    pub reach: Reachable,
    /// The entry trusted before, when the file changed since.
    pub changed: Option<TrustEntry>,
    /// Where the trust store lies in the model's reach, if it does.
    pub store_reachable: Option<Reachable>,
}

impl std::fmt::Display for Untrusted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let shown = self.shown.display();
        let command = format!(
            "egirl trust {}",
            shell_words::quote(&self.shown.display().to_string())
        );
        if let Some(store) = &self.store_reachable {
            return write!(
                f,
                "{shown} cannot be trusted: {}; and the trust store is within the model's reach too ({store}), so egirl honours none of its entries: set XDG_CONFIG_HOME to a directory outside the workspace and [tools] allowed_paths",
                self.reach
            );
        }
        match self.changed {
            Some(_) => write!(
                f,
                "{shown} changed since you trusted it ({}); review and trust it again with `{command}`",
                self.reach
            ),
            None => write!(
                f,
                "{shown} is not trusted: {}; review and trust it with `{command}`",
                self.reach
            ),
        }
    }
}

/// Whether `shown` (found or named as such, `searched` for a config from
/// the working-directory search) with `content` may be loaded.
pub fn check(
    shown: &Path,
    searched: bool,
    content: &[u8],
    roots: &WritableRoots,
    store: &TrustStore,
) -> Result<(), Box<Untrusted>> {
    let Some(reach) = roots.reach(shown, searched) else {
        return Ok(());
    };
    let untrusted = |changed| Untrusted {
        shown: shown.to_path_buf(),
        reach: reach.clone(),
        changed,
        store_reachable: roots.holding(store.path()),
    };
    if roots.holding(store.path()).is_some() {
        return Err(Box::new(untrusted(None)));
    }
    match store.verdict(&canonical_lossy(shown), content) {
        Verdict::Trusted => Ok(()),
        Verdict::Changed(before) => Err(Box::new(untrusted(Some(before)))),
        Verdict::Unknown => Err(Box::new(untrusted(None))),
    }
}

/// The file where each start records its writable roots.
fn roots_file() -> PathBuf {
    state_dir().join("writable-roots")
}

/// The writable roots earlier runs recorded (one path a line).
pub fn recorded_roots() -> Vec<PathBuf> {
    read_roots(&roots_file())
}

fn read_roots(file: &Path) -> Vec<PathBuf> {
    use std::os::unix::ffi::OsStrExt;
    let Ok(bytes) = std::fs::read(file) else {
        return Vec::new();
    };
    bytes
        .split(|b| *b == b'\n')
        .filter(|line| line.starts_with(b"/"))
        .map(|line| PathBuf::from(std::ffi::OsStr::from_bytes(line)))
        .collect()
}

/// Adds this start's writable roots to the record (canonical, each once).
pub fn record_roots(roots: &[PathBuf]) -> std::io::Result<()> {
    record_roots_in(&roots_file(), roots)
}

fn record_roots_in(file: &Path, roots: &[PathBuf]) -> std::io::Result<()> {
    let mut known = read_roots(file);
    let before = known.len();
    for root in roots.iter().map(|r| canonical_lossy(r)) {
        let printable = root.to_str().is_some_and(|s| !s.contains('\n'));
        if printable && !known.contains(&root) {
            known.push(root);
        }
    }
    if known.len() == before && file.exists() {
        return Ok(());
    }
    let text: String = known.iter().map(|r| format!("{}\n", r.display())).collect();
    write_private(file, &text)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn store_in(dir: &Path) -> TrustStore {
        TrustStore::open_at(dir.join("state/trusted.toml")).unwrap()
    }

    #[test]
    fn files_in_the_workspace_allowed_paths_or_earlier_roots_need_trust() {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().join("ws");
        let allowed = dir.path().join("notes");
        let earlier = dir.path().join("other-ws");
        let roots = WritableRoots::new(
            &ws,
            std::slice::from_ref(&allowed),
            std::slice::from_ref(&earlier),
        );
        let base = canonical_lossy(dir.path());
        assert_eq!(
            roots.reach(&ws.join("egirl.toml"), false),
            Some(Reachable::In(RootKind::Workspace, base.join("ws")))
        );
        assert_eq!(
            roots.reach(&allowed.join("sub/.env"), false),
            Some(Reachable::In(RootKind::AllowedPath, base.join("notes")))
        );
        assert_eq!(
            roots.reach(&earlier.join("egirl.toml"), false),
            Some(Reachable::In(RootKind::EarlierRun, base.join("other-ws")))
        );
        assert_eq!(roots.reach(&dir.path().join("egirl.toml"), false), None);
        assert_eq!(
            roots.reach(&dir.path().join("egirl.toml"), true),
            Some(Reachable::FoundInWorkingDirectory)
        );
    }

    #[test]
    fn a_symlink_counts_where_it_lies_and_where_it_points() {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().join("ws");
        std::fs::create_dir_all(&ws).unwrap();
        let outside = dir.path().join("real.toml");
        std::fs::write(&outside, "").unwrap();
        std::fs::write(ws.join("x.toml"), "").unwrap();
        std::os::unix::fs::symlink(&outside, ws.join("egirl.toml")).unwrap();
        std::os::unix::fs::symlink(ws.join("x.toml"), dir.path().join("link.toml")).unwrap();
        let roots = WritableRoots::new(&ws, &[], &[]);
        assert!(roots.reach(&ws.join("egirl.toml"), false).is_some());
        assert!(roots.reach(&dir.path().join("link.toml"), false).is_some());
        assert!(roots.reach(&outside, false).is_none());
    }

    #[test]
    fn only_the_exact_trusted_content_passes() {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().join("ws");
        std::fs::create_dir_all(&ws).unwrap();
        let config = ws.join("egirl.toml");
        std::fs::write(&config, "a = 1").unwrap();
        let roots = WritableRoots::new(&ws, &[], &[]);
        let mut store = store_in(dir.path());
        let refused = check(&config, false, b"a = 1", &roots, &store).unwrap_err();
        assert!(
            refused
                .to_string()
                .contains("is not trusted: it lies in the workspace")
        );
        assert!(refused.to_string().contains("`egirl trust "), "{refused}");
        store.trust(&canonical_lossy(&config), b"a = 1");
        assert!(check(&config, false, b"a = 1", &roots, &store).is_ok());
        let changed = check(&config, false, b"a = 2", &roots, &store).unwrap_err();
        assert!(
            changed.to_string().contains("changed since you trusted it"),
            "{changed}"
        );
        let outside = dir.path().join("egirl.toml");
        assert!(check(&outside, false, b"anything", &roots, &store).is_ok());
    }

    #[test]
    fn a_store_the_model_can_reach_trusts_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let config = dir.path().join("egirl.toml");
        let roots = WritableRoots::new(dir.path(), &[], &[]);
        let mut store = store_in(dir.path());
        store.trust(&canonical_lossy(&config), b"a = 1");
        let refused = check(&config, false, b"a = 1", &roots, &store).unwrap_err();
        assert!(refused.store_reachable.is_some());
        assert!(
            refused.to_string().contains("honours none of its entries"),
            "{refused}"
        );
    }

    #[test]
    fn roots_are_recorded_once_each() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("state/writable-roots");
        let ws = dir.path().join("ws");
        record_roots_in(&file, &[ws.clone(), dir.path().join("a")]).unwrap();
        record_roots_in(&file, std::slice::from_ref(&ws)).unwrap();
        let roots = read_roots(&file);
        assert_eq!(roots.len(), 2, "{roots:?}");
        assert_eq!(roots[0], canonical_lossy(&ws));
    }
}
