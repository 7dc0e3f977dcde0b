//! Memory. The markdown files are the source of truth: `MEMORY.md`
//! (curated, in the prompt) and `memory/YYYY-MM-DD.md` (the daily log,
//! append only). `.egirl/index.sqlite` indexes them for hybrid search and
//! can always be rebuilt from them.
//!
//! [`Memory`] is the one facade the agent, the tools and the CLI use: it
//! syncs the index (only files that changed; only chunk texts without a
//! vector are embedded), searches it, and keeps the vectors loaded only
//! while searches keep coming (an idle `egirl serve` holds none).

mod chunk;
pub mod daily;
mod embed;
pub mod files;
mod index;
mod quantized;
mod query;
mod search;
mod snippet;
mod store;
mod vectors;
pub mod watch;

pub use chunk::{Chunk, chunk_markdown, chunk_with};
pub use embed::Embedder;
pub use index::memory_files;
pub use search::{SearchOptions, fts_query};
pub use store::db_path;
pub use vectors::{LoadedVectors, dot, top_k_scan};

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use serde::Serialize;

use crate::bus::EventBus;
use crate::config::{Config, MemoryConfig};
use crate::protocol::{EventKind, MemoryHit, MemoryHits, Origin};
use crate::providers::remote::RemoteProviders;

/// Loaded vectors are dropped after this long without a search.
const IDLE_DROP: Duration = Duration::from_secs(5 * 60);
/// After a failed embeddings call, search full-text only for this long
/// rather than wait on a dead server at every search.
const EMBED_RETRY_AFTER: Duration = Duration::from_secs(60);

/// What `egirl memory search --json` prints and the tool returns.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SearchResult {
    pub query: String,
    /// `"fts"` when vectors could not be used (no embedder, or it is down).
    pub fallback: Option<&'static str>,
    pub hits: Vec<MemoryHit>,
    /// Things the user should know (an index rebuilt, an embedder down).
    #[serde(skip)]
    pub notices: Vec<String>,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct SyncReport {
    pub files: usize,
    pub indexed: usize,
    pub removed: usize,
    /// Chunk texts sent to the embedder.
    pub embedded: usize,
    /// Why vectors are missing, when the embedder failed.
    pub embed_error: Option<String>,
    pub notices: Vec<String>,
}

/// Progress of a sync, for `egirl memory reindex`.
#[derive(Clone, Copy, Debug)]
pub enum Progress {
    Planned {
        files: usize,
        changed: usize,
        to_embed: usize,
    },
    Embedded {
        done: usize,
        total: usize,
    },
}

pub type ProgressFn<'a> = &'a (dyn Fn(Progress) + Send + Sync);

struct Loaded {
    vectors: Arc<LoadedVectors>,
    last_used: Instant,
}

/// What a complete sync saw: the files, and the index file it wrote (an
/// index deleted or replaced since needs a sync too).
struct Synced {
    files: Vec<index::FileStamp>,
    index: Option<u64>,
    /// The watcher's count of changes (read before the files were seen)
    /// when the files last looked exactly like `files`: while it has not
    /// moved, a watcher vouches that they still do.
    changes: AtomicU64,
}

impl Synced {
    /// The files were seen as `files` again, with `changes` read before.
    fn seen_again(&self, changes: u64) {
        self.changes.fetch_max(changes, Ordering::SeqCst);
    }
}

pub struct Memory {
    workspace: PathBuf,
    db: PathBuf,
    settings: MemoryConfig,
    embedder: Option<Embedder>,
    bus: Option<EventBus>,
    /// One sync at a time in this process (other processes: SQLite locks).
    sync_lock: tokio::sync::Mutex<()>,
    loaded: Mutex<Option<Loaded>>,
    dropper_running: AtomicBool,
    embed_down_until: Mutex<Option<Instant>>,
    /// The files as the last complete sync saw them (every chunk indexed,
    /// every vector stored): while they look the same, a search skips the
    /// sync. None: the next search syncs.
    synced: Mutex<Option<Arc<Synced>>>,
    /// Idle connections searches read through (two sides of a search read
    /// at once), with the identity of the file each opened: a rebuilt or
    /// replaced index is a new file, and theirs are closed.
    readers: Mutex<Vec<(rusqlite::Connection, u64)>>,
    /// Secret values in a memory file are indexed (and embedded) redacted.
    redactor: Arc<crate::redact::Redactor>,
    /// What a running watcher was told: while it vouches that nothing
    /// changed, a search skips the stat of every file.
    changes: Arc<watch::Changes>,
}

impl Memory {
    /// With the embedder the config names (`[local.embeddings]`, else a
    /// remote provider with an embeddings model, else none).
    pub fn new(workspace: &Path, config: &Config, remote: &RemoteProviders) -> Self {
        let embedder = Embedder::from_config(&config.local, remote);
        Self::with_embedder(workspace, config.memory.clone(), embedder)
    }

    pub fn with_embedder(
        workspace: &Path,
        settings: MemoryConfig,
        embedder: Option<Embedder>,
    ) -> Self {
        Self {
            workspace: workspace.to_path_buf(),
            db: store::db_path(workspace),
            settings,
            embedder,
            bus: None,
            sync_lock: tokio::sync::Mutex::new(()),
            loaded: Mutex::new(None),
            dropper_running: AtomicBool::new(false),
            embed_down_until: Mutex::new(None),
            synced: Mutex::new(None),
            readers: Mutex::new(Vec::new()),
            redactor: Arc::default(),
            changes: Arc::default(),
        }
    }

    /// Index and embed memory files with secret values redacted (a
    /// command may have written one into a note).
    pub fn with_redactor(mut self, redactor: Arc<crate::redact::Redactor>) -> Self {
        self.redactor = redactor;
        self
    }

    /// Searches announced with [`Memory::announce`] go out on this bus.
    pub fn with_events(mut self, bus: EventBus) -> Self {
        self.bus = Some(bus);
        self
    }

    pub fn workspace(&self) -> &Path {
        &self.workspace
    }

    pub fn settings(&self) -> &MemoryConfig {
        &self.settings
    }

    pub fn has_embedder(&self) -> bool {
        self.embedder.is_some()
    }

    /// Brings the index up to date with the files. A corrupt index is
    /// deleted and rebuilt (with a notice); nothing else is ever deleted.
    pub async fn sync(self: &Arc<Self>, progress: Option<ProgressFn<'_>>) -> Result<SyncReport> {
        let _one_at_a_time = self.sync_lock.lock().await;
        match self.sync_once(progress).await {
            Err(e) if store::is_corrupt(&e) => {
                let notice = self.rebuild_notice(&e)?;
                let mut report = self.sync_once(progress).await?;
                report.notices.insert(0, notice);
                Ok(report)
            }
            other => other,
        }
    }

    fn rebuild_notice(&self, e: &anyhow::Error) -> Result<String> {
        tracing::warn!("memory index corrupt ({e:#}); rebuilding it from the markdown files");
        *lock(&self.loaded) = None;
        *lock(&self.synced) = None;
        lock(&self.readers).clear();
        store::remove(&self.db)?;
        Ok(format!(
            "the memory index was damaged ({}); rebuilt it from the markdown files",
            e.root_cause()
        ))
    }

    async fn sync_once(self: &Arc<Self>, progress: Option<ProgressFn<'_>>) -> Result<SyncReport> {
        // While the embedder rests after a failure, plan as if there were
        // none: no scan for chunks without vectors at every search.
        let embedder_id = match &self.embedder {
            Some(e) if !self.embedder_resting() => Some(e.id()),
            _ => None,
        };
        // Before the files are listed: a change from here on leaves this
        // sync's record stale for a watcher.
        let changes = self.changes.count();
        let (db, workspace) = (self.db.clone(), self.workspace.clone());
        let redactor = self.redactor.clone();
        let resting = self.embedder.is_some() && embedder_id.is_none();
        let mut plan = blocking(move || {
            let mut conn = store::open(&db)?;
            index::plan(&mut conn, &workspace, embedder_id.as_deref(), &redactor)
        })
        .await?;
        let stamps = std::mem::take(&mut plan.stats);
        *lock(&self.synced) = None;
        let mut report = SyncReport {
            files: plan.files_seen,
            indexed: plan.changed.len(),
            removed: plan.removed.len(),
            ..SyncReport::default()
        };
        if plan.is_noop() {
            if !resting {
                self.record_synced(stamps, changes);
            }
            return Ok(report);
        }
        if let Some(p) = progress {
            p(Progress::Planned {
                files: plan.files_seen,
                changed: plan.changed.len(),
                to_embed: plan.to_embed.len(),
            });
        }
        // Chunks and full text first: the index is searchable (full text)
        // while a big first embedding runs.
        let vectors_wanted = self.embedder.is_some();
        let to_embed = plan.to_embed.clone();
        let db = self.db.clone();
        blocking(move || index::apply(&mut store::open(&db)?, &plan, vectors_wanted)).await?;
        if let Some(embedder) = &self.embedder
            && !to_embed.is_empty()
            && !self.embedder_resting()
        {
            let total = to_embed.len();
            for batch in to_embed.chunks(embed::BATCH_SIZE) {
                let texts: Vec<&str> = batch.iter().map(|(_, t)| t.as_str()).collect();
                match embedder.embed(&texts).await {
                    Ok(vectors) => {
                        let rows: Vec<(String, Vec<f32>)> =
                            batch.iter().map(|(h, _)| h.clone()).zip(vectors).collect();
                        let db = self.db.clone();
                        blocking(move || index::store_vectors(&mut store::open(&db)?, &rows))
                            .await?;
                        report.embedded += batch.len();
                        if let Some(p) = progress {
                            p(Progress::Embedded {
                                done: report.embedded,
                                total,
                            });
                        }
                    }
                    Err(e) => {
                        self.embedder_failed(&e);
                        report.embed_error = Some(format!("{e:#}"));
                        break;
                    }
                }
            }
            let db = self.db.clone();
            blocking(move || index::finish_vectors(&mut store::open(&db)?)).await?;
        }
        let complete = !resting && report.embed_error.is_none();
        if complete {
            self.record_synced(stamps, changes);
        }
        Ok(report)
    }

    fn record_synced(&self, files: Vec<index::FileStamp>, changes: u64) {
        let index = store::file_id(&self.db);
        *lock(&self.synced) = Some(Arc::new(Synced {
            files,
            index,
            changes: AtomicU64::new(changes),
        }));
    }

    /// Emits `memory_hits` for a search on the session's behalf.
    pub fn announce(&self, session: &str, origin: &Origin, result: &SearchResult) {
        if let Some(bus) = &self.bus {
            bus.emit(
                session,
                origin,
                EventKind::MemoryHits(MemoryHits {
                    query: result.query.clone(),
                    hits: result.hits.clone(),
                }),
            );
        }
    }

    /// Files, chunks and stored vectors in the index.
    pub async fn counts(&self) -> Result<(u64, u64, u64)> {
        let db = self.db.clone();
        blocking(move || index::counts(&store::open(&db)?)).await
    }

    fn embedder_resting(&self) -> bool {
        lock(&self.embed_down_until).is_some_and(|until| Instant::now() < until)
    }

    fn embedder_failed(&self, e: &anyhow::Error) {
        tracing::warn!("memory embeddings failed: {e:#}");
        *lock(&self.embed_down_until) = Some(Instant::now() + EMBED_RETRY_AFTER);
    }
}

async fn blocking<T: Send + 'static>(f: impl FnOnce() -> Result<T> + Send + 'static) -> Result<T> {
    tokio::task::spawn_blocking(f)
        .await
        .context("memory index task failed")?
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // The guarded values stay consistent even if a holder panicked.
    m.lock().unwrap_or_else(|e| e.into_inner())
}
