//! `rtl/fptgen_fork.v`, one stream to two, each output behind its own FIFO,
//! in Verilator against a model written here from the definition (each
//! output gives every input beat, unchanged and in order), not from the
//! RTL; and a fork -> two branches -> `fptgen_concat` graph (a residual
//! block's shape) against the depth rule of the fork's header:
//!
//! * `fork_outputs_and_cycles`: depths 1, 2, 3 (registers), 4, 5, 8, 16, 60
//!   (RAM), beats of 1 to 72 bits, in one build (`port_stream`), 300 random
//!   beats each. (a) Input always offered, outputs always ready: every beat
//!   of both outputs compared bit for bit, and every acceptance and output
//!   cycle with the cycle model of the header (beat `n` accepted on cycle
//!   `n` and given on both outputs on cycle `n + 1`; with a depth of 1,
//!   cycles `2n` and `2n + 1`). (b) Random input gaps and random,
//!   independent back-pressure on each output (seven seeded runs, one
//!   output stalled most of the time while the other never is, and the
//!   reverse): every beat compared, nothing lost, repeated or extra, and
//!   the header's handshake (`in_ready = count0 < DEPTH0 && count1 <
//!   DEPTH1`, `out_valid_i = count_i != 0`, the counts registers) replayed
//!   cycle by cycle on the logged signals.
//! * `fork_concat_graph_depth_rule`: fork -> (long branch: `fptgen_flatten`
//!   then `fptgen_serialize` of K beats, which must take K beats before it
//!   gives one) and (short branch: a direct connection, or one register
//!   stage) -> `fptgen_concat`, both orientations. With the short FIFO at
//!   the header's full-rate depth, one output per cycle, cycle exact; one
//!   entry fewer: slower but complete; at the deadlock bound `N_long -
//!   C_short`: complete; one entry fewer: the bench reports a deadlock,
//!   with exactly `N_long - 1` beats accepted and no output. Every output
//!   is `{x, x}` for input beat `x`, at full rate and under random input
//!   gaps and output back-pressure (four seeds).
//! * `fork_illegal_parameters_stop_elaboration`: `verilator --lint-only
//!   -Wall` is silent on legal sets and fails on illegal ones, naming
//!   `fptgen_param_error_fork_<reason>`.
//! * `fork_synthesizes_to_ram_for_ultrascale`: yosys `synth_xilinx -family
//!   xcu`: a deep FIFO is LUTRAM ("distributed") or block RAM ("block"),
//!   with flip-flops only for its read and bypass registers; a FIFO below
//!   the RAM threshold is registers only; prints the cell counts.
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

const BEATS: usize = 300;
const SEED: u64 = 0x666f_726b_0000_0001;

/// One fork instance.
#[derive(Debug, Clone, Copy)]
struct Cfg {
    w: usize,
    depth: [usize; 2],
    style: [&'static str; 2],
}

#[rustfmt::skip]
const CFGS: &[Cfg] = &[
    Cfg { w: 8, depth: [1, 1], style: ["auto", "auto"] },              // half rate
    Cfg { w: 1, depth: [2, 2], style: ["auto", "auto"] },
    Cfg { w: 8, depth: [1, 2], style: ["auto", "auto"] },              // half rate
    Cfg { w: 13, depth: [3, 2], style: ["auto", "auto"] },             // the largest register FIFO
    Cfg { w: 16, depth: [4, 4], style: ["distributed", "block"] },     // the smallest RAM FIFOs
    Cfg { w: 8, depth: [5, 1], style: ["auto", "auto"] },
    Cfg { w: 72, depth: [8, 16], style: ["block", "distributed"] },
    Cfg { w: 8, depth: [60, 2], style: ["distributed", "auto"] },      // a 2-row skip buffer of a 28-wide image
    Cfg { w: 33, depth: [2, 60], style: ["auto", "block"] },
    Cfg { w: 64, depth: [3, 4], style: ["auto", "auto"] },
];

fn random_beat(rng: &mut Rng, bits: usize) -> Vec<bool> {
    // A fifth of the beats all zeros or all ones.
    match rng.next() % 10 {
        0 => vec![false; bits],
        1 => vec![true; bits],
        _ => (0..bits).map(|_| rng.coin()).collect(),
    }
}

fn fork_inst(name: &str, cfg: &Cfg, input: &str, outs: [&str; 2]) -> String {
    format!(
        "fptgen_fork #(.W({}), .DEPTH0({}), .DEPTH1({}), .RAM_STYLE0(\"{}\"), .RAM_STYLE1(\"{}\")) {name} (\n    .clk(clk), .rst(rst),\n    \
         .in_data({input}_data), .in_valid({input}_valid), .in_ready({input}_ready),\n    \
         .out0_data({o0}_data), .out0_valid({o0}_valid), .out0_ready({o0}_ready),\n    \
         .out1_data({o1}_data), .out1_valid({o1}_valid), .out1_ready({o1}_ready)\n);\n",
        cfg.w,
        cfg.depth[0],
        cfg.depth[1],
        cfg.style[0],
        cfg.style[1],
        o0 = outs[0],
        o1 = outs[1]
    )
}

fn bench() -> Bench {
    require_tool("verilator", "--version");
    let mut rng = Rng(SEED);
    let mut sources = Vec::new();
    let mut sinks = Vec::new();
    let mut body = String::new();
    for (i, cfg) in CFGS.iter().enumerate() {
        sources.push(Source { bits: cfg.w, beats: (0..BEATS).map(|_| random_beat(&mut rng, cfg.w)).collect() });
        sinks.push(Sink { bits: cfg.w, expect: BEATS });
        sinks.push(Sink { bits: cfg.w, expect: BEATS });
        body += &fork_inst(&format!("u{i}"), cfg, &format!("in{i}"), [&format!("out{}", 2 * i), &format!("out{}", 2 * i + 1)]);
    }
    let dir = scratch("rtl_fork");
    port_stream::build(&dir, "fork_top", &body, &["fptgen_fork.v"], sources, sinks)
}

/// Both outputs of every instance against the model: every input beat, in
/// order, bit for bit; nothing lost, repeated or extra.
fn check_outputs(b: &Bench, log: &Log, run: &str) {
    for (i, cfg) in CFGS.iter().enumerate() {
        let ctx = format!("{run}, instance {i} {cfg:?}");
        let stuck = log.stuck.map(|t| format!(" (the bench stopped, cycle {t})")).unwrap_or_default();
        assert_eq!(log.accepted[i].len(), BEATS, "{ctx}: beats accepted{stuck}");
        for o in 0..2 {
            let outs = &log.outputs[2 * i + o];
            assert_eq!(outs.len(), BEATS, "{ctx}: beats given on output {o}{stuck}");
            for (n, (t, bits)) in outs.iter().enumerate() {
                let want = &b.sources[i].beats[n];
                if let Some(e) = (0..cfg.w).find(|&e| bits[e] != want[e]) {
                    panic!("{ctx}: output {o}, beat {n} on cycle {t}, bit {e}: got {}, want {}", bits[e], want[e]);
                }
            }
        }
    }
}

/// The header's handshake, replayed on every cycle of a traced run: the
/// counts of the two FIFOs, `in_ready = count0 < DEPTH0 && count1 <
/// DEPTH1`, `out_valid_i = count_i != 0`.
fn check_handshake(cfg: &Cfg, log: &Log, i: usize, ctx: &str) {
    assert!(!log.cycles.is_empty(), "{ctx}: no trace");
    let mut count = [0usize; 2];
    for (t, c) in log.cycles.iter().enumerate() {
        let (in_valid, in_ready) = c.src[i];
        let ir = count[0] < cfg.depth[0] && count[1] < cfg.depth[1];
        assert_eq!(in_ready, ir, "{ctx}: in_ready on cycle {t} (counts {count:?}), model {ir}");
        let push = in_valid && ir;
        for (o, n) in count.iter_mut().enumerate() {
            let (ov, or) = c.snk[2 * i + o];
            assert_eq!(ov, *n != 0, "{ctx}: out{o}_valid on cycle {t} (count {n}), model {}", *n != 0);
            *n = *n + usize::from(push) - usize::from(ov && or);
        }
    }
}

#[test]
fn fork_outputs_and_cycles() {
    let b = bench();

    // (a) Full rate: bits, cycles and the handshake.
    let log = b.full_rate();
    check_outputs(&b, &log, "full rate");
    for (i, cfg) in CFGS.iter().enumerate() {
        let ctx = format!("full rate, instance {i} {cfg:?}");
        // One beat per cycle with both depths >= 2, else one per two.
        let period = if cfg.depth.iter().all(|&d| d >= 2) { 1 } else { 2 };
        for (n, &t) in log.accepted[i].iter().enumerate() {
            let want = (period * n) as u64;
            assert_eq!(t, want, "{ctx}: beat {n} accepted on cycle {t}, model {want}");
        }
        for o in 0..2 {
            for (n, (t, _)) in log.outputs[2 * i + o].iter().enumerate() {
                let want = (period * n) as u64 + 1;
                assert_eq!(*t, want, "{ctx}: beat {n} given on output {o} on cycle {t}, model {want}");
            }
        }
        check_handshake(cfg, &log, i, &ctx);
    }

    // (b) Random input gaps, independent random back-pressure per output.
    let n = CFGS.len();
    let per_output = |s0: u32, s1: u32| -> Vec<u32> { (0..2 * n).map(|k| if k % 2 == 0 { s0 } else { s1 }).collect() };
    let runs: &[(u32, Vec<u32>, u64)] = &[
        (30, vec![30], 1),
        (10, per_output(80, 0), 2),
        (0, per_output(0, 80), 3),
        (50, vec![90], 4),
        (0, per_output(95, 20), 5),
        (70, per_output(10, 40), 6),
        (0, vec![50], 7),
    ];
    for (gap, stalls, seed) in runs {
        let log = b.run(&[*gap], stalls, *seed, true);
        let run = format!("{gap}% input gaps, output stalls {stalls:?} %, seed {seed}");
        check_outputs(&b, &log, &run);
        for (i, cfg) in CFGS.iter().enumerate() {
            check_handshake(cfg, &log, i, &format!("{run}, instance {i} {cfg:?}"));
        }
    }
    fs::remove_dir_all(&b.dir).ok();
}

/// One fork -> branches -> concat graph. The long branch is
/// `fptgen_flatten(K)` then `fptgen_serialize(K)`; the short one a direct
/// connection or one register stage (`fptgen_flatten(1)`).
#[derive(Debug, Clone, Copy)]
struct Graph {
    k: usize,
    /// The short branch is one register stage (else a direct connection).
    stage: bool,
    /// The long branch on the fork's output 1 and the concat's input 1
    /// (else on output 0 and input 0).
    long_on_1: bool,
    depth_short: usize,
    depth_long: usize,
}

impl Graph {
    /// The fork header's deadlock bound: DEPTH_short + C_short >= N_long,
    /// N_long = K (beat 0 of flatten -> serialize needs beats 0 .. K-1),
    /// C_short = 1 for a register stage, 0 for a direct connection.
    fn min_depth(&self) -> usize {
        self.k - usize::from(self.stage)
    }

    /// The header's full-rate depth: L_long - L_short + 2, with L_long =
    /// K + 1 (flatten takes beat 0 on a cycle, its vector is serialized
    /// from K edges later, and the join takes beat 0 one edge after that)
    /// and L_short = 1 for a register stage, 0 for a direct connection.
    fn full_rate_depth(&self) -> usize {
        self.k + 1 - usize::from(self.stage) + 2
    }

    fn deadlocks(&self) -> bool {
        self.depth_short < self.min_depth()
    }
}

/// The graphs of `fork_concat_graph_depth_rule`: for each shape, the short
/// FIFO at the full-rate depth, one fewer, the deadlock bound, one fewer.
fn graphs() -> Vec<Graph> {
    let mut g = Vec::new();
    for (k, stage, long_on_1) in [(4, false, false), (5, true, false), (7, false, true), (3, true, true)] {
        let shape = Graph { k, stage, long_on_1, depth_short: 0, depth_long: 2 };
        for d in [shape.full_rate_depth(), shape.full_rate_depth() - 1, shape.min_depth(), shape.min_depth() - 1] {
            g.push(Graph { depth_short: d, ..shape });
        }
    }
    // A one-entry FIFO on the long branch: half rate, no deadlock.
    g.push(Graph { k: 4, stage: false, long_on_1: true, depth_short: 4, depth_long: 1 });
    g
}

const W: usize = 8;

fn graph_bench(graphs: &[Graph]) -> Bench {
    require_tool("verilator", "--version");
    let mut rng = Rng(SEED ^ 0x6772_6170_6800);
    let mut sources = Vec::new();
    let mut sinks = Vec::new();
    let mut body = String::new();
    for (i, g) in graphs.iter().enumerate() {
        let beats = 24 * g.k;
        sources.push(Source { bits: W, beats: (0..beats).map(|_| random_beat(&mut rng, W)).collect() });
        sinks.push(Sink { bits: 2 * W, expect: beats });
        let (long, short) = if g.long_on_1 { (1, 0) } else { (0, 1) };
        let p = format!("g{i}");
        for s in ["f0", "f1", "v", "c0", "c1"] {
            let w = if s == "v" { g.k * W } else { W };
            writeln!(body, "wire [{}:0] {p}_{s}_data;\nwire {p}_{s}_valid;\nwire {p}_{s}_ready;", w - 1).unwrap();
        }
        let mut depth = [0; 2];
        depth[long] = g.depth_long;
        depth[short] = g.depth_short;
        let cfg = Cfg { w: W, depth, style: ["distributed", "distributed"] };
        body += &fork_inst(&format!("{p}_fork"), &cfg, &format!("in{i}"), [&format!("{p}_f0"), &format!("{p}_f1")]);
        let conn = |port: &str, sig: &str| format!(".{port}_data({sig}_data), .{port}_valid({sig}_valid), .{port}_ready({sig}_ready)");
        // The long branch: flatten(K) -> serialize(K).
        writeln!(
            body,
            "fptgen_flatten #(.BEATS({k}), .BEAT_W({W})) {p}_flat (.clk(clk), .rst(rst), {}, {});\n\
             fptgen_serialize #(.BEATS({k}), .BEAT_W({W})) {p}_ser (.clk(clk), .rst(rst), {}, {});",
            conn("in", &format!("{p}_f{long}")),
            conn("out", &format!("{p}_v")),
            conn("in", &format!("{p}_v")),
            conn("out", &format!("{p}_c{long}")),
            k = g.k
        )
        .unwrap();
        // The short branch.
        if g.stage {
            writeln!(
                body,
                "fptgen_flatten #(.BEATS(1), .BEAT_W({W})) {p}_stage (.clk(clk), .rst(rst), {}, {});",
                conn("in", &format!("{p}_f{short}")),
                conn("out", &format!("{p}_c{short}"))
            )
            .unwrap();
        } else {
            writeln!(
                body,
                "assign {p}_c{short}_data = {p}_f{short}_data;\nassign {p}_c{short}_valid = {p}_f{short}_valid;\n\
                 assign {p}_f{short}_ready = {p}_c{short}_ready;"
            )
            .unwrap();
        }
        // The vector between flatten and serialize is read whole; nothing is unused.
        writeln!(
            body,
            "fptgen_concat #(.W0({W}), .W1({W})) {p}_cat (.clk(clk), .rst(rst), {}, {}, {});\n",
            conn("in0", &format!("{p}_c0")),
            conn("in1", &format!("{p}_c1")),
            conn("out", &format!("out{i}"))
        )
        .unwrap();
    }
    let dir = scratch("rtl_fork_graph");
    port_stream::build(
        &dir,
        "graph_top",
        &body,
        &["fptgen_fork.v", "fptgen_flatten.v", "fptgen_serialize.v", "fptgen_concat.v"],
        sources,
        sinks,
    )
}

/// Every graph's outputs: `{x, x}` for every input beat `x`, in order,
/// all of them; or, for a graph below the deadlock bound, a deadlock that
/// the bench reports, with exactly `N_long - 1 = K - 1` beats accepted (the
/// short side full) and no output.
fn check_graphs(b: &Bench, graphs: &[Graph], log: &Log, run: &str) {
    let deadlock = graphs.iter().any(Graph::deadlocks);
    assert_eq!(log.stuck.is_some(), deadlock, "{run}: the bench must report a deadlock exactly when a graph is below the bound (stuck: {:?})", log.stuck);
    for (i, g) in graphs.iter().enumerate() {
        let ctx = format!("{run}, graph {i} {g:?} (deadlock bound {}, full-rate depth {})", g.min_depth(), g.full_rate_depth());
        let beats = &b.sources[i].beats;
        let outs = &log.outputs[i];
        if g.deadlocks() {
            assert_eq!(log.accepted[i].len(), g.k - 1, "{ctx}: a deadlock takes exactly K - 1 beats");
            assert!(outs.is_empty(), "{ctx}: a deadlock gives no output");
            continue;
        }
        assert_eq!(log.accepted[i].len(), beats.len(), "{ctx}: beats accepted");
        assert_eq!(outs.len(), beats.len(), "{ctx}: outputs");
        for (n, (t, bits)) in outs.iter().enumerate() {
            let want: Vec<bool> = beats[n].iter().chain(&beats[n]).copied().collect();
            assert_eq!(bits, &want, "{ctx}: output {n} on cycle {t} must be {{x, x}} of input beat {n}");
        }
    }
}

#[test]
fn fork_concat_graph_depth_rule() {
    let graphs = graphs();
    let b = graph_bench(&graphs);

    // Full rate.
    let log = b.full_rate();
    check_graphs(&b, &graphs, &log, "full rate");
    let mut report = String::new();
    for (i, g) in graphs.iter().enumerate() {
        let shape = format!(
            "K {}, short branch {}, long branch on {}, DEPTH short {} (bound {}, full rate {}), long {}",
            g.k,
            if g.stage { "a register stage" } else { "direct" },
            if g.long_on_1 { "output/input 1" } else { "output/input 0" },
            g.depth_short,
            g.min_depth(),
            g.full_rate_depth(),
            g.depth_long
        );
        if g.deadlocks() {
            writeln!(report, "  {shape}: deadlock, {} beats accepted", log.accepted[i].len()).unwrap();
            continue;
        }
        let o = &log.outputs[i];
        writeln!(report, "  {shape}: {} outputs on cycles {} .. {}", o.len(), o[0].0, o.last().unwrap().0).unwrap();
        let ctx = format!("full rate, graph {i} {g:?}");
        let outs = &log.outputs[i];
        let acc = &log.accepted[i];
        if g.depth_short >= g.full_rate_depth() && g.depth_long >= 2 {
            // Cycle exact: beat n accepted on cycle n; the join takes pair
            // n on cycle 1 + L_long + n = n + K + 2, output one edge later.
            for (n, &t) in acc.iter().enumerate() {
                assert_eq!(t, n as u64, "{ctx}: beat {n} accepted on cycle {t}, model {n}");
            }
            for (n, (t, _)) in outs.iter().enumerate() {
                let want = (n + g.k + 3) as u64;
                assert_eq!(*t, want, "{ctx}: output {n} on cycle {t}, model {want}");
            }
        } else {
            // Below the full-rate depth the graph loses throughput.
            let span = outs.last().unwrap().0 - outs[0].0 + 1;
            assert!(span > outs.len() as u64, "{ctx}: below the full-rate depth the outputs cannot come one per cycle ({span} cycles for {})", outs.len());
        }
    }

    eprintln!("rtl_fork: fork -> branches -> concat at full rate\n{report}");

    // Random input gaps and output back-pressure.
    for (gap, stall, seed) in [(30, 30, 1), (0, 70, 2), (60, 0, 3), (10, 90, 4)] {
        let log = b.run(&[gap], &[stall], seed, false);
        check_graphs(&b, &graphs, &log, &format!("{gap}% input gaps, {stall}% output stalls, seed {seed}"));
    }
    fs::remove_dir_all(&b.dir).ok();
}

#[test]
fn fork_illegal_parameters_stop_elaboration() {
    require_tool("verilator", "--version");
    let dir = scratch("rtl_fork_illegal");
    let legal: &[&[(&str, i64)]] = &[
        &[],
        &[("W", 1)],
        &[("DEPTH0", 1), ("DEPTH1", 1)],
        &[("DEPTH0", 3), ("DEPTH1", 4)],
        &[("W", 1), ("DEPTH0", 60)],
        &[("W", 100), ("DEPTH0", 1024), ("DEPTH1", 5)],
    ];
    let illegal: &[(&[(&str, i64)], &str)] = &[
        (&[("W", 0)], "fptgen_param_error_fork_w_below_1"),
        (&[("W", -1)], "fptgen_param_error_fork_w_below_1"),
        (&[("DEPTH0", 0)], "fptgen_param_error_fork_depth0_below_1"),
        (&[("DEPTH0", -3), ("DEPTH1", 60)], "fptgen_param_error_fork_depth0_below_1"),
        (&[("DEPTH1", 0)], "fptgen_param_error_fork_depth1_below_1"),
        (&[("DEPTH1", -1), ("DEPTH0", 1)], "fptgen_param_error_fork_depth1_below_1"),
        (&[("DEPTH0", 0), ("DEPTH1", 0)], "fptgen_param_error_fork_depth0_below_1"),
        (&[("DEPTH0", 0), ("DEPTH1", 0)], "fptgen_param_error_fork_depth1_below_1"),
    ];
    pixel_stream::check_parameters("fptgen_fork", &dir, legal, illegal);
    fs::remove_dir_all(&dir).ok();
}

#[test]
fn fork_synthesizes_to_ram_for_ultrascale() {
    // (name, W, DEPTH0, DEPTH1, RAM_STYLE0, RAM_STYLE1)
    let sets = [
        ("skip_60x64_lutram", 64, 60, 2, "distributed", "auto"),
        ("deep_1024x36_bram", 36, 1024, 3, "block", "auto"),
        ("both_60x64", 64, 60, 60, "distributed", "block"),
        ("regs_3_2", 16, 3, 2, "auto", "auto"),
        ("regs_1_1", 16, 1, 1, "auto", "auto"),
    ];
    let runs = sets.map(|(name, w, d0, d1, s0, s1)| {
        let params = format!("-set W {w} -set DEPTH0 {d0} -set DEPTH1 {d1} -set RAM_STYLE0 \"{s0}\" -set RAM_STYLE1 \"{s1}\"");
        (name.to_string(), params, format!("{name} (W {w}, DEPTH {d0} {s0}, {d1} {s1})"))
    });
    synth_runs("rtl_fork", "fptgen_fork", &runs, |i, syn| {
        let (name, w, d0, d1, s0, s1) = sets[i];
        let stat = &syn.stat;
        let bram = syn.count(|c| c.starts_with("RAMB"));
        let lutram = syn.count(|c| c.starts_with("RAM") && !c.starts_with("RAMB"));
        let srl = syn.count(|c| c.starts_with("SRL"));
        let ffs = syn.count(|c| c.starts_with("FD"));
        assert_eq!(srl, 0, "{name}: no shift-register primitives:\n{stat}");
        // Flip-flops per FIFO: below the RAM threshold its DEPTH beats,
        // from it the read and bypass registers (2 beats); plus the
        // pointers, counts and flags (at most 4 * 11 + 6 bits here).
        let beats = |d: usize| if d >= 4 { 2 } else { d };
        let regs = ((beats(d0) + beats(d1)) * w) as u64;
        assert!(ffs <= regs + 50, "{name}: {ffs} flip-flops, the data registers are {regs} bits:\n{stat}");
        let rams = [(d0, s0), (d1, s1)];
        let want_bram = rams.iter().any(|&(d, s)| d >= 4 && s == "block");
        let want_lutram = rams.iter().any(|&(d, s)| d >= 4 && s == "distributed");
        assert_eq!(bram > 0, want_bram, "{name}: block RAM exactly for a deep \"block\" FIFO:\n{stat}");
        assert_eq!(lutram > 0, want_lutram, "{name}: LUTRAM exactly for a deep \"distributed\" FIFO:\n{stat}");
        if d0 < 4 && d1 < 4 {
            // (Two one-entry FIFOs hold the same beat: yosys merges them.)
            let least = (d0.max(d1) * w) as u64;
            assert!(ffs >= least, "{name}: a shallow FIFO is registers ({ffs} flip-flops, {least} data bits at least):\n{stat}");
        }
    });
}
