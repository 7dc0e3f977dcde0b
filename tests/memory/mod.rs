//! Memory: the index against the fake llama-server's `/v1/embeddings`
//! (incremental sync, the embedding cache, model changes, recovery),
//! hybrid search, the tools and `/memory` through the agent, and the CLI.

mod agent;
mod cli;
mod index;
mod search;
mod snippets;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use egirl::config::MemoryConfig;
use egirl::memory::{Embedder, Memory};

use crate::support::fake_llama::FakeLlama;

/// A workspace with `files` (relative path, text) written into it.
pub struct Workspace {
    pub dir: tempfile::TempDir,
}

impl Workspace {
    pub fn with(files: &[(&str, &str)]) -> Self {
        let dir = tempfile::tempdir().expect("temp dir");
        std::fs::create_dir_all(dir.path().join("memory")).expect("memory dir");
        let ws = Self { dir };
        for (path, text) in files {
            ws.write(path, text);
        }
        ws
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    pub fn file(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    pub fn write(&self, rel: &str, text: &str) {
        let path = self.file(rel);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("dirs");
        std::fs::write(path, text).expect("write");
    }

    /// Memory embedding with the fake under `model`.
    pub fn memory(&self, fake: &FakeLlama, model: &str) -> Arc<Memory> {
        self.memory_with(
            Some(Embedder::local(&fake.url(), model)),
            MemoryConfig::default(),
        )
    }

    pub fn memory_with(&self, embedder: Option<Embedder>, settings: MemoryConfig) -> Arc<Memory> {
        Arc::new(Memory::with_embedder(self.path(), settings, embedder))
    }
}

/// A paragraph of distinct words, so the fake's vectors tell files apart.
pub fn paragraph(topic: &str, n: usize) -> String {
    (0..n)
        .map(|i| format!("{topic} note {i} about {topic}{i} and more {topic} details."))
        .collect::<Vec<_>>()
        .join(" ")
}

/// An address nothing listens on: an embeddings server that is down.
pub async fn dead_endpoint() -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    drop(listener);
    format!("http://{addr}")
}
