//! `rtl/fptgen_itb.v`, the training blocks' update unit, holding one block
//! in two registers (with `rtl/fptgen_po2.v`, `rtl/fptgen_es_step.v` and
//! `rtl/fptgen_es_update.v`, as the trainer connects them), in Verilator
//! against the ES block of
//! docs/training.md, written here independently: noise values, perturbation
//! with clamping to runtime bounds, the saturating gradient accumulator under
//! power-of-two and exact loss quantization, and the rounded, clamped update.
//! Random operations every cycle on 16 parameter sets, every output bit of
//! every cycle compared. Fails (does not skip) without Verilator.

use std::fmt::Write as _;
use std::fs;

use crate::common::{require_tool, scratch, verilate_and_run, Rng};

#[derive(Debug, Clone, Copy)]
struct Set {
    p_w: u32,
    p_s: bool,
    /// Signed AP_SAT_SYM parameter: clamps stop at -max (docs/training.md).
    sym: bool,
    uniform: bool,
    noise_bits: u32,
    sigma: u32,
    lr: i32,
    exact: bool,
}

impl Set {
    fn min(&self) -> i128 {
        match (self.p_s, self.sym) {
            (true, true) => -self.max(),
            (true, false) => -(1i128 << (self.p_w - 1)),
            _ => 0,
        }
    }
    fn max(&self) -> i128 {
        if self.p_s { (1i128 << (self.p_w - 1)) - 1 } else { (1i128 << self.p_w) - 1 }
    }
    fn clamp(&self, v: i128) -> i128 {
        v.clamp(self.min(), self.max())
    }
    /// Width of the signed codes the update unit works on.
    fn sw(&self) -> u32 {
        self.p_w + u32::from(!self.p_s)
    }
    /// `v` as a signed `sw()`-bit code, in hex for Verilog.
    fn sw_hex(&self, v: i128) -> String {
        format!("{}'h{:x}", self.sw(), v as u128 & ((1u128 << self.sw()) - 1))
    }
    fn bits(&self, v: i128) -> u64 {
        (v as u128 & ((1u128 << self.p_w) - 1)) as u64
    }
    fn decode(&self, b: u64) -> i128 {
        let v = i128::from(b) & ((1i128 << self.p_w) - 1);
        if self.p_s && (v >> (self.p_w - 1)) & 1 == 1 { v - (1i128 << self.p_w) } else { v }
    }
    /// The noise value that `noise_bits` give.
    fn noise(&self, bits: u64) -> i128 {
        if self.uniform {
            // 2u + 1, u the bits as two's complement (docs/training.md, "Noise").
            let v = i128::from(bits) & ((1i128 << self.noise_bits) - 1);
            2 * (if (v >> (self.noise_bits - 1)) & 1 == 1 { v - (1i128 << self.noise_bits) } else { v }) + 1
        } else if bits & 1 == 1 {
            1
        } else {
            -1
        }
    }
}

/// Q(s) = sign(s) * 2^floor(log2 |s|), by repeated halving.
fn po2(s: i128) -> i128 {
    if s == 0 {
        return 0;
    }
    let mut m = s.abs();
    let mut p = 1i128;
    while m > 1 {
        m /= 2;
        p *= 2;
    }
    s.signum() * p
}

/// g / 2^lr rounded to nearest, ties to even, by exact rational comparison;
/// g * 2^-lr for a negative lr.
fn round_div(g: i128, lr: i32) -> i128 {
    if lr < 0 {
        return g * (1i128 << -lr);
    }
    let d = 1i128 << lr;
    let q = g.div_euclid(d);
    let r = g.rem_euclid(d);
    if 2 * r > d || (2 * r == d && q % 2 != 0) { q + 1 } else { q }
}


const CYCLES: usize = 4000;

fn signal(rng: &mut Rng) -> i128 {
    let limit = 1i128 << 32;
    match rng.next() % 6 {
        0 => 0,
        1 => (rng.next() % 9) as i128 - 4,
        // The signal is a 33-bit two's complement number: [-2^32, 2^32 - 1].
        2 => -limit,
        3 => if rng.chance(50) { limit - 1 } else { -limit + 1 },
        _ => (rng.next() as i128 % (2 * limit)) - limit,
    }
}

#[test]
fn itb_matches_the_reference() {
    require_tool("verilator", "--version");
    let sets = [
        Set { p_w: 8, p_s: true, sym: true, uniform: false, noise_bits: 1, sigma: 0, lr: 4, exact: false },
        Set { p_w: 4, p_s: true, sym: false, uniform: false, noise_bits: 1, sigma: 1, lr: 0, exact: false },
        Set { p_w: 4, p_s: false, sym: false, uniform: true, noise_bits: 3, sigma: 0, lr: 2, exact: false },
        Set { p_w: 1, p_s: true, sym: false, uniform: false, noise_bits: 1, sigma: 0, lr: 1, exact: true },
        Set { p_w: 1, p_s: false, sym: false, uniform: true, noise_bits: 1, sigma: 2, lr: 31, exact: false },
        Set { p_w: 16, p_s: true, sym: false, uniform: true, noise_bits: 8, sigma: 3, lr: 7, exact: true },
        Set { p_w: 16, p_s: false, sym: false, uniform: true, noise_bits: 16, sigma: 0, lr: 12, exact: false },
        Set { p_w: 6, p_s: true, sym: false, uniform: true, noise_bits: 32, sigma: 0, lr: 20, exact: true },
        Set { p_w: 6, p_s: true, sym: false, uniform: true, noise_bits: 32, sigma: 0, lr: 5, exact: false },
        Set { p_w: 32, p_s: true, sym: false, uniform: false, noise_bits: 1, sigma: 31, lr: 0, exact: false },
        Set { p_w: 64, p_s: true, sym: false, uniform: true, noise_bits: 5, sigma: 7, lr: 3, exact: true },
        Set { p_w: 64, p_s: false, sym: false, uniform: false, noise_bits: 1, sigma: 10, lr: 1, exact: false },
        Set { p_w: 12, p_s: true, sym: true, uniform: true, noise_bits: 2, sigma: 4, lr: 9, exact: false },
        Set { p_w: 3, p_s: false, sym: false, uniform: false, noise_bits: 1, sigma: 1, lr: 3, exact: true },
        Set { p_w: 24, p_s: true, sym: false, uniform: true, noise_bits: 12, sigma: 5, lr: 16, exact: false },
        Set { p_w: 8, p_s: false, sym: false, uniform: true, noise_bits: 4, sigma: 2, lr: 6, exact: true },
        // Negative shifts multiply: wide formats (the step can exceed 2^32).
        Set { p_w: 32, p_s: true, sym: false, uniform: false, noise_bits: 1, sigma: 20, lr: -10, exact: false },
        Set { p_w: 64, p_s: true, sym: true, uniform: true, noise_bits: 6, sigma: 0, lr: -31, exact: true },
        Set { p_w: 12, p_s: false, sym: false, uniform: false, noise_bits: 1, sigma: 0, lr: -1, exact: false },
    ];
    let dir = scratch("rtl_itb");
    // Top: per set its own fptgen_po2, fptgen_itb with the block's noise and
    // gradient registers (a ring of one block), and fptgen_es_update (the
    // parameter sign- or zero-extended to a signed code, the outputs
    // truncated back, the bounds the set's format's).
    let mut v = String::from("`timescale 1ns / 1ps\n`default_nettype none\nmodule itb_top (\n    input wire clk,\n    input wire rst");
    for (i, s) in sets.iter().enumerate() {
        write!(v, ",\n    input wire [{}:0] nb{i}, input wire draw{i}, input wire neg{i}, input wire [{pm}:0] param{i}, input wire acc{i}, input wire [32:0] sig{i}, input wire clr{i}, output wire [{pm}:0] pert{i}, output wire [{pm}:0] upd{i}, output wire [31:0] grad{i}", s.noise_bits - 1, pm = s.p_w - 1).unwrap();
    }
    v += "\n);\n";
    for (i, s) in sets.iter().enumerate() {
        // The block's noise port: 2u + 1 in b + 1 bits (uniform) or +-1 in
        // 2, sign-extended by one.
        let ew = if s.uniform { s.noise_bits + 1 } else { 2 } + 1;
        let sw = s.sw();
        let ext = if s.p_s { format!("param{i}") } else { format!("{{1'b0, param{i}}}") };
        write!(
            v,
            "wire z{i}, n{i};\nwire [5:0] x{i};\nwire [32:0] oh{i};\nwire [{}:0] e{i};\nwire [{sm}:0] pw{i}, uw{i};\n\
             reg [{em}:0] er{i}; wire [{em}:0] en{i}; reg [31:0] gr{i}; wire [31:0] gn{i};\n\
             always @(posedge clk) begin er{i} <= en{i}; gr{i} <= rst ? 32'd0 : gn{i}; end\n\
             assign e{i} = {{er{i}[{em}], er{i}}};\nassign grad{i} = gr{i};\n\
             fptgen_po2 #(.S_W(33)) po{i} (.s(sig{i}), .zero(z{i}), .neg(n{i}), .exp(x{i}), .onehot(oh{i}));\n\
             fptgen_itb #(.UNIFORM({}), .NOISE_BITS({}), .EXACT({})) itb{i} (\n\
             .noise_bits(nb{i}), .draw(draw{i}), .e_in(er{i}), .e_out(en{i}),\n\
             .acc_en(acc{i}), .signal(sig{i}), .sig_zero(z{i}), .sig_neg(n{i}), .sig_exp(x{i}), .sig_onehot(oh{i}), .clear(clr{i}),\n\
             .grad_in(gr{i}), .grad_out(gn{i}));\n\
             wire [{stw}:0] st{i};\n\
             fptgen_es_step #(.LR_SHIFT({lr})) stp{i} (.grad(grad{i}), .step(st{i}));\n\
             fptgen_es_update #(.P_W({sw}), .E_W({ew}), .SIGMA({}), .LR_SHIFT({lr})) up{i} (\n\
             .param({ext}), .lo({}), .hi({}), .noise(e{i}), .negate(neg{i}), .step(st{i}), .perturbed(pw{i}), .updated(uw{i}));\n\
             assign pert{i} = pw{i}[{pm}:0];\nassign upd{i} = uw{i}[{pm}:0];\n",
            ew - 1, u8::from(s.uniform), s.noise_bits, u8::from(s.exact), s.sigma, s.sw_hex(s.min()), s.sw_hex(s.max()),
            sm = sw - 1, pm = s.p_w - 1, lr = s.lr, stw = 32 + (-s.lr).max(0), em = ew - 2
        )
        .unwrap();
        if sw > s.p_w {
            writeln!(v, "wire unused_hi{i} = ^{{pw{i}[{sm}:{pw}], uw{i}[{sm}:{pw}]}};", sm = sw - 1, pw = s.p_w).unwrap();
        }
    }
    v += "endmodule\n`default_nettype wire\n";
    fs::write(dir.join("itb_top.v"), v).unwrap();

    // Stimulus: one line per cycle, 7 hex fields per set.
    let mut rng = Rng(0x17b0_5eed);
    let mut stim = String::new();
    let mut cycles = Vec::new();
    for t in 0..CYCLES {
        let mut row = Vec::new();
        for s in &sets {
            let noise = rng.next() & ((1u64 << s.noise_bits) - 1);
            let param = s.bits(s.decode(rng.next()));
            let sig = signal(&mut rng);
            // Cycle 0 draws the first noise value and accumulates nothing.
            let (draw, acc) = if t == 0 { (true, false) } else { (rng.chance(30), rng.chance(40)) };
            let r = [noise, u64::from(draw), u64::from(rng.chance(50)), param, u64::from(acc), (sig as u64) & ((1u64 << 33) - 1), u64::from(rng.chance(4))];
            for x in r {
                write!(stim, "{x:x} ").unwrap();
            }
            row.push((r, sig));
        }
        stim.push('\n');
        cycles.push(row);
    }
    fs::write(dir.join("stim.txt"), stim).unwrap();

    let mut c = String::from("#include \"Vitb_top.h\"\n#include \"verilated.h\"\n#include <cstdio>\n#include <cstdint>\nint main(int argc, char** argv) {\n    VerilatedContext ctx; ctx.commandArgs(argc, argv);\n    Vitb_top top(&ctx);\n    FILE* f = std::fopen(\"stim.txt\", \"r\");\n    top.clk = 0; top.rst = 1; top.eval(); top.clk = 1; top.eval(); top.clk = 0; top.rst = 0; top.eval();\n");
    writeln!(c, "    for (int t = 0; t < {CYCLES}; ++t) {{\n        unsigned long long r[7];").unwrap();
    for i in 0..sets.len() {
        writeln!(c, "        for (int k = 0; k < 7; ++k) if (std::fscanf(f, \"%llx\", &r[k]) != 1) return 3;\n        top.nb{i} = r[0]; top.draw{i} = r[1]; top.neg{i} = r[2]; top.param{i} = r[3]; top.acc{i} = r[4]; top.sig{i} = r[5]; top.clr{i} = r[6];").unwrap();
    }
    c += "        top.eval();\n";
    for i in 0..sets.len() {
        writeln!(c, "        std::printf(\"%llx %llx %llx \", (unsigned long long)top.pert{i}, (unsigned long long)top.upd{i}, (unsigned long long)top.grad{i});").unwrap();
    }
    c += "        std::printf(\"\\n\");\n        top.clk = 1; top.eval(); top.clk = 0; top.eval();\n    }\n    return 0;\n}\n";
    fs::write(dir.join("main.cpp"), c).unwrap();
    let out = verilate_and_run(&dir, "itb_top", &["fptgen_itb.v", "fptgen_po2.v", "fptgen_es_step.v", "fptgen_es_update.v", "fptgen_cast.v"]);

    // Reference state per set: noise value (None before the first draw), gradient.
    let mut e: Vec<Option<i128>> = vec![None; sets.len()];
    let mut g: Vec<i128> = vec![0; sets.len()];
    let mut lines = 0;
    for (t, line) in out.lines().enumerate() {
        let f: Vec<u64> = line.split_whitespace().map(|x| u64::from_str_radix(x, 16).unwrap()).collect();
        for (i, s) in sets.iter().enumerate() {
            let ([noise, draw, neg, param, acc, _, clr], sig) = cycles[t][i];
            let p = s.decode(param);
            let ctx = format!("cycle {t}, set {i} {s:?}");
            if let Some(ev) = e[i] {
                let d = if neg == 1 { -ev } else { ev } << s.sigma;
                assert_eq!(f[3 * i], s.bits(s.clamp(p + d)), "{ctx}: perturbed");
            }
            assert_eq!(f[3 * i + 1], s.bits(s.clamp(p - round_div(g[i], s.lr))), "{ctx}: updated (G = {})", g[i]);
            assert_eq!(f[3 * i + 2], (g[i] as i32) as u32 as u64, "{ctx}: grad");
            // The clock edge.
            if clr == 1 {
                g[i] = 0;
            } else if acc == 1 {
                let ev = e[i].expect("cycle 0 draws");
                let q = if s.exact { sig } else { po2(sig) };
                g[i] = (g[i] + q * ev).clamp(i128::from(i32::MIN), i128::from(i32::MAX));
            }
            if draw == 1 {
                e[i] = Some(s.noise(noise));
            }
        }
        lines += 1;
    }
    assert_eq!(lines, CYCLES);
    let _ = fs::remove_dir_all(&dir);
}
