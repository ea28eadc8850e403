//! A `MatMul`, `Gemm` or `Conv` node and the nodes after it that it
//! absorbs (a bias `Add`, a `Relu`, an activation `Quant`) as one dense or
//! conv2d layer: weights in fptgen's order (dense `[outputs, inputs]`,
//! conv OIHW to OHWI), fptgen's padding, and an accumulator that holds
//! every sum exactly.

use fptgen_sim::fixed::{Format, Overflow, Quant};

use super::error::ImportError;
use super::graph::Graph;
use super::network::{Kind, Mac};
use super::onnx::NodeProto;
use super::quant;
use super::lower::{bipolar, conv1x1, transpose};
use super::tail::{tail, Tail};
use super::walk::{is_bipolar, is_quant, is_standard, Shape};

/// A constant tensor's format, shape and codes: a `Quant` or
/// `BipolarQuant` of a constant (QONNX's quantized weights; bipolar weights
/// `±2^-F` in `ap_fixed<2, 2-F>`), a constant whose values are exact in
/// some fixed-point format, or a 2-D `Transpose` of one of these (Brevitas's
/// `QuantLinear` without a bias; [`transpose`]).
fn quantized_constant(g: &Graph<'_>, name: &str, reader: &NodeProto) -> Result<Option<(Format, Vec<usize>, Vec<i128>)>, ImportError> {
    if let Some(t) = g.producer(name).filter(|t| is_standard(t, "Transpose")) {
        let Some((f, shape, codes)) = quantized_constant(g, t.input.first().map_or("", String::as_str), t)? else { return Ok(None) };
        transpose::check(t, &shape).map_err(|m| ImportError::node(g.file, t, m))?;
        return Ok(Some((f, vec![shape[1], shape[0]], transpose::transpose(&codes, (shape[0], shape[1])))));
    }
    if let Some((shape, values)) = g.constant(name)? {
        let f = quant::exact_format(values)
            .ok_or_else(|| ImportError::node(g.file, reader, format!("constant '{name}' is not exact in a fixed-point format of at most 64 bits")))?;
        let codes = quant::codes(g, reader, f, values)?;
        return Ok(Some((f, shape.to_vec(), codes)));
    }
    if let Some(q) = g.producer(name).filter(|q| is_bipolar(q)) {
        let Some((shape, values)) = g.constant(q.input.first().map_or("", String::as_str))? else { return Ok(None) };
        if let Ok(frac) = quant::po2_input(g, q, 1, "scale") {
            let f = quant::bipolar_format(frac).ok_or_else(|| ImportError::node(g.file, q, format!("its scale 2^{} gives no ap_fixed format", -frac)))?;
            return Ok(Some((f, shape.to_vec(), quant::bipolar_codes(values))));
        }
        let (f, codes) = bipolar::weights(g, q, shape, values)?;
        return Ok(Some((f, shape.to_vec(), codes)));
    }
    let Some(q) = g.producer(name).filter(|q| is_quant(q)) else { return Ok(None) };
    let Some((shape, values)) = g.constant(q.input.first().map_or("", String::as_str))? else { return Ok(None) };
    let f = quant::format(g, q)?;
    let codes = quant::codes(g, q, f, values)?;
    Ok(Some((f, shape.to_vec(), codes)))
}

/// The weights of a `MatMul`/`Gemm` (to `[outputs, inputs]`, columns in
/// the order `order` gives) or a `Conv` (to `[filters, 3, 3, channels]`),
/// with the layer's geometry.
struct Weights {
    format: Format,
    codes: Vec<i128>,
    inputs: usize,
    outputs: usize,
    kind: Geometry,
}

enum Geometry {
    Dense,
    Conv { stride: usize, same: bool, out: (usize, usize) },
}

fn dense_weights(g: &Graph<'_>, node: &NodeProto, len: usize, order: Option<&[usize]>) -> Result<Weights, ImportError> {
    let err = |m: String| ImportError::node(g.file, node, m);
    let gemm = node.op_type == "Gemm";
    let trans_b = gemm && Graph::int_attr(node, "transB", 0) != 0;
    if gemm && (Graph::int_attr(node, "transA", 0) != 0 || Graph::float_attr(node, "alpha", 1.0) != 1.0 || Graph::float_attr(node, "beta", 1.0) != 1.0) {
        return Err(err("only transA 0, alpha 1 and beta 1 are supported".into()));
    }
    let (format, shape, codes) =
        quantized_constant(g, &node.input[1], node)?.ok_or_else(|| err(format!("its weights '{}' are neither a constant nor a Quant of one", node.input[1])))?;
    let (n_in, n_out) = match (shape.as_slice(), trans_b) {
        ([i, o], false) => (*i, *o),
        ([o, i], true) => (*i, *o),
        _ => return Err(err(format!("weights of shape {shape:?}: two dimensions expected"))),
    };
    if n_in != len {
        return Err(err(format!("weights take {n_in} inputs but the layer gets {len}")));
    }
    let col = |i: usize| order.map_or(i, |o| o[i]);
    let at = |o: usize, i: usize| if trans_b { codes[o * n_in + col(i)] } else { codes[col(i) * n_out + o] };
    let codes = (0..n_out).flat_map(|o| (0..n_in).map(move |i| (o, i))).map(|(o, i)| at(o, i)).collect();
    Ok(Weights { format, codes, inputs: n_in, outputs: n_out, kind: Geometry::Dense })
}

fn conv_weights(g: &Graph<'_>, node: &NodeProto, (h, w, c): (usize, usize, usize)) -> Result<Weights, ImportError> {
    let err = |m: String| ImportError::node(g.file, node, m);
    let ints = |name: &str, default: Vec<i64>| node.attribute.iter().find(|a| a.name == name).map_or(default, |a| a.ints.clone());
    if Graph::int_attr(node, "group", 1) != 1 || ints("dilations", vec![1, 1]) != [1, 1] {
        return Err(err("only group 1 and dilation 1 are supported".into()));
    }
    let stride = match ints("strides", vec![1, 1]).as_slice() {
        [1, 1] => 1,
        [2, 2] => 2,
        s => return Err(err(format!("strides {s:?}: 1 or 2 in both dimensions are supported"))),
    };
    let (format, shape, codes) =
        quantized_constant(g, &node.input[1], node)?.ok_or_else(|| err(format!("its weights '{}' are neither a constant nor a Quant of one", node.input[1])))?;
    let pads = ints("pads", vec![0, 0, 0, 0]);
    let (f, wc, codes, same) = match shape[..] {
        [f, wc, 3, 3] => (f, wc, codes, same_padding(g, node, (h, w), stride, &pads)?),
        [f, wc, 1, 1] => {
            conv1x1::check(h, w, stride, &pads).map_err(err)?;
            (f, wc, conv1x1::pad_kernel(&codes), true)
        }
        _ => return Err(err(format!("weights of shape {shape:?}: only 3x3 and 1x1 kernels [filters, channels, k, k] are supported"))),
    };
    if wc != c {
        return Err(err(format!("weights take {wc} channels but the layer gets {c}")));
    }
    let out = if same { (h.div_ceil(stride), w.div_ceil(stride)) } else { (h.saturating_sub(3) / stride + 1, w.saturating_sub(3) / stride + 1) };
    if !same && (h < 3 || w < 3) {
        return Err(err(format!("a 'valid' 3x3 convolution of a {h}x{w} image")));
    }
    Ok(Weights { format, codes: ohwi(&codes, f, c), inputs: c, outputs: f, kind: Geometry::Conv { stride, same, out } })
}

/// Whether a 3x3 `Conv`'s padding is TensorFlow's `same` (else `valid`);
/// an error naming the pads it would need when it is neither.
fn same_padding(g: &Graph<'_>, node: &NodeProto, (h, w): (usize, usize), stride: usize, pads: &[i64]) -> Result<bool, ImportError> {
    let auto = Graph::string_attr(node, "auto_pad", "NOTSET");
    let same_pads = |n: usize| {
        let out = n.div_ceil(stride);
        let pad = ((out - 1) * stride + 3).saturating_sub(n) as i64;
        (pad / 2, pad - pad / 2)
    };
    let ((t, b), (l, r)) = (same_pads(h), same_pads(w));
    match (auto.as_str(), pads) {
        ("NOTSET" | "", [0, 0, 0, 0]) | ("VALID", _) => Ok(false),
        ("NOTSET" | "", p) if p == [t, l, b, r] => Ok(true),
        ("SAME_UPPER", _) => Ok(true),
        _ => Err(ImportError::node(
            g.file,
            node,
            format!("pads {pads:?} (auto_pad {auto}) on a {h}x{w} input: fptgen pads 'same' as TensorFlow does ([{t}, {l}, {b}, {r}] here) or not at all ('valid')"),
        )),
    }
}

/// The dense or conv layer of `node` reading `x` (of `shape`, in
/// `x_format`) and the nodes after it that it absorbs; returns it, its
/// output's shape and the tensor where it ends.
pub(super) fn mac_layer<'g>(g: &Graph<'g>, node: &'g NodeProto, x: &str, shape: &Shape, x_format: Format) -> Result<(Kind, Shape, &'g str), ImportError> {
    let err = |m: String| ImportError::node(g.file, node, m);
    if node.input.first().map(String::as_str) != Some(x) || node.input.len() < 2 {
        return Err(err(format!("the activation '{x}' must be its first input and the weights its second")));
    }
    let wts = match (node.op_type.as_str(), shape) {
        ("Conv", Shape::Image(h, w, c)) => conv_weights(g, node, (*h, *w, *c))?,
        ("Conv", _) => return Err(err("convolves a vector".into())),
        (_, Shape::Vector(n, order)) => dense_weights(g, node, *n, order.as_deref())?,
        (_, Shape::Image(..)) => return Err(err("takes an image; a Flatten must come first".into())),
    };
    let n_out = wts.outputs;
    let (bias, Tail { relu, output, end }) = bias_and_tail(g, node, n_out)?;
    let (bias, b) = bias.unwrap_or((wts.format, vec![0; n_out]));
    let products = match wts.kind {
        Geometry::Dense => wts.inputs,
        Geometry::Conv { .. } => 9 * wts.inputs,
    };
    let accum = accumulator(wts.format, x_format, bias, products).ok_or_else(|| err("its exact accumulator needs more than 64 bits".into()))?;
    let mac = Mac { inputs: wts.inputs, outputs: n_out, relu, weight: wts.format, bias, accum, output: output.unwrap_or(accum), w: wts.codes, b, fold: None };
    Ok(match wts.kind {
        Geometry::Dense => (Kind::Dense(mac), Shape::Vector(n_out, None), end),
        Geometry::Conv { stride, same, out } => (Kind::Conv { mac, stride, same }, Shape::Image(out.0, out.1, n_out), end),
    })
}

/// A bias's format and codes.
type Bias = (Format, Vec<i128>);

/// The bias of `node` (its input `C`/`B`, or a constant `Add` right after
/// it) and the `Relu` and `Quant` it absorbs after that.
fn bias_and_tail<'g>(g: &Graph<'g>, node: &'g NodeProto, n_out: usize) -> Result<(Option<Bias>, Tail<'g>), ImportError> {
    let mut end = g.output(node)?;
    let bias_name = if node.op_type != "MatMul" { node.input.get(2).filter(|c| !c.is_empty()).cloned() } else { None };
    let mut bias = match bias_name {
        Some(c) => Some(bias_of(g, node, &c, n_out)?),
        None => None,
    };
    if let (None, Some(add)) = (&bias, g.only_consumer(end).filter(|n| is_standard(n, "Add"))) {
        let other = add.input.iter().find(|i| i.as_str() != end).cloned().unwrap_or_default();
        if !g.is_activation(&other) {
            bias = Some(bias_of(g, add, &other, n_out)?);
            end = g.output(add)?;
        }
    }
    Ok((bias, tail(g, end)?))
}

/// The kernel size of a `Conv` whose weights are a square 5x5 or 7x7
/// kernel: one that only `--lower approximate` maps
/// ([`super::lower::stacked_conv`]); `None` for any other.
pub(super) fn large_kernel(g: &Graph<'_>, node: &NodeProto) -> Result<Option<usize>, ImportError> {
    let Some(w) = node.input.get(1) else { return Ok(None) };
    let Some((_, shape, _)) = quantized_constant(g, w, node)? else { return Ok(None) };
    Ok(match shape[..] {
        [_, _, k, k2] if k == k2 && (k == 5 || k == 7) => Some(k),
        _ => None,
    })
}

/// A 5x5 or 7x7 `Conv` as the import reads it, before its rewrite into
/// stacked 3x3 convolutions ([`super::lower::stacked_conv`]).
pub struct LargeConv<'g> {
    /// Weight format.
    pub weight: Format,
    /// Weight codes, ONNX's OIHW order, `k`x`k`.
    pub w: Vec<i128>,
    /// Filters (output channels).
    pub filters: usize,
    /// Input channels.
    pub channels: usize,
    /// The kernel size `k`.
    pub kernel: usize,
    /// The bias's format and codes (zeros in the weight format if none).
    pub bias: (Format, Vec<i128>),
    /// Whether a `Relu` follows.
    pub relu: bool,
    /// The activation `Quant`'s format, if one follows.
    pub output: Option<Format>,
    /// The tensor where the node and what it absorbs end.
    pub end: &'g str,
}

/// Reads a 5x5 or 7x7 `Conv` reading activation `x` of `c` channels with
/// its bias, `Relu` and `Quant`; refuses a geometry the stacked rewrite
/// does not cover ([`super::lower::stacked_conv::check`]).
pub(super) fn large_conv<'g>(g: &Graph<'g>, node: &'g NodeProto, x: &str, c: usize) -> Result<LargeConv<'g>, ImportError> {
    let err = |m: String| ImportError::node(g.file, node, m);
    if node.input.first().map(String::as_str) != Some(x) {
        return Err(err(format!("the activation '{x}' must be its first input and the weights its second")));
    }
    let ints = |name: &str, default: Vec<i64>| node.attribute.iter().find(|a| a.name == name).map_or(default, |a| a.ints.clone());
    let (format, shape, codes) =
        quantized_constant(g, &node.input[1], node)?.ok_or_else(|| err(format!("its weights '{}' are neither a constant nor a Quant of one", node.input[1])))?;
    let [f, wc, k, _] = shape[..] else { return Err(err(format!("weights of shape {shape:?}: [filters, channels, k, k] expected"))) };
    let geometry = super::lower::stacked_conv::Geometry {
        kernel: k,
        strides: ints("strides", vec![1, 1]),
        pads: ints("pads", vec![0, 0, 0, 0]),
        auto_pad: Graph::string_attr(node, "auto_pad", "NOTSET"),
        group: Graph::int_attr(node, "group", 1),
        dilations: ints("dilations", vec![1, 1]),
    };
    super::lower::stacked_conv::check(&geometry).map_err(err)?;
    if wc != c {
        return Err(err(format!("weights take {wc} channels but the layer gets {c}")));
    }
    let (bias, Tail { relu, output, end }) = bias_and_tail(g, node, f)?;
    let bias = bias.unwrap_or((format, vec![0; f]));
    Ok(LargeConv { weight: format, w: codes, filters: f, channels: c, kernel: k, bias, relu, output, end })
}

/// Conv weight codes `[filters, channels, 3, 3]` (ONNX's OIHW) in
/// fptgen's order `[filters, 3, 3, channels]`.
pub fn ohwi(codes: &[i128], f: usize, c: usize) -> Vec<i128> {
    (0..f * 9 * c)
        .map(|j| {
            let (o, ky, kx, k) = (j / (9 * c), j / (3 * c) % 3, j / c % 3, j % c);
            codes[((o * c + k) * 3 + ky) * 3 + kx]
        })
        .collect()
}

/// The bias `name` read by `node` (the layer or the `Add`): `n` values,
/// in a tensor whose other dimensions are 1 (`[n]`, `[1, n]`, `[1, n, 1, 1]`).
fn bias_of(g: &Graph<'_>, node: &NodeProto, name: &str, n: usize) -> Result<(Format, Vec<i128>), ImportError> {
    let (f, shape, codes) =
        quantized_constant(g, name, node)?.ok_or_else(|| ImportError::node(g.file, node, format!("its bias '{name}' is neither a constant nor a Quant of one")))?;
    if codes.len() != n || shape.iter().filter(|&&d| d != 1).count() > 1 {
        return Err(ImportError::node(g.file, node, format!("bias of shape {shape:?}: {n} values along one dimension expected")));
    }
    Ok((f, codes))
}

/// The accumulator that holds every sum exactly: the fraction bits of the
/// finest of the products and the bias, and enough integer bits for `n`
/// largest products plus the largest bias (so it never wraps).
pub fn accumulator(w: Format, x: Format, b: Format, n: usize) -> Option<Format> {
    let prod_frac = w.frac_bits() + x.frac_bits();
    let frac = prod_frac.max(b.frac_bits());
    let shift = |f: i32| u32::try_from(frac - f).ok().filter(|&s| s < 64);
    let products = (n as u128).checked_mul(quant::max_magnitude(w))?.checked_mul(quant::max_magnitude(x))?.checked_mul(1u128 << shift(prod_frac)?)?;
    let most = products.checked_add(quant::max_magnitude(b).checked_mul(1u128 << shift(b.frac_bits())?)?)?;
    let width = quant::signed_bits(most)?;
    Format::new(true, width, width as i32 - frac, Quant::Trn, Overflow::Wrap).ok()
}
