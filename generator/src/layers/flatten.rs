//! The `flatten` kind's hardware: `rtl/fptgen_flatten.v`, which collects an
//! image's pixel beats into one vector (the image in C order), wrapped per
//! layer by `templates/layer_flatten.v`. No parameters. (The simulator half
//! is `fptgen_sim::layers::flatten`.)

use askama::Template;
use fptgen_sim::layers::flatten::Flatten;
use fptgen_sim::model::{Layer, Model};
use serde::Serialize;

use super::{KindPlan, LayerHw};
use crate::plan::LayerPlan;
use crate::render::GenInfo;
use crate::rtl::RtlFile;
use crate::timing::Block;

/// The collector.
/// `rtl/fptgen_flatten.v` (also the collector of a conv2d's output image
/// for its synthetic-gradient module in a feedback trainer).
pub const LIBRARY: &[RtlFile] = &[("fptgen_flatten.v", include_str!("../../../rtl/fptgen_flatten.v"))];

/// The flatten-specific part of a layer's plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FlattenPlan {
    /// Pixels per image (beats collected).
    pub beats: usize,
    /// Values per pixel.
    pub beat_values: usize,
}

/// The plan of `layer` of `model`, a flatten `f` fed `input_shape`.
pub(super) fn plan(model: &Model, layer: &Layer, input_shape: &[usize], f: &Flatten) -> LayerPlan {
    let [h, w, c] = f.input;
    let fp = FlattenPlan { beats: h * w, beat_values: c };
    super::layer_plan(model, layer, input_shape, Vec::new(), KindPlan::Flatten(fp))
}

#[derive(Template)]
#[template(path = "layer_flatten.v")]
struct LayerFlattenTemplate<'a> {
    gen: &'a GenInfo,
    l: &'a LayerPlan,
    f: &'a FlattenPlan,
}

impl LayerHw for FlattenPlan {
    fn folding(&self) -> String {
        format!("{} pixels of {} values", self.beats, self.beat_values)
    }

    fn library(&self) -> &'static [RtlFile] {
        LIBRARY
    }

    fn module(&self, l: &LayerPlan, gen: &GenInfo) -> Result<String, askama::Error> {
        LayerFlattenTemplate { gen, l, f: self }.render()
    }

    fn blocks(&self, _l: &LayerPlan) -> Vec<Block> {
        vec![Block::collect(self.beats)]
    }
}
