//! Choosing a matrix-vector unit's folding for a target initiation
//! interval: a layer's `pe: auto` and `simd: auto` with the model's
//! `target_ii` (`docs/hardware.md`, "Folding"), as FINN's folding step
//! (`SetFolding`) chooses PE and SIMD for a target cycle count.
//!
//! A unit with `outputs` outputs and `inputs` inputs folded by `(pe, simd)`
//! takes `ceil(outputs / pe) * ceil(inputs / simd)` cycles per vector, and
//! a convolution runs it once per output pixel (`repeats`). The choice
//! takes only divisors (no lane idles), SIMD first in increasing order until
//! the layer's cycles reach the target, then PE; a factor the model file
//! gives is kept. When even full parallelism misses the target, it is the
//! largest (the report shows the layer's cycles).

/// Cycles per input vector: `repeats * ceil(outputs / pe) * ceil(inputs / simd)`.
pub fn cycles(outputs: usize, inputs: usize, repeats: usize, pe: usize, simd: usize) -> u64 {
    repeats as u64 * outputs.div_ceil(pe.max(1)) as u64 * inputs.div_ceil(simd.max(1)) as u64
}

/// The folding `(pe, simd)` for `target` cycles per input vector (see the
/// module documentation); `pe` or `simd` given (`Some`) are kept.
pub fn choose(outputs: usize, inputs: usize, repeats: usize, target: u64, pe: Option<usize>, simd: Option<usize>) -> (usize, usize) {
    let divisors = |n: usize| (1..=n.max(1)).filter(move |d| n.is_multiple_of(*d));
    let mut p = pe.unwrap_or(1);
    let mut s = simd.unwrap_or(1);
    if simd.is_none() {
        for d in divisors(inputs) {
            s = d;
            if cycles(outputs, inputs, repeats, p, s) <= target {
                break;
            }
        }
    }
    if pe.is_none() && cycles(outputs, inputs, repeats, p, s) > target {
        for d in divisors(outputs) {
            p = d;
            if cycles(outputs, inputs, repeats, p, s) <= target {
                break;
            }
        }
    }
    (p, s)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Worked by hand: 784 inputs (divisors 1, 2, 4, 7, 8, 14, 16, 28, 49,
    /// 56, ...), 200 outputs, target 56: SIMD alone reaches 200 * 1 = 200 at
    /// 784, so SIMD is 784 and then PE the first divisor of 200 with
    /// ceil(200 / pe) <= 56: 4 (50 cycles).
    #[test]
    fn simd_first_then_pe() {
        assert_eq!(choose(200, 784, 1, 56, None, None), (4, 784));
        assert_eq!(cycles(200, 784, 1, 4, 784), 50);
        // A target SIMD alone meets: 10 outputs, 100 inputs, 200 cycles:
        // 10 * ceil(100 / s) <= 200 first at s = 5 (10 * 20).
        assert_eq!(choose(10, 100, 1, 200, None, None), (1, 5));
        // A convolution: 196 pixels, 16 filters, 72 window values, target
        // 1,000: 196 * 16 * ceil(72 / s) <= 1000 never (196 * 16 > 1000)
        // with pe 1, so s = 72; then 196 * ceil(16 / p) <= 1000: p = 4
        // (784).
        assert_eq!(choose(16, 72, 196, 1000, None, None), (4, 72));
        // A given factor is kept; the other fills in: PE 8 leaves 25
        // neuron folds, so ceil(784 / s) <= 2: s = 392.
        assert_eq!(choose(200, 784, 1, 56, Some(8), None), (8, 392));
        assert_eq!(choose(200, 784, 1, 56, None, Some(16)), (200, 16));
        // Unreachable: full parallelism.
        assert_eq!(choose(16, 72, 196, 10, None, None), (16, 72));
    }
}
