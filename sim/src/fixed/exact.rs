//! Exact values `(-1)^neg * mag * 2^-frac` before they are cast to a format.
//!
//! Every input of a cast (a double, a raw code of another format, the exact
//! product of two codes, the exact sum of two codes) is first turned into an
//! [`Exact`] without any loss; [`super::quantize`] then applies the target's
//! quantization and overflow modes. The magnitude is 256 bits wide so that
//! the product of any two `i128` raw values is exact, and the exponent is an
//! `i64` so that no exponent arithmetic of this module can overflow.
//!
//! Private to the `fixed` module.

use super::wide::U256;

/// The exact value `(-1)^neg * mag * 2^-frac`.
///
/// `neg` may be true with `mag == 0` (a "negative zero"); that is the value 0.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Exact {
    pub(crate) neg: bool,
    pub(crate) mag: U256,
    pub(crate) frac: i64,
}

impl Exact {
    /// `m * 2^-frac`.
    pub(crate) fn from_i128(m: i128, frac: i64) -> Exact {
        Exact {
            neg: m < 0,
            mag: U256::from_u128(m.unsigned_abs()),
            frac,
        }
    }

    /// The exact value of a finite double, or `None` for NaN and infinities.
    ///
    /// A double is `(-1)^s * M * 2^E` with an integer `M < 2^53`:
    /// normal numbers have `M = 2^52 + mantissa field` and
    /// `E = biased exponent - 1075`, subnormals `M = mantissa field` and
    /// `E = -1074`. `-0.0` gives a negative zero, which is the value 0.
    pub(crate) fn from_f64(x: f64) -> Option<Exact> {
        if !x.is_finite() {
            return None;
        }
        let bits = x.to_bits();
        let neg = bits >> 63 == 1;
        let biased = ((bits >> 52) & 0x7ff) as i64;
        let field = bits & ((1u64 << 52) - 1);
        let (m, e) = if biased == 0 {
            (field, -1074)
        } else {
            (field | (1u64 << 52), biased - 1075)
        };
        Some(Exact {
            neg,
            mag: U256::from_u128(u128::from(m)),
            frac: -e,
        })
    }

    /// `(a * 2^-fa) * (b * 2^-fb)`, exact: `|a| * |b| < 2^254`.
    pub(crate) fn product(a: i128, fa: i64, b: i128, fb: i64) -> Exact {
        Exact {
            neg: (a < 0) != (b < 0),
            mag: U256::mul_u128(a.unsigned_abs(), b.unsigned_abs()),
            frac: fa + fb,
        }
    }

    /// `(a + b) * 2^-frac`, exact: `|a + b| <= 2^128`.
    pub(crate) fn sum(a: i128, b: i128, frac: i64) -> Exact {
        match a.checked_add(b) {
            Some(s) => Exact::from_i128(s, frac),
            None => {
                // Overflow of i128 means a and b have the same sign, so the
                // magnitude of the sum is the sum of the magnitudes.
                let mag = U256::from_u128(a.unsigned_abs()).add(U256::from_u128(b.unsigned_abs()));
                Exact {
                    neg: a < 0,
                    mag,
                    frac,
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fixed_exact_from_f64() {
        let e = Exact::from_f64(1.0).unwrap();
        assert_eq!((e.neg, e.mag, e.frac), (false, U256::from_u128(1 << 52), 52));
        let e = Exact::from_f64(-0.75).unwrap();
        // -0.75 = -(3 * 2^51) * 2^-53
        assert_eq!((e.neg, e.mag, e.frac), (true, U256::from_u128(3 << 51), 53));
        let e = Exact::from_f64(f64::from_bits(1)).unwrap();
        assert_eq!((e.neg, e.mag, e.frac), (false, U256::from_u128(1), 1074));
        let e = Exact::from_f64(-0.0).unwrap();
        assert!(e.mag.is_zero());
        assert!(Exact::from_f64(f64::NAN).is_none());
        assert!(Exact::from_f64(f64::NEG_INFINITY).is_none());
    }

    #[test]
    fn fixed_exact_sum_overflowing_i128() {
        let s = Exact::sum(i128::MIN, i128::MIN, 0);
        assert_eq!((s.neg, s.mag), (true, U256 { hi: 1, lo: 0 }));
        let s = Exact::sum(i128::MAX, i128::MAX, 3);
        assert_eq!((s.neg, s.mag, s.frac), (false, U256::from_u128(u128::MAX - 1), 3));
        let s = Exact::sum(i128::MIN, i128::MAX, 0);
        assert_eq!((s.neg, s.mag), (true, U256::from_u128(1)));
    }
}
