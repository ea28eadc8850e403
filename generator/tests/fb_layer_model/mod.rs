//! Pieces of the reference shared by the tests of the two layer modules of
//! the feedback rules, `rtl::fb_layer` (dense) and `rtl::fb_conv`: codes,
//! the noise LFSR, the step R, f' and the terms and deltas of
//! docs/training.md ("Feedback rules", "Noise"), the inputs of the two
//! modules (their ports, random codes) and the every-cycle comparison of
//! their three outputs. Each test keeps its own model of its module's
//! memories, walk and update; these are the parts that are the same.

#![allow(dead_code)]

use std::fmt::Debug;
use std::path::Path;

use std::fmt::Write as _;

use crate::common::{bits_for, mask, Rng, Top};

/// The value of a `w`-bit code, two's complement if `signed`.
pub fn value(bits: u64, w: u32, signed: bool) -> i128 {
    let v = i128::from(bits & mask(w));
    if signed && (v >> (w - 1)) & 1 == 1 { v - (1i128 << w) } else { v }
}

/// `v` as a `w`-bit code.
pub fn code(v: i128, w: u32) -> u64 {
    (v as u64) & mask(w)
}

/// One step of the 32-bit Galois LFSR of docs/training.md ("Noise"):
/// the output bit and the next state.
pub fn lfsr_step(s: u32) -> (u32, u32) {
    let o = s & 1;
    (o, (s >> 1) ^ if o == 1 { 0xA300_0000 } else { 0 })
}

/// `n` output bits (the first in the least significant position) and the
/// state after them.
pub fn lfsr_bits(mut s: u32, n: u32) -> (u128, u32) {
    let mut v = 0u128;
    for j in 0..n {
        let (o, next) = lfsr_step(s);
        v |= u128::from(o) << j;
        s = next;
    }
    (v, s)
}

/// R(v, k) to nearest, ties to even (k > 0), v (k = 0), v * 2^-k (k < 0);
/// with `rnd` (k > 0): floor((v + rnd) / 2^k). Saturated to `w` bits.
/// Returns the code, whether it saturated and whether it was a tie.
pub fn step(v: i128, k: i32, rnd: Option<i128>, w: u32) -> (u64, bool, bool) {
    let (r, tie) = if k > 0 {
        let q = v >> k;
        let rem = v - (q << k);
        match rnd {
            Some(r) => ((v + r) >> k, false),
            None => {
                let half = 1i128 << (k - 1);
                (q + i128::from(rem > half || (rem == half && q & 1 == 1)), rem == half)
            }
        }
    } else {
        (v << (-k), false)
    };
    let (lo, hi) = (-(1i128 << (w - 1)), (1i128 << (w - 1)) - 1);
    (code(r.clamp(lo, hi), w), r < lo || r > hi, tie)
}

/// A random `w`-bit code, the extremes (and 1) often.
pub fn pick(rng: &mut Rng, w: u32, signed: bool) -> u64 {
    match rng.next() % 8 {
        0 => 0,
        1 => mask(w),
        2 if signed => mask(w) >> 1,
        3 if signed => 1u64 << (w - 1),
        2 | 3 => 1,
        _ => rng.next() & mask(w),
    }
}

/// An A_W-bit output code near f''s bounds `a_min` and `a_max`, or
/// anything.
pub fn pick_a(rng: &mut Rng, a_min: i64, a_max: i64, a_w: u32, a_s: bool) -> u64 {
    let near = [a_min - 1, a_min, a_min + 1, a_max - 1, a_max, a_max + 1];
    if rng.chance(50) {
        code(i128::from(near[(rng.next() % 6) as usize]), a_w)
    } else {
        pick(rng, a_w, a_s)
    }
}

/// The outputs the model expects in one cycle (None: not compared).
#[derive(Debug, Clone, Copy, Default)]
pub struct Want {
    pub d_value: Option<u64>,
    pub d_zero: Option<bool>,
    pub u_step: Option<u64>,
}

/// Compares instance `i`'s d_value, d_zero and u_step (output columns
/// 3i to 3i + 2 of `rows`) with `wants` in every cycle from 1 (before the
/// first edge, with rst, the registers are unknown); the first difference
/// names set, cycle, signal, value and expected value, the set `s`, the
/// cycle's inputs `ins` and the files in `dir`. Returns how many values of
/// d_value, d_zero and u_step were compared.
pub fn compare(i: usize, s: &impl Debug, rows: &[Vec<u128>], wants: &[Want], ins: &[impl Debug], dir: &Path) -> Result<[usize; 3], String> {
    let mut counts = [0; 3];
    for cy in 1..rows.len() {
        let want = &wants[cy];
        let values = [want.d_value, want.d_zero.map(u64::from), want.u_step];
        for (j, (name, want)) in ["d_value", "d_zero", "u_step"].into_iter().zip(values).enumerate() {
            let Some(want) = want else { continue };
            let got = rows[cy][3 * i + j] as u64;
            if got != want {
                let x = &ins[cy];
                return Err(format!("set {i}, cycle {cy}: {name} {got:#x}, expected {want:#x} (set {s:?}; inputs {x:?}; files in {})", dir.display()));
            }
            counts[j] += 1;
        }
    }
    Ok(counts)
}

/// The parameters of f', the deltas and the input codes that both modules
/// have.
#[derive(Debug, Clone, Copy)]
pub struct Rules {
    pub c: usize,
    pub x_w: u32,
    pub x_s: bool,
    pub a_w: u32,
    pub a_s: bool,
    pub fp_mode: u32,
    pub a_min: i64,
    pub a_max: i64,
    pub mode: u32,
    pub e_w: u32,
    pub d_w: u32,
    pub shift_g: u32,
}

/// One instance's inputs in one cycle (u_acc: `fptgen_fb_conv` only).
#[derive(Debug, Clone, Default)]
pub struct In {
    pub x_cap: bool,
    pub x: Vec<u64>,
    pub a_cap: bool,
    pub a: Vec<u64>,
    pub d_seed: bool,
    pub d_step: bool,
    pub d_k: u64,
    pub d_last: bool,
    pub d_kstar: bool,
    pub d_e: u64,
    pub s_h: u64,
    pub s_u: u64,
    pub u_row: bool,
    pub u_col: bool,
    pub u_bias: bool,
    pub u_wr: bool,
    pub u_acc: bool,
}

/// The strobe inputs, in `In::row`'s order (u_acc last).
pub const STROBES: [&str; 11] = ["x_cap", "a_cap", "d_seed", "d_step", "d_last", "d_kstar", "u_row", "u_col", "u_bias", "u_wr", "u_acc"];

impl In {
    /// The inputs in `ports`' order (u_acc when `acc`).
    pub fn row(&self, acc: bool) -> impl Iterator<Item = u128> + '_ {
        let strobes = [self.x_cap, self.a_cap, self.d_seed, self.d_step, self.d_last, self.d_kstar, self.u_row, self.u_col, self.u_bias, self.u_wr, self.u_acc];
        let n = if acc { 11 } else { 10 };
        strobes.into_iter().take(n).map(u64::from).chain([self.d_k, self.d_e, self.s_h, self.s_u]).chain(self.x.iter().chain(&self.a).copied()).map(u128::from)
    }
}

impl Rules {
    /// f' of the A_W-bit output code `a`.
    pub fn fprime(&self, a: u64) -> bool {
        let v = value(a, self.a_w, self.a_s);
        match self.fp_mode {
            0 => true,
            1 => v > i128::from(self.a_min),
            _ => v > i128::from(self.a_min) && v < i128::from(self.a_max),
        }
    }

    /// This step's term of g for output `o` with the feedback LFSR at
    /// `fb` (None: unknown), and the LFSR after it.
    pub fn term(&self, x: &In, o: Option<usize>, fb: Option<u32>) -> (Option<i128>, Option<u32>) {
        let e = value(x.d_e, self.e_w, true);
        match self.mode {
            0 => (o.map(|o| if o as u64 == x.d_k { e } else { 0 }), fb),
            1 | 2 => match fb {
                None => (None, None),
                Some(st) => {
                    let (bit, next) = lfsr_step(st);
                    let b = if bit == 1 { 1 } else { -1 };
                    let t = if self.mode == 1 { b * e } else if x.d_kstar { -b } else { 0 };
                    (Some(t), Some(next))
                }
            },
            _ => (Some(value(x.s_u, 8, true) * value(x.s_h, self.e_w, true)), fb),
        }
    }

    /// The delta of the complete g (R(g, SHIFT_G) in MODE 3) with f' `fp`
    /// applied (None: f' unknown).
    pub fn delta(&self, g: i128, fp: Option<bool>) -> Option<i128> {
        let lim = 1i128 << (self.d_w - 1);
        assert!((-lim..lim).contains(&g), "model: g {g} does not fit D_W = {} ({self:?})", self.d_w);
        let g = if self.mode == 3 { step(g, self.shift_g as i32, None, self.d_w).0 } else { code(g, self.d_w) };
        Some(if fp? { value(g, self.d_w, true) } else { 0 })
    }

    /// Random data on every input (`n_x` input codes, `n_a` output codes),
    /// no strobe.
    pub fn noise(&self, rng: &mut Rng, n_x: usize, n_a: usize) -> In {
        In {
            x: (0..n_x).map(|_| pick(rng, self.x_w, self.x_s)).collect(),
            a: (0..n_a).map(|_| pick_a(rng, self.a_min, self.a_max, self.a_w, self.a_s)).collect(),
            d_k: rng.next() % (1 << bits_for(self.c)),
            d_last: rng.coin(),
            d_kstar: rng.coin(),
            d_e: pick(rng, self.e_w, true),
            s_h: pick(rng, self.e_w, true),
            s_u: pick(rng, 8, true),
            u_bias: rng.coin(),
            ..In::default()
        }
    }

    /// Instance `i`'s ports in `top`, suffixed by `i`: the strobes (u_acc
    /// when `acc`), d_k, d_e, s_h, s_u, `n_x` input codes x and `n_a`
    /// output codes a in (`In::row`'s order); d_value, d_zero and u_step
    /// (`s_w` bits) out.
    pub fn ports(&self, top: &mut Top, i: usize, acc: bool, n_x: usize, n_a: usize, s_w: u32) {
        STROBES[..if acc { 11 } else { 10 }].iter().for_each(|n| top.input(format!("{n}{i}"), 1));
        [("d_k", bits_for(self.c)), ("d_e", self.e_w), ("s_h", self.e_w), ("s_u", 8)].iter().for_each(|&(n, w)| top.input(format!("{n}{i}"), w));
        (0..n_x).for_each(|j| top.input(format!("x{i}_{j}"), self.x_w));
        (0..n_a).for_each(|j| top.input(format!("a{i}_{j}"), self.a_w));
        top.output(format!("d_value{i}"), self.d_w);
        top.output(format!("d_zero{i}"), 1);
        top.output(format!("u_step{i}"), s_w);
    }

    /// The connections of instance `i`'s ports (after `.clk(clk), .rst(rst)`),
    /// x and a concatenated, element 0 last.
    pub fn connections(&self, i: usize, acc: bool, n_x: usize, n_a: usize) -> String {
        let cat = |p: &str, n: usize| (0..n).rev().map(|j| format!("{p}{i}_{j}")).collect::<Vec<_>>().join(", ");
        let mut v = format!(".x_data({{{}}}), .a_data({{{}}})", cat("x", n_x), cat("a", n_a));
        let names = STROBES[..if acc { 11 } else { 10 }].iter().chain(&["d_k", "d_e", "s_h", "s_u", "d_value", "d_zero", "u_step"]);
        for n in names {
            write!(v, ", .{n}({n}{i})").unwrap();
        }
        v
    }
}
