//! The walk over the graph from its input to its output, in the file's
//! (topological) node order, mapping every node that reads an activation:
//! the input `Quant`; `MatMul`, `Gemm` and `Conv` (3x3, or 1x1 lowered to
//! 3x3; [`super::mac`]) with the bias, `Relu` and `Quant` after them;
//! `BatchNormalization` ([`super::batchnorm`]); `MaxPool` 2x2; `Flatten`
//! or `Reshape` to a vector; `Concat`; and an `Add` of two activations
//! ([`super::lower::residual_add`]); with `--lower approximate` a 5x5 or
//! 7x7 `Conv` as stacked 3x3 ones ([`super::lower::stacked_conv`]). A tensor read by several nodes (a
//! branch) is the output of a layer that several layers read, as in
//! fptgen's graphs (`inputs:`).
//!
//! ONNX images are NCHW, fptgen's `[h, w, c]`: the input shape is
//! permuted, and a flattened image's values are in fptgen's (h, w, c)
//! order, so the dense layer after it takes its weight columns in that
//! order.

use std::collections::{HashMap, HashSet};

use fptgen_sim::fixed::Format;

use super::batchnorm;
use super::concat;
use super::error::ImportError;
use super::graph::Graph;
use super::lower::{bipolar, cast, layernorm, pool, stacked_conv, trunc};
use super::lower::residual_add::{self, Lowering};
use super::mac::{self, mac_layer};
use super::network::{Approximation, Kind, Layer, Network, Src};
use super::onnx::NodeProto;
use super::quant;

/// Domains of QONNX's `Quant` (Brevitas's older exports use `onnx.brevitas`).
const QUANT_DOMAINS: [&str; 2] = ["qonnx.custom_op.general", "onnx.brevitas"];

/// The tensor between layers: a vector, or an image `[h, w, c]`; with the
/// order of a flattened image's values (fptgen's index to ONNX's index)
/// until a dense layer takes it.
#[derive(Debug, Clone, PartialEq)]
pub enum Shape {
    /// A vector, and for a flattened image fptgen's index to ONNX's.
    Vector(usize, Option<Vec<usize>>),
    /// An image `[h, w, c]`.
    Image(usize, usize, usize),
}

impl Shape {
    /// The shape of fptgen dimensions `[n]` or `[h, w, c]`.
    pub fn from_dims(dims: &[usize]) -> Shape {
        match *dims {
            [h, w, c] => Shape::Image(h, w, c),
            _ => Shape::Vector(dims.iter().product(), None),
        }
    }
}

/// QONNX's `Quant`, or `IntQuant` (its newer name, the same function).
pub(super) fn is_quant(n: &NodeProto) -> bool {
    (n.op_type == "Quant" || n.op_type == "IntQuant") && QUANT_DOMAINS.contains(&n.domain.as_str())
}

/// QONNX's `BipolarQuant`.
pub(super) fn is_bipolar(n: &NodeProto) -> bool {
    n.op_type == "BipolarQuant" && QUANT_DOMAINS.contains(&n.domain.as_str())
}

/// QONNX's `Trunc`.
pub(super) fn is_trunc(n: &NodeProto) -> bool {
    n.op_type == "Trunc" && QUANT_DOMAINS.contains(&n.domain.as_str())
}

/// An operator of ONNX's standard domain.
pub(super) fn is_standard(n: &NodeProto, op: &str) -> bool {
    n.op_type == op && (n.domain.is_empty() || n.domain == "ai.onnx")
}
/// An activation tensor as fptgen holds it.
#[derive(Clone)]
struct Value {
    src: Src,
    shape: Shape,
    format: Format,
}

/// The walk's state: the activations mapped so far and the layers.
struct Walk<'g, 'a> {
    g: &'a Graph<'g>,
    values: HashMap<&'g str, Value>,
    /// Tensors inside a layer (absorbed nodes' outputs).
    covered: HashSet<&'g str>,
    layers: Vec<Layer>,
    counts: HashMap<&'static str, usize>,
    /// Whether rewrites that change the function are applied (`--lower approximate`).
    approximate: bool,
    /// The blocks those rewrites wrote.
    blocks: Vec<Approximation>,
}

impl<'g> Walk<'g, '_> {
    /// The mapped activation `name` that `node` reads.
    fn value(&self, node: &NodeProto, name: &str) -> Result<Value, ImportError> {
        self.values.get(name).cloned().ok_or_else(|| {
            ImportError::node(self.g.file, node, format!("reads '{name}', which is not the output of an imported layer (a tensor inside a layer, or a node out of order)"))
        })
    }

    /// Adds a layer named `<prefix><k>` (plus `suffix`); returns its source.
    fn push(&mut self, prefix: &'static str, suffix: &str, node: &NodeProto, inputs: Vec<Src>, kind: Kind, onnx: Option<(String, Shape)>) -> Src {
        let k = *self.counts.entry(prefix).and_modify(|k| *k += 1).or_insert(1);
        let name = format!("{prefix}{k}{suffix}");
        if !suffix.is_empty() {
            *self.counts.get_mut(prefix).expect("counted") -= 1;
        }
        self.layers.push(Layer { name, node: (node.name.clone(), node.op_type.clone()), inputs, kind, onnx });
        Src::Layer(self.layers.len() - 1)
    }

    /// Records that the nodes from `node` to tensor `end` are one layer
    /// whose output is `end`.
    fn cover(&mut self, node: &'g NodeProto, end: &'g str, value: Value) -> Result<(), ImportError> {
        let mut n = node;
        loop {
            let out = self.g.output(n)?;
            self.covered.insert(out);
            if out == end {
                break;
            }
            n = self.g.only_consumer(out).ok_or_else(|| ImportError::node(self.g.file, n, "a layer's nodes are not a chain (please report this)"))?;
        }
        self.values.insert(end, value);
        Ok(())
    }

    /// Maps one node that reads an activation.
    fn node(&mut self, node: &'g NodeProto) -> Result<(), ImportError> {
        let g = self.g;
        let acts: Vec<&'g str> = node.input.iter().map(String::as_str).filter(|i| g.is_activation(i)).collect();
        let x = self.value(node, acts[0])?;
        if is_standard(node, "Flatten") || is_standard(node, "Reshape") {
            check_to_vector(g, node)?;
            let out = g.output(node)?;
            let value = match x.shape {
                Shape::Image(h, w, c) => {
                    // fptgen index (y, x, k) holds ONNX's (k, y, x).
                    let order: Vec<usize> = (0..h * w * c).map(|j| (j % c) * h * w + j / c).collect();
                    let shape = Shape::Vector(h * w * c, Some(order));
                    let src = self.push("flatten", "", node, vec![x.src], Kind::Flatten, Some((out.to_string(), shape.clone())));
                    Value { src, shape, format: x.format }
                }
                Shape::Vector(..) => x,
            };
            return self.cover(node, out, value);
        }
        if is_standard(node, "MaxPool") {
            return self.maxpool(node, acts[0], x);
        }
        if is_standard(node, "Conv") {
            if let Some(k) = mac::large_kernel(g, node)? {
                return self.stacked(node, acts[0], x, k);
            }
        }
        if is_standard(node, "MatMul") || is_standard(node, "Gemm") || is_standard(node, "Conv") {
            let (kind, shape, end) = mac_layer(g, node, acts[0], &x.shape, x.format)?;
            let format = kind.output_format(x.format);
            let prefix = if matches!(kind, Kind::Conv { .. }) { "conv" } else { "fc" };
            let src = self.push(prefix, "", node, vec![x.src], kind, Some((end.to_string(), shape.clone())));
            return self.cover(node, end, Value { src, shape, format });
        }
        if is_standard(node, "BatchNormalization") {
            if acts.len() != 1 || node.input[0] != acts[0] {
                return Err(ImportError::node(g.file, node, "only a batch norm of one activation with constant parameters is imported"));
            }
            let (kind, end) = batchnorm::layer(g, node, &x.shape, x.format)?;
            let format = kind.output_format(x.format);
            let src = self.push("bn", "", node, vec![x.src], kind, Some((end.to_string(), x.shape.clone())));
            return self.cover(node, end, Value { src, shape: x.shape, format });
        }
        if is_standard(node, "LayerNormalization") {
            return self.layer_norm(node, acts[0], x);
        }
        if is_standard(node, "Add") {
            if acts.len() != 2 {
                return Err(ImportError::node(g.file, node, "an Add of a constant is imported only as the bias right after a MatMul, Gemm or Conv"));
            }
            let y = self.value(node, acts[1])?;
            if x.src == y.src {
                return Err(ImportError::node(g.file, node, "adds a tensor to itself; fptgen's add reads two different layers"));
            }
            let [x, y] = self.widen(node, [x, y])?;
            let (lowering, shape, end) = residual_add::lower(g, node, (&x.shape, x.format), (&y.shape, y.format))?;
            let onnx = Some((end.to_string(), shape.clone()));
            let (src, format) = match lowering {
                Lowering::Add(kind) => {
                    let format = kind.output_format(x.format);
                    (self.push("add", "", node, vec![x.src, y.src], kind, onnx), format)
                }
                Lowering::ConcatThen(kind) => {
                    let format = kind.output_format(x.format);
                    let cat = self.push("add", "_cat", node, vec![x.src, y.src], Kind::Concat, None);
                    (self.push("add", "", node, vec![cat], kind, onnx), format)
                }
            };
            return self.cover(node, end, Value { src, shape, format });
        }
        if is_bipolar(node) {
            let [step, sign] = bipolar::lower(g, node, &x.shape, x.format)?;
            let out = g.output(node)?;
            let format = sign.output_format(x.format);
            let src = self.push("bipolar", "_step", node, vec![x.src], step, None);
            let src = self.push("bipolar", "", node, vec![src], sign, Some((out.to_string(), x.shape.clone())));
            return self.cover(node, out, Value { src, shape: x.shape, format });
        }
        if is_trunc(node) {
            let kinds = trunc::lower(g, node, &x.shape, x.format)?;
            let out = g.output(node)?;
            let (mut src, mut format, n) = (x.src, x.format, kinds.len());
            for (k, kind) in kinds.into_iter().enumerate() {
                // trunc<k>_1, trunc<k>_2, ..., the last trunc<k> (the ONNX tensor).
                let last = k + 1 == n;
                let suffix = if last { String::new() } else { format!("_{}", k + 1) };
                format = kind.output_format(format);
                src = self.push("trunc", &suffix, node, vec![src], kind, last.then(|| (out.to_string(), x.shape.clone())));
            }
            return self.cover(node, out, Value { src, shape: x.shape, format });
        }
        if is_standard(node, "Concat") {
            return self.concat(node, &acts);
        }
        if is_standard(node, "Relu") || is_quant(node) {
            // One that follows no layer (its input has several readers, or
            // is a layer's last Quant): an identity batch norm that casts.
            let (kind, end) = cast::standalone(g, node, &x.shape, x.format)?;
            let format = kind.output_format(x.format);
            let src = self.push("cast", "", node, vec![x.src], kind, Some((end.to_string(), x.shape.clone())));
            return self.cover(node, end, Value { src, shape: x.shape, format });
        }
        Err(ImportError::node(
            g.file,
            node,
            "no mapping to fptgen's layers (imported: Quant, IntQuant, BipolarQuant, Trunc, MatMul, Gemm, Conv 3x3 and 1x1 (5x5 and 7x7 with --lower approximate), BatchNormalization, MaxPool 2x2 and kxk stride k (3x3 stride 2 with --lower approximate), LayerNormalization of a vector (with --lower approximate), Add, Concat, Relu, Flatten, Reshape)",
        ))
    }

    /// A `MaxPool` reading `xname` (`x`): fptgen's 2x2 stride-2 pools,
    /// exactly, or with `--lower approximate` a 3x3 stride-2 pool as a 2x2
    /// one taken into the approximated block it follows ([`pool`]).
    fn maxpool(&mut self, node: &'g NodeProto, xname: &'g str, x: Value) -> Result<(), ImportError> {
        let g = self.g;
        let err = |m: String| ImportError::node(g.file, node, m);
        let Shape::Image(h, w, c) = x.shape else { return Err(err("pools a vector".into())) };
        let ints = |name: &str, default: Vec<i64>| node.attribute.iter().find(|a| a.name == name).map_or(default, |a| a.ints.clone());
        let auto = Graph::string_attr(node, "auto_pad", "NOTSET");
        if !matches!(auto.as_str(), "NOTSET" | "" | "VALID") {
            return Err(err(format!("auto_pad {auto}: give the pads explicitly")));
        }
        let rewrite = pool::rewrite(&ints("kernel_shape", vec![]), &ints("strides", vec![1, 1]), &ints("pads", vec![0, 0, 0, 0]), Graph::int_attr(node, "ceil_mode", 0), (h, w))
            .map_err(err)?;
        let out = g.output(node)?;
        match rewrite {
            pool::Rewrite::Exact(m) => {
                let (mut src, mut hh, mut ww) = (x.src, h, w);
                for i in 0..m {
                    (hh, ww) = (hh / 2, ww / 2);
                    let last = i + 1 == m;
                    let suffix = if last { String::new() } else { format!("_p{}", i + 1) };
                    let onnx = last.then(|| (out.to_string(), Shape::Image(hh, ww, c)));
                    src = self.push("pool", &suffix, node, vec![src], Kind::MaxPool, onnx);
                }
                self.cover(node, out, Value { src, shape: Shape::Image(hh, ww, c), format: x.format })
            }
            pool::Rewrite::Approximate => {
                if !self.approximate {
                    return Err(err(format!(
                        "a 3x3 stride-2 max-pool; fptgen's core set has 2x2 stride-2 pools, and the rewrite '{}' changes the function: it is applied only by `fptgen import --lower approximate` (docs/import.md)",
                        pool::APPROXIMATE
                    )));
                }
                let shape = Shape::Image(h / 2, w / 2, c);
                let Src::Layer(j) = x.src else { return Err(err(format!("{}: only right after an approximated block, whose distillation absorbs it; this pool reads the network input", pool::APPROXIMATE))) };
                let sole = g.consumers(xname).len() == 1;
                let Some(b) = self.blocks.iter().position(|b| b.layers.last() == Some(&j)).filter(|_| sole) else {
                    return Err(err(format!(
                        "{}: only right after an approximated block (seed 004's block1: the 7x7 convolution and the 3x3 pool), as its output's only reader, whose distillation absorbs it; this pool reads layer '{}'",
                        pool::APPROXIMATE,
                        self.layers[j].name
                    )));
                };
                let src = self.push("pool", "", node, vec![x.src], Kind::MaxPool, Some((out.to_string(), shape.clone())));
                let k = self.layers.len() - 1;
                let block = &mut self.blocks[b];
                block.layers.push(k);
                block.rewrite = format!("{}; then {} '{}': {}", block.rewrite, node.op_type, node.name, pool::APPROXIMATE);
                block.output = (out.to_string(), shape.clone());
                self.cover(node, out, Value { src, shape, format: x.format })
            }
        }
    }

    /// A `LayerNormalization` reading `xname` (`x`): with `--lower
    /// approximate` a batch norm recorded as a block to retrain
    /// ([`layernorm`]), else an error naming the node and the rewrite.
    fn layer_norm(&mut self, node: &'g NodeProto, xname: &'g str, x: Value) -> Result<(), ImportError> {
        let g = self.g;
        if !self.approximate {
            return Err(ImportError::node(
                g.file,
                node,
                format!(
                    "a layer normalization has no fixed-point form; the rewrite '{}' changes the function: it is applied only by `fptgen import --lower approximate`, after which `fptgen train --teacher` retrains the batch norm (docs/import.md)",
                    layernorm::REWRITE
                ),
            ));
        }
        if node.input.first().map(String::as_str) != Some(xname) {
            return Err(ImportError::node(g.file, node, format!("the activation '{xname}' must be its first input")));
        }
        let (kind, end) = layernorm::lower(g, node, &x.shape, x.format)?;
        let format = kind.output_format(x.format);
        let k = self.layers.len();
        let src = self.push("bn", "", node, vec![x.src], kind, Some((end.to_string(), x.shape.clone())));
        self.blocks.push(Approximation {
            layers: vec![k],
            node: (node.name.clone(), node.op_type.clone()),
            rewrite: layernorm::REWRITE.to_string(),
            init: layernorm::INIT.to_string(),
            input: (xname.to_string(), x.shape.clone()),
            output: (end.to_string(), x.shape.clone()),
        });
        self.cover(node, end, Value { src, shape: x.shape, format })
    }

    /// A 5x5 or 7x7 `Conv` reading `xname` (`x`): with `--lower
    /// approximate` stacked 3x3 convolutions ([`stacked_conv`]) recorded as
    /// a block to retrain, else an error naming the node and the rewrite.
    fn stacked(&mut self, node: &'g NodeProto, xname: &'g str, x: Value, k: usize) -> Result<(), ImportError> {
        let g = self.g;
        let rewrite = stacked_conv::rewrite(k);
        if !self.approximate {
            return Err(ImportError::node(
                g.file,
                node,
                format!(
                    "a {k}x{k} convolution; fptgen's core set has 3x3 convolutions, and the rewrite '{rewrite}' changes the function: it is applied only by `fptgen import --lower approximate`, after which `fptgen train --teacher` retrains the new layers (docs/import.md)"
                ),
            ));
        }
        let Shape::Image(h, w, c) = x.shape else { return Err(ImportError::node(g.file, node, "convolves a vector")) };
        let conv = mac::large_conv(g, node, xname, c)?;
        let macs = stacked_conv::layers(&conv, x.format).map_err(|m| ImportError::node(g.file, node, m))?;
        let shape = Shape::Image(h, w, conv.filters);
        let (first, n) = (self.layers.len(), macs.len());
        let mut src = x.src;
        let mut format = x.format;
        for (i, mac) in macs.into_iter().enumerate() {
            let last = i + 1 == n;
            let suffix = if last { String::new() } else { format!("_s{}", i + 1) };
            let onnx = last.then(|| (conv.end.to_string(), shape.clone()));
            format = mac.output;
            src = self.push("conv", &suffix, node, vec![src], Kind::Conv { mac, stride: 1, same: true }, onnx);
        }
        self.blocks.push(Approximation {
            layers: (first..first + n).collect(),
            node: (node.name.clone(), node.op_type.clone()),
            rewrite,
            init: stacked_conv::INIT.to_string(),
            input: (xname.to_string(), x.shape),
            output: (conv.end.to_string(), shape.clone()),
        });
        self.cover(node, conv.end, Value { src, shape, format })
    }

    /// The activations `parts` that `node` (an `Add` or `Concat`) joins,
    /// each in one common format ([`cast::common_format`]): a part in
    /// another format is read through a widening cast layer
    /// (`cast<k>`, [`cast::identity`]), which changes no value.
    fn widen<P>(&mut self, node: &NodeProto, parts: P) -> Result<P, ImportError>
    where
        P: AsMut<[Value]>,
    {
        let mut parts = parts;
        let formats: Vec<Format> = parts.as_mut().iter().map(|p| p.format).collect();
        if formats.iter().all(|f| *f == formats[0]) {
            return Ok(parts);
        }
        if parts.as_mut().iter().any(|p| matches!(p.shape, Shape::Vector(_, Some(_)))) {
            return Ok(parts); // refused by the Add or Concat itself
        }
        let common = cast::common_format(self.g, node, &formats)?;
        for p in parts.as_mut() {
            if p.format != common {
                let kind = cast::identity(&p.shape, p.format, false, Some(common)).ok_or_else(|| {
                    ImportError::node(self.g.file, node, format!("casting its input of format {} to {common} needs an accumulator of more than 64 bits", p.format))
                })?;
                p.src = self.push("cast", "", node, vec![p.src], kind, None);
                p.format = common;
            }
        }
        Ok(parts)
    }

    /// A `Concat` of activations: fptgen's `concat` ([`concat::shape`]).
    fn concat(&mut self, node: &'g NodeProto, acts: &[&'g str]) -> Result<(), ImportError> {
        if acts.len() != node.input.len() {
            return Err(ImportError::node(self.g.file, node, "concatenates a constant; only activations are imported"));
        }
        let parts: Vec<Value> = acts.iter().map(|a| self.value(node, a)).collect::<Result<_, _>>()?;
        let parts = self.widen(node, parts)?;
        let srcs: Vec<Src> = parts.iter().map(|p| p.src).collect();
        let sized: Vec<(Src, &Shape, Format)> = parts.iter().map(|p| (p.src, &p.shape, p.format)).collect();
        let (shape, format) = concat::shape(self.g, node, &sized)?;
        let out = self.g.output(node)?;
        let src = self.push("cat", "", node, srcs, Kind::Concat, Some((out.to_string(), shape.clone())));
        self.cover(node, out, Value { src, shape, format })
    }
}

/// Maps the graph to a [`Network`], or says which node cannot be mapped and
/// why; with `approximate`, also by the rewrites that change the function
/// ([`Network::blocks`]).
pub fn network(g: &Graph<'_>, approximate: bool) -> Result<Network, ImportError> {
    let (input, shape) = graph_input(g)?;
    let first = match g.consumers(input) {
        [] => return Err(ImportError::file(g.file, format!("nothing reads the input '{input}'"))),
        [n] if is_quant(n) => *n,
        [n, ..] => return Err(ImportError::node(g.file, n, "reads the graph input, which must be quantized first by one QONNX Quant node")),
    };
    let input_format = quant::format(g, first)?;
    let input_shape = match shape {
        Shape::Vector(n, _) => vec![n],
        Shape::Image(h, w, c) => vec![h, w, c],
    };
    let input_tensor = g.output(first)?;
    let mut walk =
        Walk { g, values: HashMap::new(), covered: HashSet::new(), layers: Vec::new(), counts: HashMap::new(), approximate, blocks: Vec::new() };
    walk.covered.insert(input_tensor);
    walk.values.insert(input_tensor, Value { src: Src::Input, shape, format: input_format });
    for node in &g.proto.node {
        let reads = node.input.iter().any(|i| g.is_activation(i));
        if !reads || std::ptr::eq(node, first) || node.output.iter().any(|o| walk.covered.contains(o.as_str())) {
            continue;
        }
        walk.node(node)?;
    }
    let (layers, blocks) = (walk.layers, walk.blocks);
    let out = match g.proto.output.as_slice() {
        [o] => o.name.as_str(),
        outs => return Err(ImportError::file(g.file, format!("the graph has {} outputs; one is supported", outs.len()))),
    };
    let last = layers.len().checked_sub(1).map(Src::Layer);
    let Some(value) = walk.values.get(out).filter(|v| Some(v.src) == last) else {
        return Err(ImportError::file(g.file, format!("the graph output '{out}' is not the output of the last imported layer")));
    };
    let last = &layers[layers.len() - 1];
    if let Shape::Vector(_, Some(_)) = value.shape {
        return Err(ImportError::named(g.file, &last.node, "the network ends in a flattened image, whose order differs between ONNX (c, h, w) and fptgen (h, w, c)"));
    }
    for (k, l) in layers.iter().enumerate().take(layers.len() - 1) {
        if !layers[k + 1..].iter().any(|m| m.inputs.contains(&Src::Layer(k))) {
            return Err(ImportError::named(g.file, &l.node, "its output reaches neither the graph output nor another layer"));
        }
    }
    if !layers.iter().any(|l| matches!(l.kind, Kind::Dense(_) | Kind::Conv { .. })) {
        return Err(ImportError::file(g.file, "the graph has no MatMul, Gemm or Conv layer"));
    }
    Ok(Network { input_shape, input_format, input_tensor: input_tensor.to_string(), layers, blocks })
}

/// The graph's one non-constant input and its shape: `[batch, n]` or
/// `[batch, c, h, w]`, where the batch dimension is 1 or named.
pub(super) fn graph_input<'g>(g: &'g Graph<'_>) -> Result<(&'g str, Shape), ImportError> {
    let inputs: Vec<_> = g.proto.input.iter().filter(|i| !g.is_constant(&i.name)).collect();
    let [input] = inputs.as_slice() else {
        return Err(ImportError::file(g.file, format!("the graph has {} inputs; one is supported", inputs.len())));
    };
    let dims = input.r#type.as_ref().and_then(|t| t.tensor_type.as_ref()).and_then(|t| t.shape.as_ref()).map(|s| s.dim.as_slice());
    let bad = |why: &str| ImportError::file(g.file, format!("input '{}': {why}", input.name));
    let Some(dims) = dims else { return Err(bad("has no shape")) };
    let fixed: Vec<Option<usize>> = dims.iter().map(|d| d.dim_value.filter(|&v| v > 0).and_then(|v| usize::try_from(v).ok())).collect();
    let batch_ok = fixed.first().is_some_and(|b| b.is_none_or(|b| b == 1));
    // The model file's bound, checked before any work proportional to the
    // size: at most MAX_DIM values in all.
    let max = fptgen_sim::model::MAX_DIM as u128;
    let sizes: Vec<usize> = fixed.iter().skip(1).flatten().copied().collect();
    let values = sizes.iter().fold(1u128, |p, &d| p.saturating_mul(d as u128));
    if values > max {
        let shape = sizes.iter().map(usize::to_string).collect::<Vec<_>>().join(" x ");
        return Err(bad(&format!("has {shape} = {values} values; at most {max} are supported (the model file's bound)")));
    }
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
