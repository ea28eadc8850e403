//! The `batchnorm` kind's hardware: `rtl/fptgen_bn.v`, every channel's
//! scale and shift in parallel on each beat (two register stages that
//! advance together: the product, then the sum and the casts), wrapped
//! per layer by `templates/layer_batchnorm.v`. (The simulator half is
//! `fptgen_sim::layers::batchnorm`.)
//!
//! Its memories: the scale and the shift `[C]` each as a `C x 1` matrix
//! folded `C x 1`, one word of `C` columns (channel `c` in column `c`), read
//! every cycle.

use askama::Template;
use fptgen_sim::layers::batchnorm::{BatchNorm, SCALE, SHIFT};
use fptgen_sim::layers::Activation;
use fptgen_sim::model::{Layer, Model};
use serde::Serialize;

use super::{KindPlan, LayerHw, TensorMem};
use crate::plan::{HwFormat, LayerPlan};
use crate::render::GenInfo;
use crate::rtl::{self, RtlFile};
use crate::timing::blocks::Pipe;
use crate::timing::Block;

/// The library files a batch norm instantiates.
const LIBRARY: &[RtlFile] = &[rtl::CAST, rtl::PARAM_MEM, ("fptgen_bn.v", include_str!("../../../rtl/fptgen_bn.v"))];

/// The batchnorm-specific part of a layer's plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct BnPlan {
    /// Channels (values per beat).
    pub c: usize,
    /// 1 for relu, 0 for linear.
    pub relu: u32,
    /// Scale format.
    pub scale: HwFormat,
    /// Shift format.
    pub shift: HwFormat,
    /// Accumulator format.
    pub acc: HwFormat,
}

/// The plan of `layer` of `model`, a batch norm `b` fed `input_shape`.
pub(super) fn plan(model: &Model, layer: &Layer, input_shape: &[usize], b: &BatchNorm) -> LayerPlan {
    let specs = layer.kind().tensors();
    let c = b.channels;
    let memories = vec![
        TensorMem::new(&layer.name, SCALE, &specs[SCALE], [c, 1], [c, 1], "u_bn.u_smem"),
        TensorMem::new(&layer.name, SHIFT, &specs[SHIFT], [c, 1], [c, 1], "u_bn.u_hmem"),
    ];
    let bp = BnPlan {
        c,
        relu: u32::from(b.activation == Activation::Relu),
        scale: b.scale.into(),
        shift: b.shift.into(),
        acc: b.accum.into(),
    };
    super::layer_plan(model, layer, input_shape, memories, KindPlan::BatchNorm(bp))
}

#[derive(Template)]
#[template(path = "layer_batchnorm.v")]
struct LayerBnTemplate<'a> {
    gen: &'a GenInfo,
    l: &'a LayerPlan,
    b: &'a BnPlan,
    /// The scale memory.
    sm: &'a TensorMem,
    /// The shift memory.
    hm: &'a TensorMem,
}

impl LayerHw for BnPlan {
    fn folding(&self) -> String {
        format!("{} channels in parallel", self.c)
    }

    fn library(&self) -> &'static [RtlFile] {
        LIBRARY
    }

    fn module(&self, l: &LayerPlan, gen: &GenInfo) -> Result<String, askama::Error> {
        LayerBnTemplate { gen, l, b: self, sm: &l.memories[SCALE], hm: &l.memories[SHIFT] }.render()
    }

    fn blocks(&self, _l: &LayerPlan) -> Vec<Block> {
        vec![Pipe::new(2).into()]
    }
}
