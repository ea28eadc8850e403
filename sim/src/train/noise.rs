//! Noise values from a block's LFSR (`docs/training.md`, "Noise").
//!
//! A value takes fresh LFSR output bits, never a window shared with another
//! value: `rademacher` takes one bit `o` and gives `o ? +1 : -1`; `uniform`
//! takes `b` bits, the first as the least significant, reads them as a
//! `b`-bit two's complement number `u` and gives `2u + 1`: the odd numbers
//! of `[-(2^b - 1), 2^b - 1]`, each with probability `2^-b`, so the values
//! are symmetric about 0 and their mean is 0 (a plain two's complement
//! value would have mean -1/2, which biases `baseline` and `plain`
//! fitness).

use super::lfsr::Lfsr;
use crate::model::{Distribution, Noise};

/// One block's noise source: its LFSR and the distribution of a value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NoiseSource {
    lfsr: Lfsr,
    distribution: Distribution,
    bits: u32,
}

impl NoiseSource {
    /// A source drawing from `lfsr` with `noise`'s distribution (and, for
    /// `uniform`, its `bits`, clamped to `1..=width` so that no input can
    /// make a draw misbehave; validated configurations are never clamped).
    pub fn new(lfsr: Lfsr, noise: &Noise) -> NoiseSource {
        let bits = noise.bits.clamp(1, lfsr.width().bits());
        NoiseSource { lfsr, distribution: noise.distribution, bits }
    }

    /// Block `block`'s source for the training seed `seed`.
    pub fn seeded(noise: &Noise, seed: u64, block: usize) -> NoiseSource {
        NoiseSource::new(Lfsr::seeded(noise.width, seed, block), noise)
    }

    /// The LFSR (its state tells how many bits were used).
    pub fn lfsr(&self) -> &Lfsr {
        &self.lfsr
    }

    /// LFSR steps one value takes: 1 for `rademacher`, `b` for `uniform`.
    pub fn bits_per_value(&self) -> u32 {
        match self.distribution {
            Distribution::Rademacher => 1,
            Distribution::Uniform => self.bits,
        }
    }

    /// The next noise value, from fresh LFSR bits.
    pub fn draw(&mut self) -> i64 {
        match self.distribution {
            Distribution::Rademacher => 2 * i64::from(self.lfsr.step()) - 1,
            Distribution::Uniform => {
                let b = self.bits;
                let mut v: u64 = 0;
                for k in 0..b {
                    v |= u64::from(self.lfsr.step()) << k;
                }
                2 * twos_complement(v, b) + 1
            }
        }
    }
}

/// The low `b` bits of `v` read as a `b`-bit two's complement number
/// (`b = 0` gives 0; `b >= 64` reads all of `v`).
pub fn twos_complement(v: u64, b: u32) -> i64 {
    if b == 0 {
        return 0;
    }
    if b >= 64 {
        return v as i64;
    }
    let v = v & ((1u64 << b) - 1);
    if v >> (b - 1) & 1 == 1 {
        v as i64 - (1i64 << b)
    } else {
        v as i64
    }
}
