//! Real multipliers as TFLite stores them: a 32-bit fixed-point multiplier
//! and a power-of-two shift (`QuantizeMultiplier`), and the two ways TFLite
//! applies them to an int32 accumulator (`MultiplyByQuantizedMultiplier`).

use super::error::Int8Error;
use super::gemmlowp::{rounding_divide_by_pot, saturating_rounding_doubling_high_mul};

/// How `MultiplyByQuantizedMultiplier` rounds: the two builds of TFLite
/// (and of CMSIS-NN) that exist.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Rounding {
    /// One rounding of the exact product, nearest with ties toward positive
    /// infinity: TFLite built with `TFLITE_SINGLE_ROUNDING`, CMSIS-NN with
    /// `CMSIS_NN_USE_SINGLE_ROUNDING`. The LiteRT interpreter's reference
    /// int8 kernels were observed to compute this, so it is the default.
    #[default]
    Single,
    /// gemmlowp's two roundings: `SaturatingRoundingDoublingHighMul` (to an
    /// integer, ties toward positive infinity), then `RoundingDivideByPOT`
    /// (ties away from zero). TFLite built without `TFLITE_SINGLE_ROUNDING`.
    Double,
}

/// A real multiplier `m` as TFLite applies it: `m ≈ multiplier * 2^(shift - 31)`
/// with `multiplier` in `0..=2^31-1` and `shift` in `-31..=30`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct QuantizedMultiplier {
    multiplier: i32,
    shift: i32,
}

impl QuantizedMultiplier {
    /// A multiplier and shift as stored (e.g. in a CMSIS-NN parameter
    /// array). Errors unless `multiplier >= 0` and `-31 <= shift <= 30`, the
    /// domain TFLite's single-rounding `MultiplyByQuantizedMultiplier`
    /// checks.
    pub fn new(multiplier: i32, shift: i32) -> Result<Self, Int8Error> {
        if multiplier < 0 || !(-31..=30).contains(&shift) {
            return Err(Int8Error::BadQuantizedMultiplier { multiplier, shift });
        }
        Ok(QuantizedMultiplier { multiplier, shift })
    }

    /// TFLite's `QuantizeMultiplier(real)` as built for `rounding`; see
    /// [`quantize_multiplier_with`].
    pub fn from_real(real: f64, rounding: Rounding) -> Result<Self, Int8Error> {
        let (multiplier, shift) = quantize_multiplier_with(real, rounding)?;
        Ok(QuantizedMultiplier { multiplier, shift })
    }

    /// The 32-bit fixed-point multiplier (`2^30..2^31` unless zero).
    pub fn multiplier(&self) -> i32 {
        self.multiplier
    }

    /// The power-of-two exponent, positive for a left shift.
    pub fn shift(&self) -> i32 {
        self.shift
    }

    /// TFLite's `MultiplyByQuantizedMultiplier(x, multiplier, shift)` for
    /// an int32 `x`, in the given rounding.
    ///
    /// * [`Rounding::Single`]: `(x * multiplier + 2^(t-1)) >> t` in 64 bits
    ///   with `t = 31 - shift`.
    /// * [`Rounding::Double`]: `RoundingDivideByPOT(SRDHM(x * 2^max(shift,0),
    ///   multiplier), max(-shift, 0))`, where `x * 2^left` wraps in 32 bits.
    ///
    /// A result outside int32 (possible only when the real multiplier
    /// exceeds 1) wraps to 32 bits, as `static_cast<int32_t>` and the
    /// unsanitized `int32_t` multiply of a release build do; TFLite's debug
    /// checks would reject it.
    pub fn apply(&self, x: i32, rounding: Rounding) -> i32 {
        match rounding {
            Rounding::Single => {
                let total_shift = 31 - self.shift; // 1..=62
                let round = 1i64 << (total_shift - 1);
                // |x * multiplier| < 2^62 and round <= 2^61: no overflow.
                let result = (i64::from(x) * i64::from(self.multiplier) + round) >> total_shift;
                result as i32
            }
            Rounding::Double => {
                let left = self.shift.max(0) as u32; // 0..=30
                let right = (-self.shift).max(0) as u32; // 0..=31
                let scaled = x.wrapping_mul(1i32 << left);
                rounding_divide_by_pot(saturating_rounding_doubling_high_mul(scaled, self.multiplier), right)
            }
        }
    }
}

/// TFLite's `QuantizeMultiplier(real)` in the default rounding
/// ([`Rounding::Single`]): the `(multiplier, shift)` pair with
/// `real ≈ multiplier * 2^(shift - 31)`. See [`quantize_multiplier_with`].
pub fn quantize_multiplier(real: f64) -> Result<(i32, i32), Int8Error> {
    quantize_multiplier_with(real, Rounding::default())
}

/// TFLite's `QuantizeMultiplier(real)` (`quantization_util.cc`), as built
/// for `rounding`:
///
/// 1. `real == 0` gives `(0, 0)`;
/// 2. `q = frexp(real, &shift)` (`q` in `[0.5, 1)`), and
///    `multiplier = round(q * 2^31)`, ties away from zero (`TfLiteRound`);
/// 3. a multiplier that rounded up to `2^31` is halved and the shift
///    incremented;
/// 4. a shift below -31 (real below about `2^-32`) flushes to `(0, 0)`;
/// 5. single rounding only: a shift above 30 saturates to
///    `(2^31 - 1, 30)`.
///
/// Errors (where TFLite has no defined result): a NaN, infinite or
/// negative `real` (every real multiplier is a ratio of positive scales),
/// and under [`Rounding::Double`] a shift above 30, for which TFLite's
/// `x * (1 << shift)` is undefined.
pub fn quantize_multiplier_with(real: f64, rounding: Rounding) -> Result<(i32, i32), Int8Error> {
    if !real.is_finite() || real < 0.0 {
        return Err(Int8Error::BadRealMultiplier { value: real });
    }
    if real == 0.0 {
        return Ok((0, 0));
    }
    let (mantissa, exponent) = decompose(real);
    // real = mantissa * 2^exponent with 2^52 <= mantissa < 2^53, so frexp
    // gives q = mantissa / 2^53 and shift = exponent + 53, and
    // q * 2^31 = mantissa / 2^22, rounded half up (positive: away from 0).
    let mut shift = exponent + 53;
    let mut q_fixed = (mantissa + (1 << 21)) >> 22;
    if q_fixed == 1 << 31 {
        q_fixed /= 2;
        shift += 1;
    }
    if shift < -31 {
        return Ok((0, 0));
    }
    if shift > 30 {
        match rounding {
            Rounding::Single => return Ok((i32::MAX, 30)),
            Rounding::Double => return Err(Int8Error::MultiplierTooLarge { value: real, shift }),
        }
    }
    // 2^30 <= q_fixed < 2^31 here.
    Ok((q_fixed as i32, shift))
}

/// A positive finite double as `mantissa * 2^exponent` with the mantissa's
/// top bit at position 52 (subnormals normalized).
fn decompose(real: f64) -> (i64, i32) {
    let bits = real.to_bits();
    let biased = ((bits >> 52) & 0x7ff) as i32;
    let fraction = (bits & ((1u64 << 52) - 1)) as i64;
    if biased == 0 {
        // Subnormal: fraction * 2^-1074, fraction != 0 because real != 0.
        let lift = fraction.leading_zeros() as i32 - 11;
        (fraction << lift, -1074 - lift)
    } else {
        (fraction | (1 << 52), biased - 1075)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn qm(real: f64) -> (i32, i32) {
        quantize_multiplier(real).unwrap()
    }

    #[test]
    fn powers_of_two_and_simple_values() {
        // 0.5 = 2^30 * 2^(0 - 31); 1 = 2^30 * 2^(1 - 31); 0.75 = 3 * 2^29 * 2^-31.
        assert_eq!(qm(0.5), (1 << 30, 0));
        assert_eq!(qm(1.0), (1 << 30, 1));
        assert_eq!(qm(0.75), (3 << 29, 0));
        assert_eq!(qm(0.25), (1 << 30, -1));
        assert_eq!(qm(0.0), (0, 0));
        // 1/3: frexp gives 2/3 * 2^-1; round(2/3 * 2^31) = 1431655765.
        assert_eq!(qm(1.0 / 3.0), (1_431_655_765, -1));
    }

    #[test]
    fn rounding_up_to_two_pow_31_halves_the_multiplier() {
        // q = 1 - 2^-40: q * 2^31 = 2^31 - 2^-9 rounds to 2^31, so the
        // multiplier becomes 2^30 and the shift goes from 0 to 1.
        let real = 1.0 - 2f64.powi(-40);
        assert_eq!(qm(real), (1 << 30, 1));
        // The largest q that does not round up: 1 - 2^-32 is exactly
        // 2^31 - 0.5 in Q31, a tie, and ties go away from zero (up).
        assert_eq!(qm(1.0 - 2f64.powi(-32)), (1 << 30, 1));
        // 1 - 2^-31 is 2^31 - 1 exactly.
        assert_eq!(qm(1.0 - 2f64.powi(-31)), (i32::MAX, 0));
    }

    #[test]
    fn ties_in_the_multiplier_round_away_from_zero() {
        // (2^30 + 0.5) * 2^-31 is a tie between 2^30 and 2^30 + 1.
        let real = (2f64.powi(30) + 0.5) * 2f64.powi(-31);
        assert_eq!(qm(real), ((1 << 30) + 1, 0));
        // (2^30 + 1.5) * 2^-31: a tie between 2^30 + 1 and 2^30 + 2.
        let real = (2f64.powi(30) + 1.5) * 2f64.powi(-31);
        assert_eq!(qm(real), ((1 << 30) + 2, 0));
        // Just below a tie rounds down.
        let real = (2f64.powi(30) + 0.5 - 2f64.powi(-20)) * 2f64.powi(-31);
        assert_eq!(qm(real), (1 << 30, 0));
    }

    #[test]
    fn tiny_multipliers_flush_to_zero() {
        // 2^-32 = 0.5 * 2^-31: the smallest shift kept.
        assert_eq!(qm(2f64.powi(-32)), (1 << 30, -31));
        // 2^-33 = 0.5 * 2^-32: shift -32 < -31, flushed.
        assert_eq!(qm(2f64.powi(-33)), (0, 0));
        assert_eq!(qm(1e-300), (0, 0));
        assert_eq!(qm(f64::from_bits(1)), (0, 0)); // smallest subnormal
                                                   // Just below 2^-32 rounds up to 2^31 at shift -32, is halved to
                                                   // shift -31, and so is kept (the flush comes after the halving).
        assert_eq!(qm(2f64.powi(-32) * (1.0 - 2f64.powi(-40))), (1 << 30, -31));
        // Just below 2^-32 but not rounding up: shift -32, flushed.
        assert_eq!(qm(2f64.powi(-32) * (1.0 - 2f64.powi(-20))), (0, 0));
    }

    #[test]
    fn huge_multipliers_saturate_or_error() {
        // 2^29 = 0.5 * 2^30: shift 30, the largest allowed.
        assert_eq!(qm(2f64.powi(29)), (1 << 30, 30));
        assert_eq!(qm(2f64.powi(30)), (i32::MAX, 30));
        assert_eq!(qm(1e300), (i32::MAX, 30));
        assert_eq!(quantize_multiplier_with(2f64.powi(29), Rounding::Double), Ok((1 << 30, 30)));
        assert_eq!(
            quantize_multiplier_with(2f64.powi(30), Rounding::Double),
            Err(Int8Error::MultiplierTooLarge { value: 2f64.powi(30), shift: 31 })
        );
    }

    #[test]
    fn bad_reals_are_errors() {
        for bad in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY, -1.0, -1e-300] {
            assert!(matches!(quantize_multiplier(bad), Err(Int8Error::BadRealMultiplier { .. })));
        }
        assert!(QuantizedMultiplier::new(-1, 0).is_err());
        assert!(QuantizedMultiplier::new(1, 31).is_err());
        assert!(QuantizedMultiplier::new(1, -32).is_err());
        assert!(QuantizedMultiplier::new(i32::MAX, 30).is_ok());
        assert!(QuantizedMultiplier::new(0, -31).is_ok());
    }

    #[test]
    fn apply_single_rounds_ties_up_double_rounds_negative_ties_down() {
        // m = 0.25 exactly: (2^30, -1).
        let quarter = QuantizedMultiplier::new(1 << 30, -1).unwrap();
        // 6 * 0.25 = 1.5 -> 2 in both; -6 * 0.25 = -1.5 -> -1 single, -2 double.
        assert_eq!(quarter.apply(6, Rounding::Single), 2);
        assert_eq!(quarter.apply(6, Rounding::Double), 2);
        assert_eq!(quarter.apply(-6, Rounding::Single), -1);
        assert_eq!(quarter.apply(-6, Rounding::Double), -2);
        // -5 * 0.25 = -1.25 -> -1 in both; -7 * 0.25 = -1.75 -> -2.
        assert_eq!(quarter.apply(-5, Rounding::Single), -1);
        assert_eq!(quarter.apply(-5, Rounding::Double), -1);
        assert_eq!(quarter.apply(-7, Rounding::Single), -2);
        assert_eq!(quarter.apply(-7, Rounding::Double), -2);
    }

    #[test]
    fn apply_double_rounding_error_on_a_positive_value() {
        // m = (2^30 + 1) * 2^-32 = 0.25 + 2^-32.
        // x = 2: exact 0.5 + 2^-31 -> 1 once; double: SRDHM(2, 2^30 + 1) =
        // round(1 + 2^-30) = 1, then RDBPOT(1, 1) = round(0.5) = 1.
        // x = 1: exact 0.25 + 2^-32 -> 0 once; double: SRDHM(1, 2^30 + 1) =
        // round(0.5 + 2^-31) = 1, then RDBPOT(1, 1) = round(0.5) = 1: the
        // first rounding made a tie that the second rounds up.
        let m = QuantizedMultiplier::new((1 << 30) + 1, -1).unwrap();
        assert_eq!(m.apply(2, Rounding::Single), 1);
        assert_eq!(m.apply(2, Rounding::Double), 1);
        assert_eq!(m.apply(1, Rounding::Single), 0);
        assert_eq!(m.apply(1, Rounding::Double), 1);
    }

    #[test]
    fn apply_with_left_shift_and_wrap() {
        // m = 2^30 * 2^(2 - 31) = 2: both roundings are exact.
        let two = QuantizedMultiplier::new(1 << 30, 2).unwrap();
        assert_eq!(two.apply(-1000, Rounding::Single), -2000);
        assert_eq!(two.apply(-1000, Rounding::Double), -2000);
        // 2^30 * 2 = 2^31 wraps to i32::MIN in both builds.
        assert_eq!(two.apply(1 << 30, Rounding::Single), i32::MIN);
        // Double: x * 2^2 = 2^32 wraps to 0 before the multiply.
        assert_eq!(two.apply(1 << 30, Rounding::Double), 0);
        let zero = QuantizedMultiplier::new(0, 0).unwrap();
        assert_eq!(zero.apply(i32::MIN, Rounding::Single), 0);
        assert_eq!(zero.apply(i32::MAX, Rounding::Double), 0);
    }
}
