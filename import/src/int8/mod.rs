//! The affine int8 domain of `fptgen import` (issue 18 with issue 15's int8
//! layers): a QONNX graph whose `Quant` scales are not all powers of two
//! (Brevitas's default float-scaled quantizers, for example) has no exact
//! `ap_fixed` form, and maps instead to fptgen's int8 layers as TFLite
//! computes them (`docs/import.md`, "The int8 domain").
//!
//! The graph must be a chain: the input's 8-bit `Quant` (the model's
//! `interface:`), then `MatMul` or `Gemm` layers, each with an optional
//! bias, `Relu` and an 8-bit `Quant` ([`dense`], `dense_int8`), and 8-bit
//! `Quant`s of an int8 activation (`requantize`). The multipliers and
//! shifts are not computed here: fptgen's loader derives them from the
//! scales written in the model file (TFLite's `QuantizeMultiplier`,
//! `fptgen_sim::int8`), and the import builds the same layers to refuse,
//! naming the node, what they cannot take. Anything else is refused with
//! the node's name, operator and why.

pub mod affine;
pub mod check;
pub mod dense;
pub mod render;

use fptgen_sim::layers::dense_int8::Affine;
use fptgen_sim::layers::Requantize;
use fptgen_sim::int8::Rounding;

use super::error::ImportError;
use super::graph::Graph;
use super::onnx::NodeProto;
use super::quant::po2_frac_bits;
use super::walk::{graph_input, is_quant, is_standard, Shape};

/// An int8 layer of the imported chain.
#[derive(Debug, Clone)]
pub enum Kind {
    /// `dense_int8`.
    Dense(dense::Dense),
    /// `requantize` from `.0` to `.1`.
    Requantize(Affine, Affine),
}

/// A layer with its name and the node it comes from.
#[derive(Debug, Clone)]
pub struct Layer {
    /// The layer's name in the model file.
    pub name: String,
    /// The ONNX node `(name, op_type)`.
    pub node: (String, String),
    /// What it computes.
    pub kind: Kind,
}

/// The imported int8 chain.
#[derive(Debug, Clone)]
pub struct Network {
    /// The number of input values.
    pub inputs: usize,
    /// The input's quantization (the model's `interface:`).
    pub interface: Affine,
    /// The layers, input to output.
    pub layers: Vec<Layer>,
}

/// The first `Quant` of the graph whose scale is not one power of two or
/// whose zero point is not 0, with why: the graph then belongs to the int8
/// domain. `None` for a graph that maps to `ap_fixed` formats.
pub fn trigger<'g>(g: &Graph<'g>) -> Option<(&'g NodeProto, String)> {
    g.proto.node.iter().filter(|n| is_quant(n)).find_map(|n| {
        let values = |k: usize| n.input.get(k).and_then(|i| g.constant(i).ok().flatten()).map(|(_, v)| v);
        let (scale, zeropt) = (values(1)?, values(2)?);
        let first = *scale.first()?;
        if scale.iter().any(|&s| s != first) {
            return Some((n, "per-channel scales that differ".to_string()));
        }
        if po2_frac_bits(first).is_none() {
            return Some((n, format!("scale {:?} is not a power of two", first as f32)));
        }
        zeropt.iter().find(|&&z| z != 0.0).map(|z| (n, format!("zero point {z} is not 0")))
    })
}

/// Maps the graph (which [`trigger`] put in the int8 domain because of
/// node `why.0`) to an int8 chain, or says which node cannot be mapped.
pub fn network(g: &Graph<'_>, why: (&NodeProto, String)) -> Result<Network, ImportError> {
    let (cause, reason) = why;
    let domain = format!("node '{}' ({}): {reason}, so the graph maps to fptgen's int8 domain (docs/import.md)", cause.name, cause.op_type);
    let refuse = |node: &NodeProto, m: String| ImportError::node(g.file, node, format!("{m} ({domain})"));
    let (input, shape) = graph_input(g)?;
    let Shape::Vector(n, _) = shape else {
        // Name the first operator on the image that has no int8 layer.
        let node = g.proto.node.iter().find(|n| !is_quant(n) && n.input.iter().any(|i| g.is_activation(i)));
        return Err(match node {
            Some(node) => refuse(node, format!("{}; the int8 domain imports dense networks of vectors", no_int8_layer(node))),
            None => ImportError::file(g.file, format!("the input '{input}' is an image; the int8 domain imports dense networks of vectors ({domain})")),
        });
    };
    let first = match g.consumers(input) {
        [q] if is_quant(q) => *q,
        [] => return Err(ImportError::file(g.file, format!("nothing reads the input '{input}'"))),
        [q, ..] => return Err(refuse(q, "reads the graph input, which must be quantized first by one 8-bit Quant".into())),
    };
    let interface = affine::activation(g, first).map_err(|e| with_domain(e, &domain))?;
    let mut x = g.output(first)?;
    let inputs = n;
    let (mut n, mut q) = (n, interface);
    let mut layers: Vec<Layer> = Vec::new();
    let mut count = (0, 0);
    let out = match g.proto.output.as_slice() {
        [o] => o.name.as_str(),
        outs => return Err(ImportError::file(g.file, format!("the graph has {} outputs; one is supported", outs.len()))),
    };
    while x != out {
        let node = match g.consumers(x) {
            [node] => *node,
            [] => return Err(ImportError::file(g.file, format!("tensor '{x}' is read by no node and is not the graph output"))),
            [a, ..] => return Err(refuse(a, format!("reads '{x}', which several nodes read; the int8 domain imports a chain of layers, without branches"))),
        };
        let name_of = |node: &NodeProto| (node.name.clone(), node.op_type.clone());
        if is_standard(node, "MatMul") || is_standard(node, "Gemm") {
            let (d, end) = dense::layer(g, node, x, n, q).map_err(|e| with_domain(e, &domain))?;
            count.0 += 1;
            (n, q, x) = (d.outputs, d.output, end);
            layers.push(Layer { name: format!("fc{}", count.0), node: name_of(node), kind: Kind::Dense(d) });
        } else if is_quant(node) {
            let to = affine::activation(g, node).map_err(|e| with_domain(e, &domain))?;
            Requantize::new(vec![n], q, to, Rounding::default()).map_err(|m| refuse(node, format!("no requantize layer: {m}")))?;
            count.1 += 1;
            layers.push(Layer { name: format!("rq{}", count.1), node: name_of(node), kind: Kind::Requantize(q, to) });
            (q, x) = (to, g.output(node)?);
        } else {
            return Err(refuse(node, no_int8_layer(node).to_string()));
        }
    }
    if !layers.iter().any(|l| matches!(l.kind, Kind::Dense(_))) {
        return Err(ImportError::file(g.file, format!("the graph has no MatMul or Gemm layer ({domain})")));
    }
    Ok(Network { inputs, interface, layers })
}

/// Why `node` has no int8 layer.
fn no_int8_layer(node: &NodeProto) -> &'static str {
    match node.op_type.as_str() {
        "Conv" => "fptgen has no int8 convolution layer",
        "Relu" => "a Relu that follows no MatMul or Gemm has no int8 layer",
        _ => "no int8 layer (the int8 domain imports MatMul, Gemm, their bias, Relu and 8-bit Quant, and a Quant of an int8 activation)",
    }
}

/// `e` with why the graph is in the int8 domain appended.
fn with_domain(mut e: ImportError, domain: &str) -> ImportError {
    e.message = format!("{} ({domain})", e.message);
    e
}
