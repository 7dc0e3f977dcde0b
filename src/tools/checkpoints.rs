//! File checkpoints for `/rewind`: before `write_file` or `edit_file`
//! changes a file for the first time in a turn, the file as it was (or the
//! fact that it did not exist) is kept under
//! `<workspace>/.egirl/checkpoints/<session>/<turn>/`. Rewinding to before
//! turn N puts back, for every file changed since, the copy taken first at
//! or after N, and removes the files that did not exist then.
//!
//! Only the file tools are tracked: what a command (`exec`) changed is not
//! known, and not undone. `.egirl/` is read-only to the model's file tools
//! and commands, so the model cannot forge a checkpoint.

use std::collections::{BTreeMap, HashSet};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

use crate::config::CheckpointsConfig;
use crate::fsutil::atomic::write_atomic;

const MANIFEST: &str = "manifest.jsonl";

/// One file a turn changed, as it was before.
#[derive(Clone, Debug, Serialize, Deserialize)]
struct Saved {
    /// The canonical path the tool wrote.
    path: PathBuf,
    /// The path as the tool showed it (relative to the workspace).
    shown: String,
    /// The copy's file name in the turn's folder; `None`: there was no
    /// file (or it was too large to keep, see `too_large`).
    blob: Option<String>,
    #[serde(default)]
    mode: Option<u32>,
    #[serde(default)]
    too_large: bool,
}

/// The checkpoints of every session in a workspace.
#[derive(Clone, Debug)]
pub struct Checkpoints {
    root: PathBuf,
    config: CheckpointsConfig,
    /// When `prune_due` last said yes (shared by the clones).
    last_prune: Arc<Mutex<Option<Instant>>>,
}

/// How often old copies are looked for when no turn kept any: `prune`
/// walks every session's folders, too much to do after every turn.
const PRUNE_EVERY: Duration = Duration::from_secs(60);

/// What a rewind did to the files.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Restored {
    /// Put back as they were (paths as the tools showed them).
    pub restored: Vec<String>,
    /// Created since, now removed.
    pub removed: Vec<String>,
    /// Left as they are on purpose, each with why (too large to have
    /// been kept, no longer writable by the file tools, a directory now).
    pub failed: Vec<String>,
    /// Could not be put back (an I/O error), each with why: the rewind
    /// stops there, and may be tried again (the checkpoints are kept).
    pub errors: Vec<String>,
}

impl Checkpoints {
    pub fn new(workspace: &Path, config: &CheckpointsConfig) -> Self {
        Self {
            root: workspace.join(".egirl").join("checkpoints"),
            config: config.clone(),
            last_prune: Arc::default(),
        }
    }

    /// Why no file is kept at all, when none is: checkpoints are off, or
    /// their size limit is zero (every file is too large).
    pub fn keeps_nothing(&self) -> Option<String> {
        if !self.config.enabled {
            Some("checkpoints are off ([checkpoints] enabled = false)".into())
        } else if self.config.max_total_mb == 0 {
            Some("[checkpoints] max_total_mb = 0 keeps no file".into())
        } else {
            None
        }
    }

    fn session_dir(&self, session: &str) -> PathBuf {
        self.root.join(session)
    }

    /// Whether `prune` should run after turn `turn` of `session`: the
    /// turn kept a copy (the size cap may be passed now), or `PRUNE_EVERY`
    /// has gone by since the last prune (copies age out).
    pub fn prune_due(&self, session: &str, turn: usize) -> bool {
        let kept = self.turn_dir(session, turn).exists();
        let mut last = self.last_prune.lock().unwrap_or_else(|e| e.into_inner());
        let due = kept || last.is_none_or(|at| at.elapsed() >= PRUNE_EVERY);
        if due {
            *last = Some(Instant::now());
        }
        due
    }

    fn turn_dir(&self, session: &str, turn: usize) -> PathBuf {
        self.session_dir(session).join(format!("{turn:06}"))
    }

    /// Where turn `turn` of `session` keeps its copies; `None` when
    /// checkpoints are off.
    pub fn turn(&self, session: &str, turn: usize) -> Option<Arc<TurnCheckpoint>> {
        self.config.enabled.then(|| {
            Arc::new(TurnCheckpoint {
                dir: self.turn_dir(session, turn),
                max_bytes: self.config.max_total_mb.saturating_mul(1024 * 1024),
                saved: Mutex::new(HashSet::new()),
            })
        })
    }

    /// The session's turn folders at or after `from_turn`, oldest first.
    fn turns_from(&self, session: &str, from_turn: usize) -> Vec<(usize, PathBuf)> {
        let Ok(read) = std::fs::read_dir(self.session_dir(session)) else {
            return Vec::new();
        };
        let mut turns: Vec<(usize, PathBuf)> = read
            .flatten()
            .filter_map(|e| {
                let n = e.file_name().to_str()?.parse::<usize>().ok()?;
                (n >= from_turn).then(|| (n, e.path()))
            })
            .collect();
        turns.sort();
        turns
    }

    /// Puts the files changed since before turn `from_turn` back.
    /// `writable` re-checks each path as a file tool would write it now.
    /// The checkpoints stay until `discard_from` (once the rewind is
    /// recorded), so a restore that failed halfway can be tried again:
    /// putting a file back twice is putting it back once.
    pub fn restore(
        &self,
        session: &str,
        from_turn: usize,
        writable: &dyn Fn(&Path) -> Result<(), String>,
    ) -> Restored {
        let turns = self.turns_from(session, from_turn);
        // The first copy at or after the turn is the file as it was then.
        let mut oldest: BTreeMap<PathBuf, (PathBuf, Saved)> = BTreeMap::new();
        for (_, dir) in &turns {
            for saved in read_manifest(dir) {
                oldest
                    .entry(saved.path.clone())
                    .or_insert_with(|| (dir.clone(), saved));
            }
        }
        let mut out = Restored::default();
        for (path, (dir, saved)) in oldest {
            let shown = saved.shown.clone();
            if saved.too_large {
                out.failed
                    .push(format!("{shown}: too large to checkpoint, not restored"));
                continue;
            }
            if let Err(why) = writable(&path) {
                out.failed.push(format!("{shown}: {why}"));
                continue;
            }
            if saved.blob.is_none() && std::fs::symlink_metadata(&path).is_ok_and(|m| m.is_dir()) {
                out.failed
                    .push(format!("{shown}: is a directory now, left alone"));
                continue;
            }
            match put_back(&path, &dir, &saved) {
                Ok(true) => out.restored.push(shown),
                Ok(false) => out.removed.push(shown),
                Err(e) => out.errors.push(format!("{shown}: {e:#}")),
            }
        }
        out
    }

    /// Drops the checkpoints of turn `from_turn` on (that future is gone).
    pub fn discard_from(&self, session: &str, from_turn: usize) {
        for (_, dir) in self.turns_from(session, from_turn) {
            let _ = std::fs::remove_dir_all(dir);
        }
    }

    /// Gives session `to` a copy of `from`'s checkpoints (a fork can be
    /// rewound to before the turns it shares with its source).
    pub fn copy_session(&self, from: &str, to: &str) -> Result<()> {
        for (turn, dir) in self.turns_from(from, 0) {
            let target = self.session_dir(to).join(format!("{turn:06}"));
            std::fs::create_dir_all(&target)
                .with_context(|| format!("cannot create {}", target.display()))?;
            for file in std::fs::read_dir(&dir)?.flatten() {
                std::fs::copy(file.path(), target.join(file.file_name())).with_context(|| {
                    format!("cannot copy the checkpoint {}", file.path().display())
                })?;
            }
        }
        Ok(())
    }

    /// Deletes turns older than `max_age`, then the oldest turns until all
    /// of them fit `max_total_mb`. Returns how many turns went.
    pub fn prune(&self, now: SystemTime) -> usize {
        let mut turns: Vec<(SystemTime, u64, PathBuf)> = Vec::new();
        let Ok(sessions) = std::fs::read_dir(&self.root) else {
            return 0;
        };
        for session in sessions.flatten() {
            let Ok(read) = std::fs::read_dir(session.path()) else {
                continue;
            };
            for turn in read.flatten() {
                let Ok(meta) = turn.metadata() else { continue };
                let modified = meta.modified().unwrap_or(now);
                turns.push((modified, dir_size(&turn.path()), turn.path()));
            }
        }
        turns.sort();
        let mut total: u64 = turns.iter().map(|t| t.1).sum();
        let max_bytes = self.config.max_total_mb.saturating_mul(1024 * 1024);
        let mut removed = 0;
        for (modified, size, dir) in turns {
            let age = now.duration_since(modified).unwrap_or_default();
            if age <= self.config.max_age.0 && total <= max_bytes {
                break;
            }
            if std::fs::remove_dir_all(&dir).is_ok() {
                total = total.saturating_sub(size);
                removed += 1;
                // The session's folder goes with its last turn.
                if let Some(parent) = dir.parent() {
                    let _ = std::fs::remove_dir(parent);
                }
            }
        }
        removed
    }
}

/// The copies of one turn; the tools call [`TurnCheckpoint::before_write`].
#[derive(Debug)]
pub struct TurnCheckpoint {
    dir: PathBuf,
    max_bytes: u64,
    /// Files already kept this turn: only the first change counts.
    saved: Mutex<HashSet<PathBuf>>,
}

impl TurnCheckpoint {
    /// Keeps `path` as it is now, once per turn. Called by the file tools
    /// just before they write; a failure is logged and the write goes on
    /// (a rewind then says the file was not restored).
    pub fn before_write(&self, path: &Path, shown: &str) {
        // Concurrent calls in one step: the lock makes the first one win.
        let mut saved = self.saved.lock().unwrap_or_else(|e| e.into_inner());
        if saved.contains(path) {
            return;
        }
        match self.keep(path, shown, saved.len()) {
            Ok(()) => {
                saved.insert(path.to_path_buf());
            }
            Err(e) => tracing::warn!(path = %path.display(), "no checkpoint: {e:#}"),
        }
    }

    fn keep(&self, path: &Path, shown: &str, n: usize) -> Result<()> {
        std::fs::create_dir_all(&self.dir)
            .with_context(|| format!("cannot create {}", self.dir.display()))?;
        let meta = std::fs::metadata(path).ok().filter(|m| m.is_file());
        let mut saved = Saved {
            path: path.to_path_buf(),
            shown: shown.to_string(),
            blob: None,
            mode: None,
            too_large: false,
        };
        if let Some(meta) = meta {
            use std::os::unix::fs::PermissionsExt;
            saved.mode = Some(meta.permissions().mode());
            if meta.len() > self.max_bytes {
                saved.too_large = true;
            } else {
                let bytes = crate::fsutil::regular_file::read(path)
                    .with_context(|| format!("cannot read {}", path.display()))?;
                let blob = format!("{n}");
                std::fs::write(self.dir.join(&blob), bytes)
                    .with_context(|| format!("cannot write a checkpoint of {shown}"))?;
                saved.blob = Some(blob);
            }
        }
        let mut line = serde_json::to_string(&saved)?;
        line.push('\n');
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.dir.join(MANIFEST))
            .and_then(|mut f| f.write_all(line.as_bytes()))
            .with_context(|| format!("cannot record a checkpoint in {}", self.dir.display()))
    }
}

fn read_manifest(dir: &Path) -> Vec<Saved> {
    let Ok(text) = std::fs::read_to_string(dir.join(MANIFEST)) else {
        return Vec::new();
    };
    text.lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

/// Restores one file; true when it was put back, false when removed.
fn put_back(path: &Path, dir: &Path, saved: &Saved) -> Result<bool> {
    let Some(blob) = &saved.blob else {
        match std::fs::symlink_metadata(path) {
            Ok(meta) if meta.is_dir() => anyhow::bail!("is a directory now"),
            Ok(_) => std::fs::remove_file(path).context("cannot remove it")?,
            Err(_) => {}
        }
        return Ok(false);
    };
    let bytes = std::fs::read(dir.join(blob)).context("its checkpoint is unreadable")?;
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).context("cannot create its directory")?;
    }
    // Written beside and renamed over: a symlink put there since is
    // replaced, never followed.
    write_atomic(path, &bytes).context("cannot write it")?;
    if let Some(mode) = saved.mode {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
            .context("cannot set its permissions")?;
    }
    Ok(true)
}

fn dir_size(dir: &Path) -> u64 {
    std::fs::read_dir(dir)
        .map(|r| {
            r.flatten()
                .filter_map(|e| e.metadata().ok())
                .map(|m| m.len())
                .sum()
        })
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn config(max_total_mb: u64) -> CheckpointsConfig {
        CheckpointsConfig {
            enabled: true,
            max_age: crate::config::ConfigDuration::from_secs(3600),
            max_total_mb,
        }
    }

    #[test]
    fn the_documented_example_is_the_default() {
        let example = "[checkpoints]\nenabled = true\nmax_age = \"7d\"\nmax_total_mb = 512\n";
        let parsed = crate::config::parse(example, Path::new("egirl.toml")).unwrap();
        let default = CheckpointsConfig::default();
        assert_eq!(parsed.checkpoints.enabled, default.enabled);
        assert_eq!(parsed.checkpoints.max_age, default.max_age);
        assert_eq!(parsed.checkpoints.max_total_mb, default.max_total_mb);
    }

    #[test]
    fn restores_the_first_copy_since_the_turn_and_removes_created_files() {
        let ws = tempfile::tempdir().unwrap();
        let cps = Checkpoints::new(ws.path(), &config(10));
        let a = ws.path().join("a.txt");
        let b = ws.path().join("b.txt");
        std::fs::write(&a, "v1").unwrap();
        // Turn 1 changes a; turn 2 changes a again and creates b.
        let t1 = cps.turn("s", 1).unwrap();
        t1.before_write(&a, "a.txt");
        std::fs::write(&a, "v2").unwrap();
        t1.before_write(&a, "a.txt");
        std::fs::write(&a, "v2b").unwrap();
        let t2 = cps.turn("s", 2).unwrap();
        t2.before_write(&a, "a.txt");
        std::fs::write(&a, "v3").unwrap();
        t2.before_write(&b, "b.txt");
        std::fs::write(&b, "new").unwrap();

        let ok = |_: &Path| Ok(());
        let out = cps.restore("s", 2, &ok);
        assert_eq!(out.restored, ["a.txt"]);
        assert_eq!(out.removed, ["b.txt"]);
        assert_eq!(std::fs::read_to_string(&a).unwrap(), "v2b");
        assert!(!b.exists());
        cps.discard_from("s", 2);
        let out = cps.restore("s", 1, &ok);
        assert_eq!(out.restored, ["a.txt"]);
        assert_eq!(std::fs::read_to_string(&a).unwrap(), "v1");
        // Used up once discarded: nothing left to restore.
        cps.discard_from("s", 1);
        assert_eq!(cps.restore("s", 1, &ok), Restored::default());
    }

    #[test]
    fn a_restore_that_fails_keeps_the_checkpoints_for_another_try() {
        let ws = tempfile::tempdir().unwrap();
        let cps = Checkpoints::new(ws.path(), &config(10));
        let a = ws.path().join("a.txt");
        std::fs::write(&a, "v1").unwrap();
        cps.turn("s", 1).unwrap().before_write(&a, "a.txt");
        std::fs::write(&a, "v2").unwrap();
        // The copy is gone (a disk error, a hand that cleaned up).
        let turn = ws.path().join(".egirl/checkpoints/s/000001");
        let blob = std::fs::read_dir(&turn)
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .find(|p| !p.ends_with(MANIFEST))
            .unwrap();
        let kept = std::fs::read(&blob).unwrap();
        std::fs::remove_file(&blob).unwrap();
        let out = cps.restore("s", 1, &|_| Ok(()));
        assert_eq!(out.errors.len(), 1, "{out:?}");
        assert!(out.errors[0].starts_with("a.txt: "), "{out:?}");
        assert_eq!(std::fs::read_to_string(&a).unwrap(), "v2");
        // Tried again once the copy is back: the checkpoint was kept.
        std::fs::write(&blob, kept).unwrap();
        let out = cps.restore("s", 1, &|_| Ok(()));
        assert_eq!(out.restored, ["a.txt"]);
        assert_eq!(std::fs::read_to_string(&a).unwrap(), "v1");
    }

    #[test]
    fn a_path_no_longer_writable_is_left_alone_and_said() {
        let ws = tempfile::tempdir().unwrap();
        let cps = Checkpoints::new(ws.path(), &config(10));
        let a = ws.path().join("a.txt");
        std::fs::write(&a, "v1").unwrap();
        cps.turn("s", 1).unwrap().before_write(&a, "a.txt");
        std::fs::write(&a, "v2").unwrap();
        let out = cps.restore("s", 1, &|_| Err("protected".into()));
        assert_eq!(out.failed, ["a.txt: protected"]);
        assert_eq!(std::fs::read_to_string(&a).unwrap(), "v2");
    }

    #[test]
    fn a_restore_replaces_a_symlink_instead_of_following_it() {
        let ws = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let victim = outside.path().join("victim");
        std::fs::write(&victim, "keep me").unwrap();
        let cps = Checkpoints::new(ws.path(), &config(10));
        let a = ws.path().join("a.txt");
        std::fs::write(&a, "v1").unwrap();
        cps.turn("s", 1).unwrap().before_write(&a, "a.txt");
        std::fs::remove_file(&a).unwrap();
        std::os::unix::fs::symlink(&victim, &a).unwrap();
        cps.restore("s", 1, &|_| Ok(()));
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep me");
        assert!(!std::fs::symlink_metadata(&a).unwrap().is_symlink());
        assert_eq!(std::fs::read_to_string(&a).unwrap(), "v1");
    }

    #[test]
    fn prunes_by_age_then_by_size_oldest_first() {
        let ws = tempfile::tempdir().unwrap();
        let cps = Checkpoints::new(ws.path(), &config(1));
        let big = ws.path().join("big");
        std::fs::write(&big, vec![b'x'; 700 * 1024]).unwrap();
        cps.turn("s", 1).unwrap().before_write(&big, "big");
        cps.turn("s", 2).unwrap().before_write(&big, "big");
        // Turn 1 a minute older than turn 2.
        let first = ws.path().join(".egirl/checkpoints/s/000001");
        std::fs::File::open(&first)
            .unwrap()
            .set_modified(SystemTime::now() - Duration::from_secs(60))
            .unwrap();
        // Two copies of 700 KiB do not fit in 1 MiB: the older goes.
        assert_eq!(cps.prune(SystemTime::now()), 1);
        assert_eq!(cps.turns_from("s", 0).len(), 1);
        assert_eq!(cps.turns_from("s", 0)[0].0, 2);
        // Two hours later everything is past max_age.
        let later = SystemTime::now() + Duration::from_secs(7200);
        assert_eq!(cps.prune(later), 1);
        assert!(!ws.path().join(".egirl/checkpoints/s").exists());
    }
}
