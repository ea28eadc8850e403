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
//!   registers: one more edge of latency.
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
use crate::timing::Block;

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
}

/// The plan of `layer` of `model`, a dense layer `d` fed `input_shape`.
pub(super) fn plan(model: &Model, layer: &Layer, input_shape: &[usize], d: &Dense) -> LayerPlan {
    let (dp, memories) = mvau(&layer.name, &layer.kind().tensors(), d, d.outputs, layer.input_format);
    super::layer_plan(model, layer, input_shape, memories, KindPlan::Dense(dp))
}

/// The folded matrix-vector unit `d` (a dense layer, or the engine of a
/// convolution) and its two memories: the weights as a `rows x d.inputs`
/// matrix folded `pe x simd`, the biases as a `rows x 1` matrix folded
/// `pe x 1`, in `fptgen_dense` instance `u_dense` of the layer's module;
/// an adder tree where `d`'s accumulation of inputs in `input_format` is
/// order-free.
pub(super) fn mvau(layer: &str, specs: &[TensorSpec], d: &Dense, rows: usize, input_format: Format) -> (DensePlan, Vec<TensorMem>) {
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
        }
    }

    /// Registered stages of the adder tree (`rtl/fptgen_dense.v`'s `T`): a
    /// register after every second of its `clog2(simd)` levels and after
    /// the root; 0 without a tree.
    pub fn tree_stages(&self) -> usize {
        let levels = if self.simd > 1 { crate::plan::clog2(self.simd as u64) } else { 0 };
        if self.tree == 1 { levels.div_ceil(2) } else { 0 }
    }

    /// Pipeline stages between the issue stage and the output register
    /// ([`Block::dense`]): s1 alone for the chain; s1, the packed products
    /// (with `pack`), the products, the tree's stages and the accumulators
    /// for the tree.
    pub fn depth(&self) -> usize {
        if self.tree == 1 { 3 + self.pack as usize + self.tree_stages() } else { 1 }
    }

    /// The accumulation as `report.md` names it.
    pub fn accumulation(&self) -> String {
        if self.tree == 1 {
            let packed = if self.pack == 1 { ", products packed two to a multiplier" } else { "" };
            format!("adder tree ({} stages){packed}", self.depth() - 1)
        } else {
            "in-order chain".to_string()
        }
    }

    /// The unit's blocks in the cycle model.
    pub(super) fn block(&self) -> Block {
        Block::dense((self.nf * self.sf) as u64, self.depth())
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
