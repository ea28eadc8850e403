//! `rtl/fptgen_loss_acc.v` in Verilator against docs/training.md's loss:
//! the saturating unsigned 32-bit sum of |y - t| over outputs and samples,
//! in raw codes, each sample in the loss from LAT = 1 + ceil(clog2(outputs)
//! / 2) edges after the edge that adds it (the module's documented pipeline;
//! a clear sets the loss to its `init` value and drops what is in flight;
//! `vec_valid` and `vec_loss` show each sample's sum in the cycle before it
//! reaches the loss). Several output formats, random and extreme samples,
//! clears to zero and to random values; every cycle's loss and per-sample
//! output compared. Fails (does not skip) without Verilator.

use std::fmt::Write as _;
use std::fs;

use crate::common::{require_tool, scratch, verilate_and_run, Rng};


const CYCLES: usize = 3000;

/// One set's inputs in one cycle: clear, its init value, add, (y, t) per output.
type Sample = (bool, u32, bool, Vec<(u64, u64)>);

/// (outputs, width, signed)
const SETS: [(usize, u32, bool); 6] = [(10, 8, true), (10, 16, true), (5, 6, false), (1, 40, false), (3, 64, true), (7, 1, true)];

/// The documented latency: the registered errors, then a register after
/// every second level of the tree over `outputs` leaves and after its root.
fn latency(outputs: usize) -> usize {
    let levels = (usize::BITS - (outputs - 1).leading_zeros()) as usize; // ceil(log2)
    1 + levels.div_ceil(2)
}

fn value(bits: u64, w: u32, signed: bool) -> i128 {
    let v = i128::from(bits) & ((1i128 << w) - 1);
    if signed && (v >> (w - 1)) & 1 == 1 { v - (1i128 << w) } else { v }
}

#[test]
fn loss_accumulator_matches_the_reference() {
    require_tool("verilator", "--version");
    let dir = scratch("rtl_loss_acc");
    let mut v = String::from("`timescale 1ns / 1ps\n`default_nettype none\nmodule loss_top (\n    input wire clk,\n    input wire rst");
    for (i, (n, w, _)) in SETS.iter().enumerate() {
        write!(v, ",\n    input wire clear{i}, input wire [31:0] init{i}, input wire add{i}").unwrap();
        for o in 0..*n {
            write!(v, ", input wire [{m}:0] y{i}_{o}, input wire [{m}:0] t{i}_{o}", m = w - 1).unwrap();
        }
        write!(v, ", output wire [31:0] loss{i}, output wire vec_valid{i}, output wire [31:0] vec_loss{i}").unwrap();
    }
    v += "\n);\n";
    for (i, (n, w, s)) in SETS.iter().enumerate() {
        let ys: Vec<String> = (0..*n).rev().map(|o| format!("y{i}_{o}")).collect();
        let ts: Vec<String> = (0..*n).rev().map(|o| format!("t{i}_{o}")).collect();
        writeln!(
            v,
            "fptgen_loss_acc #(.OUTPUTS({n}), .Y_W({w}), .Y_S({})) u{i} (.clk(clk), .rst(rst), .clear(clear{i}), .init(init{i}), .add(add{i}), .y({{{}}}), .t({{{}}}), .loss(loss{i}), .vec_valid(vec_valid{i}), .vec_loss(vec_loss{i}));",
            u8::from(*s),
            ys.join(", "),
            ts.join(", ")
        )
        .unwrap();
    }
    v += "endmodule\n`default_nettype wire\n";
    fs::write(dir.join("loss_top.v"), v).unwrap();

    let mut rng = Rng(0x1055);
    let mut stim = String::new();
    let mut rows: Vec<Vec<Sample>> = Vec::new();
    for _ in 0..CYCLES {
        let mut row = Vec::new();
        for (n, w, _) in SETS {
            let mask = if w == 64 { u64::MAX } else { (1u64 << w) - 1 };
            let clear = rng.next().is_multiple_of(50);
            let add = !rng.next().is_multiple_of(4);
            let init = if rng.next().is_multiple_of(2) { 0 } else { rng.next() as u32 };
            write!(stim, "{} {init:x} {} ", u8::from(clear), u8::from(add)).unwrap();
            let mut pairs = Vec::new();
            for _ in 0..n {
                // Extremes often, so the sums saturate and the signs differ.
                let pick = |r: u64, rng: &mut Rng| match r % 4 {
                    0 => 0,
                    1 => mask,
                    2 => mask >> 1,
                    _ => rng.next() & mask,
                };
                let r1 = rng.next();
                let y = pick(r1, &mut rng);
                let r2 = rng.next();
                let t = pick(r2, &mut rng);
                write!(stim, "{y:x} {t:x} ").unwrap();
                pairs.push((y, t));
            }
            row.push((clear, init, add, pairs));
        }
        stim.push('\n');
        rows.push(row);
    }
    fs::write(dir.join("stim.txt"), stim).unwrap();

    let mut c = String::from("#include \"Vloss_top.h\"\n#include \"verilated.h\"\n#include <cstdio>\nint main(int argc, char** argv) {\n    VerilatedContext ctx; ctx.commandArgs(argc, argv);\n    Vloss_top top(&ctx);\n    FILE* f = std::fopen(\"stim.txt\", \"r\");\n    unsigned long long a, b, d;\n    top.clk = 0; top.rst = 1; top.eval(); top.clk = 1; top.eval(); top.clk = 0; top.rst = 0; top.eval();\n");
    writeln!(c, "    for (int t = 0; t < {CYCLES}; ++t) {{").unwrap();
    for (i, (n, _, _)) in SETS.iter().enumerate() {
        writeln!(c, "        if (std::fscanf(f, \"%llx %llx %llx\", &a, &d, &b) != 3) return 3; top.clear{i} = a; top.init{i} = d; top.add{i} = b;").unwrap();
        for o in 0..*n {
            writeln!(c, "        if (std::fscanf(f, \"%llx %llx\", &a, &b) != 2) return 3; top.y{i}_{o} = a; top.t{i}_{o} = b;").unwrap();
        }
    }
    c += "        top.eval();\n";
    for i in 0..SETS.len() {
        writeln!(c, "        std::printf(\"%x %x %x \", (unsigned)top.loss{i}, (unsigned)top.vec_valid{i}, (unsigned)top.vec_loss{i});").unwrap();
    }
    c += "        std::printf(\"\\n\");\n        top.clk = 1; top.eval(); top.clk = 0; top.eval();\n    }\n    return 0;\n}\n";
    fs::write(dir.join("main.cpp"), c).unwrap();
    let out = verilate_and_run(&dir, "loss_top", &["fptgen_loss_acc.v"]);
    let mut loss = vec![0i128; SETS.len()];
    // Samples in flight per set: pipe[k] entered k edges ago (and before).
    let mut pipes: Vec<Vec<Option<i128>>> = SETS.iter().map(|s| vec![None; latency(s.0)]).collect();
    let mut saturated = 0;
    let mut vec_seen = 0;
    for (t, line) in out.lines().enumerate() {
        let got: Vec<i128> = line.split_whitespace().map(|x| i128::from_str_radix(x, 16).unwrap()).collect();
        for (i, (_, w, s)) in SETS.iter().enumerate() {
            assert_eq!(got[3 * i], loss[i], "loss: cycle {t}, set {i} (outputs {}, width {w}, signed {s})", SETS[i].0);
            let (clear, init, add, pairs) = &rows[t][i];
            let pipe = &mut pipes[i];
            let vec = pipe.last().copied().flatten();
            assert_eq!(got[3 * i + 1] == 1, vec.is_some(), "vec_valid: cycle {t}, set {i}");
            if let Some(sum) = vec {
                vec_seen += 1;
                assert_eq!(got[3 * i + 2], sum & 0xffff_ffff, "vec_loss: cycle {t}, set {i}");
            }
            if *clear {
                loss[i] = i128::from(*init);
                pipe.iter_mut().for_each(|p| *p = None);
                continue;
            }
            if let Some(sum) = pipe.pop().expect("a stage") {
                loss[i] = (loss[i] + sum).min(i128::from(u32::MAX));
                if loss[i] == i128::from(u32::MAX) {
                    saturated += 1;
                }
            }
            let sum: i128 = pairs.iter().map(|&(y, tt)| (value(y, *w, *s) - value(tt, *w, *s)).abs()).sum();
            pipe.insert(0, add.then_some(sum));
        }
    }
    assert!(saturated > 0, "the stimulus never saturated the loss");
    assert!(vec_seen > CYCLES, "only {vec_seen} per-sample sums compared");
    // The trainer waits the same latency (train_plan::loss_wait).
    for (n, _, _) in SETS {
        assert_eq!(fptgen_generator::train_plan::loss_wait(n), latency(n) as u64, "outputs {n}");
    }
    let _ = fs::remove_dir_all(&dir);
}
