//! The `requantize` kind's hardware (issue 15): int8 to int8 with another
//! scale and zero point, `templates/layer_requantize.v`: per value of a
//! beat, `x - z_in` (wires) into `rtl/fptgen_requant_vec.v` with one
//! multiplier and shift for every lane. (The simulator half is
//! `fptgen_sim::layers::requantize`.) A beat per cycle; latency 6.

use askama::Template;
use fptgen_sim::layers::requantize::Requantize;
use fptgen_sim::model::{Layer, Model};
use serde::Serialize;

use super::int8::{RequantPlan, REQUANT_STAGES};
use super::{KindPlan, LayerHw};
use crate::plan::LayerPlan;
use crate::render::GenInfo;
use crate::rtl::{self, RtlFile};
use crate::timing::blocks::Pipe;
use crate::timing::Block;

/// The library files a requantize layer instantiates.
const LIBRARY: &[RtlFile] = &[rtl::REQUANT, rtl::REQUANT_VEC];

/// The requantize-specific part of a layer's plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RequantizePlan {
    /// The requantizer, one lane per value of a beat.
    pub requant: RequantPlan,
}

/// The plan of `layer` of `model`, a requantize layer `r` fed `input_shape`
/// (a vector: one beat; an image: a beat per pixel of `c` values).
pub(super) fn plan(model: &Model, layer: &Layer, input_shape: &[usize], r: &Requantize) -> LayerPlan {
    let lanes = match input_shape {
        [_, _, c] => *c,
        s => s.iter().product(),
    };
    let (m, zp) = (r.multiplier(), r.output_q().zero_point());
    let requant = RequantPlan::new(lanes, r.rounding, r.input_q().zero_point(), (zp, -128, 127), |_| m);
    super::layer_plan(model, layer, input_shape, Vec::new(), KindPlan::Requantize(RequantizePlan { requant }))
}

#[derive(Template)]
#[template(path = "layer_requantize.v")]
struct LayerRequantizeTemplate<'a> {
    gen: &'a GenInfo,
    l: &'a LayerPlan,
    r: &'a RequantPlan,
    /// The requantizer's input stream.
    rq_src: &'static str,
}

impl LayerHw for RequantizePlan {
    fn folding(&self) -> String {
        format!("{} lanes", self.requant.lanes)
    }

    fn library(&self) -> &'static [RtlFile] {
        LIBRARY
    }

    fn module(&self, l: &LayerPlan, gen: &GenInfo) -> Result<String, askama::Error> {
        LayerRequantizeTemplate { gen, l, r: &self.requant, rq_src: "xo" }.render()
    }

    fn blocks(&self, _l: &LayerPlan) -> Vec<Block> {
        vec![Pipe::new(REQUANT_STAGES).into()]
    }
}
