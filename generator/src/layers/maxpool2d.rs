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
use crate::timing::{Block, OnePort};

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

/// `rtl/fptgen_maxpool.v`'s handshake ([`crate::timing`]): 2x2, stride 2;
/// the pixel position and `out_valid_reg`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pool {
    h: usize,
    w: usize,
    x: usize,
    y: usize,
    out_valid: bool,
}

impl Pool {
    /// The pool for an `h x w` image, after reset.
    pub fn new(h: usize, w: usize) -> Pool {
        Pool { h, w, x: 0, y: 0, out_valid: false }
    }

    fn done(&self) -> bool {
        self.x % 2 == 1 && self.y % 2 == 1
    }
}

impl OnePort for Pool {
    fn in_ready(&self, out_ready: bool) -> bool {
        !self.done() || !self.out_valid || out_ready
    }

    fn out_valid(&self) -> bool {
        self.out_valid
    }

    fn clock(&mut self, in_valid: bool, out_ready: bool) {
        let accept = in_valid && self.in_ready(out_ready);
        self.out_valid = if accept && self.done() { true } else { self.out_valid && !out_ready };
        if accept {
            if self.x == self.w - 1 {
                self.x = 0;
                self.y = if self.y == self.h - 1 { 0 } else { self.y + 1 };
            } else {
                self.x += 1;
            }
        }
    }
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
        vec![Pool::new(self.h, self.w).into()]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::timing::measure;

    /// Alone at full rate, the pool takes an image every `H * W` cycles,
    /// and its last output pixel is valid the cycle after the beat that
    /// completes it.
    #[test]
    fn the_pool_keeps_up_with_its_input() {
        let (h, w) = (6, 5);
        let m = measure(&[Pool::new(h, w).into()], h * w, (h / 2) * (w / 2), 12).unwrap();
        assert_eq!(m.ii, Some((h * w) as u64));
        // The last output pixel needs pixel (2*OH - 1, 2*OW - 1), accepted
        // (2*OH - 1)*W + 2*OW - 1 edges after the first, and is valid in
        // the cycle after (rtl/fptgen_maxpool.v's cycle model).
        assert_eq!(m.latency, (((h / 2) * 2 - 1) * w + (w / 2) * 2 - 1) as u64);
    }
}
