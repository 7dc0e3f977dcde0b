//! Vectors kept as 8-bit codes for the scan, one byte a dimension and one
//! scale a vector, stored as two 4-bit planes: the high nibble of every
//! code (the coarse plane) in one array and the low nibble (the fine plane)
//! in another. The first pass of a search reads only the coarse plane
//! (half the bytes: the scan's cost is its memory traffic); the rows it
//! keeps are scored again with both planes, which gives the exact 8-bit
//! dot product. The memory is the same as one array of 8-bit codes.
//!
//! Each vector is scaled so that its largest component maps to ±127 (a
//! per-vector scale: on the memory bench's data it ranks better before
//! rescoring than one scale for all, 0.988 against 0.978 recall@10). The
//! codes only pick candidates; their exact `f32` scores decide the order
//! (see `LoadedVectors::top_k`).
//!
//! A code `c` in -127..=127 is `16 * (high - 8) + low`, with `high` (the
//! arithmetic `c >> 4`, plus 8) and `low` (`c & 15`) both in 0..=15: as
//! unsigned nibbles they multiply signed query codes with the packed
//! unsigned-by-signed multiply-add x86 has had since SSSE3.

/// Dimensions one block of a plane holds: 32 bytes, the low nibbles
/// dimensions 0..32 of the block and the high nibbles 32..64, so that both
/// halves meet the query codes in their own order.
pub const BLOCK_DIMS: usize = 64;
const BLOCK_BYTES: usize = BLOCK_DIMS / 2;

/// The largest code; -128 is never used, so a code's negation is a code.
const MAX_CODE: f32 = 127.0;

/// Blocks whose products a 16-bit lane can sum without overflow: in the
/// portable loop a block adds two products to a lane, at most
/// 2 x 15 x 127 = 3,810, eight blocks 30,480.
const BLOCKS_PER_I16_SUM: usize = 8;

/// The same bound for the AVX2 loop, whose lanes take four products a
/// block (a multiply-add sums adjacent pairs, and the two halves are
/// added): at most 7,620 a block, four blocks 30,480.
#[cfg(target_arch = "x86_64")]
const BLOCKS_PER_I16_SUM_AVX2: usize = 4;

/// Bytes of one row in one plane: the dimensions rounded up to a block.
pub fn plane_bytes(dims: usize) -> usize {
    dims.div_ceil(BLOCK_DIMS) * BLOCK_BYTES
}

/// A query as 8-bit codes, padded with zeros to whole blocks.
#[derive(Debug)]
pub struct QueryCodes {
    pub codes: Vec<i8>,
    pub scale: f32,
    /// The sum of the codes: the nibbles' offset and the expected low
    /// nibble enter every row's dot product through it.
    sum: i32,
}

impl QueryCodes {
    pub fn new(query: &[f32]) -> Self {
        let mut codes = Vec::with_capacity(plane_bytes(query.len()) * 2);
        let scale = quantize_into(query, &mut codes);
        codes.resize(plane_bytes(query.len()) * 2, 0);
        let sum = codes.iter().map(|c| i32::from(*c)).sum();
        Self { codes, scale, sum }
    }

    /// The 8-bit dot product of a row whose planes are `coarse` and `fine`.
    pub fn dot(&self, coarse: &[u8], fine: &[u8]) -> i32 {
        16 * (dot_nibbles(coarse, &self.codes) - 8 * self.sum) + dot_nibbles(fine, &self.codes)
    }

    /// Estimates of [`Self::dot`] from the coarse plane alone (each low
    /// nibble taken at its mean, 7.5), times the row's scale: for the
    /// consecutive rows `coarse_rows` holds, one scale and one score each.
    pub fn coarse_scores(&self, coarse_rows: &[u8], scales: &[f32], out: &mut [f32]) {
        let stride = self.codes.len() / 2;
        if stride == 0 {
            return;
        }
        let offset = 120.5 * self.sum as f32;
        let mut dots = [0i32; SCORE_BATCH];
        let batches = coarse_rows
            .chunks(stride * SCORE_BATCH)
            .zip(scales.chunks(SCORE_BATCH))
            .zip(out.chunks_mut(SCORE_BATCH));
        for ((rows, scales), out) in batches {
            let dots = &mut dots[..out.len()];
            dot_nibbles_rows(rows, &self.codes, dots);
            for ((score, dot), scale) in out.iter_mut().zip(dots.iter()).zip(scales) {
                *score = (16.0 * *dot as f32 - offset) * scale;
            }
        }
    }
}

/// Rows per call of the row kernel: the CPU check once per batch, not
/// once per row.
const SCORE_BATCH: usize = 64;

/// `vector`'s codes appended to `out`; returns the scale that maps a code
/// back to its component (`component ≈ code * scale`). A zero vector gets
/// zero codes and scale 0.
pub fn quantize_into(vector: &[f32], out: &mut Vec<i8>) -> f32 {
    let largest = vector.iter().fold(0f32, |m, x| m.max(x.abs()));
    if largest == 0.0 || !largest.is_finite() {
        out.extend(std::iter::repeat_n(0, vector.len()));
        return 0.0;
    }
    let scale = largest / MAX_CODE;
    out.extend(
        vector
            .iter()
            // In range by construction; the clamp keeps rounding honest.
            .map(|x| (x / scale).round().clamp(-MAX_CODE, MAX_CODE) as i8),
    );
    scale
}

/// `codes`' two planes appended to `coarse` and `fine`, padded to whole
/// blocks (a padding code is 0).
pub fn split_into(codes: &[i8], coarse: &mut Vec<u8>, fine: &mut Vec<u8>) {
    let mut block = [0i8; BLOCK_DIMS];
    for chunk in codes.chunks(BLOCK_DIMS) {
        block.fill(0);
        block[..chunk.len()].copy_from_slice(chunk);
        let (first, second) = block.split_at(BLOCK_BYTES);
        for (a, b) in first.iter().zip(second) {
            coarse.push(high_nibble(*a) | high_nibble(*b) << 4);
            fine.push(low_nibble(*a) | low_nibble(*b) << 4);
        }
    }
}

fn high_nibble(code: i8) -> u8 {
    ((code >> 4) + 8) as u8
}

fn low_nibble(code: i8) -> u8 {
    code as u8 & 15
}

/// The dot product of a plane row (unsigned nibbles) with query codes
/// twice its length. On x86-64 with AVX2, packed multiply-adds over 32
/// bytes.
pub fn dot_nibbles(plane: &[u8], query: &[i8]) -> i32 {
    let mut out = [0];
    dot_nibbles_rows(plane, query, &mut out);
    out[0]
}

/// [`dot_nibbles`] of each row of `rows` (half the query's length each),
/// into `out`. With AVX2 (chosen at run time: the portable loop, even
/// compiled for AVX2, is about twice as slow on this bench's machine)
/// packed multiply-adds over 32 bytes.
pub fn dot_nibbles_rows(rows: &[u8], query: &[i8], out: &mut [i32]) {
    let stride = (query.len() / 2).max(1);
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: calling a function compiled for AVX2 needs only a CPU
        // with AVX2, which was just checked.
        unsafe { dot_nibbles_rows_avx2(rows, stride, query, out) };
        return;
    }
    for (row, dot) in rows.chunks_exact(stride).zip(out) {
        *dot = dot_nibbles_portable(row, query);
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn dot_nibbles_rows_avx2(rows: &[u8], stride: usize, query: &[i8], out: &mut [i32]) {
    for (row, dot) in rows.chunks_exact(stride).zip(out) {
        *dot = dot_nibbles_avx2(row, query);
    }
}

/// The dot product in plain Rust: 16-bit lanes summed over up to
/// [`BLOCKS_PER_I16_SUM`] blocks, then widened.
fn dot_nibbles_portable(plane: &[u8], query: &[i8]) -> i32 {
    let mut total = 0;
    let blocks = plane
        .chunks(BLOCK_BYTES * BLOCKS_PER_I16_SUM)
        .zip(query.chunks(BLOCK_DIMS * BLOCKS_PER_I16_SUM));
    for (bytes, codes) in blocks {
        let mut lanes = [0i16; BLOCK_BYTES];
        for (x, q) in bytes
            .chunks_exact(BLOCK_BYTES)
            .zip(codes.chunks_exact(BLOCK_DIMS))
        {
            let (first, second) = q.split_at(BLOCK_BYTES);
            for i in 0..BLOCK_BYTES {
                let low = i16::from(x[i] & 15) * i16::from(first[i]);
                let high = i16::from(x[i] >> 4) * i16::from(second[i]);
                lanes[i] += low + high;
            }
        }
        total += lanes.iter().map(|v| i32::from(*v)).sum::<i32>();
    }
    total
}

/// [`dot_nibbles_portable`] with AVX2 intrinsics: per block, the two
/// nibble halves masked out, `maddubs` (unsigned nibble x signed code,
/// adjacent pairs summed into 16 bits), summed in 16 bits over up to
/// [`BLOCKS_PER_I16_SUM_AVX2`] blocks, then widened by `madd` with ones.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline]
fn dot_nibbles_avx2(plane: &[u8], query: &[i8]) -> i32 {
    use std::arch::x86_64::*;
    let blocks = plane.len() / BLOCK_BYTES;
    assert!(query.len() >= blocks * BLOCK_DIMS, "query shorter than row");
    let low_mask = _mm256_set1_epi8(15);
    let ones = _mm256_set1_epi16(1);
    let mut sum = _mm256_setzero_si256();
    let mut block = 0;
    while block < blocks {
        let end = (block + BLOCKS_PER_I16_SUM_AVX2).min(blocks);
        let mut lanes = _mm256_setzero_si256();
        while block < end {
            // SAFETY: `block < blocks` keeps the 32 bytes read from the row
            // and the 64 read from the query inside their slices (asserted
            // above); unaligned loads accept any address.
            let (x, first, second) = unsafe {
                let q = query.as_ptr().add(block * BLOCK_DIMS);
                (
                    _mm256_loadu_si256(plane.as_ptr().add(block * BLOCK_BYTES).cast()),
                    _mm256_loadu_si256(q.cast()),
                    _mm256_loadu_si256(q.add(BLOCK_BYTES).cast()),
                )
            };
            let low = _mm256_and_si256(x, low_mask);
            let high = _mm256_and_si256(_mm256_srli_epi16::<4>(x), low_mask);
            let products = _mm256_add_epi16(
                _mm256_maddubs_epi16(low, first),
                _mm256_maddubs_epi16(high, second),
            );
            lanes = _mm256_add_epi16(lanes, products);
            block += 1;
        }
        sum = _mm256_add_epi32(sum, _mm256_madd_epi16(lanes, ones));
    }
    let half = _mm_add_epi32(
        _mm256_castsi256_si128(sum),
        _mm256_extracti128_si256(sum, 1),
    );
    let pairs = _mm_add_epi32(half, _mm_shuffle_epi32::<0b01_00_11_10>(half));
    let total = _mm_add_epi32(pairs, _mm_shuffle_epi32::<0b10_11_00_01>(pairs));
    _mm_cvtsi128_si32(total)
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

    fn naive_dot(a: &[i8], b: &[i8]) -> i32 {
        a.iter()
            .zip(b)
            .map(|(x, y)| i32::from(*x) * i32::from(*y))
            .sum()
    }

    /// Codes whose planes are split, and the query codes, padded alike.
    fn planes(codes: &[i8]) -> (Vec<u8>, Vec<u8>) {
        let (mut coarse, mut fine) = (Vec::new(), Vec::new());
        split_into(codes, &mut coarse, &mut fine);
        (coarse, fine)
    }

    #[test]
    fn a_round_trip_is_within_half_a_step_of_each_component() {
        let vector = pseudo_random(768, 7);
        let mut codes = Vec::new();
        let scale = quantize_into(&vector, &mut codes);
        assert_eq!(codes.len(), vector.len());
        let largest = vector.iter().fold(0f32, |m, x| m.max(x.abs()));
        assert!((scale - largest / 127.0).abs() < 1e-9);
        for (x, code) in vector.iter().zip(&codes) {
            assert!(*code > i8::MIN, "-128 is never used");
            assert!((f32::from(*code) * scale - x).abs() <= scale * 0.5 + 1e-7);
        }
        // The largest component maps to an end of the range.
        assert!(codes.iter().any(|c| c.unsigned_abs() == 127));
    }

    #[test]
    fn a_zero_vector_quantizes_to_zeros() {
        let mut codes = vec![5i8];
        assert_eq!(quantize_into(&[0.0; 10], &mut codes), 0.0);
        assert_eq!(codes, [5, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0], "appended");
    }

    #[test]
    fn every_code_splits_into_nibbles_that_give_it_back() {
        for code in -127i8..=127 {
            let (high, low) = (high_nibble(code), low_nibble(code));
            assert!(high < 16 && low < 16, "{code}");
            assert_eq!(16 * (i32::from(high) - 8) + i32::from(low), i32::from(code));
        }
    }

    #[test]
    fn the_planes_dot_product_is_the_8_bit_one_at_any_length() {
        // Lengths below, at and past a block, and not a multiple of it.
        for len in [1, 15, 32, 63, 64, 65, 100, 385, 768, 769, 1536] {
            let row = pseudo_random(len, len as u64);
            let query = pseudo_random(len, 99);
            let mut codes = Vec::new();
            quantize_into(&row, &mut codes);
            let (coarse, fine) = planes(&codes);
            assert_eq!(coarse.len(), plane_bytes(len));
            assert_eq!(fine.len(), plane_bytes(len));
            let q = QueryCodes::new(&query);
            assert_eq!(q.codes.len(), plane_bytes(len) * 2);
            assert_eq!(
                q.dot(&coarse, &fine),
                naive_dot(&codes, &q.codes[..len]),
                "length {len}"
            );
        }
    }

    #[test]
    fn the_avx2_dot_matches_the_portable_one() {
        // Extremes first: the 16-bit sums' bound is reached, not passed.
        let cases: Vec<(Vec<u8>, Vec<i8>)> = vec![
            (vec![0xff; plane_bytes(1536)], vec![127; 1536]),
            (vec![0xff; plane_bytes(1536)], vec![-127; 1536]),
            (vec![0; plane_bytes(768)], vec![-127; 768]),
        ];
        let random = [64, 384, 768, 1024, 4096].map(|len| {
            let plane = pseudo_random(plane_bytes(len), len as u64)
                .iter()
                .map(|x| ((x + 0.5) * 256.0) as u8)
                .collect();
            let q = QueryCodes::new(&pseudo_random(len, 3));
            (plane, q.codes)
        });
        for (plane, query) in cases.into_iter().chain(random) {
            let naive: i32 = plane
                .chunks_exact(BLOCK_BYTES)
                .zip(query.chunks_exact(BLOCK_DIMS))
                .map(|(x, q)| {
                    (0..BLOCK_BYTES)
                        .map(|i| {
                            i32::from(x[i] & 15) * i32::from(q[i])
                                + i32::from(x[i] >> 4) * i32::from(q[BLOCK_BYTES + i])
                        })
                        .sum::<i32>()
                })
                .sum();
            assert_eq!(dot_nibbles_portable(&plane, &query), naive);
            assert_eq!(dot_nibbles(&plane, &query), naive);
            #[cfg(target_arch = "x86_64")]
            if std::arch::is_x86_feature_detected!("avx2") {
                // SAFETY: AVX2 was just checked.
                assert_eq!(unsafe { dot_nibbles_avx2(&plane, &query) }, naive);
            }
        }
    }

    #[test]
    fn batched_rows_score_as_single_ones() {
        let dims = 130;
        let (mut coarse, mut fine, mut scales) = (Vec::new(), Vec::new(), Vec::new());
        // More rows than a batch, and not a multiple of one.
        let rows = SCORE_BATCH * 2 + 3;
        for row in 0..rows {
            let mut codes = Vec::new();
            scales.push(quantize_into(&pseudo_random(dims, row as u64), &mut codes));
            split_into(&codes, &mut coarse, &mut fine);
        }
        let q = QueryCodes::new(&pseudo_random(dims, 5));
        let stride = plane_bytes(dims);
        let mut dots = vec![0; rows];
        dot_nibbles_rows(&coarse, &q.codes, &mut dots);
        let mut scores = vec![0.0; rows];
        q.coarse_scores(&coarse, &scales, &mut scores);
        for row in 0..rows {
            let one = &coarse[row * stride..(row + 1) * stride];
            assert_eq!(dots[row], dot_nibbles_portable(one, &q.codes), "row {row}");
            let estimate = 16.0 * dots[row] as f32 - 120.5 * q.sum as f32;
            assert_eq!(scores[row], estimate * scales[row], "row {row}");
        }
    }

    #[test]
    fn the_scaled_dot_approximates_the_f32_one_and_the_coarse_one_roughly() {
        let a = pseudo_random(768, 3);
        let b = pseudo_random(768, 11);
        let mut codes = Vec::new();
        let sa = quantize_into(&a, &mut codes);
        let (coarse, fine) = planes(&codes);
        let q = QueryCodes::new(&b);
        let exact: f32 = a.iter().zip(&b).map(|(x, y)| x * y).sum();
        let approx = q.dot(&coarse, &fine) as f32 * sa * q.scale;
        // Each component is off by at most half a step.
        let bound = 768.0 * (sa * 0.5 * 0.5 + q.scale * 0.5 * 0.5 + sa * q.scale * 0.25);
        assert!((approx - exact).abs() <= bound, "{approx} vs {exact}");
        assert!((approx - exact).abs() < 0.02 * exact.abs().max(1.0));
        // The coarse plane alone: each code off by at most 8.
        let mut rough = [0.0];
        q.coarse_scores(&coarse, &[sa], &mut rough);
        let rough = rough[0] * q.scale;
        let norm: f32 = b.iter().map(|x| x.abs()).sum();
        assert!(
            (rough - approx).abs() <= 8.0 * sa * norm,
            "{rough} vs {approx}"
        );
    }
}
