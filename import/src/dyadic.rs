//! [`Dyadic`]: exact rationals `m · 2^-e`, the values of every ONNX tensor
//! the import evaluates (float32 constants, `Quant` outputs with
//! power-of-two scales, and their sums and products), with checked
//! arithmetic: an operation whose exact result does not fit is `None`,
//! never a rounded value.

use std::cmp::Ordering;

/// The exact value `m · 2^-e`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Dyadic {
    /// The integer mantissa.
    pub m: i128,
    /// The exponent: the value is `m · 2^-e`.
    pub e: i32,
}

/// `m · 2^s`, if it fits `i128`.
fn shl(m: i128, s: u32) -> Option<i128> {
    if m == 0 {
        return Some(0);
    }
    (s < 126 && m.unsigned_abs().leading_zeros() > s + 1).then(|| m << s)
}

impl Dyadic {
    /// Zero.
    pub const ZERO: Dyadic = Dyadic { m: 0, e: 0 };

    /// The integer code `m` of a format with `e` fraction bits.
    pub fn code(m: i128, e: i32) -> Dyadic {
        Dyadic { m, e }
    }

    /// The exact value of a finite `f64`.
    pub fn from_f64(x: f64) -> Option<Dyadic> {
        if !x.is_finite() {
            return None;
        }
        if x == 0.0 {
            return Some(Dyadic::ZERO);
        }
        let bits = x.to_bits();
        let exp = ((bits >> 52) & 0x7ff) as i32;
        let frac = (bits & ((1u64 << 52) - 1)) as i128;
        let (m, e) = if exp == 0 { (frac, 1074) } else { (frac | (1i128 << 52), 1075 - exp) };
        Some(Dyadic { m: if x < 0.0 { -m } else { m }, e }.normalized())
    }

    /// The same value with an odd mantissa (or `0 · 2^0`).
    pub fn normalized(self) -> Dyadic {
        if self.m == 0 {
            return Dyadic::ZERO;
        }
        let t = self.m.trailing_zeros();
        Dyadic { m: self.m >> t, e: self.e - t as i32 }
    }

    /// The mantissa of the value at exponent `e` (`value · 2^e`), if it is
    /// an integer that fits.
    pub fn at(self, e: i32) -> Option<i128> {
        let d = self.normalized();
        if e >= d.e {
            shl(d.m, u32::try_from(e - d.e).ok()?)
        } else {
            None
        }
    }

    /// The exact sum.
    pub fn add(self, o: Dyadic) -> Option<Dyadic> {
        let (a, b) = (self.normalized(), o.normalized());
        let e = a.e.max(b.e);
        Some(Dyadic { m: a.at(e)?.checked_add(b.at(e)?)?, e }.normalized())
    }

    /// The exact difference.
    pub fn sub(self, o: Dyadic) -> Option<Dyadic> {
        self.add(Dyadic { m: o.m.checked_neg()?, e: o.e })
    }

    /// The exact product.
    pub fn mul(self, o: Dyadic) -> Option<Dyadic> {
        let (a, b) = (self.normalized(), o.normalized());
        Some(Dyadic { m: a.m.checked_mul(b.m)?, e: a.e.checked_add(b.e)? }.normalized())
    }

    /// The exact quotient, if it is a dyadic rational (the divisor's odd
    /// part divides the dividend's mantissa).
    pub fn div(self, o: Dyadic) -> Option<Dyadic> {
        let (a, b) = (self.normalized(), o.normalized());
        if b.m == 0 || a.m % b.m != 0 {
            return None;
        }
        Some(Dyadic { m: a.m / b.m, e: a.e.checked_sub(b.e)? }.normalized())
    }

    /// The exact square root, if it is a dyadic rational.
    pub fn sqrt(self) -> Option<Dyadic> {
        let mut d = self.normalized();
        if d.m < 0 {
            return None;
        }
        if d.e % 2 != 0 {
            d = Dyadic { m: shl(d.m, 1)?, e: d.e + 1 };
        }
        let r = d.m.isqrt();
        (r * r == d.m).then_some(Dyadic { m: r, e: d.e / 2 }.normalized())
    }

    /// The value as an `f64`, if it is exactly one.
    pub fn to_f64(self) -> Option<f64> {
        let d = self.normalized();
        let x = d.m as f64 * 2f64.powi(-d.e);
        (Dyadic::from_f64(x) == Some(d)).then_some(x)
    }

    /// The value as an `f64`, rounded (for messages).
    pub fn approx(self) -> f64 {
        self.m as f64 * 2f64.powi(-self.e)
    }
}

impl PartialOrd for Dyadic {
    fn partial_cmp(&self, o: &Dyadic) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}

impl Ord for Dyadic {
    /// Exact comparison; values too far apart to align compare by sign
    /// and exponent.
    fn cmp(&self, o: &Dyadic) -> Ordering {
        match self.sub(*o) {
            Some(d) => d.m.cmp(&0),
            None => self.approx().total_cmp(&o.approx()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Dyadic;

    #[test]
    fn arithmetic_is_exact_or_refused() {
        let d = |x: f64| Dyadic::from_f64(x).unwrap();
        assert_eq!(d(0.75).add(d(-2.5)).unwrap().to_f64(), Some(-1.75));
        assert_eq!(d(0.75).mul(d(1.5)).unwrap().to_f64(), Some(1.125));
        assert_eq!(d(2.25).sqrt().unwrap().to_f64(), Some(1.5));
        assert_eq!(d(2.0).sqrt(), None);
        assert_eq!(d(0.75).div(d(1.5)).unwrap().to_f64(), Some(0.5));
        assert_eq!(d(1.0).div(d(3.0)), None);
        assert_eq!(d(0.3).to_f64(), Some(0.3));
        assert!(d(-1.0) < d(0.5) && d(1e30) > d(1.0));
        assert_eq!(Dyadic { m: i128::MAX, e: 0 }.add(d(1.0)), None);
    }
}
