//! Loss quantization: the fitness signal `s` becomes `Q(s)` before it
//! scales a block's noise value (`docs/training.md`, "One group").
//!
//! `po2`: `Q(s) = sign(s) * 2^floor(log2 |s|)`, `Q(0) = 0`. In hardware the
//! block shifts its noise value left by the position of the leading one of
//! `|s|`, so no multiplier is needed. `exact`: `Q(s) = s`.

use crate::model::LossQuantization;

/// The position of the leading one of `x`, `floor(log2 x)`; `None` for 0.
pub fn leading_one(x: u64) -> Option<u32> {
    x.checked_ilog2()
}

/// `sign(s) * 2^floor(log2 |s|)`, and 0 for 0. Total: `i64::MIN` gives
/// itself (`-2^63`).
pub fn po2(s: i64) -> i64 {
    match leading_one(s.unsigned_abs()) {
        None => 0,
        // |s| <= 2^63, so the power fits an i128 and, with the sign of s,
        // an i64 (only -2^63 has exponent 63).
        Some(k) => {
            let p = 1i128 << k;
            let q = if s < 0 { -p } else { p };
            q as i64
        }
    }
}

/// `Q(s)` for the chosen loss quantization.
pub fn quantize_signal(s: i64, q: LossQuantization) -> i64 {
    match q {
        LossQuantization::Po2 => po2(s),
        LossQuantization::Exact => s,
    }
}
