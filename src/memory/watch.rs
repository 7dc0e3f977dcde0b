//! Re-indexes memory when its files change: a debounced file watcher on
//! the workspace (`MEMORY.md`) and `memory/` (recursively). A burst of
//! writes (a turn appending to the daily log) becomes one sync.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result};
use notify_debouncer_mini::notify::{RecommendedWatcher, RecursiveMode};
use notify_debouncer_mini::{DebounceEventResult, Debouncer, new_debouncer};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use super::Memory;

/// Quiet time after the last change before re-indexing.
const DEBOUNCE: Duration = Duration::from_millis(750);

/// Watching stops when this is dropped.
pub struct MemoryWatcher {
    _debouncer: Debouncer<RecommendedWatcher>,
    task: JoinHandle<()>,
}

impl Drop for MemoryWatcher {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Starts watching; must be called on a tokio runtime.
pub fn spawn(memory: Arc<Memory>) -> Result<MemoryWatcher> {
    let workspace = memory.workspace().to_path_buf();
    let memory_dir = workspace.join("memory");
    std::fs::create_dir_all(&memory_dir)
        .with_context(|| format!("cannot create {}", memory_dir.display()))?;
    let (tx, mut rx) = mpsc::unbounded_channel::<()>();
    let mut debouncer = new_debouncer(DEBOUNCE, move |result: DebounceEventResult| match result {
        Ok(events) => {
            if events.iter().any(|e| is_memory_file(&e.path)) {
                let _ = tx.send(());
            }
        }
        Err(e) => tracing::warn!("memory watcher: {e}"),
    })
    .context("cannot start the memory file watcher")?;
    let watcher = debouncer.watcher();
    watcher
        .watch(&workspace, RecursiveMode::NonRecursive)
        .with_context(|| format!("cannot watch {}", workspace.display()))?;
    watcher
        .watch(&memory_dir, RecursiveMode::Recursive)
        .with_context(|| format!("cannot watch {}", memory_dir.display()))?;
    let task = tokio::spawn(async move {
        while rx.recv().await.is_some() {
            // Changes that came in meanwhile are covered by this one sync.
            while rx.try_recv().is_ok() {}
            match memory.sync(None).await {
                Ok(report) => {
                    for notice in report.notices {
                        tracing::warn!("{notice}");
                    }
                }
                Err(e) => tracing::warn!("memory re-index after a file change failed: {e:#}"),
            }
        }
    });
    Ok(MemoryWatcher {
        _debouncer: debouncer,
        task,
    })
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
mod tests {
    use super::*;

    #[test]
    fn only_memory_markdown_counts() {
        assert!(is_memory_file(Path::new("/ws/MEMORY.md")));
        assert!(is_memory_file(Path::new("/ws/memory/2025-01-01.md")));
        assert!(is_memory_file(Path::new("/ws/memory/projects/x.md")));
        assert!(!is_memory_file(Path::new("/ws/SOUL.md")));
        assert!(!is_memory_file(Path::new("/ws/memory/notes.txt")));
        assert!(!is_memory_file(Path::new("/ws/.egirl/index.sqlite-wal")));
    }
}
