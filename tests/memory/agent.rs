//! Memory through the agent: the tools (with `memory_hits` for the TUI),
//! `/memory`, and the watcher re-indexing on a file change.

use std::time::Duration;

use egirl::config::{EmbeddingsConfig, MemoryConfig};
use egirl::protocol::{Command, EventKind, MemoryHits, Op, ToolResultEvent};
use serde_json::Value;

use super::Workspace;
use crate::agent::{Harness, final_text, start};
use crate::support::fake_llama::{FakeLlama, Reply};

fn with_embeddings(fake: &FakeLlama) -> impl FnOnce(&mut egirl::config::Config) {
    let url = fake.url();
    move |c| {
        c.local.embeddings = Some(EmbeddingsConfig {
            endpoint: url,
            model: "fake-embed".into(),
        })
    }
}

fn tool_output(events: &[EventKind], name: &str) -> (bool, String) {
    events
        .iter()
        .find_map(|e| match e {
            EventKind::ToolResult(ToolResultEvent {
                name: n,
                success,
                output,
                ..
            }) if n == name => Some((*success, output.clone())),
            _ => None,
        })
        .unwrap_or_else(|| panic!("no {name} result in {events:?}"))
}

fn write_memory(h: &Harness, text: &str) {
    std::fs::write(h.workspace.join("MEMORY.md"), text).unwrap();
}

#[tokio::test]
async fn save_then_search_then_get_through_the_model() {
    let fake = FakeLlama::start().await;
    let mut h = start(&fake, with_embeddings(&fake));
    fake.push_replies([
        Reply::tool_calls(&[(
            "memory_save",
            r#"{"text": "The user's sister Ana lives in Porto.", "long_term": true}"#,
        )]),
        Reply::tool_calls(&[(
            "memory_search",
            r#"{"query": "where does Ana live", "max_results": 3}"#,
        )]),
        Reply::tool_calls(&[(
            "memory_get",
            r#"{"path": "MEMORY.md", "from": 1, "lines": 400}"#,
        )]),
        Reply::text("Ana lives in Porto."),
    ]);
    h.send("m", "remember Ana lives in Porto, then check");
    let events = h.turn("m").await;
    assert_eq!(final_text(&events).as_deref(), Some("Ana lives in Porto."));

    let (ok, saved) = tool_output(&events, "memory_save");
    assert!(ok && saved == "saved to MEMORY.md", "{saved}");
    let memory_md = std::fs::read_to_string(h.workspace.join("MEMORY.md")).unwrap();
    assert!(memory_md.ends_with("\nThe user's sister Ana lives in Porto.\n"));

    let (ok, found) = tool_output(&events, "memory_search");
    assert!(ok, "{found}");
    let found: Value = serde_json::from_str(&found).unwrap();
    assert_eq!(
        found["fallback"],
        Value::Null,
        "hybrid with the fake's vectors"
    );
    // The saved fact, found through a fresh index (the save changed the
    // file; the search re-indexed it first). The daily log of this very
    // message may rank too.
    let saved_hit = found["hits"]
        .as_array()
        .unwrap()
        .iter()
        .find(|h| h["path"] == "MEMORY.md")
        .expect("MEMORY.md among the hits");
    assert!(
        saved_hit["snippet"]
            .as_str()
            .unwrap()
            .contains("sister Ana lives in Porto")
    );
    let hits = events
        .iter()
        .find_map(|e| match e {
            EventKind::MemoryHits(MemoryHits { query, hits }) => {
                Some((query.clone(), hits.clone()))
            }
            _ => None,
        })
        .expect("memory_hits for the TUI");
    assert_eq!(hits.0, "where does Ana live");
    assert!(hits.1.iter().any(|h| h.path == "MEMORY.md"), "{:?}", hits.1);

    let (ok, read) = tool_output(&events, "memory_get");
    assert!(
        ok && read.starts_with("MEMORY.md (lines 1-") && read.contains("Porto"),
        "{read}"
    );
}

#[tokio::test]
async fn memory_get_refuses_other_files_and_search_without_embeddings_says_fts() {
    let fake = FakeLlama::start().await;
    let mut h = start(&fake, |_| {});
    write_memory(&h, "# Memory\n\nFavourite colour: teal.\n");
    fake.push_replies([
        Reply::tool_calls(&[("memory_get", r#"{"path": "SOUL.md"}"#)]),
        Reply::tool_calls(&[("memory_search", r#"{"query": "favourite colour"}"#)]),
        Reply::text("teal"),
    ]);
    h.send("m", "colour?");
    let events = h.turn("m").await;
    let (ok, refused) = tool_output(&events, "memory_get");
    assert!(!ok && refused.contains("not a memory file"), "{refused}");
    let (ok, found) = tool_output(&events, "memory_search");
    assert!(ok);
    let found: Value = serde_json::from_str(&found).unwrap();
    assert_eq!(found["fallback"], "fts");
    let hit = found["hits"]
        .as_array()
        .unwrap()
        .iter()
        .find(|h| h["path"] == "MEMORY.md")
        .expect("MEMORY.md among the hits");
    assert_eq!(
        (hit["start_line"].as_u64(), hit["end_line"].as_u64()),
        (Some(1), Some(3))
    );
}

#[tokio::test]
async fn slash_memory_answers_with_memory_hits() {
    let fake = FakeLlama::start().await;
    let mut h = start(&fake, with_embeddings(&fake));
    write_memory(&h, "# Memory\n\nDentist appointment: March 3rd.\n");
    assert!(h.agent.submit(Op::Command {
        session: "tui-1".into(),
        command: Command::MemorySearch {
            query: "dentist".into()
        },
    }));
    let (query, hits) = loop {
        let event = h.next().await;
        if let EventKind::MemoryHits(MemoryHits { query, hits }) = event.kind {
            assert_eq!(event.session, "tui-1");
            break (query, hits);
        }
    };
    assert_eq!(query, "dentist");
    assert_eq!(hits.len(), 1);
    assert_eq!(
        (hits[0].path.as_str(), hits[0].start_line),
        ("MEMORY.md", 1)
    );
}

#[tokio::test]
async fn the_watcher_re_indexes_a_changed_file() {
    let ws = Workspace::with(&[("MEMORY.md", "# Memory\n")]);
    let memory = ws.memory_with(None, MemoryConfig::default());
    memory.sync(None).await.unwrap();
    let _watcher = egirl::memory::watch::spawn(memory.clone()).unwrap();
    ws.write("memory/2025-04-01.md", "Watched: the parcel arrived.\n");
    // Counts do not sync by themselves: only the watcher can add the file.
    let mut files = 0;
    for _ in 0..200 {
        files = memory.counts().await.unwrap().0;
        if files == 2 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(files, 2, "the watcher indexed the new log");
}
