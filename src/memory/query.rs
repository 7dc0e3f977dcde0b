//! Answering a search: the index brought up to date (or checked), the
//! query embedded, both sides asked, the vectors loaded while searches keep
//! coming and dropped when they stop.

use std::sync::atomic::Ordering;
use std::sync::{Arc, Weak};
use std::time::Instant;

use anyhow::{Context, Result};
use chrono::Local;

use super::vectors::LoadedVectors;
use super::{
    IDLE_DROP, Loaded, Memory, SearchResult, Synced, blocking, embed, index, lock, search, snippet,
    store, vectors,
};
use crate::protocol::MemoryHit;
use search::SearchOptions;

/// Full-text candidates (chunk id, BM25) and, when vectors take part,
/// vector candidates (chunk id, cosine).
type Candidates = (Vec<(i64, f64)>, Option<Vec<(i64, f32)>>);

/// How long a search waits for a sync already under way before it
/// searches the index as it is.
const SEARCH_WAITS_FOR_SYNC: std::time::Duration = std::time::Duration::from_secs(2);

/// Whether `MEMORY.md` or `memory/` is a link: the file it leads to may
/// change where no watcher looks, so the files are stat'ed.
fn links_in_the_way(workspace: &std::path::Path) -> bool {
    ["MEMORY.md", "memory"].iter().any(|name| {
        std::fs::symlink_metadata(workspace.join(name)).is_ok_and(|m| m.file_type().is_symlink())
    })
}

/// Lines of one chunk scored by vector when no query term matched it.
const LINES_EMBEDDED_PER_HIT: usize = 48;

impl Memory {
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
        let opts = SearchOptions {
            max_results: max_results.unwrap_or(self.settings.max_results).max(1),
            min_score: min_score.unwrap_or(self.settings.min_score),
        };
        // When the last sync was complete, both sides search the index as
        // it is while the files are checked (a stat of each): full text at
        // once, vectors as soon as the query is embedded. In the rare case
        // the files changed, the search runs again after a sync. Without a
        // complete sync, the sync comes first.
        let pool = search::pool_size(&self.settings, opts);
        let seen = lock(&self.synced).clone();
        let speculate = seen.is_some();
        let (unchanged, early_text, (query_vector, embed_notice, early_vectors)) = tokio::join!(
            self.unchanged_since(seen),
            async {
                if speculate {
                    Some(self.text_candidates(query, pool).await)
                } else {
                    None
                }
            },
            async {
                let (vector, notice) = self.query_vector(query).await;
                let early = if speculate {
                    Some(self.vector_candidates(vector.clone(), pool).await)
                } else {
                    None
                };
                (vector, notice, early)
            }
        );
        let mut notices: Vec<String> = embed_notice.into_iter().collect();
        if !unchanged {
            self.sync_before_search(&mut notices).await;
        }
        // An error here comes back from `ranked`, which asks again.
        let early = early_text
            .zip(early_vectors)
            .filter(|_| unchanged)
            .and_then(|(text, vectors)| text.ok().zip(vectors.ok()));
        let (hits, hybrid) = match self.ranked(query, query_vector.clone(), opts, early).await {
            Err(e) if store::is_corrupt(&e) => {
                notices.push(self.rebuild_notice(&e)?);
                self.sync(None).await?;
                self.ranked(query, query_vector, opts, None).await?
            }
            other => other?,
        };
        Ok(SearchResult {
            query: query.to_string(),
            fallback: (!hybrid).then_some("fts"),
            hits,
            notices,
        })
    }

    async fn text_candidates(
        self: &Arc<Self>,
        query: &str,
        pool: usize,
    ) -> Result<Vec<(i64, f64)>> {
        let this = self.clone();
        let query = query.to_string();
        blocking(move || this.read(|conn| search::text_candidates(conn, &query, pool))).await
    }

    /// Whether the files look exactly as `seen` (the last complete sync's
    /// stamps): a running watcher's word when it was told of no change
    /// since, else a stat of each; no database. False without `seen`.
    async fn unchanged_since(&self, seen: Option<Arc<Synced>>) -> bool {
        let Some(seen) = seen else {
            return false;
        };
        // Read before the files are looked at (see `Synced::seen_again`).
        let changes = self.changes.count();
        if store::file_id(&self.db) != seen.index {
            return false;
        }
        if self
            .changes
            .unchanged_since(seen.changes.load(Ordering::SeqCst))
            && !links_in_the_way(&self.workspace)
        {
            return true;
        }
        let workspace = self.workspace.clone();
        blocking(move || {
            let unchanged = index::stamps(&workspace) == seen.files;
            if unchanged {
                seen.seen_again(changes);
            }
            Ok(unchanged)
        })
        .await
        .unwrap_or(false)
    }

    /// A sync whose trouble becomes notices: a search still answers from
    /// what the index holds when it cannot be updated (locked, read-only).
    async fn sync_before_search(self: &Arc<Self>, notices: &mut Vec<String>) {
        // Another sync (start-up, the watcher) may be embedding thousands
        // of chunks: wait a moment for it, then search what is there.
        let busy = self.sync_lock.try_lock().is_err();
        if busy
            && tokio::time::timeout(SEARCH_WAITS_FOR_SYNC, self.sync_lock.lock())
                .await
                .is_err()
        {
            notices.push(
                "the memory index is still being updated; results may miss recent changes".into(),
            );
            return;
        }
        match self.sync(None).await {
            Ok(report) => {
                notices.extend(report.notices);
                let told = notices
                    .iter()
                    .any(|n| n.starts_with("embeddings unavailable"));
                if let Some(e) = report.embed_error.filter(|_| !told) {
                    notices.push(format!(
                        "embeddings unavailable ({e}); full-text search only"
                    ));
                }
            }
            Err(e) => tracing::warn!("memory sync before search failed: {e:#}"),
        }
    }

    /// The query's vector, or why there is none to say to the user.
    async fn query_vector(&self, query: &str) -> (Option<Vec<f32>>, Option<String>) {
        let Some(embedder) = &self.embedder else {
            return (None, None);
        };
        if self.embedder_resting() || query.trim().is_empty() {
            return (None, None);
        }
        match embedder.embed(&[query]).await {
            Ok(mut v) => (v.pop(), None),
            Err(e) => {
                self.embedder_failed(&e);
                let notice = format!("embeddings unavailable ({e:#}); full-text search only");
                (None, Some(notice))
            }
        }
    }

    /// The vector side's candidates; None when vectors cannot take part
    /// (no query vector, none stored, or of another size).
    async fn vector_candidates(
        self: &Arc<Self>,
        query_vector: Option<Vec<f32>>,
        pool: usize,
    ) -> Result<Option<Vec<(i64, f32)>>> {
        let Some(query_vector) = query_vector else {
            return Ok(None);
        };
        let this = self.clone();
        blocking(move || {
            this.read(|conn| {
                let vectors = this.vectors(conn)?;
                if vectors.is_empty() || vectors.dims != query_vector.len() {
                    return Ok(None);
                }
                // The candidates' exact scores come from the index.
                vectors.top_k(conn, &query_vector, pool).map(Some)
            })
        })
        .await
    }

    /// The hits, and whether vectors took part. `early`: both sides'
    /// candidates when already asked.
    async fn ranked(
        self: &Arc<Self>,
        query: &str,
        query_vector: Option<Vec<f32>>,
        opts: SearchOptions,
        early: Option<Candidates>,
    ) -> Result<(Vec<MemoryHit>, bool)> {
        let this = self.clone();
        let query = query.to_string();
        let pool = search::pool_size(&self.settings, opts);
        let line_query = query_vector.clone();
        let (ranked, hybrid) = blocking(move || {
            this.read(|conn| {
                let (text, vector_hits) = match early {
                    Some(early) => early,
                    None => {
                        let text = search::text_candidates(conn, &query, pool)?;
                        let vectors = match &query_vector {
                            Some(_) => Some(this.vectors(conn)?),
                            None => None,
                        };
                        let vector_hits = vectors
                            .as_ref()
                            .zip(query_vector.as_ref())
                            .filter(|(v, q)| !v.is_empty() && v.dims == q.len())
                            .map(|(v, q)| v.top_k(conn, q, pool))
                            .transpose()?;
                        (text, vector_hits)
                    }
                };
                let hybrid = vector_hits.is_some();
                let hits = search::rank(
                    conn,
                    &query,
                    text,
                    vector_hits,
                    &this.settings,
                    opts,
                    Local::now().date_naive(),
                )?;
                Ok((hits, hybrid))
            })
        })
        .await?;
        self.schedule_idle_drop();
        let hits = match line_query {
            Some(q) => self.lines_by_vector(&q, ranked).await,
            None => ranked.into_iter().map(|r| r.hit).collect(),
        };
        Ok((hits, hybrid))
    }

    /// Hits found by meaning alone show the line of their chunk nearest
    /// the query's vector: the lines of those chunks too long to show
    /// whole are embedded (one request per [`embed::BATCH_SIZE`] lines). If
    /// that fails they keep their first lines.
    async fn lines_by_vector(
        &self,
        query_vector: &[f32],
        ranked: Vec<search::Ranked>,
    ) -> Vec<MemoryHit> {
        let Some(embedder) = self.embedder.as_ref().filter(|_| !self.embedder_resting()) else {
            return ranked.into_iter().map(|r| r.hit).collect();
        };
        // (hit index, line index in its chunk, line text)
        let mut lines: Vec<(usize, usize, &str)> = Vec::new();
        for (i, r) in ranked.iter().enumerate() {
            // A chunk that fits whole in a snippet is shown whole already.
            if let Some(text) = r
                .unmatched_text
                .as_ref()
                .filter(|t| t.chars().count() > snippet::SNIPPET_CHARS)
            {
                let content = snippet::content_lines(text);
                lines.extend(
                    content
                        .into_iter()
                        .take(LINES_EMBEDDED_PER_HIT)
                        .map(|(n, l)| (i, n, l)),
                );
            }
        }
        if lines.is_empty() {
            return ranked.into_iter().map(|r| r.hit).collect();
        }
        let mut line_vectors = Vec::with_capacity(lines.len());
        for batch in lines.chunks(embed::BATCH_SIZE) {
            let texts: Vec<&str> = batch.iter().map(|(_, _, l)| *l).collect();
            match embedder.embed(&texts).await {
                Ok(v) => line_vectors.extend(v),
                Err(e) => {
                    tracing::debug!("embedding a hit's lines failed: {e:#}");
                    return ranked.into_iter().map(|r| r.hit).collect();
                }
            }
        }
        // The best line of each hit: (cosine, line index).
        let mut best: Vec<Option<(f32, usize)>> = vec![None; ranked.len()];
        for ((hit, line, _), vector) in lines.iter().zip(&line_vectors) {
            let cosine = vectors::dot(vector, query_vector);
            if best[*hit].is_none_or(|(b, _)| cosine > b) {
                best[*hit] = Some((cosine, *line));
            }
        }
        ranked
            .into_iter()
            .zip(best)
            .map(|(r, best)| {
                let mut hit = r.hit;
                if let (Some(text), Some((_, line))) = (&r.unmatched_text, best) {
                    snippet::around_line(text, hit.start_line, hit.end_line, line).apply(&mut hit);
                }
                hit
            })
            .collect()
    }

    /// Runs `f` on an idle search connection, or a new one; connections
    /// to an index file that was since replaced are closed.
    fn read<T>(&self, f: impl FnOnce(&rusqlite::Connection) -> Result<T>) -> Result<T> {
        let current = store::file_id(&self.db);
        let idle = {
            let mut readers = lock(&self.readers);
            readers.retain(|(_, id)| Some(*id) == current);
            readers.pop()
        };
        let (conn, id) = match idle {
            Some(reader) => reader,
            None => {
                let conn = store::open(&self.db)?;
                (conn, store::file_id(&self.db).unwrap_or(0))
            }
        };
        let result = f(&conn);
        // Kept for the next search unless it failed or the platform cannot
        // tell a replaced file.
        if result.is_ok() && current == Some(id) {
            let mut readers = lock(&self.readers);
            if readers.len() < 2 {
                readers.push((conn, id));
            }
        }
        result
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
                    // Its cache and mapped pages go too.
                    lock(&memory.readers).clear();
                    memory.dropper_running.store(false, Ordering::SeqCst);
                    return;
                }
            }
        });
    }
}
