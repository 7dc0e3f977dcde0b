//! Chunk vectors loaded for searching: 8-bit codes kept as two 4-bit
//! planes (see `quantized`; row i is chunk `ids[i]`, one scale a row),
//! scanned in two passes: the coarse plane alone over every row with a
//! bounded heap, then both planes over the rows it kept. The best
//! candidates are then scored exactly from their stored `f32` vectors.
//!
//! Vectors are normalised when stored, so cosine similarity is a dot
//! product. The scan is the search's floor (memory bandwidth): the codes
//! take a quarter of the bytes `f32` would (77 MB rather than 307 MB for
//! 100,000 vectors of 768 dimensions), and the first pass reads half of
//! them.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use anyhow::Result;
use rusqlite::Connection;

use super::quantized::{QueryCodes, plane_bytes, quantize_into, split_into};
use super::store;

/// Candidates the code scan keeps per result wanted, scored again exactly.
/// The codes rank them by their whole 8 bits (the coarse pass only
/// preselects): on the memory bench's data this gives recall@10 of 1.0,
/// and each candidate is one read from the index.
pub const OVERSAMPLE: usize = 2;

/// Rows the coarse pass keeps per candidate wanted, for the second pass
/// to rank by the whole 8-bit codes. On the memory bench's data the coarse
/// pass alone already holds the exact top 10 in its best 96.
const COARSE_OVERSAMPLE: usize = 8;

#[derive(Debug, Default)]
pub struct LoadedVectors {
    /// The index generation these were read at.
    pub generation: u64,
    pub dims: usize,
    pub ids: Vec<i64>,
    /// The high nibbles of the codes, `plane_bytes(dims)` a row.
    pub coarse: Vec<u8>,
    /// The low nibbles, laid out alike.
    pub fine: Vec<u8>,
    /// Row i's component j is about its code j times `scales[i]`.
    pub scales: Vec<f32>,
}

impl LoadedVectors {
    /// Every chunk that has a vector, in one read.
    pub fn load(conn: &Connection) -> Result<Self> {
        let generation = store::generation(conn)?;
        let dims: usize = store::get_meta(conn, "embed_dims")?
            .and_then(|d| d.parse().ok())
            .unwrap_or(0);
        let mut out = Self {
            generation,
            dims,
            ..Self::default()
        };
        if dims == 0 {
            return Ok(out);
        }
        let count: i64 = conn.query_row("SELECT count(*) FROM chunks", [], |r| r.get(0))?;
        let count = usize::try_from(count).unwrap_or(0);
        out.ids.reserve(count);
        out.scales.reserve(count);
        out.coarse.reserve(count * plane_bytes(dims));
        out.fine.reserve(count * plane_bytes(dims));
        let mut stmt = conn
            .prepare("SELECT c.id, e.vector FROM chunks c JOIN embeddings e ON e.hash = c.hash")?;
        let mut rows = stmt.query([])?;
        let mut vector = Vec::with_capacity(dims);
        let mut codes = Vec::with_capacity(dims);
        while let Some(row) = rows.next()? {
            let blob = row.get_ref(1)?.as_blob()?;
            // A vector of another size is a leftover the next sync replaces.
            if blob.len() == dims * 4 {
                out.ids.push(row.get(0)?);
                vector.clear();
                store::extend_from_blob(&mut vector, blob);
                out.push(&vector, &mut codes);
            }
        }
        Ok(out)
    }

    /// Appends a row for `vector` (`codes`: scratch space).
    fn push(&mut self, vector: &[f32], codes: &mut Vec<i8>) {
        codes.clear();
        self.scales.push(quantize_into(vector, codes));
        split_into(codes, &mut self.coarse, &mut self.fine);
    }

    pub fn len(&self) -> usize {
        self.ids.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    /// Bytes held, for the idle drop's log line and the bench.
    pub fn bytes(&self) -> usize {
        self.coarse.len() + self.fine.len() + self.scales.len() * 4 + self.ids.len() * 8
    }

    /// The `k` best chunks by cosine similarity, best first: the codes pick
    /// `k *` [`OVERSAMPLE`] candidates, whose stored vectors (read from
    /// the index by chunk id: a few dozen rows) give the exact scores. A
    /// candidate whose vector is gone since keeps its approximate score.
    pub fn top_k(&self, conn: &Connection, query: &[f32], k: usize) -> Result<Vec<(i64, f32)>> {
        let mut stmt = conn.prepare_cached(
            "SELECT e.vector FROM chunks c JOIN embeddings e ON e.hash = c.hash WHERE c.id = ?1",
        )?;
        let mut vector = Vec::with_capacity(self.dims);
        self.top_k_with(query, k, |id| {
            let mut rows = stmt.query([id])?;
            let Some(row) = rows.next()? else {
                return Ok(None);
            };
            let blob = row.get_ref(0)?.as_blob()?;
            if blob.len() != self.dims * 4 {
                return Ok(None);
            }
            vector.clear();
            store::extend_from_blob(&mut vector, blob);
            Ok(Some(dot(&vector, query)))
        })
    }

    /// [`Self::top_k`] with the exact score of a chunk id from `exact`.
    pub fn top_k_with(
        &self,
        query: &[f32],
        k: usize,
        mut exact: impl FnMut(i64) -> Result<Option<f32>>,
    ) -> Result<Vec<(i64, f32)>> {
        let mut out = Vec::new();
        for (row, approx) in self.candidates(query, k.saturating_mul(OVERSAMPLE)) {
            let id = self.ids[row];
            out.push((id, exact(id)?.unwrap_or(approx)));
        }
        out.sort_by(|a, b| b.1.total_cmp(&a.1));
        out.truncate(k);
        Ok(out)
    }

    /// The `n` best rows by the codes' dot product with the query's codes,
    /// with their approximate cosines, best first: the coarse plane picks
    /// `n *` [`COARSE_OVERSAMPLE`] rows, both planes rank those.
    pub fn candidates(&self, query: &[f32], n: usize) -> Vec<(usize, f32)> {
        if query.len() != self.dims || self.dims == 0 || n == 0 || self.is_empty() {
            return Vec::new();
        }
        let query = QueryCodes::new(query);
        let stride = plane_bytes(self.dims);
        let wide = n.saturating_mul(COARSE_OVERSAMPLE);
        let rough = top_k_parallel(self.len(), wide, |rows, out| {
            let coarse = &self.coarse[rows.start * stride..rows.end * stride];
            query.coarse_scores(coarse, &self.scales[rows], out);
        });
        let mut out: Vec<(usize, f32)> = rough
            .into_iter()
            .map(|(row, _)| {
                let bytes = row * stride..(row + 1) * stride;
                let dot = query.dot(&self.coarse[bytes.clone()], &self.fine[bytes]);
                (row, dot as f32 * self.scales[row] * query.scale)
            })
            .collect();
        out.sort_by(|a, b| b.1.total_cmp(&a.1));
        out.truncate(n);
        out
    }
}

/// Rows of `data` (each `dims` long) with the highest dot product with
/// `query`, best first: the exact scan.
pub fn top_k_scan(data: &[f32], dims: usize, query: &[f32], k: usize) -> Vec<(usize, f32)> {
    let rows = data.len() / dims.max(1);
    top_k_rows(0..rows, k, |rows, out| {
        for (row, score) in rows.zip(out) {
            *score = dot(&data[row * dims..(row + 1) * dims], query);
        }
    })
}

/// Rows scored per call of a batch scorer.
const BATCH_ROWS: usize = 256;

/// The rows of `rows` with the highest score, best first, `score_batch`
/// writing the scores of a range of rows (at most [`BATCH_ROWS`]). A
/// min-heap of `k` keeps memory flat.
fn top_k_rows(
    rows: std::ops::Range<usize>,
    k: usize,
    score_batch: impl Fn(std::ops::Range<usize>, &mut [f32]),
) -> Vec<(usize, f32)> {
    let mut heap: BinaryHeap<Scored> = BinaryHeap::with_capacity(k + 1);
    let mut scores = [0f32; BATCH_ROWS];
    let mut start = rows.start;
    while start < rows.end {
        let end = (start + BATCH_ROWS).min(rows.end);
        let batch = &mut scores[..end - start];
        score_batch(start..end, batch);
        for (row, score) in (start..end).zip(batch.iter().copied()) {
            if heap.len() < k {
                heap.push(Scored { score, row });
            } else if heap.peek().is_some_and(|worst| score > worst.score) {
                heap.pop();
                heap.push(Scored { score, row });
            }
        }
        start = end;
    }
    let mut out: Vec<(usize, f32)> = heap.into_iter().map(|s| (s.row, s.score)).collect();
    out.sort_by(|a, b| b.1.total_cmp(&a.1));
    out
}

/// Rows scanned per thread before a second thread is worth starting.
const ROWS_PER_THREAD: usize = 16_384;

/// `top_k_rows` over contiguous shares of `0..rows` on up to as many
/// threads as there are cores (at most 4), merged: one core alone does not
/// reach the memory bandwidth a big index needs.
fn top_k_parallel(
    rows: usize,
    k: usize,
    score_batch: impl Fn(std::ops::Range<usize>, &mut [f32]) + Sync,
) -> Vec<(usize, f32)> {
    // Asked once: the answer reads the cgroup's files (~28 µs a call).
    static CORES: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    let cores = *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    let threads = cores.min(4).min(rows / ROWS_PER_THREAD).max(1);
    if threads == 1 {
        return top_k_rows(0..rows, k, score_batch);
    }
    let share = rows.div_ceil(threads);
    let score_batch = &score_batch;
    let scan_share =
        move |i: usize| top_k_rows(i * share..((i + 1) * share).min(rows), k, score_batch);
    let mut out: Vec<(usize, f32)> = std::thread::scope(|scope| {
        // The first share on this thread, the others on their own.
        let handles: Vec<_> = (1..threads)
            .map(|i| scope.spawn(move || scan_share(i)))
            .collect();
        let mut out = scan_share(0);
        // A share whose thread panicked is left out rather than failing the search.
        out.extend(
            handles
                .into_iter()
                .flat_map(|h| h.join().unwrap_or_default()),
        );
        out
    });
    out.sort_by(|a, b| b.1.total_cmp(&a.1));
    out.truncate(k);
    out
}

/// Dot product; eight lanes so that it compiles to SIMD.
pub fn dot(a: &[f32], b: &[f32]) -> f32 {
    let mut lanes = [0f32; 8];
    let a_chunks = a.chunks_exact(8);
    let b_chunks = b.chunks_exact(8);
    let tail: f32 = a_chunks
        .remainder()
        .iter()
        .zip(b_chunks.remainder())
        .map(|(x, y)| x * y)
        .sum();
    for (x, y) in a_chunks.zip(b_chunks) {
        for i in 0..8 {
            lanes[i] += x[i] * y[i];
        }
    }
    lanes.iter().sum::<f32>() + tail
}

/// Reversed so `BinaryHeap` (a max-heap) keeps the worst on top.
struct Scored {
    score: f32,
    row: usize,
}

impl PartialEq for Scored {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl Eq for Scored {}
impl PartialOrd for Scored {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Scored {
    fn cmp(&self, other: &Self) -> Ordering {
        other.score.total_cmp(&self.score)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_parallel_scan_finds_what_the_single_one_does() {
        let dims = 8;
        let rows = ROWS_PER_THREAD * 3 + 5;
        let data: Vec<f32> = (0..rows * dims)
            .map(|i| ((i * 7919) % 1000) as f32 / 1000.0 - 0.5)
            .collect();
        let query: Vec<f32> = (0..dims).map(|i| i as f32 - 3.5).collect();
        let scores = |hits: Vec<(usize, f32)>| hits.into_iter().map(|(_, s)| s).collect::<Vec<_>>();
        let parallel = top_k_parallel(rows, 10, |rows, out| {
            for (row, score) in rows.zip(out) {
                *score = dot(&data[row * dims..(row + 1) * dims], &query);
            }
        });
        for (row, score) in &parallel {
            assert_eq!(dot(&data[row * dims..(row + 1) * dims], &query), *score);
        }
        assert_eq!(
            scores(parallel),
            scores(top_k_scan(&data, dims, &query, 10))
        );
    }

    #[test]
    fn dot_matches_the_naive_sum() {
        let a: Vec<f32> = (0..21).map(|i| i as f32 * 0.5).collect();
        let b: Vec<f32> = (0..21).map(|i| 1.0 - i as f32 * 0.1).collect();
        let naive: f32 = a.iter().zip(&b).map(|(x, y)| x * y).sum();
        assert!((dot(&a, &b) - naive).abs() < 1e-3);
    }

    #[test]
    fn top_k_keeps_the_best_in_order() {
        // Row i points at angle i; the query points at row 3's angle.
        let dims = 2;
        let data: Vec<f32> = (0..10)
            .flat_map(|i| {
                let t = i as f32 * 0.3;
                [t.cos(), t.sin()]
            })
            .collect();
        let query = [0.9f32.cos(), 0.9f32.sin()];
        let top = top_k_scan(&data, dims, &query, 3);
        let rows: Vec<usize> = top.iter().map(|(r, _)| *r).collect();
        assert_eq!(rows[0], 3);
        assert_eq!(rows.len(), 3);
        assert!(rows[1..].contains(&2) && rows[1..].contains(&4));
        assert!(top[0].1 >= top[1].1 && top[1].1 >= top[2].1);
    }

    /// Normalised pseudo-random vectors; `bias` added to every component
    /// first makes them lean one way, as real embeddings do.
    fn normalised(rows: usize, dims: usize, seed: u64, bias: f32) -> Vec<f32> {
        let mut state = seed | 1;
        let mut data: Vec<f32> = (0..rows * dims)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                (state >> 40) as f32 / (1u64 << 24) as f32 - 0.5 + bias
            })
            .collect();
        for row in data.chunks_exact_mut(dims) {
            let norm = row.iter().map(|x| x * x).sum::<f32>().sqrt();
            row.iter_mut().for_each(|x| *x /= norm);
        }
        data
    }

    fn loaded(data: &[f32], dims: usize) -> LoadedVectors {
        let mut out = LoadedVectors {
            dims,
            ..LoadedVectors::default()
        };
        let mut codes = Vec::new();
        for (i, row) in data.chunks_exact(dims).enumerate() {
            out.ids.push(1000 + i as i64);
            out.push(row, &mut codes);
        }
        out
    }

    #[test]
    fn quantized_search_with_rescoring_recalls_the_exact_top_10() {
        // Small enough for a debug build; the bench measures 100,000 x 768.
        // 385 dimensions: not a multiple of the dot products' chunks.
        let (rows, dims) = (6_000, 385);
        for bias in [0.0, 0.3] {
            let data = normalised(rows, dims, 42, bias);
            let vectors = loaded(&data, dims);
            assert_eq!(vectors.bytes(), rows * plane_bytes(dims) * 2 + rows * 12);
            let queries = normalised(16, dims, 7, bias);
            let mut found = 0;
            for query in queries.chunks_exact(dims) {
                let exact: Vec<i64> = top_k_scan(&data, dims, query, 10)
                    .into_iter()
                    .map(|(row, _)| 1000 + row as i64)
                    .collect();
                let row_of = |id: i64| (id - 1000) as usize;
                let hits = vectors
                    .top_k_with(query, 10, |id| {
                        let row = row_of(id);
                        Ok(Some(dot(&data[row * dims..(row + 1) * dims], query)))
                    })
                    .unwrap();
                assert_eq!(hits.len(), 10);
                for (id, score) in &hits {
                    let row = row_of(*id);
                    assert_eq!(*score, dot(&data[row * dims..(row + 1) * dims], query));
                }
                found += hits.iter().filter(|(id, _)| exact.contains(id)).count();
            }
            let recall = found as f64 / (16.0 * 10.0);
            assert!(recall >= 0.99, "recall@10 {recall} with bias {bias}");
        }
    }

    #[test]
    fn candidates_without_an_exact_score_keep_their_approximate_one() {
        let dims = 24;
        let data = normalised(50, dims, 5, 0.0);
        let vectors = loaded(&data, dims);
        let query = &data[3 * dims..4 * dims];
        let hits = vectors.top_k_with(query, 3, |_| Ok(None)).unwrap();
        assert_eq!(hits[0].0, 1003, "the query's own row first");
        assert!((hits[0].1 - 1.0).abs() < 0.02, "{}", hits[0].1);
    }

    #[test]
    fn an_empty_index_or_a_query_of_another_size_finds_nothing() {
        let empty = LoadedVectors::default();
        assert!(empty.candidates(&[1.0; 8], 5).is_empty());
        let vectors = loaded(&normalised(10, 8, 1, 0.0), 8);
        assert!(vectors.candidates(&[1.0; 7], 5).is_empty());
        assert!(vectors.candidates(&[1.0; 8], 0).is_empty());
        assert_eq!(vectors.candidates(&[1.0; 8], 50).len(), 10);
    }

    #[test]
    fn loading_keeps_codes_and_rescores_from_the_index() {
        let dir = tempfile::tempdir().unwrap();
        let conn = store::open(&store::db_path(dir.path())).unwrap();
        let empty = LoadedVectors::load(&conn).unwrap();
        assert!(empty.is_empty());
        assert!(empty.top_k(&conn, &[1.0; 4], 3).unwrap().is_empty());

        store::set_meta(&conn, "embed_dims", "4").unwrap();
        let vectors = [
            [0.5f32, 0.5, 0.5, 0.5],
            [1.0, 0.0, 0.0, 0.0],
            [0.0, 0.6, 0.8, 0.0],
        ];
        for (i, v) in vectors.iter().enumerate() {
            let hash = format!("h{i}");
            conn.execute(
                "INSERT INTO chunks(id, path, start_line, end_line, hash, text) VALUES (?1, 'a.md', 1, 1, ?2, 'x')",
                rusqlite::params![10 + i as i64, hash],
            )
            .unwrap();
            conn.execute(
                "INSERT INTO embeddings(hash, vector) VALUES (?1, ?2)",
                rusqlite::params![hash, store::vector_to_blob(v)],
            )
            .unwrap();
        }
        // A leftover of another size is skipped.
        conn.execute(
            "INSERT INTO chunks(id, path, start_line, end_line, hash, text) VALUES (20, 'a.md', 2, 2, 'odd', 'y')",
            [],
        )
        .unwrap();
        conn.execute(
            "INSERT INTO embeddings(hash, vector) VALUES ('odd', ?1)",
            [store::vector_to_blob(&[1.0; 3])],
        )
        .unwrap();

        let loaded = LoadedVectors::load(&conn).unwrap();
        assert_eq!(loaded.ids, [10, 11, 12]);
        // Four dimensions take a block of each plane a row.
        assert_eq!(loaded.coarse.len(), 3 * 32);
        assert_eq!(loaded.bytes(), 3 * 64 + 3 * 4 + 3 * 8);
        let query = [0.0f32, 0.8, 0.6, 0.0];
        let hits = loaded.top_k(&conn, &query, 2).unwrap();
        // Exact scores, read back from the stored f32 vectors.
        assert_eq!(
            hits,
            [
                (12, dot(&vectors[2], &query)),
                (10, dot(&vectors[0], &query))
            ]
        );
    }
}
