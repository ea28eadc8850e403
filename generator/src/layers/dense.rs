//! The `dense` kind's hardware: `rtl/fptgen_dense.v`, a folded
//! matrix-vector unit in the spirit of FINN's MVAU, wrapped per layer by
//! `templates/layer_dense.v`. (The simulator half is
//! `fptgen_sim::layers::dense`.)
//!
//! `pe` output neurons in parallel and `simd` inputs per cycle, so one input
//! vector takes `NF * SF` cycles with `NF = ceil(outputs / pe)` neuron folds
//! and `SF = ceil(inputs / simd)` synapse folds. The timing model is the one
//! `rtl/fptgen_dense.v` implements, and co-simulation measures it:
//!
//! * a layer accepts a vector on a clock edge, issues one (neuron fold,
//!   synapse fold) pair per cycle, and can accept the next vector on the edge
//!   that issues the last pair: its cycles per vector (initiation interval)
//!   are `NF * SF`;
//! * the parameter memories are read synchronously (one cycle) and the
//!   accumulation takes one more, so a layer's output is valid `NF * SF + 1`
//!   edges after the edge that accepted its input (its latency), with the
//!   in-order accumulation chain;
//! * where the simulator proves the order of the additions free
//!   ([`fptgen_sim::layers::dense::exact_accumulation`]: exact products, and
//!   an accumulator that wraps or cannot overflow), the SIMD products are
//!   summed by a pipelined adder tree instead (`TREE = 1`), which keeps every
//!   register-to-register path two adders deep; it adds `T + 2` edges of
//!   latency, `T = ceil(clog2(simd) / 2)` registered tree stages (0 for
//!   `simd = 1`) plus the product and accumulator registers;
//! * with `multipliers: packed` the products of neurons `2q` and `2q + 1`
//!   come from one multiplier, registered, then separated into the product
//!   registers: one more edge of latency;
//! * on a Lattice ECP5 part the memories' read data are registered once
//!   more before any arithmetic ([`ecp5_only`]): one more edge.
//!
//! Its memories: the weights `[outputs, inputs]` as that matrix folded
//! `pe x simd` (`NF * SF` words of `pe * simd` columns), the biases
//! `[outputs]` as an `outputs x 1` matrix folded `pe x 1` (`NF` words of
//! `pe` columns).

use askama::Template;
use fptgen_sim::fixed::Format;
use fptgen_sim::layers::dense::{exact_accumulation, Dense, Multipliers, B, W};
use fptgen_sim::layers::{Activation, TensorSpec};
use fptgen_sim::model::{Layer, Model};
use serde::Serialize;

use super::{KindPlan, LayerHw, TensorMem};
use crate::plan::{HwFormat, LayerPlan};
use crate::render::GenInfo;
use crate::rtl::{self, RtlFile};
use crate::timing::{Block, OnePort};

/// The dense layer's library module.
pub(super) const FPTGEN_DENSE: RtlFile = ("fptgen_dense.v", include_str!("../../../rtl/fptgen_dense.v"));

/// The library files a dense layer instantiates.
pub(super) const LIBRARY: &[RtlFile] = &[rtl::CAST, rtl::PARAM_MEM, FPTGEN_DENSE];

/// The dense-specific part of a layer's plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DensePlan {
    /// Output neurons in parallel.
    pub pe: usize,
    /// Inputs per cycle.
    pub simd: usize,
    /// Neuron folds `ceil(outputs / pe)`.
    pub nf: usize,
    /// Synapse folds `ceil(inputs / simd)`.
    pub sf: usize,
    /// 1 for relu, 0 for linear.
    pub relu: u32,
    /// Weight format.
    pub w: HwFormat,
    /// Bias format.
    pub b: HwFormat,
    /// Accumulator format.
    pub acc: HwFormat,
    /// 1: the products are summed by a pipelined adder tree (the order of
    /// the additions is proven free); 0: the in-order chain.
    pub tree: u32,
    /// 1: the products of neurons `2q` and `2q + 1` share one multiplier
    /// (`multipliers: packed`; `rtl/fptgen_dense.v`'s `PACK`), one more
    /// stage; 0: a multiplier per product.
    pub pack: u32,
    /// 1: the parameter memories' read data are registered once more
    /// before any arithmetic (`rtl/fptgen_dense.v`'s `MEM_REG`), one more
    /// stage: set for the parts whose block RAM, read without its output
    /// register, starts the slowest path ([`ecp5_only`]); 0: the
    /// arithmetic starts at the memories' read registers.
    pub mem_reg: u32,
    /// 1: the input vector is rotated by a synapse fold per issued fold
    /// instead of a fold being selected from it (`rtl/fptgen_dense.v`'s
    /// `X_ROTATE`; same cycles), set where [`ecp5_only`] says; 0: selected.
    pub x_rotate: u32,
}

/// `MEM_REG` and `X_ROTATE` for a design on `part`: 1 for a Lattice ECP5,
/// 0 for the Xilinx parts. On ECP5 routing showed (docs/results/ecp5.md) a
/// DP16KD block RAM read without its output register (4.26 ns of
/// clock-to-output) starting jet_tagging's worst path at 65 MHz, and a
/// 784-way multiplexer of the input vector starting brevitas_mnist's. The
/// Kintex estimate takes 0.83 ns for the block RAM read; turning the two on
/// for Kintex too moves every Kintex synthesis baseline (mnist_ii56's alone
/// is an hour of yosys) and is left for its own change.
fn ecp5_only(part: &str) -> u32 {
    u32::from(matches!(crate::part::ecp5(part), Ok(Some(_))))
}

/// The plan of `layer` of `model`, a dense layer `d` fed `input_shape`.
pub(super) fn plan(model: &Model, layer: &Layer, input_shape: &[usize], d: &Dense) -> LayerPlan {
    let (dp, memories) = mvau(model, &layer.name, &layer.kind().tensors(), d, d.outputs, layer.input_format);
    super::layer_plan(model, layer, input_shape, memories, KindPlan::Dense(dp))
}

/// The folded matrix-vector unit `d` (a dense layer, or the engine of a
/// convolution) and its two memories: the weights as a `rows x d.inputs`
/// matrix folded `pe x simd`, the biases as a `rows x 1` matrix folded
/// `pe x 1`, in `fptgen_dense` instance `u_dense` of the layer's module;
/// an adder tree where `d`'s accumulation of inputs in `input_format` is
/// order-free; the memories' read registered once more where `model`'s
/// part needs it ([`ecp5_only`]).
pub(super) fn mvau(model: &Model, layer: &str, specs: &[TensorSpec], d: &Dense, rows: usize, input_format: Format) -> (DensePlan, Vec<TensorMem>) {
    let memories = vec![
        TensorMem::new(layer, W, &specs[W], [rows, d.inputs], [d.pe, d.simd], "u_dense.u_wmem").banked(),
        TensorMem::new(layer, B, &specs[B], [rows, 1], [d.pe, 1], "u_dense.u_bmem").banked(),
    ];
    let p = &d.precision;
    let tree = exact_accumulation(d, input_format).is_some();
    let mut plan = DensePlan::new([d.outputs, d.inputs], [d.pe, d.simd], d.activation == Activation::Relu, [p.weight, p.bias, p.accum], tree);
    // The model's loader refuses `packed` where it does not apply
    // (fptgen_sim::layers::dense::packing_refusal), so here it has a tree.
    plan.pack = u32::from(d.multipliers == Multipliers::Packed && tree);
    plan.for_part(&model.part);
    (plan, memories)
}

impl DensePlan {
    /// The unit of a `rows x cols` matrix folded `pe x simd`, with a relu
    /// or not, its weight, bias and accumulator formats, and an adder tree
    /// (`tree`: the caller has proven the accumulation order-free) or the
    /// in-order chain.
    pub(super) fn new([rows, cols]: [usize; 2], [pe, simd]: [usize; 2], relu: bool, [w, b, acc]: [Format; 3], tree: bool) -> DensePlan {
        DensePlan {
            pe,
            simd,
            nf: rows.div_ceil(pe),
            sf: cols.div_ceil(simd),
            relu: u32::from(relu),
            w: w.into(),
            b: b.into(),
            acc: acc.into(),
            tree: u32::from(tree),
            pack: 0,
            mem_reg: 0,
            x_rotate: 0,
        }
    }

    /// Sets the options `part` asks for ([`ecp5_only`]: `mem_reg` and
    /// `x_rotate`).
    pub(super) fn for_part(&mut self, part: &str) {
        self.mem_reg = ecp5_only(part);
        self.x_rotate = ecp5_only(part);
    }

    /// Registered stages of the adder tree (`rtl/fptgen_dense.v`'s `T`): a
    /// register after every second of its `clog2(simd)` levels and after
    /// the root; 0 without a tree.
    pub fn tree_stages(&self) -> usize {
        let levels = if self.simd > 1 { crate::plan::clog2(self.simd as u64) } else { 0 };
        if self.tree == 1 { levels.div_ceil(2) } else { 0 }
    }

    /// Pipeline stages between the issue stage and the output register
    /// ([`DenseUnit`]): s1 alone for the chain; s1, the packed products
    /// (with `pack`), the products, the tree's stages and the accumulators
    /// for the tree; one more before s1 with `mem_reg`.
    pub fn depth(&self) -> usize {
        let arithmetic = if self.tree == 1 { 3 + self.pack as usize + self.tree_stages() } else { 1 };
        arithmetic + self.mem_reg as usize
    }

    /// The accumulation as `report.md` names it.
    pub fn accumulation(&self) -> String {
        let how = if self.tree == 1 {
            let packed = if self.pack == 1 { ", products packed two to a multiplier" } else { "" };
            format!("adder tree ({} stages){packed}", self.depth() - 1 - self.mem_reg as usize)
        } else {
            "in-order chain".to_string()
        };
        if self.mem_reg == 1 { format!("{how}, parameters registered after the read") } else { how }
    }

    /// The unit's blocks in the cycle model.
    pub(super) fn block(&self) -> Block {
        DenseUnit::new((self.nf * self.sf) as u64, self.depth()).into()
    }
}

/// `rtl/fptgen_dense.v`'s handshake ([`crate::timing`]): a vector occupies
/// the issue stage for `folds` (`NF * SF`) cycles, then `depth` pipeline
/// stages (1 for the in-order chain, more for the adder tree), then the
/// output register. The state: `busy_reg`, the fold counter (`nf_reg`,
/// `sf_reg` as one index), each pipeline stage's valid and done flags
/// (`s1_valid_reg`, `s1_done_reg`, then the tree's `c_valid_reg`,
/// `c_done_reg`; the last stage is the RTL's `fin_*`), `out_valid_reg`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DenseUnit {
    folds: u64,
    busy: bool,
    k: u64,
    /// (valid, done) of each stage after the issue stage, s1 first.
    stages: Vec<(bool, bool)>,
    out_valid: bool,
}

impl DenseUnit {
    /// The unit with `folds = NF * SF` folds and `depth` pipeline stages
    /// between the issue stage and the output register (s1 and, with an
    /// adder tree, its stages: [`DensePlan::depth`]), after reset.
    pub fn new(folds: u64, depth: usize) -> DenseUnit {
        assert!(folds >= 1 && depth >= 1);
        DenseUnit { folds, busy: false, k: 0, stages: vec![(false, false); depth], out_valid: false }
    }

    /// The final stage's valid and done flags.
    fn fin(&self) -> (bool, bool) {
        *self.stages.last().expect("at least one stage")
    }

    fn stall(&self, out_ready: bool) -> bool {
        let (valid, done) = self.fin();
        valid && done && self.out_valid && !out_ready
    }

    fn issue_last(&self) -> bool {
        self.busy && self.k == self.folds - 1
    }
}

impl OnePort for DenseUnit {
    fn in_ready(&self, out_ready: bool) -> bool {
        !self.stall(out_ready) && (!self.busy || self.issue_last())
    }

    fn out_valid(&self) -> bool {
        self.out_valid
    }

    fn clock(&mut self, in_valid: bool, out_ready: bool) {
        if self.stall(out_ready) {
            return; // out_ready is low: out_valid stays high
        }
        let accept = in_valid && self.in_ready(out_ready);
        let issue_last = self.issue_last();
        let (fin_valid, fin_done) = self.fin();
        self.out_valid = if fin_valid && fin_done { true } else { self.out_valid && !out_ready };
        self.stages.pop();
        self.stages.insert(0, (self.busy, self.k == self.folds - 1));
        if self.busy {
            self.k = (self.k + 1) % self.folds;
        }
        self.busy = accept || (self.busy && !issue_last);
    }

    fn folds(&self) -> u64 {
        self.folds
    }
}

#[derive(Template)]
#[template(path = "layer_dense.v")]
struct LayerDenseTemplate<'a> {
    gen: &'a GenInfo,
    l: &'a LayerPlan,
    d: &'a DensePlan,
    /// The weight memory.
    wm: &'a TensorMem,
    /// The bias memory.
    bm: &'a TensorMem,
    /// Inputs and outputs of the matrix-vector unit.
    mv_in: usize,
    mv_out: usize,
    /// Its input stream: the module's own.
    mv_src: &'static str,
    /// Its input and output formats.
    mv_x: &'a HwFormat,
    mv_y: &'a HwFormat,
    /// Its output stream: the module's own.
    mv_dst: &'static str,
}

impl LayerHw for DensePlan {
    fn folding(&self) -> String {
        format!("PE {} x SIMD {}, {} x {} folds, {}", self.pe, self.simd, self.nf, self.sf, self.accumulation())
    }

    fn library(&self) -> &'static [RtlFile] {
        LIBRARY
    }

    fn module(&self, l: &LayerPlan, gen: &GenInfo) -> Result<String, askama::Error> {
        LayerDenseTemplate {
            gen,
            l,
            d: self,
            wm: &l.memories[W],
            bm: &l.memories[B],
            mv_in: l.inputs,
            mv_out: l.outputs,
            mv_src: "in",
            mv_x: &l.x,
            mv_y: &l.y,
            mv_dst: "out",
        }
        .render()
    }

    fn blocks(&self, _l: &LayerPlan) -> Vec<Block> {
        vec![self.block()]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::timing::blocks::Skid;
    use crate::timing::{measure, paced, Measured};

    /// Dense layers `(folds, depth)` as the top level chains them, a skid
    /// buffer between two layers.
    fn dense_chain(layers: &[(u64, usize)]) -> Vec<Block> {
        let mut blocks = Vec::new();
        for (i, &(f, depth)) in layers.iter().enumerate() {
            if i > 0 {
                blocks.push(Skid::new().into());
            }
            blocks.push(DenseUnit::new(f, depth).into());
        }
        blocks
    }

    /// A chain of dense layers has the closed form of `layers::dense`:
    /// II = the largest fold count, latency = sum(folds + depth) + 2 *
    /// (layers - 1) (a hand-over and a skid buffer between two layers),
    /// depth 1 for the in-order chain and more for an adder tree.
    #[test]
    fn dense_chains_have_the_closed_form() {
        let chains: &[&[(u64, usize)]] = &[
            &[(1, 1)],
            &[(7, 1)],
            &[(1, 1), (1, 1)],
            &[(3, 1), (5, 1), (2, 1)],
            &[(4, 1), (4, 1)],
            &[(10, 1), (1, 1), (6, 1), (6, 1), (1, 1)],
            &[(1, 3)],
            &[(1, 5), (1, 3)],
            &[(3, 4), (5, 1), (2, 6)],
            &[(10, 1), (1, 5), (6, 3), (6, 1), (1, 4)],
        ];
        for layers in chains {
            let m = measure(&dense_chain(layers), 1, 1, 2 * layers.len() + 8).unwrap();
            let ii = layers.iter().map(|l| l.0).max().unwrap();
            let latency: u64 = layers.iter().map(|&(f, d)| f + d as u64).sum::<u64>() + 2 * (layers.len() as u64 - 1);
            assert_eq!(m, Measured { latency, ii: Some(ii) }, "layers {layers:?}");
        }
    }

    /// The trainer's paced evaluation of a dense chain takes
    /// `(M - 1) * II + latency` edges (`train_plan`'s closed form).
    #[test]
    fn paced_dense_chains_have_the_closed_form() {
        for layers in [&[(3u64, 1usize), (5, 1), (2, 1)][..], &[(1, 1)], &[(4, 1), (4, 1)], &[(3, 4), (5, 1), (2, 6)], &[(1, 3)]] {
            let blocks = dense_chain(layers);
            let ii = layers.iter().map(|l| l.0).max().unwrap();
            let latency: u64 = layers.iter().map(|&(f, d)| f + d as u64).sum::<u64>() + 2 * (layers.len() as u64 - 1);
            for m in [1, 2, 7] {
                assert_eq!(paced(&blocks, m, ii), Some((m as u64 - 1) * ii + latency), "layers {layers:?} M {m}");
            }
        }
    }
}
