//! Finishing a dense neuron from its exact dot product: steps 1, 3 and 4
//! of `docs/numerics.md` ("Layer arithmetic") and the one accumulator
//! addition that replaces step 2 when the accumulation is exact
//! ([`crate::layers::dense::exact_accumulation`]), in plain `i128`
//! arithmetic instead of [`Format`]'s general conversions.
//!
//! [`Cast::apply`] is [`Format::cast_from`] for one pair of formats:
//! with `k` the source's fraction bits minus the target's, a code `a` is
//! `q * 2^k + r` (`q = a >> k`, the floor, `0 <= r < 2^k`), and the
//! quantization mode decides between `q` and `q + 1` from `r`, the sign
//! and `q`'s parity, as in `crate::fixed::quantize`'s table; then
//! [`Overflowing::apply`] applies the overflow mode to that exact integer
//! as `crate::fixed::overflow` specifies. Shifts beyond 64 bits go to
//! [`Format::cast_from`] itself. Property tests compare the two
//! (`sim/tests/fast_path.rs`).

use crate::fixed::{Format, Overflow, Quant};

/// A format's overflow mode on exact integers (in units of its least
/// significant bit), as `crate::fixed::overflow` defines it.
#[derive(Debug, Clone, Copy)]
pub struct Overflowing {
    mode: Overflow,
    signed: bool,
    width: u32,
    min: i128,
    max: i128,
}

impl Overflowing {
    /// The overflow step of `f`.
    pub fn new(f: Format) -> Overflowing {
        Overflowing { mode: f.overflow(), signed: f.signed(), width: f.width(), min: f.min_raw(), max: f.max_raw() }
    }

    /// The code of the format for the exact integer `v`.
    #[inline]
    pub fn apply(&self, v: i128) -> i128 {
        if self.min < v && v <= self.max {
            return v;
        }
        match self.mode {
            Overflow::Sat => v.clamp(self.min, self.max),
            Overflow::SatSym if self.signed => v.clamp(-self.max, self.max),
            Overflow::SatSym => v.clamp(self.min, self.max),
            Overflow::SatZero if v == self.min => v,
            Overflow::SatZero => 0,
            Overflow::Wrap => {
                // Formats are at most 64 bits wide: keep the low `width`
                // bits, sign-extended for signed formats.
                let m = (v as u128) & ((1u128 << self.width) - 1);
                if self.signed && m >> (self.width - 1) == 1 {
                    m as i128 - (1i128 << self.width)
                } else {
                    m as i128
                }
            }
        }
    }
}
use crate::layers::dense::Dense;
use crate::layers::Activation;

/// [`Format::cast_from`] from one format into another, precomputed.
#[derive(Debug, Clone, Copy)]
pub struct Cast {
    from: Format,
    to: Format,
    /// Fraction bits dropped (`> 0`) or added (`<= 0`).
    k: i32,
    quant: Quant,
    overflow: Overflowing,
}

impl Cast {
    /// The cast of codes of `from` into `to`.
    pub fn new(from: Format, to: Format) -> Cast {
        Cast { from, to, k: from.frac_bits() - to.frac_bits(), quant: to.quant(), overflow: Overflowing::new(to) }
    }

    /// `to.cast_from(a, &from)`, for any `a` with `|a| < 2^126`.
    #[inline]
    pub fn apply(&self, a: i128) -> i128 {
        let v = if self.k <= 0 {
            let s = self.k.unsigned_abs();
            if s >= 64 || a.unsigned_abs() >= 1 << 62 {
                return self.to.cast_from(a, &self.from);
            }
            a << s
        } else if self.k <= 64 {
            let k = self.k as u32;
            let q = a >> k;
            let r = a - (q << k);
            let half = 1i128 << (k - 1);
            let up = match self.quant {
                Quant::Trn => false,
                Quant::TrnZero => a < 0 && r != 0,
                Quant::Rnd => r >= half,
                Quant::RndZero => r > half || (r == half && a < 0),
                Quant::RndMinInf => r > half,
                Quant::RndInf => r > half || (r == half && a >= 0),
                Quant::RndConv => r > half || (r == half && q & 1 == 1),
            };
            q + i128::from(up)
        } else {
            return self.to.cast_from(a, &self.from);
        };
        self.overflow.apply(v)
    }
}

/// Finishes the outputs of a dense layer with exact accumulation from
/// their exact dot products `s = sum_i w[o][i] * x[i]` (of the codes):
/// `y = cast<output>(act(add<accum>(bias, s << shift)))`, where `bias` is
/// the bias code cast to the accumulator and `add` is
/// [`Format::add`] (one overflow step).
///
/// When the accumulator and the output are at most 62 bits wide and the
/// output cast drops at most 62 fraction bits, [`Finisher::finish_row`]
/// runs in `i64` with branch-free rounding: with `k` bits dropped, every
/// quantization mode is `(acc + c) >> k` (an arithmetic shift, the floor)
/// for an offset `c` in `0 ..= 2^k - 1` that depends on the mode, the sign
/// of `acc` and (`AP_RND_CONV`) the parity of `acc >> k`; see
/// [`Finisher::offsets`].
#[derive(Debug, Clone, Copy)]
pub struct Finisher {
    accum: Overflowing,
    shift: u32,
    relu: bool,
    out: Cast,
    bias: Cast,
    /// The `i64` path's parameters, when it applies.
    narrow: Option<Narrow64>,
}

/// [`Finisher`]'s `i64` path.
#[derive(Debug, Clone, Copy)]
struct Narrow64 {
    /// Bits dropped by the output cast (`>= 0`) or added (`< 0`).
    k: i32,
    /// Offset for `acc >= 0`, for `acc < 0`, and whether the parity of
    /// `acc >> k` is added (`AP_RND_CONV`).
    pos: i64,
    neg: i64,
    parity: bool,
    acc: Overflowing,
    out: Overflowing,
    /// `|bias + (s << shift)| < 2^62` holds for `|s| <= s_max`.
    s_max: i64,
    /// The overflow steps as branch-free arithmetic, when their modes allow.
    acc_fast: Option<Ovf64>,
    out_fast: Option<Ovf64>,
}

/// An overflow step as branch-free `i64` arithmetic: a clamp (`AP_SAT`,
/// and `AP_SAT_SYM`, whose signed range is `-max ..= max`) or keeping the
/// low bits (`AP_WRAP`, sign-extended for signed formats). `AP_SAT_ZERO`
/// has none.
#[derive(Debug, Clone, Copy)]
enum Ovf64 {
    Clamp(i64, i64),
    WrapSigned(u32),
    WrapUnsigned(u32),
}

impl Ovf64 {
    fn new(o: &Overflowing) -> Option<Ovf64> {
        let (min, max) = (o.min as i64, o.max as i64);
        match o.mode {
            Overflow::Sat => Some(Ovf64::Clamp(min, max)),
            Overflow::SatSym if o.signed => Some(Ovf64::Clamp(-max, max)),
            Overflow::SatSym => Some(Ovf64::Clamp(min, max)),
            Overflow::SatZero => None,
            Overflow::Wrap if o.signed => Some(Ovf64::WrapSigned(64 - o.width)),
            Overflow::Wrap => Some(Ovf64::WrapUnsigned(64 - o.width)),
        }
    }

    /// The kind as a number (the const parameter of [`row_body`]).
    fn kind(&self) -> u8 {
        match self {
            Ovf64::Clamp(..) => 0,
            Ovf64::WrapSigned(_) => 1,
            Ovf64::WrapUnsigned(_) => 2,
        }
    }

    /// Applies it, the kind `K` known at compile time.
    #[inline(always)]
    fn apply<const K: u8>(&self, v: i64) -> i64 {
        match (K, *self) {
            (0, Ovf64::Clamp(lo, hi)) => v.max(lo).min(hi),
            (1, Ovf64::WrapSigned(u)) => (v << u) >> u,
            (2, Ovf64::WrapUnsigned(u)) => ((v as u64) << u >> u) as i64,
            _ => unreachable!("the kind matches the variant"),
        }
    }
}

impl Finisher {
    /// The finisher of `d` whose products are shifted by `shift` (from
    /// [`crate::layers::dense::exact_accumulation`]).
    pub fn new(d: &Dense, shift: u32) -> Finisher {
        let pr = &d.precision;
        let out = Cast::new(pr.accum, pr.output);
        let k = out.k;
        let fits = pr.accum.width() as i32 + (-k).max(0) <= 62;
        let narrow = (fits && pr.output.width() <= 62 && k <= 62 && shift <= 62).then(|| {
            let (pos, neg, parity) = Finisher::offsets(pr.output.quant(), k.max(0) as u32);
            // |bias| < 2^61 (width <= 62), so |s << shift| <= 2^61 keeps the sum below 2^62.
            let s_max = (1i64 << 61) >> shift;
            let (acc, out) = (Overflowing::new(pr.accum), Overflowing::new(pr.output));
            Narrow64 { k, pos, neg, parity, acc, out, s_max, acc_fast: Ovf64::new(&acc), out_fast: Ovf64::new(&out) }
        });
        Finisher {
            accum: Overflowing::new(pr.accum),
            shift,
            relu: d.activation == Activation::Relu,
            out,
            bias: Cast::new(pr.bias, pr.accum),
            narrow,
        }
    }

    /// The rounding offsets of `quant` when `k` bits are dropped: `c` for
    /// a non-negative value, `c` for a negative one, and whether the parity
    /// of the floor is added. With `h = 2^(k-1)` and the remainder
    /// `r = acc mod 2^k`, `(acc + c) >> k` is the floor plus one exactly when
    /// `r + c >= 2^k`:
    ///
    /// | mode | `c` (`acc >= 0`) | `c` (`acc < 0`) | up when |
    /// |---|---|---|---|
    /// | `AP_TRN` | 0 | 0 | never |
    /// | `AP_TRN_ZERO` | 0 | `2^k - 1` | negative and `r > 0` |
    /// | `AP_RND` | `h` | `h` | `r >= h` |
    /// | `AP_RND_ZERO` | `h - 1` | `h` | `r > h`, or `r = h` and negative |
    /// | `AP_RND_MIN_INF` | `h - 1` | `h - 1` | `r > h` |
    /// | `AP_RND_INF` | `h` | `h - 1` | `r > h`, or `r = h` and non-negative |
    /// | `AP_RND_CONV` | `h - 1` + parity | same | `r > h`, or `r = h` and the floor odd |
    fn offsets(quant: Quant, k: u32) -> (i64, i64, bool) {
        if k == 0 {
            return (0, 0, false);
        }
        let h = 1i64 << (k - 1);
        match quant {
            Quant::Trn => (0, 0, false),
            Quant::TrnZero => (0, (1i64 << k) - 1, false),
            Quant::Rnd => (h, h, false),
            Quant::RndZero => (h - 1, h, false),
            Quant::RndMinInf => (h - 1, h - 1, false),
            Quant::RndInf => (h, h - 1, false),
            Quant::RndConv => (h - 1, h - 1, true),
        }
    }

    /// A bias code cast to the accumulator (step 1).
    pub fn bias(&self, b: i128) -> i128 {
        self.bias.apply(b)
    }

    /// The output code of a neuron whose bias, cast to the accumulator, is
    /// `bias` and whose exact dot product is `s`.
    #[inline]
    pub fn finish(&self, bias: i128, s: i64) -> i128 {
        if let Some(n) = &self.narrow {
            if -n.s_max <= s && s <= n.s_max {
                return i128::from(n.finish(bias as i64, s, self.shift, self.relu));
            }
        }
        self.finish_wide(bias, s)
    }

    /// `row[o] = finish(bias[o], row[o])` for every output of one sample
    /// (the output codes fit `i64`).
    pub fn finish_row(&self, bias: &[i128], row: &mut [i64]) {
        if let Some(n) = &self.narrow {
            if let (Some(a), Some(o)) = (n.acc_fast, n.out_fast) {
                if n.row(a, o, self.shift, self.relu, bias, row) {
                    return;
                }
            } else if row.iter().all(|&s| -n.s_max <= s && s <= n.s_max) {
                for (s, &b) in row.iter_mut().zip(bias) {
                    *s = n.finish(b as i64, *s, self.shift, self.relu);
                }
                return;
            }
        }
        for (s, &b) in row.iter_mut().zip(bias) {
            *s = self.finish_wide(b, *s) as i64;
        }
    }

    /// [`Finisher::finish`] in `i128` only.
    fn finish_wide(&self, bias: i128, s: i64) -> i128 {
        let mut acc = self.accum.apply(bias + (i128::from(s) << self.shift));
        if self.relu && acc < 0 {
            acc = 0;
        }
        self.out.apply(acc)
    }
}

impl Narrow64 {
    /// [`Finisher::finish_row`] with branch-free overflow steps: a loop the
    /// compiler vectorizes (with AVX-512 where the CPU has it, chosen at
    /// run time). False, with `row` unchanged, when a sum is beyond
    /// `s_max`.
    #[allow(clippy::too_many_arguments)]
    fn row(&self, a: Ovf64, o: Ovf64, shift: u32, relu: bool, bias: &[i128], row: &mut [i64]) -> bool {
        macro_rules! go {
            ($($ka:literal, $ko:literal);*) => {
                match (a.kind(), o.kind()) {
                    $(($ka, $ko) => {
                        #[cfg(target_arch = "x86_64")]
                        if super::kernel::has_avx512() {
                            // SAFETY: the CPU has the features (checked).
                            return unsafe { row_avx512::<$ka, $ko>(self, a, o, shift, relu, bias, row) };
                        }
                        row_body::<$ka, $ko>(self, a, o, shift, relu, bias, row)
                    })*
                    _ => unreachable!("kinds are 0 to 2"),
                }
            };
        }
        go!(0, 0; 0, 1; 0, 2; 1, 0; 1, 1; 1, 2; 2, 0; 2, 1; 2, 2)
    }

    #[inline(always)]
    fn finish(&self, bias: i64, s: i64, shift: u32, relu: bool) -> i64 {
        let mut acc = self.acc.apply64(bias + (s << shift));
        if relu {
            acc = acc.max(0);
        }
        let v = if self.k <= 0 {
            acc << self.k.unsigned_abs()
        } else {
            let k = self.k as u32;
            let mut c = if acc < 0 { self.neg } else { self.pos };
            if self.parity {
                c += (acc >> k) & 1;
            }
            (acc + c) >> k
        };
        self.out.apply64(v)
    }
}

impl Overflowing {
    /// [`Overflowing::apply`] for `|v| < 2^62` and widths up to 62.
    #[inline(always)]
    fn apply64(&self, v: i64) -> i64 {
        let (min, max) = (self.min as i64, self.max as i64);
        if min < v && v <= max {
            return v;
        }
        match self.mode {
            Overflow::Sat => v.clamp(min, max),
            Overflow::SatSym if self.signed => v.clamp(-max, max),
            Overflow::SatSym => v.clamp(min, max),
            Overflow::SatZero if v == min => v,
            Overflow::SatZero => 0,
            Overflow::Wrap => {
                let unused = 64 - self.width;
                if self.signed {
                    (v << unused) >> unused
                } else {
                    ((v as u64) << unused >> unused) as i64
                }
            }
        }
    }
}

/// The loop of [`Narrow64::row`] for overflow kinds `A` (accumulator) and
/// `O` (output): [`Narrow64::finish`] without branches.
#[inline(always)]
fn row_body<const A: u8, const O: u8>(n: &Narrow64, a: Ovf64, o: Ovf64, shift: u32, relu: bool, bias: &[i128], row: &mut [i64]) -> bool {
    let (lo, hi) = row.iter().fold((0i64, 0i64), |(lo, hi), &s| (lo.min(s), hi.max(s)));
    if lo < -n.s_max || hi > n.s_max {
        return false;
    }
    let floor = if relu { 0 } else { i64::MIN };
    let (kl, kr) = ((-n.k).max(0) as u32, n.k.max(0) as u32);
    let pmask = i64::from(n.parity);
    for (s, &b) in row.iter_mut().zip(bias) {
        let acc = a.apply::<A>((b as i64) + (*s << shift)).max(floor);
        let c = (if acc < 0 { n.neg } else { n.pos }) + ((acc >> kr) & pmask);
        *s = o.apply::<O>(((acc << kl) + c) >> kr);
    }
    true
}

/// [`row_body`] compiled for AVX-512.
///
/// # Safety
/// The CPU must have AVX-512 F, DQ, BW and VL.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512dq,avx512bw,avx512vl")]
#[allow(clippy::too_many_arguments)]
unsafe fn row_avx512<const A: u8, const O: u8>(n: &Narrow64, a: Ovf64, o: Ovf64, shift: u32, relu: bool, bias: &[i128], row: &mut [i64]) -> bool {
    row_body::<A, O>(n, a, o, shift, relu, bias, row)
}
