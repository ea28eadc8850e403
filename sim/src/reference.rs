//! The floating-point reference path: the same network evaluated in a float
//! type with no quantization between operations, for comparison with the
//! bit-accurate simulator.
//!
//! Layers take the gather of their inputs, as in the simulator.
//! Parameters are the exact values of their fixed-point codes; inputs are
//! given as floats. In `f64` or `f32` ([`Real`]).

use num_traits::Float;

use crate::model::{Model, Source};
use crate::weights::Params;

/// Evaluates `model` on one float sample. `input.len()` must equal
/// `model.input_len()`; returns `None` otherwise.
pub fn infer<T: Real>(model: &Model, params: &Params, input: &[T]) -> Option<Vec<T>> {
    if input.len() != model.input_len() {
        return None;
    }
    let mut outs: Vec<Vec<T>> = Vec::with_capacity(model.layers.len());
    for (l, (layer, p)) in model.layers.iter().zip(&params.layers).enumerate() {
        let k = layer.kind();
        let real: Vec<Vec<T>> = k
            .tensors()
            .iter()
            .zip(&p.tensors)
            .map(|(t, codes)| codes.iter().map(|&r| T::from(t.format.to_f64(r)).unwrap_or_else(T::nan)).collect())
            .collect();
        let y = {
            let x = model.layer_input(l, |s| match s {
                Source::Input => input,
                Source::Layer(j) => &outs[j],
            });
            T::forward(k, &real, &x)
        };
        outs.push(y);
    }
    Some(outs.pop().unwrap_or_else(|| input.to_vec()))
}

/// Every layer's output for one float sample, in `f64`, with real-valued
/// parameters `params` (per layer, per tensor of its kind, as
/// [`Params`]'s codes would convert; a float trainer's master weights).
/// `input.len()` must equal `model.input_len()`; returns `None` otherwise.
pub fn forward_all_real(model: &Model, params: &[Vec<Vec<f64>>], input: &[f64]) -> Option<Vec<Vec<f64>>> {
    if input.len() != model.input_len() || params.len() != model.layers.len() {
        return None;
    }
    let mut outs: Vec<Vec<f64>> = Vec::with_capacity(model.layers.len());
    for (l, (layer, p)) in model.layers.iter().zip(params).enumerate() {
        let x = model.layer_input(l, |s| match s {
            Source::Input => input,
            Source::Layer(j) => &outs[j],
        });
        let y = layer.kind().forward_f64(p, &x);
        outs.push(y);
    }
    Some(outs)
}

/// The real values of `params`' codes, per layer and tensor.
pub fn real_params(model: &Model, params: &Params) -> Vec<Vec<Vec<f64>>> {
    model
        .layers
        .iter()
        .zip(&params.layers)
        .map(|(layer, p)| layer.kind().tensors().iter().zip(&p.tensors).map(|(t, codes)| codes.iter().map(|&r| t.format.to_f64(r)).collect()).collect())
        .collect()
}

/// The float types of the reference path: `f32` and `f64`, each with its
/// layer kinds' forward pass.
pub trait Real: Float {
    /// The layer's float reference in this type.
    fn forward(kind: &dyn crate::layers::LayerKind, params: &[Vec<Self>], x: &[Self]) -> Vec<Self>;
}

impl Real for f64 {
    fn forward(kind: &dyn crate::layers::LayerKind, params: &[Vec<f64>], x: &[f64]) -> Vec<f64> {
        kind.forward_f64(params, x)
    }
}

impl Real for f32 {
    fn forward(kind: &dyn crate::layers::LayerKind, params: &[Vec<f32>], x: &[f32]) -> Vec<f32> {
        kind.forward_f32(params, x)
    }
}
