//! The best rows of a scan by score: a bounded heap over batches of
//! scores.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

/// Rows scored per call of a batch scorer.
const BATCH_ROWS: usize = 256;

/// The rows of `rows` with the highest score, best first, `score_batch`
/// writing the scores of a range of rows (at most [`BATCH_ROWS`]). A
/// min-heap of `k` keeps memory flat.
pub fn top_k_rows(
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
