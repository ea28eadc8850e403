//! The distillation record of an approximate import (`DIR/distill.yaml`):
//! which layers approximate which ONNX node and must be retrained, and the
//! teacher's values for block-wise distillation (`fptgen train --teacher`).
//!
//! The record names, per block, the node it replaces, the rewrite, how the
//! new layers were initialized, the block's layers (a chain in the model
//! file) and the ONNX tensors the block reads and stands for, with their
//! shapes as fptgen holds them (`[h, w, c]` or `[n]`). [`teacher_values`]
//! evaluates the original graph exactly ([`super::reference`], dyadic
//! rationals) on given network inputs and returns each block's input and
//! target output in fptgen's order.

use std::fmt::Write;
use std::path::Path;

use fptgen_sim::fixed::Format;
use rayon::prelude::*;
use serde::Deserialize;

use super::dyadic::Dyadic;
use super::error::ImportError;
use super::graph::Graph;
use super::network::Network;
use super::onnx;
use super::proof::onnx_index;
use super::reference::{Reference, Tensor};
use super::walk::Shape;

/// The record's file name beside `model.yaml`.
pub const FILE: &str = "distill.yaml";

/// The distillation record.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Record {
    /// The ONNX file the model was imported from (its name).
    pub source: String,
    /// The blocks to retrain, in network order.
    pub blocks: Vec<Block>,
}

/// One block of the record.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Block {
    /// The teacher node's name.
    pub node: String,
    /// The teacher node's operator.
    pub op: String,
    /// The rewrite, in words.
    pub rewrite: String,
    /// How the new layers were initialized, in words.
    pub init: String,
    /// The block's layers in the model file, first to last (a chain).
    pub layers: Vec<String>,
    /// The ONNX tensor the block reads.
    pub input: TensorRef,
    /// The ONNX tensor the block's last layer stands for.
    pub output: TensorRef,
}

/// An ONNX tensor and its shape as fptgen holds it.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TensorRef {
    /// The tensor's name in the ONNX graph.
    pub tensor: String,
    /// `[h, w, c]` for an image, `[n]` for a vector.
    pub shape: Vec<usize>,
}

/// The record of `net` (imported from `source`), as YAML; `None` when
/// the import approximated nothing.
pub fn render(net: &Network, source: &str) -> Option<String> {
    if net.blocks.is_empty() {
        return None;
    }
    let q = |s: &str| serde_json::to_string(s).unwrap_or_else(|_| format!("{s:?}"));
    let dims = |s: &Shape| match s {
        Shape::Image(h, w, c) => format!("[{h}, {w}, {c}]"),
        Shape::Vector(n, _) => format!("[{n}]"),
    };
    let mut s = String::new();
    // Writing to a String cannot fail.
    let _ = writeln!(s, "# Written by fptgen import --lower approximate (docs/import.md, \"Approximate rewrites\").");
    let _ = writeln!(s, "# The layers of each block approximate the ONNX node named and must be retrained:");
    let _ = writeln!(s, "# fptgen train model.yaml --teacher {source} (docs/training.md, \"Block-wise distillation\").");
    let _ = writeln!(s, "source: {}\nblocks:", q(source));
    for b in &net.blocks {
        let names: Vec<String> = b.layers.iter().map(|&l| q(&net.layers[l].name)).collect();
        let _ = writeln!(s, "  - node: {}\n    op: {}\n    rewrite: {}\n    init: {}", q(&b.node.0), q(&b.node.1), q(&b.rewrite), q(&b.init));
        let _ = writeln!(s, "    layers: [{}]", names.join(", "));
        let _ = writeln!(s, "    input: {{tensor: {}, shape: {}}}", q(&b.input.0), dims(&b.input.1));
        let _ = writeln!(s, "    output: {{tensor: {}, shape: {}}}", q(&b.output.0), dims(&b.output.1));
    }
    Some(s)
}

/// Reads the record at `path`; the error names the file.
pub fn read(path: &Path) -> Result<Record, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let r: Record = serde_saphyr::from_str(&text).map_err(|e| format!("{}: not a distillation record: {e}", path.display()))?;
    for b in &r.blocks {
        if b.layers.is_empty() {
            return Err(format!("{}: block of node '{}' lists no layers", path.display(), b.node));
        }
        for t in [&b.input, &b.output] {
            if !matches!(t.shape.len(), 1 | 3) || t.shape.contains(&0) {
                return Err(format!("{}: tensor '{}' has shape {:?}; [h, w, c] or [n] expected", path.display(), t.tensor, t.shape));
            }
        }
    }
    Ok(r)
}

/// One sample's teacher values for one block, in fptgen's order: the
/// block's input and its target output.
#[derive(Debug, Clone, PartialEq)]
pub struct Pair {
    /// The teacher's value of the tensor the block reads.
    pub input: Vec<Dyadic>,
    /// The teacher's value of the tensor the block stands for.
    pub output: Vec<Dyadic>,
}

fn shape_of(dims: &[usize]) -> Shape {
    Shape::from_dims(dims)
}

/// Evaluates the ONNX graph at `path` exactly on each network input of
/// `inputs` (codes of `input_format`, fptgen's order, shape `input_shape`)
/// and returns, per block of `record`, per input, the block's [`Pair`].
/// The error names the file and the tensor that is missing or has another
/// size.
pub fn teacher_values(path: &Path, record: &Record, inputs: &[Vec<i128>], input_format: Format, input_shape: &[usize]) -> Result<Vec<Vec<Pair>>, ImportError> {
    let bytes = std::fs::read(path).map_err(|e| ImportError::file(path, e.to_string()))?;
    let proto = onnx::decode(&bytes).map_err(|e| ImportError::file(path, e))?;
    let g = proto.graph.as_ref().ok_or_else(|| ImportError::file(path, "not an ONNX model (no graph)"))?;
    let mut graph = Graph::new(path, g)?;
    graph.opsets = proto.opset_import.iter().map(|o| (o.domain.clone(), o.version)).collect();
    let input = g.input.iter().find(|i| !graph.is_constant(&i.name)).ok_or_else(|| ImportError::file(path, "the graph has no input"))?;
    let graph_input = input.name.clone();
    let n: usize = input_shape.iter().product();
    let onnx_shape = match *input_shape {
        [h, w, c] => vec![1, c, h, w],
        _ => vec![1, n],
    };
    let dims: Vec<Option<i64>> = input.r#type.as_ref().and_then(|t| t.tensor_type.as_ref()).and_then(|t| t.shape.as_ref()).map_or_else(Vec::new, |s| s.dim.iter().map(|d| d.dim_value).collect());
    let want: Vec<Option<i64>> = onnx_shape[1..].iter().map(|&d| Some(d as i64)).collect();
    if dims.len() != onnx_shape.len() || dims[1..] != want[..] {
        return Err(ImportError::file(
            path,
            format!(
                "its input '{graph_input}' has dimensions {:?}; the model takes {:?} (batch first): is it the network the model was imported from ({})?",
                dims.iter().map(|d| d.unwrap_or(-1)).collect::<Vec<_>>(),
                onnx_shape,
                record.source
            ),
        ));
    }
    let in_shape = shape_of(input_shape);
    let reference = Reference::new(&graph)?;
    let per_sample: Vec<Vec<Pair>> = inputs
        .par_iter()
        .map(|codes| {
            if codes.len() != n {
                return Err(ImportError::file(path, format!("an input has {} values; the model takes {n}", codes.len())));
            }
            let mut x = vec![Dyadic::ZERO; n];
            for (j, &c) in codes.iter().enumerate() {
                x[onnx_index(&in_shape, j)] = Dyadic::code(c, input_format.frac_bits());
            }
            let env = reference.run((&graph_input, Tensor { shape: onnx_shape.clone(), v: x }))?;
            let take = |t: &TensorRef| -> Result<Vec<Dyadic>, ImportError> {
                let v = env.get(&t.tensor).ok_or_else(|| ImportError::file(path, format!("the graph has no tensor '{}' (distill.yaml names it)", t.tensor)))?;
                let len: usize = t.shape.iter().product();
                if v.v.len() != len {
                    return Err(ImportError::file(path, format!("tensor '{}' has {} values; distill.yaml's shape {:?} has {len}", t.tensor, v.v.len(), t.shape)));
                }
                let s = shape_of(&t.shape);
                Ok((0..len).map(|j| v.v[onnx_index(&s, j)]).collect())
            };
            record.blocks.iter().map(|b| Ok(Pair { input: take(&b.input)?, output: take(&b.output)? })).collect()
        })
        .collect::<Result<_, _>>()?;
    let mut out: Vec<Vec<Pair>> = vec![Vec::with_capacity(inputs.len()); record.blocks.len()];
    for sample in per_sample {
        for (b, p) in sample.into_iter().enumerate() {
            out[b].push(p);
        }
    }
    Ok(out)
}
