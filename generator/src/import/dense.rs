//! The walk from the graph's input to its output, mapping a chain of
//! dense layers: an input `Quant`, then per layer `MatMul` (or `Gemm`),
//! an optional bias `Add`, an optional `Relu` and an optional activation
//! `Quant` (before or after the `Relu`); `Flatten` and `Reshape` to a
//! vector between them.

use fptgen_sim::fixed::{Format, Overflow, Quant};

use super::error::ImportError;
use super::graph::Graph;
use super::onnx::NodeProto;
use super::quant;

/// Domains of QONNX's `Quant` (Brevitas's older exports use `onnx.brevitas`).
const QUANT_DOMAINS: [&str; 2] = ["qonnx.custom_op.general", "onnx.brevitas"];

/// A network as the import maps it, before it is written out.
#[derive(Debug, Clone, PartialEq)]
pub struct Network {
    /// The input's length.
    pub input_len: usize,
    /// The input's format (its `Quant`'s).
    pub input_format: Format,
    /// The layers, input to output.
    pub layers: Vec<DenseLayer>,
}

/// One dense layer and the nodes it came from.
#[derive(Debug, Clone, PartialEq)]
pub struct DenseLayer {
    /// The `MatMul` or `Gemm` node's name and operator.
    pub source: String,
    /// Inputs.
    pub inputs: usize,
    /// Outputs.
    pub outputs: usize,
    /// Whether a `Relu` follows.
    pub relu: bool,
    /// Weight format.
    pub weight: Format,
    /// Bias format.
    pub bias: Format,
    /// Accumulator format (wide enough that nothing rounds or saturates).
    pub accum: Format,
    /// Output format (the activation `Quant`'s, or the accumulator's).
    pub output: Format,
    /// Weight codes, `[outputs, inputs]` in C order.
    pub w: Vec<i128>,
    /// Bias codes.
    pub b: Vec<i128>,
}

/// QONNX's `Quant`, or `IntQuant` (its newer name, the same function).
fn is_quant(n: &NodeProto) -> bool {
    (n.op_type == "Quant" || n.op_type == "IntQuant") && QUANT_DOMAINS.contains(&n.domain.as_str())
}

fn is_standard(n: &NodeProto, op: &str) -> bool {
    n.op_type == op && (n.domain.is_empty() || n.domain == "ai.onnx")
}

/// Maps the graph to a [`Network`], or says which node cannot be mapped and why.
pub fn network(g: &Graph<'_>) -> Result<Network, ImportError> {
    let (input, input_len) = graph_input(g)?;
    let first = g.sole_consumer(input)?.ok_or_else(|| ImportError::file(g.file, format!("nothing reads the input '{input}'")))?;
    if !is_quant(first) {
        return Err(ImportError::node(g.file, first, "reads the graph input, which must be quantized first by a QONNX Quant node"));
    }
    let input_format = quant::format(g, first)?;
    let mut cur = g.output(first)?;
    let (mut len, mut format) = (input_len, input_format);
    let mut layers = Vec::new();
    while let Some(node) = g.sole_consumer(cur)? {
        if is_standard(node, "Flatten") || is_standard(node, "Reshape") {
            check_to_vector(g, node, len)?;
            cur = g.output(node)?;
        } else if is_standard(node, "MatMul") || is_standard(node, "Gemm") {
            let (layer, end) = dense(g, node, cur, len, format)?;
            (len, format) = (layer.outputs, layer.output);
            layers.push(layer);
            cur = end;
        } else {
            return Err(ImportError::node(g.file, node, "no mapping to fptgen's layers (dense networks are imported: Quant, MatMul, Gemm, Add, Relu, Flatten, Reshape)"));
        }
    }
    match g.proto.output.as_slice() {
        [o] if o.name == cur => {}
        [o] => return Err(ImportError::file(g.file, format!("the chain from the input ends at '{cur}', not at the graph output '{}'", o.name))),
        outs => return Err(ImportError::file(g.file, format!("the graph has {} outputs; one is supported", outs.len()))),
    }
    if layers.is_empty() {
        return Err(ImportError::file(g.file, "the graph has no MatMul or Gemm layer"));
    }
    Ok(Network { input_len, input_format, layers })
}

/// The graph's one non-constant input and its length: shape `[batch, n]`,
/// where the batch dimension is 1 or named.
fn graph_input<'g>(g: &'g Graph<'_>) -> Result<(&'g str, usize), ImportError> {
    let inputs: Vec<_> = g.proto.input.iter().filter(|i| g.constant(&i.name).is_none()).collect();
    let [input] = inputs.as_slice() else {
        return Err(ImportError::file(g.file, format!("the graph has {} inputs; one is supported", inputs.len())));
    };
    let dims = input.r#type.as_ref().and_then(|t| t.tensor_type.as_ref()).and_then(|t| t.shape.as_ref()).map(|s| s.dim.as_slice());
    let bad = |why: &str| ImportError::file(g.file, format!("input '{}': {why}", input.name));
    let Some(dims) = dims else { return Err(bad("has no shape")) };
    let fixed: Vec<Option<i64>> = dims.iter().map(|d| d.dim_value.filter(|&v| v > 0)).collect();
    match fixed.as_slice() {
        [batch, Some(n)] if batch.is_none_or(|b| b == 1) => usize::try_from(*n).map(|n| (input.name.as_str(), n)).map_err(|_| bad("is too long")),
        [_, None] => Err(bad("has a dynamic size; only the batch dimension may be dynamic")),
        _ => Err(bad(&format!("has {} dimensions; [batch, n] vectors are imported (images are not yet)", dims.len()))),
    }
}

/// A `Flatten` or `Reshape` of a vector of `len` to `[batch, len]`: no layer.
fn check_to_vector(g: &Graph<'_>, node: &NodeProto, len: usize) -> Result<(), ImportError> {
    if node.op_type == "Flatten" {
        return match Graph::int_attr(node, "axis", 1) {
            1 => Ok(()),
            a => Err(ImportError::node(g.file, node, format!("axis {a}: only axis 1 (keep the batch) is supported"))),
        };
    }
    let shape = node.input.get(1).and_then(|s| g.constant(s)).map(|(_, v)| v);
    match shape {
        Some([b, n]) if (*b == 1.0 || *b == -1.0) && (*n == -1.0 || *n == len as f64) => Ok(()),
        _ => Err(ImportError::node(g.file, node, format!("only a reshape of the vector to [batch, {len}] (a constant shape) is supported"))),
    }
}

/// A constant tensor's format, shape and codes: a `Quant` of a constant
/// (QONNX's quantized weights), or a constant whose values are exact in
/// some fixed-point format.
fn quantized_constant(g: &Graph<'_>, name: &str, reader: &NodeProto) -> Result<Option<(Format, Vec<usize>, Vec<i128>)>, ImportError> {
    if let Some((shape, values)) = g.constant(name) {
        let f = quant::exact_format(values)
            .ok_or_else(|| ImportError::node(g.file, reader, format!("constant '{name}' is not exact in a fixed-point format of at most 64 bits")))?;
        let codes = quant::codes(g, reader, f, values)?;
        return Ok(Some((f, shape.to_vec(), codes)));
    }
    let Some(q) = g.producer(name).filter(|q| is_quant(q)) else { return Ok(None) };
    let Some((shape, values)) = q.input.first().and_then(|i| g.constant(i)) else { return Ok(None) };
    let f = quant::format(g, q)?;
    let codes = quant::codes(g, q, f, values)?;
    Ok(Some((f, shape.to_vec(), codes)))
}

/// The dense layer of `node` (`MatMul` or `Gemm`) reading `x` (`len`
/// values in `x_format`) and the nodes after it that it absorbs; returns
/// it and the tensor where it ends.
fn dense<'g>(g: &Graph<'g>, node: &'g NodeProto, x: &str, len: usize, x_format: Format) -> Result<(DenseLayer, &'g str), ImportError> {
    let err = |m: String| ImportError::node(g.file, node, m);
    let gemm = node.op_type == "Gemm";
    let trans_b = gemm && Graph::int_attr(node, "transB", 0) != 0;
    if gemm && (Graph::int_attr(node, "transA", 0) != 0 || Graph::float_attr(node, "alpha", 1.0) != 1.0 || Graph::float_attr(node, "beta", 1.0) != 1.0) {
        return Err(err("only transA 0, alpha 1 and beta 1 are supported".into()));
    }
    if node.input.first().map(String::as_str) != Some(x) || node.input.len() < 2 {
        return Err(err(format!("the activation '{x}' must be its first input and the weights its second")));
    }
    let (weight, shape, codes) =
        quantized_constant(g, &node.input[1], node)?.ok_or_else(|| err(format!("its weights '{}' are neither a constant nor a Quant of one", node.input[1])))?;
    let (n_in, n_out) = match (shape.as_slice(), trans_b) {
        ([i, o], false) => (*i, *o),
        ([o, i], true) => (*i, *o),
        _ => return Err(err(format!("weights of shape {shape:?}: two dimensions expected"))),
    };
    if n_in != len {
        return Err(err(format!("weights take {n_in} inputs but the layer gets {len}")));
    }
    // fptgen's w is [outputs, inputs].
    let w: Vec<i128> = (0..n_out).flat_map(|o| (0..n_in).map(move |i| (o, i))).map(|(o, i)| if trans_b { codes[o * n_in + i] } else { codes[i * n_out + o] }).collect();
    let mut end = g.output(node)?;
    let bias_name = if gemm { node.input.get(2).filter(|c| !c.is_empty()).cloned() } else { None };
    let mut bias = match bias_name {
        Some(c) => Some(bias_of(g, node, &c, n_out)?),
        None => None,
    };
    let mut next = g.sole_consumer(end)?;
    if let (None, Some(add)) = (&bias, next.filter(|n| is_standard(n, "Add"))) {
        let other = add.input.iter().find(|i| i.as_str() != end).cloned().unwrap_or_default();
        bias = Some(bias_of(g, add, &other, n_out)?);
        end = g.output(add)?;
        next = g.sole_consumer(end)?;
    }
    let mut relu = false;
    let mut output = None;
    for _ in 0..2 {
        match next {
            Some(n) if is_standard(n, "Relu") && !relu => relu = true,
            Some(n) if is_quant(n) && output.is_none() => output = Some(quant::format(g, n)?),
            _ => break,
        }
        end = g.output(next.unwrap_or(node))?;
        next = g.sole_consumer(end)?;
    }
    let (bias, b) = bias.unwrap_or((weight, vec![0; n_out]));
    let accum = accumulator(weight, x_format, bias, n_in).ok_or_else(|| err("its exact accumulator needs more than 64 bits".into()))?;
    let layer = DenseLayer {
        source: format!("{} '{}'", node.op_type, node.name),
        inputs: n_in,
        outputs: n_out,
        relu,
        weight,
        bias,
        accum,
        output: output.unwrap_or(accum),
        w,
        b,
    };
    Ok((layer, end))
}

/// The bias `name` read by `node` (the `Gemm` or the `Add`): `n` values.
fn bias_of(g: &Graph<'_>, node: &NodeProto, name: &str, n: usize) -> Result<(Format, Vec<i128>), ImportError> {
    let (f, shape, codes) =
        quantized_constant(g, name, node)?.ok_or_else(|| ImportError::node(g.file, node, format!("its bias '{name}' is neither a constant nor a Quant of one")))?;
    if codes.len() != n || shape.iter().rev().skip(1).any(|&d| d != 1) {
        return Err(ImportError::node(g.file, node, format!("bias of shape {shape:?}: [{n}] expected")));
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
