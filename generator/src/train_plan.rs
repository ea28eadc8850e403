//! Lowering a model's `training:` section to the ES trainer's hardware
//! (`templates/es_top.v` with `rtl/fptgen_es_ctrl.v` and its blocks), and
//! the trainer's exact schedule.
//!
//! The schedule is the one `rtl/fptgen_es_ctrl.v` documents. With P
//! blocks (a ring that rotates past one unit in passes of P cycles), a
//! group of `tg` parameters takes `N * (P + E + 5) + 2 * P + tg + 5`
//! cycles when nothing pauses it or asks for an inference (the perturbed
//! values stay in memory until the next perturbation or the update
//! overwrites them; a pause or a request first restores them; a member's
//! accumulation pass is the next member's perturbation pass, except the
//! last member's), plus
//! `E + 2` with `baseline` fitness, where `E` is one evaluation of the M
//! buffered samples: the pipeline takes sample 0 D cycles after the buffer
//! starts (1, or words + 2 for an input vector stored as several words),
//! the buffer presents each next sample II cycles after the last was
//! taken, the last output is taken one cycle after it is valid, and its
//! error reaches the loss `W` cycles later (the loss accumulator's
//! pipeline, [`loss_wait`]). For dense layers
//! `E = D + (M - 1) * II + latency + 1 + W`; with image layers
//! (whose input goes through `rtl/fptgen_serialize.v`) the edges from
//! sample 0 to the last output come from the handshake model
//! ([`crate::timing::paced`]). An iteration is the sum
//! over its groups. Co-simulation measures every iteration against it.

use fptgen_sim::model::{Distribution, Fitness, LossQuantization, Model, Rule};
use fptgen_sim::train::hardware::block_seed;
use serde::Serialize;

use crate::diff_plan::{self, DiffPlan, EvalChoice};
use crate::plan::{clog2, NetworkPlan};
use crate::timing::{self, blocks};

/// `rtl/fptgen_loss_acc.v`'s `LAT` for a network of `outputs` outputs:
/// the registered absolute errors, then a register after every second
/// level of the adder tree over them and after its root.
pub fn loss_wait(outputs: usize) -> u64 {
    let levels = if outputs > 1 { clog2(outputs as u64) } else { 0 };
    1 + levels.div_ceil(2) as u64
}

/// The widest block-RAM port (RAMB36E2 in 512 x 72 mode).
const BRAM_WORD: usize = 72;

/// The most bits of committed values ([`TrainHwPlan::committed_style`]) kept
/// in LUTRAM: 16 Kbit, at most 512 LUTs (two per 64 bits).
pub const COMMITTED_LUTRAM_MAX_BITS: u64 = 16_384;

/// One trainable tensor, as the trainer walks it: the layout of its memory
/// ([`crate::layers::TensorMem`]) and its clamp bounds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TrainTensor {
    /// Position in the training order (the cursor's tensor index).
    pub index: usize,
    /// Layer name.
    pub layer: String,
    /// The tensor's key (`w`, `b`, ...): the prefix of the layer's trainer port.
    pub key: &'static str,
    /// What it is (`weights`, `biases`, ...).
    pub role: &'static str,
    /// Parameters in the tensor.
    pub count: u64,
    /// Rows of the tensor's matrix.
    pub rows: usize,
    /// Parameters per row.
    pub cols: usize,
    /// Rows per memory word.
    pub pe: usize,
    /// Parameters of a row per memory word.
    pub simd: usize,
    /// The hierarchical name of its `fptgen_param_mem` in the layer's module.
    pub instance: String,
    /// The memory's banks (1: one memory; [`crate::plan::MemPlan::banks`]).
    pub banks: usize,
    /// Memory address and column-select widths.
    pub addr_w: usize,
    /// Column-select width.
    pub col_w: usize,
    /// Bits of one parameter.
    pub width: u32,
    /// Two's complement format.
    pub signed: bool,
    /// Clamp bounds (raw codes): the tensor's `range` (by default
    /// `lossless_min_raw` and `max_raw` of its format).
    pub lo: i128,
    /// Upper clamp bound.
    pub hi: i128,
}

impl TrainTensor {
    /// `<layer>_<key>`: the prefix of its trainer port at the top level.
    pub fn port(&self) -> String {
        format!("{}_{}", self.layer, self.key)
    }
}

/// The ES trainer's hardware and schedule.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TrainHwPlan {
    /// T, trainable parameters.
    pub t: u64,
    /// P, blocks built: the model's `blocks`, at most T.
    pub p: usize,
    /// N, population.
    pub n: usize,
    /// M, buffered samples.
    pub m: usize,
    /// G = ceil(T / P).
    pub g: u64,
    /// Parameters of the last group.
    pub last_group: usize,
    /// 0 antithetic, 1 baseline, 2 plain (`fptgen_es_ctrl`'s FITNESS).
    pub fitness: u32,
    /// 1: exact loss quantization (a multiplier); 0: po2.
    pub exact: u32,
    /// 1: uniform noise; 0: rademacher.
    pub uniform: u32,
    /// LFSR width.
    pub lfsr_width: u32,
    /// Fresh bits per noise value.
    pub noise_bits: u32,
    /// Width of a block's noise output (value plus a sign bit).
    pub noise_w: u32,
    /// sigma.
    pub sigma: u32,
    /// lr_shift.
    pub lr_shift: i32,
    /// The training seed.
    pub seed: u64,
    /// Each block's LFSR seed (`block_seed`).
    pub block_seeds: Vec<u64>,
    /// Trainable tensors in training order.
    pub tensors: Vec<TrainTensor>,
    /// Width of the signed parameter codes the blocks hold.
    pub param_w: u32,
    /// Widths of the controller's indices.
    pub group_w: usize,
    /// Member index width (0..N).
    pub member_w: usize,
    /// Block index width (0..P-1).
    pub block_w: usize,
    /// Requests served per boundary at most (M).
    pub serve_max: usize,
    /// Words per buffered input vector (1, or up to II - 2 for wide
    /// vectors, so they fill block RAM in depth).
    pub words: usize,
    /// Bits per word (and of the `ld_x` port).
    pub word_w: usize,
    /// Cycles from starting the buffer to the pipeline taking sample 0:
    /// 1, or words + 2.
    pub first_sample: u64,
    /// Cycles the controller waits after the last sample's output for its
    /// error to reach the loss (`rtl/fptgen_loss_acc.v`'s `LAT`, its
    /// `LOSS_WAIT`): 1 + ceil(clog2(outputs) / 2), 1 for one output.
    pub loss_wait: u64,
    /// E: cycles of one evaluation of the buffer, the loss wait included.
    pub eval_cycles: u64,
    /// Cycles of a whole group (P parameters) with full evaluation, without
    /// pauses and requests ([`TrainHwPlan::group_cycles`]).
    pub cycles_per_group: u64,
    /// Cycles of one iteration (the sum over its groups); with evaluation
    /// by difference, when every member changes every sample (the most).
    pub cycles_per_iteration: u64,
    /// How members are evaluated (`full` or `difference`) and why.
    pub evaluation: EvalChoice,
    /// The difference unit, when members are evaluated by difference.
    pub diff: Option<DiffPlan>,
    /// With evaluation by difference: an iteration's cycles when every
    /// member changes half the samples (`auto` compares this with full
    /// evaluation).
    pub cycles_per_iteration_half: Option<u64>,
    /// With evaluation by difference: the fill after `ctl_start`, before
    /// the first iteration's first group (in its cycles).
    pub fill_cycles: u64,
    /// `E(c)`, the evaluation of `c` samples (EVAL and LOSS_WAIT; `W` for
    /// none), for c = 0..=M (with evaluation by difference).
    #[serde(skip)]
    pub eval_of: Vec<u64>,
}

impl TrainHwPlan {
    /// Width of a buffered sample's index (0..M-1), `fptgen_sample_buf`'s
    /// x_sel.
    pub fn sample_w(&self) -> usize {
        crate::plan::clog2(self.m as u64)
    }

    /// Width of a sample count (0..M), `fptgen_sample_buf`'s count.
    pub fn count_w(&self) -> usize {
        crate::plan::clog2(self.m as u64 + 1)
    }

    /// The host port's widths ([`host_widths`]).
    pub fn host(&self) -> HostWidths {
        host_widths(&self.tensors)
    }

    /// Width of the update's step `R(G / 2^lr_shift)` (`rtl/fptgen_es_step.v`):
    /// 33 bits, plus `-lr_shift` for a negative shift.
    pub fn step_w(&self) -> usize {
        33 + self.lr_shift.min(0).unsigned_abs() as usize
    }

    /// Cycles of a member evaluated by difference that changes `c`
    /// samples, in a group whose weights touch `rows` rows (at least 1):
    /// BOUNDARY, the PERTURB pass (P + 1), FIN (M * rows + 9: FIN_GAP,
    /// FIN_START, the unit's M * rows + 6 and the cycle that sees it idle),
    /// EVAL_START, `E(c)`, SIGNAL, PO2 (`rtl/fptgen_es_ctrl.v`).
    pub fn diff_member_cycles(&self, rows: u64, c: usize) -> u64 {
        self.p as u64 + self.m as u64 * rows + self.eval_of[c] + 14
    }

    /// Cycles of group `g` (of `tg` parameters) evaluated by difference,
    /// its members changing `changed[k]` samples: GROUP, READ, READ_WAIT,
    /// the committed evaluation (E + 2), the members, the last BOUNDARY,
    /// ACCUM, UPDATE and its FIN, NEXT_GROUP.
    pub fn diff_group_cycles(&self, diff: &DiffPlan, g: usize, tg: u64, changed: &[usize]) -> u64 {
        let rows = diff.rows_of(g);
        let members: u64 = changed.iter().map(|&c| self.diff_member_cycles(rows, c)).sum();
        members + 2 * self.p as u64 + tg + 5 + self.eval_cycles + 2 + self.m as u64 * rows + 9
    }

    /// An iteration's cycles by difference, every member changing `c`
    /// samples.
    pub fn diff_iteration_cycles(&self, diff: &DiffPlan, c: usize) -> u64 {
        (0..self.g as usize).map(|g| self.diff_group_cycles(diff, g, self.tg(g), &vec![c; self.n])).sum()
    }

    /// The fill after `ctl_start` (evaluation by difference): per group,
    /// GROUP, READ, READ_WAIT, FILL (tg), FIN, NEXT_GROUP.
    pub fn diff_fill_cycles(&self, diff: &DiffPlan) -> u64 {
        (0..self.g as usize).map(|g| 2 * self.tg(g) + self.m as u64 * diff.rows_of(g) + 12).sum()
    }

    /// The parameters of group `g`.
    pub fn tg(&self, g: usize) -> u64 {
        if g as u64 + 1 == self.g { self.last_group as u64 } else { self.p as u64 }
    }

    /// Cycles of a group of `tg` parameters.
    pub fn group_cycles(&self, tg: u64) -> u64 {
        let n = self.n as u64;
        let p = self.p as u64;
        let base = if self.fitness == 1 { self.eval_cycles + 2 } else { 0 };
        // Every member's accumulation but the last rides on the next
        // member's perturbation pass; the last member's is a pass of P.
        n * (p + self.eval_cycles + 5) + 2 * p + tg + 5 + base
    }

    /// The index width of `mon_index` (member or block).
    pub fn index_w(&self) -> usize {
        self.member_w.max(self.block_w)
    }

    /// `v` as a `param_w`-bit two's complement Verilog literal.
    pub fn code(&self, v: i128) -> String {
        let w = self.param_w;
        let mask = if w >= 128 { u128::MAX } else { (1u128 << w) - 1 };
        format!("{w}'h{:x}", (v as u128) & mask)
    }

    /// Every block's LFSR seed as one Verilog literal, block 0 in the least
    /// significant bits.
    pub fn seeds_literal(&self) -> String {
        concat_lsb_first(self.block_seeds.iter().map(|s| format!("{}'h{:x}", self.lfsr_width, s)))
    }

    /// `fptgen_param_cursor`'s per-tensor parameters (all but K, P and PW)
    /// as (name, Verilog literal): tensor 0 in the least significant bits.
    pub fn cursor_params(&self) -> Vec<(&'static str, String)> {
        let packed = |f: &dyn Fn(&TrainTensor) -> String| concat_lsb_first(self.tensors.iter().map(f));
        vec![
            ("COMMITTED_STYLE", format!("\"{}\"", self.committed_style())),
            ("ROWS", packed(&|x| format!("32'd{}", x.rows))),
            ("COLS", packed(&|x| format!("32'd{}", x.cols))),
            ("PE", packed(&|x| format!("32'd{}", x.pe))),
            ("SIMD", packed(&|x| format!("32'd{}", x.simd))),
            ("WIDTH", packed(&|x| format!("32'd{}", x.width))),
            ("SIGNED", packed(&|x| format!("1'b{}", u8::from(x.signed)))),
            ("LO", packed(&|x| self.code(x.lo))),
            ("HI", packed(&|x| self.code(x.hi))),
        ]
    }

    /// Vivado `ram_style` of the cursor's P committed values: LUTRAM up to
    /// [`COMMITTED_LUTRAM_MAX_BITS`], block RAM beyond. They are read on
    /// the trainer's worst path (into the perturbation and a memory's
    /// trainer port): a LUTRAM read ends in the cursor's prefetch register,
    /// while a block RAM's output (0.83 ns clock-to-out without its output
    /// register) starts that path, which made model_ii56 (P = 1000, 4,000
    /// bits in one RAMB18) miss 5 ns at 5.12 ns (docs/results/kintex.md).
    pub fn committed_style(&self) -> &'static str {
        if self.p as u64 * u64::from(self.param_w) <= COMMITTED_LUTRAM_MAX_BITS { "distributed" } else { "block" }
    }

    /// The concatenation of every tensor's top-level signal
    /// `<layer>_<key>_<suffix>`, tensor 0 in the least significant bits (a
    /// packed port of `fptgen_param_cursor`).
    pub fn ports(&self, suffix: &str) -> String {
        concat_lsb_first(self.tensors.iter().map(|x| format!("{}_{suffix}", x.port())))
    }
}

/// The Verilog concatenation of `items`, the first in the least significant
/// bits.
fn concat_lsb_first(items: impl DoubleEndedIterator<Item = String>) -> String {
    let parts: Vec<String> = items.rev().collect();
    format!("{{{}}}", parts.join(", "))
}

/// Every trainable tensor of the plan's layers, in training order.
pub fn train_tensors(net: &NetworkPlan) -> Vec<TrainTensor> {
    let mut tensors = Vec::new();
    for lp in &net.layers {
        for mem in lp.trainable() {
            let (lo, hi) = mem.range;
            tensors.push(TrainTensor {
                index: tensors.len(),
                layer: lp.name.clone(),
                key: mem.key,
                role: mem.role,
                count: mem.count() as u64,
                rows: mem.rows,
                cols: mem.cols,
                pe: mem.pe,
                simd: mem.simd,
                instance: mem.instance.clone(),
                banks: mem.mem.banks(),
                addr_w: mem.addr_w(),
                col_w: mem.col_w(),
                width: mem.format.width,
                signed: mem.format.signed != 0,
                lo,
                hi,
            });
        }
    }
    tensors
}

/// Widths of a trainer top's host port (`host_*`: the AXI wrapper's access
/// to the trainable memories): tensor select, word address, column and data,
/// each the widest of any tensor (at least 1 bit).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct HostWidths {
    /// Bits of `host_sel` (a tensor's index in training order).
    pub sel_w: usize,
    /// Bits of `host_addr`.
    pub addr_w: usize,
    /// Bits of `host_col`.
    pub col_w: usize,
    /// Bits of `host_wdata` and `host_rdata`.
    pub data_w: usize,
}

/// The host port's widths for `tensors`.
pub fn host_widths(tensors: &[TrainTensor]) -> HostWidths {
    HostWidths {
        sel_w: clog2(tensors.len().max(2) as u64).max(1) as usize,
        addr_w: tensors.iter().map(|t| t.addr_w).max().unwrap_or(1).max(1),
        col_w: tensors.iter().map(|t| t.col_w).max().unwrap_or(1).max(1),
        data_w: tensors.iter().map(|t| t.width as usize).max().unwrap_or(1).max(1),
    }
}

/// How the sample buffer stores an input vector: `(words, word_w,
/// first_sample)`. A wide input vector is stored as words of at most 72
/// bits (a block RAM's widest port), as many as the interval between
/// samples allows; `first_sample` is the cycles from starting the buffer
/// to its first sample being valid (1, or words + 2).
///
/// A word holds whole input values (the same number in each, the last
/// word padded), so that the load stream never splits a value and the
/// difference unit can take a word's values as they are.
pub fn buffer_layout(net: &NetworkPlan) -> (usize, usize, u64) {
    let x_w = net.in_bits();
    let most = if net.ii >= 4 && x_w > BRAM_WORD { x_w.div_ceil(BRAM_WORD).min(net.ii as usize - 2) } else { 1 };
    if most == 1 {
        return (1, x_w, 1);
    }
    let values = net.inputs.max(1);
    let per_word = values.div_ceil(most);
    let words = values.div_ceil(per_word);
    let word_w = per_word * net.x.width as usize;
    let first_sample = if words == 1 { 1 } else { words as u64 + 2 };
    (words, word_w, first_sample)
}

/// Cycles from the pipeline's input being offered `samples` whole vectors,
/// one every II, to its last output being valid, as the trainer feeds it:
/// through the serializer when the input is an image; for a chain of dense
/// layers this is `(samples - 1) * II + latency` (layers::dense::tests).
pub fn evaluation_cycles(net: &NetworkPlan, samples: usize) -> u64 {
    let serializer = (net.in_port_beats != net.in_beats).then(|| blocks::Serialize::new(net.in_beats).into());
    timing::paced_graph(&net.wiring.graph(&net.layers, serializer), samples, net.ii).expect("every stream block delivers its outputs")
}

/// The ES trainer for `model` (None without a `training:` section, or with
/// another rule).
pub fn train_plan(model: &Model, net: &NetworkPlan) -> Option<TrainHwPlan> {
    let tr = model.training.as_ref()?;
    if tr.rule != Rule::Es {
        return None;
    }
    let tensors = train_tensors(net);
    let t: u64 = tensors.iter().map(|x| x.count).sum();
    // Blocks beyond T would idle in every group: build min(P, T) of them
    // (the schedule and the results are the same).
    let p = tr.blocks.min(t as usize);
    let g = t.div_ceil(p as u64);
    let last_group = (t - (g - 1) * p as u64) as usize;
    let uniform = tr.noise.distribution == Distribution::Uniform;
    let noise_bits = if uniform { tr.noise.bits } else { 1 };
    let lfsr_width = tr.noise.width.bits();
    let (words, word_w, first_sample) = buffer_layout(net);
    let loss_wait = loss_wait(net.outputs);
    let eval_cycles = first_sample + evaluation_cycles(net, tr.buffer) + 1 + loss_wait;
    let mut plan = TrainHwPlan {
        t,
        p,
        n: tr.population,
        m: tr.buffer,
        g,
        last_group,
        fitness: match tr.fitness {
            Fitness::Antithetic => 0,
            Fitness::Baseline => 1,
            Fitness::Plain => 2,
            // No ranking unit yet: design::supported refuses it, and
            // fptgen_es_ctrl stops at elaboration on FITNESS > 2.
            Fitness::Ranks => 3,
        },
        exact: u32::from(tr.loss_quantization == LossQuantization::Exact),
        uniform: u32::from(uniform),
        lfsr_width,
        noise_bits,
        // uniform: 2u + 1 needs b + 1 bits; rademacher: +-1 needs 2.
        noise_w: if uniform { noise_bits + 1 } else { 2 } + 1,
        sigma: tr.perturb_shift,
        lr_shift: tr.lr_shift,
        seed: tr.seed,
        block_seeds: (0..p).map(|j| block_seed(tr.seed, j, tr.noise.width)).collect(),
        param_w: tensors.iter().map(|x| x.width + u32::from(!x.signed)).max().unwrap_or(1),
        group_w: clog2(g),
        member_w: clog2(tr.population as u64 + 1),
        block_w: clog2(p as u64),
        serve_max: tr.buffer,
        words,
        word_w,
        first_sample,
        loss_wait,
        eval_cycles,
        cycles_per_group: 0,
        cycles_per_iteration: 0,
        evaluation: EvalChoice { mode: "full", reason: String::new() },
        diff: None,
        cycles_per_iteration_half: None,
        fill_cycles: 0,
        eval_of: Vec::new(),
        tensors,
    };
    plan.cycles_per_group = plan.group_cycles(p as u64);
    plan.cycles_per_iteration = (g - 1) * plan.cycles_per_group + plan.group_cycles(last_group as u64);
    if fptgen_sim::train::hardware::eligibility(model).is_ok() {
        // E(c) for every c (the pipeline paced as for the whole buffer).
        plan.eval_of = (0..=plan.m).map(|c| if c == 0 { loss_wait } else { first_sample + evaluation_cycles(net, c) + 1 + loss_wait }).collect();
    }
    let vpw = if words == 1 { net.inputs } else { word_w / net.x.width as usize };
    let (choice, diff) = diff_plan::choose(model, p, plan.m, vpw, &|d| match d {
        None => plan.cycles_per_iteration,
        Some(d) => plan.diff_iteration_cycles(d, plan.m / 2),
    });
    if let Some(d) = &diff {
        plan.cycles_per_iteration_half = Some(plan.diff_iteration_cycles(d, plan.m / 2));
        plan.cycles_per_iteration = plan.diff_iteration_cycles(d, plan.m);
        plan.fill_cycles = plan.diff_fill_cycles(d);
    }
    plan.evaluation = choice;
    plan.diff = diff;
    Some(plan)
}
