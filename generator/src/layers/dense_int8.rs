//! The `dense_int8` kind's hardware (issue 15): TFLite's reference int8
//! FULLY_CONNECTED as three stages of one module,
//! `templates/layer_dense_int8.v`. (The simulator half is
//! `fptgen_sim::layers::dense_int8`.)
//!
//! 1. The input offset, wires: every int8 code `x` becomes `x - z_in`
//!    (`ap_fixed<9,9>`, exact).
//! 2. The folded matrix-vector unit of the `dense` kind (`rtl/fptgen_dense.v`,
//!    `pe x simd`) with int8 weights (`ap_fixed<8,8,AP_TRN,AP_SAT_SYM>`),
//!    int32 biases and an int32 accumulator and output
//!    (`ap_fixed<32,32,AP_TRN,AP_WRAP>`), linear: `acc = sum w * (x - z_in) + b`.
//!    The layer's parameters are checked when they are loaded so that no
//!    partial sum leaves int32 for any input, so the sum is TFLite's.
//! 3. `rtl/fptgen_requant_vec.v` on the `outputs` accumulators: per channel
//!    the multiplier and shift (constants: the scales are never trained), the
//!    output zero point and the activation clamp.
//!
//! Cycles: the dense unit's `NF * SF` per vector (its int32 sum wraps, so
//! its products go through the adder tree); the latency adds the
//! requantizer's 6 stages.

use askama::Template;
use fptgen_sim::layers::dense::{exact_accumulation, Dense, Precision, Trainable};
use fptgen_sim::layers::dense_int8::{DenseInt8, B, W};
use fptgen_sim::layers::Activation;
use fptgen_sim::model::{Layer, Model};
use serde::Serialize;

use super::dense::DensePlan;
use super::int8::{int32_format, offset_fixed, offset_format, RequantPlan, REQUANT_STAGES};
use super::{KindPlan, LayerHw, TensorMem};
use crate::plan::{HwFormat, LayerPlan};
use crate::render::GenInfo;
use crate::rtl::{self, RtlFile};
use crate::timing::blocks::Pipe;
use crate::timing::Block;

/// The library files a dense_int8 layer instantiates.
const LIBRARY: &[RtlFile] = &[rtl::CAST, rtl::PARAM_MEM, super::dense::FPTGEN_DENSE, rtl::REQUANT, rtl::REQUANT_VEC];

/// The dense_int8-specific part of a layer's plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DenseInt8Plan {
    /// The matrix-vector unit (int8 weights, int32 biases and accumulator).
    pub dense: DensePlan,
    /// Its input format, `x - z_in`.
    pub x_off: HwFormat,
    /// Its output format, the int32 accumulator.
    pub acc: HwFormat,
    /// The requantizer.
    pub requant: RequantPlan,
}

/// The plan of `layer` of `model`, a dense_int8 layer `d` fed `input_shape`.
pub(super) fn plan(model: &Model, layer: &Layer, input_shape: &[usize], d: &DenseInt8) -> LayerPlan {
    let specs = layer.kind().tensors();
    let memories = vec![
        TensorMem::new(&layer.name, W, &specs[W], [d.outputs, d.inputs], [d.pe, d.simd], "u_dense.u_wmem").banked(),
        TensorMem::new(&layer.name, B, &specs[B], [d.outputs, 1], [d.pe, 1], "u_dense.u_bmem").banked(),
    ];
    let acc = int32_format();
    // The unit as a dense layer: int8 weights times offset inputs, summed
    // in the wrapping int32 accumulator, in any order (exact_accumulation).
    let unit = Dense {
        inputs: d.inputs,
        outputs: d.outputs,
        activation: Activation::Linear,
        precision: Precision { weight: specs[W].format, bias: specs[B].format, accum: acc, output: acc },
        pe: d.pe,
        simd: d.simd,
        multipliers: Default::default(),
        trainable: Trainable::default(),
    };
    let tree = exact_accumulation(&unit, offset_fixed()).is_some();
    let mut dense = DensePlan::new([d.outputs, d.inputs], [d.pe, d.simd], false, [specs[W].format, specs[B].format, acc], tree);
    dense.for_part(&model.part);
    let requant = RequantPlan::new(d.outputs, d.rounding, d.input_q().zero_point(), (d.output_q().zero_point(), d.activation_range().0, d.activation_range().1), |c| d.multiplier(c));
    let kp = DenseInt8Plan { dense, x_off: offset_format(), acc: acc.into(), requant };
    super::layer_plan(model, layer, input_shape, memories, KindPlan::DenseInt8(kp))
}

#[derive(Template)]
#[template(path = "layer_dense_int8.v")]
struct LayerDenseInt8Template<'a> {
    gen: &'a GenInfo,
    l: &'a LayerPlan,
    q: &'a DenseInt8Plan,
    r: &'a RequantPlan,
    /// The requantizer's input stream.
    rq_src: &'static str,
    /// The matrix-vector unit, for `mvau_inst.v`.
    d: &'a DensePlan,
    wm: &'a TensorMem,
    bm: &'a TensorMem,
    mv_in: usize,
    mv_out: usize,
    mv_src: &'static str,
    mv_x: &'a HwFormat,
    mv_y: &'a HwFormat,
    mv_dst: &'static str,
}

impl LayerHw for DenseInt8Plan {
    fn folding(&self) -> String {
        format!("PE {} x SIMD {}, {} x {} folds, {}", self.dense.pe, self.dense.simd, self.dense.nf, self.dense.sf, self.dense.accumulation())
    }

    fn library(&self) -> &'static [RtlFile] {
        LIBRARY
    }

    fn module(&self, l: &LayerPlan, gen: &GenInfo) -> Result<String, askama::Error> {
        LayerDenseInt8Template {
            gen,
            l,
            q: self,
            r: &self.requant,
            rq_src: "acc",
            d: &self.dense,
            wm: &l.memories[W],
            bm: &l.memories[B],
            mv_in: l.inputs,
            mv_out: l.outputs,
            mv_src: "xo",
            mv_x: &self.x_off,
            mv_y: &self.acc,
            mv_dst: "acc",
        }
        .render()
    }

    fn blocks(&self, _l: &LayerPlan) -> Vec<Block> {
        vec![self.dense.block(), Pipe::new(REQUANT_STAGES).into()]
    }
}
