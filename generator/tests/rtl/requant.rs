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

use crate::common::{require_tool, scratch, verilate_and_run, Rng};

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

/// (rounding, zero point, act_min, act_max) of the two vector instances.
const VEC_UNITS: [(Rounding, i32, i32, i32); 2] = [(Rounding::Single, 7, -128, 127), (Rounding::Double, -20, -20, 127)];
const LANES: usize = 3;

/// `rtl/fptgen_requant_vec.v`: every lane's value against the simulator,
/// and its handshake cycle by cycle against the cycle model
/// (`timing::blocks::Pipe::new(6)`), under random in_valid and out_ready.
#[test]
fn requant_vector_stream_matches_the_simulator_and_its_cycle_model() {
    use fptgen_generator::timing::blocks::Pipe;
    use fptgen_generator::timing::OnePort;
    require_tool("verilator", "--version");
    let dir = scratch("rtl_requant_vector");
    let mut rng = Rng(0x7ec);
    // Per lane a multiplier from a real scale (per-channel weight scales).
    let lanes: Vec<QuantizedMultiplier> = (0..LANES)
        .map(|_| {
            let real = (rng.range(1, 1 << 20) as f64 / f64::from(1 << 20)) * 2f64.powi(rng.range(-12, 1) as i32);
            QuantizedMultiplier::from_real(real, Rounding::Single).unwrap()
        })
        .collect();
    let mults: Vec<String> = lanes.iter().rev().map(|m| format!("31'd{}", m.multiplier())).collect();
    let shifts: Vec<String> = lanes.iter().rev().map(|m| format!("6'd{}", (m.shift() as u32) & 63)).collect();
    let mut v = format!(
        "`timescale 1ns / 1ps\n`default_nettype none\nmodule vec_top (\n    input wire clk, input wire rst, input wire [{}:0] in_data, input wire in_valid, input wire out_ready,\n    \
         output wire rdy0, output wire rdy1, output wire v0, output wire v1, output wire [{}:0] y0, output wire [{}:0] y1\n);\n",
        LANES * 32 - 1,
        LANES * 8 - 1,
        LANES * 8 - 1
    );
    for (i, (r, zp, lo, hi)) in VEC_UNITS.iter().enumerate() {
        writeln!(
            v,
            "fptgen_requant_vec #(.N({LANES}), .ROUNDING({}), .OUT_W(8), .OUT_ZP({zp}), .ACT_MIN({lo}), .ACT_MAX({hi}), .MULTS({{{}}}), .SHIFTS({{{}}})) u{i} \
             (.clk(clk), .rst(rst), .in_data(in_data), .in_valid(in_valid), .in_ready(rdy{i}), .out_data(y{i}), .out_valid(v{i}), .out_ready(out_ready));",
            u8::from(*r == Rounding::Double),
            mults.join(", "),
            shifts.join(", ")
        )
        .unwrap();
    }
    v += "endmodule\n`default_nettype wire\n";
    fs::write(dir.join("vec_top.v"), v).unwrap();

    let rows: Vec<(bool, bool, Vec<i32>)> = (0..CYCLES)
        .map(|_| {
            let x = (0..LANES).map(|_| if rng.coin() { rng.range(-40_000, 40_000) as i32 } else { rng.next() as i32 }).collect();
            (rng.chance(60), rng.chance(70), x)
        })
        .collect();
    let mut stim = String::new();
    for (valid, ready, x) in &rows {
        write!(stim, "{} {}", u8::from(*valid), u8::from(*ready)).unwrap();
        for &xk in x {
            write!(stim, " {:x}", xk as u32).unwrap();
        }
        stim.push('\n');
    }
    fs::write(dir.join("stim.txt"), stim).unwrap();
    let mut c = String::from(
        "#include \"Vvec_top.h\"\n#include \"verilated.h\"\n#include <cstdio>\nint main(int argc, char** argv) {\n    \
         VerilatedContext ctx; ctx.commandArgs(argc, argv);\n    Vvec_top top(&ctx);\n    FILE* f = std::fopen(\"stim.txt\", \"r\");\n    \
         unsigned valid, ready, x;\n    top.clk = 0; top.rst = 1; top.eval(); top.clk = 1; top.eval(); top.clk = 0; top.rst = 0; top.eval();\n",
    );
    writeln!(c, "    for (int t = 0; t < {CYCLES}; ++t) {{").unwrap();
    c += "        if (std::fscanf(f, \"%u %u\", &valid, &ready) != 2) return 3;\n        top.in_valid = valid; top.out_ready = ready;\n";
    for k in 0..LANES {
        writeln!(c, "        if (std::fscanf(f, \"%x\", &x) != 1) return 3; top.in_data[{k}] = x;").unwrap();
    }
    c += "        top.eval();\n        std::printf(\"%u %u %u %u %x %x\\n\", (unsigned)top.rdy0, (unsigned)top.rdy1, (unsigned)top.v0, (unsigned)top.v1, (unsigned)top.y0, (unsigned)top.y1);\n";
    c += "        top.clk = 1; top.eval(); top.clk = 0; top.eval();\n    }\n    return 0;\n}\n";
    fs::write(dir.join("main.cpp"), c).unwrap();
    let out = verilate_and_run(&dir, "vec_top", &["fptgen_requant_vec.v", "fptgen_requant.v"]);

    let mut model = Pipe::new(LATENCY);
    let mut queue: VecDeque<Vec<i32>> = VecDeque::new();
    let (mut taken, mut given, mut stalled) = (0, 0, 0);
    for (t, (line, (valid, ready, x))) in out.lines().zip(&rows).enumerate() {
        let f: Vec<u64> = line.split_whitespace().map(|s| u64::from_str_radix(s, 16).unwrap()).collect();
        let want_ready = model.in_ready(*ready);
        let want_valid = model.out_valid();
        for u in 0..2 {
            assert_eq!(f[u] == 1, want_ready, "cycle {t}: u{u}.in_ready");
            assert_eq!(f[2 + u] == 1, want_valid, "cycle {t}: u{u}.out_valid");
        }
        if want_valid {
            let front = queue.front().expect("an output without an input");
            for (u, unit) in VEC_UNITS.iter().enumerate() {
                for (k, m) in lanes.iter().enumerate() {
                    let want = m.apply(front[k], unit.0).wrapping_add(unit.1).clamp(unit.2, unit.3);
                    let got = ((f[4 + u] >> (8 * k)) & 0xff) as u8 as i8 as i32;
                    assert_eq!(got, want, "cycle {t}: u{u}.out_data lane {k} ({:?}) for x {}", unit.0, front[k]);
                }
            }
            if *ready {
                queue.pop_front();
                given += 1;
            } else {
                stalled += 1;
            }
        }
        if *valid && want_ready {
            queue.push_back(x.clone());
            taken += 1;
        }
        model.clock(*valid, *ready);
    }
    assert!(given > CYCLES / 4 && stalled > 100, "taken {taken}, given {given}, stalled {stalled}");
}
