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
use crate::timing::{Block, OnePort};

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

/// `rtl/fptgen_flatten.v`'s handshake ([`crate::timing`]): collects
/// `beats` beats into one vector; the beat counter and `out_valid_reg`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Collect {
    beats: usize,
    k: usize,
    out_valid: bool,
}

impl Collect {
    /// The collector of `beats` beats per vector, after reset.
    pub fn new(beats: usize) -> Collect {
        assert!(beats >= 1);
        Collect { beats, k: 0, out_valid: false }
    }
}

impl OnePort for Collect {
    fn in_ready(&self, out_ready: bool) -> bool {
        !(self.k == self.beats - 1 && self.out_valid && !out_ready)
    }

    fn out_valid(&self) -> bool {
        self.out_valid
    }

    fn clock(&mut self, in_valid: bool, out_ready: bool) {
        let accept = in_valid && self.in_ready(out_ready);
        let last = self.k == self.beats - 1;
        self.out_valid = if accept && last { true } else { self.out_valid && !out_ready };
        if accept {
            self.k = if last { 0 } else { self.k + 1 };
        }
    }
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
        vec![Collect::new(self.beats).into()]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::timing::{measure, Measured};

    /// Alone at full rate, the collector takes a vector every `beats`
    /// cycles and outputs it the cycle after its last beat.
    #[test]
    fn the_collector_keeps_up_with_its_input() {
        let m = measure(&[Collect::new(9).into()], 9, 1, 12).unwrap();
        assert_eq!(m, Measured { latency: 8, ii: Some(9) });
    }
}
