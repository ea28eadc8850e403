//! QONNX `Quant` nodes as affine int8 quantizations (`real = (q - z) * s`,
//! fptgen's [`Affine`]) and the codes QONNX's `Quant` computes from float
//! constants at any float32 scale.
//!
//! QONNX (`intquant.py`, `int_quant`) computes, in float32,
//! `y = round(clip(x / scale + zeropt, min_int, max_int))` and returns
//! `(y - zeropt) * scale`. An 8-bit signed activation `Quant` is TFLite's
//! int8 quantization with `s = scale` and `z = zeropt`; an 8-bit unsigned
//! one (codes `0..=255`) is the int8 quantization of codes `q - 128` with
//! zero point `zeropt - 128`, which has the same real values and clip.

use fptgen_sim::layers::dense_int8::Affine;

use super::super::error::ImportError;
use super::super::graph::Graph;
use super::super::onnx::NodeProto;

/// The rounding modes an int8 activation `Quant` may have: those that round
/// to nearest, as TFLite's requantization does (they differ from it only on
/// ties).
const NEAREST: [&str; 4] = ["ROUND", "HALF_EVEN", "HALF_UP", "HALF_DOWN"];

/// The constant input `k` of `node` with its shape; `what` names it in errors.
pub fn constant_input<'g>(g: &'g Graph<'_>, node: &NodeProto, k: usize, what: &str) -> Result<(&'g [usize], &'g [f64]), ImportError> {
    let name = node.input.get(k).map_or("", String::as_str);
    let (shape, values) =
        g.constant(name)?.ok_or_else(|| ImportError::node(g.file, node, format!("its {what} '{name}' is not a constant")))?;
    if values.is_empty() {
        return Err(ImportError::node(g.file, node, format!("its {what} is empty")));
    }
    Ok((shape, values))
}

/// A constant input of one value (a scalar, or a tensor of equal values).
fn per_tensor(g: &Graph<'_>, node: &NodeProto, k: usize, what: &str) -> Result<f64, ImportError> {
    let (_, v) = constant_input(g, node, k, what)?;
    if v.iter().any(|x| x != &v[0]) {
        return Err(ImportError::node(
            g.file,
            node,
            format!("its {what} differs between channels; an int8 activation has one {what} per tensor (fptgen's int8 layers, as TFLite's)"),
        ));
    }
    Ok(v[0])
}

/// The bit width of `node` (input 3), an integer.
pub fn bit_width(g: &Graph<'_>, node: &NodeProto) -> Result<u32, ImportError> {
    let b = per_tensor(g, node, 3, "bit width")?;
    if b.fract() != 0.0 || !(1.0..=64.0).contains(&b) {
        return Err(ImportError::node(g.file, node, format!("bit width {b}: an integer from 1 to 64 is supported")));
    }
    Ok(b as u32)
}

/// A float32 scale: positive and finite.
pub fn scale32(g: &Graph<'_>, node: &NodeProto, s: f64) -> Result<f32, ImportError> {
    let f = s as f32;
    if !(f.is_finite() && f > 0.0) || f64::from(f) != s {
        return Err(ImportError::node(g.file, node, format!("scale {s} is not a positive finite float32")));
    }
    Ok(f)
}

/// The int8 quantization of an activation `Quant` `node`: 8 bits, signed
/// or unsigned, not narrow, one scale and one integer zero point in range,
/// a rounding mode to nearest; or an error naming the node and why.
pub fn activation(g: &Graph<'_>, node: &NodeProto) -> Result<Affine, ImportError> {
    let err = |m: String| ImportError::node(g.file, node, m);
    if node.input.len() != 4 {
        return Err(err(format!("has {} inputs; Quant takes 4 (x, scale, zeropt, bitwidth)", node.input.len())));
    }
    let scale = scale32(g, node, per_tensor(g, node, 1, "scale")?)?;
    let zeropt = per_tensor(g, node, 2, "zero point")?;
    let bits = bit_width(g, node)?;
    if bits != 8 {
        return Err(err(format!(
            "bit width {bits} at scale {scale:?}: a scale that is not a power of two maps only to fptgen's int8 domain, whose activations have 8 bits"
        )));
    }
    let signed = Graph::int_attr(node, "signed", 1) != 0;
    if Graph::int_attr(node, "narrow", 0) != 0 {
        return Err(err("narrow 8-bit activations (-127..=127 or 0..=254) have no int8 layer: fptgen's int8 layers clamp to -128..=127".into()));
    }
    let mode = Graph::string_attr(node, "rounding_mode", "ROUND").to_ascii_uppercase();
    if !NEAREST.contains(&mode.as_str()) {
        return Err(err(format!("rounding mode {mode}: fptgen's int8 requantization rounds to nearest (ROUND, HALF_EVEN, HALF_UP, HALF_DOWN map to it)")));
    }
    if zeropt.fract() != 0.0 {
        return Err(err(format!("zero point {zeropt} is not an integer")));
    }
    let (lo, hi) = if signed { (-128.0, 127.0) } else { (0.0, 255.0) };
    if !(lo..=hi).contains(&zeropt) {
        return Err(err(format!("zero point {zeropt} is outside the codes {lo}..={hi}")));
    }
    let z = if signed { zeropt as i64 } else { zeropt as i64 - 128 };
    Affine::new(scale, z).map_err(err)
}

/// QONNX's rounding `mode` of `y` (`resolve_rounding_mode`), if it names one.
pub fn round(mode: &str, y: f32) -> Option<f32> {
    Some(match mode.to_ascii_uppercase().as_str() {
        "ROUND" | "HALF_EVEN" => y.round_ties_even(),
        "CEIL" => y.ceil(),
        "FLOOR" => y.floor(),
        "UP" => y.signum() * y.abs().ceil(),
        "DOWN" => y.trunc(),
        "HALF_UP" => y.signum() * (y.abs() + 0.5).floor(),
        "HALF_DOWN" => y.signum() * (y.abs() - 0.5).ceil(),
        _ => return None,
    })
}

/// Index into a tensor of `from` dimensions broadcast (numpy's rules) to
/// `to`, for the flat index `k` of `to`; `None` if `from` does not broadcast.
pub fn broadcast_index(from: &[usize], to: &[usize], k: usize) -> Option<usize> {
    if from.len() > to.len() {
        // Leading dimensions of 1 only.
        let extra = from.len() - to.len();
        if from[..extra].iter().any(|&d| d != 1) {
            return None;
        }
        return broadcast_index(&from[extra..], to, k);
    }
    let pad = to.len() - from.len();
    let (mut rest, mut idx, mut stride) = (k, 0, 1);
    for d in (0..to.len()).rev() {
        let i = rest % to[d];
        rest /= to[d];
        if d >= pad {
            let f = from[d - pad];
            if f != 1 && f != to[d] {
                return None;
            }
            if f != 1 {
                idx += i * stride;
            }
            stride *= f;
        }
    }
    Some(idx)
}

#[cfg(test)]
mod tests {
    use super::{broadcast_index, round};

    #[test]
    fn broadcasting_follows_numpy() {
        // A [1, 3] scale over [2, 3] weights: the column.
        assert_eq!((0..6).map(|k| broadcast_index(&[1, 3], &[2, 3], k).unwrap()).collect::<Vec<_>>(), vec![0, 1, 2, 0, 1, 2]);
        // A [2, 1] scale: the row; a scalar and [1]: always 0.
        assert_eq!((0..6).map(|k| broadcast_index(&[2, 1], &[2, 3], k).unwrap()).collect::<Vec<_>>(), vec![0, 0, 0, 1, 1, 1]);
        assert_eq!(broadcast_index(&[], &[2, 3], 5), Some(0));
        assert_eq!(broadcast_index(&[1], &[2, 3], 4), Some(0));
        // A [3] scale over [2, 3]: the last axis.
        assert_eq!(broadcast_index(&[3], &[2, 3], 4), Some(1));
        assert_eq!(broadcast_index(&[2], &[2, 3], 0), None);
        assert_eq!(broadcast_index(&[1, 1, 3], &[2, 3], 5), Some(2));
    }

    #[test]
    fn rounding_modes_are_qonnxs() {
        let r = |m: &str, y: f32| round(m, y).unwrap();
        assert_eq!((r("ROUND", 2.5), r("ROUND", -2.5), r("HALF_EVEN", 3.5)), (2.0, -2.0, 4.0));
        assert_eq!((r("HALF_UP", 2.5), r("HALF_UP", -2.5)), (3.0, -3.0));
        assert_eq!((r("HALF_DOWN", 2.5), r("HALF_DOWN", -2.5)), (2.0, -2.0));
        assert_eq!((r("FLOOR", -2.5), r("CEIL", -2.5), r("UP", -2.2), r("DOWN", -2.7)), (-3.0, -2.0, -3.0, -2.0));
        assert_eq!(round("NEAREST", 1.0), None);
    }
}
