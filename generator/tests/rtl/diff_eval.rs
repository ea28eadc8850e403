//! `rtl/fptgen_diff_eval.v` (the difference unit of member evaluation by
//! difference) in Verilator against the simulator: for random dense layers
//! with exact accumulation (random formats, rounding and overflow modes,
//! relu or linear; weights, biases or both trainable; random P, M, load
//! word layouts), the harness loads the buffered samples through the
//! unit's load port (after a buffer's worth of other samples, so the load
//! pointer wraps), writes random committed losses, fills the committed
//! sums with one fill pass per group, and then trains group after group as
//! the trainer would (several members' perturbation passes, each followed
//! by a member finishing, then an update pass and its commit), wrapping
//! around the parameters more than once. After every member finishing the
//! unit's changed samples (the FIFO's order and count) must be exactly the
//! samples whose output vector `Network::infer` gives differently with the
//! perturbed and the committed parameters (every sample when the group
//! holds a bias), and base_loss the sum of the other samples' committed
//! losses; `busy` and `ld_hold` are compared in every cycle with the
//! documented timing. Fails (does not skip) without Verilator.

use std::fmt::Write as _;
use std::fs;
use std::path::Path;

use crate::common;
use crate::common::random_net::{ap_format as fmt, random_code as code, OVF, QUANT};
use crate::common::{mask, require_tool, scratch, verilate_and_run, Rng};
use fptgen_generator::plan::{ovf_code, quant_code};
use fptgen_sim::fixed::Format;
use fptgen_sim::layers::dense::{dot_product_bits, exact_accumulation};
use fptgen_sim::model::{self, LayerOp};
use fptgen_sim::network::Network;
use fptgen_sim::weights::{LayerParams, Params};

/// busy stays high this many cycles after the M * R of the loop.
const FIN_TAIL: usize = 6;

/// One instance: the layer and the trainer's sizes.
struct Set {
    model: model::Model,
    inputs: usize,
    rows: usize,
    m: usize,
    p: usize,
    vpw: usize,
    w_train: bool,
    b_train: bool,
    relu: bool,
    s_w: u32,
    shift: u32,
    pw: u32,
    x: Format,
    w: Format,
    b: Format,
    a: Format,
    y: Format,
}

fn fmt_bits(f: Format) -> (u32, i32, u8) {
    (f.width(), f.frac_bits(), u8::from(f.signed()))
}

/// A random dense layer with exact accumulation, and trainer sizes.
fn random_set(rng: &mut Rng, big: bool, kind: usize) -> Set {
    loop {
        let inputs = if big { rng.range(30, 60) } else { rng.range(1, 12) } as usize;
        let rows = if big { rng.range(6, 12) } else { rng.range(1, 6) } as usize;
        let relu = rng.coin();
        let (xs, xw) = (rng.coin(), rng.range(1, 9) as u32);
        let xi = rng.range(-2, xw as i64 + 2) as i32;
        let (ws, ww) = (rng.coin(), rng.range(2, 7) as u32);
        let wi = rng.range(-2, ww as i64 + 2) as i32;
        let (bs, bw) = (rng.coin(), rng.range(2, 10) as u32);
        let bi = rng.range(-2, bw as i64 + 4) as i32;
        let xf = xw as i32 - xi;
        let wf = ww as i32 - wi;
        let af = xf + wf + rng.range(0, 2) as i32;
        let aw = rng.range(4, 36) as u32;
        let a_ovf = OVF[rng.range(0, 3) as usize];
        let a_q = QUANT[rng.range(0, 6) as usize];
        // Outputs a few fraction bits coarser than the products, so that
        // a weight's step changes some outputs and not others.
        let (ys, yw) = (rng.coin(), rng.range(2, 10) as u32);
        let yi = yw as i32 - (af - rng.range(0, 4) as i32);
        let y_q = QUANT[rng.range(0, 6) as usize];
        let y_o = OVF[rng.range(0, 3) as usize];
        let yaml = format!(
            "name: f\ninput: {{shape: [{inputs}], format: '{}'}}\nweights: w.npz\nlayers:\n  - {{name: l, type: dense, inputs: {inputs}, outputs: {rows}, activation: {}, precision: {{weight: '{}', bias: '{}', accum: '{}', output: '{}'}}}}\n",
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
        let s_w = bits.max(2) + rng.range(0, 1) as u32;
        if s_w > 62 || shift > 20 {
            continue;
        }
        let (w_train, b_train) = match kind % 3 {
            0 => (true, false),
            1 => (false, true),
            _ => (true, true),
        };
        let t = usize::from(w_train) * rows * inputs + usize::from(b_train) * rows;
        let p = if big { rng.range(20, 90) as usize } else { rng.range(1, t as i64) as usize }.min(t);
        let m_samples = if big { 16 } else { rng.range(1, 7) as usize };
        let vpw = rng.range(1, (64 / xw as i64).min(8)) as usize;
        let pr = d.precision;
        let pw = [(w_train, pr.weight), (b_train, pr.bias)]
            .iter()
            .filter(|(on, _)| *on)
            .map(|(_, f)| f.width() + u32::from(!f.signed()))
            .max()
            .unwrap()
            .max(2);
        return Set {
            inputs,
            rows,
            m: m_samples,
            p,
            vpw,
            w_train,
            b_train,
            relu,
            s_w,
            shift,
            pw,
            x: m.input_format,
            w: pr.weight,
            b: pr.bias,
            a: pr.accum,
            y: pr.output,
            model: m.clone(),
        };
    }
}

/// A new value for a parameter of code `c`: often the same or a step away,
/// so that members change some samples and not others.
fn nudge(rng: &mut Rng, f: Format, c: i128) -> i128 {
    match rng.range(0, 6) {
        0 => c,
        1 | 2 => (c + 1).min(f.max_raw()),
        3 => (c - 1).max(f.min_raw()),
        _ => code(rng, f),
    }
}

/// One cycle of stimulus.
#[derive(Clone, Default)]
struct Cycle {
    rst: bool,
    clear: bool,
    rewind: bool,
    step: bool,
    save: bool,
    wr: u8, // 1 perturb, 2 update, 4 fill
    wdata: u64,
    committed: u64,
    ld_fire: bool,
    ld_x: u64,
    l_we: bool,
    l_index: u64,
    l_value: u64,
    fin_start: bool,
    fin_mode: u8,
    pop: bool,
}

/// What a cycle's outputs must be, beyond busy and ld_hold.
enum Check {
    /// results of member `k`: count and base_loss
    Results { count: usize, base: u64, what: String },
    /// a pop: ch_valid high and ch_index
    Pop { index: usize, what: String },
    /// the FIFO is empty
    Empty { what: String },
}

/// The trainable parameters in training order: `(is_bias, row, input)`.
fn order(s: &Set) -> Vec<(bool, usize, usize)> {
    let mut v = Vec::new();
    if s.w_train {
        for r in 0..s.rows {
            for i in 0..s.inputs {
                v.push((false, r, i));
            }
        }
    }
    if s.b_train {
        for r in 0..s.rows {
            v.push((true, r, 0));
        }
    }
    v
}

struct Stats {
    members: usize,
    partial: usize,
    multi_row: usize,
}

fn run_set(k: usize, s: &Set, rng: &mut Rng, stats: &mut Stats) {
    let dir = scratch(&format!("rtl_diff_eval_{k}"));
    let params = order(s);
    let t = params.len();
    let g_count = t.div_ceil(s.p);
    let words = s.inputs.div_ceil(s.vpw);
    let slots = (s.p.saturating_sub(1)).div_ceil(s.inputs).saturating_add(1).min(s.rows);
    let pw_mask = mask(s.pw);
    let xw = s.x.width();

    // Committed parameters, the samples and their committed losses.
    let mut w: Vec<i128> = (0..s.rows * s.inputs).map(|_| code(rng, s.w)).collect();
    let mut b: Vec<i128> = (0..s.rows).map(|_| code(rng, s.b)).collect();
    let xs: Vec<Vec<i128>> = (0..s.m).map(|_| (0..s.inputs).map(|_| code(rng, s.x)).collect()).collect();
    let losses: Vec<u64> = (0..s.m).map(|_| rng.next() & 0x00ff_ffff).collect();
    let infer = |w: &[i128], b: &[i128], x: &[i128]| -> Vec<i128> {
        let params = Params { layers: vec![LayerParams { tensors: vec![w.to_vec(), b.to_vec()] }] };
        Network::new(s.model.clone(), params).expect("a valid layer").infer(x).expect("a valid input")
    };
    let value = |w: &[i128], b: &[i128], j: usize| -> i128 {
        let (bias, r, i) = params[j];
        if bias { b[r] } else { w[r * s.inputs + i] }
    };

    let mut cyc: Vec<Cycle> = Vec::new();
    let mut checks: Vec<(usize, Check)> = Vec::new();
    let mut busy: Vec<(usize, usize)> = Vec::new(); // [from, to] inclusive
    let mut hold: Vec<usize> = Vec::new(); // cycles of ld_fire
    let idle = |cyc: &mut Vec<Cycle>, n: usize| cyc.extend(std::iter::repeat_n(Cycle::default(), n));

    // Reset, then the load: a buffer of other samples, then the real ones.
    cyc.push(Cycle { rst: true, ..Default::default() });
    cyc.push(Cycle { rst: true, ..Default::default() });
    for round in 0..2 {
        for sample in xs.iter() {
            for word in 0..words {
                let mut bits = 0u64;
                for v in 0..s.vpw {
                    let i = word * s.vpw + v;
                    let c = if round == 0 { code(rng, s.x) } else if i < s.inputs { sample[i] } else { code(rng, s.x) };
                    bits |= s.x.bits(c) << (v as u32 * xw);
                }
                hold.push(cyc.len());
                cyc.push(Cycle { ld_fire: true, ld_x: bits, ..Default::default() });
                idle(&mut cyc, s.vpw);
            }
        }
    }
    for (j, &l) in losses.iter().enumerate() {
        cyc.push(Cycle { l_we: true, l_index: j as u64, l_value: l, ..Default::default() });
    }
    cyc.push(Cycle { clear: true, ..Default::default() });
    idle(&mut cyc, 1);

    // A pass over group g: one write per cycle, the cursor stepping.
    let rows_of = |g: usize| -> usize {
        let lo = g * s.p;
        let hi = (lo + s.p).min(t);
        let mut rows: Vec<usize> = params[lo..hi].iter().filter(|p| !p.0).map(|p| p.1).collect();
        rows.dedup();
        rows.len()
    };
    let finish = |cyc: &mut Vec<Cycle>, busy: &mut Vec<(usize, usize)>, mode: u8, rows: usize| -> usize {
        idle(cyc, 1);
        let c = cyc.len();
        cyc.push(Cycle { fin_start: true, fin_mode: mode, ..Default::default() });
        let n = s.m * rows.max(1) + FIN_TAIL;
        busy.push((c + 1, c + n));
        idle(cyc, n);
        c + n + 1
    };

    // Two runs (the second as after a new ctl_start: the cursor cleared,
    // the committed sums filled again over the first run's): fill, then
    // train.
    for run in 0..2 {
        if run == 1 {
            cyc.push(Cycle { clear: true, ..Default::default() });
        }
        // Fill: every group, its committed values with wr_fill.
        for g in 0..g_count {
            cyc.push(Cycle { save: true, ..Default::default() });
            for j in g * s.p..((g + 1) * s.p).min(t) {
                let c = value(&w, &b, j) as u64 & pw_mask;
                cyc.push(Cycle { wr: 4, step: true, wdata: c, committed: c, ..Default::default() });
            }
            finish(&mut cyc, &mut busy, 2, rows_of(g));
        }

        // Training: group after group, wrapping around the parameters.
        let rounds = g_count + 2 + (6 / g_count.max(1));
        for round in 0..rounds {
            let g = round % g_count;
            let (lo, hi) = (g * s.p, ((g + 1) * s.p).min(t));
            let has_bias = params[lo..hi].iter().any(|p| p.0);
            let rows = rows_of(g);
            if rows > 1 {
                stats.multi_row += 1;
            }
            cyc.push(Cycle { save: true, ..Default::default() });
            let members = rng.range(1, 3) as usize;
            for member in 0..members {
                let (mut pw_, mut pb) = (w.clone(), b.clone());
                // Sparse members (a parameter or two changed) and dense ones.
                let sparse = rng.coin();
                for j in lo..hi {
                    let (bias, r, i) = params[j];
                    let old = value(&w, &b, j);
                    let new = if sparse && !rng.chance(150 / (hi - lo + 1) as u64) {
                        old
                    } else if bias {
                        nudge(rng, s.b, old)
                    } else {
                        nudge(rng, s.w, old)
                    };
                    if bias { pb[r] = new } else { pw_[r * s.inputs + i] = new }
                    cyc.push(Cycle { wr: 1, step: true, wdata: new as u64 & pw_mask, committed: old as u64 & pw_mask, ..Default::default() });
                }
                cyc.push(Cycle { rewind: true, ..Default::default() });
                let end = finish(&mut cyc, &mut busy, 0, rows);
                assert_eq!(end, cyc.len());
                let changed: Vec<usize> = (0..s.m).filter(|&q| has_bias || infer(&w, &b, &xs[q]) != infer(&pw_, &pb, &xs[q])).collect();
                let base: u64 = (0..s.m).filter(|q| !changed.contains(q)).map(|q| losses[q]).sum::<u64>() & 0xffff_ffff;
                let what = format!("set {k}, run {run}, round {round} (group {g} of {g_count}, {rows} row(s), bias {has_bias}), member {member}");
                if !has_bias {
                    stats.members += 1;
                    if !changed.is_empty() && changed.len() < s.m {
                        stats.partial += 1;
                    }
                }
                checks.push((end, Check::Results { count: changed.len(), base, what: what.clone() }));
                for &q in &changed {
                    checks.push((cyc.len(), Check::Pop { index: q, what: what.clone() }));
                    cyc.push(Cycle { pop: true, ..Default::default() });
                }
                checks.push((cyc.len(), Check::Empty { what }));
                idle(&mut cyc, 1);
            }
            // The update pass: new committed values; the cursor moves on.
            for j in lo..hi {
                let (bias, r, i) = params[j];
                let old = value(&w, &b, j);
                let new = if bias { nudge(rng, s.b, old) } else { nudge(rng, s.w, old) };
                if bias { b[r] = new } else { w[r * s.inputs + i] = new }
                cyc.push(Cycle { wr: 2, step: true, wdata: new as u64 & pw_mask, committed: old as u64 & pw_mask, ..Default::default() });
            }
            finish(&mut cyc, &mut busy, 1, rows);
        }
    }
    idle(&mut cyc, 2);

    // The top level and the harness.
    let biases: String = if s.b_train {
        "0".into()
    } else {
        let mut v = 0u128;
        for (r, &c) in b.iter().enumerate() {
            v |= u128::from(s.b.bits(c)) << (r as u32 * s.b.width());
        }
        format!("{}'h{v:x}", s.rows as u32 * s.b.width())
    };
    assert!(s.rows as u32 * s.b.width() <= 128);
    let (bw, bf, bs) = fmt_bits(s.b);
    let (aw, af, as_) = fmt_bits(s.a);
    let (yw, yf, ys) = fmt_bits(s.y);
    let sw_ = common::bits_for(s.m);
    let cw = common::bits_for(s.m + 1);
    let top = format!(
        "`timescale 1ns / 1ps\n`default_nettype none\nmodule diff_top (\n    input wire clk, input wire rst,\n    input wire cur_clear, input wire cur_rewind, input wire cur_step, input wire cur_save,\n    input wire wr_perturb, input wire wr_update, input wire wr_fill,\n    input wire [{pm}:0] wdata, input wire [{pm}:0] committed,\n    input wire ld_fire, input wire [{lm}:0] ld_x, output wire ld_hold,\n    input wire l_we, input wire [{sm}:0] l_index, input wire [31:0] l_value,\n    input wire fin_start, input wire [1:0] fin_mode, output wire busy, output wire [{cm}:0] ch_count,\n    output wire [31:0] base_loss, output wire ch_valid, output wire [{sm}:0] ch_index, input wire ch_pop,\n    output wire [{sm}:0] ct_index, input wire ct_pop\n);\nfptgen_diff_eval #(.M({m}), .INPUTS({inputs}), .ROWS({rows}), .X_W({xw}), .X_S({xs}), .VPW({vpw}), .WORDS({words}), .PW({pw}), .W_TRAIN({wt}), .B_TRAIN({bt}), .SLOTS({slots}), .S_W({s_w}), .SHIFT({shift}), .B_W({bw}), .B_F({bf}), .B_S({bs}), .A_W({aw}), .A_F({af}), .A_S({as_}), .A_Q({aq}), .A_O({ao}), .Y_W({yw}), .Y_F({yf}), .Y_S({ys}), .Y_Q({yq}), .Y_O({yo}), .RELU({relu}), .BIASES({biases}), .X_STYLE(\"{xst}\"), .S_STYLE(\"block\")) u_dut (\n    .clk(clk), .rst(rst), .cur_clear(cur_clear), .cur_rewind(cur_rewind), .cur_step(cur_step), .cur_save(cur_save),\n    .wr_perturb(wr_perturb), .wr_update(wr_update), .wr_fill(wr_fill), .wdata(wdata), .committed(committed),\n    .ld_fire(ld_fire), .ld_x(ld_x), .ld_hold(ld_hold), .l_we(l_we), .l_index(l_index), .l_value(l_value),\n    .fin_start(fin_start), .fin_mode(fin_mode), .busy(busy), .ch_count(ch_count), .base_loss(base_loss),\n    .ch_valid(ch_valid), .ch_index(ch_index), .ch_pop(ch_pop), .ct_index(ct_index), .ct_pop(ct_pop));\nendmodule\n`default_nettype wire\n",
        pm = s.pw - 1,
        lm = s.vpw as u32 * xw - 1,
        sm = sw_ - 1,
        cm = cw - 1,
        m = s.m,
        inputs = s.inputs,
        rows = s.rows,
        xs = u8::from(s.x.signed()),
        vpw = s.vpw,
        pw = s.pw,
        wt = u8::from(s.w_train),
        bt = u8::from(s.b_train),
        s_w = s.s_w,
        shift = s.shift,
        aq = quant_code(s.a.quant()),
        ao = ovf_code(s.a.overflow()),
        yq = quant_code(s.y.quant()),
        yo = ovf_code(s.y.overflow()),
        relu = u8::from(s.relu),
        xst = if k % 2 == 0 { "block" } else { "distributed" },
    );
    fs::write(dir.join("diff_top.v"), top).unwrap();

    let mut stim = String::new();
    for c in &cyc {
        writeln!(
            stim,
            "{} {} {} {} {} {} {} {} {:x} {:x} {} {:x} {} {:x} {:x} {} {} {}",
            u8::from(c.rst),
            u8::from(c.clear),
            u8::from(c.rewind),
            u8::from(c.step),
            u8::from(c.save),
            c.wr & 1,
            (c.wr >> 1) & 1,
            (c.wr >> 2) & 1,
            c.wdata,
            c.committed,
            u8::from(c.ld_fire),
            c.ld_x,
            u8::from(c.l_we),
            c.l_index,
            c.l_value,
            u8::from(c.fin_start),
            c.fin_mode,
            u8::from(c.pop)
        )
        .unwrap();
    }
    fs::write(dir.join("stim.txt"), stim).unwrap();
    let c = format!(
        "#include \"Vdiff_top.h\"\n#include \"verilated.h\"\n#include <cstdio>\nint main(int argc, char** argv) {{\n    VerilatedContext ctx; ctx.commandArgs(argc, argv);\n    Vdiff_top top(&ctx);\n    FILE* f = std::fopen(\"stim.txt\", \"r\");\n    unsigned rst, cl, rw, st, sv, wp, wu, wf, lf, lwe, fs, fm, pop; unsigned long long wd, cm, lx, li, lv;\n    top.clk = 0; top.eval();\n    for (int t = 0; t < {n}; ++t) {{\n        if (std::fscanf(f, \"%u %u %u %u %u %u %u %u %llx %llx %u %llx %u %llx %llx %u %u %u\", &rst, &cl, &rw, &st, &sv, &wp, &wu, &wf, &wd, &cm, &lf, &lx, &lwe, &li, &lv, &fs, &fm, &pop) != 18) return 3;\n        top.rst = rst; top.cur_clear = cl; top.cur_rewind = rw; top.cur_step = st; top.cur_save = sv;\n        top.wr_perturb = wp; top.wr_update = wu; top.wr_fill = wf; top.wdata = wd; top.committed = cm;\n        top.ld_fire = lf; top.ld_x = lx; top.l_we = lwe; top.l_index = li; top.l_value = lv;\n        top.fin_start = fs; top.fin_mode = fm; top.ch_pop = pop; top.ct_pop = pop;\n        top.eval();\n        std::printf(\"%x %x %x %x %x %x %x\\n\", (unsigned)top.busy, (unsigned)top.ld_hold, (unsigned)top.ch_count, (unsigned)top.base_loss, (unsigned)top.ch_valid, (unsigned)top.ch_index, (unsigned)top.ct_index);\n        top.clk = 1; top.eval(); top.clk = 0; top.eval();\n    }}\n    return 0;\n}}\n",
        n = cyc.len()
    );
    fs::write(dir.join("main.cpp"), c).unwrap();
    let out = verilate_and_run(&dir, "diff_top", &["fptgen_diff_eval.v", "fptgen_delta_lanes.v", "fptgen_delta_finish.v", "fptgen_cast.v"]);
    let lines: Vec<Vec<u64>> = out.lines().map(|l| l.split_whitespace().map(|x| u64::from_str_radix(x, 16).unwrap()).collect()).collect();
    assert_eq!(lines.len(), cyc.len(), "set {k}: the simulation printed every cycle");

    let desc = format!(
        "set {k}: {} inputs, {} rows, M {}, P {}, VPW {}, weights {}, biases {}, x {}, w {}, b {}, accum {}, out {}, relu {}, S_W {}, SHIFT {}",
        s.inputs, s.rows, s.m, s.p, s.vpw, s.w_train, s.b_train, s.x, s.w, s.b, s.a, s.y, s.relu, s.s_w, s.shift
    );
    for (t, o) in lines.iter().enumerate() {
        let want_busy = busy.iter().any(|&(a, z)| (a..=z).contains(&t));
        assert_eq!(o[0] == 1, want_busy, "busy differs in cycle {t}; {desc}");
        let want_hold = hold.iter().any(|&c| t > c && t <= c + s.vpw);
        assert_eq!(o[1] == 1, want_hold, "ld_hold differs in cycle {t}; {desc}");
    }
    for (t, check) in &checks {
        let o = &lines[*t];
        match check {
            Check::Results { count, base, what } => {
                assert_eq!(o[2] as usize, *count, "ch_count differs in cycle {t}, {what}; {desc}");
                assert_eq!(o[3], *base, "base_loss differs in cycle {t}, {what}; {desc}");
            }
            Check::Pop { index, what } => {
                assert_eq!(o[4], 1, "ch_valid low before a pop in cycle {t}, {what}; {desc}");
                assert_eq!(o[5] as usize, *index, "ch_index differs in cycle {t}, {what}; {desc}");
                assert_eq!(o[6] as usize, *index, "ct_index differs in cycle {t}, {what}; {desc}");
            }
            Check::Empty { what } => assert_eq!(o[4], 0, "ch_valid high after the last pop in cycle {t}, {what}; {desc}"),
        }
    }
    let _ = fs::remove_dir_all(&dir);
}

#[test]
fn difference_unit_matches_the_simulator() {
    require_tool("verilator", "--version");
    let mut rng = Rng(0xD1FF_E7A1);
    let mut stats = Stats { members: 0, partial: 0, multi_row: 0 };
    // Weights only, biases only, both; the last two sets larger.
    for (k, kind) in [0, 1, 2, 0, 2, 0].into_iter().enumerate() {
        let s = random_set(&mut rng, k >= 4, kind);
        run_set(k, &s, &mut rng, &mut stats);
    }
    // Not vacuous: members of weight groups that changed some samples and
    // spared others, groups over several rows.
    assert!(stats.members > 10, "only {} members of weight groups", stats.members);
    assert!(stats.partial > 3, "only {} members changed some samples but not all", stats.partial);
    assert!(stats.multi_row > 2, "only {} groups spanned several rows", stats.multi_row);
}
