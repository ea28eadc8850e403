//! The imported network as a model file (YAML) and a weights archive.

use std::fmt::Write;

use fptgen_sim::tensor::{NamedArray, OutValues};

use super::network::{Kind, Mac, Network, Src};

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
    for (k, l) in net.layers.iter().enumerate() {
        let _ = writeln!(s, "  - name: {}    # {}", l.name, l.source().replace('#', "_"));
        // The previous layer (the network input for the first) is the default input.
        let default = if k == 0 { Src::Input } else { Src::Layer(k - 1) };
        let listed = l.inputs != [default];
        let names: Vec<&str> = l
            .inputs
            .iter()
            .map(|s| match s {
                Src::Input => "input",
                Src::Layer(j) => net.layers[*j].name.as_str(),
            })
            .collect();
        let type_name = match &l.kind {
            Kind::Dense(_) => "dense",
            Kind::Conv { .. } => "conv2d",
            Kind::MaxPool => "maxpool2d",
            Kind::Flatten => "flatten",
            Kind::BatchNorm(_) => "batchnorm",
            Kind::Concat => "concat",
            Kind::Add { .. } => "add",
        };
        let _ = writeln!(s, "    type: {type_name}");
        if listed {
            let _ = writeln!(s, "    inputs: [{}]", names.join(", "));
        }
        match &l.kind {
            Kind::Dense(m) => {
                if !listed {
                    let _ = writeln!(s, "    inputs: {}", m.inputs);
                }
                let _ = writeln!(s, "    outputs: {}", m.outputs);
                mac_fields(&mut s, m);
            }
            Kind::Conv { mac, stride, same } => {
                let padding = if *same { "same" } else { "valid" };
                let _ = writeln!(s, "    filters: {}\n    kernel: 3\n    stride: {stride}\n    padding: {padding}", mac.outputs);
                mac_fields(&mut s, mac);
            }
            Kind::MaxPool => {
                let _ = writeln!(s, "    pool: 2");
            }
            Kind::BatchNorm(b) => {
                let _ = writeln!(s, "    activation: {}", if b.relu { "relu" } else { "linear" });
                let _ = writeln!(s, "    precision:\n      scale: {}\n      shift: {}\n      accum: {}\n      output: {}", b.scale, b.shift, b.accum, b.output);
            }
            Kind::Add { output: Some(o) } => {
                let _ = writeln!(s, "    precision:\n      output: {o}");
            }
            Kind::Flatten | Kind::Concat | Kind::Add { output: None } => {}
        }
    }
    s
}

fn mac_fields(s: &mut String, m: &Mac) {
    let _ = writeln!(s, "    activation: {}", if m.relu { "relu" } else { "linear" });
    let _ = writeln!(s, "    precision:\n      weight: {}\n      bias: {}\n      accum: {}\n      output: {}", m.weight, m.bias, m.accum, m.output);
    if let Some([pe, simd]) = m.fold {
        let _ = writeln!(s, "    pe: {pe}\n    simd: {simd}");
    }
}

/// The weights archive's arrays: each dense layer's `w` `[outputs,
/// inputs]`, each conv layer's `w` `[filters, 3, 3, channels]`, and their
/// `b` `[outputs]`; each batch norm's `scale` and `shift` `[channels]`; as
/// the real values of their codes.
pub fn weight_arrays(net: &Network) -> Vec<NamedArray> {
    let mut out = Vec::new();
    let mut push = |name: String, shape: Vec<usize>, values: Vec<f64>| out.push(NamedArray { name, shape, values: OutValues::F64(values) });
    for l in &net.layers {
        let (m, w_shape) = match &l.kind {
            Kind::Dense(m) => (m, vec![m.outputs, m.inputs]),
            Kind::Conv { mac, .. } => (mac, vec![mac.outputs, 3, 3, mac.inputs]),
            Kind::BatchNorm(b) => {
                push(format!("{}/scale", l.name), vec![b.channels], b.scale_codes.iter().map(|&r| b.scale.to_f64(r)).collect());
                push(format!("{}/shift", l.name), vec![b.channels], b.shift_codes.iter().map(|&r| b.shift.to_f64(r)).collect());
                continue;
            }
            Kind::MaxPool | Kind::Flatten | Kind::Concat | Kind::Add { .. } => continue,
        };
        push(format!("{}/w", l.name), w_shape, m.w.iter().map(|&r| m.weight.to_f64(r)).collect());
        push(format!("{}/b", l.name), vec![m.outputs], m.b.iter().map(|&r| m.bias.to_f64(r)).collect());
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
