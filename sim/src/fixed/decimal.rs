//! Exact decimal expansion of `m * 2^-frac`.
//!
//! Every such number has a finite decimal expansion:
//! `m * 2^-f = m * 5^f / 10^f` for `f > 0`. A small base-10^9 big integer
//! is enough; `|frac|` is at most ~1100 for formats, so this is cheap.

const BASE: u64 = 1_000_000_000;

/// Little-endian base-10^9 digits of a non-negative integer.
struct Big(Vec<u64>);

impl Big {
    fn from_u128(mut x: u128) -> Big {
        let mut limbs = Vec::new();
        while x > 0 {
            limbs.push((x % u128::from(BASE)) as u64);
            x /= u128::from(BASE);
        }
        Big(limbs)
    }

    /// `self *= k` for `k <= 2^31` (each limb product stays below 2^61).
    fn mul_small(&mut self, k: u64) {
        let mut carry = 0u64;
        for limb in &mut self.0 {
            let p = *limb * k + carry;
            *limb = p % BASE;
            carry = p / BASE;
        }
        while carry > 0 {
            self.0.push(carry % BASE);
            carry /= BASE;
        }
    }

    /// `self *= b^e` for a small base `b`, in chunks of `b^chunk <= 2^31`.
    fn mul_pow(&mut self, b: u64, mut e: u64, chunk: u32) {
        let big_factor = b.pow(chunk);
        while e >= u64::from(chunk) {
            self.mul_small(big_factor);
            e -= u64::from(chunk);
        }
        if e > 0 {
            // e < chunk, so b^e fits.
            self.mul_small(b.pow(e as u32));
        }
    }

    fn to_digits(&self) -> String {
        let mut s = String::new();
        for (i, limb) in self.0.iter().rev().enumerate() {
            if i == 0 {
                s.push_str(&limb.to_string());
            } else {
                s.push_str(&format!("{limb:09}"));
            }
        }
        if s.is_empty() {
            s.push('0');
        }
        s
    }
}

/// The exact decimal expansion of `m * 2^-frac`, shortest form: no
/// exponent, no trailing zeros after the point, no point for integers,
/// a leading `-` for negative values (never `-0`).
pub(crate) fn to_decimal(m: i128, frac: i64) -> String {
    if m == 0 {
        return "0".to_string();
    }
    let sign = if m < 0 { "-" } else { "" };
    let mut n = Big::from_u128(m.unsigned_abs());
    if frac <= 0 {
        n.mul_pow(2, frac.unsigned_abs(), 30);
        return format!("{sign}{}", n.to_digits());
    }
    let f = frac.unsigned_abs();
    n.mul_pow(5, f, 13);
    let digits = n.to_digits();
    // The value is digits * 10^-f.
    let f = usize::try_from(f).unwrap_or(usize::MAX);
    let (int_part, frac_part) = if digits.len() > f {
        let (a, b) = digits.split_at(digits.len() - f);
        (a.to_string(), b.to_string())
    } else {
        ("0".to_string(), format!("{}{}", "0".repeat(f - digits.len()), digits))
    };
    let frac_part = frac_part.trim_end_matches('0');
    if frac_part.is_empty() {
        format!("{sign}{int_part}")
    } else {
        format!("{sign}{int_part}.{frac_part}")
    }
}

#[cfg(test)]
mod tests {
    use super::to_decimal;

    #[test]
    fn fixed_decimal_examples() {
        assert_eq!(to_decimal(0, 5), "0");
        assert_eq!(to_decimal(3, 0), "3");
        assert_eq!(to_decimal(-3, 1), "-1.5");
        assert_eq!(to_decimal(1, 3), "0.125");
        assert_eq!(to_decimal(-449, 6), "-7.015625");
        assert_eq!(to_decimal(4, 2), "1");
        assert_eq!(to_decimal(5, -3), "40");
        assert_eq!(to_decimal(1, 20), "0.00000095367431640625"); // 2^-20
        assert_eq!(to_decimal(1, -64), "18446744073709551616");
        assert_eq!(
            to_decimal(i128::MIN, 0),
            "-170141183460469231731687303715884105728"
        );
        // 1 - 2^-64, checked with Python's decimal module.
        assert_eq!(
            to_decimal(u64::MAX as i128, 64),
            "0.9999999999999999999457898913757247782996273599565029144287109375"
        );
    }
}
