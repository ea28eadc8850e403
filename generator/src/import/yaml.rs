//! The imported network as a model file (YAML) and a weights archive.

use std::fmt::Write;

use fptgen_sim::tensor::{NamedArray, OutValues};

use super::network::{Kind, Mac, Network};

/// The model file of `net`, named `name`, reading `weights.npz`; `source`
/// (the ONNX file's name) goes into a comment.
pub fn model_yaml(net: &Network, name: &str, source: &str) -> String {
    let mut s = String::new();
    let shape: Vec<String> = net.input_shape.iter().map(usize::to_string).collect();
    // Writing to a String cannot fail.
    let _ = writeln!(s, "# Imported from {source} by fptgen import (QONNX; docs/import.md).");
    let _ = writeln!(s, "name: {name}");
    let _ = writeln!(s, "input:\n  shape: [{}]\n  format: {}", shape.join(", "), net.input_format);
    let _ = writeln!(s, "weights: weights.npz\nlayers:");
    for (l, layer_name) in net.layers.iter().zip(layer_names(net)) {
        let _ = writeln!(s, "  - name: {layer_name}    # {}", l.source.replace('#', "_"));
        match &l.kind {
            Kind::Dense(m) => {
                let _ = writeln!(s, "    type: dense\n    inputs: {}\n    outputs: {}", m.inputs, m.outputs);
                mac_fields(&mut s, m);
            }
            Kind::Conv { mac, stride, same } => {
                let padding = if *same { "same" } else { "valid" };
                let _ = writeln!(s, "    type: conv2d\n    filters: {}\n    kernel: 3\n    stride: {stride}\n    padding: {padding}", mac.outputs);
                mac_fields(&mut s, mac);
            }
            Kind::MaxPool => {
                let _ = writeln!(s, "    type: maxpool2d\n    pool: 2");
            }
            Kind::Flatten => {
                let _ = writeln!(s, "    type: flatten");
            }
        }
    }
    s
}

fn mac_fields(s: &mut String, m: &Mac) {
    let _ = writeln!(s, "    activation: {}", if m.relu { "relu" } else { "linear" });
    let _ = writeln!(s, "    precision:\n      weight: {}\n      bias: {}\n      accum: {}\n      output: {}", m.weight, m.bias, m.accum, m.output);
}

/// The layers' names in the model file: `fc1`, `conv1`, `pool1`,
/// `flatten1`, ..., numbered per kind.
pub fn layer_names(net: &Network) -> Vec<String> {
    let mut counts = [0usize; 4];
    net.layers
        .iter()
        .map(|l| {
            let (k, prefix) = match l.kind {
                Kind::Dense(_) => (0, "fc"),
                Kind::Conv { .. } => (1, "conv"),
                Kind::MaxPool => (2, "pool"),
                Kind::Flatten => (3, "flatten"),
            };
            counts[k] += 1;
            format!("{prefix}{}", counts[k])
        })
        .collect()
}

/// The weights archive's arrays: each dense layer's `w` `[outputs,
/// inputs]`, each conv layer's `w` `[filters, 3, 3, channels]`, and their
/// `b` `[outputs]`, as the real values of their codes.
pub fn weight_arrays(net: &Network) -> Vec<NamedArray> {
    let mut out = Vec::new();
    for (l, name) in net.layers.iter().zip(layer_names(net)) {
        let (m, w_shape) = match &l.kind {
            Kind::Dense(m) => (m, vec![m.outputs, m.inputs]),
            Kind::Conv { mac, .. } => (mac, vec![mac.outputs, 3, 3, mac.inputs]),
            Kind::MaxPool | Kind::Flatten => continue,
        };
        let w = m.w.iter().map(|&r| m.weight.to_f64(r)).collect();
        let b = m.b.iter().map(|&r| m.bias.to_f64(r)).collect();
        out.push(NamedArray { name: format!("{name}/w"), shape: w_shape, values: OutValues::F64(w) });
        out.push(NamedArray { name: format!("{name}/b"), shape: vec![m.outputs], values: OutValues::F64(b) });
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
