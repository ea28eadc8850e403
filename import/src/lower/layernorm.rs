//! A `LayerNormalization` of a vector as fptgen's `batchnorm` layer (seed
//! 004, Figure 3: "we replace the Layer Normalization with Batch
//! Normalization"), with `--lower approximate` only.
//!
//! ONNX's `LayerNormalization` of `x` (`[batch, n]`, `axis` -1 or 1)
//! computes `y_i = (x_i - mean(x)) / sqrt(var(x) + epsilon) · Scale_i +
//! B_i`, with the mean and variance over the sample's own `n` values: no
//! fixed-point layer computes that. Seed 004 permutes `[B, W, D]` to
//! `[B, D, W, 1]` and normalizes each of the `D` features with a batch norm
//! instead, whose statistics are fixed per feature; for a vector (`W` = 1)
//! that is fptgen's `batchnorm` over the `n` features,
//! `y_i = shift_i + scale_i · x_i`. It is initialized from the layer norm's
//! parameters with identity statistics (mean 0, variance 1): `scale_i =
//! Scale_i`, `shift_i = B_i` (0 without `B`), and retrained with `fptgen
//! train --teacher`.
//!
//! Formats: `scale` and `shift` are signed, with the fraction bits that
//! hold the layer norm's values exactly but at least 8, and two integer
//! bits more than those values need (at least 1), so that retraining has
//! room to move them; the accumulator holds every `shift + scale · x`
//! exactly; the output is the `Quant` after the node (with its `Relu`), or
//! the accumulator.

use fptgen_sim::fixed::{Format, Overflow, Quant};

use super::super::error::ImportError;
use super::super::graph::Graph;
use super::super::mac::accumulator;
use super::super::network::{Bn, Kind};
use super::super::onnx::NodeProto;
use super::super::quant;
use super::super::tail::{tail, Tail};
use super::super::walk::Shape;

/// The rewrite in words, for errors and the distillation record.
pub const REWRITE: &str = "layer normalization as a batch norm with the layer norm's scale and bias and identity statistics (seed 004, Figure 3)";

/// How the batch norm is initialized, as the distillation record says it.
pub const INIT: &str = "scale = the layer norm's Scale, shift = its B (0 without one): identity statistics (mean 0, variance 1); nothing random";

/// A retrainable format for `values`: signed, their exact fraction bits
/// but at least 8, two integer bits more than they need (at least 1).
pub fn trainable_format(values: &[f64]) -> Option<Format> {
    let exact = quant::exact_format(values)?;
    let frac = exact.frac_bits().max(8);
    let int = exact.int_bits().max(1) + if exact.signed() { 2 } else { 3 };
    let width = u32::try_from(frac + int).ok().filter(|&w| w <= 64)?;
    Format::new(true, width, int, Quant::RndConv, Overflow::Sat).ok()
}

/// The batch norm standing for the `LayerNormalization` `node` reading `x`
/// (of `shape`, in `x_format`), with the `Relu` and `Quant` after it;
/// returns the layer and the tensor where it ends.
pub fn lower<'g>(g: &Graph<'g>, node: &'g NodeProto, shape: &Shape, x_format: Format) -> Result<(Kind, &'g str), ImportError> {
    let err = |m: String| ImportError::node(g.file, node, m);
    let n = match shape {
        Shape::Vector(n, None) => *n,
        _ => return Err(err("a layer normalization of an image or a flattened image: only one of a vector [batch, n] is rewritten as a batch norm".into())),
    };
    let axis = Graph::int_attr(node, "axis", -1);
    if axis != -1 && axis != 1 {
        return Err(err(format!("axis {axis}: only the last axis (-1 or 1) of a vector is normalized")));
    }
    if node.output.iter().skip(1).any(|o| !o.is_empty()) {
        return Err(err("its Mean and InvStdDev outputs are read; only Y is imported".into()));
    }
    let param = |k: usize, what: &str| -> Result<Option<Vec<f64>>, ImportError> {
        let Some(name) = node.input.get(k).filter(|s| !s.is_empty()) else { return Ok(None) };
        let (_, v) = g.constant(name)?.ok_or_else(|| err(format!("its {what} '{name}' is not a constant")))?;
        if v.len() != n {
            return Err(err(format!("its {what} has {} values for {n} features", v.len())));
        }
        Ok(Some(v.to_vec()))
    };
    let scales = param(1, "Scale")?.ok_or_else(|| err("it has no Scale".into()))?;
    let shifts = param(2, "B")?.unwrap_or_else(|| vec![0.0; n]);
    let fmt = |v: &[f64], what: &str| trainable_format(v).ok_or_else(|| err(format!("its {what} needs a fixed-point format of more than 64 bits")));
    let (scale, shift) = (fmt(&scales, "Scale")?, fmt(&shifts, "B")?);
    let accum = accumulator(scale, x_format, shift, 1).ok_or_else(|| err("the batch norm's exact accumulator needs more than 64 bits".into()))?;
    let out = node.output.first().map(String::as_str).ok_or_else(|| err("it has no output".into()))?;
    let Tail { relu, output, end } = tail(g, out)?;
    let bn = Bn {
        channels: n,
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

#[cfg(test)]
mod tests {
    use super::trainable_format;

    #[test]
    fn ones_get_room_to_move() {
        // All ones: exactly ap_ufixed<1,1>; retrainable as ap_fixed<12,4>.
        let f = trainable_format(&[1.0, 1.0]).unwrap();
        assert_eq!((f.signed(), f.width(), f.int_bits(), f.frac_bits()), (true, 12, 4, 8));
        let f = trainable_format(&[-0.5, 0.25]).unwrap();
        assert!(f.frac_bits() >= 8 && f.int_bits() >= 3);
    }
}
