//! gemmlowp's two fixed-point primitives (`fixedpoint/fixedpoint.h`), on
//! which TFLite's double-rounding requantization is built.

/// gemmlowp's `SaturatingRoundingDoublingHighMul(a, b)`: the high 32 bits
/// of `2 * a * b`, rounded.
///
/// Transcribed from gemmlowp: `ab = (i64) a * b`; `nudge = 2^30` if
/// `ab >= 0`, else `1 - 2^30`; the result is `(ab + nudge) / 2^31` with C's
/// division (truncating toward zero), and `a = b = i32::MIN` (the one
/// product that does not fit) saturates to `i32::MAX`.
///
/// In exact terms this is `floor(a * b / 2^31 + 1/2)`: nearest, ties
/// toward positive infinity (also for negative products: the `+ 1` in the
/// negative nudge turns a tie at `-k - 1/2` into `-k`).
pub fn saturating_rounding_doubling_high_mul(a: i32, b: i32) -> i32 {
    if a == i32::MIN && b == i32::MIN {
        return i32::MAX;
    }
    let ab = i64::from(a) * i64::from(b);
    let nudge: i64 = if ab >= 0 { 1 << 30 } else { 1 - (1 << 30) };
    // `/` on i64 truncates toward zero, as C's does; the quotient fits in
    // i32 for every pair except the saturated one.
    ((ab + nudge) / (1i64 << 31)) as i32
}

/// gemmlowp's `RoundingDivideByPOT(x, exponent)`: `x / 2^exponent`
/// rounded to nearest, ties away from zero.
///
/// Transcribed from gemmlowp: `mask = 2^exponent - 1`,
/// `remainder = x & mask`, `threshold = (mask >> 1) + (x < 0)`, and the
/// result is `(x >> exponent) + (remainder > threshold)` (an arithmetic
/// shift). gemmlowp asserts `exponent <= 31`; here the same formula is
/// evaluated in 64 bits, so a larger exponent gives its exact value, 0.
pub fn rounding_divide_by_pot(x: i32, exponent: u32) -> i32 {
    let e = exponent.min(62);
    let x = i64::from(x);
    let mask = (1i64 << e) - 1;
    let remainder = x & mask;
    let threshold = (mask >> 1) + i64::from(x < 0);
    // |x >> e| <= |x|, so the sum fits in i32.
    ((x >> e) + i64::from(remainder > threshold)) as i32
}

#[cfg(test)]
mod tests {
    use super::*;

    // Hand-derived: a * b / 2^31 for a = 2^30 (one half in Q31).
    #[test]
    fn srdhm_halves_and_rounds_ties_up() {
        let half = 1 << 30;
        assert_eq!(saturating_rounding_doubling_high_mul(10, half), 5);
        // 3 * 2^30 / 2^31 = 1.5 -> 2; -1.5 -> -1 (tie toward +inf).
        assert_eq!(saturating_rounding_doubling_high_mul(3, half), 2);
        assert_eq!(saturating_rounding_doubling_high_mul(-3, half), -1);
        // 1 * 2^30 / 2^31 = 0.5 -> 1; -0.5 -> 0.
        assert_eq!(saturating_rounding_doubling_high_mul(1, half), 1);
        assert_eq!(saturating_rounding_doubling_high_mul(-1, half), 0);
        // Just past the negative tie: -(2^30 + 1) / 2^31 < -0.5 -> -1.
        assert_eq!(saturating_rounding_doubling_high_mul(-(half + 1), 1), -1);
        // Just short of the negative tie -> 0.
        assert_eq!(saturating_rounding_doubling_high_mul(-(half - 1), 1), 0);
    }

    #[test]
    fn srdhm_saturates_only_min_times_min() {
        assert_eq!(saturating_rounding_doubling_high_mul(i32::MIN, i32::MIN), i32::MAX);
        // MIN * MAX / 2^31 = -(2^31 - 1) exactly.
        assert_eq!(saturating_rounding_doubling_high_mul(i32::MIN, i32::MAX), -i32::MAX);
        assert_eq!(saturating_rounding_doubling_high_mul(i32::MAX, i32::MAX), i32::MAX - 1);
    }

    #[test]
    fn rdbpot_rounds_ties_away_from_zero() {
        // 5 / 4 = 1.25 -> 1; 6 / 4 = 1.5 -> 2; -6 / 4 = -1.5 -> -2; -5 / 4 -> -1.
        assert_eq!(rounding_divide_by_pot(5, 2), 1);
        assert_eq!(rounding_divide_by_pot(6, 2), 2);
        assert_eq!(rounding_divide_by_pot(-6, 2), -2);
        assert_eq!(rounding_divide_by_pot(-5, 2), -1);
        assert_eq!(rounding_divide_by_pot(-7, 2), -2);
        // -1 / 2 = -0.5 -> -1; 1 / 2 -> 1.
        assert_eq!(rounding_divide_by_pot(-1, 1), -1);
        assert_eq!(rounding_divide_by_pot(1, 1), 1);
        assert_eq!(rounding_divide_by_pot(-123, 0), -123);
        // 2^31 - 1 over 2^31 is just below 1 -> 1; MIN / 2^31 = -1 exactly.
        assert_eq!(rounding_divide_by_pot(i32::MAX, 31), 1);
        assert_eq!(rounding_divide_by_pot(i32::MIN, 31), -1);
        assert_eq!(rounding_divide_by_pot(i32::MIN, 40), 0);
        assert_eq!(rounding_divide_by_pot(i32::MAX, 32), 0);
    }
}
