//! The imported network as a model file (YAML) and a weights archive.

use std::fmt::Write;

use fptgen_sim::tensor::{NamedArray, OutValues};

use super::dense::Network;

/// The model file of `net`, named `name`, reading `weights.npz`; `source`
/// (the ONNX file's name) goes into a comment.
pub fn model_yaml(net: &Network, name: &str, source: &str) -> String {
    let mut s = String::new();
    // Writing to a String cannot fail.
    let _ = writeln!(s, "# Imported from {source} by fptgen import (QONNX; docs/import.md).");
    let _ = writeln!(s, "name: {name}");
    let _ = writeln!(s, "input:\n  shape: [{}]\n  format: {}", net.input_len, net.input_format);
    let _ = writeln!(s, "weights: weights.npz\nlayers:");
    for (k, l) in net.layers.iter().enumerate() {
        let _ = writeln!(s, "  - name: {}    # {}", layer_name(k), l.source.replace('#', "_"));
        let _ = writeln!(s, "    type: dense\n    inputs: {}\n    outputs: {}", l.inputs, l.outputs);
        let _ = writeln!(s, "    activation: {}", if l.relu { "relu" } else { "linear" });
        let _ = writeln!(s, "    precision:\n      weight: {}\n      bias: {}\n      accum: {}\n      output: {}", l.weight, l.bias, l.accum, l.output);
    }
    s
}

/// The name of layer `k` (from 0) in the model file.
pub fn layer_name(k: usize) -> String {
    format!("fc{}", k + 1)
}

/// The weights archive's arrays: each layer's `w` `[outputs, inputs]` and
/// `b` `[outputs]`, as the real values of their codes.
pub fn weight_arrays(net: &Network) -> Vec<NamedArray> {
    let mut out = Vec::new();
    for (k, l) in net.layers.iter().enumerate() {
        let name = layer_name(k);
        let w = l.w.iter().map(|&r| l.weight.to_f64(r)).collect();
        let b = l.b.iter().map(|&r| l.bias.to_f64(r)).collect();
        out.push(NamedArray { name: format!("{name}/w"), shape: vec![l.outputs, l.inputs], values: OutValues::F64(w) });
        out.push(NamedArray { name: format!("{name}/b"), shape: vec![l.outputs], values: OutValues::F64(b) });
    }
    out
}

/// A network name from the file's stem: a Verilog identifier that does not
/// start with the reserved `fptgen`.
pub fn network_name(stem: &str) -> String {
    let mut s: String = stem.chars().map(|c| if c.is_ascii_alphanumeric() || c == '_' { c } else { '_' }).collect();
    if !s.starts_with(|c: char| c.is_ascii_alphabetic()) || s.starts_with("fptgen") {
        s.insert_str(0, "net_");
    }
    s
}
