//! A `BatchNormalization` (inference mode) as fptgen's `batchnorm` layer.
//!
//! ONNX computes per channel `y = (x - mean) / sqrt(var + epsilon) · scale
//! + B`. That is `y = s · x + t` with `s = scale / sqrt(var + epsilon)` and
//! `t = B - mean · s`; the import maps it when `sqrt(var + epsilon)` and
//! `s` are dyadic rationals (then `t` is one too), computed exactly from
//! the float32 constants and `epsilon`, and refuses it (naming the channel)
//! otherwise, for the layer's real function would have no fixed-point form.
//! `s` and `t` get the fewest fraction bits and bits that hold them
//! exactly, and the accumulator holds every `t + s · x` exactly over the
//! input format's whole range, so the layer is exact for every input (and
//! stays so when the scales and shifts are retrained).
//!
//! Why a `batchnorm` layer and not folded weights: fptgen's generator
//! already folds a frozen batch norm into the dense or conv2d layer before
//! it whenever the folded layer computes the same codes
//! (`generator/src/fold.rs`, proven per channel), and keeping it as a layer
//! keeps the model as the ONNX graph wrote it, with the batch norm's scales
//! and shifts retrainable on the device.

use fptgen_sim::fixed::Format;

use super::dyadic::Dyadic;
use super::error::ImportError;
use super::graph::Graph;
use super::mac::accumulator;
use super::network::{Bn, Kind};
use super::onnx::NodeProto;
use super::quant;
use super::tail::{tail, Tail};
use super::walk::Shape;

/// The batch norm `node` reading `x` (of `shape`, in `x_format`) and the
/// `Relu` and `Quant` after it; returns the layer and the tensor where it ends.
pub fn layer<'g>(g: &Graph<'g>, node: &'g NodeProto, shape: &Shape, x_format: Format) -> Result<(Kind, &'g str), ImportError> {
    let err = |m: String| ImportError::node(g.file, node, m);
    if Graph::int_attr(node, "training_mode", 0) != 0 || node.output.len() != 1 {
        return Err(err("only inference mode (training_mode 0, one output) is imported".into()));
    }
    let c = match shape {
        Shape::Image(_, _, c) => *c,
        Shape::Vector(n, None) => *n,
        Shape::Vector(_, Some(_)) => return Err(err("normalizes a flattened image, whose order differs between ONNX (c, h, w) and fptgen (h, w, c)".into())),
    };
    let param = |k: usize, what: &str| -> Result<Vec<Dyadic>, ImportError> {
        let name = node.input.get(k).map_or("", String::as_str);
        let (_, v) = g.constant(name)?.ok_or_else(|| err(format!("its {what} '{name}' is not a constant")))?;
        if v.len() != c {
            return Err(err(format!("its {what} has {} values for {c} channels", v.len())));
        }
        v.iter().map(|&x| Dyadic::from_f64(x).ok_or_else(|| err(format!("its {what} holds {x}")))).collect()
    };
    let (gamma, beta, mean, var) = (param(1, "scale")?, param(2, "bias")?, param(3, "mean")?, param(4, "variance")?);
    let eps = Dyadic::from_f64(f64::from(Graph::float_attr(node, "epsilon", 1e-5))).ok_or_else(|| err("epsilon is not finite".into()))?;
    let mut scales = Vec::with_capacity(c);
    let mut shifts = Vec::with_capacity(c);
    for k in 0..c {
        let v2 = var[k].add(eps).ok_or_else(|| err(format!("channel {k}: var + epsilon does not fit 128 bits")))?;
        let sd = v2.sqrt().ok_or_else(|| {
            err(format!(
                "channel {k}: sqrt(var + epsilon) = sqrt({}) is not a dyadic rational, so the scale / sqrt(var + epsilon) has no fixed-point format (give var + epsilon as the square of a power-of-two fraction, e.g. epsilon 0 and var 0.25, 1 or 4)",
                v2.approx()
            ))
        })?;
        let s = gamma[k].div(sd).ok_or_else(|| {
            err(format!("channel {k}: scale / sqrt(var + epsilon) = {} / {} is not a dyadic rational", gamma[k].approx(), sd.approx()))
        })?;
        let t = mean[k].mul(s).and_then(|ms| beta[k].sub(ms)).ok_or_else(|| err(format!("channel {k}: its shift does not fit 128 bits")))?;
        let exact = |d: Dyadic| d.to_f64().ok_or_else(|| err(format!("channel {k}: the scale or shift {} needs more than 53 significant bits", d.approx())));
        scales.push(exact(s)?);
        shifts.push(exact(t)?);
    }
    let fmt = |v: &[f64], what: &str| quant::exact_format(v).ok_or_else(|| err(format!("its folded {what}s need a fixed-point format of more than 64 bits")));
    let (scale, shift) = (fmt(&scales, "scale")?, fmt(&shifts, "shift")?);
    let accum = accumulator(scale, x_format, shift, 1).ok_or_else(|| err("its exact accumulator needs more than 64 bits".into()))?;
    let Tail { relu, output, end } = tail(g, g.output(node)?)?;
    let bn = Bn {
        channels: c,
        relu,
        scale,
        shift,
        accum,
        output: output.unwrap_or(accum),
        scale_codes: quant::codes(g, node, scale, &scales)?,
        shift_codes: quant::codes(g, node, shift, &shifts)?,
    };
    Ok((Kind::BatchNorm(bn), end))
}
