//! `rtl/fptgen_delta_lanes.v` in Verilator against a reference model
//! written here from the module's specification (docs/training.md,
//! "Evaluation by difference in hardware", step 1): per lane s and slot r
//! an accumulator that an input with in_valid adds sext(D) * ext(x[s]) to
//! (or restarts with it, in_first), modulo 2^ACC_W; inputs of cycle c are
//! registered with their products at edge c + 1 and accumulated at edge
//! c + 2 (not at all if rst is high in cycle c or c + 1; a slot >= SLOTS
//! writes nothing), and rd_data is a register loaded on every edge with
//! acc[rd_slot][rd_lane] before that edge's update (0 for an address out of
//! range), so an input is read LAT = 3 edges after its cycle.
//!
//! Several parameter sets in one build (the MNIST-like 64 lanes of 8-bit
//! unsigned inputs with 5-bit changes and 3 slots; one lane and one slot;
//! 12-bit accumulators that wrap often; 32-bit codes into 64-bit
//! accumulators, whose products can exceed them; 1-bit inputs into 2-bit
//! accumulators), thousands of cycles of random stimulus with extreme codes
//! often, a long stretch without restarts in which every set's sums wrap,
//! resets, out-of-range slots and read addresses; rd_data compared with the
//! model on every cycle, for every set. The test also checks that the
//! stimulus wrapped sums, restarted non-zero slots, ignored out-of-range
//! slots and dropped inputs in flight at a reset, so it cannot pass
//! vacuously; a second test builds the module with lane s fed lane s + 1's
//! input and checks that the comparison catches it. Fails (does not skip)
//! without Verilator.

use std::fmt::Write as _;
use std::fs;

use crate::common::{bits_for, expect_caught, mask, mutated_rtl, require_tool, scratch, verilate_and_run, Rng};

/// One instance's parameters.
#[derive(Debug, Clone, Copy)]
struct Set {
    lanes: usize,
    x_w: u32,
    x_s: bool,
    d_w: u32,
    slots: usize,
    acc_w: u32,
}

const fn set(lanes: usize, x_w: u32, x_s: bool, d_w: u32, slots: usize, acc_w: u32) -> Set {
    Set { lanes, x_w, x_s, d_w, slots, acc_w }
}

const SETS: [Set; 7] = [
    // MNIST-like (fc1: 64 samples, 8-bit unsigned pixels, 5-bit changes,
    // 3 rows per group); slot 3 is out of range
    set(64, 8, false, 5, 3, 24),
    // One lane, one slot (slot 1 out of range)
    set(1, 8, true, 5, 1, 16),
    // Products wider than the accumulator: wraps often; lanes 5..7 out of
    // range for reads
    set(5, 8, true, 9, 4, 12),
    // Two slots (every slot code in range)
    set(3, 6, false, 4, 2, 10),
    // The widest codes, signed: products up to 2^62 in magnitude
    set(2, 32, true, 32, 2, 64),
    // The widest codes, unsigned: 65-bit products truncated to 64 bits;
    // slots 5..7 out of range
    set(3, 32, false, 32, 5, 64),
    // The narrowest codes
    set(7, 1, true, 2, 5, 2),
];

const CYCLES: usize = 8000;

/// The value of a `w`-bit code, two's complement if `signed`.
fn value(bits: u64, w: u32, signed: bool) -> i128 {
    let v = i128::from(bits & mask(w));
    if signed && (v >> (w - 1)) & 1 == 1 { v - (1i128 << w) } else { v }
}

impl Set {
    fn slot_w(&self) -> u32 {
        bits_for(self.slots)
    }
    fn lane_w(&self) -> u32 {
        bits_for(self.lanes)
    }
    /// The largest and smallest input codes (as bits).
    fn x_max(&self) -> u64 {
        if self.x_s { mask(self.x_w) >> 1 } else { mask(self.x_w) }
    }
    fn x_min(&self) -> u64 {
        if self.x_s { 1u64 << (self.x_w - 1) } else { 0 }
    }
    fn d_min(&self) -> u64 {
        1u64 << (self.d_w - 1)
    }
}

/// One set's inputs in one cycle.
#[derive(Debug, Clone)]
struct In {
    valid: bool,
    first: bool,
    slot: u64,
    d: u64,
    x: Vec<u64>,
    rd_slot: u64,
    rd_lane: u64,
}

/// One cycle: the shared reset and every set's inputs.
struct Row {
    rst: bool,
    sets: Vec<In>,
}

/// Random stimulus: a prologue that starts every slot (first = 1), then
/// mixed traffic (restarts, extremes, out-of-range addresses), a long
/// stretch from cycles / 4 to 3 * cycles / 4 that drives every set's slot 0
/// with the most negative change times the largest input and never restarts
/// (so every set's sums wrap, the 24-bit ones after about 2,000 such
/// products), then mixed traffic again. Rare resets after the prologue.
fn stimulus(sets: &[Set], cycles: usize, seed: u64) -> Vec<Row> {
    let mut rng = Rng(seed);
    let mut rows = Vec::with_capacity(cycles);
    for t in 0..cycles {
        let prologue = t < 8;
        let drift = (cycles / 4..3 * cycles / 4).contains(&t);
        let rst = !prologue && rng.chance(1);
        let mut ins = Vec::new();
        for s in sets {
            let full_slot = 1u64 << s.slot_w();
            let full_lane = 1u64 << s.lane_w();
            let x_pick = |rng: &mut Rng| -> u64 {
                match rng.next() % 10 {
                    0 => 0,
                    1 => s.x_max(),
                    2 => s.x_min(),
                    3 => mask(s.x_w),
                    _ => rng.next() & mask(s.x_w),
                }
            };
            let input = if prologue {
                In {
                    valid: true,
                    first: true,
                    slot: (t % s.slots) as u64,
                    d: rng.next() & mask(s.d_w),
                    x: (0..s.lanes).map(|_| x_pick(&mut rng)).collect(),
                    rd_slot: 0,
                    rd_lane: 0,
                }
            } else if drift {
                let on = rng.chance(97);
                In {
                    valid: rng.chance(98),
                    first: false,
                    slot: if on { 0 } else { rng.next() % s.slots as u64 },
                    d: if rng.chance(95) { s.d_min() } else { rng.next() & mask(s.d_w) },
                    x: (0..s.lanes).map(|_| if rng.chance(95) { s.x_max() } else { x_pick(&mut rng) }).collect(),
                    rd_slot: if rng.chance(50) { 0 } else { rng.next() % full_slot },
                    rd_lane: rng.next() % full_lane,
                }
            } else {
                let d = match rng.next() % 10 {
                    0 => s.d_min(),
                    1 => mask(s.d_w) >> 1,
                    2 => mask(s.d_w),
                    3 => 1,
                    4 => 0,
                    _ => rng.next() & mask(s.d_w),
                };
                In {
                    valid: rng.chance(80),
                    first: rng.chance(20),
                    slot: if rng.chance(85) { rng.next() % s.slots as u64 } else { rng.next() % full_slot },
                    d,
                    x: (0..s.lanes).map(|_| x_pick(&mut rng)).collect(),
                    rd_slot: if rng.chance(90) { rng.next() % s.slots as u64 } else { rng.next() % full_slot },
                    rd_lane: if rng.chance(90) { rng.next() % s.lanes as u64 } else { rng.next() % full_lane },
                }
            };
            ins.push(input);
        }
        rows.push(Row { rst, sets: ins });
    }
    rows
}

fn stim_text(rows: &[Row]) -> String {
    let mut stim = String::new();
    for row in rows {
        write!(stim, "{} ", u8::from(row.rst)).unwrap();
        for i in &row.sets {
            write!(stim, "{} {} {:x} {:x}", u8::from(i.valid), u8::from(i.first), i.slot, i.d).unwrap();
            for x in &i.x {
                write!(stim, " {x:x}").unwrap();
            }
            write!(stim, " {:x} {:x} ", i.rd_slot, i.rd_lane).unwrap();
        }
        stim.push('\n');
    }
    stim
}

/// The top level over `sets` (in_x split into one port per lane).
fn top_verilog(sets: &[Set]) -> String {
    let mut v = String::from("`timescale 1ns / 1ps\n`default_nettype none\nmodule delta_top (\n    input wire clk,\n    input wire rst");
    for (i, s) in sets.iter().enumerate() {
        write!(
            v,
            ",\n    input wire valid{i}, input wire first{i}, input wire [{sw}:0] slot{i}, input wire [{dw}:0] d{i}",
            sw = s.slot_w() - 1,
            dw = s.d_w - 1
        )
        .unwrap();
        for l in 0..s.lanes {
            write!(v, ", input wire [{}:0] x{i}_{l}", s.x_w - 1).unwrap();
        }
        write!(
            v,
            ", input wire [{sw}:0] rd_slot{i}, input wire [{lw}:0] rd_lane{i}, output wire [{aw}:0] rd_data{i}",
            sw = s.slot_w() - 1,
            lw = s.lane_w() - 1,
            aw = s.acc_w - 1
        )
        .unwrap();
    }
    v += "\n);\n";
    for (i, s) in sets.iter().enumerate() {
        let xs: Vec<String> = (0..s.lanes).rev().map(|l| format!("x{i}_{l}")).collect();
        writeln!(
            v,
            "fptgen_delta_lanes #(.LANES({}), .X_W({}), .X_S({}), .D_W({}), .SLOTS({}), .ACC_W({})) u{i} (.clk(clk), .rst(rst), \
             .in_valid(valid{i}), .in_first(first{i}), .in_slot(slot{i}), .in_d(d{i}), .in_x({{{}}}), .rd_slot(rd_slot{i}), \
             .rd_lane(rd_lane{i}), .rd_data(rd_data{i}));",
            s.lanes,
            s.x_w,
            u8::from(s.x_s),
            s.d_w,
            s.slots,
            s.acc_w,
            xs.join(", ")
        )
        .unwrap();
    }
    v += "endmodule\n`default_nettype wire\n";
    v
}

/// The driver: reset for one edge, then per cycle the stimulus, eval, every
/// set's rd_data (the register as of the last edge), and a clock edge.
fn main_cpp(sets: &[Set], cycles: usize) -> String {
    let mut c = String::from(
        "#include \"Vdelta_top.h\"\n#include \"verilated.h\"\n#include <cstdio>\nint main(int argc, char** argv) {\n    \
         VerilatedContext ctx; ctx.commandArgs(argc, argv);\n    Vdelta_top top(&ctx);\n    FILE* f = std::fopen(\"stim.txt\", \"r\");\n    \
         unsigned long long a, b, c, d;\n    \
         top.clk = 0; top.rst = 1; top.eval(); top.clk = 1; top.eval(); top.clk = 0; top.rst = 0; top.eval();\n",
    );
    writeln!(c, "    for (int t = 0; t < {cycles}; ++t) {{").unwrap();
    c += "        if (std::fscanf(f, \"%llx\", &a) != 1) return 3; top.rst = a;\n";
    for (i, s) in sets.iter().enumerate() {
        writeln!(
            c,
            "        if (std::fscanf(f, \"%llx %llx %llx %llx\", &a, &b, &c, &d) != 4) return 3; top.valid{i} = a; top.first{i} = b; top.slot{i} = c; top.d{i} = d;"
        )
        .unwrap();
        for l in 0..s.lanes {
            writeln!(c, "        if (std::fscanf(f, \"%llx\", &a) != 1) return 3; top.x{i}_{l} = a;").unwrap();
        }
        writeln!(c, "        if (std::fscanf(f, \"%llx %llx\", &a, &b) != 2) return 3; top.rd_slot{i} = a; top.rd_lane{i} = b;").unwrap();
    }
    c += "        top.eval();\n";
    for i in 0..sets.len() {
        writeln!(c, "        std::printf(\"%llx \", (unsigned long long)top.rd_data{i});").unwrap();
    }
    c += "        std::printf(\"\\n\");\n        top.clk = 1; top.eval(); top.clk = 0; top.eval();\n    }\n    return 0;\n}\n";
    c
}

/// What the stimulus exercised, per set.
#[derive(Debug, Default, Clone)]
struct Stats {
    /// rd_data values compared with a known model value
    compared: usize,
    /// cycles whose rd_data the model does not know (uninitialized slots)
    unknown: usize,
    /// accumulator updates whose exact sum did not fit ACC_W signed bits
    wrapped: usize,
    /// first = 1 updates of a slot that held a non-zero value
    restarts: usize,
    /// valid inputs with a slot >= SLOTS (no write)
    ignored: usize,
    /// reads with an address out of range (rd_data 0)
    out_of_range_reads: usize,
    /// valid inputs dropped by a reset while in flight
    dropped: usize,
}

/// One set's state in the model: the registered products (edge c + 1) and
/// the accumulators (None until first written), and the read register with
/// the address it was loaded from.
struct Model {
    stage: Option<(bool, u64, Vec<i128>)>,
    acc: Vec<Vec<Option<u64>>>,
    rd: Option<u64>,
    rd_addr: (u64, u64),
}

/// Compares the simulation's output with the model, cycle by cycle.
fn check(sets: &[Set], rows: &[Row], out: &str) -> Result<Vec<Stats>, String> {
    let mut models: Vec<Model> = sets
        .iter()
        .map(|s| Model { stage: None, acc: vec![vec![None; s.lanes]; s.slots], rd: None, rd_addr: (0, 0) })
        .collect();
    let mut stats = vec![Stats::default(); sets.len()];
    let lines: Vec<&str> = out.lines().collect();
    if lines.len() != rows.len() {
        return Err(format!("{} lines of output for {} cycles", lines.len(), rows.len()));
    }
    for (t, (line, row)) in lines.iter().zip(rows).enumerate() {
        let got: Vec<u64> = line.split_whitespace().map(|x| u64::from_str_radix(x, 16).expect("hex")).collect();
        if got.len() != sets.len() {
            return Err(format!("cycle {t}: {} values for {} sets", got.len(), sets.len()));
        }
        for (k, s) in sets.iter().enumerate() {
            let m = &mut models[k];
            let st = &mut stats[k];
            // The read register, as of edge t
            match m.rd {
                Some(want) if got[k] != want => {
                    return Err(format!(
                        "cycle {t}, set {k} ({s:?}): rd_data {:#x}, expected {want:#x}: slot {} lane {} (the address of cycle {}) as of edge {t}, before its update",
                        got[k],
                        m.rd_addr.0,
                        m.rd_addr.1,
                        t.saturating_sub(1)
                    ));
                }
                Some(_) => st.compared += 1,
                None => st.unknown += 1,
            }
            // Edge t + 1: the read (before this edge's update), the
            // accumulators, the product register
            let i = &row.sets[k];
            let (rs, rl) = (i.rd_slot, i.rd_lane);
            m.rd_addr = (rs, rl);
            m.rd = if rs < s.slots as u64 && rl < s.lanes as u64 {
                m.acc[rs as usize][rl as usize]
            } else {
                st.out_of_range_reads += 1;
                Some(0)
            };
            if let Some((first, slot, products)) = m.stage.take() {
                if row.rst {
                    st.dropped += 1;
                } else if slot >= s.slots as u64 {
                    st.ignored += 1;
                } else {
                    let accs = &mut m.acc[slot as usize];
                    for (lane, p) in products.iter().enumerate() {
                        let old = accs[lane];
                        let base = if first { Some(0) } else { old };
                        if first && old.is_some_and(|o| o != 0) && lane == 0 {
                            st.restarts += 1;
                        }
                        accs[lane] = base.map(|b| {
                            let exact = value(b, s.acc_w, true) + p;
                            let new = (exact & i128::from(mask(s.acc_w))) as u64;
                            if value(new, s.acc_w, true) != exact {
                                st.wrapped += 1;
                            }
                            new
                        });
                    }
                }
            }
            if i.valid {
                if row.rst {
                    st.dropped += 1;
                } else {
                    let d = value(i.d, s.d_w, true);
                    let products = i.x.iter().map(|&x| d * value(x, s.x_w, s.x_s)).collect();
                    m.stage = Some((i.first, i.slot, products));
                }
            }
        }
    }
    Ok(stats)
}

/// Builds the top over `sets` with `rtl` (the module's source file, a path),
/// runs `cycles` cycles of stimulus and checks them.
fn run(name: &str, sets: &[Set], cycles: usize, rtl: Option<String>) -> (Result<Vec<Stats>, String>, std::path::PathBuf) {
    let dir = scratch(name);
    fs::write(dir.join("delta_top.v"), top_verilog(sets)).unwrap();
    let rows = stimulus(sets, cycles, 0xde17a);
    fs::write(dir.join("stim.txt"), stim_text(&rows)).unwrap();
    fs::write(dir.join("main.cpp"), main_cpp(sets, cycles)).unwrap();
    let lib = rtl.unwrap_or_else(|| "fptgen_delta_lanes.v".to_string());
    let out = verilate_and_run(&dir, "delta_top", &[lib.as_str()]);
    (check(sets, &rows, &out), dir)
}

#[test]
fn delta_lanes_match_the_reference() {
    require_tool("verilator", "--version");
    let (result, dir) = run("rtl_delta_lanes", &SETS, CYCLES, None);
    let stats = result.unwrap_or_else(|e| panic!("{e} (files in {})", dir.display()));
    let mut dropped = 0;
    for (k, (s, st)) in SETS.iter().zip(&stats).enumerate() {
        // Only the cycles before the prologue's first writes are read
        // before every slot is known.
        assert!(st.unknown <= 8 && st.compared + st.unknown == CYCLES, "set {k} ({s:?}): {st:?}");
        assert!(st.wrapped > 0, "set {k} ({s:?}): no sum wrapped: {st:?}");
        assert!(st.restarts > 100, "set {k} ({s:?}): too few restarts of a non-zero slot: {st:?}");
        if s.slots.count_ones() != 1 {
            assert!(st.ignored > 0, "set {k} ({s:?}): no out-of-range slot written: {st:?}");
        }
        if s.slots.count_ones() != 1 || s.lanes.count_ones() != 1 {
            assert!(st.out_of_range_reads > 0, "set {k} ({s:?}): no out-of-range read: {st:?}");
        }
        dropped += st.dropped;
    }
    assert!(dropped > 0, "no input was dropped by a reset: {stats:?}");
    let _ = fs::remove_dir_all(&dir);
}

/// The comparison catches a lane that multiplies its neighbour's input.
#[test]
fn delta_lanes_fail_on_a_wrong_lane() {
    require_tool("verilator", "--version");
    // The lane's input select.
    let path = mutated_rtl("fptgen_delta_lanes.v", "in_x[s*X_W +: X_W]", "in_x[((s + 1) % LANES)*X_W +: X_W]", "rtl_delta_lanes_wrong_lane_src");
    let sets = [SETS[2], SETS[3]];
    let (result, run_dir) = run("rtl_delta_lanes_wrong_lane", &sets, 2000, Some(path.display().to_string()));
    expect_caught(result, "the wrong lane's input", &["rd_data"], &path, &run_dir);
}
