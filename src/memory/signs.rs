//! One bit a dimension, the sign of each code, for the scan's first pass:
//! 96 bytes a row at 768 dimensions, an eighth of the two 4-bit planes.
//! The pass only has to keep a pool that holds the true best rows; the
//! 8-bit codes then rank the pool and the stored `f32` vectors the best
//! of it (see `LoadedVectors::candidates`).
//!
//! The query keeps more than its signs (a hamming distance ranks much
//! worse): each component becomes one of sixteen odd levels -15..=15
//! (`2u - 15` for a 4-bit `u`), and a row's score is the sum of the levels
//! where its bits are set minus the sum where they are not. Up to a
//! constant that is `2 * sum(u where set) - 15 * popcount(row)`, and the
//! first sum is four AND-and-popcounts, one per bit of `u`.

/// Bits of the query kept for the sign pass: four planes of `u`.
const QUERY_BITS: usize = 4;

/// 64-bit words of one row's signs.
pub fn sign_words(dims: usize) -> usize {
    dims.div_ceil(64)
}

/// The signs of `codes` (a bit set where the code is above zero) appended
/// to `out`, padded to whole words with clear bits.
pub fn push_signs(codes: &[i8], out: &mut Vec<u64>) {
    for chunk in codes.chunks(64) {
        let word = chunk
            .iter()
            .enumerate()
            .fold(0u64, |w, (i, c)| w | u64::from(*c > 0) << i);
        out.push(word);
    }
}

/// A query's levels as bit planes, word-major: word `w` of plane `j` at
/// `planes[w * QUERY_BITS + j]`.
#[derive(Debug)]
pub struct SignQuery {
    planes: Vec<u64>,
}

impl SignQuery {
    pub fn new(query: &[f32]) -> Self {
        let largest = query.iter().fold(0f32, |m, x| m.max(x.abs()));
        let mut planes = vec![0u64; sign_words(query.len()) * QUERY_BITS];
        if largest == 0.0 || !largest.is_finite() {
            return Self { planes };
        }
        for (i, x) in query.iter().enumerate() {
            // -largest..=largest onto 0..=15; the clamp keeps rounding honest.
            let u = ((x / largest + 1.0) * 7.5).round().clamp(0.0, 15.0) as u64;
            for (j, plane) in planes[(i / 64) * QUERY_BITS..][..QUERY_BITS]
                .iter_mut()
                .enumerate()
            {
                *plane |= (u >> j & 1) << (i % 64);
            }
        }
        Self { planes }
    }

    /// The score of each row of `rows` (consecutive rows of signs, as many
    /// words a row as the query has) into `out`. With the CPU's `popcnt`
    /// where it has one (chosen at run time: the baseline x86-64 target
    /// counts bits with a dozen shifts and masks).
    pub fn scores(&self, rows: &[u64], out: &mut [i32]) {
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("popcnt") {
            // SAFETY: calling a function compiled for `popcnt` needs only a
            // CPU with it, which was just checked.
            unsafe { self.scores_popcnt(rows, out) };
            return;
        }
        self.scores_portable(rows, out);
    }

    /// The rows of `signs` (`rows` of them) whose scores are among the
    /// best `pool`, in row order; rows that tie with the last one kept are
    /// kept too. A histogram of the scores (integers within ±15 a
    /// dimension) gives the threshold in two passes, with no heap.
    pub fn pool(&self, signs: &[u64], rows: usize, pool: usize) -> Vec<usize> {
        let words = self.planes.len() / QUERY_BITS;
        if pool >= rows || words == 0 {
            return (0..rows).collect();
        }
        let mut scores = vec![0i32; rows];
        self.scores(&signs[..rows * words], &mut scores);
        let bound = 15 * 64 * words as i32;
        let mut counts = vec![0usize; 2 * bound as usize + 1];
        for score in &scores {
            counts[(score + bound) as usize] += 1;
        }
        let (mut kept, mut threshold) = (0, -bound);
        for (bin, count) in counts.iter().enumerate().rev() {
            kept += count;
            if kept >= pool {
                threshold = bin as i32 - bound;
                break;
            }
        }
        let mut out = Vec::with_capacity(kept);
        out.extend((0..rows).filter(|row| scores[*row] >= threshold));
        out
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "popcnt")]
    fn scores_popcnt(&self, rows: &[u64], out: &mut [i32]) {
        self.scores_portable(rows, out);
    }

    #[inline(always)]
    fn scores_portable(&self, rows: &[u64], out: &mut [i32]) {
        let words = self.planes.len() / QUERY_BITS;
        if words == 0 {
            return;
        }
        for (row, score) in rows.chunks_exact(words).zip(out) {
            let (mut set, mut weighted) = (0u32, [0u32; QUERY_BITS]);
            for (word, planes) in row.iter().zip(self.planes.chunks_exact(QUERY_BITS)) {
                set += word.count_ones();
                for (sum, plane) in weighted.iter_mut().zip(planes) {
                    *sum += (word & plane).count_ones();
                }
            }
            let u_sum = weighted[0] + 2 * weighted[1] + 4 * weighted[2] + 8 * weighted[3];
            // Within ±15 a dimension: no overflow at any real width.
            *score = 2 * u_sum as i32 - 15 * set as i32;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pseudo_random(n: usize, seed: u64) -> Vec<f32> {
        let mut state = seed | 1;
        (0..n)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                (state >> 40) as f32 / (1u64 << 24) as f32 - 0.5
            })
            .collect()
    }

    /// The score spelled out: the query's levels, plus where a bit is
    /// set, minus where it is clear, offset as `scores` leaves it.
    fn naive(query: &[f32], codes: &[i8]) -> i32 {
        let largest = query.iter().fold(0f32, |m, x| m.max(x.abs()));
        let level = |x: f32| 2 * ((x / largest + 1.0) * 7.5).round().clamp(0.0, 15.0) as i32 - 15;
        let signed: i32 = query
            .iter()
            .zip(codes)
            .map(|(x, c)| if *c > 0 { level(*x) } else { -level(*x) })
            .sum();
        let all: i32 = query.iter().map(|x| level(*x)).sum();
        // signed = 2 * (sum where set) - all; `scores` gives sum where set.
        (signed + all) / 2
    }

    #[test]
    fn scores_match_the_levels_summed_by_hand_at_any_length() {
        for len in [1, 63, 64, 65, 385, 768] {
            let query = pseudo_random(len, 9);
            let q = SignQuery::new(&query);
            let (mut signs, mut all_codes) = (Vec::new(), Vec::new());
            for row in 0..5 {
                let codes: Vec<i8> = pseudo_random(len, row + 100)
                    .iter()
                    .map(|x| (x * 254.0) as i8)
                    .collect();
                push_signs(&codes, &mut signs);
                all_codes.push(codes);
            }
            assert_eq!(signs.len(), 5 * sign_words(len));
            let mut scores = vec![0; 5];
            q.scores(&signs, &mut scores);
            let mut portable = vec![0; 5];
            q.scores_portable(&signs, &mut portable);
            assert_eq!(scores, portable);
            for (score, codes) in scores.iter().zip(&all_codes) {
                assert_eq!(*score, naive(&query, codes), "length {len}");
            }
        }
    }

    #[test]
    fn a_row_like_the_query_outscores_its_opposite() {
        let query = pseudo_random(100, 4);
        let q = SignQuery::new(&query);
        let (mut like, mut unlike) = (Vec::new(), Vec::new());
        let codes: Vec<i8> = query.iter().map(|x| (x * 200.0) as i8).collect();
        push_signs(&codes, &mut like);
        let negated: Vec<i8> = codes.iter().map(|c| -c).collect();
        push_signs(&negated, &mut unlike);
        let mut scores = [0; 2];
        q.scores(&[like.clone(), unlike.clone()].concat(), &mut scores);
        assert!(scores[0] > scores[1], "{scores:?}");
        // A zero query has no levels to sum; it ranks nothing but fails nothing.
        let zero = SignQuery::new(&[0.0; 100]);
        assert_eq!(zero.pool(&[like, unlike].concat(), 2, 1).len(), 1);
    }

    #[test]
    fn the_pool_keeps_the_best_scores_and_their_ties() {
        let dims = 130;
        let query = pseudo_random(dims, 1);
        let q = SignQuery::new(&query);
        let mut signs = Vec::new();
        let rows = 300;
        for row in 0..rows {
            let codes: Vec<i8> = pseudo_random(dims, row as u64 + 7)
                .iter()
                .map(|x| (x * 254.0) as i8)
                .collect();
            push_signs(&codes, &mut signs);
        }
        let mut scores = vec![0; rows];
        q.scores(&signs, &mut scores);
        let mut sorted = scores.clone();
        sorted.sort_unstable_by(|a, b| b.cmp(a));
        for want in [1, 10, 37, 299] {
            let pool = q.pool(&signs, rows, want);
            let threshold = sorted[want - 1];
            let expected: Vec<usize> = (0..rows).filter(|r| scores[*r] >= threshold).collect();
            assert_eq!(pool, expected, "pool of {want}");
            assert!(pool.len() >= want);
        }
        assert_eq!(q.pool(&signs, rows, rows).len(), rows);
    }
}
