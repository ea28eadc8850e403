//! The `concat` kind's hardware: nothing of its own. Its inputs arrive
//! joined by the top level's `fptgen_concat` blocks (`crate::wiring`),
//! which already give the gathered stream, so the layer's module
//! (`templates/layer_concat.v`) passes it through. (The simulator half is
//! `fptgen_sim::layers::concat`.)

use askama::Template;
use fptgen_sim::layers::concat::Concat;
use fptgen_sim::model::{Layer, Model};
use serde::Serialize;

use super::{KindPlan, LayerHw};
use crate::plan::LayerPlan;
use crate::render::GenInfo;
use crate::rtl::RtlFile;
use crate::timing::Block;

/// The concat-specific part of a layer's plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ConcatPlan {
    /// Inputs joined.
    pub parts: usize,
}

/// The plan of `layer` of `model`, a concat `c` fed `input_shape`.
pub(super) fn plan(model: &Model, layer: &Layer, input_shape: &[usize], c: &Concat) -> LayerPlan {
    super::layer_plan(model, layer, input_shape, Vec::new(), KindPlan::Concat(ConcatPlan { parts: c.parts }))
}

#[derive(Template)]
#[template(path = "layer_concat.v")]
struct LayerConcatTemplate<'a> {
    gen: &'a GenInfo,
    l: &'a LayerPlan,
    c: &'a ConcatPlan,
}

impl LayerHw for ConcatPlan {
    fn folding(&self) -> String {
        format!("{} inputs joined by the top level", self.parts)
    }

    fn library(&self) -> &'static [RtlFile] {
        &[]
    }

    fn module(&self, l: &LayerPlan, gen: &GenInfo) -> Result<String, askama::Error> {
        LayerConcatTemplate { gen, l, c: self }.render()
    }

    fn blocks(&self, _l: &LayerPlan) -> Vec<Block> {
        Vec::new()
    }
}
