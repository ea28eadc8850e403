//! `rtl/fptgen_itb_ring.v`, the ES trainer's training blocks as a ring
//! that rotates past one update unit, in Verilator against P independent
//! blocks as seed 003 has them (docs/training.md, "The ring"): each block
//! its own LFSR, noise value and saturating gradient accumulator, written
//! here without a ring. Several configurations (P from 1 to 7, LFSR widths
//! 8/16/32, rademacher and uniform noise, power-of-two and exact loss
//! quantization) run random passes of P rotations with random strobes,
//! active counts, signals, seedings, idle gaps and stalls inside a pass;
//! every cycle the head's noise and gradient, the gradient at the unit,
//! the noise value a draw at the unit gives and the one the block at the
//! unit has, one cycle ahead (drawn_next, kept_next: compared with the
//! reference's values in the next cycle), and the gradient of the block
//! at the unit in the next cycle (ahead_grad) are compared with the blocks of the reference, bit for bit, from the first
//! cycle each is defined. Fails (does not skip) without Verilator.

use std::fmt::Write as _;
use std::fs;

use crate::common::{require_tool, scratch, verilate_and_run, Rng};

#[derive(Debug, Clone, Copy)]
struct Config {
    p: usize,
    lw: u32,
    uniform: bool,
    noise_bits: u32,
    exact: bool,
}

impl Config {
    /// Width of a noise value (b + 1 uniform, 2 rademacher) plus the sign
    /// bit the ring's `noise` output adds.
    fn noise_w(&self) -> u32 {
        (if self.uniform { self.noise_bits + 1 } else { 2 }) + 1
    }
}

/// One block of the reference; `None` until defined (the ring's storage
/// has no reset).
#[derive(Debug, Clone, Copy, Default)]
struct Block {
    lfsr: Option<u64>,
    e: Option<i128>,
    g: Option<i128>,
}

/// `bits` steps of the Galois LFSR of docs/training.md from `s`: the
/// output bits (the first in bit 0) and the state after them.
fn advance(s: u64, width: u32, bits: u32) -> (u64, u64) {
    let taps: u64 = match width {
        8 => 0xB8,
        16 => 0xB400,
        _ => 0xA300_0000,
    };
    let mut t = s;
    let mut out = 0;
    for k in 0..bits {
        let o = t & 1;
        out |= o << k;
        t >>= 1;
        if o == 1 {
            t ^= taps;
        }
    }
    (out, t)
}

/// The noise value of `bits`: rademacher +-1 from bit 0, uniform 2u + 1
/// with u the bits as a two's complement number.
fn noise(c: &Config, bits: u64) -> i128 {
    if c.uniform {
        let b = c.noise_bits;
        let u = i128::from(bits);
        let u = if (u >> (b - 1)) & 1 == 1 { u - (1i128 << b) } else { u };
        2 * u + 1
    } else if bits & 1 == 1 {
        1
    } else {
        -1
    }
}

/// Q(s) = sign(s) * 2^floor(log2 |s|), from the position of the leading one.
fn po2(s: i128) -> i128 {
    if s == 0 {
        0
    } else {
        s.signum() * (1i128 << (127 - s.unsigned_abs().leading_zeros()))
    }
}

/// One cycle's inputs of one ring.
#[derive(Debug, Clone, Copy, Default)]
struct Inputs {
    seed: bool,
    rot: bool,
    active: usize,
    draw: bool,
    clear: bool,
    acc: bool,
    sig: i128,
}

/// A random schedule of `cycles` cycles: idle gaps (with a seeding now and
/// then, only at rest), and passes of exactly P rotations with the pass's
/// strobes, active count and signal held, sometimes stalled.
fn schedule(c: &Config, rng: &mut Rng, cycles: usize) -> Vec<Inputs> {
    let mut out = Vec::new();
    let limit = 1i128 << 32;
    // Start by seeding, as ctl_start does.
    out.push(Inputs { seed: true, active: c.p, ..Default::default() });
    while out.len() < cycles {
        for _ in 0..rng.range(0, 3) {
            out.push(Inputs { seed: rng.chance(5), active: c.p, ..Default::default() });
        }
        let sig = match rng.next() % 5 {
            0 => 0,
            1 => rng.range(-5, 5) as i128,
            2 => -limit,
            _ => (rng.next() as i128 % (2 * limit)) - limit,
        };
        let pass = Inputs {
            seed: false,
            rot: true,
            active: rng.range(1, c.p as i64) as usize,
            draw: rng.chance(50),
            clear: rng.chance(15),
            acc: rng.chance(60),
            sig,
        };
        let mut k = 0;
        while k < c.p {
            if rng.chance(10) {
                out.push(Inputs { rot: false, ..pass });
            } else {
                out.push(pass);
                k += 1;
            }
        }
    }
    out
}

#[test]
fn ring_matches_p_independent_blocks() {
    require_tool("verilator", "--version");
    let configs = [
        Config { p: 5, lw: 8, uniform: false, noise_bits: 1, exact: false },
        Config { p: 3, lw: 16, uniform: true, noise_bits: 4, exact: true },
        Config { p: 1, lw: 32, uniform: true, noise_bits: 3, exact: false },
        Config { p: 2, lw: 8, uniform: false, noise_bits: 1, exact: true },
        Config { p: 7, lw: 16, uniform: true, noise_bits: 16, exact: false },
    ];
    const CYCLES: usize = 3000;
    let mut rng = Rng(0x21f6_0a11);
    let seeds: Vec<Vec<u64>> = configs
        .iter()
        .map(|c| (0..c.p).map(|_| 1 + rng.next() % ((1u64 << c.lw) - 1)).collect())
        .collect();
    let stims: Vec<Vec<Inputs>> = configs.iter().map(|c| schedule(c, &mut rng, CYCLES)).collect();
    let cycles = stims.iter().map(Vec::len).min().expect("configs");

    // The top: per configuration a ring and the power-of-two unit the
    // trainer puts before it.
    let dir = scratch("rtl_itb_ring");
    let mut v = String::from("`timescale 1ns / 1ps\n`default_nettype none\nmodule ring_top (\n    input wire clk,\n    input wire rst");
    for (i, c) in configs.iter().enumerate() {
        let aw = common_clog2(c.p) + 1;
        write!(
            v,
            ",\n    input wire seed{i}, input wire rot{i}, input wire [{}:0] act{i}, input wire draw{i}, input wire clr{i}, input wire acc{i}, input wire [32:0] sig{i},\n    output wire [{}:0] noise{i}, output wire [31:0] grad{i}, output wire [31:0] next{i}, output wire [{}:0] dn{i}, output wire [{}:0] kn{i}, output wire [31:0] ag{i}",
            aw - 1,
            c.noise_w() - 1,
            c.noise_w() - 1,
            c.noise_w() - 1
        )
        .unwrap();
    }
    v += "\n);\n";
    for (i, c) in configs.iter().enumerate() {
        let seeds_lit: Vec<String> = seeds[i].iter().rev().map(|s| format!("{}'h{:x}", c.lw, s)).collect();
        write!(
            v,
            "wire z{i}, n{i};\nwire [5:0] x{i};\nwire [32:0] oh{i};\n\
             fptgen_po2 #(.S_W(33)) po{i} (.s(sig{i}), .zero(z{i}), .neg(n{i}), .exp(x{i}), .onehot(oh{i}));\n\
             fptgen_itb_ring #(.P({}), .LW({}), .SEEDS({{{}}}), .UNIFORM({}), .NOISE_BITS({}), .EXACT({}), .S_W(33)) ring{i} (\n\
             .clk(clk), .rst(rst), .seed(seed{i}), .rot(rot{i}), .active(act{i}), .draw(draw{i}), .clear(clr{i}), .acc_en(acc{i}),\n\
             .signal(sig{i}), .sig_zero(z{i}), .sig_neg(n{i}), .sig_exp(x{i}), .sig_onehot(oh{i}),\n\
             .noise(noise{i}), .grad(grad{i}), .next_grad(next{i}), .drawn_next(dn{i}), .kept_next(kn{i}), .ahead_grad(ag{i}));\n",
            c.p,
            c.lw,
            seeds_lit.join(", "),
            u8::from(c.uniform),
            c.noise_bits,
            u8::from(c.exact)
        )
        .unwrap();
    }
    v += "endmodule\n`default_nettype wire\n";
    fs::write(dir.join("ring_top.v"), v).unwrap();

    // Stimulus: one line per cycle, 7 hex fields per configuration.
    let mut stim = String::new();
    for t in 0..cycles {
        for s in &stims {
            let x = s[t];
            let f = [u64::from(x.seed), u64::from(x.rot), x.active as u64, u64::from(x.draw), u64::from(x.clear), u64::from(x.acc), (x.sig as u64) & ((1u64 << 33) - 1)];
            for y in f {
                write!(stim, "{y:x} ").unwrap();
            }
        }
        stim.push('\n');
    }
    fs::write(dir.join("stim.txt"), stim).unwrap();

    let mut cpp = String::from("#include \"Vring_top.h\"\n#include \"verilated.h\"\n#include <cstdio>\nint main(int argc, char** argv) {\n    VerilatedContext ctx; ctx.commandArgs(argc, argv);\n    Vring_top top(&ctx);\n    FILE* f = std::fopen(\"stim.txt\", \"r\");\n    top.clk = 0; top.rst = 1; top.eval(); top.clk = 1; top.eval(); top.clk = 0; top.rst = 0; top.eval();\n");
    writeln!(cpp, "    for (int t = 0; t < {cycles}; ++t) {{\n        unsigned long long r[7];").unwrap();
    for i in 0..configs.len() {
        writeln!(cpp, "        for (int k = 0; k < 7; ++k) if (std::fscanf(f, \"%llx\", &r[k]) != 1) return 3;\n        top.seed{i} = r[0]; top.rot{i} = r[1]; top.act{i} = r[2]; top.draw{i} = r[3]; top.clr{i} = r[4]; top.acc{i} = r[5]; top.sig{i} = r[6];").unwrap();
    }
    cpp += "        top.eval();\n";
    for i in 0..configs.len() {
        writeln!(
            cpp,
            "        std::printf(\"%llx %llx %llx %llx %llx %llx \", (unsigned long long)top.noise{i}, (unsigned long long)top.grad{i}, (unsigned long long)top.next{i}, \
             (unsigned long long)top.dn{i}, (unsigned long long)top.kn{i}, (unsigned long long)top.ag{i});"
        )
        .unwrap();
    }
    cpp += "        std::printf(\"\\n\");\n        top.clk = 1; top.eval(); top.clk = 0; top.eval();\n    }\n    return 0;\n}\n";
    fs::write(dir.join("main.cpp"), cpp).unwrap();
    let out = verilate_and_run(&dir, "ring_top", &["fptgen_itb_ring.v", "fptgen_itb.v", "fptgen_lfsr_advance.v", "fptgen_po2.v", "fptgen_cast.v"]);

    // The reference: P blocks, the position of the block at the unit, and
    // the seeding flag.
    let mut blocks: Vec<Vec<Block>> = configs.iter().map(|c| vec![Block::default(); c.p]).collect();
    let mut pos = vec![0usize; configs.len()];
    let mut seeding = vec![false; configs.len()];
    let mut checked = 0usize;
    let mut lines = 0;
    // drawn_next and kept_next of the previous cycle, per configuration
    let mut prev_next: Vec<Option<(u64, u64)>> = vec![None; configs.len()];
    for (t, line) in out.lines().enumerate() {
        let f: Vec<u64> = line.split_whitespace().map(|x| u64::from_str_radix(x, 16).unwrap()).collect();
        for (i, c) in configs.iter().enumerate() {
            let x = stims[i][t];
            let head = (pos[i] + c.p - 1) % c.p;
            let ctx = format!("cycle {t}, configuration {i} {c:?}, head block {head}, block {} at the unit", pos[i]);
            let hb = blocks[i][head];
            if let Some(e) = hb.e {
                let mask = (1u64 << c.noise_w()) - 1;
                assert_eq!(f[6 * i], (e as u64) & mask, "{ctx}: noise (e = {e})");
                checked += 1;
            }
            if let Some(g) = hb.g {
                assert_eq!(f[6 * i + 1], (g as i32) as u32 as u64, "{ctx}: grad");
                checked += 1;
            }
            if let Some(g) = blocks[i][pos[i]].g {
                assert_eq!(f[6 * i + 2], (g as i32) as u32 as u64, "{ctx}: next_grad");
                checked += 1;
            }
            // The noise a draw at the unit gives and the one the block at
            // the unit has, and the gradient of the block at the unit in
            // the next cycle.
            {
                let j = pos[i];
                let b = blocks[i][j];
                let mask = (1u64 << c.noise_w()) - 1;
                let lfsr_in = if seeding[i] { Some(seeds[i][j]) } else { b.lfsr };
                if let Some((dn, kn)) = prev_next[i] {
                    if let Some(e) = lfsr_in.map(|s| noise(c, advance(s, c.lw, c.noise_bits).0)) {
                        assert_eq!(dn, (e as u64) & mask, "{ctx}: the previous cycle's drawn_next (e = {e})");
                        checked += 1;
                    }
                    if let Some(e) = b.e {
                        assert_eq!(kn, (e as u64) & mask, "{ctx}: the previous cycle's kept_next (e = {e})");
                        checked += 1;
                    }
                }
                prev_next[i] = Some((f[6 * i + 3], f[6 * i + 4]));
                let ahead = if x.rot { (j + 1) % c.p } else { j };
                if let Some(g) = blocks[i][ahead].g {
                    assert_eq!(f[6 * i + 5], (g as i32) as u32 as u64, "{ctx}: ahead_grad (block {ahead})");
                    checked += 1;
                }
            }
            // The clock edge.
            if x.rot {
                let j = pos[i];
                let on = j < x.active;
                let b = blocks[i][j];
                let lfsr_in = if seeding[i] { Some(seeds[i][j]) } else { b.lfsr };
                let mut nb = b;
                nb.lfsr = lfsr_in;
                if x.draw && on {
                    nb.lfsr = lfsr_in.map(|s| advance(s, c.lw, c.noise_bits).1);
                    nb.e = lfsr_in.map(|s| noise(c, advance(s, c.lw, c.noise_bits).0));
                }
                nb.g = if x.clear {
                    Some(0)
                } else if x.acc && on {
                    let q = if c.exact { x.sig } else { po2(x.sig) };
                    match (b.g, b.e) {
                        (Some(g), Some(e)) => Some((g + q * e).clamp(i128::from(i32::MIN), i128::from(i32::MAX))),
                        _ => None,
                    }
                } else {
                    b.g
                };
                blocks[i][j] = nb;
                if seeding[i] && j == c.p - 1 {
                    seeding[i] = false;
                }
                pos[i] = (j + 1) % c.p;
            }
            if x.seed {
                seeding[i] = true;
            }
        }
        lines += 1;
    }
    assert_eq!(lines, cycles);
    assert!(checked > cycles * configs.len(), "too few defined values compared: {checked}");
    let _ = fs::remove_dir_all(&dir);
}

/// clog2 as `rtl/fptgen_clog2.vh` defines it: the bits that hold 0..n-1, at
/// least 1.
fn common_clog2(n: usize) -> u32 {
    let mut w = 1;
    while (1usize << w) < n {
        w += 1;
    }
    w
}
