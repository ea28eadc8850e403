//! QONNX's `Quant` node (also named `IntQuant`) as an `ap_fixed` format.
//!
//! QONNX (`qonnx/custom_op/general/intquant.py`, `int_quant`) computes
//! `y = clip(x / scale + zeropt, min_int, max_int)`, rounds it with
//! `rounding_mode`, and returns `(y - zeropt) * scale`. With a power-of-two
//! scale `2^-F` and zero point 0 that is the cast of `x` to the format with
//! `F` fraction bits and `bitwidth` bits, saturating: clipping to integer
//! bounds before a monotone rounding gives the same integer as rounding
//! first and clipping after. The bounds are `[-2^(b-1), 2^(b-1)-1]`
//! (signed; `narrow` raises the minimum to `-(2^(b-1)-1)`, `AP_SAT_SYM`) or
//! `[0, 2^b-1]` (unsigned; `narrow` lowers the maximum to `2^b-2`, which no
//! `ap_ufixed` format has: refused).

use fptgen_sim::fixed::{Format, Overflow, Quant};

use super::error::ImportError;
use super::graph::Graph;
use super::onnx::NodeProto;

/// The QONNX rounding mode's `ap_fixed` quantization mode, if it has one.
///
/// | QONNX | numpy | `ap_fixed` |
/// |---|---|---|
/// | `ROUND`, `HALF_EVEN` | `np.round` (ties to even) | `AP_RND_CONV` |
/// | `FLOOR` | `np.floor` | `AP_TRN` |
/// | `DOWN` | `np.fix` (toward zero) | `AP_TRN_ZERO` |
/// | `HALF_UP` | `sign(x) * floor(abs(x) + 0.5)` (ties away from zero) | `AP_RND_INF` |
/// | `HALF_DOWN` | `sign(x) * ceil(abs(x) - 0.5)` (ties toward zero) | `AP_RND_ZERO` |
///
/// `CEIL` and `UP` (away from zero) have none.
pub fn rounding(mode: &str) -> Option<Quant> {
    match mode.to_ascii_uppercase().as_str() {
        "ROUND" | "HALF_EVEN" => Some(Quant::RndConv),
        "FLOOR" => Some(Quant::Trn),
        "DOWN" => Some(Quant::TrnZero),
        "HALF_UP" => Some(Quant::RndInf),
        "HALF_DOWN" => Some(Quant::RndZero),
        _ => None,
    }
}

/// Checks what QONNX itself requires of every `Quant` of the graph, before
/// the graph is mapped (so that an invalid value is named at its node, not
/// taken for a reason to map the graph to the int8 domain): constant scales
/// that are finite and positive, finite zero points, and `signed` and
/// `narrow` of 0 or 1.
pub fn check_all(g: &Graph<'_>) -> Result<(), ImportError> {
    for node in g.proto.node.iter().filter(|n| super::walk::is_quant(n)) {
        let err = |m: String| ImportError::node(g.file, node, m);
        let values = |k: usize| -> Result<Option<&[f64]>, ImportError> {
            match node.input.get(k) {
                Some(name) if !name.is_empty() => Ok(g.constant(name)?.map(|(_, v)| v)),
                _ => Ok(None),
            }
        };
        if let Some(v) = values(1)? {
            if let Some(x) = v.iter().find(|x| !(x.is_finite() && **x > 0.0)) {
                return Err(err(format!("scale {x} is not a finite positive number")));
            }
        }
        if let Some(v) = values(2)? {
            if let Some(x) = v.iter().find(|x| !x.is_finite()) {
                return Err(err(format!("zero point {x} is not a finite number")));
            }
        }
        for flag in ["signed", "narrow"] {
            if let Some(a) = node.attribute.iter().find(|a| a.name == flag) {
                if a.i != 0 && a.i != 1 {
                    return Err(err(format!("attribute {flag} is {}; QONNX takes 0 or 1", a.i)));
                }
            }
        }
    }
    Ok(())
}

/// The format of a QONNX `Quant` node (domain `qonnx.custom_op.general`):
/// its scale, zero point and bit width must be constants, the scale one
/// power of two (a scalar, or a tensor of equal values), the zero point 0.
pub fn format(g: &Graph<'_>, node: &NodeProto) -> Result<Format, ImportError> {
    let err = |m: String| ImportError::node(g.file, node, m);
    if node.input.len() != 4 {
        return Err(err(format!("has {} inputs; Quant takes 4 (x, scale, zeropt, bitwidth)", node.input.len())));
    }
    let scalar = |k: usize, what: &str| -> Result<f64, ImportError> {
        let (_, v) = g.constant(&node.input[k])?.ok_or_else(|| err(format!("its {what} '{}' is not a constant", node.input[k])))?;
        match v {
            [] => Err(err(format!("its {what} is empty"))),
            [first, rest @ ..] if rest.iter().all(|x| x == first) => Ok(*first),
            _ => Err(err(format!("its {what} differs between channels; only one {what} per tensor is supported"))),
        }
    };
    let scale = scalar(1, "scale")?;
    let zeropt = scalar(2, "zero point")?;
    let bits = scalar(3, "bit width")?;
    if zeropt != 0.0 {
        return Err(err(format!("zero point {zeropt}: only 0 maps to an ap_fixed format")));
    }
    let frac = po2_frac_bits(scale).ok_or_else(|| err(format!("scale {scale} is not a power of two; only power-of-two scales map to an ap_fixed format")))?;
    if bits.fract() != 0.0 || !(1.0..=64.0).contains(&bits) {
        return Err(err(format!("bit width {bits}: an integer from 1 to 64 is supported")));
    }
    clipped_format(node, bits as u32, frac, "ROUND").map_err(err)
}

/// The format of QONNX's clip to the `width`-bit integer range (the node's
/// `signed` and `narrow` attributes) and rounding (its `rounding_mode`,
/// `default` if it names none) at scale `2^-frac`: the saturating cast of
/// `Quant` and of `Trunc` version 2.
pub fn clipped_format(node: &NodeProto, width: u32, frac: i32, default: &str) -> Result<Format, String> {
    let signed = Graph::int_attr(node, "signed", 1) != 0;
    let narrow = Graph::int_attr(node, "narrow", 0) != 0;
    if width == 1 && signed {
        return Err("a signed 1-bit Quant is bipolar (+-1) in QONNX, which has no ap_fixed format (QONNX's BipolarQuant is imported)".into());
    }
    if narrow && !signed {
        return Err(format!("narrow unsigned range 0..{} has no ap_fixed format", (1u128 << width) - 2));
    }
    let quant = mode(node, default)?;
    let overflow = if narrow { Overflow::SatSym } else { Overflow::Sat };
    let int_bits = width as i32 - frac;
    Format::new(signed, width, int_bits, quant, overflow).map_err(|e| format!("gives no ap_fixed format: {e}"))
}

/// The `ap_fixed` quantization mode of `node`'s `rounding_mode`
/// (`default` if it names none).
pub fn mode(node: &NodeProto, default: &str) -> Result<Quant, String> {
    let mode = Graph::string_attr(node, "rounding_mode", default);
    rounding(&mode).ok_or_else(|| format!("rounding mode {mode} has no ap_fixed quantization mode (ROUND, HALF_EVEN, FLOOR, DOWN, HALF_UP, HALF_DOWN do)"))
}

/// `F` of input `k` of `node`, a constant power of two `2^-F` (one value,
/// or a tensor of equal values); `what` names it in errors.
pub fn po2_input(g: &Graph<'_>, node: &NodeProto, k: usize, what: &str) -> Result<i32, ImportError> {
    let v = scalar_input(g, node, k, what)?;
    po2_frac_bits(v).ok_or_else(|| ImportError::node(g.file, node, format!("{what} {v} is not a power of two; only power-of-two scales map to an ap_fixed format")))
}

/// Input `k` of `node`: a constant of one value (a scalar, or a tensor of
/// equal values); `what` names it in errors.
pub fn scalar_input(g: &Graph<'_>, node: &NodeProto, k: usize, what: &str) -> Result<f64, ImportError> {
    let err = |m: String| ImportError::node(g.file, node, m);
    let name = node.input.get(k).map_or("", String::as_str);
    let (_, v) = g.constant(name)?.ok_or_else(|| err(format!("its {what} '{name}' is not a constant")))?;
    match v {
        [] => Err(err(format!("its {what} is empty"))),
        [first, rest @ ..] if rest.iter().all(|x| x == first) => Ok(*first),
        _ => Err(err(format!("its {what} differs between channels; only one {what} per tensor is supported"))),
    }
}

/// The format of QONNX's `BipolarQuant` values `±2^-frac`: `ap_fixed<2, 2-frac>`.
pub fn bipolar_format(frac: i32) -> Option<Format> {
    Format::new(true, 2, 2 - frac, Quant::Trn, Overflow::Sat).ok()
}

/// The codes of `BipolarQuant` of `values`: 1 where `x >= 0`, else -1
/// (QONNX's `np.where(x >= 0, 1, -1)`; NaN gives -1).
pub fn bipolar_codes(values: &[f64]) -> Vec<i128> {
    values.iter().map(|&x| if x >= 0.0 { 1 } else { -1 }).collect()
}

/// `F` such that `scale == 2^-F` exactly, if `scale` is a positive power of two.
pub fn po2_frac_bits(scale: f64) -> Option<i32> {
    if !(scale.is_finite() && scale > 0.0) {
        return None;
    }
    let e = scale.log2().round() as i32;
    (e.abs() <= 1000 && 2f64.powi(e) == scale).then_some(-e)
}

/// The raw codes of `values` quantized into `format`, as QONNX's `Quant`
/// node of that format computes them.
pub fn codes(g: &Graph<'_>, node: &NodeProto, format: Format, values: &[f64]) -> Result<Vec<i128>, ImportError> {
    values
        .iter()
        .map(|&x| format.quantize_f64(x).map_err(|_| ImportError::node(g.file, node, format!("quantizes the non-finite value {x}"))))
        .collect()
}

/// The exact format of constant `values` (a float bias without a `Quant`):
/// the fewest fraction bits that make every value an integer code, and the
/// fewest bits that hold the codes, if at most 64.
pub fn exact_format(values: &[f64]) -> Option<Format> {
    let frac = (0..=1000).find(|&f| values.iter().all(|&x| (x * 2f64.powi(f)).fract() == 0.0))?;
    let most = values.iter().map(|&x| (x * 2f64.powi(frac)).abs()).fold(0.0, f64::max);
    let width = signed_bits(most as u128)?;
    Format::new(true, width, width as i32 - frac, Quant::Trn, Overflow::Sat).ok()
}

/// Bits of a signed format that holds `-m..=m`, if at most 64.
pub fn signed_bits(m: u128) -> Option<u32> {
    let w = 128 - m.leading_zeros() + 1;
    (w <= 64).then_some(w)
}

/// The largest magnitude of a code of `f` (`2^(W-1)` for a signed format,
/// one less with `AP_SAT_SYM`; `2^W - 1` unsigned).
pub fn max_magnitude(f: Format) -> u128 {
    f.max_raw().max(-f.lossless_min_raw()) as u128
}
