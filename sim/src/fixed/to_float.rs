//! Conversion of a code to the nearest double.

use super::exact::Exact;
use super::format::Format;
use super::modes::Quant;
use super::quantize::round;
use super::wide::U256;

impl Format {
    /// The double nearest to `raw * 2^-F` (ties to even, IEEE 754
    /// round-to-nearest), for any `raw`. Exact whenever the value's
    /// significant bits fit in 53 bits and it is within the double range,
    /// which covers every code of a format with `W <= 53` and moderate `I`.
    /// Values below the smallest subnormal round to (signed) zero or to the
    /// smallest subnormal like any IEEE conversion, values of magnitude
    /// `>= 2^1024` after rounding give an infinity. `raw == 0` gives `+0.0`.
    ///
    /// (Xilinx's `to_double` rounds the same way for normal results; it
    /// does not produce subnormals, which only matters when `F > 1022`.)
    pub fn to_f64(&self, raw: i128) -> f64 {
        exact_to_f64(raw, i64::from(self.frac_bits()))
    }
}

/// The double nearest to `m * 2^-frac` (ties to even).
pub(crate) fn exact_to_f64(m: i128, frac: i64) -> f64 {
    if m == 0 {
        return 0.0;
    }
    let neg = m < 0;
    let mag = m.unsigned_abs();
    let len = i64::from(128 - mag.leading_zeros()); // >= 1
    // The value is in [2^msb, 2^(msb+1)).
    let msb = len - 1 - frac;
    let sign = if neg { -1.0 } else { 1.0 };
    if msb > 1023 {
        return sign * f64::INFINITY;
    }
    // Weight of the last bit a double can keep: 53 significant bits, but
    // never below the smallest subnormal 2^-1074.
    let ulp = (msb - 52).max(-1074);
    // Round |value| to a multiple of 2^ulp, ties to even: an integer
    // k <= 2^53 (exact in a double) with |value| ~ k * 2^ulp.
    let abs = Exact {
        neg: false,
        mag: U256::from_u128(mag),
        frac,
    };
    let q = round(abs, -ulp, Quant::RndConv);
    let k = q.mag_mod as f64; // k <= 2^53: exact
    // k * 2^ulp is exact unless it reaches 2^1024, where IEEE multiplication
    // gives the correctly rounded infinity.
    sign * (k * pow2(ulp))
}

/// `2^e` for `-1074 <= e <= 1023`, built from its bit pattern.
fn pow2(e: i64) -> f64 {
    if e >= -1022 {
        f64::from_bits(((e + 1023) as u64) << 52)
    } else {
        f64::from_bits(1u64 << (e + 1074))
    }
}
