//! The SQLite index (`.egirl/index.sqlite`): schema, connection settings,
//! and recovery. Everything in it is rebuilt from the markdown files, so a
//! corrupt database is deleted and built again; a locked one is waited for
//! (busy timeout) and never deleted.
//!
//! Tables: `files` (what was indexed: mtime, size, content hash), `chunks`
//! (text and lines, mirrored into the FTS5 table `chunks_fts` by triggers),
//! `embeddings` (one vector per chunk *content hash*, so unchanged text is
//! never embedded twice), `meta` (embedding model and dimension, and a
//! generation counter bumped on every change so a process knows when its
//! loaded vectors are stale).

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result};
use rusqlite::{Connection, ErrorCode, OptionalExtension, params};

const SCHEMA_VERSION: &str = "1";
/// How long a writer waits for another egirl process's transaction.
const BUSY_TIMEOUT: Duration = Duration::from_secs(10);

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS files(
    path TEXT PRIMARY KEY,
    mtime_ns INTEGER NOT NULL,
    size INTEGER NOT NULL,
    hash TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS chunks(
    id INTEGER PRIMARY KEY,
    path TEXT NOT NULL,
    start_line INTEGER NOT NULL,
    end_line INTEGER NOT NULL,
    hash TEXT NOT NULL,
    text TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS chunks_path ON chunks(path);
CREATE INDEX IF NOT EXISTS chunks_hash ON chunks(hash);
CREATE VIRTUAL TABLE IF NOT EXISTS chunks_fts USING fts5(
    text, content='chunks', content_rowid='id', tokenize='unicode61 remove_diacritics 2'
);
CREATE TRIGGER IF NOT EXISTS chunks_ai AFTER INSERT ON chunks BEGIN
    INSERT INTO chunks_fts(rowid, text) VALUES (new.id, new.text);
END;
CREATE TRIGGER IF NOT EXISTS chunks_ad AFTER DELETE ON chunks BEGIN
    INSERT INTO chunks_fts(chunks_fts, rowid, text) VALUES ('delete', old.id, old.text);
END;
CREATE TABLE IF NOT EXISTS embeddings(hash TEXT PRIMARY KEY, vector BLOB NOT NULL);
";

pub fn db_path(workspace: &Path) -> PathBuf {
    workspace.join(".egirl").join("index.sqlite")
}

/// Whether the error means the file is damaged (rebuild), as opposed to
/// busy, locked or unreadable (report).
pub fn is_corrupt(e: &anyhow::Error) -> bool {
    e.chain().any(|cause| {
        cause
            .downcast_ref::<rusqlite::Error>()
            .and_then(rusqlite::Error::sqlite_error_code)
            .is_some_and(|code| {
                matches!(code, ErrorCode::DatabaseCorrupt | ErrorCode::NotADatabase)
            })
    })
}

/// Opens (creating) the index with WAL and a busy timeout, so several egirl
/// processes can read while one writes.
pub fn open(path: &Path) -> Result<Connection> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    }
    let conn = Connection::open(path)
        .with_context(|| format!("cannot open the memory index {}", path.display()))?;
    conn.busy_timeout(BUSY_TIMEOUT)?;
    prepare(&conn).with_context(|| format!("memory index {}", path.display()))?;
    Ok(conn)
}

fn prepare(conn: &Connection) -> Result<()> {
    // WAL: readers never block the writer; NORMAL is durable enough for an
    // index that can be rebuilt; mmap spares a copy per page on a scan.
    conn.pragma_update(None, "journal_mode", "WAL")?;
    conn.pragma_update(None, "synchronous", "NORMAL")?;
    conn.pragma_update(None, "mmap_size", 1i64 << 30)?;
    conn.pragma_update(None, "temp_store", "MEMORY")?;
    conn.execute_batch(SCHEMA)?;
    match get_meta(conn, "schema")? {
        Some(v) if v == SCHEMA_VERSION => {}
        Some(other) => anyhow::bail!(
            "the memory index has schema {other}, this egirl writes {SCHEMA_VERSION}; delete it to rebuild"
        ),
        None => set_meta(conn, "schema", SCHEMA_VERSION)?,
    }
    Ok(())
}

/// The identity of the database file (device and inode on Unix), to tell
/// a rebuilt index from the one a connection holds. None: no file, or a
/// platform without it (every search then opens the index anew).
pub fn file_id(path: &Path) -> Option<u64> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        std::fs::metadata(path)
            .ok()
            .map(|m| m.dev().rotate_left(32) ^ m.ino())
    }
    #[cfg(not(unix))]
    {
        let _ = path;
        None
    }
}

/// Deletes the database (and its WAL files) so the next open starts empty.
pub fn remove(path: &Path) -> Result<()> {
    for suffix in ["", "-wal", "-shm"] {
        let mut name = path.as_os_str().to_owned();
        name.push(suffix);
        match std::fs::remove_file(PathBuf::from(name)) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(e).with_context(|| format!("cannot delete {}", path.display())),
        }
    }
    Ok(())
}

pub fn get_meta(conn: &Connection, key: &str) -> Result<Option<String>> {
    Ok(conn
        .query_row("SELECT value FROM meta WHERE key = ?1", [key], |r| r.get(0))
        .optional()?)
}

pub fn set_meta(conn: &Connection, key: &str, value: &str) -> Result<()> {
    conn.execute(
        "INSERT INTO meta(key, value) VALUES (?1, ?2)
         ON CONFLICT(key) DO UPDATE SET value = excluded.value",
        params![key, value],
    )?;
    Ok(())
}

/// Bumped on every change to chunks or vectors.
pub fn generation(conn: &Connection) -> Result<u64> {
    Ok(get_meta(conn, "generation")?
        .and_then(|v| v.parse().ok())
        .unwrap_or(0))
}

pub fn bump_generation(conn: &Connection) -> Result<()> {
    let next = generation(conn)? + 1;
    set_meta(conn, "generation", &next.to_string())
}

/// Vectors are stored as little-endian f32, contiguous.
pub fn vector_to_blob(vector: &[f32]) -> Vec<u8> {
    vector.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// Appends the floats of `blob` to `out` (no allocation per vector).
pub fn extend_from_blob(out: &mut Vec<f32>, blob: &[u8]) {
    out.extend(
        blob.chunks_exact(4)
            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])),
    );
}

/// SHA-256 of a text, as hex: content hashes of files and chunks.
pub fn content_hash(bytes: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    let digest = Sha256::digest(bytes);
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn opens_in_wal_mode_with_the_schema() {
        let dir = tempfile::tempdir().unwrap();
        let path = db_path(dir.path());
        let conn = open(&path).unwrap();
        let mode: String = conn
            .query_row("PRAGMA journal_mode", [], |r| r.get(0))
            .unwrap();
        assert_eq!(mode, "wal");
        assert_eq!(get_meta(&conn, "schema").unwrap().as_deref(), Some("1"));
        bump_generation(&conn).unwrap();
        bump_generation(&conn).unwrap();
        assert_eq!(generation(&conn).unwrap(), 2);
        drop(conn);
        // Opening again keeps what is there.
        let conn = open(&path).unwrap();
        assert_eq!(generation(&conn).unwrap(), 2);
    }

    #[test]
    fn garbage_is_reported_as_corrupt() {
        let dir = tempfile::tempdir().unwrap();
        let path = db_path(dir.path());
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, b"this is not a database, just text ".repeat(200)).unwrap();
        let err = open(&path).unwrap_err();
        assert!(is_corrupt(&err), "{err:#}");
        remove(&path).unwrap();
        assert!(open(&path).is_ok());
    }

    #[test]
    fn vectors_round_trip_through_blobs() {
        let v = [0.5f32, -1.25, 3.0];
        let mut out = Vec::new();
        extend_from_blob(&mut out, &vector_to_blob(&v));
        assert_eq!(out, v);
    }
}
