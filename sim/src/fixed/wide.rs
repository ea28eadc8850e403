//! A 256-bit unsigned integer with just the operations exact fixed-point
//! arithmetic needs: products of two `u128`, sums, shifts by any amount and
//! bit tests. Every operation is total (no panics, no overflow): shifts by
//! 256 or more give 0, and [`U256::add`] of two values below `2^255` is exact.
//!
//! Private to the `fixed` module.

/// `hi * 2^128 + lo`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct U256 {
    pub(crate) hi: u128,
    pub(crate) lo: u128,
}

impl U256 {
    pub(crate) const ZERO: U256 = U256 { hi: 0, lo: 0 };

    /// The value `x`.
    pub(crate) fn from_u128(x: u128) -> U256 {
        U256 { hi: 0, lo: x }
    }

    /// `a * b`, exact (the product of two `u128` fits 256 bits).
    pub(crate) fn mul_u128(a: u128, b: u128) -> U256 {
        const M: u128 = u64::MAX as u128;
        let (a1, a0) = (a >> 64, a & M);
        let (b1, b0) = (b >> 64, b & M);
        // Each partial product of two 64-bit halves fits in u128.
        let p00 = a0 * b0;
        let p01 = a0 * b1;
        let p10 = a1 * b0;
        let p11 = a1 * b1;
        // Middle column: (p00 >> 64) + low halves of p01 and p10; at most
        // 3 * (2^64 - 1), fits in u128.
        let mid = (p00 >> 64) + (p01 & M) + (p10 & M);
        let lo = (p00 & M) | (mid << 64);
        let hi = p11 + (p01 >> 64) + (p10 >> 64) + (mid >> 64);
        U256 { hi, lo }
    }

    /// `self + other`, wrapping modulo `2^256` (exact whenever the sum is
    /// below `2^256`, which is the case for every use in this module).
    pub(crate) fn add(self, other: U256) -> U256 {
        let (lo, carry) = self.lo.overflowing_add(other.lo);
        let hi = self
            .hi
            .wrapping_add(other.hi)
            .wrapping_add(u128::from(carry));
        U256 { hi, lo }
    }

    /// `self + 1`, wrapping modulo `2^256`.
    pub(crate) fn inc(self) -> U256 {
        self.add(U256::from_u128(1))
    }

    /// True if the value is 0.
    pub(crate) fn is_zero(self) -> bool {
        self.hi == 0 && self.lo == 0
    }

    /// Number of significant bits (0 for the value 0).
    pub(crate) fn bit_len(self) -> u32 {
        if self.hi != 0 {
            256 - self.hi.leading_zeros()
        } else {
            128 - self.lo.leading_zeros()
        }
    }

    /// `floor(self / 2^n)` for any `n` (0 when `n >= 256`).
    pub(crate) fn shr(self, n: u64) -> U256 {
        if n == 0 {
            self
        } else if n < 128 {
            U256 {
                hi: self.hi >> n,
                lo: (self.lo >> n) | (self.hi << (128 - n)),
            }
        } else if n < 256 {
            U256 {
                hi: 0,
                lo: self.hi >> (n - 128),
            }
        } else {
            U256::ZERO
        }
    }

    /// Bit `n` (bit 0 is the least significant); false for `n >= 256`.
    pub(crate) fn bit(self, n: u64) -> bool {
        if n < 128 {
            (self.lo >> n) & 1 == 1
        } else if n < 256 {
            (self.hi >> (n - 128)) & 1 == 1
        } else {
            false
        }
    }

    /// True if any of the bits `0 .. n` (exclusive) is set.
    pub(crate) fn any_below(self, n: u64) -> bool {
        if n == 0 {
            false
        } else if n < 128 {
            self.lo & ((1u128 << n) - 1) != 0
        } else if n == 128 {
            self.lo != 0
        } else if n < 256 {
            self.lo != 0 || self.hi & ((1u128 << (n - 128)) - 1) != 0
        } else {
            !self.is_zero()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Schoolbook product on 32-bit limbs, as an independent reference.
    fn mul_ref(a: u128, b: u128) -> U256 {
        let limbs = |x: u128| [0, 32, 64, 96].map(|s| ((x >> s) as u32) as u64);
        let (a, b) = (limbs(a), limbs(b));
        let mut acc = [0u64; 8];
        for i in 0..4 {
            let mut carry = 0u64;
            for j in 0..4 {
                let t = acc[i + j] + a[i] * b[j] + carry;
                acc[i + j] = t & 0xffff_ffff;
                carry = t >> 32;
            }
            acc[i + 4] += carry;
        }
        let word = |k: usize| (0..4).fold(0u128, |w, l| w | (u128::from(acc[k + l] as u32) << (32 * l)));
        U256 { hi: word(4), lo: word(0) }
    }

    proptest! {
        #![proptest_config(ProptestConfig {
            cases: 5000,
            rng_seed: proptest::test_runner::RngSeed::Fixed(0x0256),
            failure_persistence: None,
            ..ProptestConfig::default()
        })]

        #[test]
        fn fixed_wide_mul_matches_schoolbook(a in any::<u128>(), b in any::<u128>(), sa in 0u32..128, sb in 0u32..128) {
            let (a, b) = (a >> sa, b >> sb);
            prop_assert_eq!(U256::mul_u128(a, b), mul_ref(a, b));
        }
    }

    #[test]
    fn fixed_wide_mul_max() {
        // (2^128 - 1)^2 = 2^256 - 2^129 + 1: hi = 2^128 - 2, lo = 1.
        let p = U256::mul_u128(u128::MAX, u128::MAX);
        assert_eq!(p, U256 { hi: u128::MAX - 1, lo: 1 });
        // (2^64 - 1)^2 = 2^128 - 2^65 + 1 fits in lo.
        let q = U256::mul_u128(u64::MAX as u128, u64::MAX as u128);
        assert_eq!(q, U256::from_u128((u64::MAX as u128) * (u64::MAX as u128)));
        // 2^127 * 2 = 2^128.
        assert_eq!(U256::mul_u128(1 << 127, 2), U256 { hi: 1, lo: 0 });
    }

    #[test]
    fn fixed_wide_shift_and_bits() {
        let x = U256 { hi: 0b101, lo: 1 << 127 | 1 };
        assert_eq!(x.bit_len(), 131);
        assert_eq!(x.shr(127), U256 { hi: 0, lo: 0b1011 });
        assert_eq!(x.shr(128), U256::from_u128(0b101));
        assert_eq!(x.shr(130), U256::from_u128(1));
        assert_eq!(x.shr(256), U256::ZERO);
        assert_eq!(x.shr(u64::MAX), U256::ZERO);
        assert!(x.bit(0) && x.bit(127) && x.bit(128) && !x.bit(129) && x.bit(130));
        assert!(!x.bit(1000));
        assert!(!x.any_below(0));
        assert!(x.any_below(1));
        assert!(!U256 { hi: 1, lo: 0 }.any_below(128));
        assert!(U256 { hi: 1, lo: 0 }.any_below(129));
        assert!(x.any_below(u64::MAX));
        assert_eq!(U256 { hi: 0, lo: u128::MAX }.inc(), U256 { hi: 1, lo: 0 });
    }
}
