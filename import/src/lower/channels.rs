//! Per-channel power-of-two scales of QONNX's `BipolarQuant` and `Trunc`
//! (a scale tensor that broadcasts to the activation, varying only along
//! ONNX's channel axis 1), and fptgen's `batchnorm` with one power-of-two
//! scale and shift per channel, the layer that applies them exactly.

use fptgen_sim::fixed::Format;

use crate::error::ImportError;
use crate::graph::Graph;
use crate::int8::affine::broadcast_index;
use crate::mac::accumulator;
use crate::network::Bn;
use crate::onnx::NodeProto;
use crate::quant;
use crate::walk::Shape;

/// The number of fptgen channels of `shape` (a vector's values, an image's `c`).
pub fn count(shape: &Shape) -> usize {
    match *shape {
        Shape::Image(_, _, c) => c,
        Shape::Vector(n, _) => n,
    }
}

/// `F` of each fptgen channel of the constant input `k` of `node` (the
/// scale `2^-F` of an activation of `shape`): one value, or a tensor that
/// broadcasts to the ONNX tensor (`[1, n]`, `[1, c, h, w]`) and varies only
/// along the channels, each a power of two; `what` names it in errors.
pub fn po2_per_channel(g: &Graph<'_>, node: &NodeProto, k: usize, what: &str, shape: &Shape) -> Result<Vec<i32>, ImportError> {
    let err = |m: String| ImportError::node(g.file, node, m);
    let name = node.input.get(k).map_or("", String::as_str);
    let (s_shape, values) = g.constant(name)?.ok_or_else(|| err(format!("its {what} '{name}' is not a constant")))?;
    if values.is_empty() {
        return Err(err(format!("its {what} is empty")));
    }
    let (onnx, per): (Vec<usize>, Vec<Vec<usize>>) = match shape {
        // ONNX's flat indices of fptgen channel j (one value each).
        Shape::Vector(n, order) => (vec![1, *n], (0..*n).map(|j| vec![order.as_ref().map_or(j, |o| o[j])]).collect()),
        Shape::Image(h, w, c) => (vec![1, *c, *h, *w], (0..*c).map(|ch| (0..h * w).map(|p| ch * h * w + p).collect()).collect()),
    };
    let mut out = Vec::with_capacity(per.len());
    for (j, idx) in per.iter().enumerate() {
        let at = |i: usize| broadcast_index(s_shape, &onnx, i).map(|b| values[b]);
        let v = at(idx[0]).ok_or_else(|| err(format!("its {what} of shape {s_shape:?} does not broadcast to the activation's {onnx:?}")))?;
        if idx.iter().any(|&i| at(i) != Some(v)) {
            return Err(err(format!("its {what} varies within channel {j}; one {what} per tensor or per channel (ONNX axis 1) is supported")));
        }
        let f = quant::po2_frac_bits(v)
            .ok_or_else(|| err(format!("{what} {v} of channel {j} is not a power of two; only power-of-two scales map to an ap_fixed format")))?;
        out.push(f);
    }
    Ok(out)
}

/// The batch norm `y = cast<output>(act(shift[c] + scale[c] · x))` reading
/// `x`, its scales and shifts in the exact formats that hold them all;
/// with no `output`, the accumulator's format (every value exact).
pub fn batchnorm(x: Format, scale: &[f64], shift: &[f64], relu: bool, output: Option<Format>) -> Option<Bn> {
    let (sf, tf) = (quant::exact_format(scale)?, quant::exact_format(shift)?);
    let scale_codes = scale.iter().map(|&v| sf.exact_f64(v).ok()).collect::<Option<Vec<_>>>()?;
    let shift_codes = shift.iter().map(|&v| tf.exact_f64(v).ok()).collect::<Option<Vec<_>>>()?;
    let accum = accumulator(sf, x, tf, 1)?;
    Some(Bn { channels: scale.len(), relu, scale: sf, shift: tf, accum, output: output.unwrap_or(accum), scale_codes, shift_codes })
}
