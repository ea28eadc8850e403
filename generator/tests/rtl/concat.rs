//! `rtl/fptgen_concat.v`, two streams joined beat by beat (channel
//! concatenation), in Verilator against a model written here from the
//! definition (output beat `n` is `{in1 beat n, in0 beat n}`, input 0 in the
//! low bits), not from the RTL:
//!
//! * `concat_outputs_and_cycles`: several width pairs (1 to 100 bits each,
//!   outputs up to 128 bits) in one build (`port_stream`), 200 random beats
//!   on each input. (a) Inputs always offered, output always ready: every
//!   output compared bit for bit with the model, and the cycles with the
//!   cycle model of the module's header (pair `n` taken on cycle `n` on
//!   both inputs, output on cycle `n + 1`). (b) Random, independent valid
//!   gaps on each input and random output back-pressure (six seeded runs,
//!   symmetric and lopsided): every output compared, nothing lost,
//!   repeated or extra, both beats of a pair taken on the same cycle, and
//!   the header's handshake (`in0_ready = in1_valid && free`, `in1_ready =
//!   in0_valid && free`, `free = !out_valid || out_ready`, out_valid a
//!   register) replayed cycle by cycle on the logged signals.
//! * `concat_illegal_parameters_stop_elaboration`: `verilator --lint-only
//!   -Wall` is silent on legal sets and fails on illegal ones, naming
//!   `fptgen_param_error_concat_<reason>`.
//! * `concat_synthesizes_to_registers`: yosys `synth_xilinx -family xcu`:
//!   no RAM or shift-register primitives, and exactly the output register
//!   (`W0 + W1` bits) and out_valid as flip-flops.
//!
//! Verilator and yosys are required: without them these tests fail (they
//! never skip).

use std::fmt::Write as _;
use std::fs;

use crate::pixel_stream;
use crate::port_stream;
use crate::common::{require_tool, scratch, Rng};
use crate::pixel_stream::synth_runs;
use crate::port_stream::{Bench, Log, Sink, Source};

const PAIRS: usize = 200;
const SEED: u64 = 0x636f_6e63_0000_0001;

/// (W0, W1)
const CFGS: &[(usize, usize)] = &[(1, 1), (8, 8), (3, 13), (64, 64), (72, 5), (1, 100), (33, 31)];

fn random_beat(rng: &mut Rng, bits: usize) -> Vec<bool> {
    // A fifth of the beats all zeros or all ones.
    match rng.next() % 10 {
        0 => vec![false; bits],
        1 => vec![true; bits],
        _ => (0..bits).map(|_| rng.coin()).collect(),
    }
}

fn bench() -> Bench {
    require_tool("verilator", "--version");
    let mut rng = Rng(SEED);
    let mut sources = Vec::new();
    let mut sinks = Vec::new();
    let mut body = String::new();
    for (i, &(w0, w1)) in CFGS.iter().enumerate() {
        for w in [w0, w1] {
            sources.push(Source { bits: w, beats: (0..PAIRS).map(|_| random_beat(&mut rng, w)).collect() });
        }
        sinks.push(Sink { bits: w0 + w1, expect: PAIRS });
        let (a, b) = (2 * i, 2 * i + 1);
        writeln!(
            body,
            "fptgen_concat #(.W0({w0}), .W1({w1})) u{i} (\n    .clk(clk), .rst(rst),\n    \
             .in0_data(in{a}_data), .in0_valid(in{a}_valid), .in0_ready(in{a}_ready),\n    \
             .in1_data(in{b}_data), .in1_valid(in{b}_valid), .in1_ready(in{b}_ready),\n    \
             .out_data(out{i}_data), .out_valid(out{i}_valid), .out_ready(out{i}_ready)\n);\n"
        )
        .unwrap();
    }
    let dir = scratch("rtl_concat");
    port_stream::build(&dir, "concat_top", &body, &["fptgen_concat.v"], sources, sinks)
}

/// Every output of every instance against the model, bit for bit, and
/// both beats of every pair taken on the same cycle.
fn check_outputs(b: &Bench, log: &Log, run: &str) {
    for (i, &(w0, w1)) in CFGS.iter().enumerate() {
        let ctx = format!("{run}, W0 {w0} W1 {w1}");
        let stuck = log.stuck.map(|t| format!(" (the bench stopped, cycle {t})")).unwrap_or_default();
        let (a, c) = (&log.accepted[2 * i], &log.accepted[2 * i + 1]);
        assert_eq!(a.len(), PAIRS, "{ctx}: beats taken on input 0{stuck}");
        assert_eq!(c.len(), PAIRS, "{ctx}: beats taken on input 1{stuck}");
        assert_eq!(a, c, "{ctx}: the beats of a pair must be taken on the same cycle");
        let outs = &log.outputs[i];
        assert_eq!(outs.len(), PAIRS, "{ctx}: outputs{stuck}");
        for (n, (t, bits)) in outs.iter().enumerate() {
            let want: Vec<bool> = b.sources[2 * i].beats[n].iter().chain(&b.sources[2 * i + 1].beats[n]).copied().collect();
            if let Some(e) = (0..w0 + w1).find(|&e| bits[e] != want[e]) {
                let (input, bit) = if e < w0 { (0, e) } else { (1, e - w0) };
                panic!("{ctx}: output {n} on cycle {t}, bit {e} (input {input}'s bit {bit}): got {}, want {}", bits[e], want[e]);
            }
        }
    }
}

/// The header's handshake, replayed on every cycle of a traced run.
fn check_handshake(log: &Log, i: usize, ctx: &str) {
    assert!(!log.cycles.is_empty(), "{ctx}: no trace");
    let mut ov = false;
    for (t, c) in log.cycles.iter().enumerate() {
        let (v0, r0) = c.src[2 * i];
        let (v1, r1) = c.src[2 * i + 1];
        let (out_valid, or) = c.snk[i];
        assert_eq!(out_valid, ov, "{ctx}: out_valid on cycle {t}, model {ov}");
        let free = !ov || or;
        assert_eq!(r0, v1 && free, "{ctx}: in0_ready on cycle {t} (in1_valid {v1}, out_valid {ov}, out_ready {or})");
        assert_eq!(r1, v0 && free, "{ctx}: in1_ready on cycle {t} (in0_valid {v0}, out_valid {ov}, out_ready {or})");
        ov = (v0 && v1 && free) || (ov && !or);
    }
}

#[test]
fn concat_outputs_and_cycles() {
    let b = bench();

    // (a) Full rate: bits and cycles.
    let log = b.full_rate();
    check_outputs(&b, &log, "full rate");
    for (i, &(w0, w1)) in CFGS.iter().enumerate() {
        let ctx = format!("full rate, W0 {w0} W1 {w1}");
        for (n, &t) in log.accepted[2 * i].iter().enumerate() {
            assert_eq!(t, n as u64, "{ctx}: pair {n} taken on cycle {t}, model {n}");
        }
        for (n, (t, _)) in log.outputs[i].iter().enumerate() {
            assert_eq!(*t, n as u64 + 1, "{ctx}: output {n} on cycle {t}, model {}", n + 1);
        }
        check_handshake(&log, i, &ctx);
    }

    // (b) Independent random gaps on each input, random back-pressure.
    let n = CFGS.len();
    let lopsided = |g0: u32, g1: u32| -> Vec<u32> { (0..2 * n).map(|k| if k % 2 == 0 { g0 } else { g1 }).collect() };
    let runs: &[(Vec<u32>, u32, u64)] = &[
        (vec![30], 30, 1),
        (lopsided(10, 70), 20, 2),
        (lopsided(70, 10), 50, 3),
        (vec![0], 90, 4),
        (lopsided(0, 50), 0, 5),
        (lopsided(90, 0), 10, 6),
    ];
    for (gaps, stall, seed) in runs {
        let log = b.run(gaps, &[*stall], *seed, true);
        let run = format!("input gaps {gaps:?} %, {stall}% output stalls, seed {seed}");
        check_outputs(&b, &log, &run);
        for (i, &(w0, w1)) in CFGS.iter().enumerate() {
            check_handshake(&log, i, &format!("{run}, W0 {w0} W1 {w1}"));
        }
    }
    fs::remove_dir_all(&b.dir).ok();
}

#[test]
fn concat_illegal_parameters_stop_elaboration() {
    require_tool("verilator", "--version");
    let dir = scratch("rtl_concat_illegal");
    let legal: &[&[(&str, i64)]] = &[&[], &[("W0", 1)], &[("W1", 1)], &[("W0", 1), ("W1", 1)], &[("W0", 1000), ("W1", 3)]];
    let illegal: &[(&[(&str, i64)], &str)] = &[
        (&[("W0", 0)], "fptgen_param_error_concat_w0_below_1"),
        (&[("W0", -1)], "fptgen_param_error_concat_w0_below_1"),
        (&[("W1", 0)], "fptgen_param_error_concat_w1_below_1"),
        (&[("W1", -8), ("W0", 4)], "fptgen_param_error_concat_w1_below_1"),
        (&[("W0", 0), ("W1", 0)], "fptgen_param_error_concat_w0_below_1"),
        (&[("W0", 0), ("W1", 0)], "fptgen_param_error_concat_w1_below_1"),
    ];
    pixel_stream::check_parameters("fptgen_concat", &dir, legal, illegal);
    fs::remove_dir_all(&dir).ok();
}

#[test]
fn concat_synthesizes_to_registers() {
    let sets = [(1, 1), (64, 64), (72, 5)];
    let runs = sets.map(|(w0, w1)| (format!("concat_{w0}_{w1}"), format!("-set W0 {w0} -set W1 {w1}"), format!("W0 {w0}, W1 {w1}")));
    synth_runs("rtl_concat", "fptgen_concat", &runs, |i, syn| {
        let ((w0, w1), name) = (sets[i], &runs[i].0);
        let stat = &syn.stat;
        let rams = syn.count(|c| c.starts_with("RAM") || c.starts_with("SRL"));
        let ffs = syn.count(|c| c.starts_with("FD"));
        assert_eq!(rams, 0, "{name}: registers only, no RAM or shift-register primitives:\n{stat}");
        assert_eq!(ffs, (w0 + w1 + 1) as u64, "{name}: the output register and out_valid are the only flip-flops:\n{stat}");
    });
}
