//! Hybrid ranking, the full-text fallback, query escaping, dedupe.

use chrono::Local;
use egirl::config::{ConfigDuration, MemoryConfig};
use egirl::memory::Embedder;

use super::{Workspace, dead_endpoint};
use crate::support::fake_llama::FakeLlama;

/// Full-text and vectors disagree: only the daily log contains the word
/// "feline"; the vectors (which know feline means cat) favour MEMORY.md,
/// which is all about the cat.
fn disagreeing() -> Workspace {
    Workspace::with(&[
        ("MEMORY.md", "Miso the cat: cat food, cat toys, cat naps.\n"),
        (
            "memory/2025-02-01.md",
            "Long article notes: feline mentioned once, plus economics, taxes, budgets, spreadsheets, invoices, receipts, payroll, audits.\n",
        ),
        (
            "memory/2025-02-02.md",
            "Weather: rain all day, umbrella forgotten.\n",
        ),
    ])
}

fn paths(hits: &[egirl::protocol::MemoryHit]) -> Vec<&str> {
    hits.iter().map(|h| h.path.as_str()).collect()
}

#[tokio::test]
async fn weights_decide_when_text_and_vectors_disagree() {
    let fake = FakeLlama::start().await;
    fake.set_embedding_synonym("feline", "cat");
    let ws = disagreeing();

    // Default 0.7 vector / 0.3 text: the cat file wins on meaning.
    let memory = ws.memory(&fake, "embed");
    let result = memory.search("feline", None, Some(0.0)).await.unwrap();
    assert_eq!(result.fallback, None);
    assert_eq!(
        paths(&result.hits)[..2],
        ["MEMORY.md", "memory/2025-02-01.md"]
    );

    // Text-heavy weights: the literal match wins.
    let text_heavy = MemoryConfig {
        vector_weight: 0.1,
        text_weight: 0.9,
        ..MemoryConfig::default()
    };
    let memory = ws.memory_with(Some(Embedder::local(&fake.url(), "embed")), text_heavy);
    let result = memory.search("feline", None, Some(0.0)).await.unwrap();
    assert_eq!(
        paths(&result.hits)[..2],
        ["memory/2025-02-01.md", "MEMORY.md"]
    );

    // Full-text alone never finds the cat file.
    let memory = ws.memory_with(None, MemoryConfig::default());
    let result = memory.search("feline", None, Some(0.0)).await.unwrap();
    assert_eq!(result.fallback, Some("fts"));
    assert_eq!(paths(&result.hits), ["memory/2025-02-01.md"]);
    assert_eq!(result.hits[0].score, 1.0);
}

#[tokio::test]
async fn no_embedder_or_a_dead_one_falls_back_to_full_text() {
    let ws = disagreeing();
    let none = ws.memory_with(None, MemoryConfig::default());
    let result = none.search("umbrella rain", None, None).await.unwrap();
    assert_eq!(result.fallback, Some("fts"));
    assert_eq!(paths(&result.hits), ["memory/2025-02-02.md"]);
    assert_eq!(result.hits[0].start_line, 1);
    assert!(result.hits[0].snippet.contains("umbrella forgotten"));

    let dead = ws.memory_with(
        Some(Embedder::local(&dead_endpoint().await, "embed")),
        MemoryConfig::default(),
    );
    let result = dead.search("umbrella rain", None, None).await.unwrap();
    assert_eq!(result.fallback, Some("fts"));
    assert_eq!(paths(&result.hits), ["memory/2025-02-02.md"]);
    // Said once; the next search does not wait on the dead server again.
    assert!(
        result
            .notices
            .iter()
            .any(|n| n.contains("full-text search only")),
        "{:?}",
        result.notices
    );
    let again = dead.search("umbrella", None, None).await.unwrap();
    assert_eq!(again.fallback, Some("fts"));
    assert!(again.notices.is_empty());
    let json = serde_json::to_value(&again).unwrap();
    assert_eq!(json["fallback"], "fts");
}

#[tokio::test]
async fn fts_syntax_in_queries_is_only_text() {
    let fake = FakeLlama::start().await;
    let ws = Workspace::with(&[(
        "MEMORY.md",
        "NEAR the station: the cafe \"Blue\" has -20% on Mondays * and AND OR NOT.\n",
    )]);
    let memory = ws.memory(&fake, "embed");
    for query in [
        "\"",
        "\"\"",
        "*",
        "NEAR",
        "NEAR(cafe station)",
        "-",
        "-cafe",
        "cafe*",
        "\"Blue",
        "AND",
        "OR NOT",
        "(",
        ")",
        "text:cafe",
        "^cafe",
        "{cafe}",
        "cafe + station",
        "'",
        "",
        "   ",
    ] {
        let result = memory.search(query, None, Some(0.0)).await;
        assert!(result.is_ok(), "{query:?}: {:?}", result.err());
    }
    let result = memory
        .search("NEAR(cafe station)", None, None)
        .await
        .unwrap();
    assert_eq!(paths(&result.hits), ["MEMORY.md"]);
}

#[tokio::test]
async fn overlapping_chunks_are_one_hit_and_limits_hold() {
    let fake = FakeLlama::start().await;
    // One long paragraph-less log: consecutive chunks share lines, and
    // every line mentions the lighthouse.
    let log: String = (0..240)
        .map(|i| format!("Entry {i}: walked to the lighthouse again, wind level {i}.\n"))
        .collect();
    let ws = Workspace::with(&[("memory/2025-03-01.md", &log)]);
    let memory = ws.memory(&fake, "embed");
    let result = memory
        .search("lighthouse wind", Some(20), Some(0.0))
        .await
        .unwrap();
    assert!(result.hits.len() >= 3, "{:?}", result.hits);
    for (i, a) in result.hits.iter().enumerate() {
        for b in &result.hits[i + 1..] {
            assert!(
                a.end_line < b.start_line || b.end_line < a.start_line,
                "{a:?} overlaps {b:?}"
            );
        }
    }
    let two = memory
        .search("lighthouse wind", Some(2), Some(0.0))
        .await
        .unwrap();
    assert_eq!(two.hits.len(), 2);
    let threshold = result.hits[1].score;
    let best = memory
        .search("lighthouse wind", Some(20), Some(threshold))
        .await
        .unwrap();
    assert!(best.hits.len() < result.hits.len());
    assert!(
        best.hits.iter().all(|h| h.score >= threshold),
        "{:?}",
        best.hits
    );
}

#[tokio::test]
async fn old_daily_logs_decay_but_memory_md_does_not() {
    let today = Local::now().date_naive();
    let old = today - chrono::Days::new(60);
    let text = "Project Falcon deadline is in June.\n";
    let old_log = format!("memory/{}.md", old.format("%Y-%m-%d"));
    let new_log = format!("memory/{}.md", today.format("%Y-%m-%d"));
    let ws = Workspace::with(&[("MEMORY.md", text), (&old_log, text), (&new_log, text)]);
    let decaying = MemoryConfig {
        recency_half_life: ConfigDuration::from_secs(30 * 86_400),
        ..MemoryConfig::default()
    };
    let memory = ws.memory_with(None, decaying);
    let result = memory
        .search("falcon deadline", None, Some(0.0))
        .await
        .unwrap();
    let score = |p: &str| result.hits.iter().find(|h| h.path == p).map(|h| h.score);
    assert_eq!(score("MEMORY.md"), Some(1.0));
    assert_eq!(score(&new_log), Some(1.0));
    // Two half-lives old: a quarter.
    assert_eq!(score(&old_log), Some(0.25));
    assert_eq!(
        result.hits.last().map(|h| h.path.as_str()),
        Some(old_log.as_str())
    );
}

/// An embeddings server that takes its time over the index's chunks (a
/// big first index on a CPU) and answers the query at once.
async fn slow_embeddings() -> String {
    let app = axum::Router::new().route(
        "/v1/embeddings",
        axum::routing::post(
            |axum::Json(body): axum::Json<serde_json::Value>| async move {
                // The test's query is answered at once; the index's chunks are not.
                let query = serde_json::json!(["spare key"]);
                if body["input"] != query && body["input"] != "spare key" {
                    tokio::time::sleep(std::time::Duration::from_secs(30)).await;
                }
                axum::Json(serde_json::json!({
                    "model": "slow",
                    "data": [{"index": 0, "embedding": vec![0.5f32; 8]}]
                }))
            },
        ),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    format!("http://{addr}")
}

#[tokio::test]
async fn a_search_does_not_wait_out_a_long_sync() {
    let ws = Workspace::with(&[("MEMORY.md", "The spare key is under the blue pot.\n")]);
    let memory = ws.memory_with(
        Some(Embedder::local(&slow_embeddings().await, "slow")),
        MemoryConfig::default(),
    );
    // The start-up sync, stuck embedding.
    let syncing = memory.clone();
    tokio::spawn(async move {
        let _ = syncing.sync(None).await;
    });
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    let started = std::time::Instant::now();
    let result = tokio::time::timeout(
        std::time::Duration::from_secs(20),
        memory.search("spare key", None, None),
    )
    .await
    .expect("the search answers before the sync ends")
    .expect("no error");
    assert!(started.elapsed() < std::time::Duration::from_secs(20));
    // The chunks were written before the embedding began: full text finds it.
    assert_eq!(
        result.hits.first().map(|h| h.path.as_str()),
        Some("MEMORY.md"),
        "{result:?}"
    );
    assert!(
        result
            .notices
            .iter()
            .any(|n| n.contains("still being updated")),
        "{:?}",
        result.notices
    );
}
