//! The walk from the graph's input to its output, mapping a chain of
//! layers: an input `Quant`, then per layer `MatMul`, `Gemm` or `Conv`
//! (3x3; [`super::mac`]), `MaxPool` 2x2, and `Flatten` or `Reshape` to a
//! vector, between them.
//!
//! ONNX images are NCHW, fptgen's `[h, w, c]`: the input shape is
//! permuted, and a flattened image's values are in fptgen's (h, w, c)
//! order, so the dense layer after it takes its weight columns in that
//! order.

use super::error::ImportError;
use super::graph::Graph;
use super::mac::mac_layer;
use super::network::{Kind, Layer, Network};
use super::onnx::NodeProto;
use super::quant;

/// Domains of QONNX's `Quant` (Brevitas's older exports use `onnx.brevitas`).
const QUANT_DOMAINS: [&str; 2] = ["qonnx.custom_op.general", "onnx.brevitas"];

/// The tensor between layers: a vector, or an image `[h, w, c]`; with the
/// order of a flattened image's values (fptgen's index to ONNX's index)
/// until a dense layer takes it.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Shape {
    /// A vector, and for a flattened image fptgen's index to ONNX's.
    Vector(usize, Option<Vec<usize>>),
    /// An image `[h, w, c]`.
    Image(usize, usize, usize),
}

/// QONNX's `Quant`, or `IntQuant` (its newer name, the same function).
pub(super) fn is_quant(n: &NodeProto) -> bool {
    (n.op_type == "Quant" || n.op_type == "IntQuant") && QUANT_DOMAINS.contains(&n.domain.as_str())
}

/// An operator of ONNX's standard domain.
pub(super) fn is_standard(n: &NodeProto, op: &str) -> bool {
    n.op_type == op && (n.domain.is_empty() || n.domain == "ai.onnx")
}
/// Maps the graph to a [`Network`], or says which node cannot be mapped and why.
pub fn network(g: &Graph<'_>) -> Result<Network, ImportError> {
    let (input, mut shape) = graph_input(g)?;
    let first = g.sole_consumer(input)?.ok_or_else(|| ImportError::file(g.file, format!("nothing reads the input '{input}'")))?;
    if !is_quant(first) {
        return Err(ImportError::node(g.file, first, "reads the graph input, which must be quantized first by a QONNX Quant node"));
    }
    let input_format = quant::format(g, first)?;
    let input_shape = match shape {
        Shape::Vector(n, _) => vec![n],
        Shape::Image(h, w, c) => vec![h, w, c],
    };
    let mut cur = g.output(first)?;
    let mut format = input_format;
    let mut layers = Vec::new();
    let mut last = first;
    while let Some(node) = g.sole_consumer(cur)? {
        let layer = |kind| Layer { source: format!("{} '{}'", node.op_type, node.name), kind };
        if is_standard(node, "Flatten") || is_standard(node, "Reshape") {
            check_to_vector(g, node)?;
            if let Shape::Image(h, w, c) = shape {
                // fptgen index (y, x, k) holds ONNX's (k, y, x).
                let order = (0..h * w * c).map(|j| (j % c) * h * w + j / c).collect();
                shape = Shape::Vector(h * w * c, Some(order));
                layers.push(layer(Kind::Flatten));
            }
            cur = g.output(node)?;
        } else if is_standard(node, "MaxPool") {
            let Shape::Image(h, w, c) = shape else { return Err(ImportError::node(g.file, node, "pools a vector")) };
            check_pool(g, node, h, w)?;
            shape = Shape::Image(h / 2, w / 2, c);
            layers.push(layer(Kind::MaxPool));
            cur = g.output(node)?;
        } else if is_standard(node, "MatMul") || is_standard(node, "Gemm") || is_standard(node, "Conv") {
            let (kind, next_shape, end) = mac_layer(g, node, cur, &shape, format)?;
            format = match &kind {
                Kind::Dense(m) | Kind::Conv { mac: m, .. } => m.output,
                _ => format,
            };
            (shape, cur) = (next_shape, end);
            layers.push(layer(kind));
        } else {
            return Err(ImportError::node(
                g.file,
                node,
                "no mapping to fptgen's layers (imported: Quant, IntQuant, MatMul, Gemm, Conv 3x3, MaxPool 2x2, Add of a bias, Relu, Flatten, Reshape)",
            ));
        }
        last = node;
    }
    match g.proto.output.as_slice() {
        [o] if o.name == cur => {}
        [o] => return Err(ImportError::file(g.file, format!("the chain from the input ends at '{cur}', not at the graph output '{}'", o.name))),
        outs => return Err(ImportError::file(g.file, format!("the graph has {} outputs; one is supported", outs.len()))),
    }
    if let Shape::Vector(_, Some(_)) = shape {
        return Err(ImportError::node(g.file, last, "the network ends in a flattened image, whose order differs between ONNX (c, h, w) and fptgen (h, w, c)"));
    }
    if !layers.iter().any(|l| matches!(l.kind, Kind::Dense(_) | Kind::Conv { .. })) {
        return Err(ImportError::file(g.file, "the graph has no MatMul, Gemm or Conv layer"));
    }
    Ok(Network { input_shape, input_format, layers })
}

/// The graph's one non-constant input and its shape: `[batch, n]` or
/// `[batch, c, h, w]`, where the batch dimension is 1 or named.
fn graph_input<'g>(g: &'g Graph<'_>) -> Result<(&'g str, Shape), ImportError> {
    let inputs: Vec<_> = g.proto.input.iter().filter(|i| !g.is_constant(&i.name)).collect();
    let [input] = inputs.as_slice() else {
        return Err(ImportError::file(g.file, format!("the graph has {} inputs; one is supported", inputs.len())));
    };
    let dims = input.r#type.as_ref().and_then(|t| t.tensor_type.as_ref()).and_then(|t| t.shape.as_ref()).map(|s| s.dim.as_slice());
    let bad = |why: &str| ImportError::file(g.file, format!("input '{}': {why}", input.name));
    let Some(dims) = dims else { return Err(bad("has no shape")) };
    let fixed: Vec<Option<usize>> = dims.iter().map(|d| d.dim_value.filter(|&v| v > 0).and_then(|v| usize::try_from(v).ok())).collect();
    let batch_ok = fixed.first().is_some_and(|b| b.is_none_or(|b| b == 1));
    match (batch_ok, &fixed[..]) {
        (true, [_, Some(n)]) => Ok((input.name.as_str(), Shape::Vector(*n, None))),
        (true, [_, Some(c), Some(h), Some(w)]) => Ok((input.name.as_str(), Shape::Image(*h, *w, *c))),
        (true, [_, rest @ ..]) if rest.iter().any(Option::is_none) => Err(bad("has a dynamic size; only the batch dimension may be dynamic")),
        _ => Err(bad(&format!("has {} dimensions; [batch, n] vectors and [batch, c, h, w] images are imported", dims.len()))),
    }
}

/// A `Flatten` (axis 1) or a `Reshape` to `[batch, -1]` or `[batch, n]`.
fn check_to_vector(g: &Graph<'_>, node: &NodeProto) -> Result<(), ImportError> {
    if node.op_type == "Flatten" {
        return match Graph::int_attr(node, "axis", 1) {
            1 => Ok(()),
            a => Err(ImportError::node(g.file, node, format!("axis {a}: only axis 1 (keep the batch) is supported"))),
        };
    }
    let shape = match node.input.get(1) {
        Some(s) => g.constant(s)?.map(|(_, v)| v),
        None => None,
    };
    match shape {
        Some([b, n]) if (*b == 1.0 || *b == -1.0) && (*n == -1.0 || *n > 0.0) => Ok(()),
        _ => Err(ImportError::node(g.file, node, "only a reshape to [batch, n] (a constant shape) is supported")),
    }
}

/// A `MaxPool` must be 2x2 with stride 2 and no padding.
fn check_pool(g: &Graph<'_>, node: &NodeProto, h: usize, w: usize) -> Result<(), ImportError> {
    let ints = |name: &str| node.attribute.iter().find(|a| a.name == name).map(|a| a.ints.clone()).unwrap_or_default();
    let pads_zero = ints("pads").iter().all(|&p| p == 0);
    if ints("kernel_shape") != [2, 2] || ints("strides") != [2, 2] || !pads_zero || Graph::int_attr(node, "ceil_mode", 0) != 0 || h < 2 || w < 2 {
        return Err(ImportError::node(g.file, node, "only 2x2 pooling with stride 2, no padding and ceil_mode 0 is supported"));
    }
    Ok(())
}
