//! `rtl/fptgen_round_shift.v` in Verilator against the simulator's
//! `feedback::round_shift` (docs/training.md, "Feedback rules"): `v / 2^k`
//! rounded to nearest with ties to even, or `v * 2^-k`, saturated to
//! OUT_W bits. Parameter sets with right shifts (1, several, beyond the
//! input's width), no shift and left shifts, narrow and wide outputs; every
//! input of the narrow sets, extremes and random inputs of the wide ones;
//! every output compared. The stochastic sets (STOCH = 1, docs/training.md,
//! "Stochastic rounding") get a random `rnd` of SHIFT bits per row and must
//! give `floor((v + rnd) / 2^k)`, saturated. Fails (does not skip) without
//! Verilator.

use std::fmt::Write as _;
use std::fs;

use fptgen_sim::train::feedback::round_shift;

use crate::common::{require_tool, scratch, verilate_and_run, Rng};

/// (IN_W, SHIFT, OUT_W)
const SETS: [(u32, i32, u32); 10] =
    [(8, 1, 6), (8, 3, 4), (8, 0, 6), (8, -2, 12), (6, 7, 4), (12, 5, 8), (12, -4, 10), (22, 12, 18), (22, 30, 18), (40, 17, 30)];

/// The stochastic sets (IN_W, SHIFT, OUT_W): SHIFT > 0, one beyond 32 bits.
const STOCH: [(u32, i32, u32); 5] = [(8, 1, 6), (8, 3, 4), (12, 5, 8), (22, 12, 18), (40, 35, 8)];

const ROWS: usize = 4096;

fn signed(bits: u64, w: u32) -> i128 {
    let v = i128::from(bits) & ((1i128 << w) - 1);
    if (v >> (w - 1)) & 1 == 1 {
        v - (1i128 << w)
    } else {
        v
    }
}

fn saturate(v: i128, w: u32) -> i128 {
    v.clamp(-(1i128 << (w - 1)), (1i128 << (w - 1)) - 1)
}

#[test]
fn round_shift_matches_the_simulator() {
    require_tool("verilator", "--version");
    let dir = scratch("rtl_round_shift");
    // The nearest sets, then the stochastic ones (their rnd inputs r{i}).
    let all: Vec<(u32, i32, u32, bool)> =
        SETS.iter().map(|&(a, b, c)| (a, b, c, false)).chain(STOCH.iter().map(|&(a, b, c)| (a, b, c, true))).collect();
    let mut v = String::from("`timescale 1ns / 1ps\n`default_nettype none\nmodule rs_top (\n    input wire clk");
    for (i, (iw, k, ow, st)) in all.iter().enumerate() {
        write!(v, ",\n    input wire [{}:0] v{i}, output wire [{}:0] r{i}", iw - 1, ow - 1).unwrap();
        if *st {
            write!(v, ",\n    input wire [{}:0] n{i}", k - 1).unwrap();
        }
    }
    v += "\n);\nwire unused_clk = clk;\n";
    for (i, (iw, k, ow, st)) in all.iter().enumerate() {
        if *st {
            writeln!(v, "fptgen_round_shift #(.IN_W({iw}), .SHIFT({k}), .OUT_W({ow}), .STOCH(1), .RND_W({k})) u{i} (.v(v{i}), .rnd(n{i}), .r(r{i}));").unwrap();
        } else {
            writeln!(v, "fptgen_round_shift #(.IN_W({iw}), .SHIFT({k}), .OUT_W({ow})) u{i} (.v(v{i}), .rnd(1'b0), .r(r{i}));").unwrap();
        }
    }
    v += "endmodule\n`default_nettype wire\n";
    fs::write(dir.join("rs_top.v"), v).unwrap();

    let mut rng = Rng(0x5a17);
    let mut rows: Vec<Vec<u64>> = Vec::new();
    let mut stim = String::new();
    for n in 0..ROWS {
        let mut row = Vec::new();
        for &(iw, k, _, st) in &all {
            let mask = (1u64 << iw) - 1;
            // Every value of a narrow input; extremes and random values of a wide one.
            let x = if iw <= 12 {
                n as u64 & mask
            } else {
                match n % 5 {
                    0 => mask,
                    1 => mask >> 1,
                    2 => (mask >> 1) + 1,
                    _ => rng.next() & mask,
                }
            };
            write!(stim, "{x:x} ").unwrap();
            row.push(x);
            if st {
                let r = rng.next() & ((1u64 << k) - 1);
                write!(stim, "{r:x} ").unwrap();
                row.push(r);
            }
        }
        stim.push('\n');
        rows.push(row);
    }
    fs::write(dir.join("stim.txt"), stim).unwrap();
    let mut c = String::from("#include \"Vrs_top.h\"\n#include \"verilated.h\"\n#include <cstdio>\nint main(int argc, char** argv) {\n    VerilatedContext ctx; ctx.commandArgs(argc, argv);\n    Vrs_top top(&ctx);\n    FILE* f = std::fopen(\"stim.txt\", \"r\");\n    unsigned long long a;\n    top.clk = 0;\n");
    writeln!(c, "    for (int t = 0; t < {ROWS}; ++t) {{").unwrap();
    for (i, (.., st)) in all.iter().enumerate() {
        writeln!(c, "        if (std::fscanf(f, \"%llx\", &a) != 1) return 3; top.v{i} = a;").unwrap();
        if *st {
            writeln!(c, "        if (std::fscanf(f, \"%llx\", &a) != 1) return 3; top.n{i} = a;").unwrap();
        }
    }
    c += "        top.eval();\n";
    for i in 0..all.len() {
        writeln!(c, "        std::printf(\"%llx \", (unsigned long long)top.r{i});").unwrap();
    }
    c += "        std::printf(\"\\n\");\n    }\n    return 0;\n}\n";
    fs::write(dir.join("main.cpp"), c).unwrap();
    let out = verilate_and_run(&dir, "rs_top", &["fptgen_round_shift.v"]);
    let mut ties = 0;
    let mut saturated = 0;
    let mut rounded_up = 0;
    let mut lines = 0;
    for (n, line) in out.lines().enumerate() {
        let got: Vec<u64> = line.split_whitespace().map(|x| u64::from_str_radix(x, 16).unwrap()).collect();
        let mut col = rows[n].iter();
        for (i, &(iw, k, ow, st)) in all.iter().enumerate() {
            let x = signed(*col.next().unwrap(), iw);
            if st {
                // floor((v + rnd) / 2^k), from the definition.
                let r = i128::from(*col.next().unwrap());
                let want = saturate((x + r) >> k, ow);
                assert_eq!(signed(got[i], ow), want, "row {n}: R_s({x}, {k}) with rnd {r} in {ow} bits (IN_W {iw})");
                rounded_up += usize::from((x + r) >> k != x >> k);
                continue;
            }
            let exact = round_shift(x, k);
            let want = saturate(exact, ow);
            assert_eq!(signed(got[i], ow), want, "row {n}: R({x}, {k}) in {ow} bits (IN_W {iw})");
            ties += usize::from(k > 0 && k < 64 && (x & ((1i128 << k) - 1)) == 1i128 << (k - 1));
            saturated += usize::from(want != exact);
        }
        lines += 1;
    }
    assert_eq!(lines, ROWS, "{out}");
    assert!(ties > 100 && saturated > 100, "the stimulus missed ties ({ties}) or saturation ({saturated})");
    assert!(rounded_up > 1000, "the stochastic sets rounded up only {rounded_up} times");
    let _ = fs::remove_dir_all(&dir);
}
