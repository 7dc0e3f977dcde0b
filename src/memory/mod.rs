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
mod search;
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
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use chrono::Local;
use serde::Serialize;

use crate::config::{Config, MemoryConfig};
use crate::protocol::{EventBus, EventKind, MemoryHit, Origin};
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
        }
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
        let (db, workspace) = (self.db.clone(), self.workspace.clone());
        let mut plan = blocking(move || {
            let mut conn = store::open(&db)?;
            index::plan(&mut conn, &workspace, embedder_id.as_deref())
        })
        .await?;
        let mut report = SyncReport {
            files: plan.files_seen,
            indexed: plan.changed.len(),
            removed: plan.removed.len(),
            ..SyncReport::default()
        };
        if plan.is_noop() {
            return Ok(report);
        }
        if let Some(p) = progress {
            p(Progress::Planned {
                files: plan.files_seen,
                changed: plan.changed.len(),
                to_embed: plan.to_embed.len(),
            });
        }
        if let Some(embedder) = &self.embedder
            && !plan.to_embed.is_empty()
            && !self.embedder_resting()
        {
            let to_embed = std::mem::take(&mut plan.to_embed);
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
            // Non-empty: `apply` re-checks which chunks still lack vectors.
            plan.to_embed = to_embed;
        }
        let vectors_wanted = self.embedder.is_some();
        let db = self.db.clone();
        blocking(move || index::apply(&mut store::open(&db)?, &plan, vectors_wanted)).await?;
        Ok(report)
    }

    /// Searches with the configured `max_results` and `min_score` unless
    /// given. Brings the index up to date first (cheap when nothing
    /// changed). Never fails for want of embeddings: it falls back to
    /// full-text search and says so (`fallback: "fts"`).
    pub async fn search(
        self: &Arc<Self>,
        query: &str,
        max_results: Option<usize>,
        min_score: Option<f64>,
    ) -> Result<SearchResult> {
        let mut notices = Vec::new();
        match self.sync(None).await {
            Ok(report) => {
                notices.extend(report.notices);
                if let Some(e) = report.embed_error {
                    notices.push(format!(
                        "embeddings unavailable ({e}); full-text search only"
                    ));
                }
            }
            // A locked or unwritable index still answers from what it holds.
            Err(e) => tracing::warn!("memory sync before search failed: {e:#}"),
        }
        let opts = SearchOptions {
            max_results: max_results.unwrap_or(self.settings.max_results).max(1),
            min_score: min_score.unwrap_or(self.settings.min_score),
        };
        let query_vector = self.query_vector(query, &mut notices).await;
        let hits = match self.ranked(query, query_vector.clone(), opts).await {
            Err(e) if store::is_corrupt(&e) => {
                notices.push(self.rebuild_notice(&e)?);
                self.sync(None).await?;
                self.ranked(query, query_vector, opts).await?
            }
            other => other?,
        };
        let (hits, hybrid) = hits;
        Ok(SearchResult {
            query: query.to_string(),
            fallback: (!hybrid).then_some("fts"),
            hits,
            notices,
        })
    }

    async fn query_vector(&self, query: &str, notices: &mut Vec<String>) -> Option<Vec<f32>> {
        let embedder = self.embedder.as_ref()?;
        if self.embedder_resting() || query.trim().is_empty() {
            return None;
        }
        match embedder.embed(&[query]).await {
            Ok(mut v) => v.pop(),
            Err(e) => {
                self.embedder_failed(&e);
                notices.push(format!(
                    "embeddings unavailable ({e:#}); full-text search only"
                ));
                None
            }
        }
    }

    /// The hits, and whether vectors took part.
    async fn ranked(
        self: &Arc<Self>,
        query: &str,
        query_vector: Option<Vec<f32>>,
        opts: SearchOptions,
    ) -> Result<(Vec<MemoryHit>, bool)> {
        let this = self.clone();
        let query = query.to_string();
        let hits = blocking(move || {
            let conn = store::open(&this.db)?;
            let vectors = match &query_vector {
                Some(_) => Some(this.vectors(&conn)?),
                None => None,
            };
            let usable = vectors
                .as_ref()
                .zip(query_vector.as_ref())
                .filter(|(v, q)| !v.is_empty() && v.dims == q.len());
            let hits = search::search(
                &conn,
                usable.map(|(v, _)| v.as_ref()),
                &query,
                usable.map(|(_, q)| q.as_slice()),
                &this.settings,
                opts,
                Local::now().date_naive(),
            )?;
            Ok((hits, usable.is_some()))
        })
        .await?;
        self.schedule_idle_drop();
        Ok(hits)
    }

    /// The loaded vectors, read again when the index changed since.
    fn vectors(&self, conn: &rusqlite::Connection) -> Result<Arc<LoadedVectors>> {
        let generation = store::generation(conn)?;
        let mut loaded = lock(&self.loaded);
        if let Some(l) = loaded
            .as_mut()
            .filter(|l| l.vectors.generation == generation)
        {
            l.last_used = Instant::now();
            return Ok(l.vectors.clone());
        }
        let vectors = Arc::new(LoadedVectors::load(conn).context("loading memory vectors")?);
        *loaded = Some(Loaded {
            vectors: vectors.clone(),
            last_used: Instant::now(),
        });
        Ok(vectors)
    }

    /// Whether vectors are held in memory now (they are dropped when idle).
    pub fn vectors_loaded(&self) -> bool {
        lock(&self.loaded).is_some()
    }

    /// Drops the loaded vectors once searches stop for [`IDLE_DROP`].
    fn schedule_idle_drop(self: &Arc<Self>) {
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        if self.dropper_running.swap(true, Ordering::SeqCst) {
            return;
        }
        let weak: Weak<Self> = Arc::downgrade(self);
        runtime.spawn(async move {
            loop {
                tokio::time::sleep(IDLE_DROP / 4).await;
                let Some(memory) = weak.upgrade() else {
                    return;
                };
                let mut loaded = lock(&memory.loaded);
                let idle = loaded
                    .as_ref()
                    .is_none_or(|l| l.last_used.elapsed() >= IDLE_DROP);
                if idle {
                    if let Some(l) = loaded.take() {
                        tracing::debug!(bytes = l.vectors.bytes(), "dropping idle memory vectors");
                    }
                    memory.dropper_running.store(false, Ordering::SeqCst);
                    return;
                }
            }
        });
    }

    /// Emits `memory_hits` for a search on the session's behalf.
    pub fn announce(&self, session: &str, origin: &Origin, result: &SearchResult) {
        if let Some(bus) = &self.bus {
            bus.emit(
                session,
                origin,
                EventKind::MemoryHits {
                    query: result.query.clone(),
                    hits: result.hits.clone(),
                },
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
