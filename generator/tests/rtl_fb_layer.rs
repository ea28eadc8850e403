//! `rtl/fptgen_fb_layer.v` (with its real `fptgen_fb_fprime`,
//! `fptgen_fb_delta`, `fptgen_fb_step`, `fptgen_lfsr` and
//! `fptgen_round_shift`) in Verilator against a model written here from
//! its header and docs/training.md ("Feedback rules", "Stochastic
//! rounding", "Hardware of the feedback rules"): the input ring (x_cap
//! loads it, u_col moves its head to the next column), f' of the captured
//! outputs (FP_MODE 0, 1: a > A_MIN, 2: A_MIN < a < A_MAX), the deltas of
//! every mode (0: e[o] at k = o; 1: B[o][k] e[k]; 2: -B[o][k] at k*; 3:
//! u[o][k] h[k], then R(g, SHIFT_G)), B from the 32-bit Galois LFSR of
//! docs/training.md ("Noise") reloaded with SEED by d_seed, one bit per step
//! in modes 1 and 2; the delta ring (each delta pushed at d_last enters at
//! the top, u_row moves the head to the next row), d_zero, and u_step, the
//! step of the heads two cycles earlier: R(delta * (x - X_OFF), SHIFT_W) or
//! R(delta, SHIFT_B) saturated to S_W bits, to nearest with ties to even or
//! stochastically (floor((v + r) / 2^k), r = min(k, 32) fresh bits of the
//! tensor's rounding LFSR, reset to SEED_W / SEED_B, moved on by u_wr of its
//! tensor, shifted left by the rest of k).
//!
//! The stimulus is a controller's (fptgen_fb_ctrl's order): per sample,
//! captures (sometimes reusing the last), d_seed, the N_OUT * C delta steps
//! with random gaps (other layers' turns: random d_k, d_e, d_last, u_bias
//! meanwhile), then the update walk of the weights and the biases, which
//! skips a row whose delta the model says is 0 (d_zero) and otherwise
//! reads, waits and writes (u_wr), with random stalls; random data on every
//! port whenever it is not used, and a reset in the middle of the run.
//! Every cycle d_zero and u_step (whenever the heads two cycles before and
//! u_bias since are known and held) and, at every d_last step, d_value are
//! compared with the model. Eight parameter sets in one build: each mode,
//! each f', input offsets at both ends of their range (dense_int8's zero
//! point), left and right shifts, shifts above 32 with stochastic rounding,
//! one input, output and class, 2-bit errors and steps. The test checks
//! that deltas were nonzero and zero (by f' and by value), steps saturated,
//! rounding drew and rows were skipped, so it cannot pass vacuously; a
//! second test builds the module with the input offset added instead of
//! subtracted and checks that the comparison catches it. Fails (does not
//! skip) without Verilator.

use std::fmt::Write as _;
use std::fs;

mod common;
use common::{bits_for, mask, require_tool, scratch, verilate_and_run, Rng};

/// One instance's parameters.
#[derive(Debug, Clone, Copy)]
struct Set {
    n_in: usize,
    n_out: usize,
    c: usize,
    x_w: u32,
    x_s: bool,
    a_w: u32,
    a_s: bool,
    fp_mode: u32,
    a_min: i64,
    a_max: i64,
    x_off: i64,
    mode: u32,
    seed: u32,
    e_w: u32,
    d_w: u32,
    shift_w: i32,
    shift_b: i32,
    shift_g: u32,
    s_w: u32,
    stoch_w: bool,
    stoch_b: bool,
    seed_w: u32,
    seed_b: u32,
}

const BASE: Set = Set {
    n_in: 4,
    n_out: 3,
    c: 2,
    x_w: 8,
    x_s: true,
    a_w: 8,
    a_s: true,
    fp_mode: 1,
    a_min: 0,
    a_max: 0,
    x_off: 0,
    mode: 1,
    seed: 0x1234_5678,
    e_w: 10,
    d_w: 12,
    shift_w: 3,
    shift_b: 2,
    shift_g: 0,
    s_w: 10,
    stoch_w: false,
    stoch_b: false,
    seed_w: 1,
    seed_b: 1,
};

fn sets() -> Vec<Set> {
    vec![
        // A hidden dense layer under dfa (examples/tiny's shape), relu
        BASE,
        // The output layer (g = e): linear, unsigned 4-bit inputs, a left
        // shift of the weights' steps, 6-bit steps that saturate
        Set { n_in: 5, n_out: 3, c: 3, x_w: 4, x_s: false, fp_mode: 0, mode: 0, e_w: 9, d_w: 12, shift_w: -2, shift_b: 0, s_w: 6, seed: 0xffff_ffff, ..BASE },
        // One input, output and class under drtp; both tensors round
        // stochastically; 2-bit steps
        Set {
            n_in: 1,
            n_out: 1,
            c: 1,
            mode: 2,
            e_w: 2,
            d_w: 3,
            shift_w: 5,
            shift_b: 1,
            s_w: 2,
            stoch_w: true,
            stoch_b: true,
            seed_w: 0x8000_0001,
            seed_b: 0x0bad_cafe,
            ..BASE
        },
        // dense_int8 under sgm: zero point -128, relu6 between codes, the
        // int8 weights' steps stochastic at shift 17 (examples/int8_head)
        Set {
            n_in: 5,
            n_out: 4,
            c: 3,
            fp_mode: 2,
            a_min: -100,
            a_max: 50,
            x_off: -128,
            mode: 3,
            e_w: 9,
            d_w: 20,
            shift_w: 17,
            shift_b: 4,
            shift_g: 3,
            s_w: 10,
            stoch_w: true,
            seed_w: 0x1357_9bdf,
            ..BASE
        },
        // 16-bit inputs, ten classes, relu above act_min 5, a stochastic
        // shift above 32, a left shift of the biases
        Set {
            n_in: 7,
            n_out: 5,
            c: 10,
            x_w: 16,
            a_w: 16,
            a_min: 5,
            e_w: 18,
            d_w: 23,
            shift_w: 40,
            shift_b: -3,
            s_w: 18,
            stoch_w: true,
            seed_w: 0xdead_beef,
            ..BASE
        },
        // The largest input offset (2^X_W - 1) with unsigned inputs, relu
        // above -3 of signed 4-bit outputs, drtp, steps unshifted in 4 bits
        Set {
            n_in: 3,
            n_out: 6,
            c: 4,
            x_w: 8,
            x_s: false,
            a_w: 4,
            a_min: -3,
            x_off: 255,
            mode: 2,
            e_w: 6,
            d_w: 9,
            shift_w: 0,
            shift_b: 0,
            s_w: 4,
            ..BASE
        },
        // The smallest input offset (-2^X_W), sgm with SHIFT_G 0, 1-bit
        // unsigned outputs, biases stochastic at shift 31
        Set {
            n_in: 2,
            n_out: 2,
            c: 2,
            x_w: 8,
            a_w: 1,
            a_s: false,
            x_off: -256,
            mode: 3,
            e_w: 5,
            d_w: 14,
            shift_w: 6,
            shift_b: 31,
            shift_g: 0,
            s_w: 12,
            stoch_b: true,
            seed_b: 0x7fff_ffff,
            ..BASE
        },
        // dfa with 2-bit errors, 1-bit signed inputs, 3-bit steps (a left
        // shift of the biases' saturates them)
        Set { n_in: 3, n_out: 2, c: 2, x_w: 1, x_s: true, e_w: 2, d_w: 4, shift_w: 0, shift_b: -1, s_w: 3, ..BASE },
    ]
}

const CYCLES: usize = 24000;
const RESETS: [usize; 3] = [0, 1, 11017];

/// The value of a `w`-bit code, two's complement if `signed`.
fn value(bits: u64, w: u32, signed: bool) -> i128 {
    let v = i128::from(bits & mask(w));
    if signed && (v >> (w - 1)) & 1 == 1 { v - (1i128 << w) } else { v }
}

fn code(v: i128, w: u32) -> u64 {
    (v as u64) & mask(w)
}

/// One step of the 32-bit Galois LFSR of docs/training.md ("Noise"):
/// the output bit and the next state.
fn lfsr_step(s: u32) -> (u32, u32) {
    let o = s & 1;
    (o, (s >> 1) ^ if o == 1 { 0xA300_0000 } else { 0 })
}

/// `n` output bits (the first in the least significant position) and the
/// state after them.
fn lfsr_bits(mut s: u32, n: u32) -> (u128, u32) {
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
fn step(v: i128, k: i32, rnd: Option<i128>, w: u32) -> (u64, bool, bool) {
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

/// One set's inputs in one cycle.
#[derive(Debug, Clone, Default)]
struct In {
    x_cap: bool,
    x: Vec<u64>,
    a_cap: bool,
    a: Vec<u64>,
    d_seed: bool,
    d_step: bool,
    d_k: u64,
    d_last: bool,
    d_kstar: bool,
    d_e: u64,
    s_h: u64,
    s_u: u64,
    u_row: bool,
    u_col: bool,
    u_bias: bool,
    u_wr: bool,
}

impl In {
    fn bits(&self) -> u32 {
        [self.x_cap, self.a_cap, self.d_seed, self.d_step, self.d_last, self.d_kstar, self.u_row, self.u_col, self.u_bias, self.u_wr]
            .iter()
            .enumerate()
            .map(|(j, &b)| u32::from(b) << j)
            .sum()
    }
}

/// The outputs the model expects in one cycle (None: not compared).
#[derive(Debug, Clone, Copy, Default)]
struct Want {
    d_value: Option<u64>,
    d_zero: Option<bool>,
    u_step: Option<u64>,
}

#[derive(Debug, Default, Clone)]
struct Stats {
    deltas_nonzero: usize,
    deltas_fp_zero: usize,
    deltas_value_zero: usize,
    skipped: usize,
    written: usize,
    steps_saturated: usize,
    ties: usize,
    draws: usize,
    cmp_step: usize,
    cmp_zero: usize,
}

/// The model of one instance (None: unknown).
struct Model {
    s: Set,
    x: Vec<Option<u64>>,
    fp: Vec<Option<bool>>,
    d: Vec<Option<i128>>,
    fb: Option<u32>,
    o: Option<usize>,
    g: Option<i128>,
    /// Rounding LFSRs: weights, biases.
    rl: [Option<u32>; 2],
    /// The registered product (its value, u_bias of its cycle) and the
    /// registered step.
    prod: Option<(i128, bool)>,
    step: Option<u64>,
}

impl Model {
    fn new(s: Set) -> Model {
        Model {
            s,
            x: vec![None; s.n_in],
            fp: vec![None; s.n_out],
            d: vec![None; s.n_out],
            fb: None,
            o: None,
            g: None,
            rl: [None, None],
            prod: None,
            step: None,
        }
    }

    fn fprime(&self, a: u64) -> bool {
        let v = value(a, self.s.a_w, self.s.a_s);
        match self.s.fp_mode {
            0 => true,
            1 => v > i128::from(self.s.a_min),
            _ => v > i128::from(self.s.a_min) && v < i128::from(self.s.a_max),
        }
    }

    fn d_zero(&self) -> Option<bool> {
        self.d[0].map(|d| d == 0)
    }

    /// This step's term of g, and the feedback LFSR after it.
    fn term(&self, x: &In) -> (Option<i128>, Option<u32>) {
        let s = &self.s;
        let e = value(x.d_e, s.e_w, true);
        match s.mode {
            0 => (self.o.map(|o| if o as u64 == x.d_k { e } else { 0 }), self.fb),
            1 | 2 => match self.fb {
                None => (None, None),
                Some(st) => {
                    let (bit, next) = lfsr_step(st);
                    let b = if bit == 1 { 1 } else { -1 };
                    let t = if s.mode == 1 { b * e } else if x.d_kstar { -b } else { 0 };
                    (Some(t), Some(next))
                }
            },
            _ => (Some(value(x.s_u, 8, true) * value(x.s_h, s.e_w, true)), self.fb),
        }
    }

    /// g including this step, and the delta at d_last (f' applied).
    fn delta(&self, x: &In) -> Option<i128> {
        let s = &self.s;
        let g = self.g? + self.term(x).0?;
        let lim = 1i128 << (s.d_w - 1);
        assert!((-lim..lim).contains(&g), "model: g {g} does not fit D_W = {} ({s:?})", s.d_w);
        let g = if s.mode == 3 { step(g, s.shift_g as i32, None, s.d_w).0 } else { code(g, s.d_w) };
        let fp = self.fp[0]?;
        Some(if fp { value(g, s.d_w, true) } else { 0 })
    }

    fn outputs(&self, x: &In) -> Want {
        Want {
            d_value: if x.d_step && x.d_last { self.delta(x).map(|d| code(d, self.s.d_w)) } else { None },
            d_zero: self.d_zero(),
            u_step: self.step,
        }
    }

    /// The edge ending a cycle with inputs `x`.
    fn edge(&mut self, x: &In, rst: bool, st: &mut Stats) {
        let s = self.s;
        // The step: from the registered product, u_bias held, the tensor's
        // rounding draw as of this cycle.
        let t = usize::from(x.u_bias);
        let (shift, stoch) = if x.u_bias { (s.shift_b, s.stoch_b) } else { (s.shift_w, s.stoch_w) };
        self.step = match self.prod {
            Some((v, b)) if b == x.u_bias => {
                let rnd = if stoch {
                    self.rl[t].map(|r| {
                        let b = (shift as u32).min(32);
                        (lfsr_bits(r, b).0 as i128) << (shift as u32 - b)
                    })
                } else {
                    None
                };
                if stoch && rnd.is_none() {
                    None
                } else {
                    let (c, sat, tie) = step(v, shift, rnd, s.s_w);
                    st.steps_saturated += usize::from(sat);
                    st.ties += usize::from(tie);
                    Some(c)
                }
            }
            _ => None,
        };
        if x.u_wr && stoch {
            st.draws += 1;
            let b = (shift as u32).min(32);
            self.rl[t] = self.rl[t].map(|r| lfsr_bits(r, b).1);
        }
        // The product of the heads.
        let xh = self.x[0].map(|c| value(c, s.x_w, s.x_s) - i128::from(s.x_off));
        self.prod = match (self.d[0], xh) {
            (Some(d), _) if x.u_bias => Some((d, true)),
            (Some(d), Some(xv)) => Some((d * xv, false)),
            _ => None,
        };
        // Deltas
        if x.d_step {
            let (term, fb) = self.term(x);
            if x.d_last {
                let dv = self.delta(x);
                match (dv, self.fp[0]) {
                    (Some(0), Some(false)) => st.deltas_fp_zero += 1,
                    (Some(0), _) => st.deltas_value_zero += 1,
                    (Some(_), _) => st.deltas_nonzero += 1,
                    _ => {}
                }
                self.d.remove(0);
                self.d.push(dv);
                self.g = Some(0);
                self.o = self.o.map(|o| o + 1);
                if !x.a_cap {
                    self.fp.rotate_left(1);
                }
            } else {
                self.g = self.g.and_then(|g| Some(g + term?));
            }
            self.fb = fb;
        } else if x.u_row {
            self.d.rotate_left(1);
        }
        if x.d_seed {
            self.fb = Some(s.seed);
            self.o = Some(0);
            self.g = Some(0);
        }
        if x.x_cap {
            self.x = x.x.iter().map(|&c| Some(c)).collect();
        } else if x.u_col {
            self.x.rotate_left(1);
        }
        if x.a_cap {
            self.fp = x.a.iter().map(|&a| Some(self.fprime(a))).collect();
        }
        if rst {
            // The header promises the rounding LFSRs' reset (fb_step:
            // "reset to SEED_*"); the rest is known again after captures,
            // d_seed and pushes.
            let rl = [Some(s.seed_w), Some(s.seed_b)];
            *self = Model::new(s);
            self.rl = rl;
        }
    }
}

/// The stimulus generator: a controller that consults the model for
/// d_zero, and the model's expectations cycle by cycle.
struct Gen<'a> {
    s: Set,
    rng: &'a mut Rng,
    m: Model,
    ins: Vec<In>,
    want: Vec<Want>,
    st: Stats,
}

impl Gen<'_> {
    fn pick(&mut self, w: u32, signed: bool) -> u64 {
        match self.rng.next() % 8 {
            0 => 0,
            1 => mask(w),
            2 if signed => mask(w) >> 1,
            3 if signed => 1u64 << (w - 1),
            2 | 3 => 1,
            _ => self.rng.next() & mask(w),
        }
    }

    /// An output code near f''s bounds, or anything.
    fn pick_a(&mut self) -> u64 {
        let s = self.s;
        let near = [s.a_min - 1, s.a_min, s.a_min + 1, s.a_max - 1, s.a_max, s.a_max + 1];
        if self.rng.chance(50) {
            code(i128::from(near[(self.rng.next() % 6) as usize]), s.a_w)
        } else {
            self.pick(s.a_w, s.a_s)
        }
    }

    /// Random data on every port, every control input low.
    fn noise(&mut self) -> In {
        let s = self.s;
        In {
            x: (0..s.n_in).map(|_| self.pick(s.x_w, s.x_s)).collect(),
            a: (0..s.n_out).map(|_| self.pick_a()).collect(),
            d_k: self.rng.next() % (1 << bits_for(s.c)),
            d_last: self.rng.coin(),
            d_kstar: self.rng.coin(),
            d_e: self.pick(s.e_w, true),
            s_h: self.pick(s.e_w, true),
            s_u: self.pick(8, true),
            u_bias: self.rng.coin(),
            ..In::default()
        }
    }

    /// One cycle (an idle one first in place of a reset cycle).
    fn cycle(&mut self, x: In) {
        while RESETS.contains(&self.ins.len()) {
            let n = self.noise();
            self.one(n);
        }
        self.one(x);
    }

    fn one(&mut self, x: In) {
        let rst = RESETS.contains(&self.ins.len());
        self.want.push(self.m.outputs(&x));
        self.m.edge(&x, rst, &mut self.st);
        self.ins.push(x);
    }

    fn gap(&mut self, lo: i64, hi: i64) {
        for _ in 0..self.rng.range(lo, hi) {
            let n = self.noise();
            self.cycle(n);
        }
    }

    fn sample(&mut self) {
        let s = self.s;
        // Captures (x before a, as the pipeline passes), sometimes reused.
        let first = self.ins.len() < 4;
        if first || self.rng.chance(85) {
            self.gap(0, 3);
            let x = In { x_cap: true, ..self.noise() };
            self.cycle(x);
        }
        if first || self.rng.chance(85) {
            self.gap(0, 3);
            let x = In { a_cap: true, ..self.noise() };
            self.cycle(x);
        }
        // d_seed (the error unit's capture), C cycles finding k*.
        self.gap(0, 2);
        let x = In { d_seed: true, ..self.noise() };
        self.cycle(x);
        self.gap(s.c as i64, s.c as i64);
        let kstar = self.rng.range(0, s.c as i64 - 1) as u64;
        let gaps = self.rng.chance(40);
        for _ in 0..s.n_out {
            for k in 0..s.c {
                while gaps && self.rng.chance(20) {
                    let n = self.noise();
                    self.cycle(n);
                }
                let x = In { d_step: true, d_k: k as u64, d_last: k + 1 == s.c, d_kstar: k as u64 == kstar, ..self.noise() };
                self.cycle(x);
            }
        }
        self.gap(0, 3);
        // The update walk: weights, then biases (either may be frozen).
        for bias in [false, true] {
            if self.rng.chance(10) {
                continue;
            }
            let cols = if bias { 1 } else { s.n_in };
            let stalls = self.rng.chance(30);
            for _ in 0..s.n_out {
                for i in 0..cols {
                    let last = i + 1 == cols;
                    let zero = self.m.d_zero().unwrap_or_else(|| self.rng.coin());
                    let walk = |g: &mut Gen, row: bool, col: bool, wr: bool| In { u_bias: bias, u_row: row, u_col: col, u_wr: wr, ..g.noise() };
                    if zero {
                        self.st.skipped += 1;
                        let x = walk(self, last, !bias, false);
                        self.cycle(x);
                    } else {
                        self.st.written += 1;
                        for _ in 0..2 {
                            let x = walk(self, false, false, false);
                            self.cycle(x);
                        }
                        while stalls && self.rng.chance(20) {
                            let x = walk(self, false, false, false);
                            self.cycle(x);
                        }
                        let x = walk(self, last, !bias, true);
                        self.cycle(x);
                    }
                }
            }
        }
    }
}

fn top_verilog(sets: &[Set]) -> String {
    let mut v = String::from("`timescale 1ns / 1ps\n`default_nettype none\nmodule layer_top (\n    input wire clk,\n    input wire rst");
    for (i, s) in sets.iter().enumerate() {
        write!(
            v,
            ",\n    input wire x_cap{i}, input wire a_cap{i}, input wire d_seed{i}, input wire d_step{i}, input wire d_last{i}, input wire d_kstar{i}, \
             input wire u_row{i}, input wire u_col{i}, input wire u_bias{i}, input wire u_wr{i}, input wire [{}:0] d_k{i}, input wire [{ew}:0] d_e{i}, \
             input wire [{ew}:0] s_h{i}, input wire [7:0] s_u{i}",
            bits_for(s.c) - 1,
            ew = s.e_w - 1
        )
        .unwrap();
        for j in 0..s.n_in {
            write!(v, ", input wire [{}:0] x{i}_{j}", s.x_w - 1).unwrap();
        }
        for j in 0..s.n_out {
            write!(v, ", input wire [{}:0] a{i}_{j}", s.a_w - 1).unwrap();
        }
        write!(v, ",\n    output wire [{}:0] d_value{i}, output wire d_zero{i}, output wire [{}:0] u_step{i}", s.d_w - 1, s.s_w - 1).unwrap();
    }
    v += "\n);\n";
    for (i, s) in sets.iter().enumerate() {
        let xs: Vec<String> = (0..s.n_in).rev().map(|j| format!("x{i}_{j}")).collect();
        let a: Vec<String> = (0..s.n_out).rev().map(|j| format!("a{i}_{j}")).collect();
        writeln!(
            v,
            "fptgen_fb_layer #(.N_IN({}), .N_OUT({}), .C({}), .X_W({}), .X_S({}), .A_W({}), .A_S({}), .FP_MODE({}), .A_MIN({}), .A_MAX({}), \
             .X_OFF({}), .MODE({}), .SEED(32'h{:08x}), .E_W({}), .D_W({}), .SHIFT_W({}), .SHIFT_B({}), .SHIFT_G({}), .S_W({}), .STOCH_W({}), \
             .STOCH_B({}), .SEED_W(32'h{:08x}), .SEED_B(32'h{:08x})) u{i} (\n    .clk(clk), .rst(rst), .x_cap(x_cap{i}), .x_data({{{}}}), \
             .a_cap(a_cap{i}), .a_data({{{}}}), .d_seed(d_seed{i}), .d_step(d_step{i}), .d_k(d_k{i}), .d_last(d_last{i}), .d_kstar(d_kstar{i}), \
             .d_e(d_e{i}), .s_h(s_h{i}), .s_u(s_u{i}), .d_value(d_value{i}), .u_row(u_row{i}), .u_col(u_col{i}), .u_bias(u_bias{i}), \
             .u_wr(u_wr{i}), .d_zero(d_zero{i}), .u_step(u_step{i}));",
            s.n_in,
            s.n_out,
            s.c,
            s.x_w,
            u8::from(s.x_s),
            s.a_w,
            u8::from(s.a_s),
            s.fp_mode,
            s.a_min,
            s.a_max,
            s.x_off,
            s.mode,
            s.seed,
            s.e_w,
            s.d_w,
            s.shift_w,
            s.shift_b,
            s.shift_g,
            s.s_w,
            u8::from(s.stoch_w),
            u8::from(s.stoch_b),
            s.seed_w,
            s.seed_b,
            xs.join(", "),
            a.join(", ")
        )
        .unwrap();
    }
    v += "endmodule\n`default_nettype wire\n";
    v
}

fn main_cpp(sets: &[Set]) -> String {
    let mut c = String::from(
        "#include \"Vlayer_top.h\"\n#include \"verilated.h\"\n#include <cstdio>\nint main(int argc, char** argv) {\n    \
         VerilatedContext ctx; ctx.commandArgs(argc, argv);\n    Vlayer_top top(&ctx);\n    FILE* f = std::fopen(\"stim.txt\", \"r\");\n    \
         unsigned long long r, m;\n    top.clk = 0; top.eval();\n",
    );
    writeln!(c, "    for (int t = 0; t < {CYCLES}; ++t) {{\n        if (std::fscanf(f, \"%llx\", &r) != 1) return 3; top.rst = r;").unwrap();
    let rd = "if (std::fscanf(f, \"%llx\", &r) != 1) return 3;";
    for (i, s) in sets.iter().enumerate() {
        writeln!(
            c,
            "        if (std::fscanf(f, \"%llx\", &m) != 1) return 3;\n        \
             top.x_cap{i} = m & 1; top.a_cap{i} = (m >> 1) & 1; top.d_seed{i} = (m >> 2) & 1; top.d_step{i} = (m >> 3) & 1; \
             top.d_last{i} = (m >> 4) & 1; top.d_kstar{i} = (m >> 5) & 1; top.u_row{i} = (m >> 6) & 1; top.u_col{i} = (m >> 7) & 1; \
             top.u_bias{i} = (m >> 8) & 1; top.u_wr{i} = (m >> 9) & 1;\n        \
             {rd} top.d_k{i} = r; {rd} top.d_e{i} = r; {rd} top.s_h{i} = r; {rd} top.s_u{i} = r;"
        )
        .unwrap();
        for j in 0..s.n_in {
            writeln!(c, "        {rd} top.x{i}_{j} = r;").unwrap();
        }
        for j in 0..s.n_out {
            writeln!(c, "        {rd} top.a{i}_{j} = r;").unwrap();
        }
    }
    c += "        top.eval();\n";
    for i in 0..sets.len() {
        writeln!(
            c,
            "        std::printf(\"%llx %x %llx \", (unsigned long long)top.d_value{i}, (unsigned)top.d_zero{i}, (unsigned long long)top.u_step{i});"
        )
        .unwrap();
    }
    c += "        std::printf(\"\\n\");\n        top.clk = 1; top.eval(); top.clk = 0; top.eval();\n    }\n    return 0;\n}\n";
    c
}

/// Builds the top over `sets` (`layer_src`: another `fptgen_fb_layer.v`,
/// a path), runs the stimulus and compares every cycle.
fn run(name: &str, sets: &[Set], layer_src: Option<String>) -> (Result<Vec<Stats>, String>, std::path::PathBuf) {
    let mut rng = Rng(0xfb_1a7e);
    let (mut ins, mut wants, mut stats) = (Vec::new(), Vec::new(), Vec::new());
    for s in sets {
        let mut g = Gen { s: *s, rng: &mut rng, m: Model::new(*s), ins: Vec::new(), want: Vec::new(), st: Stats::default() };
        while g.ins.len() < CYCLES {
            g.sample();
        }
        g.ins.truncate(CYCLES);
        g.want.truncate(CYCLES);
        ins.push(g.ins);
        wants.push(g.want);
        stats.push(g.st);
    }
    let dir = scratch(name);
    let mut text = String::new();
    for cy in 0..CYCLES {
        write!(text, "{}", u8::from(RESETS.contains(&cy))).unwrap();
        for v in &ins {
            let x = &v[cy];
            write!(text, " {:x} {:x} {:x} {:x} {:x}", x.bits(), x.d_k, x.d_e, x.s_h, x.s_u).unwrap();
            for d in x.x.iter().chain(&x.a) {
                write!(text, " {d:x}").unwrap();
            }
        }
        text.push('\n');
    }
    fs::write(dir.join("stim.txt"), text).unwrap();
    fs::write(dir.join("layer_top.v"), top_verilog(sets)).unwrap();
    fs::write(dir.join("main.cpp"), main_cpp(sets)).unwrap();
    let layer = layer_src.unwrap_or_else(|| "fptgen_fb_layer.v".to_string());
    let out = verilate_and_run(
        &dir,
        "layer_top",
        &[layer.as_str(), "fptgen_fb_fprime.v", "fptgen_fb_delta.v", "fptgen_fb_step.v", "fptgen_lfsr.v", "fptgen_lfsr_advance.v", "fptgen_round_shift.v"],
    );
    let rows: Vec<Vec<u64>> = out.lines().map(|l| l.split_whitespace().map(|x| u64::from_str_radix(x, 16).expect("hex")).collect()).collect();
    if rows.len() != CYCLES {
        return (Err(format!("{} lines of output for {CYCLES} cycles", rows.len())), dir);
    }
    for (i, s) in sets.iter().enumerate() {
        let st = &mut stats[i];
        for cy in 1..CYCLES {
            let (got, want) = (&rows[cy][3 * i..3 * i + 3], &wants[i][cy]);
            let x = &ins[i][cy];
            let fail = |sig: &str, got: u64, want: u64| -> String {
                format!("set {i}, cycle {cy}: {sig} {got:#x}, expected {want:#x} (set {s:?}; inputs {x:?}; files in {})", dir.display())
            };
            if let Some(d) = want.d_value {
                if got[0] != d {
                    return (Err(fail("d_value", got[0], d)), dir);
                }
            }
            if let Some(z) = want.d_zero {
                if got[1] != u64::from(z) {
                    return (Err(fail("d_zero", got[1], u64::from(z))), dir);
                }
                st.cmp_zero += 1;
            }
            if let Some(u) = want.u_step {
                if got[2] != u {
                    return (Err(fail("u_step", got[2], u)), dir);
                }
                st.cmp_step += 1;
            }
        }
    }
    (Ok(stats), dir)
}

#[test]
fn fb_layer_matches_the_model() {
    require_tool("verilator", "--version");
    let sets = sets();
    let (result, dir) = run("rtl_fb_layer", &sets, None);
    let stats = result.unwrap_or_else(|e| panic!("{e}"));
    for (i, (s, st)) in sets.iter().zip(&stats).enumerate() {
        let ctx = format!("set {i} ({s:?}): {st:?}");
        assert!(st.deltas_nonzero >= 20 && st.deltas_value_zero + st.deltas_fp_zero >= 5, "{ctx}: too few nonzero or zero deltas");
        if s.fp_mode != 0 {
            assert!(st.deltas_fp_zero >= 5, "{ctx}: f' never zeroed a delta");
        }
        assert!(st.skipped >= 5 && st.written >= 50, "{ctx}: too few rows skipped or parameters written");
        assert!(st.cmp_step >= CYCLES / 3 && st.cmp_zero >= CYCLES / 2, "{ctx}: too few cycles compared");
        if s.stoch_w || s.stoch_b {
            assert!(st.draws >= 20, "{ctx}: too few stochastic draws");
        }
        if s.s_w <= 6 {
            assert!(st.steps_saturated > 0, "{ctx}: no step saturated");
        }
    }
    let _ = fs::remove_dir_all(&dir);
}

/// The comparison catches an input offset added instead of subtracted
/// (dense_int8's zero point).
#[test]
fn fb_layer_fails_on_a_wrong_offset() {
    require_tool("verilator", "--version");
    let source = fs::read_to_string(common::rtl_dir().join("fptgen_fb_layer.v")).expect("source");
    let right = "x_wide - OFF32[XE_W-1:0]";
    assert_eq!(source.matches(right).count(), 1, "the input offset");
    let dir = scratch("rtl_fb_layer_wrong_offset_src");
    let path = dir.join("fptgen_fb_layer.v");
    fs::write(&path, source.replace(right, "x_wide + OFF32[XE_W-1:0]")).unwrap();
    let all = sets();
    let (result, run_dir) = run("rtl_fb_layer_wrong_offset", &[all[3], all[5]], Some(path.display().to_string()));
    let err = result.expect_err("the wrong input offset was not noticed");
    assert!(err.contains("u_step"), "{err}");
    let _ = fs::remove_dir_all(&dir);
    let _ = fs::remove_dir_all(&run_dir);
}
