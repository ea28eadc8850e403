//! The order of the trainable parameters (`docs/training.md`, "Order of
//! the trainable parameters"): layer by layer in model order; within a
//! layer, tensor by tensor in its kind's order (a dense layer: weights,
//! then biases), the trainable ones only, each in C order (a dense
//! layer's weights row-major, `w[o][i]`, `o` then `i`). Group `g` holds
//! parameters `g*P .. g*P + P - 1` of this order.

use crate::fixed::Format;
use crate::model::Model;
use crate::tensor::unravel;
use crate::weights::Params;

/// One trainable parameter: a layer, one of its tensors and a flat index
/// into it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ParamRef {
    /// Layer number in model order.
    pub layer: usize,
    /// Tensor number in the layer's kind's order
    /// ([`crate::layers::LayerKind::tensors`]).
    pub tensor: usize,
    /// Flat index into the tensor (C order).
    pub index: usize,
}

impl ParamRef {
    /// True if the reference names a value of `model` (its layer and
    /// tensor exist and the index is in range).
    pub fn belongs_to(&self, model: &Model) -> bool {
        model.layers.get(self.layer).is_some_and(|l| l.kind().tensors().get(self.tensor).is_some_and(|t| self.index < t.len()))
    }

    /// The outputs of its layer that the parameter enters (appended to
    /// `out`). Callers guarantee the reference belongs to `model`.
    pub fn affected(&self, model: &Model, out: &mut Vec<usize>) {
        model.layers[self.layer].kind().affected(self.tensor, self.index, out)
    }

    /// The parameter's format.
    pub fn format(&self, model: &Model) -> Format {
        model.layers[self.layer].kind().tensors()[self.tensor].format
    }

    /// Its raw code in `params`.
    pub fn get(&self, params: &Params) -> i128 {
        params.layers[self.layer].tensors[self.tensor][self.index]
    }

    /// Sets its raw code in `params`.
    pub fn set(&self, params: &mut Params, raw: i128) {
        params.layers[self.layer].tensors[self.tensor][self.index] = raw;
    }

    /// `layer/w[o, i]` or `layer/b[o]` (the tensor's name and the index in
    /// its shape), for messages and logs.
    pub fn describe(&self, model: &Model) -> String {
        let layer = &model.layers[self.layer];
        let t = &layer.kind().tensors()[self.tensor];
        let ix: Vec<String> = unravel(self.index, &t.shape).iter().map(usize::to_string).collect();
        format!("{}[{}]", layer.tensor_name(t.key), ix.join(", "))
    }
}

/// The trainable parameters of `model`, in training order.
pub fn trainable_params(model: &Model) -> Vec<ParamRef> {
    let mut out = Vec::with_capacity(usize::try_from(model.trainable_params()).unwrap_or(0));
    for (layer, l) in model.layers.iter().enumerate() {
        for (tensor, t) in l.kind().tensors().iter().enumerate().filter(|(_, t)| t.trainable) {
            out.extend((0..t.len()).map(|index| ParamRef { layer, tensor, index }));
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
