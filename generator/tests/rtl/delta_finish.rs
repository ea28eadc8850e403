//! `rtl/fptgen_delta_finish.v` in Verilator against the simulator's dense
//! layer: for random one-neuron dense layers whose accumulation is exact
//! (`fptgen_sim::layers::dense::exact_accumulation`; random input, weight,
//! bias, accumulator and output formats, rounding and overflow modes, relu
//! or linear), random weights, bias and inputs (extreme codes often), the
//! module gets the exact integer dot product split at random into two
//! parts (each wrapping in S_W bits) and the bias code, and its output must
//! be, bit for bit, the output of `Network::infer` on the same layer (the
//! definition's in-order saturating sum), LAT = 3 edges later, with its
//! tag; `out_valid` is compared in every cycle. Fails (does not skip)
//! without Verilator.

use std::fmt::Write as _;
use std::fs;
use std::path::Path;

use crate::common::random_net::{ap_format as fmt, random_code as code, OVF, QUANT};
use crate::common::{require_tool, scratch, verilate_and_run, Rng};
use fptgen_generator::plan::{ovf_code, quant_code};
use fptgen_sim::fixed::Format;
use fptgen_sim::layers::dense::{dot_product_bits, exact_accumulation};
use fptgen_sim::model::{self, LayerOp};
use fptgen_sim::network::Network;
use fptgen_sim::weights::{LayerParams, Params};

const SETS: usize = 12;
const CYCLES: usize = 600;
const LAT: usize = 3;


/// One parameter set: the layer's model and what the module needs.
struct Set {
    model: model::Model,
    inputs: usize,
    relu: bool,
    s_w: u32,
    shift: u32,
    x: Format,
    w: Format,
    b: Format,
    a: Format,
    y: Format,
}

/// A random one-neuron dense layer with exact accumulation.
fn random_set(rng: &mut Rng) -> Set {
    loop {
        let inputs = rng.range(1, 40) as usize;
        let relu = rng.coin();
        let (xs, xw) = (rng.coin(), rng.range(1, 10) as u32);
        let xi = rng.range(-2, xw as i64 + 2) as i32;
        let (ws, ww) = (rng.coin(), rng.range(1, 8) as u32);
        let wi = rng.range(-2, ww as i64 + 2) as i32;
        let (bs, bw) = (rng.coin(), rng.range(1, 12) as u32);
        let bi = rng.range(-2, bw as i64 + 4) as i32;
        // The accumulator: the products' fraction bits or a few more, wide
        // enough by a random margin (or too narrow: the draw is refused),
        // wrapping now and then.
        let xf = xw as i32 - xi;
        let wf = ww as i32 - wi;
        let af = xf + wf + rng.range(0, 2) as i32;
        let aw = rng.range(4, 40) as u32;
        let a_ovf = OVF[rng.range(0, 3) as usize];
        let a_q = QUANT[rng.range(0, 6) as usize];
        let (ys, yw) = (rng.coin(), rng.range(1, 16) as u32);
        let yi = rng.range(-3, yw as i64 + 6) as i32;
        let y_q = QUANT[rng.range(0, 6) as usize];
        let y_o = OVF[rng.range(0, 3) as usize];
        let yaml = format!(
            "name: f\ninput: {{shape: [{inputs}], format: '{}'}}\nweights: w.npz\nlayers:\n  - {{name: l, type: dense, inputs: {inputs}, outputs: 1, activation: {}, precision: {{weight: '{}', bias: '{}', accum: '{}', output: '{}'}}}}\n",
            fmt(xs, xw, xi, "AP_TRN", "AP_WRAP"),
            if relu { "relu" } else { "linear" },
            fmt(ws, ww, wi, "AP_TRN", "AP_WRAP"),
            fmt(bs, bw, bi, "AP_TRN", "AP_WRAP"),
            fmt(true, aw, aw as i32 - af, a_q, a_ovf),
            fmt(ys, yw, yi, y_q, y_o),
        );
        let Ok(m) = model::parse(&yaml, Path::new("f.yaml")) else { continue };
        let LayerOp::Dense(d) = &m.layers[0].op else { panic!("one dense layer") };
        let Some(shift) = exact_accumulation(d, m.input_format) else { continue };
        let Some(bits) = dot_product_bits(d.precision.weight, m.input_format, inputs) else { continue };
        // Some sets one bit wider than needed, so the parts' wrap is not
        // always at the sum's own width.
        let s_w = bits + rng.range(0, 1) as u32;
        if s_w > 62 || shift > 20 {
            continue;
        }
        let p = d.precision;
        return Set { inputs, relu, s_w, shift, x: m.input_format, w: p.weight, b: p.bias, a: p.accum, y: p.output, model: m.clone() };
    }
}

fn mask(w: u32) -> u128 {
    (1u128 << w) - 1
}

#[test]
fn delta_finish_matches_the_dense_layer() {
    require_tool("verilator", "--version");
    let dir = scratch("rtl_delta_finish");
    let mut rng = Rng(0xDE17A);
    let sets: Vec<Set> = (0..SETS).map(|_| random_set(&mut rng)).collect();

    let mut v = String::from("`timescale 1ns / 1ps\n`default_nettype none\nmodule finish_top (\n    input wire clk,\n    input wire rst");
    for (k, s) in sets.iter().enumerate() {
        write!(
            v,
            ",\n    input wire in_valid{k}, input wire [{sm}:0] in_s{k}, input wire [{sm}:0] in_ds{k}, input wire [{bm}:0] in_b{k}, input wire [15:0] in_tag{k}, output wire out_valid{k}, output wire [{ym}:0] out_y{k}, output wire [15:0] out_tag{k}",
            sm = s.s_w - 1,
            bm = s.b.width() - 1,
            ym = s.y.width() - 1
        )
        .unwrap();
    }
    v += "\n);\n";
    for (k, s) in sets.iter().enumerate() {
        writeln!(
            v,
            "fptgen_delta_finish #(.S_W({}), .SHIFT({}), .B_W({}), .B_F({}), .B_S({}), .A_W({}), .A_F({}), .A_S({}), .A_Q({}), .A_O({}), .Y_W({}), .Y_F({}), .Y_S({}), .Y_Q({}), .Y_O({}), .RELU({}), .TAG_W(16)) u{k} (.clk(clk), .rst(rst), .in_valid(in_valid{k}), .in_s(in_s{k}), .in_ds(in_ds{k}), .in_b(in_b{k}), .in_tag(in_tag{k}), .out_valid(out_valid{k}), .out_y(out_y{k}), .out_tag(out_tag{k}));",
            s.s_w,
            s.shift,
            s.b.width(),
            s.b.frac_bits(),
            u8::from(s.b.signed()),
            s.a.width(),
            s.a.frac_bits(),
            u8::from(s.a.signed()),
            quant_code(s.a.quant()),
            ovf_code(s.a.overflow()),
            s.y.width(),
            s.y.frac_bits(),
            u8::from(s.y.signed()),
            quant_code(s.y.quant()),
            ovf_code(s.y.overflow()),
            u8::from(s.relu)
        )
        .unwrap();
    }
    v += "endmodule\n`default_nettype wire\n";
    fs::write(dir.join("finish_top.v"), v).unwrap();

    // Stimulus: per cycle and set, valid, the two parts, the bias bits and
    // the tag; the expected output per valid input.
    let mut stim = String::new();
    // expected[k][t]: Some((y bits, tag)) for a valid input of set k in cycle t
    let mut expected: Vec<Vec<Option<(u64, u64)>>> = vec![Vec::new(); SETS];
    let mut extremes = 0;
    for t in 0..CYCLES {
        for (k, s) in sets.iter().enumerate() {
            let valid = rng.chance(80);
            let w: Vec<i128> = (0..s.inputs).map(|_| code(&mut rng, s.w)).collect();
            let x: Vec<i128> = (0..s.inputs).map(|_| code(&mut rng, s.x)).collect();
            let b = code(&mut rng, s.b);
            let dot: i128 = w.iter().zip(&x).map(|(a, c)| a * c).sum();
            let part = (rng.u128() & mask(s.s_w)) as i128;
            let rest = ((dot - part) as u128) & mask(s.s_w);
            let tag = t as u64 & 0xffff;
            write!(stim, "{} {:x} {:x} {:x} {:x} ", u8::from(valid), part, rest, s.b.bits(b), tag).unwrap();
            expected[k].push(if valid {
                let params = Params { layers: vec![LayerParams { tensors: vec![w, vec![b]] }] };
                let net = Network::new(s.model.clone(), params).expect("a valid layer");
                let y = net.infer(&x).expect("a valid input")[0];
                if y == s.y.min_raw() || y == s.y.max_raw() {
                    extremes += 1;
                }
                Some((s.y.bits(y), tag))
            } else {
                None
            });
        }
        stim.push('\n');
    }
    fs::write(dir.join("stim.txt"), stim).unwrap();

    let mut c = String::from("#include \"Vfinish_top.h\"\n#include \"verilated.h\"\n#include <cstdio>\nint main(int argc, char** argv) {\n    VerilatedContext ctx; ctx.commandArgs(argc, argv);\n    Vfinish_top top(&ctx);\n    FILE* f = std::fopen(\"stim.txt\", \"r\");\n    unsigned long long v, a, b, bb, tg;\n    top.clk = 0; top.rst = 1; top.eval(); top.clk = 1; top.eval(); top.clk = 0; top.rst = 0; top.eval();\n");
    writeln!(c, "    for (int t = 0; t < {CYCLES}; ++t) {{").unwrap();
    for k in 0..SETS {
        writeln!(
            c,
            "        if (std::fscanf(f, \"%llx %llx %llx %llx %llx\", &v, &a, &b, &bb, &tg) != 5) return 3; top.in_valid{k} = v; top.in_s{k} = a; top.in_ds{k} = b; top.in_b{k} = bb; top.in_tag{k} = tg;"
        )
        .unwrap();
    }
    c += "        top.eval();\n";
    for k in 0..SETS {
        writeln!(c, "        std::printf(\"%x %llx %x \", (unsigned)top.out_valid{k}, (unsigned long long)top.out_y{k}, (unsigned)top.out_tag{k});").unwrap();
    }
    c += "        std::printf(\"\\n\");\n        top.clk = 1; top.eval(); top.clk = 0; top.eval();\n    }\n    return 0;\n}\n";
    fs::write(dir.join("main.cpp"), c).unwrap();
    let out = verilate_and_run(&dir, "finish_top", &["fptgen_delta_finish.v", "fptgen_cast.v"]);

    let mut checked = 0;
    for (t, line) in out.lines().enumerate() {
        let got: Vec<u64> = line.split_whitespace().map(|x| u64::from_str_radix(x, 16).unwrap()).collect();
        for (k, s) in sets.iter().enumerate() {
            let (valid, y, tag) = (got[3 * k], got[3 * k + 1], got[3 * k + 2]);
            let want = t.checked_sub(LAT).and_then(|c| expected[k][c]);
            let ctx = || {
                format!(
                    "cycle {t}, set {k} ({} inputs, x {}, w {}, b {}, accum {}, out {}, relu {}, S_W {}, SHIFT {})",
                    s.inputs, s.x, s.w, s.b, s.a, s.y, s.relu, s.s_w, s.shift
                )
            };
            assert_eq!(valid == 1, want.is_some(), "out_valid differs: {}", ctx());
            if let Some((wy, wtag)) = want {
                assert_eq!(y, wy, "out_y differs: {}", ctx());
                assert_eq!(tag, wtag, "out_tag differs: {}", ctx());
                checked += 1;
            }
        }
    }
    assert_eq!(out.lines().count(), CYCLES, "the simulation printed every cycle");
    assert!(checked > SETS * CYCLES / 2, "only {checked} outputs compared");
    assert!(extremes > 0, "no output reached its format's extreme codes");
    assert!(sets.iter().any(|s| s.relu) && sets.iter().any(|s| !s.relu), "relu and linear both drawn");
    let _ = fs::remove_dir_all(&dir);
}
