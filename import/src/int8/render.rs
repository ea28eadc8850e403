//! The imported int8 chain as a model file (YAML) and a weights archive:
//! `interface:` with the input's scale and zero point, `dense_int8` and
//! `requantize` layers with their quantizations, each weight `w` as its
//! int8 codes `[outputs, inputs]` and bias `b` as its int32 codes.
//!
//! A scale is written as the decimal of its float32 value widened to f64
//! (shortest round trip), which reads back to the same float32 bits.

use std::fmt::Write;

use fptgen_sim::layers::dense_int8::Affine;
use fptgen_sim::tensor::{NamedArray, OutValues};

use super::{Kind, Network};

/// `{scale: s, zero_point: z}`.
fn affine(q: &Affine) -> String {
    format!("{{scale: {:?}, zero_point: {}}}", f64::from(q.scale()), q.zero_point())
}

/// The model file of `net`, named `name`, reading `weights.npz`; `source`
/// (the ONNX file's name) goes into a comment.
pub fn model_yaml(net: &Network, name: &str, source: &str) -> String {
    let mut s = String::new();
    // Writing to a String cannot fail.
    let _ = writeln!(s, "# Imported from {source} by fptgen import (QONNX, int8 domain; docs/import.md).");
    let _ = writeln!(s, "name: {name}");
    let _ = writeln!(s, "input:\n  shape: [{}]\n  format: ap_fixed<8,8>          # int8 codes", net.inputs);
    let _ = writeln!(s, "# The input Quant's scale and zero point (an unsigned Quant's codes minus 128).");
    let _ = writeln!(s, "interface: {}", affine(&net.interface));
    let _ = writeln!(s, "weights: weights.npz\nlayers:");
    for l in &net.layers {
        let _ = writeln!(s, "  - name: {}    # node '{}' ({})", l.name, l.node.0.replace('#', "_"), l.node.1);
        match &l.kind {
            Kind::Dense(d) => {
                let _ = writeln!(s, "    type: dense_int8\n    inputs: {}\n    outputs: {}", d.inputs, d.outputs);
                let _ = writeln!(s, "    activation: {}", if d.relu { "relu" } else { "linear" });
                let scales: Vec<String> = d.weight_scales.iter().map(|&w| format!("{:?}", f64::from(w))).collect();
                let _ = writeln!(
                    s,
                    "    quantization:\n      input: {}\n      output: {}\n      weight_scales: [{}]",
                    affine(&d.input),
                    affine(&d.output),
                    scales.join(", ")
                );
            }
            Kind::Requantize(from, to) => {
                let _ = writeln!(s, "    type: requantize\n    quantization:\n      input: {}\n      output: {}", affine(from), affine(to));
            }
        }
    }
    s
}

/// The weights archive's arrays: each `dense_int8` layer's `w` and `b` codes.
pub fn weight_arrays(net: &Network) -> Vec<NamedArray> {
    let mut out = Vec::new();
    for l in &net.layers {
        if let Kind::Dense(d) = &l.kind {
            let f = |v: &[i64]| OutValues::F64(v.iter().map(|&c| c as f64).collect());
            out.push(NamedArray { name: format!("{}/w", l.name), shape: vec![d.outputs, d.inputs], values: f(&d.w) });
            out.push(NamedArray { name: format!("{}/b", l.name), shape: vec![d.outputs], values: f(&d.b) });
        }
    }
    out
}
