//! The `conv2d` kind's hardware: `rtl/fptgen_swg.v`, the 3x3 sliding-window
//! generator (two line buffers), feeding `rtl/fptgen_dense.v`, the folded
//! matrix-vector unit, as FINN's ConvolutionInputGenerator feeds its MVAU;
//! wrapped per layer by `templates/layer_conv2d.v`. (The simulator half is
//! `fptgen_sim::layers::conv2d`.)
//!
//! Every window is one vector of `9 * C` values in the order (ky, kx, c),
//! which is the order of the OHWI weights' rows, so the weight memory is the
//! `[F, 3, 3, C]` tensor as an `F x 9C` matrix folded `pe x simd`, exactly a
//! dense layer's: `pe` filters in parallel, `simd` window values per cycle,
//! `NF * SF` cycles per window. The layer's cycle counts come from the two
//! blocks' handshake models ([`crate::timing`]).

use askama::Template;
use fptgen_sim::layers::conv2d::{Conv2d, Padding};
use fptgen_sim::layers::dense::{B, W};
use fptgen_sim::model::{Layer, Model};
use serde::Serialize;

use super::dense::{mvau, DensePlan};
use super::{KindPlan, LayerHw, TensorMem};
use crate::plan::{HwFormat, LayerPlan};
use crate::render::GenInfo;
use crate::rtl::RtlFile;
use crate::timing::{Block, OnePort};

/// The sliding-window generator.
const FPTGEN_SWG: RtlFile = ("fptgen_swg.v", include_str!("../../../rtl/fptgen_swg.v"));

/// The library files a convolution instantiates: the matrix-vector unit's
/// and the window generator.
const LIBRARY: &[RtlFile] = &[super::dense::LIBRARY[0], super::dense::LIBRARY[1], super::dense::LIBRARY[2], FPTGEN_SWG];

/// The conv2d-specific part of a layer's plan: the window generator's
/// geometry and the matrix-vector unit's plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Conv2dPlan {
    /// Input rows, columns and channels.
    pub h: usize,
    /// Input columns.
    pub w: usize,
    /// Input channels.
    pub c: usize,
    /// Output rows and columns.
    pub oh: usize,
    /// Output columns.
    pub ow: usize,
    /// 1 or 2.
    pub stride: usize,
    /// 1 for same padding, 0 for valid.
    pub same: u32,
    /// Vivado `ram_style` of the window generator's line buffer.
    pub ram_style: &'static str,
    /// The matrix-vector unit over one window (its `pe`, `simd`, folds and
    /// formats appear as a dense layer's in `report.json`).
    #[serde(flatten)]
    pub mvau: DensePlan,
}

/// The plan of `layer` of `model`, a convolution `c` fed `input_shape`.
pub(super) fn plan(model: &Model, layer: &Layer, input_shape: &[usize], c: &Conv2d) -> LayerPlan {
    let [h, w, ch] = c.input;
    let ([oh, ow], _) = c.geometry();
    let (dp, memories) = mvau(model, &layer.name, &layer.kind().tensors(), &c.mvau, c.filters, layer.input_format);
    let line_bits = (2 * w * ch) as u64 * u64::from(layer.input_format.width());
    let cp = Conv2dPlan {
        h,
        w,
        c: ch,
        oh,
        ow,
        stride: c.stride,
        same: u32::from(c.padding == Padding::Same),
        ram_style: super::line_buffer_style(line_bits),
        mvau: dp,
    };
    super::layer_plan(model, layer, input_shape, memories, KindPlan::Conv2d(cp))
}

/// `rtl/fptgen_swg.v`'s handshake ([`crate::timing`]): the step position
/// (`x_reg`, `y_reg`, whose flags the RTL keeps in registers), `pend_reg`,
/// `out_valid_reg`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Swg {
    h: usize,
    w: usize,
    stride: usize,
    same: bool,
    x: usize,
    y: usize,
    pend: bool,
    out_valid: bool,
}

impl Swg {
    /// The generator for an `h x w` image, stride 1 or 2, same (true) or
    /// valid padding, after reset.
    pub fn new(h: usize, w: usize, stride: usize, same: bool) -> Swg {
        Swg { h, w, stride, same, x: 0, y: 0, pend: false, out_valid: false }
    }

    /// Padding before (top or left) of a dimension of `n` values: the RTL's
    /// `PT` / `PL`.
    fn pad_before(&self, n: usize) -> usize {
        if !self.same {
            return 0;
        }
        let out = n.div_ceil(self.stride);
        ((out - 1) * self.stride + 3).saturating_sub(n) / 2
    }

    /// Step rows per image (`YS`): a row of bottom padding steps with same
    /// padding and stride 1.
    fn rows(&self) -> usize {
        self.h + usize::from(self.vrow_exists())
    }

    fn vrow_exists(&self) -> bool {
        self.same && self.stride == 1
    }

    fn fires(&self, v: usize, n: usize, first: usize, edge: bool) -> bool {
        (v >= first && (self.stride == 1 || v % 2 == first % 2)) || (edge && v == n - 1)
    }

    fn fire(&self) -> bool {
        let edge_x = self.same && (self.stride == 2 || self.w == 1);
        let edge_y = self.same && self.stride == 2;
        self.fires(self.x, self.w, 2 - self.pad_before(self.w), edge_x)
            && self.fires(self.y, self.h, 2 - self.pad_before(self.h), edge_y)
    }

    fn vrow(&self) -> bool {
        self.vrow_exists() && self.y == self.h
    }

    fn dbl_x(&self) -> bool {
        self.vrow_exists() && self.w >= 2 && self.x == self.w - 1
    }

    fn can_step(&self, out_ready: bool) -> bool {
        let out_free = !self.out_valid || out_ready;
        out_free || !(self.pend || self.fire())
    }
}

impl OnePort for Swg {
    fn in_ready(&self, out_ready: bool) -> bool {
        self.can_step(out_ready) && !self.vrow()
    }

    fn out_valid(&self) -> bool {
        self.out_valid
    }

    fn clock(&mut self, in_valid: bool, out_ready: bool) {
        let out_free = !self.out_valid || out_ready;
        let step = self.can_step(out_ready) && (self.vrow() || in_valid);
        let load_step = step && self.fire();
        let load_pend = self.pend && out_free;
        let dbl = self.dbl_x();
        self.out_valid = if load_step || load_pend { true } else { self.out_valid && !out_ready };
        if load_pend {
            self.pend = false;
        } else if load_step && dbl {
            self.pend = true;
        }
        if step {
            if self.x == self.w - 1 {
                self.x = 0;
                self.y = if self.y == self.rows() - 1 { 0 } else { self.y + 1 };
            } else {
                self.x += 1;
            }
        }
    }
}

#[derive(Template)]
#[template(path = "layer_conv2d.v")]
struct LayerConv2dTemplate<'a> {
    gen: &'a GenInfo,
    l: &'a LayerPlan,
    c: &'a Conv2dPlan,
    d: &'a DensePlan,
    /// The weight memory.
    wm: &'a TensorMem,
    /// The bias memory.
    bm: &'a TensorMem,
    /// Inputs (window values) and outputs (filters) of the matrix-vector unit.
    mv_in: usize,
    mv_out: usize,
    /// Its input stream: the window generator's output.
    mv_src: &'static str,
    /// Its input and output formats.
    mv_x: &'a HwFormat,
    mv_y: &'a HwFormat,
    /// Its output stream: the module's own.
    mv_dst: &'static str,
}

impl LayerHw for Conv2dPlan {
    fn folding(&self) -> String {
        format!("PE {} x SIMD {}, {} x {} folds per window, {}", self.mvau.pe, self.mvau.simd, self.mvau.nf, self.mvau.sf, self.mvau.accumulation())
    }

    fn library(&self) -> &'static [RtlFile] {
        LIBRARY
    }

    fn module(&self, l: &LayerPlan, gen: &GenInfo) -> Result<String, askama::Error> {
        LayerConv2dTemplate {
            gen,
            l,
            c: self,
            d: &self.mvau,
            wm: &l.memories[W],
            bm: &l.memories[B],
            mv_in: 9 * self.c,
            mv_out: l.output_shape[2],
            mv_src: "win",
            mv_x: &l.x,
            mv_y: &l.y,
            mv_dst: "out",
        }
        .render()
    }

    fn blocks(&self, _l: &LayerPlan) -> Vec<Block> {
        vec![Swg::new(self.h, self.w, self.stride, self.same == 1).into(), self.mvau.block()]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::timing::measure;

    /// The window generator's images follow each other every `YS * W`
    /// cycles (rtl/fptgen_swg.v's cycle model), for every stride and
    /// padding, and its last window comes one cycle after the step that
    /// completes it.
    #[test]
    fn the_window_generator_follows_its_documented_cycle_model() {
        for (h, w) in [(3, 3), (5, 4), (4, 7), (8, 8), (1, 1), (2, 5)] {
            for stride in [1, 2] {
                for same in [false, true] {
                    if !same && (h < 3 || w < 3) {
                        continue;
                    }
                    let out = |n: usize| if same { n.div_ceil(stride) } else { (n - 3) / stride + 1 };
                    let windows = out(h) * out(w);
                    let m = measure(&[Swg::new(h, w, stride, same).into()], h * w, windows, 12).unwrap();
                    let ys = h + usize::from(same && stride == 1);
                    assert_eq!(m.ii, Some((ys * w) as u64), "{h}x{w} stride {stride} same {same}");
                    // The last window (OH - 1, OW - 1) is output the cycle
                    // after the step (sy, sx) that completes it, or, as the
                    // second window of a row (same, stride 1), W steps
                    // after that row's first step.
                    let pad = |n: usize| if same { ((out(n) - 1) * stride + 3).saturating_sub(n) / 2 } else { 0 };
                    let last = |n: usize| ((out(n) - 1) * stride + 2 - pad(n)).min(n - 1);
                    let latency = if same && stride == 1 {
                        if w >= 2 { h * w + w } else { h * w }
                    } else {
                        last(h) * w + last(w)
                    };
                    assert_eq!(m.latency, latency as u64, "{h}x{w} stride {stride} same {same}");
                }
            }
        }
    }
}
