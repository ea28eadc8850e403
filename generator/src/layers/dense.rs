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
//!   edges after the edge that accepted its input (its latency).
//!
//! Its memories: the weights `[outputs, inputs]` as that matrix folded
//! `pe x simd` (`NF * SF` words of `pe * simd` columns), the biases
//! `[outputs]` as an `outputs x 1` matrix folded `pe x 1` (`NF` words of
//! `pe` columns).

use askama::Template;
use fptgen_sim::layers::dense::{Dense, B, W};
use fptgen_sim::layers::Activation;
use fptgen_sim::model::{Layer, Model};
use serde::Serialize;

use super::{KindPlan, LayerHw, TensorMem};
use crate::plan::{HwFormat, LayerPlan};
use crate::render::GenInfo;
use crate::rtl::{self, RtlFile};

/// The dense layer's library module.
const FPTGEN_DENSE: RtlFile = ("fptgen_dense.v", include_str!("../../../rtl/fptgen_dense.v"));

/// The library files a dense layer instantiates.
const LIBRARY: &[RtlFile] = &[rtl::CAST, rtl::PARAM_MEM, FPTGEN_DENSE];

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
}

/// The plan of `layer` of `model`, a dense layer `d` fed `input_shape`.
pub(super) fn plan(model: &Model, layer: &Layer, input_shape: &[usize], d: &Dense) -> LayerPlan {
    let kind = layer.kind();
    let specs = kind.tensors();
    let nf = d.outputs.div_ceil(d.pe);
    let sf = d.inputs.div_ceil(d.simd);
    let cycles = (nf * sf) as u64;
    let memories = vec![
        TensorMem::new(&layer.name, W, &specs[W], [d.outputs, d.inputs], [d.pe, d.simd], "u_dense.u_wmem"),
        TensorMem::new(&layer.name, B, &specs[B], [d.outputs, 1], [d.pe, 1], "u_dense.u_bmem"),
    ];
    LayerPlan {
        name: layer.name.clone(),
        module: format!("{}_{}", model.name, layer.name),
        kind: kind.type_name(),
        op: kind.describe(),
        inputs: kind.input_len(),
        outputs: kind.output_len(),
        input_shape: input_shape.to_vec(),
        output_shape: kind.output_shape(),
        macs: kind.macs(),
        cycles,
        latency: cycles + 1,
        x: layer.input_format.into(),
        y: kind.output_format().into(),
        memories,
        kind_plan: KindPlan::Dense(DensePlan {
            pe: d.pe,
            simd: d.simd,
            nf,
            sf,
            relu: u32::from(d.activation == Activation::Relu),
            w: d.precision.weight.into(),
            b: d.precision.bias.into(),
            acc: d.precision.accum.into(),
        }),
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
}

impl LayerHw for DensePlan {
    fn folding(&self) -> String {
        format!("PE {} x SIMD {}, {} x {} folds", self.pe, self.simd, self.nf, self.sf)
    }

    fn library(&self) -> &'static [RtlFile] {
        LIBRARY
    }

    fn module(&self, l: &LayerPlan, gen: &GenInfo) -> Result<String, askama::Error> {
        LayerDenseTemplate { gen, l, d: self, wm: &l.memories[W], bm: &l.memories[B] }.render()
    }
}
