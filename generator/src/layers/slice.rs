//! The `slice` kind's hardware: a range of every pixel's channels, taken
//! from the beat as it passes (channel `k` of a pixel beat sits at bits
//! `[k*W +: W]`, docs/hardware.md "Streams of images"), so the module
//! (`templates/layer_slice.v`) is wires: no register, no cycle. The fork
//! in front of the slices of one image (`crate::wiring`) holds the beats.
//! (The simulator half is `fptgen_sim::layers::slice`.)

use askama::Template;
use fptgen_sim::layers::Slice;
use fptgen_sim::model::{Layer, Model};
use serde::Serialize;

use super::{KindPlan, LayerHw};
use crate::plan::LayerPlan;
use crate::render::GenInfo;
use crate::rtl::RtlFile;
use crate::timing::Block;

/// The slice-specific part of a layer's plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SlicePlan {
    /// The first channel taken.
    pub first: usize,
    /// Channels taken.
    pub count: usize,
    /// Channels of the input pixel.
    pub channels: usize,
}

/// The plan of `layer` of `model`, a slice `s` fed `input_shape`.
pub(super) fn plan(model: &Model, layer: &Layer, input_shape: &[usize], s: &Slice) -> LayerPlan {
    let sp = SlicePlan { first: s.first, count: s.count, channels: s.input[2] };
    super::layer_plan(model, layer, input_shape, Vec::new(), KindPlan::Slice(sp))
}

#[derive(Template)]
#[template(path = "layer_slice.v")]
struct LayerSliceTemplate<'a> {
    gen: &'a GenInfo,
    l: &'a LayerPlan,
    s: &'a SlicePlan,
}

impl LayerHw for SlicePlan {
    fn folding(&self) -> String {
        format!("channels {}..{} of {}, wires", self.first, self.first + self.count, self.channels)
    }

    fn library(&self) -> &'static [RtlFile] {
        &[]
    }

    fn module(&self, l: &LayerPlan, gen: &GenInfo) -> Result<String, askama::Error> {
        LayerSliceTemplate { gen, l, s: self }.render()
    }

    fn blocks(&self, _l: &LayerPlan) -> Vec<Block> {
        Vec::new()
    }
}
