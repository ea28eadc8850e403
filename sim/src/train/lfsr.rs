//! The noise generator of one training block: a Galois LFSR that shifts
//! right, and how it is seeded (`docs/training.md`, "Noise").
//!
//! One step outputs the low bit `o = s & 1`, then `s = s >> 1`, and if `o`
//! is 1, `s = s ^ TAPS`. The masks ([`taps`]) give maximal-length
//! sequences: every nonzero state recurs after exactly `2^width - 1` steps.

use crate::model::LfsrWidth;

/// The feedback mask of a `width`-bit LFSR: `0xB8` (x^8 + x^6 + x^5 + x^4 +
/// 1), `0xB400` (x^16 + x^14 + x^13 + x^11 + 1) or `0xA3000000` (x^32 +
/// x^30 + x^26 + x^25 + 1). Bit `k` of the mask stands for `x^(k+1)`.
pub fn taps(width: LfsrWidth) -> u64 {
    match width {
        LfsrWidth::W8 => 0xB8,
        LfsrWidth::W16 => 0xB400,
        LfsrWidth::W32 => 0xA300_0000,
    }
}

/// The `width` low bits set: the states an LFSR of that width can hold.
pub fn state_mask(width: LfsrWidth) -> u64 {
    (1u64 << width.bits()) - 1
}

/// SplitMix64's output for the state `x` (Steele, Lea, Flood 2014; the
/// seeding generator of `java.util.SplittableRandom` and xoshiro):
///
/// ```text
/// z = x + 0x9E3779B97F4A7C15
/// z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9
/// z = (z ^ (z >> 27)) * 0x94D049BB133111EB
/// return z ^ (z >> 31)
/// ```
///
/// with every addition and multiplication modulo 2^64.
pub fn splitmix64(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The initial state of block `block`'s LFSR: `splitmix64(seed + block)`
/// (modulo 2^64) truncated to `width` bits, or 1 if that is 0. The
/// generator writes it into the RTL as a parameter.
pub fn block_seed(seed: u64, block: usize, width: LfsrWidth) -> u64 {
    let s = splitmix64(seed.wrapping_add(block as u64)) & state_mask(width);
    if s == 0 {
        1
    } else {
        s
    }
}

/// A Galois LFSR of 8, 16 or 32 bits. Its state is never 0.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lfsr {
    width: LfsrWidth,
    state: u64,
}

impl Lfsr {
    /// An LFSR in `state`; `None` if `state` is 0 or does not fit `width`
    /// bits (0 is a fixed point, never part of the sequence).
    pub fn new(width: LfsrWidth, state: u64) -> Option<Lfsr> {
        (state != 0 && state & !state_mask(width) == 0).then_some(Lfsr { width, state })
    }

    /// Block `block`'s LFSR for the training seed `seed` ([`block_seed`]).
    pub fn seeded(width: LfsrWidth, seed: u64, block: usize) -> Lfsr {
        Lfsr { width, state: block_seed(seed, block, width) }
    }

    /// The width.
    pub fn width(&self) -> LfsrWidth {
        self.width
    }

    /// The current state (`width` bits, nonzero).
    pub fn state(&self) -> u64 {
        self.state
    }

    /// One step: returns the output bit `o` (the low bit of the state), then
    /// shifts right and, if `o` is 1, XORs the taps in.
    pub fn step(&mut self) -> bool {
        // Branch-free: the output bit is random, a branch on it mispredicts
        // half the time.
        let o = self.state & 1;
        self.state = (self.state >> 1) ^ (taps(self.width) & o.wrapping_neg());
        o == 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splitmix64_reference_values() {
        // The first outputs of SplitMix64 seeded with 0 (the state advances by
        // the golden gamma each call, so output n is splitmix64(n * gamma)).
        let gamma = 0x9E37_79B9_7F4A_7C15u64;
        assert_eq!(splitmix64(0), 0xE220_A839_7B1D_CDAF);
        assert_eq!(splitmix64(gamma), 0x6E78_9E6A_A1B9_65F4);
        assert_eq!(splitmix64(gamma.wrapping_mul(2)), 0x06C4_5D18_8009_454F);
    }

    #[test]
    fn state_zero_is_refused_and_seeds_are_nonzero() {
        assert!(Lfsr::new(LfsrWidth::W8, 0).is_none());
        assert!(Lfsr::new(LfsrWidth::W8, 0x100).is_none());
        assert!(Lfsr::new(LfsrWidth::W8, 0xFF).is_some());
        for seed in 0..2000u64 {
            for w in [LfsrWidth::W8, LfsrWidth::W16, LfsrWidth::W32] {
                let s = block_seed(seed, 3, w);
                assert!(s != 0 && s <= state_mask(w));
            }
        }
    }
}
