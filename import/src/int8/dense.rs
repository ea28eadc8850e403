//! A `MatMul` or `Gemm` in the int8 domain, with the bias, `Relu` and
//! 8-bit activation `Quant` after it, as fptgen's `dense_int8` layer
//! (TFLite's int8 fully connected kernel, `docs/numerics.md`).
//!
//! The weights are a `Quant` of a constant (through a 2-D `Transpose` too,
//! as Brevitas writes a `QuantLinear` without a bias): signed, at most 8
//! bits, zero point 0, one scale per tensor or per output channel; their
//! codes are the ones QONNX's `Quant` computes in float32. The bias (a
//! constant or a `Quant` of one, from `Gemm`'s `C` or an `Add` after the
//! layer) is quantized to int32 at scale `s_in * s_w[c]`, as TFLite's
//! converter does: `round(b / (s_in * s_w[c]))`, ties away from zero
//! (exact when the bias is a `Quant` at that scale, Brevitas's `Int32Bias`).

use fptgen_sim::layers::dense_int8::{Affine, DenseInt8, Int8Activation};
use fptgen_sim::int8::Rounding;
use fptgen_sim::layers::Trainable;

use super::super::error::ImportError;
use super::super::graph::Graph;
use super::super::lower::transpose;
use super::super::onnx::NodeProto;
use super::super::walk::{is_quant, is_standard};
use super::affine::{self, broadcast_index, constant_input, round, scale32};

/// A `dense_int8` layer as the import writes it.
#[derive(Debug, Clone)]
pub struct Dense {
    /// Number of inputs.
    pub inputs: usize,
    /// Number of outputs.
    pub outputs: usize,
    /// A `Relu` follows (before or after the output `Quant`).
    pub relu: bool,
    /// The input's quantization.
    pub input: Affine,
    /// The output `Quant`'s quantization.
    pub output: Affine,
    /// The weight scales: one, or one per output.
    pub weight_scales: Vec<f32>,
    /// Weight codes `[outputs, inputs]`, in `-127..=127`.
    pub w: Vec<i64>,
    /// Bias codes (int32), `[outputs]`.
    pub b: Vec<i64>,
    /// The bias's real values in the graph (0 without a bias), `[outputs]`.
    pub bias_real: Vec<f64>,
}

/// Codes and per-element scales of a tensor, with its shape.
struct Quantized {
    shape: Vec<usize>,
    codes: Vec<i64>,
    scales: Vec<f32>,
}

/// The weights `name` read by `node`: a `Quant` of a constant, or a
/// `Transpose` of one.
fn weights(g: &Graph<'_>, node: &NodeProto, name: &str) -> Result<Quantized, ImportError> {
    if let Some(t) = g.producer(name).filter(|t| is_standard(t, "Transpose")) {
        let q = weights(g, t, t.input.first().map_or("", String::as_str))?;
        transpose::check(t, &q.shape).map_err(|m| ImportError::node(g.file, t, m))?;
        let (r, c) = (q.shape[0], q.shape[1]);
        let at = |j: usize| (j % r) * c + j / r;
        return Ok(Quantized {
            shape: vec![c, r],
            codes: (0..r * c).map(|j| q.codes[at(j)]).collect(),
            scales: (0..r * c).map(|j| q.scales[at(j)]).collect(),
        });
    }
    let Some(q) = g.producer(name).filter(|q| is_quant(q)) else {
        return Err(ImportError::node(g.file, node, format!("its weights '{name}' are not a Quant of a constant; the int8 domain takes quantized weights")));
    };
    weight_quant(g, q)
}

/// The codes of a weight `Quant` `q` of a constant, as QONNX computes them
/// in float32: `round(clip(w / scale))`; signed, at most 8 bits, zero point 0.
fn weight_quant(g: &Graph<'_>, q: &NodeProto) -> Result<Quantized, ImportError> {
    let err = |m: String| ImportError::node(g.file, q, m);
    if q.input.len() != 4 {
        return Err(err(format!("has {} inputs; Quant takes 4 (x, scale, zeropt, bitwidth)", q.input.len())));
    }
    let (shape, values) = constant_input(g, q, 0, "input")?;
    let (s_shape, s_values) = constant_input(g, q, 1, "scale")?;
    let (_, z_values) = constant_input(g, q, 2, "zero point")?;
    let bits = affine::bit_width(g, q)?;
    if z_values.iter().any(|&z| z != 0.0) {
        return Err(err("a weight zero point other than 0: fptgen's int8 weights are symmetric (TFLite's, zero point 0)".into()));
    }
    if Graph::int_attr(q, "signed", 1) == 0 {
        return Err(err("unsigned weights: fptgen's int8 weights are signed (-127..=127)".into()));
    }
    if !(2..=8).contains(&bits) {
        return Err(err(format!("weight bit width {bits}: the int8 domain takes signed weights of 2 to 8 bits")));
    }
    let narrow = Graph::int_attr(q, "narrow", 0) != 0;
    let mode = Graph::string_attr(q, "rounding_mode", "ROUND");
    let hi = (1i64 << (bits - 1)) - 1;
    let lo = if narrow { -hi } else { -hi - 1 };
    let mut codes = Vec::with_capacity(values.len());
    let mut scales = Vec::with_capacity(values.len());
    for (k, &w) in values.iter().enumerate() {
        let s = broadcast_index(s_shape, shape, k).map(|j| s_values[j]).ok_or_else(|| {
            err(format!("its scale of shape {s_shape:?} does not broadcast to the weights' {shape:?}"))
        })?;
        let s = scale32(g, q, s)?;
        let y = ((w as f32) / s).clamp(lo as f32, hi as f32);
        let c = round(&mode, y).ok_or_else(|| err(format!("unknown rounding mode {mode}")))?;
        if !c.is_finite() {
            return Err(err(format!("quantizes the non-finite value {w}")));
        }
        if c == -128.0 {
            return Err(err(format!(
                "weight {k} quantizes to -128; fptgen's int8 weights are symmetric (-127..=127, TFLite's): export it narrow"
            )));
        }
        codes.push(c as i64);
        scales.push(s);
    }
    Ok(Quantized { shape: shape.to_vec(), codes, scales })
}

/// The real values of bias `name` read by `node`: a constant, or QONNX's
/// `Quant` of one (its dequantized float32 values).
fn bias_values(g: &Graph<'_>, node: &NodeProto, name: &str, n: usize) -> Result<Vec<f64>, ImportError> {
    let values: Vec<f64> = if let Some((_, v)) = g.constant(name)? {
        v.to_vec()
    } else if let Some(q) = g.producer(name).filter(|q| is_quant(q)) {
        let (shape, values) = constant_input(g, q, 0, "input")?;
        let (s_shape, s_values) = constant_input(g, q, 1, "scale")?;
        let (z_shape, z_values) = constant_input(g, q, 2, "zero point")?;
        let bits = affine::bit_width(g, q)?;
        let signed = Graph::int_attr(q, "signed", 1) != 0;
        let narrow = Graph::int_attr(q, "narrow", 0) != 0;
        let mode = Graph::string_attr(q, "rounding_mode", "ROUND");
        let (lo, hi) = match (signed, bits) {
            (true, _) => (-(2f64.powi(bits as i32 - 1)) + f64::from(u8::from(narrow)), 2f64.powi(bits as i32 - 1) - 1.0),
            (false, _) => (0.0, 2f64.powi(bits as i32) - 1.0 - f64::from(u8::from(narrow))),
        };
        let err = |m: String| ImportError::node(g.file, q, m);
        let mut out = Vec::with_capacity(values.len());
        for (k, &x) in values.iter().enumerate() {
            let s = broadcast_index(s_shape, shape, k).map(|j| s_values[j] as f32).ok_or_else(|| err("its scale does not broadcast to its input".into()))?;
            let z = broadcast_index(z_shape, shape, k).map(|j| z_values[j] as f32).ok_or_else(|| err("its zero point does not broadcast to its input".into()))?;
            let y = ((x as f32) / s + z).clamp(lo as f32, hi as f32);
            let c = round(&mode, y).ok_or_else(|| err(format!("unknown rounding mode {mode}")))?;
            out.push(f64::from((c - z) * s));
        }
        out
    } else {
        return Err(ImportError::node(g.file, node, format!("its bias '{name}' is neither a constant nor a Quant of one")));
    };
    if values.len() != n {
        return Err(ImportError::node(g.file, node, format!("its bias has {} values; {n} expected", values.len())));
    }
    Ok(values)
}

/// The `MatMul` or `Gemm` `node` reading `n` int8 values quantized by
/// `input`, with the bias, `Relu` and 8-bit `Quant` after it, as a
/// `dense_int8` layer; returns it and the tensor where it ends.
pub fn layer<'g>(g: &Graph<'g>, node: &'g NodeProto, x: &str, n: usize, input: Affine) -> Result<(Dense, &'g str), ImportError> {
    let err = |m: String| ImportError::node(g.file, node, m);
    if node.input.first().map(String::as_str) != Some(x) || node.input.len() < 2 {
        return Err(err(format!("the activation '{x}' must be its first input and the weights its second")));
    }
    let gemm = node.op_type == "Gemm";
    let trans_b = gemm && Graph::int_attr(node, "transB", 0) != 0;
    if gemm && (Graph::int_attr(node, "transA", 0) != 0 || Graph::float_attr(node, "alpha", 1.0) != 1.0 || Graph::float_attr(node, "beta", 1.0) != 1.0) {
        return Err(err("only transA 0, alpha 1 and beta 1 are supported".into()));
    }
    let q = weights(g, node, &node.input[1])?;
    let (n_in, n_out) = match (q.shape.as_slice(), trans_b) {
        ([i, o], false) => (*i, *o),
        ([o, i], true) => (*i, *o),
        _ => return Err(err(format!("weights of shape {:?}: two dimensions expected", q.shape))),
    };
    if n_in != n {
        return Err(err(format!("weights take {n_in} inputs but the layer gets {n}")));
    }
    let at = |o: usize, i: usize| if trans_b { o * n_in + i } else { i * n_out + o };
    let w: Vec<i64> = (0..n_out).flat_map(|o| (0..n_in).map(move |i| (o, i))).map(|(o, i)| q.codes[at(o, i)]).collect();
    // One scale per output channel (constant along the inputs).
    let mut per_channel = Vec::with_capacity(n_out);
    for o in 0..n_out {
        let s = q.scales[at(o, 0)];
        if (0..n_in).any(|i| q.scales[at(o, i)].to_bits() != s.to_bits()) {
            return Err(err(format!(
                "its weight scales differ along the inputs of output {o}; fptgen's dense_int8 takes one scale per tensor or per output channel"
            )));
        }
        per_channel.push(s);
    }
    let weight_scales = if per_channel.iter().all(|s| s.to_bits() == per_channel[0].to_bits()) { vec![per_channel[0]] } else { per_channel.clone() };

    // The bias: Gemm's C, or an Add of a constant after the layer.
    let mut end = g.output(node)?;
    let mut bias = match node.input.get(2).filter(|c| gemm && !c.is_empty()) {
        Some(c) => Some(bias_values(g, node, c, n_out)?),
        None => None,
    };
    if let (None, Some(add)) = (&bias, g.only_consumer(end).filter(|a| is_standard(a, "Add"))) {
        let other = add.input.iter().find(|i| i.as_str() != end).cloned().unwrap_or_default();
        if !g.is_activation(&other) {
            bias = Some(bias_values(g, add, &other, n_out)?);
            end = g.output(add)?;
        }
    }
    // The Relu and the 8-bit Quant, in either order.
    let (mut relu, mut output) = (false, None);
    while let Some(t) = g.only_consumer(end) {
        if is_standard(t, "Relu") && !relu {
            relu = true;
        } else if is_quant(t) && output.is_none() {
            output = Some(affine::activation(g, t)?);
        } else {
            break;
        }
        end = g.output(t)?;
    }
    let Some(output) = output else {
        return Err(err(
            "its output is not quantized by an 8-bit Quant (the graph's scales put it in fptgen's int8 domain, where every layer's output is int8)".into(),
        ));
    };
    let activation = if relu { Int8Activation::Relu } else { Int8Activation::Linear };
    let layer = DenseInt8::new(n_in, n_out, activation, input, output, &weight_scales, Rounding::default(), Trainable::default())
        .map_err(|(_, m)| err(format!("no int8 layer: {m}")))?;
    let (lo, hi) = layer.bias_range();
    let bias_real = bias.clone().unwrap_or_else(|| vec![0.0; n_out]);
    let b = match bias {
        None => vec![0; n_out],
        Some(values) => {
            let mut b = Vec::with_capacity(n_out);
            for (c, v) in values.iter().enumerate() {
                let s = f64::from(input.scale()) * f64::from(per_channel[c]);
                let code = (v / s).round();
                if !(lo as f64..=hi as f64).contains(&code) {
                    return Err(err(format!(
                        "bias {c} ({v}) is {code} in int32 codes of scale s_in*s_w = {s:e}, outside {lo}..={hi}, where no int32 accumulator can overflow"
                    )));
                }
                b.push(code as i64);
            }
            b
        }
    };
    Ok((Dense { inputs: n_in, outputs: n_out, relu, input, output, weight_scales, w, b, bias_real }, end))
}
