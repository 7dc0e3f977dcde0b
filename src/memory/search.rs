//! Hybrid search: BM25 from FTS5 and cosine similarity over the loaded
//! vectors, each side asked for `max_results × candidate_multiplier`
//! candidates, merged into one weighted score.
//!
//! Text scores are BM25 divided by the best candidate's (1 for the best
//! match); vector scores are the cosine, clamped at 0. Without a query
//! vector (no embedder, or it is down) the text score alone ranks. Daily
//! logs may decay with age (`recency_half_life`); MEMORY.md never does.
//! Chunks that overlap an already chosen one in the same file are dropped.
//! Each chosen hit's snippet is its best-matching lines (see `snippet`).

use std::collections::HashMap;

use anyhow::Result;
use chrono::NaiveDate;
use rusqlite::{Connection, OptionalExtension};

use super::snippet;
use crate::config::MemoryConfig;
use crate::protocol::MemoryHit;
/// Query words sent to FTS5; a pasted paragraph is not a useful query.
const MAX_QUERY_TERMS: usize = 24;

/// Words so common they match nearly every chunk: dropped from the text
/// query unless nothing else is left.
const STOPWORDS: &[&str] = &[
    "a", "about", "an", "and", "are", "as", "at", "be", "by", "did", "do", "does", "for", "from",
    "had", "has", "have", "how", "i", "in", "is", "it", "its", "me", "my", "of", "on", "or",
    "that", "the", "this", "to", "was", "we", "were", "what", "when", "where", "which", "who",
    "why", "with", "you", "your",
];

#[derive(Clone, Copy, Debug)]
pub struct SearchOptions {
    pub max_results: usize,
    pub min_score: f64,
}

/// The FTS5 query for what the user typed: each word quoted (so `"`, `*`,
/// `NEAR`, `-`, `AND` are only ever text) and OR-ed. None: no words.
pub fn fts_query(text: &str) -> Option<String> {
    let mut words: Vec<String> = Vec::new();
    for word in text.split(|c: char| !c.is_alphanumeric()) {
        let word = word.to_lowercase();
        if !word.is_empty() && !words.contains(&word) {
            words.push(word);
        }
    }
    let meaningful: Vec<&String> = words
        .iter()
        .filter(|w| !STOPWORDS.contains(&w.as_str()))
        .collect();
    let chosen: Vec<&String> = if meaningful.is_empty() {
        words.iter().collect()
    } else {
        meaningful
    };
    if chosen.is_empty() {
        return None;
    }
    let quoted: Vec<String> = chosen
        .into_iter()
        .take(MAX_QUERY_TERMS)
        .map(|w| format!("\"{w}\""))
        .collect();
    Some(quoted.join(" OR "))
}

/// Chunk ids with their BM25 relevance (higher is better), best first.
pub fn text_candidates(conn: &Connection, query: &str, limit: usize) -> Result<Vec<(i64, f64)>> {
    let Some(fts) = fts_query(query) else {
        return Ok(Vec::new());
    };
    // `bm25()` sorted by SQLite keeping only the best `limit`, rather than
    // `ORDER BY rank`: FTS5's own rank sort runs a second statement and
    // sorts every match (a third less CPU in all, docs/benchmarks.md).
    // The same scores; ties (many chunks score alike) go to the lower id,
    // as the rank sort left them.
    let mut stmt = conn.prepare_cached(
        "SELECT rowid, bm25(chunks_fts) AS score FROM chunks_fts WHERE chunks_fts MATCH ?1
         ORDER BY score, rowid LIMIT ?2",
    )?;
    let rows = stmt.query_map(rusqlite::params![fts, limit as i64], |r| {
        Ok((r.get(0)?, -r.get::<_, f64>(1)?))
    })?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

struct Candidate {
    vector: f64,
    text: f64,
}

/// Candidates each side proposes.
pub fn pool_size(settings: &MemoryConfig, opts: SearchOptions) -> usize {
    opts.max_results.max(1) * settings.candidate_multiplier.max(1)
}

/// A chosen hit, and its chunk's text when no query term matched it (a
/// hit by meaning alone): the caller may pick its lines by vector.
#[derive(Debug)]
pub struct Ranked {
    pub hit: MemoryHit,
    pub unmatched_text: Option<String>,
}

/// Merges the two sides' candidates (`vector_hits` None: text alone ranks)
/// into at most `max_results` hits, best first.
pub fn rank(
    conn: &Connection,
    query: &str,
    text: Vec<(i64, f64)>,
    vector_hits: Option<Vec<(i64, f32)>>,
    settings: &MemoryConfig,
    opts: SearchOptions,
    today: NaiveDate,
) -> Result<Vec<Ranked>> {
    let hybrid = vector_hits.is_some();
    let candidates = merge(text, vector_hits);
    let weights = weights(settings, hybrid);
    let scored = score(conn, candidates, weights, settings, today)?;
    let hits = best_apart(scored, opts.max_results.max(1), opts.min_score);
    let fts = fts_query(query);
    hits.into_iter()
        .map(|(hit, id)| with_snippet(conn, fts.as_deref(), hit, id))
        .collect()
}

/// Each chunk either side proposed, with its text score relative to the
/// best text match and its cosine (negatives count as 0).
fn merge(text: Vec<(i64, f64)>, vector_hits: Option<Vec<(i64, f32)>>) -> HashMap<i64, Candidate> {
    let mut candidates: HashMap<i64, Candidate> = HashMap::new();
    let best_text = text.first().map_or(0.0, |(_, s)| *s);
    for (id, bm25) in text {
        let normalized = if best_text > 0.0 {
            (bm25 / best_text).max(0.0)
        } else {
            0.0
        };
        candidates.insert(
            id,
            Candidate {
                vector: 0.0,
                text: normalized,
            },
        );
    }
    for (id, cosine) in vector_hits.into_iter().flatten() {
        let entry = candidates.entry(id).or_insert(Candidate {
            vector: 0.0,
            text: 0.0,
        });
        entry.vector = f64::from(cosine).max(0.0);
    }
    candidates
}

/// (vector, text) weights summing to 1: the configured ones in a hybrid
/// search, text alone otherwise.
fn weights(settings: &MemoryConfig, hybrid: bool) -> (f64, f64) {
    if !hybrid {
        return (0.0, 1.0);
    }
    let total = settings.vector_weight + settings.text_weight;
    if total > 0.0 {
        (settings.vector_weight / total, settings.text_weight / total)
    } else {
        (0.5, 0.5)
    }
}

/// Each candidate still in the index as a hit with its weighted score,
/// faded by the age of a dated daily log, best first.
fn score(
    conn: &Connection,
    candidates: HashMap<i64, Candidate>,
    (vector_weight, text_weight): (f64, f64),
    settings: &MemoryConfig,
    today: NaiveDate,
) -> Result<Vec<(MemoryHit, i64, f64)>> {
    let mut scored: Vec<(MemoryHit, i64, f64)> = Vec::with_capacity(candidates.len());
    let mut details =
        conn.prepare_cached("SELECT path, start_line, end_line FROM chunks WHERE id = ?1")?;
    for (id, c) in candidates {
        let Some((path, start, end)) = details
            .query_row([id], |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    r.get::<_, i64>(1)?,
                    r.get::<_, i64>(2)?,
                ))
            })
            .map(Some)
            .or_else(|e| match e {
                // Gone since the vectors were loaded (another process re-indexed).
                rusqlite::Error::QueryReturnedNoRows => Ok(None),
                e => Err(e),
            })?
        else {
            continue;
        };
        let mut score = vector_weight * c.vector + text_weight * c.text;
        score *= recency_factor(&path, today, settings.recency_half_life.0.as_secs_f64());
        scored.push((
            MemoryHit {
                path,
                start_line: start as usize,
                end_line: end as usize,
                score: (score * 10_000.0).round() / 10_000.0,
                snippet: String::new(),
                snippet_start_line: start as usize,
                snippet_end_line: end as usize,
                best_line: start as usize,
            },
            id,
            score,
        ));
    }
    scored.sort_by(|a, b| {
        b.2.total_cmp(&a.2)
            .then_with(|| a.0.path.cmp(&b.0.path))
            .then_with(|| a.0.start_line.cmp(&b.0.start_line))
    });
    Ok(scored)
}

/// Up to `want` of the scored hits, best first, none under `min_score`
/// and none overlapping a better one in the same file.
fn best_apart(
    scored: Vec<(MemoryHit, i64, f64)>,
    want: usize,
    min_score: f64,
) -> Vec<(MemoryHit, i64)> {
    let mut hits: Vec<(MemoryHit, i64)> = Vec::new();
    for (hit, id, score) in scored {
        if hits.len() == want || score < min_score {
            break;
        }
        let overlaps = hits.iter().any(|(h, _)| {
            h.path == hit.path && h.start_line <= hit.end_line && hit.start_line <= h.end_line
        });
        if !overlaps {
            hits.push((hit, id));
        }
    }
    hits
}

/// The hit with its matched lines, from FTS5's `highlight()` of its chunk;
/// a chunk no query term matched gets its first lines, and its text back.
fn with_snippet(
    conn: &Connection,
    fts: Option<&str>,
    mut hit: MemoryHit,
    id: i64,
) -> Result<Ranked> {
    let (start, end) = (hit.start_line, hit.end_line);
    let marked = match fts {
        Some(fts) => conn
            .prepare_cached(
                "SELECT highlight(chunks_fts, 0, char(2), char(3)) FROM chunks_fts
                 WHERE chunks_fts MATCH ?1 AND rowid = ?2",
            )?
            .query_row(rusqlite::params![fts, id], |r| r.get::<_, String>(0))
            .optional()?,
        None => None,
    };
    if let Some(marked) = marked {
        snippet::from_highlight(&marked, start, end).apply(&mut hit);
        return Ok(Ranked {
            hit,
            unmatched_text: None,
        });
    }
    let text: String = conn
        .prepare_cached("SELECT text FROM chunks WHERE id = ?1")?
        .query_row([id], |r| r.get(0))
        .optional()?
        .unwrap_or_default();
    snippet::head(&text, start, end).apply(&mut hit);
    Ok(Ranked {
        hit,
        unmatched_text: Some(text),
    })
}

/// `0.5^(age / half_life)` for `memory/…/YYYY-MM-DD.md`; 1 for anything
/// else, and when decay is off (`half_life_secs` 0).
pub fn recency_factor(path: &str, today: NaiveDate, half_life_secs: f64) -> f64 {
    if half_life_secs <= 0.0 || !path.starts_with("memory/") {
        return 1.0;
    }
    let name = path.rsplit('/').next().unwrap_or(path);
    let Some(date) = name
        .strip_suffix(".md")
        .and_then(|stem| NaiveDate::parse_from_str(stem, "%Y-%m-%d").ok())
    else {
        return 1.0;
    };
    let age_days = (today - date).num_days().max(0) as f64;
    0.5f64.powf(age_days * 86_400.0 / half_life_secs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queries_are_quoted_words_or_ed() {
        assert_eq!(
            fts_query("What is my cat's name?").as_deref(),
            Some("\"cat\" OR \"s\" OR \"name\"")
        );
        assert_eq!(
            fts_query("\"quoted\" NEAR(a b) -x *").as_deref(),
            Some("\"quoted\" OR \"near\" OR \"b\" OR \"x\"")
        );
        // Only stopwords: they are the query.
        assert_eq!(fts_query("the a").as_deref(), Some("\"the\" OR \"a\""));
        assert_eq!(fts_query(" \"* - ()"), None);
        assert_eq!(fts_query("Ünïcode ÜNÏCODE").as_deref(), Some("\"ünïcode\""));
    }

    #[test]
    fn text_candidates_are_best_first_and_ties_go_to_the_lower_id() {
        let dir = tempfile::tempdir().unwrap();
        let conn = super::super::store::open(&dir.path().join("index.sqlite")).unwrap();
        let texts = [
            (1, "otter river bank"),
            (2, "otter otter otter"),
            (3, "nothing to see"),
            (4, "otter river bank"),
            (5, "river bank otter"),
        ];
        for (id, text) in texts {
            conn.execute(
                "INSERT INTO chunks(id, path, start_line, end_line, hash, text)
                 VALUES (?1, 'MEMORY.md', 1, 1, ?2, ?3)",
                rusqlite::params![id, format!("h{id}"), text],
            )
            .unwrap();
        }
        let found = text_candidates(&conn, "otter", 10).unwrap();
        let ids: Vec<i64> = found.iter().map(|(id, _)| *id).collect();
        assert_eq!(ids, [2, 1, 4, 5]);
        assert!(found[0].1 > found[1].1 && found[1].1 > 0.0, "{found:?}");
        assert_eq!(found[1].1, found[3].1, "alike: the same score");
        assert_eq!(text_candidates(&conn, "otter", 2).unwrap().len(), 2);
    }

    #[test]
    fn daily_logs_decay_and_memory_md_never_does() {
        let today = NaiveDate::from_ymd_opt(2025, 3, 31).unwrap();
        let day = 86_400.0;
        assert_eq!(recency_factor("MEMORY.md", today, 30.0 * day), 1.0);
        assert_eq!(
            recency_factor("memory/2025-03-31.md", today, 30.0 * day),
            1.0
        );
        let month_old = recency_factor("memory/2025-03-01.md", today, 30.0 * day);
        assert!((month_old - 0.5).abs() < 1e-9, "{month_old}");
        assert_eq!(recency_factor("memory/notes.md", today, 30.0 * day), 1.0);
        assert_eq!(recency_factor("memory/2020-01-01.md", today, 0.0), 1.0);
    }
}
