//! The quantization step: bring an exact value onto the grid `2^-F` of a
//! format according to its [`Quant`] mode, and the conversions built on it
//! (from doubles, casts, products, sums).
//!
//! Every conversion is the same two steps, in this order:
//!
//! 1. quantize: the exact value `v` (in units of the target's least
//!    significant bit) becomes an integer `q` per the quantization mode,
//!    with no bound on `q` ([`round`]);
//! 2. overflow: `q` becomes a code of the format per the overflow mode
//!    ([`super::overflow::apply`]).
//!
//! So `7.9` into `ap_fixed<4,4,AP_RND,AP_SAT>` first rounds to 8 and then
//! saturates to 7. This is what Xilinx's `ap_fixed_base` does (its
//! `quantization_adjust` followed by `overflow_adjust`).
//!
//! The implementation works on sign and magnitude. With `t = floor(|v|)`
//! and the dropped part `d = |v| - t` (`0 <= d < 1`), the magnitude becomes
//! `t + 1` ("round away from zero") or stays `t`:
//!
//! | mode | `v >= 0`: `t + 1` when | `v < 0`: `t + 1` when |
//! |---|---|---|
//! | `AP_TRN` (floor) | never | `d > 0` |
//! | `AP_TRN_ZERO` | never | never |
//! | `AP_RND` (ties to +inf) | `d >= 1/2` | `d > 1/2` |
//! | `AP_RND_ZERO` | `d > 1/2` | `d > 1/2` |
//! | `AP_RND_MIN_INF` (ties to -inf) | `d > 1/2` | `d >= 1/2` |
//! | `AP_RND_INF` (ties away from 0) | `d >= 1/2` | `d >= 1/2` |
//! | `AP_RND_CONV` (ties to even) | `d > 1/2`, or `d = 1/2` and `t` odd | same |
//!
//! This is equivalent to Xilinx's formulation on the two's complement floor
//! (`qb` = first dropped bit, `r` = any lower dropped bit, `s` = negative);
//! the property tests `reference_*` in `sim/tests/numerics_oracle.rs` check
//! the equivalence against a slow reference written in Xilinx's formulation.

use super::error::{NonFiniteError, NotRepresentable};
use super::exact::Exact;
use super::format::Format;
use super::modes::{Overflow, Quant};
use super::overflow;
use super::wide::U256;

/// A quantized value `q = (-1)^neg * M` for an integer `M >= 0` of any
/// size, kept as `M mod 2^128` plus a flag for `M >= 2^128` (every format
/// has `|code| <= 2^64`, so that flag alone means "out of range", and the
/// low 128 bits are all that wrapping needs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Rounded {
    /// Sign of the exact source value (may be true with `M = 0`).
    pub(crate) neg: bool,
    /// `M mod 2^128`.
    pub(crate) mag_mod: u128,
    /// `M >= 2^128`.
    pub(crate) big: bool,
    /// The quantization dropped nonzero bits (the result differs from the
    /// exact value).
    pub(crate) inexact: bool,
}

/// Quantize the exact value `x` to an integer multiple of `2^-frac_bits`
/// per `quant`; the result counts multiples of `2^-frac_bits`. Total for
/// every input (shifts of any size).
pub(crate) fn round(x: Exact, frac_bits: i64, quant: Quant) -> Rounded {
    if x.mag.is_zero() {
        return Rounded {
            neg: false,
            mag_mod: 0,
            big: false,
            inexact: false,
        };
    }
    // The value is mag * 2^-x.frac = (mag * 2^-shift) * 2^-frac_bits.
    // Both frac values are far inside i64 (|.| < 2^33), so no overflow.
    let shift = x.frac - frac_bits;
    if shift <= 0 {
        // An exact multiple: M = mag * 2^s. Only the low 128 bits of M are
        // kept; `big` records whether any bit was at position 128 or above.
        let s = shift.unsigned_abs();
        let big = u64::from(x.mag.bit_len()) + s > 128;
        let mag_mod = if s >= 128 { 0 } else { x.mag.lo << s };
        return Rounded {
            neg: x.neg,
            mag_mod,
            big,
            inexact: false,
        };
    }
    let n = shift.unsigned_abs();
    let t = x.mag.shr(n);
    let half = x.mag.bit(n - 1); // d >= 1/2
    let sticky = x.mag.any_below(n - 1); // d is not 0 or 1/2
    let inexact = half || sticky;
    let above = half && sticky; // d > 1/2
    let tie = half && !sticky; // d == 1/2
    let up = match quant {
        Quant::Trn => x.neg && inexact,
        Quant::TrnZero => false,
        Quant::Rnd => {
            if x.neg {
                above
            } else {
                half
            }
        }
        Quant::RndZero => above,
        Quant::RndMinInf => {
            if x.neg {
                half
            } else {
                above
            }
        }
        Quant::RndInf => half,
        Quant::RndConv => above || (tie && t.bit(0)),
    };
    // t < 2^255 because n >= 1, so t + 1 is exact.
    let m: U256 = if up { t.inc() } else { t };
    Rounded {
        neg: x.neg,
        mag_mod: m.lo,
        big: m.hi != 0,
        inexact,
    }
}

/// The result of a conversion into a format with what happened on the way.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Conversion {
    /// The raw code, always within `[min_raw, max_raw]` of the format.
    pub raw: i128,
    /// The quantization step changed the value (nonzero bits were dropped).
    pub inexact: bool,
    /// The overflow step changed the value: the quantized value was outside
    /// the range of the format (for signed `AP_SAT_SYM`: outside
    /// `[-max, max]`), so it was wrapped, saturated or zeroed.
    pub overflowed: bool,
}

impl Format {
    /// Convert the exact value `x` (quantize, then overflow).
    pub(crate) fn convert(&self, x: Exact) -> Conversion {
        let q = round(x, i64::from(self.frac_bits()), self.quant());
        let (raw, overflowed) = overflow::apply(self, q);
        Conversion {
            raw,
            inexact: q.inexact,
            overflowed,
        }
    }

    /// [`Format::quantize_exact`] that also reports whether rounding and
    /// overflow changed the value.
    pub fn convert_exact(&self, mantissa: i128, frac: i32) -> Conversion {
        self.convert(Exact::from_i128(mantissa, i64::from(frac)))
    }

    /// [`Format::quantize_f64`] that also reports whether rounding and
    /// overflow changed the value.
    pub fn convert_f64(&self, x: f64) -> Result<Conversion, NonFiniteError> {
        match Exact::from_f64(x) {
            Some(e) => Ok(self.convert(e)),
            None => Err(NonFiniteError { value: x }),
        }
    }

    /// Convert a double to this format the way `ap_fixed`'s constructor from
    /// `double` does: take the exact value of the double (no intermediate
    /// rounding; subnormals included), quantize per `Q`, then apply `O`.
    ///
    /// Errors: NaN and infinities ([`NonFiniteError`]). `-0.0` gives 0.
    pub fn quantize_f64(&self, x: f64) -> Result<i128, NonFiniteError> {
        match self.quantize_f64_small(x) {
            Some(raw) => Ok(raw),
            None => self.convert_f64(x).map(|c| c.raw),
        }
    }

    /// [`Format::quantize_f64`] on every value of `xs`, each code passed
    /// through `cast` and appended to `out` (the same codes, in order, as
    /// one call per value). The loop is specialised to the format's
    /// quantization mode: a value whose scaled magnitude `|x · 2^F|` is a
    /// normal double (or 0) below `2^51` is rounded on its sign and
    /// magnitude in `f64` operations that are exact there (the magnitude's
    /// integer part, the part below its binary point, `+ 1`), as
    /// [`Format::quantize_f64`]'s own fast path does, then a code within the
    /// range the overflow mode leaves alone is taken as it is (for
    /// `AP_SAT_SYM`, signed, the range is symmetric), and one beyond it is
    /// clamped (`AP_SAT`, `AP_SAT_SYM`) or 0 (`AP_SAT_ZERO`). Any other
    /// value (wrapped, huge, subnormal after scaling, non-finite) goes
    /// through [`Format::quantize_f64`] itself.
    /// `sim/tests/fast_path.rs` checks the codes against the exact
    /// conversion on every mode.
    ///
    /// Errors: the index in `xs` of the first non-finite value, with its
    /// error; `out` then holds the codes before it.
    pub fn quantize_f64_into<T>(&self, xs: &[f64], out: &mut Vec<T>, cast: impl Fn(i128) -> T) -> Result<(), (usize, NonFiniteError)> {
        /// What the overflow mode makes of a code outside [lo, hi].
        #[derive(Clone, Copy)]
        enum Beyond {
            /// The nearer bound (AP_SAT, AP_SAT_SYM).
            Clamp,
            /// 0 (AP_SAT_ZERO).
            Zero,
            /// The general path decides (AP_WRAP).
            General,
        }
        /// The fast path's parameters: 2^F, the codes the overflow mode
        /// leaves alone, and what it does beyond them.
        #[derive(Clone, Copy)]
        struct Fast {
            scale: f64,
            lo: i64,
            hi: i64,
            beyond: Beyond,
        }
        fn run<T>(
            fmt: &Format,
            xs: &[f64],
            out: &mut Vec<T>,
            cast: impl Fn(i128) -> T,
            fast: Option<Fast>,
            up: impl Fn(bool, u64, f64) -> bool,
        ) -> Result<(), (usize, NonFiniteError)> {
            out.reserve(xs.len());
            for (i, &x) in xs.iter().enumerate() {
                if let Some(p) = fast {
                    let y = x * p.scale;
                    let m = y.abs();
                    // Normal below 2^51, or an exact 0 (x itself 0).
                    if (m >= f64::MIN_POSITIVE && m < 2_251_799_813_685_248.0) || x == 0.0 {
                        // The magnitude's integer part and the bits below
                        // its binary point (both exact), rounded on sign and
                        // magnitude as `round` does.
                        let whole = m as u64;
                        let neg = y < 0.0;
                        let mag = (whole + u64::from(up(neg, whole, m - whole as f64))) as i64;
                        let r = if neg { -mag } else { mag };
                        let code = if r >= p.lo && r <= p.hi {
                            Some(r)
                        } else {
                            match p.beyond {
                                Beyond::Clamp => Some(r.clamp(p.lo, p.hi)),
                                Beyond::Zero => Some(0),
                                Beyond::General => None,
                            }
                        };
                        if let Some(c) = code {
                            out.push(cast(i128::from(c)));
                            continue;
                        }
                    }
                }
                out.push(cast(fmt.quantize_f64(x).map_err(|e| (i, e))?));
            }
            Ok(())
        }
        let f = self.frac_bits();
        // The codes the overflow mode leaves alone (AP_SAT_SYM, signed,
        // saturates the most negative code too, to -max).
        let hi = self.max_raw();
        let lo = if self.signed() && self.overflow() == Overflow::SatSym { -hi } else { self.min_raw() };
        let beyond = match self.overflow() {
            Overflow::Sat | Overflow::SatSym => Beyond::Clamp,
            Overflow::SatZero => Beyond::Zero,
            Overflow::Wrap => Beyond::General,
        };
        // 2^53 bounds the codes that convert to doubles and back exactly.
        let limit = 1i128 << 53;
        let fast = ((-1022..=1023).contains(&f) && lo > -limit && hi < limit).then(|| Fast {
            scale: f64::from_bits(((1023 + i64::from(f)) as u64) << 52),
            lo: lo as i64,
            hi: hi as i64,
            beyond,
        });
        // Whether the magnitude rounds up, given the sign, the integer part
        // and the dropped part d (0 <= d < 1) of the magnitude.
        match self.quant() {
            Quant::Trn => run(self, xs, out, cast, fast, |neg, _, d| neg && d > 0.0),
            Quant::TrnZero => run(self, xs, out, cast, fast, |_, _, _| false),
            Quant::Rnd => run(self, xs, out, cast, fast, |neg, _, d| if neg { d > 0.5 } else { d >= 0.5 }),
            Quant::RndZero => run(self, xs, out, cast, fast, |_, _, d| d > 0.5),
            Quant::RndMinInf => run(self, xs, out, cast, fast, |neg, _, d| if neg { d >= 0.5 } else { d > 0.5 }),
            Quant::RndInf => run(self, xs, out, cast, fast, |_, _, d| d >= 0.5),
            Quant::RndConv => run(self, xs, out, cast, fast, |_, whole, d| d > 0.5 || (d == 0.5 && whole & 1 == 1)),
        }
    }

    /// [`Format::quantize_f64`] in `f64` arithmetic where that is exact:
    /// `y = x · 2^F` is a normal double (or 0) below `2^52` in magnitude, so
    /// `y`, its integer part and the dropped part are exact doubles. The
    /// rounding is [`round`]'s, on sign and magnitude, and the overflow step
    /// is [`overflow::apply`] itself, so the code is the general path's
    /// (`sim/tests/fast_path.rs` checks it on every mode). `None` where the
    /// general path must decide (non-finite `x`, `y` at or above `2^52` or
    /// subnormal).
    fn quantize_f64_small(&self, x: f64) -> Option<i128> {
        let f = self.frac_bits();
        if !x.is_finite() || !(-1022..=1023).contains(&f) {
            return None;
        }
        // 2^F exactly: exponent field 1023 + F, mantissa 0.
        let scale = f64::from_bits(((1023 + i64::from(f)) as u64) << 52);
        let y = x * scale;
        let m = y.abs();
        if m >= 4_503_599_627_370_496.0 || (m != 0.0 && m < f64::MIN_POSITIVE) {
            return None;
        }
        if m == 0.0 && x != 0.0 {
            return None; // underflowed to zero
        }
        // m < 2^52: its integer part is exact as a u64 and back as a double.
        let whole = m as u64;
        let d = m - whole as f64; // exact: the bits of m below the binary point
        let neg = x < 0.0;
        let (half, above, inexact) = (d >= 0.5, d > 0.5, d > 0.0);
        let tie = d == 0.5;
        let odd = whole & 1 == 1;
        let up = match self.quant() {
            Quant::Trn => neg && inexact,
            Quant::TrnZero => false,
            Quant::Rnd => {
                if neg {
                    above
                } else {
                    half
                }
            }
            Quant::RndZero => above,
            Quant::RndMinInf => {
                if neg {
                    half
                } else {
                    above
                }
            }
            Quant::RndInf => half,
            Quant::RndConv => above || (tie && odd),
        };
        let mag = u128::from(whole) + u128::from(up);
        let q = Rounded { neg, mag_mod: mag, big: false, inexact };
        Some(overflow::apply(self, q).0)
    }


    /// The raw code whose value is exactly `x`, if converting `x` into this
    /// format is lossless; used to validate weights.
    ///
    /// Errors, checked in this order: [`NotRepresentable::NonFinite`];
    /// [`NotRepresentable::OutOfRange`] if `x < lossless_min_raw * 2^-F` or
    /// `x > max_raw * 2^-F` (comparison of real numbers); otherwise
    /// [`NotRepresentable::NeedsRounding`] if `x` is not a multiple of
    /// `2^-F`. Whenever this returns `Ok(r)`, [`Format::quantize_f64`]
    /// returns `Ok(r)` too, whatever the modes. (For a signed `AP_SAT_SYM`
    /// format the code `-2^(W-1)` is refused as out of range, because a
    /// conversion maps it to `-(2^(W-1) - 1)`.)
    pub fn exact_f64(&self, x: f64) -> Result<i128, NotRepresentable> {
        let Some(e) = Exact::from_f64(x) else {
            return Err(NotRepresentable::NonFinite { value: x });
        };
        // Floor to the grid without bound: x is in range iff
        // lo <= floor(x) and (floor(x) < hi or (floor(x) == hi and exact)).
        let q = round(e, i64::from(self.frac_bits()), Quant::Trn);
        let lo = self.lossless_min_raw();
        let hi = self.max_raw();
        let in_range = match rounded_to_i128(q) {
            Some(f) => lo <= f && (f < hi || (f == hi && !q.inexact)),
            None => false,
        };
        if !in_range {
            return Err(NotRepresentable::OutOfRange {
                value: x,
                format: *self,
                min: self.to_decimal(lo),
                max: self.to_decimal(hi),
            });
        }
        if q.inexact {
            return Err(NotRepresentable::NeedsRounding {
                value: x,
                format: *self,
            });
        }
        // (ok_or_else: the range's decimals only on the error path.)
        rounded_to_i128(q).ok_or_else(|| NotRepresentable::OutOfRange {
            value: x,
            format: *self,
            min: self.to_decimal(lo),
            max: self.to_decimal(hi),
        })
    }

    /// [`Format::cast_from`] that also reports whether rounding and
    /// overflow changed the value.
    pub fn convert_from(&self, raw: i128, from: &Format) -> Conversion {
        self.convert_exact(raw, from.frac_bits())
    }

    /// [`Format::mul_from`] that also reports whether rounding and overflow
    /// changed the value.
    pub fn convert_product(&self, a: i128, fa: &Format, b: i128, fb: &Format) -> Conversion {
        self.convert(Exact::product(
            a,
            i64::from(fa.frac_bits()),
            b,
            i64::from(fb.frac_bits()),
        ))
    }

    /// [`Format::add`] that also reports whether overflow changed the value
    /// (`inexact` is always false: a sum of two codes is on the grid).
    pub fn convert_sum(&self, a: i128, b: i128) -> Conversion {
        self.convert(Exact::sum(a, b, i64::from(self.frac_bits())))
    }

    /// `ap_fixed` assignment: the code of `self` for the value
    /// `raw * 2^-from.frac_bits()` (quantize per `self`'s `Q`, then `self`'s
    /// `O`; `from`'s modes play no role). Any `raw` is accepted, also one
    /// outside `from`'s range: its exact value is converted.
    pub fn cast_from(&self, raw: i128, from: &Format) -> i128 {
        self.convert_from(raw, from).raw
    }

    /// The code of `self` for the exact value `mantissa * 2^-frac` (quantize,
    /// then overflow). Total for every `mantissa` and `frac`, including
    /// `frac` far outside any format (tiny or huge values).
    pub fn quantize_exact(&self, mantissa: i128, frac: i32) -> i128 {
        self.convert_exact(mantissa, frac).raw
    }

    /// The code of `self` for the exact product of `a` (a code of `fa`, value
    /// `a * 2^-Fa`) and `b` (value `b * 2^-Fb`): the product
    /// `a * b * 2^-(Fa+Fb)` is formed without any loss (up to 254 bits of
    /// magnitude, so even `u64 x u64` and out-of-range inputs are exact),
    /// then quantized and overflowed per `self`. This is `ap_fixed`'s
    /// full-precision `operator*` followed by assignment to `self`.
    pub fn mul_from(&self, a: i128, fa: &Format, b: i128, fb: &Format) -> i128 {
        self.convert_product(a, fa, b, fb).raw
    }

    /// The code of `self` for the exact sum of two values of `self`
    /// (`(a + b) * 2^-F`, formed without loss), after `self`'s overflow mode;
    /// the sum is on the grid already, so the quantization mode plays no
    /// role. With `AP_WRAP` this is the `W`-bit adder; with `AP_SAT` a
    /// saturating adder; with signed `AP_SAT_SYM` a sum of exactly
    /// `-2^(W-1)` becomes `-(2^(W-1) - 1)`.
    pub fn add(&self, a: i128, b: i128) -> i128 {
        self.convert_sum(a, b).raw
    }
}

/// The quantized value as an `i128`, if it fits.
pub(crate) fn rounded_to_i128(q: Rounded) -> Option<i128> {
    if q.big {
        return None;
    }
    if q.neg {
        if q.mag_mod <= i128::MIN.unsigned_abs() {
            Some(0i128.wrapping_sub_unsigned(q.mag_mod))
        } else {
            None
        }
    } else {
        i128::try_from(q.mag_mod).ok()
    }
}
