//! Re-indexes memory when its files change: a file watcher on the
//! workspace (`MEMORY.md`) and `memory/` (recursively). A burst of writes
//! (a turn appending to the daily log) becomes one sync, [`DEBOUNCE`] after
//! the last of them.
//!
//! The watcher also vouches for the files to searches: every change it is
//! told of bumps a count at once (not after the debounce), and a search
//! whose last complete sync saw the count as it is now skips the stat of
//! every file. A watcher that may have missed something (an error, the
//! kernel's queue overflowing, a watched folder removed or replaced) stops
//! vouching, and searches stat the files again, as they do without one.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use anyhow::{Context, Result};
use notify::event::{AccessKind, AccessMode};
use notify::{Event, EventKind, RecommendedWatcher, RecursiveMode, Watcher as _};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use super::Memory;

/// Quiet time after the last change before re-indexing.
const DEBOUNCE: Duration = Duration::from_millis(750);
/// A file written without a pause still gets re-indexed this often.
const MAX_WAIT: Duration = Duration::from_secs(5);

/// What the watcher has been told, for searches. Shared by the [`Memory`]
/// and its watcher.
#[derive(Debug, Default)]
pub(super) struct Changes {
    /// Bumped on every change to a memory file the watcher is told of, and
    /// when watching starts or loses track.
    count: AtomicU64,
    /// The same for any file directly in the workspace (the prompt files:
    /// `agent::context` keeps the system prompt while it holds still).
    workspace_count: AtomicU64,
    /// A watcher runs and has seen every change since it started.
    vouching: AtomicBool,
}

impl Changes {
    /// The count to record with a sync or a stat of the files: read
    /// before they are looked at, so that a change made meanwhile leaves
    /// the record stale.
    pub(super) fn count(&self) -> u64 {
        self.count.load(Ordering::SeqCst)
    }

    /// Whether a watcher vouches that nothing changed since `recorded`
    /// (a count read before the files were last seen as they are).
    pub(super) fn unchanged_since(&self, recorded: u64) -> bool {
        // Vouching first: a watcher that starts bumps the count before it
        // vouches, so a search that sees it vouching sees the new count.
        self.vouching.load(Ordering::SeqCst) && self.count() == recorded
    }

    /// [`Self::count`] for the files directly in the workspace.
    pub(super) fn workspace_count(&self) -> u64 {
        self.workspace_count.load(Ordering::SeqCst)
    }

    /// [`Self::unchanged_since`] for the files directly in the workspace.
    pub(super) fn workspace_unchanged_since(&self, recorded: u64) -> bool {
        self.vouching.load(Ordering::SeqCst) && self.workspace_count() == recorded
    }

    fn bump(&self) {
        self.count.fetch_add(1, Ordering::SeqCst);
    }

    fn bump_workspace(&self) {
        self.workspace_count.fetch_add(1, Ordering::SeqCst);
    }

    fn start_vouching(&self) {
        // Files changed before the watches were set were seen by no one.
        self.bump();
        self.bump_workspace();
        self.vouching.store(true, Ordering::SeqCst);
    }

    fn stop_vouching(&self) {
        self.vouching.store(false, Ordering::SeqCst);
        self.bump();
        self.bump_workspace();
    }
}

/// Watching stops when this is dropped.
pub struct MemoryWatcher {
    _watcher: RecommendedWatcher,
    changes: Arc<Changes>,
    task: JoinHandle<()>,
}

impl Drop for MemoryWatcher {
    fn drop(&mut self) {
        self.changes.stop_vouching();
        self.task.abort();
    }
}

/// Starts watching; must be called on a tokio runtime.
pub fn spawn(memory: Arc<Memory>) -> Result<MemoryWatcher> {
    spawn_with(memory, DEBOUNCE)
}

fn spawn_with(memory: Arc<Memory>, debounce: Duration) -> Result<MemoryWatcher> {
    let workspace = memory.workspace().to_path_buf();
    let memory_dir = workspace.join("memory");
    std::fs::create_dir_all(&memory_dir)
        .with_context(|| format!("cannot create {}", memory_dir.display()))?;
    let changes = memory.changes.clone();
    let (tx, rx) = mpsc::unbounded_channel::<()>();
    let watched = Watched {
        workspace: workspace.clone(),
        memory_dir: memory_dir.clone(),
    };
    let told = changes.clone();
    let mut watcher = notify::recommended_watcher(move |event| match watched.judge(&event) {
        Verdict::Nothing => {}
        Verdict::WorkspaceFile => told.bump_workspace(),
        Verdict::Changed { reindex } => {
            told.bump();
            if watched.names_a_workspace_file(&event) {
                told.bump_workspace();
            }
            if reindex {
                let _ = tx.send(());
            }
        }
        Verdict::LostTrack => {
            if let Err(e) = &event {
                tracing::warn!("memory watcher: {e}; searches check the files again");
            }
            told.stop_vouching();
            let _ = tx.send(());
        }
    })
    .context("cannot start the memory file watcher")?;
    watcher
        .watch(&workspace, RecursiveMode::NonRecursive)
        .with_context(|| format!("cannot watch {}", workspace.display()))?;
    watcher
        .watch(&memory_dir, RecursiveMode::Recursive)
        .with_context(|| format!("cannot watch {}", memory_dir.display()))?;
    changes.start_vouching();
    let task = tokio::spawn(reindex_when_quiet(memory, rx, debounce));
    Ok(MemoryWatcher {
        _watcher: watcher,
        changes,
        task,
    })
}

/// One sync per burst of changes, once they pause for `debounce` (or
/// after [`MAX_WAIT`] of changes without a pause).
async fn reindex_when_quiet(
    memory: Arc<Memory>,
    mut rx: mpsc::UnboundedReceiver<()>,
    debounce: Duration,
) {
    while rx.recv().await.is_some() {
        let until = tokio::time::Instant::now() + MAX_WAIT.max(debounce);
        loop {
            let quiet = tokio::time::Instant::now() + debounce;
            match tokio::time::timeout_at(quiet.min(until), rx.recv()).await {
                Ok(Some(())) => {}
                Ok(None) => return,
                Err(_) => break,
            }
        }
        match memory.sync(None).await {
            Ok(report) => {
                for notice in report.notices {
                    tracing::warn!("{notice}");
                }
            }
            Err(e) => tracing::warn!("memory re-index after a file change failed: {e:#}"),
        }
    }
}

/// The two watched folders.
struct Watched {
    workspace: PathBuf,
    memory_dir: PathBuf,
}

#[derive(Debug, PartialEq)]
enum Verdict {
    Nothing,
    /// A file directly in the workspace other than `MEMORY.md` changed.
    WorkspaceFile,
    /// Something under `memory/` or `MEMORY.md` changed; `reindex`: a
    /// memory file or a folder (worth a sync), not an editor's swap file.
    Changed {
        reindex: bool,
    },
    /// An error, an overflow, or a watched folder itself changed (removed,
    /// moved, replaced): its watch may be gone.
    LostTrack,
}

impl Watched {
    /// Whether `event` names a file directly in the workspace (`MEMORY.md`
    /// is one, besides being memory).
    fn names_a_workspace_file(&self, event: &notify::Result<Event>) -> bool {
        event.as_ref().is_ok_and(|event| {
            event
                .paths
                .iter()
                .any(|path| path.parent() == Some(self.workspace.as_path()))
        })
    }

    fn judge(&self, event: &notify::Result<Event>) -> Verdict {
        let event = match event {
            Ok(event) if !event.need_rescan() => event,
            _ => return Verdict::LostTrack,
        };
        // Opens and reads (the sync itself reads the files) change nothing.
        if let EventKind::Access(kind) = event.kind
            && kind != AccessKind::Close(AccessMode::Write)
        {
            return Verdict::Nothing;
        }
        let mut verdict = Verdict::Nothing;
        for path in &event.paths {
            if path == &self.workspace || path == &self.memory_dir {
                return Verdict::LostTrack;
            }
            let in_workspace = path.parent() == Some(self.workspace.as_path());
            let curated = in_workspace && path.file_name().is_some_and(|n| n == "MEMORY.md");
            if curated || path.starts_with(&self.memory_dir) {
                let reindex = curated || is_memory_file(path) || path.extension().is_none();
                if matches!(verdict, Verdict::Nothing | Verdict::WorkspaceFile) || reindex {
                    verdict = Verdict::Changed { reindex };
                }
            } else if in_workspace && verdict == Verdict::Nothing {
                verdict = Verdict::WorkspaceFile;
            }
        }
        verdict
    }
}

/// `MEMORY.md`, or a markdown file with a `memory` folder above it.
fn is_memory_file(path: &Path) -> bool {
    if path.file_name().is_some_and(|n| n == "MEMORY.md") {
        return true;
    }
    path.extension().is_some_and(|e| e == "md")
        && path
            .ancestors()
            .skip(1)
            .any(|a| a.file_name().is_some_and(|n| n == "memory"))
}

#[cfg(test)]
#[path = "watch_tests.rs"]
mod tests;
