use std::time::Instant;

use notify::event::{CreateKind, DataChange, ModifyKind, RemoveKind};

use super::*;
use crate::config::MemoryConfig;
use crate::memory::lock;

#[test]
fn only_memory_markdown_counts() {
    assert!(is_memory_file(Path::new("/ws/MEMORY.md")));
    assert!(is_memory_file(Path::new("/ws/memory/2025-01-01.md")));
    assert!(is_memory_file(Path::new("/ws/memory/projects/x.md")));
    assert!(!is_memory_file(Path::new("/ws/SOUL.md")));
    assert!(!is_memory_file(Path::new("/ws/memory/notes.txt")));
    assert!(!is_memory_file(Path::new("/ws/.egirl/index.sqlite-wal")));
}

fn watched() -> Watched {
    Watched {
        workspace: PathBuf::from("/ws"),
        memory_dir: PathBuf::from("/ws/memory"),
    }
}

fn event(kind: EventKind, path: &str) -> notify::Result<Event> {
    Ok(Event::new(kind).add_path(PathBuf::from(path)))
}

#[test]
fn changes_are_told_apart_from_reads_and_lost_track() {
    let w = watched();
    let write = EventKind::Modify(ModifyKind::Data(DataChange::Any));
    let changed = Verdict::Changed { reindex: true };
    assert_eq!(w.judge(&event(write, "/ws/memory/2025-01-01.md")), changed);
    assert_eq!(w.judge(&event(write, "/ws/MEMORY.md")), changed);
    let closed = EventKind::Access(AccessKind::Close(AccessMode::Write));
    assert_eq!(w.judge(&event(closed, "/ws/memory/a.md")), changed);
    // A new folder may hold memory files.
    let mkdir = EventKind::Create(CreateKind::Folder);
    assert_eq!(w.judge(&event(mkdir, "/ws/memory/projects")), changed);
    // An editor's swap file: the files may differ, no sync for it.
    assert_eq!(
        w.judge(&event(write, "/ws/memory/.a.md.swp")),
        Verdict::Changed { reindex: false }
    );
    // Reads (the sync's own), and files that are not memory.
    let open = EventKind::Access(AccessKind::Open(AccessMode::Any));
    assert_eq!(w.judge(&event(open, "/ws/memory/a.md")), Verdict::Nothing);
    // A prompt file is no memory, but the system prompt is kept by it.
    assert_eq!(
        w.judge(&event(write, "/ws/SOUL.md")),
        Verdict::WorkspaceFile
    );
    assert_eq!(w.judge(&event(open, "/ws/SOUL.md")), Verdict::Nothing);
    assert!(w.names_a_workspace_file(&event(write, "/ws/MEMORY.md")));
    assert!(!w.names_a_workspace_file(&event(write, "/ws/memory/a.md")));
    assert_eq!(
        w.judge(&event(write, "/ws/.egirl/index.sqlite")),
        Verdict::Nothing
    );
    // The watched folders themselves, errors and overflows.
    let rmdir = EventKind::Remove(RemoveKind::Folder);
    assert_eq!(w.judge(&event(rmdir, "/ws/memory")), Verdict::LostTrack);
    assert_eq!(
        w.judge(&Err(notify::Error::generic("gone"))),
        Verdict::LostTrack
    );
    let overflow = Event::new(EventKind::Other).set_flag(notify::event::Flag::Rescan);
    assert_eq!(w.judge(&Ok(overflow)), Verdict::LostTrack);
}

#[test]
fn a_change_told_during_a_sync_leaves_its_record_stale() {
    let changes = Changes::default();
    changes.start_vouching();
    // A sync reads the count before it lists the files...
    let recorded = changes.count();
    assert!(changes.unchanged_since(recorded));
    // ...and a change arrives before it records what it saw.
    changes.bump();
    assert!(!changes.unchanged_since(recorded));
    assert!(changes.unchanged_since(changes.count()));
    changes.stop_vouching();
    assert!(!changes.unchanged_since(changes.count()), "nobody vouches");
}

/// A workspace with one daily log, synced, and its memory (no embedder).
async fn synced_workspace() -> (tempfile::TempDir, Arc<Memory>) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("memory")).unwrap();
    std::fs::write(dir.path().join("MEMORY.md"), "# Memory\n").unwrap();
    std::fs::write(
        dir.path().join("memory/2025-01-01.md"),
        "The parcel arrived on Monday.\n",
    )
    .unwrap();
    let memory = Arc::new(Memory::with_embedder(
        dir.path(),
        MemoryConfig::default(),
        None,
    ));
    memory.sync(None).await.unwrap();
    (dir, memory)
}

async fn paths_found(memory: &Arc<Memory>, query: &str) -> Vec<String> {
    let result = memory.search(query, None, None).await.unwrap();
    result.hits.into_iter().map(|h| h.path).collect()
}

/// Waits until the watcher has been told of a change after `before`.
async fn told_since(memory: &Memory, before: u64) {
    let started = Instant::now();
    while memory.changes.count() == before && started.elapsed() < Duration::from_secs(10) {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

fn vouched(memory: &Memory) -> bool {
    let recorded = lock(&memory.synced)
        .as_ref()
        .map(|s| s.changes.load(std::sync::atomic::Ordering::SeqCst));
    recorded.is_some_and(|r| memory.changes.unchanged_since(r))
}

#[tokio::test]
async fn an_edit_is_found_before_the_watcher_re_indexes() {
    let (dir, memory) = synced_workspace().await;
    // The watcher's own sync never comes within the test.
    let _watcher = spawn_with(memory.clone(), Duration::from_secs(3600)).unwrap();
    assert!(!vouched(&memory), "files changed before watching began");
    assert_eq!(
        paths_found(&memory, "parcel").await,
        ["memory/2025-01-01.md"]
    );
    assert!(vouched(&memory), "the search's stat of the files counts");

    let before = memory.changes.count();
    std::fs::write(
        dir.path().join("memory/2025-01-02.md"),
        "A zebra crossed the road.\n",
    )
    .unwrap();
    told_since(&memory, before).await;
    assert!(!vouched(&memory));
    assert_eq!(
        paths_found(&memory, "zebra").await,
        ["memory/2025-01-02.md"]
    );
    assert!(vouched(&memory), "the search synced");

    // An edit in place, the same size.
    let before = memory.changes.count();
    std::fs::write(
        dir.path().join("memory/2025-01-01.md"),
        "The wombat arrived on Monday.\n",
    )
    .unwrap();
    told_since(&memory, before).await;
    assert_eq!(
        paths_found(&memory, "wombat").await,
        ["memory/2025-01-01.md"]
    );
    assert!(paths_found(&memory, "parcel").await.is_empty());
}

#[tokio::test]
async fn the_watcher_re_indexes_after_the_quiet_time() {
    let (dir, memory) = synced_workspace().await;
    let _watcher = spawn_with(memory.clone(), Duration::from_millis(20)).unwrap();
    std::fs::write(dir.path().join("MEMORY.md"), "# Memory\n\nOtters.\n").unwrap();
    let started = Instant::now();
    while !vouched(&memory) && started.elapsed() < Duration::from_secs(10) {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(vouched(&memory), "synced without a search");
    assert_eq!(paths_found(&memory, "otters").await, ["MEMORY.md"]);
}

#[tokio::test]
async fn a_replaced_memory_folder_stops_the_vouching() {
    let (dir, memory) = synced_workspace().await;
    let _watcher = spawn_with(memory.clone(), Duration::from_secs(3600)).unwrap();
    assert_eq!(paths_found(&memory, "parcel").await.len(), 1);
    assert!(vouched(&memory));
    let before = memory.changes.count();
    std::fs::rename(dir.path().join("memory"), dir.path().join("old")).unwrap();
    std::fs::create_dir(dir.path().join("memory")).unwrap();
    told_since(&memory, before).await;
    let started = Instant::now();
    while memory
        .changes
        .vouching
        .load(std::sync::atomic::Ordering::SeqCst)
        && started.elapsed() < Duration::from_secs(10)
    {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    std::fs::write(dir.path().join("memory/2025-02-01.md"), "Kestrels.\n").unwrap();
    // The new folder is not watched: the search stats the files.
    assert_eq!(
        paths_found(&memory, "kestrels").await,
        ["memory/2025-02-01.md"]
    );
    assert!(paths_found(&memory, "parcel").await.is_empty());
    assert!(!vouched(&memory));
}

#[tokio::test]
async fn without_a_watcher_a_search_stats_the_files() {
    let (dir, memory) = synced_workspace().await;
    assert!(!vouched(&memory));
    std::fs::write(dir.path().join("memory/2025-01-03.md"), "Herons.\n").unwrap();
    assert_eq!(
        paths_found(&memory, "herons").await,
        ["memory/2025-01-03.md"]
    );
    let watcher = spawn_with(memory.clone(), Duration::from_secs(3600)).unwrap();
    assert_eq!(paths_found(&memory, "herons").await.len(), 1);
    assert!(vouched(&memory));
    drop(watcher);
    assert!(!vouched(&memory), "a stopped watcher vouches for nothing");
    std::fs::write(dir.path().join("memory/2025-01-04.md"), "Egrets.\n").unwrap();
    assert_eq!(
        paths_found(&memory, "egrets").await,
        ["memory/2025-01-04.md"]
    );
}
