//! The `maxpool2d` kind's hardware: `rtl/fptgen_maxpool.v` (2x2, stride 2,
//! one line buffer of partial maxima), wrapped per layer by
//! `templates/layer_maxpool2d.v`. No parameters. (The simulator half is
//! `fptgen_sim::layers::maxpool2d`.)

use askama::Template;
use fptgen_sim::layers::maxpool2d::MaxPool2d;
use fptgen_sim::model::{Layer, Model};
use serde::Serialize;

use super::{KindPlan, LayerHw};
use crate::plan::LayerPlan;
use crate::render::GenInfo;
use crate::rtl::RtlFile;
use crate::timing::Block;

/// The pooling block.
const LIBRARY: &[RtlFile] = &[("fptgen_maxpool.v", include_str!("../../../rtl/fptgen_maxpool.v"))];

/// The maxpool2d-specific part of a layer's plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PoolPlan {
    /// Input rows.
    pub h: usize,
    /// Input columns.
    pub w: usize,
    /// Channels.
    pub c: usize,
    /// Vivado `ram_style` of the line buffer.
    pub ram_style: &'static str,
}

/// The plan of `layer` of `model`, a pool `p` fed `input_shape`.
pub(super) fn plan(model: &Model, layer: &Layer, input_shape: &[usize], p: &MaxPool2d) -> LayerPlan {
    let [h, w, c] = p.input;
    let line_bits = ((w / 2) * c) as u64 * u64::from(p.format.width());
    let pp = PoolPlan { h, w, c, ram_style: super::line_buffer_style(line_bits) };
    super::layer_plan(model, layer, input_shape, Vec::new(), KindPlan::MaxPool2d(pp))
}

#[derive(Template)]
#[template(path = "layer_maxpool2d.v")]
struct LayerPoolTemplate<'a> {
    gen: &'a GenInfo,
    l: &'a LayerPlan,
    p: &'a PoolPlan,
}

impl LayerHw for PoolPlan {
    fn folding(&self) -> String {
        format!("{} channels per pixel", self.c)
    }

    fn library(&self) -> &'static [RtlFile] {
        LIBRARY
    }

    fn module(&self, l: &LayerPlan, gen: &GenInfo) -> Result<String, askama::Error> {
        LayerPoolTemplate { gen, l, p: self }.render()
    }

    fn blocks(&self, _l: &LayerPlan) -> Vec<Block> {
        vec![Block::maxpool(self.h, self.w)]
    }
}
