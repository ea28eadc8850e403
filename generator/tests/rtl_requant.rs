//! `rtl/fptgen_requant.v` in Verilator against the simulator's int8
//! requantization (`fptgen_sim::int8::QuantizedMultiplier::apply`, itself
//! checked against LiteRT's reference kernels in sim/tests/litert_int8.rs),
//! plus the output offset and clamp as TFLite's kernels apply them. Four
//! instances (single and double rounding; int8 outputs with an offset and a
//! clamp, and 32-bit outputs that show the whole rounded product), random
//! stalls, and every cycle's outputs and valid bits compared. Fails (does
//! not skip) without Verilator.

use std::collections::VecDeque;
use std::fmt::Write as _;
use std::fs;

use fptgen_sim::int8::{QuantizedMultiplier, Rounding};

mod common;
use common::{require_tool, scratch, verilate_and_run, Rng};

const CYCLES: usize = 6000;
const LATENCY: usize = 6;

/// (rounding, output width, zero point, act_min, act_max)
const UNITS: [(Rounding, u32, i32, i32, i32); 4] = [
    (Rounding::Single, 8, -5, -128, 127),
    (Rounding::Double, 8, 3, 0, 127),
    (Rounding::Single, 32, 0, i32::MIN, i32::MAX),
    (Rounding::Double, 32, 0, i32::MIN, i32::MAX),
];

/// One cycle's inputs.
#[derive(Clone, Copy)]
struct In {
    en: bool,
    valid: bool,
    x: i32,
    mult: i32,
    shift: i32,
}

fn expected(i: &In, (rounding, _, zp, lo, hi): (Rounding, u32, i32, i32, i32)) -> i32 {
    let m = QuantizedMultiplier::new(i.mult, i.shift).expect("a multiplier in range");
    m.apply(i.x, rounding).wrapping_add(zp).clamp(lo, hi)
}

fn draw(rng: &mut Rng) -> In {
    let x = match rng.next() % 6 {
        0 => i32::MIN,
        1 => i32::MAX,
        2 => rng.range(-300, 300) as i32,
        3 => rng.range(-100_000, 100_000) as i32,
        _ => rng.next() as i32,
    };
    let (mult, shift) = if rng.coin() {
        // A multiplier as QuantizeMultiplier makes one from a real scale
        // (typical int8 layers: 2^-20 .. 2^2).
        let real = (rng.range(1, 1 << 20) as f64 / f64::from(1 << 20)) * 2f64.powi(rng.range(-20, 3) as i32);
        let m = QuantizedMultiplier::from_real(real, Rounding::Single).expect("a real in range");
        (m.multiplier(), m.shift())
    } else {
        let mult = match rng.next() % 4 {
            0 => 0,
            1 => i32::MAX,
            2 => 1 << 30,
            _ => (rng.next() >> 33) as i32,
        };
        (mult, rng.range(-31, 30) as i32)
    };
    In { en: rng.chance(80), valid: rng.chance(70), x, mult, shift }
}

#[test]
fn requantizer_matches_the_simulator() {
    require_tool("verilator", "--version");
    let dir = scratch("rtl_requant");
    let mut v = String::from(
        "`timescale 1ns / 1ps\n`default_nettype none\nmodule requant_top (\n    input wire clk, input wire rst, input wire en, input wire in_valid,\n    \
         input wire [31:0] x, input wire [30:0] mult, input wire [5:0] shift",
    );
    for (i, (_, w, ..)) in UNITS.iter().enumerate() {
        write!(v, ",\n    output wire v{i}, output wire [{}:0] y{i}", w - 1).unwrap();
    }
    v += "\n);\n";
    for (i, (r, w, zp, lo, hi)) in UNITS.iter().enumerate() {
        writeln!(
            v,
            "fptgen_requant #(.ROUNDING({}), .OUT_W({w}), .OUT_ZP({zp}), .ACT_MIN({lo}), .ACT_MAX({hi})) u{i} (.clk(clk), .rst(rst), .en(en), \
             .in_valid(in_valid), .x(x), .mult(mult), .shift(shift), .out_valid(v{i}), .y(y{i}));",
            u8::from(*r == Rounding::Double),
        )
        .unwrap();
    }
    v += "endmodule\n`default_nettype wire\n";
    fs::write(dir.join("requant_top.v"), v).unwrap();

    let mut rng = Rng(0x2e9a);
    let ins: Vec<In> = (0..CYCLES).map(|_| draw(&mut rng)).collect();
    let mut stim = String::new();
    for i in &ins {
        writeln!(stim, "{} {} {:x} {:x} {:x}", u8::from(i.en), u8::from(i.valid), i.x as u32, i.mult as u32, (i.shift as u32) & 63).unwrap();
    }
    fs::write(dir.join("stim.txt"), stim).unwrap();

    let mut c = String::from(
        "#include \"Vrequant_top.h\"\n#include \"verilated.h\"\n#include <cstdio>\nint main(int argc, char** argv) {\n    \
         VerilatedContext ctx; ctx.commandArgs(argc, argv);\n    Vrequant_top top(&ctx);\n    FILE* f = std::fopen(\"stim.txt\", \"r\");\n    \
         unsigned en, valid, x, mult, shift;\n    top.clk = 0; top.rst = 1; top.eval(); top.clk = 1; top.eval(); top.clk = 0; top.rst = 0; top.eval();\n",
    );
    writeln!(c, "    for (int t = 0; t < {CYCLES}; ++t) {{").unwrap();
    c += "        if (std::fscanf(f, \"%u %u %x %x %x\", &en, &valid, &x, &mult, &shift) != 5) return 3;\n";
    c += "        top.en = en; top.in_valid = valid; top.x = x; top.mult = mult; top.shift = shift; top.eval();\n";
    for i in 0..UNITS.len() {
        writeln!(c, "        std::printf(\"%u %x \", (unsigned)top.v{i}, (unsigned)top.y{i});").unwrap();
    }
    c += "        std::printf(\"\\n\");\n        top.clk = 1; top.eval(); top.clk = 0; top.eval();\n    }\n    return 0;\n}\n";
    fs::write(dir.join("main.cpp"), c).unwrap();
    let out = verilate_and_run(&dir, "requant_top", &["fptgen_requant.v"]);

    // The pipeline: the inputs of the last LATENCY enabled cycles.
    let mut stages: VecDeque<In> = VecDeque::new();
    let (mut compared, mut differ, mut clamped) = (0, 0, 0);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), CYCLES, "one line per cycle");
    for (t, line) in lines.iter().enumerate() {
        let f: Vec<u64> = line.split_whitespace().map(|s| u64::from_str_radix(s, 16).unwrap()).collect();
        let oldest = (stages.len() == LATENCY).then(|| stages[0]);
        for (u, unit) in UNITS.iter().enumerate() {
            let (valid, y) = (f[2 * u] == 1, f[2 * u + 1]);
            let w = unit.1;
            let want_valid = oldest.is_some_and(|i| i.valid);
            assert_eq!(valid, want_valid, "cycle {t}: u{u}.out_valid");
            if let Some(i) = oldest {
                let want = expected(&i, *unit);
                let got = ((y << (64 - w)) as i64 >> (64 - w)) as i32;
                assert_eq!(
                    got, want,
                    "cycle {t}: u{u}.y (rounding {:?}, OUT_W {w}) for x {} mult {} shift {}",
                    unit.0, i.x, i.mult, i.shift
                );
                compared += 1;
                if u == 2 && want != expected(&i, UNITS[3]) {
                    differ += 1;
                }
                if u == 1 && (want == unit.3 || want == unit.4) {
                    clamped += 1;
                }
            }
        }
        if ins[t].en {
            stages.push_back(ins[t]);
            if stages.len() > LATENCY {
                stages.pop_front();
            }
        }
    }
    assert!(compared > 4 * (CYCLES - 100), "compared only {compared} outputs");
    assert!(differ > 0, "single and double rounding never differed: the stimulus does not tell them apart");
    assert!(clamped > 0, "the clamp was never reached");
}
