//! Incremental indexing, the embedding cache, model changes, recovery.

use std::time::{Duration, SystemTime};

use egirl::config::MemoryConfig;
use egirl::memory::{Embedder, chunk_markdown, db_path};

use super::{Workspace, dead_endpoint, paragraph};
use crate::support::fake_llama::FakeLlama;

fn three_files() -> Workspace {
    let long = (0..80)
        .map(|i| {
            format!(
                "## Day part {i}\n\n{}\n",
                paragraph(&format!("garden{i}"), 6)
            )
        })
        .collect::<String>();
    Workspace::with(&[
        (
            "MEMORY.md",
            "# Memory\n\n- The cat is called Miso.\n- Tea: genmaicha.\n",
        ),
        ("memory/2025-01-01.md", &long),
        (
            "memory/2025-01-02.md",
            &format!("### 09:00 · user · tui\n\n{}\n", paragraph("kyoto", 3)),
        ),
    ])
}

fn chunk_count(ws: &Workspace, rel: &str) -> usize {
    chunk_markdown(&std::fs::read_to_string(ws.file(rel)).unwrap()).len()
}

#[tokio::test]
async fn only_changed_files_are_re_embedded_in_batches() {
    let fake = FakeLlama::start().await;
    let ws = three_files();
    let memory = ws.memory(&fake, "embed-a");
    let total: usize = ["MEMORY.md", "memory/2025-01-01.md", "memory/2025-01-02.md"]
        .iter()
        .map(|f| chunk_count(&ws, f))
        .sum();
    assert!(total > 32, "more chunks than one batch: {total}");

    let report = memory.sync(None).await.unwrap();
    assert_eq!(
        (report.files, report.indexed, report.embedded),
        (3, 3, total)
    );
    assert_eq!(fake.embedded_texts().len(), total);
    // Batched: many texts per request.
    let requests = fake.hits("/v1/embeddings");
    assert_eq!(
        requests,
        total.div_ceil(32),
        "{requests} requests for {total} texts"
    );

    // Nothing changed: no request at all.
    let report = memory.sync(None).await.unwrap();
    assert_eq!((report.indexed, report.embedded), (0, 0));
    assert_eq!(fake.hits("/v1/embeddings"), requests);

    // Touched (new mtime, same text): no re-embedding either.
    let file = std::fs::File::options()
        .write(true)
        .open(ws.file("memory/2025-01-01.md"))
        .unwrap();
    file.set_modified(SystemTime::now() + Duration::from_secs(5))
        .unwrap();
    let report = memory.sync(None).await.unwrap();
    assert_eq!((report.indexed, report.embedded), (0, 0));
    assert_eq!(fake.hits("/v1/embeddings"), requests);

    // One file edited: only its chunk texts that changed are embedded.
    let before = fake.embedded_texts().len();
    let edited = format!(
        "### 09:00 · user · tui\n\n{}\n\n### 10:00 · user · tui\n\nNew plan: visit Nara deer park.\n",
        paragraph("kyoto", 3)
    );
    ws.write("memory/2025-01-02.md", &edited);
    let report = memory.sync(None).await.unwrap();
    assert_eq!(report.indexed, 1);
    let new_texts = &fake.embedded_texts()[before..];
    let new_chunks: Vec<String> = chunk_markdown(&edited)
        .into_iter()
        .map(|c| c.text)
        .collect();
    assert!(!new_texts.is_empty());
    assert!(
        new_texts.iter().all(|t| new_chunks.contains(t)),
        "only the edited file's chunks: {new_texts:?}"
    );
    assert_eq!(report.embedded, new_texts.len());
    assert!(new_texts.len() <= chunk_count(&ws, "memory/2025-01-02.md"));
}

#[tokio::test]
async fn a_deleted_file_leaves_the_index() {
    let fake = FakeLlama::start().await;
    let ws = three_files();
    let memory = ws.memory(&fake, "embed-a");
    memory.sync(None).await.unwrap();
    std::fs::remove_file(ws.file("memory/2025-01-02.md")).unwrap();
    let report = memory.sync(None).await.unwrap();
    assert_eq!(report.removed, 1);
    let result = memory.search("kyoto", None, Some(0.0)).await.unwrap();
    assert!(
        result.hits.iter().all(|h| h.path != "memory/2025-01-02.md"),
        "{:?}",
        result.hits
    );
}

#[tokio::test]
async fn indexing_never_touches_the_markdown() {
    let fake = FakeLlama::start().await;
    let ws = three_files();
    let snapshot = |ws: &Workspace| -> Vec<(Vec<u8>, SystemTime)> {
        ["MEMORY.md", "memory/2025-01-01.md", "memory/2025-01-02.md"]
            .iter()
            .map(|f| {
                let p = ws.file(f);
                (
                    std::fs::read(&p).unwrap(),
                    std::fs::metadata(&p).unwrap().modified().unwrap(),
                )
            })
            .collect()
    };
    let before = snapshot(&ws);
    let memory = ws.memory(&fake, "embed-a");
    memory.sync(None).await.unwrap();
    memory.search("cat", None, None).await.unwrap();
    assert!(before == snapshot(&ws));
}

#[tokio::test]
async fn a_new_model_replaces_every_vector() {
    let fake = FakeLlama::start().await;
    let ws = three_files();
    ws.memory(&fake, "embed-a").sync(None).await.unwrap();
    let first_round = fake.embedded_texts().len();

    // Same model again (a new process): everything is cached.
    ws.memory(&fake, "embed-a").sync(None).await.unwrap();
    assert_eq!(fake.embedded_texts().len(), first_round);

    // Another model: every chunk is embedded again, by that model.
    let memory = ws.memory(&fake, "embed-b");
    let report = memory.sync(None).await.unwrap();
    assert_eq!(report.embedded, first_round);
    let last = fake.requests_to("/v1/embeddings").pop().unwrap();
    assert_eq!(last["model"], "embed-b");
    let result = memory.search("Miso the cat", None, None).await.unwrap();
    assert_eq!(result.fallback, None);
    assert_eq!(result.hits[0].path, "MEMORY.md");

    // The same name with vectors of another size (the server's model was
    // swapped): the old vectors go, and the search stays hybrid.
    fake.set_embedding_dims(32);
    ws.write(
        "MEMORY.md",
        "# Memory\n\n- The cat is called Miso.\n- Tea: sencha now.\n",
    );
    memory.sync(None).await.unwrap();
    memory.sync(None).await.unwrap();
    let (_, chunks, vectors) = memory.counts().await.unwrap();
    assert_eq!(chunks, vectors, "every chunk has a vector of the new size");
    let result = memory.search("Miso the cat", None, None).await.unwrap();
    assert_eq!(result.fallback, None);
    assert_eq!(result.hits[0].path, "MEMORY.md");
}

#[tokio::test]
async fn a_corrupt_index_is_rebuilt_with_a_notice() {
    let fake = FakeLlama::start().await;
    let ws = three_files();
    let memory = ws.memory(&fake, "embed-a");
    memory.sync(None).await.unwrap();
    let db = db_path(ws.path());
    for suffix in ["-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", db.display()));
    }
    std::fs::write(&db, b"garbage, not a database ".repeat(500)).unwrap();

    let result = memory.search("Miso the cat", None, None).await.unwrap();
    assert!(
        result
            .notices
            .iter()
            .any(|n| n.contains("rebuilt it from the markdown")),
        "{:?}",
        result.notices
    );
    assert_eq!(result.hits[0].path, "MEMORY.md");
    let (files, chunks, _) = memory.counts().await.unwrap();
    assert_eq!(files, 3);
    assert!(chunks > 3);
}

#[tokio::test]
async fn a_locked_index_is_waited_for_not_rebuilt() {
    let ws = three_files();
    let memory = ws.memory_with(None, MemoryConfig::default());
    memory.sync(None).await.unwrap();
    ws.write("memory/2025-01-03.md", "Lock test: the blue bicycle.\n");

    // Another process holds the write lock for a moment.
    let db = db_path(ws.path());
    let (locked_tx, locked_rx) = std::sync::mpsc::channel();
    let holder = std::thread::spawn(move || {
        let conn = rusqlite::Connection::open(&db).unwrap();
        conn.execute_batch("BEGIN IMMEDIATE").unwrap();
        locked_tx.send(()).unwrap();
        std::thread::sleep(Duration::from_millis(300));
        conn.execute_batch("COMMIT").unwrap();
    });
    locked_rx.recv().unwrap();
    let result = memory.search("blue bicycle", None, None).await.unwrap();
    holder.join().unwrap();
    assert!(result.notices.is_empty(), "{:?}", result.notices);
    assert_eq!(result.hits[0].path, "memory/2025-01-03.md");
}

#[tokio::test]
async fn vectors_missing_after_an_outage_are_added_later() {
    let fake = FakeLlama::start().await;
    let ws = three_files();
    let down = ws.memory_with(
        Some(Embedder::local(&dead_endpoint().await, "embed-a")),
        MemoryConfig::default(),
    );
    let report = down.sync(None).await.unwrap();
    assert!(report.embed_error.is_some());
    assert_eq!(report.embedded, 0);
    let (_, chunks, vectors) = down.counts().await.unwrap();
    assert!(chunks > 0);
    assert_eq!(vectors, 0);

    // The server is back (same model): the next sync fills the gaps.
    let up = ws.memory(&fake, "embed-a");
    let report = up.sync(None).await.unwrap();
    assert_eq!(report.indexed, 0, "the files themselves did not change");
    assert_eq!(report.embedded as u64, chunks);
    assert_eq!(up.counts().await.unwrap().2, chunks);
}

#[tokio::test]
async fn a_search_sees_what_changed_since_the_last_one() {
    let fake = FakeLlama::start().await;
    let ws = three_files();
    let memory = ws.memory(&fake, "embed-a");
    let first = memory.search("octarine", None, Some(0.0)).await.unwrap();
    assert!(!first.hits.iter().any(|h| h.snippet.contains("octarine")));
    // Written after a complete sync: the search must not answer from the
    // index as it was.
    ws.write(
        "memory/2025-01-03.md",
        "The new paint colour is octarine.\n",
    );
    let second = memory.search("octarine", None, Some(0.0)).await.unwrap();
    assert_eq!(second.hits[0].path, "memory/2025-01-03.md");
    // An index deleted under a running egirl is rebuilt, not read empty.
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", db_path(ws.path()).display()));
    }
    let third = memory.search("octarine", None, Some(0.0)).await.unwrap();
    assert_eq!(third.hits[0].path, "memory/2025-01-03.md");
    assert_eq!(third.fallback, None);
}
