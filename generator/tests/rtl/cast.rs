//! `rtl/fptgen_cast.v` against the simulator's numerics, bit for bit.
//!
//! `fptgen_cast` is the one place where the generated hardware converts a
//! value into a format, so it must agree with `Format::quantize_exact`
//! (docs/numerics.md) on every bit. The tests here:
//!
//! * `cast_matches_quantize_exact`: ~150 parameter sets chosen with a fixed
//!   seed (every QUANT x OVF combination several times, both signednesses,
//!   rounding, left shifts, equal fractions, everything dropped, negative and
//!   oversized F, output widths 1, 2, 63 and 64, inputs up to 140 bits, and
//!   the casts a dense layer makes) become one instance each in a generated
//!   top, which Verilator builds once with `-Wall` (warnings are fatal, so
//!   this is also the lint of every set). 300 inputs per set (edge cases
//!   around every rounding tie and range limit, then seeded random ones) go
//!   through the model and every output bit is compared with the simulator
//!   (inputs of at most 8 bits get every value of the word).
//! * `cast_synthesizes_for_ultrascale`: yosys `synth_xilinx -family xcu` on a
//!   few representative sets; prints their cell counts.
//! * `cast_illegal_parameters_stop_the_build`: an out-of-range OUT_W stops
//!   the Verilator build, naming the failed check
//!   (`fptgen_param_error_cast_out_w_not_1_to_64`; every module's checks in
//!   every tool are tested by `param_checks.rs`).
//!
//! Verilator and yosys are required: without them these tests fail (they
//! never skip). Install them with `apt-get install verilator yosys`.

use std::fmt::Write as _;
use std::fs;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use fptgen_sim::fixed::{Format, Overflow, Quant};

use crate::common::{quick_build, require_tool, run, scratch, Rng};

/// Seed of every random choice (parameter sets and inputs).
const SEED: u64 = 0x00f9_7c45_7ca5_7001;
/// Inputs driven into every parameter set.
const VECTORS: usize = 300;

fn rtl_cast() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../rtl/fptgen_cast.v")
}

// ---------------------------------------------------------------------------
// Deterministic random numbers (SplitMix64)



// ---------------------------------------------------------------------------
// Parameter sets

// The generator's encodings: this test checks that the RTL implements them.
use fptgen_generator::plan::{ovf_code, quant_code};

/// One `fptgen_cast` parameterization.
#[derive(Clone, Debug)]
struct CastSet {
    in_w: u32,
    in_f: i32,
    out_w: u32,
    out_f: i32,
    signed: bool,
    quant: Quant,
    ovf: Overflow,
    why: String,
}

impl CastSet {
    #[allow(clippy::too_many_arguments)]
    fn new(
        in_w: u32,
        in_f: i32,
        out_w: u32,
        out_f: i32,
        signed: bool,
        quant: Quant,
        ovf: Overflow,
        why: &str,
    ) -> CastSet {
        assert!(
            (1..=140).contains(&in_w) && (1..=64).contains(&out_w),
            "{why}"
        );
        assert!(
            (-1100..=1100).contains(&in_f) && (-1100..=1100).contains(&out_f),
            "{why}"
        );
        CastSet {
            in_w,
            in_f,
            out_w,
            out_f,
            signed,
            quant,
            ovf,
            why: why.to_string(),
        }
    }

    fn shift(&self) -> i64 {
        i64::from(self.in_f) - i64::from(self.out_f)
    }

    /// The simulator's format for the output, and the amount `adj` to add to
    /// every source fraction count. The code of a cast depends only on the
    /// value measured in output LSBs, `in * 2^(OUT_F - IN_F)`; `Format`
    /// limits `I = W - F` to -1024..=1024, so an OUT_F beyond that is
    /// checked with the nearest expressible F and the source fraction moved
    /// by the same amount (`adj = F - OUT_F`).
    fn reference(&self) -> (Format, i32) {
        let w = self.out_w as i32;
        let f = self
            .out_f
            .clamp(w - Format::MAX_INT_BITS, w - Format::MIN_INT_BITS);
        let fmt = Format::new(self.signed, self.out_w, w - f, self.quant, self.ovf)
            .expect("reference format");
        (fmt, f - self.out_f)
    }

    fn verilog_params(&self) -> String {
        format!(
            ".IN_W({}), .IN_F({}), .OUT_W({}), .OUT_F({}), .OUT_SIGNED({}), .QUANT({}), .OVF({})",
            self.in_w,
            self.in_f,
            self.out_w,
            self.out_f,
            u32::from(self.signed),
            quant_code(self.quant),
            ovf_code(self.ovf)
        )
    }

    fn describe(&self) -> String {
        format!(
            "fptgen_cast #({}) [{}; target {}<{},{},{},{}>]",
            self.verilog_params(),
            self.why,
            if self.signed { "ap_fixed" } else { "ap_ufixed" },
            self.out_w,
            self.out_w as i32 - self.out_f,
            self.quant,
            self.ovf
        )
    }

    /// Smallest and largest output code, as integers.
    fn out_range(&self) -> (i128, i128) {
        if self.signed {
            (
                -(1i128 << (self.out_w - 1)),
                (1i128 << (self.out_w - 1)) - 1,
            )
        } else {
            (0, (1i128 << self.out_w) - 1)
        }
    }
}

/// The hand-picked sets: what a dense layer instantiates, and every corner
/// of the bit-level algorithm.
#[rustfmt::skip]
fn fixed_sets() -> Vec<CastSet> {
    use Overflow::*;
    use Quant::*;
    let s = CastSet::new;
    vec![
        // Dense layer (rtl/fptgen_dense.v): product P_W = W_W + X_W + 2 bits
        // with P_F = W_F + X_F, cast to the accumulator.
        s(34, 20, 32, 20, true, Trn, Wrap, "dense: ap_fixed<16,6> x ap_fixed<16,6> product -> ap_fixed<32,12>"),
        s(34, 20, 24, 16, true, RndConv, Sat, "dense: ap_fixed<16,6> x ap_fixed<16,6> product -> ap_fixed<24,8,RND_CONV,SAT>"),
        s(18, 15, 20, 14, true, Rnd, SatSym, "dense: ap_ufixed<8,0> x ap_fixed<8,1> product -> ap_fixed<20,6,RND,SAT_SYM>"),
        s(130, 120, 64, 48, true, RndConv, Sat, "dense: ap_fixed<64,4> x ap_fixed<64,4> product -> ap_fixed<64,16>"),
        s(130, 128, 64, 56, false, Trn, Sat, "dense: ap_ufixed<64,0> x ap_ufixed<64,0> product -> ap_ufixed<64,8>"),
        s(129, 0, 64, 0, false, Trn, Wrap, "u64 x u64 product (129-bit signed) -> ap_uint<64>"),
        s(128, 10, 64, 4, true, RndInf, SatZero, "i64 x i64 product -> 64-bit accumulator"),
        // Dense layer: accumulator + product (A_W + 2 bits, or W + 1) cast
        // back to the accumulator; bias into the accumulator; output cast.
        s(66, 20, 64, 20, true, Trn, Sat, "dense: 64-bit accumulator sum (W+2) -> acc, SAT"),
        s(65, 20, 64, 20, true, Trn, Wrap, "(W+1)-bit sum -> 64-bit acc, WRAP"),
        s(65, -3, 64, -3, false, RndConv, SatZero, "(W+1)-bit sum -> ap_ufixed<64,67>, SAT_ZERO"),
        s(17, 8, 16, 8, true, Rnd, SatSym, "(W+1)-bit sum -> ap_fixed<16,8,RND,SAT_SYM>"),
        s(33, 10, 32, 10, false, Trn, Sat, "(W+1)-bit unsigned sum -> ap_ufixed<32,22,TRN,SAT>"),
        s(26, 12, 24, 12, true, RndZero, SatSym, "dense: (W+2)-bit sum -> ap_fixed<24,12,RND_ZERO,SAT_SYM>"),
        s(9, 4, 24, 8, true, Trn, Wrap, "dense: bias ap_fixed<8,4> -> accumulator (left shift)"),
        s(25, 16, 8, 5, false, RndConv, Sat, "dense: accumulator -> quantized_relu(8,3)"),
        s(25, 16, 8, 5, true, Rnd, SatSym, "dense: accumulator -> ap_fixed<8,3,RND,SAT_SYM>"),
        // Output widths 1, 2, 63, 64.
        s(3, 2, 1, 0, true, Rnd, SatSym, "signed W=1 SAT_SYM: range {0}"),
        s(4, 3, 1, 0, true, RndConv, Sat, "signed W=1"),
        s(4, 1, 1, 1, false, RndInf, Sat, "unsigned W=1"),
        s(6, 2, 1, -1, false, TrnZero, Wrap, "unsigned W=1, F=-1"),
        s(6, 3, 2, 1, true, RndMinInf, SatSym, "signed W=2 SAT_SYM"),
        s(7, 4, 2, 0, false, RndZero, SatZero, "unsigned W=2"),
        s(80, 30, 63, 20, true, RndConv, SatSym, "signed W=63"),
        s(70, 12, 63, 0, false, Rnd, Sat, "unsigned W=63"),
        s(100, 40, 64, 8, true, RndInf, Sat, "signed W=64"),
        s(100, 40, 64, 8, false, RndMinInf, SatSym, "unsigned W=64"),
        s(64, 0, 64, 0, true, Trn, SatSym, "64 -> 64 identity, SAT_SYM maps min to -max"),
        s(40, 0, 64, 10, false, Trn, Sat, "signed 40 bits -> ap_ufixed<64,54> left shift"),
        // IN_W = 1.
        s(1, 0, 8, 4, true, Trn, Wrap, "IN_W=1 left shift"),
        s(1, 5, 4, 0, true, RndInf, Sat, "IN_W=1 all dropped"),
        s(1, -3, 8, 0, false, Rnd, SatSym, "IN_W=1 negative F"),
        s(1, 1, 4, 0, true, RndZero, Wrap, "IN_W=1, SHIFT = IN_W"),
        // SHIFT at IN_W - 1, IN_W, IN_W + 1 (qb becomes the sign bit, then r
        // covers the whole input).
        s(8, 7, 4, 0, true, RndConv, Sat, "SHIFT = IN_W - 1"),
        s(8, 8, 4, 0, true, RndZero, Sat, "SHIFT = IN_W"),
        s(8, 9, 4, 0, true, RndInf, Sat, "SHIFT = IN_W + 1"),
        s(8, 8, 4, 0, false, TrnZero, SatSym, "SHIFT = IN_W, unsigned"),
        s(8, 20, 4, 0, true, Rnd, Wrap, "SHIFT > IN_W + 1"),
        // Left shift by OUT_W - 1, OUT_W, OUT_W + 1.
        s(6, 0, 8, 7, true, Trn, Sat, "left shift OUT_W - 1"),
        s(6, 0, 8, 8, true, Trn, SatSym, "left shift OUT_W"),
        s(6, 0, 8, 9, false, Rnd, Wrap, "left shift OUT_W + 1"),
        // Extreme fractions: everything dropped, huge left shift, F < 0,
        // F > W, F beyond what Format can express.
        s(20, 1100, 16, -1100, true, RndInf, Sat, "IN_F=1100, OUT_F=-1100: everything dropped"),
        s(20, -1100, 16, 1100, true, Rnd, SatZero, "IN_F=-1100, OUT_F=1100: left shift by 2200"),
        s(20, -1100, 16, 1100, false, Trn, Wrap, "IN_F=-1100, OUT_F=1100, WRAP: always 0"),
        s(140, 1100, 64, -1100, true, RndConv, SatSym, "IN_W=140, everything dropped"),
        s(30, 1100, 12, 1090, true, RndConv, SatSym, "F > W on both sides"),
        s(16, 30, 8, 20, true, RndMinInf, Sat, "OUT_F > OUT_W (I = -12)"),
        s(16, -4, 8, -6, false, RndZero, Sat, "negative F on both sides"),
        s(12, -1000, 10, -1003, true, TrnZero, SatZero, "very negative F"),
    ]
}

/// Every QUANT x OVF combination four times, each time from another
/// family of shapes, with both signednesses.
fn random_sets(rng: &mut Rng) -> Vec<CastSet> {
    let mut sets = Vec::new();
    for (qi, &quant) in Quant::ALL.iter().enumerate() {
        for (oi, &ovf) in Overflow::ALL.iter().enumerate() {
            for rep in 0..4 {
                let signed = (rep + qi + oi) % 2 == 0;
                let set = match rep {
                    0 => {
                        // Rounding: a few bits dropped.
                        let in_w = rng.range(2, 40) as u32;
                        let out_w = rng.range(1, 32) as u32;
                        let shift = rng.range(1, i64::from(in_w).min(12)) as i32;
                        let out_f = rng.range(-8, 24) as i32;
                        CastSet::new(
                            in_w,
                            out_f + shift,
                            out_w,
                            out_f,
                            signed,
                            quant,
                            ovf,
                            "random: rounding",
                        )
                    }
                    1 => {
                        // Left shift or equal fractions.
                        let in_w = rng.range(1, 40) as u32;
                        let out_w = rng.range(1, 64) as u32;
                        let shift = rng.range(-12, 0) as i32;
                        let out_f = rng.range(-20, 40) as i32;
                        CastSet::new(
                            in_w,
                            out_f + shift,
                            out_w,
                            out_f,
                            signed,
                            quant,
                            ovf,
                            "random: left shift / equal",
                        )
                    }
                    2 => {
                        // Extremes.
                        let in_w = rng.range(1, 24) as u32;
                        let out_w = rng.range(1, 64) as u32;
                        let (in_f, out_f, why) = match rng.next() % 4 {
                            0 => {
                                let out_f = rng.range(-10, 10) as i32;
                                (
                                    out_f + in_w as i32 + rng.range(0, 6) as i32,
                                    out_f,
                                    "random: everything dropped",
                                )
                            }
                            1 => {
                                let out_f = out_w as i32 + rng.range(1, 40) as i32;
                                (
                                    out_f + rng.range(-6, 10) as i32,
                                    out_f,
                                    "random: OUT_F > OUT_W",
                                )
                            }
                            2 => {
                                let out_f = -(rng.range(1, 40) as i32);
                                (
                                    out_f + rng.range(-6, 10) as i32,
                                    out_f,
                                    "random: negative F",
                                )
                            }
                            _ => {
                                let out_f = rng.range(-4, 4) as i32;
                                (
                                    out_f - out_w as i32 - rng.range(-1, 20) as i32,
                                    out_f,
                                    "random: big left shift",
                                )
                            }
                        };
                        CastSet::new(in_w, in_f, out_w, out_f, signed, quant, ovf, why)
                    }
                    _ => {
                        // Wide inputs.
                        let in_w = rng.range(60, 130) as u32;
                        let out_w = rng.range(32, 64) as u32;
                        let out_f = rng.range(-10, 60) as i32;
                        let shift = rng.range(-8, 70) as i32;
                        CastSet::new(
                            in_w,
                            out_f + shift,
                            out_w,
                            out_f,
                            signed,
                            quant,
                            ovf,
                            "random: wide input",
                        )
                    }
                };
                sets.push(set);
            }
        }
    }
    sets
}

// ---------------------------------------------------------------------------
// Inputs

/// An input value, in a form the simulator can take exactly: inputs of up to
/// 127 bits are plain `i128`s; wider ones are `a * 2^k` or `a * b`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Input {
    /// The value `m`.
    Int(i128),
    /// The value `a * 2^k`.
    Scaled { a: i128, k: u32 },
    /// The value `a * b`.
    Product { a: i128, b: i128 },
}

/// A 256-bit two's complement integer, little-endian 64-bit limbs.
type Wide = [u64; 4];

fn wide_from_i128(m: i128) -> Wide {
    let ext = if m < 0 { u64::MAX } else { 0 };
    [m as u64, (m >> 64) as u64, ext, ext]
}

fn wide_shl(x: Wide, k: u32) -> Wide {
    let mut out = [0u64; 4];
    for bit in 0..256u32 {
        let src = bit as i64 - i64::from(k);
        if src >= 0 && (x[(src / 64) as usize] >> (src % 64)) & 1 == 1 {
            out[(bit / 64) as usize] |= 1 << (bit % 64);
        }
    }
    out
}

fn wide_neg(x: Wide) -> Wide {
    let mut out = [0u64; 4];
    let mut carry = 1u64;
    for i in 0..4 {
        let (v, c) = (!x[i]).overflowing_add(carry);
        out[i] = v;
        carry = u64::from(c);
    }
    out
}

fn wide_mul(a: i128, b: i128) -> Wide {
    let (ma, mb) = (a.unsigned_abs(), b.unsigned_abs());
    let la = [ma as u64, (ma >> 64) as u64];
    let lb = [mb as u64, (mb >> 64) as u64];
    let mut out = [0u64; 4];
    for i in 0..2 {
        let mut carry = 0u128;
        for j in 0..2 {
            let t = u128::from(la[i]) * u128::from(lb[j]) + u128::from(out[i + j]) + carry;
            out[i + j] = t as u64;
            carry = t >> 64;
        }
        out[i + 2] = carry as u64;
    }
    if (a < 0) != (b < 0) {
        wide_neg(out)
    } else {
        out
    }
}

impl Input {
    fn wide(&self) -> Wide {
        match *self {
            Input::Int(m) => wide_from_i128(m),
            Input::Scaled { a, k } => wide_shl(wide_from_i128(a), k),
            Input::Product { a, b } => wide_mul(a, b),
        }
    }

    /// The value fits a `w`-bit two's complement word.
    fn fits(&self, w: u32) -> bool {
        let x = self.wide();
        let bit = |i: u32| (x[(i / 64) as usize] >> (i % 64)) & 1;
        let sign = bit(255);
        (w - 1..256).all(|i| bit(i) == sign)
    }

    /// The low `w` bits, little-endian limbs.
    fn bits(&self, w: u32) -> Wide {
        let mut x = self.wide();
        for i in w..256 {
            x[(i / 64) as usize] &= !(1u64 << (i % 64));
        }
        x
    }

    fn hex(&self, w: u32) -> String {
        let x = self.bits(w);
        let digits = w.div_ceil(4);
        (0..digits)
            .rev()
            .map(|d| {
                char::from_digit(((x[(d / 16) as usize] >> ((d % 16) * 4)) & 0xf) as u32, 16)
                    .unwrap()
            })
            .collect()
    }
}

/// Exact-value helpers for `Format::mul_from`: a format with `f` fraction
/// bits (only its `F` matters there).
fn frac_format(f: i32) -> Format {
    Format::new(true, 64, 64 - f, Quant::Trn, Overflow::Wrap)
        .expect("fraction format for a product")
}

/// The simulator's output bits for `input` (a value with `set.in_f`
/// fraction bits).
fn expected_bits(set: &CastSet, input: Input) -> u64 {
    let (fmt, adj) = set.reference();
    let frac = set.in_f + adj;
    let raw = match input {
        Input::Int(m) => fmt.quantize_exact(m, frac),
        Input::Scaled { a, k } => fmt.quantize_exact(a, frac - k as i32),
        // Beyond i128: the exact product a * b with `frac` fraction bits,
        // quantized and overflowed exactly like quantize_exact would.
        Input::Product { a, b } => {
            let fa = frac / 2;
            fmt.mul_from(a, &frac_format(fa), b, &frac_format(frac - fa))
        }
    };
    fmt.bits(raw)
}

/// Edge-case values for a `w`-bit input (`w <= 127`) whose bits are dropped
/// (`shift > 0`) or shifted left (`shift <= 0`) into the target of `set`.
fn edge_values(set: &CastSet, w: u32, shift: i64, rng: &mut Rng) -> Vec<i128> {
    assert!((1..=127).contains(&w));
    let min_in = -(1i128 << (w - 1));
    let max_in = (1i128 << (w - 1)) - 1;
    let (lo, hi) = set.out_range();
    let mut v = vec![
        0,
        1,
        -1,
        2,
        -2,
        3,
        -3,
        min_in,
        min_in + 1,
        min_in + 2,
        max_in,
        max_in - 1,
        max_in - 2,
        min_in / 2,
        max_in / 2,
    ];
    if shift > 0 && shift <= 125 {
        // floor(v) values: small ones and both ends of the output range
        // (saturation limits, -max for AP_SAT_SYM), then dropped-bit
        // patterns around the ties.
        let mut bases = vec![
            0,
            1,
            -1,
            2,
            -2,
            3,
            -3,
            hi,
            hi - 1,
            hi + 1,
            lo,
            lo + 1,
            lo - 1,
            -hi,
            -hi - 1,
            -hi + 1,
        ];
        for _ in 0..3 {
            bases.push(rng.range_i128(lo, hi));
        }
        let d = shift as u32;
        let half = 1i128 << (d - 1);
        let all = (1i128 << d) - 1;
        let mut patterns = vec![0, half, half - 1, half + 1, 1, all, half | (half >> 1)];
        patterns.push(rng.range_i128(0, all));
        patterns.retain(|&p| (0..=all).contains(&p));
        for &b in &bases {
            for &p in &patterns {
                if let Some(m) = b.checked_mul(1i128 << d).and_then(|x| x.checked_add(p)) {
                    v.push(m);
                }
            }
        }
    } else if shift <= 0 {
        // Values whose left-shifted copy lands next to a range limit.
        let l = (-shift) as u32;
        for b in [hi, lo, -hi, 0] {
            let m0 = if l >= 127 {
                if b < 0 {
                    -1
                } else {
                    0
                }
            } else {
                b >> l
            };
            v.extend([m0 - 1, m0, m0 + 1, m0 + 2]);
        }
    }
    v.retain(|&m| (min_in..=max_in).contains(&m));
    v
}

/// A random value for a `w`-bit input (`w <= 127`): uniform over the word,
/// or one whose quantized value lies near the output range.
fn random_value(set: &CastSet, w: u32, shift: i64, rng: &mut Rng) -> i128 {
    let min_in = -(1i128 << (w - 1));
    let max_in = (1i128 << (w - 1)) - 1;
    if rng.coin() {
        return rng.signed_bits(w);
    }
    let (lo, hi) = set.out_range();
    let t = rng.range_i128(lo - 3, hi + 3);
    let m = if shift > 0 && shift <= 120 {
        let d = shift as u32;
        t.checked_mul(1i128 << d)
            .and_then(|x| x.checked_add(rng.range_i128(0, (1i128 << d) - 1)))
    } else if shift <= 0 {
        let l = (-shift) as u32;
        Some(if l >= 127 {
            rng.range_i128(-1, 0)
        } else {
            t >> l
        })
    } else {
        None
    };
    match m {
        Some(m) if (min_in..=max_in).contains(&m) => m,
        _ => rng.signed_bits(w),
    }
}

/// `VECTORS` inputs for `set`: edge cases first, then random ones. Inputs of
/// at most 8 bits get every value of the word.
fn inputs_for(set: &CastSet, rng: &mut Rng) -> Vec<Input> {
    const EDGE_MAX: usize = 230;
    let shift = set.shift();
    let mut out: Vec<Input> = Vec::new();
    let push = |out: &mut Vec<Input>, x: Input| {
        if x.fits(set.in_w) && !out.contains(&x) {
            out.push(x);
        }
    };
    if set.in_w <= 127 {
        for m in edge_values(set, set.in_w, shift, rng) {
            push(&mut out, Input::Int(m));
        }
        out.truncate(EDGE_MAX);
        if set.in_w <= 8 {
            // Exhaustive, then repeats to keep every set at VECTORS rows.
            let half = 1i128 << (set.in_w - 1);
            for m in -half..half {
                push(&mut out, Input::Int(m));
            }
            while out.len() < VECTORS {
                out.push(Input::Int(rng.signed_bits(set.in_w)));
            }
        }
        while out.len() < VECTORS {
            push(
                &mut out,
                Input::Int(random_value(set, set.in_w, shift, rng)),
            );
        }
    } else {
        // Wider than i128: the extreme codes of the word (2^(IN_W-1) - 1 is
        // odd and needs a product), the edge cases of a 127-bit input scaled
        // by 2^k to reach the top of the word, the plain 127-bit edge cases,
        // and random full-width products.
        let k = set.in_w - 127;
        let m64 = 1i128 << 64;
        let top = 1i128 << 63;
        let mut edges = vec![
            Input::Product {
                a: m64 - 1,
                b: m64 - 1,
            },
            Input::Product {
                a: -m64 - 1,
                b: m64 - 1,
            },
            Input::Product {
                a: m64 + 1,
                b: m64 - 1,
            },
            Input::Product { a: -top, b: top },
        ];
        for m in edge_values(set, 127, shift - i64::from(k), rng) {
            edges.push(Input::Scaled { a: m, k });
        }
        for m in edge_values(set, 127, shift, rng) {
            edges.push(Input::Int(m));
        }
        for x in edges {
            push(&mut out, x);
        }
        out.truncate(EDGE_MAX);
        let h1 = (set.in_w - 1) / 2;
        let h2 = set.in_w - 1 - h1;
        while out.len() < VECTORS {
            let x = match rng.next() % 3 {
                0 => Input::Scaled {
                    a: random_value(set, 127, shift - i64::from(k), rng),
                    k,
                },
                1 => Input::Int(random_value(set, 127, shift, rng)),
                _ => {
                    // |a| < 2^h1, |b| < 2^h2: |a * b| < 2^(IN_W - 1)
                    let a = rng.signed_bits(h1 + 1).max(-(1i128 << h1) + 1);
                    let b = rng.signed_bits(h2 + 1).max(-(1i128 << h2) + 1);
                    Input::Product { a, b }
                }
            };
            push(&mut out, x);
        }
    }
    out.truncate(VECTORS);
    assert_eq!(out.len(), VECTORS, "{}", set.describe());
    out
}

// ---------------------------------------------------------------------------
// Bit vectors for the concatenated ports

struct BitVec {
    width: usize,
    words: Vec<u64>,
}

impl BitVec {
    fn new(width: usize) -> BitVec {
        BitVec {
            width,
            words: vec![0; width.div_ceil(64)],
        }
    }

    fn set_field(&mut self, offset: usize, width: u32, value: &Wide) {
        for i in 0..width as usize {
            if (value[i / 64] >> (i % 64)) & 1 == 1 {
                let b = offset + i;
                self.words[b / 64] |= 1 << (b % 64);
            }
        }
    }

    fn field(&self, offset: usize, width: u32) -> u64 {
        let mut v = 0u64;
        for i in 0..width as usize {
            let b = offset + i;
            v |= ((self.words[b / 64] >> (b % 64)) & 1) << i;
        }
        v
    }

    fn to_hex(&self) -> String {
        let digits = self.width.div_ceil(4);
        (0..digits)
            .rev()
            .map(|d| {
                char::from_digit(((self.words[d / 16] >> ((d % 16) * 4)) & 0xf) as u32, 16).unwrap()
            })
            .collect()
    }

    fn from_hex(width: usize, hex: &str) -> BitVec {
        let mut v = BitVec::new(width);
        assert_eq!(
            hex.len(),
            width.div_ceil(4),
            "output line has the wrong length"
        );
        for (d, c) in hex.chars().rev().enumerate() {
            let nib = u64::from(c.to_digit(16).expect("hex digit"));
            v.words[d / 16] |= nib << ((d % 16) * 4);
        }
        v
    }
}

// ---------------------------------------------------------------------------
// Generated sources

/// A top with one instance per set: instance `k` reads `cast_in[in_off[k] +:
/// IN_W]` and drives `cast_out[out_off[k] +: OUT_W]`.
fn top_verilog(name: &str, sets: &[CastSet]) -> (String, Vec<usize>, Vec<usize>, usize, usize) {
    let mut in_off = Vec::new();
    let mut out_off = Vec::new();
    let (mut iw, mut ow) = (0usize, 0usize);
    for s in sets {
        in_off.push(iw);
        out_off.push(ow);
        iw += s.in_w as usize;
        ow += s.out_w as usize;
    }
    let mut v = String::new();
    writeln!(
        v,
        "// Generated by generator/tests/rtl/cast.rs: one fptgen_cast per parameter set."
    )
    .unwrap();
    writeln!(v, "`timescale 1ns / 1ps\n`default_nettype none\n").unwrap();
    writeln!(
        v,
        "module {name} (\n    input  wire [{}:0] cast_in,\n    output wire [{}:0] cast_out\n);\n",
        iw - 1,
        ow - 1
    )
    .unwrap();
    for (k, s) in sets.iter().enumerate() {
        writeln!(v, "// {}", s.why).unwrap();
        writeln!(
            v,
            "fptgen_cast #({}) u_cast_{k} (.in(cast_in[{} +: {}]), .out(cast_out[{} +: {}]));\n",
            s.verilog_params(),
            in_off[k],
            s.in_w,
            out_off[k],
            s.out_w
        )
        .unwrap();
    }
    writeln!(v, "endmodule\n\n`default_nettype wire").unwrap();
    (v, in_off, out_off, iw, ow)
}

/// The Verilator main: one line of hex per input vector on stdin (the whole
/// `cast_in` port, most significant digit first); one line of hex for
/// `cast_out` per vector on stdout.
fn main_cpp(top: &str, in_w: usize, out_w: usize) -> String {
    assert!(in_w > 64 && out_w > 64, "the ports are VlWide arrays");
    format!(
        r#"// Generated by generator/tests/rtl/cast.rs
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <string>
#include "V{top}.h"
#include "verilated.h"

static const int IN_WORDS = {in_words};
static const int OUT_NIBBLES = {out_nibbles};

static uint32_t hexval(char c) {{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    std::cerr << "bad hex digit " << c << std::endl;
    std::exit(2);
}}

int main(int argc, char** argv) {{
    VerilatedContext* ctx = new VerilatedContext;
    ctx->commandArgs(argc, argv);
    V{top}* top = new V{top}{{ctx}};
    std::ios::sync_with_stdio(false);
    std::string line, out;
    while (std::getline(std::cin, line)) {{
        if (line.empty()) continue;
        for (int w = 0; w < IN_WORDS; ++w) top->cast_in[w] = 0;
        const size_t n = line.size();
        for (size_t i = 0; i < n; ++i) {{
            const size_t nib = n - 1 - i;
            top->cast_in[nib / 8] |= hexval(line[i]) << ((nib % 8) * 4);
        }}
        top->eval();
        out.clear();
        for (int nib = OUT_NIBBLES - 1; nib >= 0; --nib) {{
            out.push_back("0123456789abcdef"[(top->cast_out[nib / 8] >> ((nib % 8) * 4)) & 0xf]);
        }}
        std::cout << out << '\n';
    }}
    std::cout.flush();
    top->final();
    delete top;
    delete ctx;
    return 0;
}}
"#,
        in_words = in_w.div_ceil(32),
        out_nibbles = out_w.div_ceil(4),
    )
}

// ---------------------------------------------------------------------------
// Tests

#[test]
fn cast_matches_quantize_exact() {
    require_tool("verilator", "--version");
    let started = std::time::Instant::now();
    let mut rng = Rng(SEED);
    let mut sets = fixed_sets();
    sets.extend(random_sets(&mut rng));
    let inputs: Vec<Vec<Input>> = sets.iter().map(|s| inputs_for(s, &mut rng)).collect();

    let dir = scratch("rtl_cast");
    let top = "cast_top";
    let (verilog, in_off, out_off, in_w, out_w) = top_verilog(top, &sets);
    fs::write(dir.join(format!("{top}.v")), verilog).unwrap();
    fs::write(dir.join("main.cpp"), main_cpp(top, in_w, out_w)).unwrap();

    // -Wall with warnings fatal (Verilator's default): building is also the
    // lint of every parameter set.
    run(
        Command::new("verilator")
            .args([
                "--cc",
                "--exe",
                "--build",
                "-Wall",
                "-j",
                "2",
                "--top-module",
                top,
                "-Mdir",
                "obj",
                "-o",
                "vcast",
            ])
            .args(["-MAKEFLAGS", "OPT_FAST=-O1"])
            .args(quick_build())
            .arg(format!("{top}.v"))
            .arg(rtl_cast())
            .arg("main.cpp"),
        "verilator build (lint -Wall of every set)",
        &dir,
    );
    let built = started.elapsed();

    // Row j drives input j of every set at once.
    let mut rows: Vec<BitVec> = (0..VECTORS).map(|_| BitVec::new(in_w)).collect();
    for (k, s) in sets.iter().enumerate() {
        for (row, x) in rows.iter_mut().zip(&inputs[k]) {
            row.set_field(in_off[k], s.in_w, &x.bits(s.in_w));
        }
    }
    let stdin: String = rows.iter().map(|r| r.to_hex() + "\n").collect();
    let mut child = Command::new(dir.join("obj/vcast"))
        .current_dir(&dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("run the Verilator model");
    let mut pipe = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || pipe.write_all(stdin.as_bytes()));
    let output = child.wait_with_output().expect("Verilator model output");
    writer.join().unwrap().expect("write vectors");
    assert!(
        output.status.success(),
        "Verilator model failed: {}",
        output.status
    );
    let lines: Vec<&str> = std::str::from_utf8(&output.stdout)
        .unwrap()
        .lines()
        .collect();
    assert_eq!(lines.len(), VECTORS, "one output line per vector");

    // Set by set; report the first mismatch and how many there are.
    let outputs: Vec<BitVec> = lines.iter().map(|l| BitVec::from_hex(out_w, l)).collect();
    let mut first = None;
    let (mut bad, mut bad_sets) = (0usize, 0usize);
    for (k, s) in sets.iter().enumerate() {
        let mut set_bad = false;
        for (j, got_all) in outputs.iter().enumerate() {
            let x = inputs[k][j];
            let got = got_all.field(out_off[k], s.out_w);
            let want = expected_bits(s, x);
            if got != want {
                bad += 1;
                set_bad = true;
                first.get_or_insert_with(|| {
                    format!(
                        "set #{k}: {}\n  input: {x:?} = 0x{} ({} bits, {} fraction bits)\n  \
                         got:      {got:0w$b}\n  expected: {want:0w$b}",
                        s.describe(),
                        x.hex(s.in_w),
                        s.in_w,
                        s.in_f,
                        w = s.out_w as usize
                    )
                });
            }
        }
        bad_sets += usize::from(set_bad);
    }
    if let Some(first) = first {
        panic!(
            "fptgen_cast disagrees with Format::quantize_exact on {bad} of {} casts in {bad_sets} \
             of {} parameter sets; the first:\n  {first}\n  (files in {})",
            sets.len() * VECTORS,
            sets.len(),
            dir.display()
        );
    }
    eprintln!(
        "rtl_cast: {} parameter sets x {VECTORS} inputs = {} casts checked bit for bit; \
         Verilator build {:.1} s, total {:.1} s",
        sets.len(),
        sets.len() * VECTORS,
        built.as_secs_f64(),
        started.elapsed().as_secs_f64()
    );
    fs::remove_dir_all(&dir).ok();
}

#[test]
fn cast_synthesizes_for_ultrascale() {
    require_tool("yosys", "-V");
    use Overflow::*;
    use Quant::*;
    #[rustfmt::skip]
    let reps = [
        ("prod_to_acc", CastSet::new(34, 20, 24, 16, true, RndConv, Sat, "16x16 product -> ap_fixed<24,8,RND_CONV,SAT>")),
        ("sum_to_acc", CastSet::new(26, 12, 24, 12, true, Trn, Sat, "(W+2)-bit sum -> ap_fixed<24,12,TRN,SAT>")),
        ("acc_to_out", CastSet::new(25, 16, 8, 5, true, Rnd, SatSym, "accumulator -> ap_fixed<8,3,RND,SAT_SYM>")),
        ("acc_to_relu", CastSet::new(25, 16, 8, 5, false, RndConv, Sat, "accumulator -> quantized_relu(8,3)")),
        ("wide_prod", CastSet::new(130, 120, 64, 60, true, RndInf, SatZero, "130-bit product -> ap_fixed<64,4,RND_INF,SAT_ZERO>")),
        ("wide_wrap", CastSet::new(130, 120, 64, 48, true, Trn, Wrap, "130-bit product -> ap_fixed<64,16> (wiring only)")),
    ];
    let dir = scratch("rtl_cast_synth");

    // One top; each set sits in a keep_hierarchy wrapper, so that after
    // -flatten every wrapper holds exactly one cast and `stat` counts it.
    let mut v = String::from("// Generated by generator/tests/rtl/cast.rs\n`timescale 1ns / 1ps\n`default_nettype none\n\n");
    let (mut iw, mut ow) = (0u32, 0u32);
    let mut inst = String::new();
    for (name, s) in &reps {
        writeln!(
            v,
            "// {}\n(* keep_hierarchy *)\nmodule rep_{name} (input wire [{}:0] in, output wire [{}:0] out);\n\
             fptgen_cast #({}) u_cast (.in(in), .out(out));\nendmodule\n",
            s.why,
            s.in_w - 1,
            s.out_w - 1,
            s.verilog_params()
        )
        .unwrap();
        writeln!(
            inst,
            "rep_{name} u_{name} (.in(in[{iw} +: {}]), .out(out[{ow} +: {}]));",
            s.in_w, s.out_w
        )
        .unwrap();
        iw += s.in_w;
        ow += s.out_w;
    }
    writeln!(
        v,
        "module synth_top (input wire [{}:0] in, output wire [{}:0] out);\n{inst}endmodule",
        iw - 1,
        ow - 1
    )
    .unwrap();
    fs::write(dir.join("synth_top.v"), v).unwrap();

    // The standard flow, and the same without the MUXF7/8/9 wide-LUT
    // cascades that ABC likes for wide comparisons.
    let script = format!(
        "read_verilog {}\nread_verilog synth_top.v\ndesign -save read\n\
         synth_xilinx -family xcu -flatten -top synth_top\ncheck -assert\ntee -q -o stat.txt stat\n\
         design -load read\n\
         synth_xilinx -family xcu -flatten -nowidelut -top synth_top\ncheck -assert\ntee -q -o stat_nowidelut.txt stat\n",
        rtl_cast().display()
    );
    fs::write(dir.join("synth.ys"), script).unwrap();
    let started = std::time::Instant::now();
    run(
        Command::new("yosys").args(["-q", "-s", "synth.ys"]),
        "yosys synth_xilinx -family xcu",
        &dir,
    );

    let mut report = String::new();
    for (file, flow) in [
        ("stat.txt", "synth_xilinx -family xcu"),
        ("stat_nowidelut.txt", "... -nowidelut"),
    ] {
        let stat = fs::read_to_string(dir.join(file)).expect("stat output");
        writeln!(report, "  {flow}:").unwrap();
        for (name, s) in &reps {
            let cells = module_cells(&stat, &format!("rep_{name}"));
            let total: u64 = cells.iter().map(|(_, n)| n).sum();
            let list: Vec<String> = cells.iter().map(|(c, n)| format!("{c} {n}")).collect();
            writeln!(
                report,
                "    {name:12} {total:4} cells ({}) [{}]",
                list.join(", "),
                s.why
            )
            .unwrap();
        }
    }
    // Pure wiring stays wiring.
    let stat = fs::read_to_string(dir.join("stat.txt")).unwrap();
    assert!(
        module_cells(&stat, "rep_wide_wrap").is_empty(),
        "AP_TRN + AP_WRAP must be wiring only:\n{stat}"
    );
    eprintln!(
        "rtl_cast: yosys ({:.1} s)\n{report}",
        started.elapsed().as_secs_f64()
    );
    fs::remove_dir_all(&dir).ok();
}

/// The cell types and counts `stat` lists for `module`.
fn module_cells(stat: &str, module: &str) -> Vec<(String, u64)> {
    let header = format!("=== {module} ===");
    let body = stat
        .split(&header)
        .nth(1)
        .unwrap_or_else(|| panic!("no stat for {module}:\n{stat}"));
    let body = body.split("===").next().unwrap();
    let after = body.split("Number of cells:").nth(1).unwrap_or("");
    after
        .lines()
        .skip(1)
        .map(str::trim)
        .take_while(|l| !l.is_empty())
        .filter_map(|l| {
            let mut it = l.split_whitespace();
            let (cell, n) = (it.next()?, it.next()?);
            Some((cell.to_string(), n.parse().ok()?))
        })
        .collect()
}

#[test]
fn cast_illegal_parameters_stop_the_build() {
    require_tool("verilator", "--version");
    let dir = scratch("rtl_cast_illegal");
    fs::write(
        dir.join("bad_top.v"),
        "`timescale 1ns / 1ps\n`default_nettype none\n\
         module bad_top (input wire [7:0] in, output wire [64:0] out);\n\
         fptgen_cast #(.IN_W(8), .IN_F(0), .OUT_W(65), .OUT_F(0)) u_cast (.in(in), .out(out));\n\
         endmodule\n",
    )
    .unwrap();
    let out = Command::new("verilator")
        .args(["--binary", "-j", "2", "--top-module", "bad_top", "-Mdir", "obj", "-o", "vbad"])
        .arg("bad_top.v")
        .arg(rtl_cast())
        .current_dir(&dir)
        .output()
        .expect("run verilator");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        !out.status.success() && !dir.join("obj/vbad").exists(),
        "OUT_W = 65 must stop the Verilator build:\n{text}"
    );
    // The failed check names itself: the module it instantiates does not exist.
    assert!(
        text.contains("fptgen_param_error_cast_out_w_not_1_to_64"),
        "{text}"
    );
    fs::remove_dir_all(&dir).ok();
}
