//! The overflow step: turn an already quantized integer `q` (in units of the
//! target's least significant bit, unbounded) into a code of the format per
//! its [`Overflow`] mode.
//!
//! With `min = min_raw()` and `max = max_raw()` of the format:
//!
//! * `AP_WRAP`: the code congruent to `q` modulo `2^W` in `[min, max]`
//!   (keep the low `W` bits; sign-extend for signed formats).
//! * `AP_SAT`: `clamp(q, min, max)`.
//! * `AP_SAT_ZERO`: `q` if `min <= q <= max`, else 0.
//! * `AP_SAT_SYM`: signed formats `clamp(q, -max, max)`, so the code `min`
//!   is never produced (Xilinx: `underflow |= neg_src && low W-1 bits of
//!   the result are 0`); unsigned formats as `AP_SAT`.

use super::format::Format;
use super::modes::Overflow;
use super::quantize::Rounded;

/// The code for the quantized value `q`, and whether the overflow mode
/// changed the value (`q` was not in the range the mode leaves alone).
pub(crate) fn apply(fmt: &Format, q: Rounded) -> (i128, bool) {
    let min = fmt.min_raw();
    let max = fmt.max_raw();
    // Exact value of q when it is a code of the format. |min| <= 2^63 and
    // max <= 2^64 - 1, so any in-range magnitude fits i128.
    let in_range = !q.big
        && if q.neg {
            q.mag_mod <= min.unsigned_abs()
        } else {
            q.mag_mod <= max.unsigned_abs()
        };
    let value = if in_range {
        let m = q.mag_mod as i128; // <= 2^64
        Some(if q.neg { -m } else { m })
    } else {
        None
    };
    match fmt.overflow() {
        Overflow::Wrap => {
            // q mod 2^W from q mod 2^128 (2^W divides 2^128).
            let low = if q.neg {
                q.mag_mod.wrapping_neg()
            } else {
                q.mag_mod
            };
            let raw = fmt.from_bits((low & fmt.mask()) as u64);
            (raw, value.is_none())
        }
        Overflow::Sat => saturate(value, q.neg, min, max),
        Overflow::SatZero => match value {
            Some(v) => (v, false),
            None => (0, true),
        },
        Overflow::SatSym => {
            if fmt.signed() {
                saturate(value, q.neg, -max, max)
            } else {
                saturate(value, q.neg, min, max)
            }
        }
    }
}

/// `clamp(q, lo, hi)` given `q` as `Some(value)` when it is within
/// `[min_raw, max_raw]` (a superset of `[lo, hi]`) and `None` otherwise,
/// with its sign; plus "the value changed".
fn saturate(value: Option<i128>, neg: bool, lo: i128, hi: i128) -> (i128, bool) {
    match value {
        Some(v) if v < lo => (lo, true),
        Some(v) if v > hi => (hi, true),
        Some(v) => (v, false),
        None if neg => (lo, true),
        None => (hi, true),
    }
}
