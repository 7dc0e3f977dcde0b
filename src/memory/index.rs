//! Incremental indexing: which memory files changed (mtime and size, then
//! content hash), their chunks, and which chunk texts still need a vector.
//!
//! A sync is three steps so that no SQLite transaction is held across a
//! network call: [`plan`] reads the disk and the index, the caller embeds
//! [`Plan::to_embed`] in batches and stores each with [`store_vectors`],
//! then [`apply`] writes the chunks in one transaction. The markdown is
//! only ever read.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

use anyhow::{Context, Result};
use rusqlite::{Connection, Transaction, TransactionBehavior, params};

use super::chunk::{Chunk, chunk_markdown};
use super::store;
use crate::redact::Redactor;

/// `MEMORY.md` and every `.md` under `memory/`, as (relative path with
/// `/`, absolute path), sorted.
pub fn memory_files(workspace: &Path) -> Vec<(String, PathBuf)> {
    let mut out = Vec::new();
    // Neither through a link out of the workspace (another agent's
    // memory): `memory_search` would show what `memory_get` refuses.
    if let Some((curated, meta)) = crate::workspace::confined(workspace, "MEMORY.md")
        && meta.is_file()
    {
        out.push(("MEMORY.md".to_string(), curated));
    }
    let dir = workspace.join("memory");
    let inside = |p: &Path| match (p.canonicalize(), workspace.canonicalize()) {
        (Ok(real), Ok(root)) => real.starts_with(root),
        _ => false,
    };
    if !std::fs::symlink_metadata(&dir).is_ok_and(|m| m.is_symlink()) || inside(&dir) {
        collect_markdown(workspace, &dir, &mut out);
    }
    out.sort();
    out
}

fn collect_markdown(workspace: &Path, dir: &Path, out: &mut Vec<(String, PathBuf)>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        if kind.is_dir() {
            collect_markdown(workspace, &path, out);
        } else if kind.is_file()
            && path.extension().is_some_and(|e| e == "md")
            && let Some(rel) = relative(workspace, &path)
        {
            out.push((rel, path));
        }
    }
}

fn relative(workspace: &Path, path: &Path) -> Option<String> {
    let rel = path.strip_prefix(workspace).ok()?;
    let parts: Vec<&str> = rel.iter().map(|p| p.to_str()).collect::<Option<_>>()?;
    Some(parts.join("/"))
}

/// A file whose text changed: its new chunks and their content hashes.
#[derive(Debug)]
pub struct FileUpdate {
    pub path: String,
    pub mtime_ns: i64,
    pub size: i64,
    pub hash: String,
    pub chunks: Vec<(Chunk, String)>,
}

#[derive(Debug, Default)]
pub struct Plan {
    pub changed: Vec<FileUpdate>,
    /// Same content, new mtime (touched or rewritten identically).
    pub touched: Vec<(String, i64, i64)>,
    pub removed: Vec<String>,
    /// Chunk texts (by content hash) that have no vector for the current
    /// model: from changed files, and any left over by an earlier failure.
    pub to_embed: Vec<(String, String)>,
    pub files_seen: usize,
    /// Every memory file as it was seen: path, mtime, size.
    pub stats: Vec<FileStamp>,
}

/// A file's path (relative), mtime (ns) and size: what says it changed.
pub type FileStamp = (String, i64, i64);

/// The memory files with their mtime and size (a file that vanished
/// between listing and stat is left out).
pub fn stat_files(workspace: &Path) -> Vec<(String, PathBuf, i64, i64)> {
    memory_files(workspace)
        .into_iter()
        .filter_map(|(rel, abs)| {
            let meta = std::fs::metadata(&abs).ok()?;
            let mtime_ns = meta
                .modified()
                .ok()
                .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
                .map_or(0, |d| d.as_nanos() as i64);
            Some((rel, abs, mtime_ns, meta.len() as i64))
        })
        .collect()
}

/// The stamps of the memory files now, to compare with a sync's.
pub fn stamps(workspace: &Path) -> Vec<FileStamp> {
    stat_files(workspace)
        .into_iter()
        .map(|(rel, _, mtime_ns, size)| (rel, mtime_ns, size))
        .collect()
}

impl Plan {
    pub fn is_noop(&self) -> bool {
        self.changed.is_empty()
            && self.touched.is_empty()
            && self.removed.is_empty()
            && self.to_embed.is_empty()
    }
}

/// What changed on disk since the last sync, and what needs embedding.
///
/// `embedder` is the current embedder's id: a different one than the
/// index's drops every stored vector first. `None`: vectors are neither
/// wanted nor dropped.
pub fn plan(
    conn: &mut Connection,
    workspace: &Path,
    embedder: Option<&str>,
    redactor: &Redactor,
) -> Result<Plan> {
    let mut missing_vectors = store::get_meta(conn, "missing_vectors")?.is_some_and(|v| v == "1");
    if let Some(id) = embedder
        && store::get_meta(conn, "embed_model")?.as_deref() != Some(id)
    {
        let tx = write(conn)?;
        tx.execute("DELETE FROM embeddings", [])?;
        tx.execute("DELETE FROM meta WHERE key = 'embed_dims'", [])?;
        store::set_meta(&tx, "embed_model", id)?;
        store::set_meta(&tx, "missing_vectors", "1")?;
        store::bump_generation(&tx)?;
        tx.commit()?;
        missing_vectors = true;
    }

    let mut known: HashMap<String, (i64, i64, String)> = HashMap::new();
    {
        let mut stmt = conn.prepare("SELECT path, mtime_ns, size, hash FROM files")?;
        let rows = stmt.query_map([], |r| Ok((r.get(0)?, (r.get(1)?, r.get(2)?, r.get(3)?))))?;
        for row in rows {
            let (path, info): (String, (i64, i64, String)) = row?;
            known.insert(path, info);
        }
    }
    let mut plan = Plan::default();
    let files = stat_files(workspace);
    plan.files_seen = files.len();
    let mut present = HashSet::new();
    for (rel, abs, mtime_ns, size) in files {
        present.insert(rel.clone());
        plan.stats.push((rel.clone(), mtime_ns, size));
        let previous = known.get(&rel);
        if previous.is_some_and(|(m, s, _)| *m == mtime_ns && *s == size) {
            continue;
        }
        let bytes = crate::fsutil::regular_file::read(&abs)
            .with_context(|| format!("cannot read {rel}"))?;
        let hash = store::content_hash(&bytes);
        if previous.is_some_and(|(_, _, h)| *h == hash) {
            plan.touched.push((rel, mtime_ns, size));
            continue;
        }
        let text = String::from_utf8_lossy(&bytes);
        let text = redactor.redact(&text);
        let chunks = chunk_markdown(&text)
            .into_iter()
            .map(|c| {
                let h = store::content_hash(c.text.as_bytes());
                (c, h)
            })
            .collect();
        plan.changed.push(FileUpdate {
            path: rel,
            mtime_ns,
            size,
            hash,
            chunks,
        });
    }
    plan.removed = known.into_keys().filter(|p| !present.contains(p)).collect();
    plan.removed.sort();

    if embedder.is_some() {
        plan.to_embed = unembedded(conn, &plan, missing_vectors)?;
    }
    Ok(plan)
}

/// Distinct chunk texts without a stored vector.
fn unembedded(conn: &Connection, plan: &Plan, whole_index: bool) -> Result<Vec<(String, String)>> {
    let mut seen = HashSet::new();
    let mut out = Vec::new();
    let mut has_vector = conn.prepare_cached("SELECT 1 FROM embeddings WHERE hash = ?1")?;
    for file in &plan.changed {
        for (chunk, hash) in &file.chunks {
            if seen.insert(hash.clone()) && !has_vector.exists([hash])? {
                out.push((hash.clone(), chunk.text.clone()));
            }
        }
    }
    if whole_index {
        let changed: HashSet<&str> = plan.changed.iter().map(|f| f.path.as_str()).collect();
        let mut stmt = conn.prepare(
            "SELECT c.path, c.hash, c.text FROM chunks c
             WHERE NOT EXISTS (SELECT 1 FROM embeddings e WHERE e.hash = c.hash)",
        )?;
        let rows = stmt.query_map([], |r| {
            Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?, r.get(2)?))
        })?;
        for row in rows {
            let (path, hash, text) = row?;
            if !changed.contains(path.as_str()) && seen.insert(hash.clone()) {
                out.push((hash, text));
            }
        }
    }
    Ok(out)
}

/// Stores vectors by content hash. Vectors of another size than the index
/// records mean the model behind the same name changed: the old ones go.
pub fn store_vectors(conn: &mut Connection, batch: &[(String, Vec<f32>)]) -> Result<()> {
    let Some(dims) = batch.first().map(|(_, v)| v.len()) else {
        return Ok(());
    };
    let tx = write(conn)?;
    let recorded = store::get_meta(&tx, "embed_dims")?;
    if recorded.as_deref() != Some(dims.to_string().as_str()) {
        if recorded.is_some() {
            tx.execute("DELETE FROM embeddings", [])?;
            store::set_meta(&tx, "missing_vectors", "1")?;
        }
        store::set_meta(&tx, "embed_dims", &dims.to_string())?;
    }
    {
        let mut insert =
            tx.prepare_cached("INSERT OR REPLACE INTO embeddings(hash, vector) VALUES (?1, ?2)")?;
        for (hash, vector) in batch {
            insert.execute(params![hash, store::vector_to_blob(vector)])?;
        }
    }
    store::bump_generation(&tx)?;
    tx.commit()?;
    Ok(())
}

/// Writes the plan's chunks and files in one transaction. `vectors_wanted`:
/// an embedder is configured, so the index records whether any chunk is
/// still without a vector (the next sync retries those).
pub fn apply(conn: &mut Connection, plan: &Plan, vectors_wanted: bool) -> Result<()> {
    let tx = write(conn)?;
    let content_changed = !plan.changed.is_empty() || !plan.removed.is_empty();
    {
        let mut delete_chunks = tx.prepare_cached("DELETE FROM chunks WHERE path = ?1")?;
        let mut delete_file = tx.prepare_cached("DELETE FROM files WHERE path = ?1")?;
        for path in &plan.removed {
            delete_chunks.execute([path])?;
            delete_file.execute([path])?;
        }
        let mut insert_chunk = tx.prepare_cached(
            "INSERT INTO chunks(path, start_line, end_line, hash, text) VALUES (?1, ?2, ?3, ?4, ?5)",
        )?;
        let mut upsert_file = tx.prepare_cached(
            "INSERT OR REPLACE INTO files(path, mtime_ns, size, hash) VALUES (?1, ?2, ?3, ?4)",
        )?;
        for file in &plan.changed {
            delete_chunks.execute([&file.path])?;
            for (chunk, hash) in &file.chunks {
                insert_chunk.execute(params![
                    file.path,
                    chunk.start_line as i64,
                    chunk.end_line as i64,
                    hash,
                    chunk.text
                ])?;
            }
            upsert_file.execute(params![file.path, file.mtime_ns, file.size, file.hash])?;
        }
        let mut touch =
            tx.prepare_cached("UPDATE files SET mtime_ns = ?2, size = ?3 WHERE path = ?1")?;
        for (path, mtime_ns, size) in &plan.touched {
            touch.execute(params![path, mtime_ns, size])?;
        }
    }
    if content_changed {
        // Vectors of text no chunk has any more.
        tx.execute(
            "DELETE FROM embeddings WHERE hash NOT IN (SELECT hash FROM chunks)",
            [],
        )?;
    }
    if vectors_wanted && (content_changed || !plan.to_embed.is_empty()) {
        note_missing_vectors(&tx)?;
    }
    if content_changed {
        store::bump_generation(&tx)?;
    }
    tx.commit()?;
    Ok(())
}

/// Records whether any chunk still lacks its vector (the next sync then
/// looks for them).
fn note_missing_vectors(conn: &Connection) -> Result<()> {
    let missing: bool = conn.query_row(
        "SELECT EXISTS(SELECT 1 FROM chunks c
         WHERE NOT EXISTS (SELECT 1 FROM embeddings e WHERE e.hash = c.hash))",
        [],
        |r| r.get(0),
    )?;
    store::set_meta(conn, "missing_vectors", if missing { "1" } else { "0" })
}

/// After the vectors of a sync are stored: whether some are still missing.
pub fn finish_vectors(conn: &mut Connection) -> Result<()> {
    let tx = write(conn)?;
    note_missing_vectors(&tx)?;
    tx.commit()?;
    Ok(())
}

/// A write transaction that takes the lock up front, so a busy index is
/// waited for (busy timeout) instead of failing half-way.
fn write(conn: &mut Connection) -> Result<Transaction<'_>> {
    Ok(conn.transaction_with_behavior(TransactionBehavior::Immediate)?)
}

/// Chunks and files in the index, for reports.
pub fn counts(conn: &Connection) -> Result<(u64, u64, u64)> {
    let count =
        |sql: &str| -> Result<u64> { Ok(conn.query_row(sql, [], |r| r.get::<_, i64>(0))? as u64) };
    Ok((
        count("SELECT count(*) FROM files")?,
        count("SELECT count(*) FROM chunks")?,
        count("SELECT count(*) FROM embeddings")?,
    ))
}
