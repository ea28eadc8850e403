//! [`Graph`]: an ONNX graph indexed for the import's walk from the input
//! to the output: constants by name, and the nodes that read each tensor.

use std::collections::HashMap;
use std::path::Path;

use super::error::ImportError;
use super::onnx::{GraphProto, NodeProto};

/// A decoded graph with its constants and consumers indexed.
pub struct Graph<'a> {
    /// The file, for errors.
    pub file: &'a Path,
    /// The graph.
    pub proto: &'a GraphProto,
    constants: HashMap<&'a str, Result<(Vec<usize>, Vec<f64>), String>>,
    consumers: HashMap<&'a str, Vec<&'a NodeProto>>,
    producers: HashMap<&'a str, &'a NodeProto>,
    activations: std::collections::HashSet<&'a str>,
    /// The operator sets the file imports (domain to version; ONNX's
    /// `ModelProto.opset_import`).
    pub opsets: HashMap<String, i64>,
}

/// A constant tensor: its shape and values.
pub type Constant<'g> = (&'g [usize], &'g [f64]);

impl<'a> Graph<'a> {
    /// The version of `node`'s domain that QONNX's executor runs it in: the
    /// file's, else QONNX's preferred 1 (`get_preferred_qonnx_opset`);
    /// `Trunc` is version 1 below 2, version 2 from 2.
    pub fn opset(&self, node: &NodeProto) -> i64 {
        self.opsets.get(&node.domain).copied().unwrap_or(1)
    }

    /// Indexes `proto`: its initializers and `Constant` nodes' values, and
    /// the readers of every tensor. A constant whose values cannot be read
    /// (an element type fptgen does not read) is an error only when the
    /// import uses it ([`Graph::constant`]).
    pub fn new(file: &'a Path, proto: &'a GraphProto) -> Result<Graph<'a>, ImportError> {
        let mut constants = HashMap::new();
        for t in &proto.initializer {
            constants.insert(t.name.as_str(), t.values().map(|v| (t.dims.iter().map(|&d| d as usize).collect(), v)));
        }
        let mut consumers: HashMap<&str, Vec<&NodeProto>> = HashMap::new();
        let mut producers = HashMap::new();
        for n in &proto.node {
            for o in &n.output {
                producers.insert(o.as_str(), n);
            }
            if n.op_type == "Constant" && n.domain.is_empty() {
                let t = n.attribute.iter().find(|a| a.name == "value").and_then(|a| a.t.as_ref());
                let Some(t) = t else {
                    return Err(ImportError::node(file, n, "a Constant without a tensor 'value' is not supported"));
                };
                let out = n.output.first().map(String::as_str).unwrap_or("");
                constants.insert(out, t.values().map(|v| (t.dims.iter().map(|&d| d as usize).collect(), v)));
                continue;
            }
            for i in n.input.iter().filter(|i| !i.is_empty()) {
                consumers.entry(i.as_str()).or_default().push(n);
            }
        }
        // Activations: the graph inputs that are not constants, and every
        // output of a node that reads one (nodes are in topological order).
        let mut activations: std::collections::HashSet<&str> =
            proto.input.iter().map(|i| i.name.as_str()).filter(|n| !constants.contains_key(n)).collect();
        for n in &proto.node {
            if n.input.iter().any(|i| activations.contains(i.as_str())) {
                activations.extend(n.output.iter().map(String::as_str));
            }
        }
        Ok(Graph { file, proto, constants, consumers, producers, activations, opsets: HashMap::new() })
    }

    /// Whether tensor `name` is a constant (an initializer or a
    /// `Constant` node's output).
    pub fn is_constant(&self, name: &str) -> bool {
        self.constants.contains_key(name)
    }

    /// The constant tensor `name`, if it is one; an error if its values
    /// cannot be read.
    pub fn constant(&self, name: &str) -> Result<Option<Constant<'_>>, ImportError> {
        match self.constants.get(name) {
            None => Ok(None),
            Some(Ok((s, v))) => Ok(Some((s.as_slice(), v.as_slice()))),
            Some(Err(e)) => Err(ImportError::file(self.file, e.clone())),
        }
    }

    /// The node that writes tensor `name`, if one does.
    pub fn producer(&self, name: &str) -> Option<&'a NodeProto> {
        self.producers.get(name).copied()
    }

    /// Whether tensor `name` is computed from the graph input (an
    /// activation), not from constants only (weights and their `Quant`s).
    pub fn is_activation(&self, name: &str) -> bool {
        self.activations.contains(name)
    }

    /// The nodes that read tensor `name`, in file order.
    pub fn consumers(&self, name: &str) -> &[&'a NodeProto] {
        self.consumers.get(name).map_or(&[], Vec::as_slice)
    }

    /// The node that reads tensor `name`, if exactly one does and `name`
    /// is not a graph output: the node a layer may absorb (a bias `Add`,
    /// a `Relu`, an activation `Quant`). A tensor read by several nodes or
    /// leaving the graph ends the layer there.
    pub fn only_consumer(&self, name: &str) -> Option<&'a NodeProto> {
        if self.proto.output.iter().any(|o| o.name == name) {
            return None;
        }
        match self.consumers(name) {
            [n] => Some(n),
            _ => None,
        }
    }

    /// The node's attribute `name` as an integer, or `default`.
    pub fn int_attr(node: &NodeProto, name: &str, default: i64) -> i64 {
        node.attribute.iter().find(|a| a.name == name).map_or(default, |a| a.i)
    }

    /// The node's attribute `name` as a float, or `default`.
    pub fn float_attr(node: &NodeProto, name: &str, default: f32) -> f32 {
        node.attribute.iter().find(|a| a.name == name).map_or(default, |a| a.f)
    }

    /// The node's attribute `name` as a string, or `default`.
    pub fn string_attr(node: &NodeProto, name: &str, default: &str) -> String {
        node.attribute.iter().find(|a| a.name == name).map_or(default.to_string(), |a| String::from_utf8_lossy(&a.s).into_owned())
    }

    /// The node's only output tensor, or an error naming the node.
    pub fn output(&self, node: &'a NodeProto) -> Result<&'a str, ImportError> {
        match node.output.as_slice() {
            [o] => Ok(o.as_str()),
            _ => Err(ImportError::node(self.file, node, format!("has {} outputs; one was expected", node.output.len()))),
        }
    }
}
