//! Vectors kept as 8-bit codes for the scan: one byte a dimension and one
//! scale a vector (a quarter of the `f32` bytes, so a quarter of the memory
//! traffic), with an integer dot product the compiler vectorizes.
//!
//! Each vector is scaled so that its largest component maps to ±127 (a
//! per-vector scale: on the memory bench's data it ranks better before
//! rescoring than one scale for all, 0.988 against 0.978 recall@10). The
//! scan only picks candidates; their exact `f32` scores decide the order
//! (see `LoadedVectors::top_k`).

/// Bytes per step of the integer dot product: sixteen independent `i32`
/// accumulators, each fed by an `i8 x i8` product widened through `i16`,
/// the shape that compiles to packed multiply-adds.
const CHUNK: usize = 16;

/// The largest code; -128 is never used, so a code's negation is a code.
const MAX_CODE: f32 = 127.0;

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

/// Integer dot product of two code rows of the same length. On x86-64
/// with AVX2 the same code compiled for AVX2 (packed 16-bit multiply-adds
/// over 32 bytes: about 1.7x faster per scan than the baseline's SSE2 on
/// this bench's machine).
pub fn dot_codes(a: &[i8], b: &[i8]) -> i32 {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: calling a function compiled for AVX2 needs only a CPU
        // with AVX2, which was just checked; the body is safe Rust.
        return unsafe { dot_codes_avx2(a, b) };
    }
    dot_codes_portable(a, b)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn dot_codes_avx2(a: &[i8], b: &[i8]) -> i32 {
    dot_codes_portable(a, b)
}

/// The dot product for whatever the target's vector unit is.
#[inline(always)]
fn dot_codes_portable(a: &[i8], b: &[i8]) -> i32 {
    let mut lanes = [0i32; CHUNK];
    let a_chunks = a.chunks_exact(CHUNK);
    let b_chunks = b.chunks_exact(CHUNK);
    let tail: i32 = a_chunks
        .remainder()
        .iter()
        .zip(b_chunks.remainder())
        .map(|(x, y)| i32::from(*x) * i32::from(*y))
        .sum();
    for (x, y) in a_chunks.zip(b_chunks) {
        for i in 0..CHUNK {
            // 127 * 127 fits an i16; the sum does not, hence i32 lanes.
            lanes[i] += i32::from(i16::from(x[i]) * i16::from(y[i]));
        }
    }
    lanes.iter().sum::<i32>() + tail
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
    fn the_integer_dot_matches_the_naive_sum_at_any_length() {
        // Lengths below, at and past the chunk, and not a multiple of it.
        for len in [0, 1, 15, 16, 17, 33, 100, 768, 769] {
            let a: Vec<i8> = (0..len).map(|i| ((i * 37) % 255) as i16 as i8).collect();
            let b: Vec<i8> = (0..len).map(|i| (127 - (i * 11) % 255) as i8).collect();
            let naive: i32 = a
                .iter()
                .zip(&b)
                .map(|(x, y)| i32::from(*x) * i32::from(*y))
                .sum();
            assert_eq!(dot_codes(&a, &b), naive, "length {len}");
            assert_eq!(dot_codes_portable(&a, &b), naive, "length {len}");
            #[cfg(target_arch = "x86_64")]
            if std::arch::is_x86_feature_detected!("avx2") {
                // SAFETY: AVX2 was just checked.
                assert_eq!(unsafe { dot_codes_avx2(&a, &b) }, naive, "length {len}");
            }
        }
        // The extremes do not overflow.
        let ends = vec![127i8; 768];
        let negated = vec![-127i8; 768];
        assert_eq!(dot_codes(&ends, &negated), -127 * 127 * 768);
    }

    #[test]
    fn the_scaled_integer_dot_approximates_the_f32_one() {
        let a = pseudo_random(768, 3);
        let b = pseudo_random(768, 11);
        let (mut ca, mut cb) = (Vec::new(), Vec::new());
        let sa = quantize_into(&a, &mut ca);
        let sb = quantize_into(&b, &mut cb);
        let exact: f32 = a.iter().zip(&b).map(|(x, y)| x * y).sum();
        let approx = dot_codes(&ca, &cb) as f32 * sa * sb;
        // Each component is off by at most half a step.
        let bound = 768.0 * (sa * 0.5 * 0.5 + sb * 0.5 * 0.5 + sa * sb * 0.25);
        assert!((approx - exact).abs() <= bound, "{approx} vs {exact}");
        assert!((approx - exact).abs() < 0.02 * exact.abs().max(1.0));
    }
}
