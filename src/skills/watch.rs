//! Hot reload: the skills directories are watched (recursively) and any
//! change to a Markdown file reloads the registry, debounced so that an
//! editor's burst of writes costs one reload.
//!
//! Only changes count: inotify also reports a file or folder being opened,
//! and the reload itself opens every skill, so counting opens reloaded
//! the registry every debounce for as long as egirl ran.

use std::path::Path;
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::sync::{Arc, Weak};
use std::time::Duration;

use notify::{Event, EventKind, RecommendedWatcher, RecursiveMode, Watcher as _};

use super::Registry;

/// Quiet time after the last change before the reload.
pub const DEBOUNCE: Duration = Duration::from_millis(250);

/// Watching stops when this is dropped.
pub struct Watcher {
    _watcher: RecommendedWatcher,
}

impl std::fmt::Debug for Watcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("skills::Watcher")
    }
}

/// Watches every existing skills directory. The watcher holds the registry
/// weakly: it never keeps it alive.
pub fn start(registry: &Arc<Registry>) -> anyhow::Result<Watcher> {
    let weak: Weak<Registry> = Arc::downgrade(registry);
    let (changed, changes) = channel::<()>();
    let mut watcher = notify::recommended_watcher(move |result: notify::Result<Event>| {
        if result.is_ok_and(|event| changes_skills(&event)) {
            let _ = changed.send(());
        }
    })?;
    for dir in registry.dirs() {
        if dir.is_dir() {
            watcher
                .watch(dir, RecursiveMode::Recursive)
                .map_err(|e| anyhow::anyhow!("cannot watch {}: {e}", dir.display()))?;
        }
    }
    // Ends when the watcher, and with it the sender, is dropped.
    std::thread::Builder::new()
        .name("skills-watch".into())
        .spawn(move || reload_when_quiet(&changes, &weak))?;
    Ok(Watcher { _watcher: watcher })
}

/// One reload per burst of changes, `DEBOUNCE` after the last of them.
fn reload_when_quiet(changes: &Receiver<()>, registry: &Weak<Registry>) {
    while changes.recv().is_ok() {
        loop {
            match changes.recv_timeout(DEBOUNCE) {
                Ok(()) => {}
                Err(RecvTimeoutError::Timeout) => break,
                Err(RecvTimeoutError::Disconnected) => return,
            }
        }
        let Some(registry) = registry.upgrade() else {
            return;
        };
        let snapshot = registry.reload();
        tracing::info!(
            "skills reloaded: {} loaded, {} broken",
            snapshot.skills.len(),
            snapshot.broken.len()
        );
    }
}

/// A change (not an open or a read) to a Markdown file or a folder.
fn changes_skills(event: &Event) -> bool {
    !matches!(event.kind, EventKind::Access(_)) && event.paths.iter().any(|p| touches_skill(p))
}

/// A Markdown file, or a folder (created, removed or renamed: its SKILL.md
/// comes or goes with it).
fn touches_skill(path: &Path) -> bool {
    match path.extension() {
        Some(ext) => ext.eq_ignore_ascii_case("md"),
        None => true,
    }
}
