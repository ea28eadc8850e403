//! The order of the trainable parameters (`docs/training.md`, "Order of
//! the trainable parameters"): layer by layer in model order; within a
//! layer its weights row-major (`w[o][i]`, `o` then `i`) if they are
//! trainable, then its biases (`b[o]`) if they are. Group `g` holds
//! parameters `g*P .. g*P + P - 1` of this order.

use crate::fixed::Format;
use crate::model::Model;
use crate::weights::Params;

/// Which tensor of a layer a parameter belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ParamKind {
    /// The weight matrix, flat row-major index `o * inputs + i`.
    Weight,
    /// The bias vector, index `o`.
    Bias,
}

/// One trainable parameter: a layer, a tensor and a flat index into it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ParamRef {
    /// Layer number in model order.
    pub layer: usize,
    /// Weight or bias.
    pub kind: ParamKind,
    /// Flat index into the tensor (row-major for weights).
    pub index: usize,
}

impl ParamRef {
    /// The output neuron of its layer whose sum the parameter enters.
    /// Callers guarantee the reference belongs to `model`.
    pub fn neuron(&self, model: &Model) -> usize {
        match self.kind {
            ParamKind::Weight => self.index / model.layers[self.layer].dense().inputs.max(1),
            ParamKind::Bias => self.index,
        }
    }

    /// The parameter's format.
    pub fn format(&self, model: &Model) -> Format {
        let p = &model.layers[self.layer].dense().precision;
        match self.kind {
            ParamKind::Weight => p.weight,
            ParamKind::Bias => p.bias,
        }
    }

    /// Its raw code in `params`.
    pub fn get(&self, params: &Params) -> i128 {
        let l = &params.layers[self.layer];
        match self.kind {
            ParamKind::Weight => l.weights[self.index],
            ParamKind::Bias => l.biases[self.index],
        }
    }

    /// Sets its raw code in `params`.
    pub fn set(&self, params: &mut Params, raw: i128) {
        let l = &mut params.layers[self.layer];
        match self.kind {
            ParamKind::Weight => l.weights[self.index] = raw,
            ParamKind::Bias => l.biases[self.index] = raw,
        }
    }

    /// `layer/w[o, i]` or `layer/b[o]`, for messages and logs.
    pub fn describe(&self, model: &Model) -> String {
        let layer = &model.layers[self.layer];
        match self.kind {
            ParamKind::Weight => {
                let n = layer.dense().inputs.max(1);
                format!("{}[{}, {}]", layer.weight_tensor(), self.index / n, self.index % n)
            }
            ParamKind::Bias => format!("{}[{}]", layer.bias_tensor(), self.index),
        }
    }
}

/// The trainable parameters of `model`, in training order.
pub fn trainable_params(model: &Model) -> Vec<ParamRef> {
    let mut out = Vec::with_capacity(usize::try_from(model.trainable_params()).unwrap_or(0));
    for (layer, l) in model.layers.iter().enumerate() {
        let d = l.dense();
        if d.trainable.weights {
            out.extend((0..d.inputs * d.outputs).map(|index| ParamRef { layer, kind: ParamKind::Weight, index }));
        }
        if d.trainable.biases {
            out.extend((0..d.outputs).map(|index| ParamRef { layer, kind: ParamKind::Bias, index }));
        }
    }
    out
}

/// The range a trained parameter of `format` is clamped to: `max_raw` above
/// and `lossless_min_raw` below (which is `min_raw` except for signed
/// `AP_SAT_SYM` formats, whose most negative code no conversion produces
/// and no weights archive can hold).
pub fn clamp_range(format: &Format) -> (i128, i128) {
    (format.lossless_min_raw(), format.max_raw())
}
