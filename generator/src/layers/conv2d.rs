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
use crate::timing::Block;

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
    let (dp, memories) = mvau(&layer.name, &layer.kind().tensors(), &c.mvau, c.filters, layer.input_format);
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
        vec![Block::swg(self.h, self.w, self.stride, self.same == 1), self.mvau.block()]
    }
}
