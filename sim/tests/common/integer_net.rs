//! A two-layer network with integer formats throughout (every fraction
//! width 0), shared by the feedback-rule tests: with `lr_shift` 0 an update
//! is `w -= delta * x` and `b -= delta` exactly, and the error `e` (like an
//! SGM module's `h`) saturates to 10 bits (the 8-bit output plus 2).

use std::path::Path;

use fptgen_sim::model::{self, Model};

/// Hidden layer `h` (2 -> 2, relu) and output layer `o` (2 -> 2, linear),
/// both trainable, no `training:` section.
pub const INTEGER_NET: &str = "name: t\ninput: {shape: [2], format: 'ap_int<8>'}\nweights: w.npz\nlayers:\n\
  - {name: h, type: dense, inputs: 2, outputs: 2, activation: relu, trainable: [weights, biases],\n\
     precision: {weight: 'ap_int<8>', bias: 'ap_int<8>', accum: 'ap_int<16>', output: 'ap_int<8>'}}\n\
  - {name: o, type: dense, inputs: 2, outputs: 2, activation: linear, trainable: [weights, biases],\n\
     precision: {weight: 'ap_int<8>', bias: 'ap_int<8>', accum: 'ap_int<16>', output: 'ap_int<8>'}}\n";

/// Parses a model file's text (as `t.yaml`), panicking with the error.
pub fn parse(text: &str) -> Model {
    model::parse(text, Path::new("t.yaml")).unwrap_or_else(|e| panic!("{e}\n{text}"))
}
