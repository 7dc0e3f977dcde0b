//! Hot reload: the skills directories are watched (recursively) and any
//! change to a Markdown file reloads the registry, debounced so that an
//! editor's burst of writes costs one reload.

use std::path::Path;
use std::sync::{Arc, Weak};
use std::time::Duration;

use notify_debouncer_mini::notify::{RecommendedWatcher, RecursiveMode};
use notify_debouncer_mini::{DebounceEventResult, Debouncer, new_debouncer};

use super::Registry;

/// Quiet time after the last change before the reload.
pub const DEBOUNCE: Duration = Duration::from_millis(250);

/// Watching stops when this is dropped.
pub struct Watcher {
    _debouncer: Debouncer<RecommendedWatcher>,
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
    let mut debouncer = new_debouncer(DEBOUNCE, move |result: DebounceEventResult| {
        let Ok(events) = result else {
            return;
        };
        if !events.iter().any(|e| touches_skill(&e.path)) {
            return;
        }
        if let Some(registry) = weak.upgrade() {
            let snapshot = registry.reload();
            tracing::info!(
                "skills reloaded: {} loaded, {} broken",
                snapshot.skills.len(),
                snapshot.broken.len()
            );
        }
    })?;
    for dir in registry.dirs() {
        if dir.is_dir() {
            debouncer
                .watcher()
                .watch(dir, RecursiveMode::Recursive)
                .map_err(|e| anyhow::anyhow!("cannot watch {}: {e}", dir.display()))?;
        }
    }
    Ok(Watcher {
        _debouncer: debouncer,
    })
}

/// A Markdown file, or a folder (created, removed or renamed: its SKILL.md
/// comes or goes with it).
fn touches_skill(path: &Path) -> bool {
    match path.extension() {
        Some(ext) => ext.eq_ignore_ascii_case("md"),
        None => true,
    }
}
