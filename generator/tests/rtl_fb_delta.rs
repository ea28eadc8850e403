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

mod common;
use common::{bits_for, mask, require_tool, scratch, verilate_and_run, Rng};

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
fn check(sets: &[Set], stim: &[Vec<In>], out: &str) -> Result<Vec<Stats>, String> {
    let lines: Vec<&str> = out.lines().collect();
    if lines.len() != CYCLES {
        return Err(format!("{} lines of output for {CYCLES} cycles", lines.len()));
    }
    let mut stats = vec![Stats::default(); sets.len()];
    for (i, s) in sets.iter().enumerate() {
        let st = &mut stats[i];
        // The LFSR, the steps since the restart and g[o] so far.
        let mut lfsr = s.seed;
        let mut n = 0usize;
        let mut g: i128 = 0;
        for (cy, (line, x)) in lines.iter().zip(&stim[i]).enumerate() {
            let got: Vec<u64> = line.split_whitespace().skip(2 * i).take(2).map(|v| u64::from_str_radix(v, 16).expect("hex")).collect();
            let (value, push) = (got[0], got[1]);
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

fn top_verilog(sets: &[Set]) -> String {
    let mut v = String::from("`timescale 1ns / 1ps\n`default_nettype none\nmodule delta_top (\n    input wire clk");
    for (i, s) in sets.iter().enumerate() {
        write!(
            v,
            ",\n    input wire rst{i}, input wire seed{i}, input wire step{i}, input wire [{}:0] k{i}, input wire last{i}, input wire kstar{i}, \
             input wire [{ew}:0] e{i}, input wire [{ew}:0] h{i}, input wire [7:0] u{i}, input wire fp{i}, output wire [{}:0] value{i}, output wire push{i}",
            s.k_w() - 1,
            s.d_w - 1,
            ew = s.e_w - 1
        )
        .unwrap();
    }
    v += "\n);\n";
    for (i, s) in sets.iter().enumerate() {
        writeln!(
            v,
            "fptgen_fb_delta #(.N_OUT({}), .C({}), .MODE({}), .SEED(32'h{:08x}), .E_W({}), .D_W({}), .SHIFT_G({})) dut{i} (\n    \
             .clk(clk), .rst(rst{i}), .d_seed(seed{i}), .d_step(step{i}), .d_k(k{i}), .d_last(last{i}), .d_kstar(kstar{i}), .d_e(e{i}), \
             .s_h(h{i}), .s_u(u{i}), .fp(fp{i}), .d_value(value{i}), .d_push(push{i}));",
            s.n_out, s.c, s.mode, s.seed, s.e_w, s.d_w, s.shift_g
        )
        .unwrap();
    }
    v += "endmodule\n`default_nettype wire\n";
    v
}

/// The driver: one reset edge, then per cycle the stimulus, eval, every
/// set's d_value and d_push, a clock edge.
fn main_cpp(sets: &[Set]) -> String {
    let mut c = String::from(
        "#include \"Vdelta_top.h\"\n#include \"verilated.h\"\n#include <cstdio>\nint main(int argc, char** argv) {\n    \
         VerilatedContext ctx; ctx.commandArgs(argc, argv);\n    Vdelta_top top(&ctx);\n    FILE* f = std::fopen(\"stim.txt\", \"r\");\n    \
         unsigned long long r[10];\n    top.clk = 0;\n",
    );
    for i in 0..sets.len() {
        writeln!(c, "    top.rst{i} = 1;").unwrap();
    }
    c += "    top.eval(); top.clk = 1; top.eval(); top.clk = 0; top.eval();\n";
    writeln!(c, "    for (int t = 0; t < {CYCLES}; ++t) {{").unwrap();
    for i in 0..sets.len() {
        writeln!(
            c,
            "        for (int j = 0; j < 10; ++j) if (std::fscanf(f, \"%llx\", &r[j]) != 1) return 3;\n        \
             top.rst{i} = r[0]; top.seed{i} = r[1]; top.step{i} = r[2]; top.k{i} = r[3]; top.last{i} = r[4]; top.kstar{i} = r[5]; \
             top.e{i} = r[6]; top.h{i} = r[7]; top.u{i} = r[8]; top.fp{i} = r[9];"
        )
        .unwrap();
    }
    c += "        top.eval();\n";
    for i in 0..sets.len() {
        writeln!(c, "        std::printf(\"%llx %x \", (unsigned long long)top.value{i}, (unsigned)top.push{i});").unwrap();
    }
    c += "        std::printf(\"\\n\");\n        top.clk = 1; top.eval(); top.clk = 0; top.eval();\n    }\n    return 0;\n}\n";
    c
}

#[test]
fn fb_delta_matches_the_header() {
    require_tool("verilator", "--version");
    let dir = scratch("rtl_fb_delta");
    let mut rng = Rng(0xde17_a5);
    let stim: Vec<Vec<In>> = SETS.iter().map(|s| stimulus(s, &mut rng)).collect();
    let mut text = String::new();
    for cy in 0..CYCLES {
        for x in stim.iter().map(|v| v[cy]) {
            let b = |f: bool| u8::from(f);
            write!(
                text,
                "{} {} {} {:x} {} {} {:x} {:x} {:x} {} ",
                b(x.rst),
                b(x.seed),
                b(x.step),
                x.k,
                b(x.last),
                b(x.kstar),
                x.e,
                x.h,
                x.u,
                b(x.fp)
            )
            .unwrap();
        }
        text.push('\n');
    }
    fs::write(dir.join("stim.txt"), text).unwrap();
    fs::write(dir.join("delta_top.v"), top_verilog(&SETS)).unwrap();
    fs::write(dir.join("main.cpp"), main_cpp(&SETS)).unwrap();
    let out = verilate_and_run(&dir, "delta_top", &["fptgen_fb_delta.v", "fptgen_lfsr.v", "fptgen_lfsr_advance.v", "fptgen_round_shift.v"]);
    let stats = check(&SETS, &stim, &out).unwrap_or_else(|e| panic!("{e} (files in {})", dir.display()));
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
