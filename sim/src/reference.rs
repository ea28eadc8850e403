//! The floating-point reference path: the same network evaluated in a float
//! type with no quantization between operations, for comparison with the
//! bit-accurate simulator.
//!
//! Parameters are the exact values of their fixed-point codes; inputs are
//! given as floats. Generic over [`num_traits::Float`] (use `f64` or `f32`).

use num_traits::Float;

use crate::model::{Activation, Model};
use crate::weights::Params;

/// Evaluates `model` on one float sample. `input.len()` must equal
/// `model.input_len()`; returns `None` otherwise.
pub fn infer<T: Float>(model: &Model, params: &Params, input: &[T]) -> Option<Vec<T>> {
    if input.len() != model.input_len() {
        return None;
    }
    let mut x: Vec<T> = input.to_vec();
    for (layer, p) in model.layers.iter().zip(&params.layers) {
        let d = layer.dense();
        let pr = &d.precision;
        let w: Vec<T> = p.weights.iter().map(|&r| T::from(pr.weight.to_f64(r)).unwrap_or_else(T::nan)).collect();
        let mut y = Vec::with_capacity(d.outputs);
        for o in 0..d.outputs {
            let mut acc = T::from(pr.bias.to_f64(p.biases[o])).unwrap_or_else(T::nan);
            for i in 0..d.inputs {
                acc = acc + w[o * d.inputs + i] * x[i];
            }
            if d.activation == Activation::Relu && acc < T::zero() {
                acc = T::zero();
            }
            y.push(acc);
        }
        x = y;
    }
    Some(x)
}
