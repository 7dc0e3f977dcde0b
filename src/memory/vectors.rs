//! Chunk vectors loaded for searching: one contiguous `f32` array (row i
//! is chunk `ids[i]`), scanned in a single pass with a bounded heap.
//!
//! Vectors are normalised when stored, so cosine similarity is a dot
//! product. The scan is the search's floor (memory bandwidth), so the dot
//! product is written for the compiler to vectorize: eight independent
//! accumulators over fixed-size chunks.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use anyhow::Result;
use rusqlite::Connection;

use super::store;

#[derive(Debug, Default)]
pub struct LoadedVectors {
    /// The index generation these were read at.
    pub generation: u64,
    pub dims: usize,
    pub ids: Vec<i64>,
    pub data: Vec<f32>,
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
        out.ids.reserve(count as usize);
        out.data.reserve(count as usize * dims);
        let mut stmt = conn
            .prepare("SELECT c.id, e.vector FROM chunks c JOIN embeddings e ON e.hash = c.hash")?;
        let mut rows = stmt.query([])?;
        while let Some(row) = rows.next()? {
            let blob = row.get_ref(1)?.as_blob()?;
            // A vector of another size is a leftover the next sync replaces.
            if blob.len() == dims * 4 {
                out.ids.push(row.get(0)?);
                store::extend_from_blob(&mut out.data, blob);
            }
        }
        Ok(out)
    }

    pub fn len(&self) -> usize {
        self.ids.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    /// Bytes held, for the idle drop's log line.
    pub fn bytes(&self) -> usize {
        self.data.len() * 4 + self.ids.len() * 8
    }

    /// The `k` best chunks by cosine similarity, best first.
    pub fn top_k(&self, query: &[f32], k: usize) -> Vec<(i64, f32)> {
        if query.len() != self.dims || self.dims == 0 || k == 0 {
            return Vec::new();
        }
        top_k_parallel(&self.data, self.dims, query, k)
            .into_iter()
            .map(|(row, score)| (self.ids[row], score))
            .collect()
    }
}

/// Rows of `data` (each `dims` long) with the highest dot product with
/// `query`, best first. A min-heap of `k` keeps memory flat.
pub fn top_k_scan(data: &[f32], dims: usize, query: &[f32], k: usize) -> Vec<(usize, f32)> {
    let mut heap: BinaryHeap<Scored> = BinaryHeap::with_capacity(k + 1);
    for (row, vector) in data.chunks_exact(dims).enumerate() {
        let score = dot(vector, query);
        if heap.len() < k {
            heap.push(Scored { score, row });
        } else if heap.peek().is_some_and(|worst| score > worst.score) {
            heap.pop();
            heap.push(Scored { score, row });
        }
    }
    let mut out: Vec<(usize, f32)> = heap.into_iter().map(|s| (s.row, s.score)).collect();
    out.sort_by(|a, b| b.1.total_cmp(&a.1));
    out
}

/// Rows scanned per thread before a second thread is worth starting.
const ROWS_PER_THREAD: usize = 16_384;

/// `top_k_scan` over contiguous shares of the rows on up to as many threads
/// as there are cores (at most 4), merged: one core alone does not reach
/// the memory bandwidth a big index needs.
pub fn top_k_parallel(data: &[f32], dims: usize, query: &[f32], k: usize) -> Vec<(usize, f32)> {
    let rows = data.len() / dims.max(1);
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let threads = cores.min(4).min(rows / ROWS_PER_THREAD).max(1);
    if threads == 1 {
        return top_k_scan(data, dims, query, k);
    }
    let share = rows.div_ceil(threads);
    let scan_share = move |(i, part): (usize, &[f32])| {
        let mut hits = top_k_scan(part, dims, query, k);
        hits.iter_mut().for_each(|(row, _)| *row += i * share);
        hits
    };
    let mut out: Vec<(usize, f32)> = std::thread::scope(|scope| {
        let mut parts = data.chunks(share * dims).enumerate();
        // The first share on this thread, the others on their own.
        let first = parts.next();
        let handles: Vec<_> = parts.map(|p| scope.spawn(move || scan_share(p))).collect();
        let mut out = first.map(scan_share).unwrap_or_default();
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
        let parallel = top_k_parallel(&data, dims, &query, 10);
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
}
