//! The model file's `type: add`: `y = cast<output>(a + b)` of two inputs of
//! equal shape and format, with the exact sum. It is not a kind of its
//! own: seed 004 lowers it at load into the core operator set, and so does
//! [`lower`]:
//!
//! * images `[h, w, c]`: a `conv2d` 3x3, stride 1, `same` padding, linear,
//!   over the gathered input `[h, w, 2c]` (the channels of `a`, then those
//!   of `b`): for output channel `f`, weight 1 at the centre tap
//!   (`ky = kx = 1`) of input channels `f` and `c + f`, 0 elsewhere;
//! * vectors `[n]`: a `dense` layer of `2n` inputs and `n` outputs, weights
//!   `[I I]`;
//!
//! bias 0. Weights and biases are `ap_ufixed<1,1>` (exactly 0 and 1), the
//! accumulator holds the sum of two input values exactly (the input
//! format's fraction bits, one more integer bit, signed if it is,
//! `AP_TRN`/`AP_WRAP`: no step ever rounds or overflows), and the output is
//! `precision: {output: ...}` or, by default, the accumulator format. Each
//! output's accumulation is `0 + a_f + b_f` plus zero products, so the
//! layer computes exactly `cast<output>(a + b)`. The tensors are constants
//! ([`crate::model::Lowered`]): generated here, never read from the weights
//! archive nor trained.

use super::conv2d::{Conv2d, Padding};
use super::dense::{Dense, Multipliers, Precision, Trainable, W};
use super::{Activation, LayerInput, LayerKind};
use crate::error::ModelError;
use crate::fixed::{Format, Overflow, Quant};
use crate::model::{LayerOp, Lowered};
use crate::weights::LayerParams;

/// The weight and bias format of a lowered add: holds 0 and 1 exactly.
pub fn constant_format() -> Format {
    Format::new(false, 1, 1, Quant::Trn, Overflow::Wrap).expect("a valid format")
}

/// The accumulator of a lowered add over `input` values: their exact sum.
pub fn sum_format(input: Format) -> Option<Format> {
    Format::new(input.signed(), input.width().checked_add(1)?, input.int_bits().checked_add(1)?, Quant::Trn, Overflow::Wrap).ok()
}

/// The model file's `type` of the operator.
pub const TYPE: &str = "add";

/// What it is, for the error that lists the types.
pub const WHAT: &str = "the exact sum of two inputs, cast to the output format (lowered to concat + a 3x3 conv2d, seed 004)";

/// Most weights a lowered add may have (its weights are constants held
/// in memory like any other layer's).
const MAX_WEIGHTS: usize = 1 << 24;

/// Lowers a `type: add` entry: the layer it becomes and its constants.
pub(crate) fn lower(input: &LayerInput) -> Result<(LayerOp, Lowered), ModelError> {
    input.only(&["precision"], &["output"])?;
    let n = input.parts.len();
    if n != 2 {
        return Err(input.err_at_inputs(format!(
            "an add layer takes exactly 2 inputs; '{}' has {n} (list them: `inputs: [a, b]`)",
            input.name
        )));
    }
    if input.parts[0] != input.parts[1] {
        return Err(input.err_at_inputs(format!(
            "an add layer's inputs must have the same shape; '{}' gets {:?} and {:?}",
            input.name, input.parts[0], input.parts[1]
        )));
    }
    let fin = input.format;
    let accum = sum_format(fin).ok_or_else(|| {
        input.err_at_type(format!(
            "the exact sum of two {fin} values needs {} bits and {} integer bits; formats hold at most {} and {}",
            fin.width() + 1,
            fin.int_bits() + 1,
            Format::MAX_WIDTH,
            Format::MAX_INT_BITS
        ))
    })?;
    let output = match input.lf.precision.as_ref().and_then(|p| p.value.output.as_ref()) {
        Some(v) => input.c.format(v, "output")?,
        None => accum,
    };
    let (c, m) = match input.parts[0].as_slice() {
        &[_, _, c] => (c, 9 * 2 * c * c),
        shape => (shape.iter().product(), 2 * shape.iter().product::<usize>().pow(2)),
    };
    if m > MAX_WEIGHTS {
        return Err(input.err_at_type(format!(
            "an add of {c}-value inputs lowers to a layer of {m} weights; at most {MAX_WEIGHTS} are supported"
        )));
    }
    let k = constant_format();
    let precision = Precision { weight: k, bias: k, accum, output };
    let (op, params) = match input.parts[0].as_slice() {
        &[h, w, c] => {
            // Every filter at once, one tap's 2c values per cycle: a window
            // in 9 cycles, 2c^2 one-bit multipliers.
            let (conv, params) = sum_conv([h, w], c, 2, Activation::Linear, precision, [c, 2 * c]);
            (LayerOp::Conv2d(conv), params)
        }
        shape => {
            let one = k.exact_f64(1.0).expect("1 is a code of ap_ufixed<1,1>");
            let m: usize = shape.iter().product();
            let d = Dense {
                inputs: 2 * m,
                outputs: m,
                activation: Activation::Linear,
                precision,
                // Every output at once, two inputs per cycle: m cycles, 2m
                // one-bit multipliers.
                pe: m,
                simd: 2,
                multipliers: Multipliers::Dsp,
                trainable: Trainable::default(),
            };
            let mut wt = vec![0i128; 2 * m * m];
            for o in 0..m {
                wt[o * 2 * m + o] = one;
                wt[o * 2 * m + m + o] = one;
            }
            (LayerOp::Dense(d), LayerParams { tensors: vec![wt, vec![0; m]] })
        }
    };
    Ok((op, Lowered { from: "add", params }))
}

/// The 3x3 convolution that sums `k` images of `c` channels, gathered side
/// by side (`[h, w, k·c]`, image `j`'s channels at `j·c ..`): output channel
/// `f` is `act(sum_j x[j·c + f])` in `precision`, whose weight and bias
/// formats must hold 0 and 1 ([`constant_format`]). Weight 1 at the centre
/// tap (`ky = kx = 1`) of input channels `j·c + f`, 0 elsewhere; bias 0;
/// stride 1, `same` padding (the image keeps its size); folded `[pe,
/// simd]` (`[c, k·c]`: a window in 9 cycles). An add is `k = 2`; the sum of
/// a split layer's partial convolutions ([`crate::model::PartOf`]) is `k` =
/// its input groups.
pub(crate) fn sum_conv(
    hw: [usize; 2],
    c: usize,
    k: usize,
    activation: Activation,
    precision: Precision,
    [pe, simd]: [usize; 2],
) -> (Conv2d, LayerParams) {
    let one = precision.weight.exact_f64(1.0).expect("the weight format holds 1");
    let mvau = Dense {
        inputs: 9 * k * c,
        outputs: c,
        activation,
        precision,
        pe,
        simd,
        multipliers: Multipliers::Dsp,
        trainable: Trainable::default(),
    };
    let conv = Conv2d { input: [hw[0], hw[1], k * c], filters: c, stride: 1, padding: Padding::Same, mvau };
    let mut wt = vec![0i128; conv.tensors()[W].len()];
    let window = 9 * k * c;
    let centre = 4 * k * c; // (ky, kx) = (1, 1)
    for f in 0..c {
        for j in 0..k {
            wt[f * window + centre + j * c + f] = one;
        }
    }
    (conv, LayerParams { tensors: vec![wt, vec![0; c]] })
}
