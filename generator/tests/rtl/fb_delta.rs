//! `rtl/fptgen_fb_delta.v` in Verilator against a model written here from
//! its header (and docs/training.md, "Feedback rules" and "Hardware of the
//! feedback rules"): after `d_seed` (or `rst`) the 32-bit Galois feedback
//! LFSR (TAPS 0xA3000000, "Noise") restarts from SEED and the controller
//! gives N_OUT * C steps, output o = 0, 1, ... each over k = 0 .. C - 1
//! (`d_last` at k = C - 1); each step adds one term of g[o]: MODE 0 e[o]
//! at k = o, MODE 1 (dfa) B[o][k] * e[k], MODE 2 (drtp) -B[o][k] at k = k*
//! (`d_kstar`), MODE 3 (sgm) u[o][k] * h[k] (`s_u` 8-bit and `s_h` E_W-bit
//! signed); B[o][k] = +1 when the LFSR's next output bit is 1, else -1, one
//! bit per step in modes 1 and 2. At the step with `d_last`, `d_push` is
//! high and `d_value` = fp ? g[o] : 0 (MODE 3: fp ? R(g[o], SHIFT_G) : 0,
//! R rounding to nearest with ties to even).
//!
//! Several parameter sets in one build, as `fptgen_fb_layer` and
//! `fptgen_fb_conv` instantiate the module with the generator's widths
//! (E_W = output bits + 2, D_W = E_W + clog2(C) + 1, 8 more when the
//! trainer has a synthetic-gradient module): an MNIST-like output layer and
//! a 64-output dfa layer with 10 classes, drtp with 3 and 16 classes, sgm
//! with SHIFT_G 0, 3 and 31, one class and one output, 2-bit errors, 58-bit
//! errors. Random samples: a d_seed (or a reset) before each, the error
//! vector, k*, h and u drawn with extremes and powers of two, random f',
//! idle cycles between the steps whose inputs are noise, and now and then
//! a sample cut short by d_seed or rst. `d_push` is compared in every cycle
//! and `d_value` at every push (the cycles where the header defines it).
//! The test also checks that the stimulus pushed nonzero, zero-by-f' and
//! negative deltas, rounding ties in MODE 3, and cut samples. Fails (does
//! not skip) without Verilator.

use std::fmt::Write as _;
use std::fs;

use crate::common::{bits_for, mask, require_tool, scratch, Rng, Top};

/// One instance's parameters.
#[derive(Debug, Clone, Copy)]
struct Set {
    n_out: usize,
    c: usize,
    mode: u32,
    seed: u32,
    e_w: u32,
    d_w: u32,
    shift_g: u32,
}

const fn set(n_out: usize, c: usize, mode: u32, seed: u32, e_w: u32, d_w: u32, shift_g: u32) -> Set {
    Set { n_out, c, mode, seed, e_w, d_w, shift_g }
}

const SETS: [Set; 11] = [
    // MNIST-like output layer: 10 classes of 16-bit outputs (E_W 18, D_W 23)
    set(10, 10, 0, 0x2545_f491, 18, 23, 0),
    // MNIST-like hidden layer under dfa: 64 outputs
    set(64, 10, 1, 0x9e37_79b9, 18, 23, 0),
    // drtp, 3 classes of 8-bit outputs
    set(5, 3, 2, 0x0000_0001, 10, 13, 0),
    // sgm, 10 classes: D_W = E_W + clog2(C) + 1 + 8
    set(4, 10, 3, 0x1234_5678, 18, 31, 3),
    // sgm with one class and no rounding, the narrowest D_W it allows
    set(3, 1, 3, 0x8000_0000, 4, 13, 0),
    // sgm with the largest shift; wide errors, powers of two give ties
    set(3, 4, 3, 0xdead_beef, 30, 40, 31),
    // The output layer of an sgm trainer (D_W 8 wider than it needs)
    set(3, 3, 0, 0x0bad_cafe, 10, 21, 0),
    // drtp with 16 classes (every k code a class), seed all ones
    set(2, 16, 2, 0xffff_ffff, 6, 11, 0),
    // dfa, one class and one output, the narrowest errors
    set(1, 1, 1, 0x0000_0003, 2, 4, 0),
    // dfa with wide errors, an odd C
    set(3, 7, 1, 0xa300_0000, 58, 62, 0),
    // The narrowest output layer: one output, one class
    set(1, 1, 0, 0x0000_0001, 2, 4, 0),
];

const CYCLES: usize = 8000;

/// The docs' 32-bit Galois LFSR mask.
const TAPS: u32 = 0xA300_0000;

/// One LFSR step: the output bit and the next state.
fn lfsr_step(s: u32) -> (bool, u32) {
    let o = s & 1 == 1;
    (o, (s >> 1) ^ if o { TAPS } else { 0 })
}

/// The value of a `w`-bit code, two's complement.
fn signed(bits: u64, w: u32) -> i128 {
    let v = i128::from(bits & mask(w));
    if (v >> (w - 1)) & 1 == 1 { v - (1i128 << w) } else { v }
}

/// R(v, k): v / 2^k to nearest, ties to even (k >= 0).
fn round_shift(v: i128, k: u32) -> i128 {
    if k == 0 {
        return v;
    }
    let q = v >> k;
    let rem = v - (q << k);
    let half = 1i128 << (k - 1);
    if rem > half || (rem == half && q & 1 == 1) { q + 1 } else { q }
}

impl Set {
    fn k_w(&self) -> u32 {
        bits_for(self.c)
    }
}

/// One set's inputs in one cycle.
#[derive(Debug, Clone, Copy, Default)]
struct In {
    rst: bool,
    seed: bool,
    step: bool,
    k: u64,
    last: bool,
    kstar: bool,
    e: u64,
    h: u64,
    u: u64,
    fp: bool,
}

/// An E_W-bit code: extremes, small values, powers of two, random.
fn e_code(w: u32, rng: &mut Rng) -> u64 {
    let v: i128 = match rng.next() % 10 {
        0 => -(1i128 << (w - 1)),
        1 => (1i128 << (w - 1)) - 1,
        2 => 0,
        3 => i128::from(rng.range(-2, 2)),
        4 | 5 => {
            let p = 1i128 << (rng.next() % u64::from(w - 1));
            if rng.coin() { p } else { -p }
        }
        _ => return rng.next() & mask(w),
    };
    (v as u64) & mask(w)
}

/// An 8-bit u code: extremes, powers of two, random.
fn u_code(rng: &mut Rng) -> u64 {
    let v: i64 = match rng.next() % 8 {
        0 => -128,
        1 => 127,
        2 => 0,
        3 | 4 => {
            let p = 1i64 << (rng.next() % 7);
            if rng.coin() { p } else { -p }
        }
        _ => return rng.next() & 0xff,
    };
    (v as u64) & 0xff
}

/// One set's stimulus: samples of N_OUT * C steps in order, each after a
/// d_seed (or a reset), idle cycles with noise between steps, now and then
/// a sample cut short by d_seed or rst.
fn stimulus(s: &Set, rng: &mut Rng) -> Vec<In> {
    let full_k = 1u64 << s.k_w();
    let noise = |rng: &mut Rng| In {
        rst: false,
        seed: false,
        step: false,
        k: rng.next() % full_k,
        last: rng.coin(),
        kstar: rng.coin(),
        e: rng.next() & mask(s.e_w),
        h: rng.next() & mask(s.e_w),
        u: rng.next() & 0xff,
        fp: rng.coin(),
    };
    let mut out = Vec::with_capacity(CYCLES + 1024);
    let mut sample = 0;
    while out.len() < CYCLES {
        sample += 1;
        for _ in 0..rng.range(0, 3) {
            out.push(noise(rng));
        }
        // The restart: d_seed, or a reset now and then (both sometimes)
        let mut restart = noise(rng);
        restart.rst = rng.chance(15);
        restart.seed = !restart.rst || rng.coin();
        out.push(restart);
        let e: Vec<u64> = (0..s.c).map(|_| e_code(s.e_w, rng)).collect();
        let mut h: Vec<u64> = (0..s.c).map(|_| e_code(s.e_w, rng)).collect();
        // MODE 3 with rounding: some samples are made of ties, u[o][0] *
        // h[0] = +-2^(SHIFT_G - 1) and every other term a multiple of
        // 2^SHIFT_G (or 0).
        let tie = s.mode == 3 && s.shift_g > 0 && rng.chance(30);
        let (j_lo, j_hi) = (s.shift_g.min(s.e_w - 1).saturating_sub(1), s.shift_g.min(s.e_w - 2));
        let pm = |v: i64, rng: &mut Rng| (if rng.coin() { v } else { -v } as u64) & mask(s.e_w);
        if tie {
            h[0] = pm(1 << j_lo, rng);
            for hk in h.iter_mut().skip(1) {
                *hk = pm(1 << j_hi, rng);
            }
        }
        let kstar = rng.next() % s.c as u64;
        // A cut sample (the second, and others now and then) stops after a
        // random step; the next restarts.
        let total = s.n_out * s.c;
        let cut = if sample == 2 || rng.chance(5) { rng.range(0, total as i64 - 1) as usize } else { total };
        for n in 0..cut {
            let k = (n % s.c) as u64;
            let fp = rng.chance(75);
            out.push(In {
                rst: false,
                seed: false,
                step: true,
                k,
                last: k + 1 == s.c as u64,
                kstar: k == kstar,
                e: e[k as usize],
                h: h[k as usize],
                u: match (tie, k) {
                    (false, _) => u_code(rng),
                    (true, 0) => pm(1 << (s.shift_g - 1 - j_lo), rng) & 0xff,
                    (true, _) if rng.chance(30) => 0,
                    (true, _) => pm(1 << rng.range(i64::from(s.shift_g - j_hi), 6), rng) & 0xff,
                },
                fp,
            });
            if rng.chance(20) {
                for _ in 0..rng.range(1, 3) {
                    out.push(noise(rng));
                }
            }
        }
    }
    out.truncate(CYCLES);
    out
}

/// What the stimulus exercised, per set.
#[derive(Debug, Default, Clone)]
struct Stats {
    pushes: usize,
    nonzero: usize,
    negative: usize,
    /// pushes with f' = 0 whose g[o] was nonzero
    masked: usize,
    /// MODE 3: pushes whose g[o] was a tie for R
    ties: usize,
    /// samples cut short by d_seed or rst
    cut: usize,
}

/// Compares the simulation's output with the model, cycle by cycle.
fn check(sets: &[Set], stim: &[Vec<In>], rows: &[Vec<u128>]) -> Result<Vec<Stats>, String> {
    let mut stats = vec![Stats::default(); sets.len()];
    for (i, s) in sets.iter().enumerate() {
        let st = &mut stats[i];
        // The LFSR, the steps since the restart and g[o] so far.
        let mut lfsr = s.seed;
        let mut n = 0usize;
        let mut g: i128 = 0;
        for (cy, (got, x)) in rows.iter().zip(&stim[i]).enumerate() {
            let (value, push) = (got[2 * i] as u64, got[2 * i + 1] as u64);
            let (o, k) = (n / s.c, n % s.c);
            let ctx = || format!("cycle {cy}, set {i} ({s:?}), output {o} class {k}, inputs {x:x?}");
            let want_push = u64::from(x.step && x.last);
            if push != want_push {
                return Err(format!("{}: d_push {push}, expected {want_push}", ctx()));
            }
            if x.step {
                if x.k != k as u64 {
                    return Err(format!("{}: the stimulus breaks the order of the steps", ctx()));
                }
                let bit = lfsr_step(lfsr).0;
                let e = signed(x.e, s.e_w);
                let term = match s.mode {
                    0 => if o == k { e } else { 0 },
                    1 => if bit { e } else { -e },
                    2 => match (x.kstar, bit) {
                        (false, _) => 0,
                        (true, true) => -1,
                        (true, false) => 1,
                    },
                    _ => signed(x.u, 8) * signed(x.h, s.e_w),
                };
                g = if k == 0 { term } else { g + term };
                if x.last {
                    let r = if s.mode == 3 { round_shift(g, s.shift_g) } else { g };
                    let want = if x.fp { r } else { 0 };
                    let want_bits = (want as u64) & mask(s.d_w);
                    if value != want_bits {
                        return Err(format!("{}: d_value {value:#x}, expected {want_bits:#x} (g[o] = {g}, f' = {})", ctx(), x.fp));
                    }
                    st.pushes += 1;
                    st.nonzero += usize::from(want != 0);
                    st.negative += usize::from(want < 0);
                    st.masked += usize::from(!x.fp && r != 0);
                    if s.mode == 3 && s.shift_g > 0 && g - ((g >> s.shift_g) << s.shift_g) == 1i128 << (s.shift_g - 1) {
                        st.ties += 1;
                    }
                }
            }
            // The edge
            if x.rst || x.seed {
                if n != 0 && n != s.n_out * s.c {
                    st.cut += 1;
                }
                lfsr = s.seed;
                n = 0;
            } else if x.step {
                if s.mode == 1 || s.mode == 2 {
                    lfsr = lfsr_step(lfsr).1;
                }
                n += 1;
            }
        }
    }
    Ok(stats)
}

/// The top: an instance per set, its ports suffixed by the set's index;
/// per set the inputs of `In` in its order, the outputs value and push.
fn top(sets: &[Set]) -> Top {
    let mut top = Top::default();
    for (i, s) in sets.iter().enumerate() {
        let ins = [("rst", 1), ("seed", 1), ("step", 1), ("k", s.k_w()), ("last", 1), ("kstar", 1), ("e", s.e_w), ("h", s.e_w), ("u", 8), ("fp", 1)];
        ins.iter().for_each(|&(n, w)| top.input(format!("{n}{i}"), w));
        top.output(format!("value{i}"), s.d_w);
        top.output(format!("push{i}"), 1);
        writeln!(
            top.body,
            "fptgen_fb_delta #(.N_OUT({}), .C({}), .MODE({}), .SEED(32'h{:08x}), .E_W({}), .D_W({}), .SHIFT_G({})) dut{i} (\n    \
             .clk(clk), .rst(rst{i}), .d_seed(seed{i}), .d_step(step{i}), .d_k(k{i}), .d_last(last{i}), .d_kstar(kstar{i}), .d_e(e{i}), \
             .s_h(h{i}), .s_u(u{i}), .fp(fp{i}), .d_value(value{i}), .d_push(push{i}));",
            s.n_out, s.c, s.mode, s.seed, s.e_w, s.d_w, s.shift_g
        )
        .unwrap();
    }
    top
}

#[test]
fn fb_delta_matches_the_header() {
    require_tool("verilator", "--version");
    let dir = scratch("rtl_fb_delta");
    let mut rng = Rng(0xde17_a5);
    let stim: Vec<Vec<In>> = SETS.iter().map(|s| stimulus(s, &mut rng)).collect();
    // One reset edge (every set's rst, all else 0), then the stimulus.
    let reset: Vec<u128> = SETS.iter().flat_map(|_| [1, 0, 0, 0, 0, 0, 0, 0, 0, 0]).collect();
    let rows: Vec<Vec<u128>> = std::iter::once(reset)
        .chain((0..CYCLES).map(|cy| {
            stim.iter()
                .map(|v| v[cy])
                .flat_map(|x| [u64::from(x.rst), u64::from(x.seed), u64::from(x.step), x.k, u64::from(x.last), u64::from(x.kstar), x.e, x.h, x.u, u64::from(x.fp)])
                .map(u128::from)
                .collect()
        }))
        .collect();
    let rtl = ["fptgen_fb_delta.v", "fptgen_lfsr.v", "fptgen_lfsr_advance.v", "fptgen_round_shift.v"];
    let out = top(&SETS).run("delta_top", true, &dir, &rtl, &rows);
    let stats = check(&SETS, &stim, &out[1..]).unwrap_or_else(|e| panic!("{e} (files in {})", dir.display()));
    for (i, (s, st)) in SETS.iter().zip(&stats).enumerate() {
        assert!(st.pushes > 100, "set {i} ({s:?}): too few pushes: {st:?}");
        assert!(st.nonzero > st.pushes / 4 && st.negative > 10 && st.masked > 10, "set {i} ({s:?}): dull deltas: {st:?}");
        assert!(st.cut > 0 || s.n_out * s.c == 1, "set {i} ({s:?}): no sample cut short: {st:?}");
        if s.mode == 3 && s.shift_g > 0 {
            assert!(st.ties > 10, "set {i} ({s:?}): too few ties: {st:?}");
        }
    }
    let _ = fs::remove_dir_all(&dir);
}
