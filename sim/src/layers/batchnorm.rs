//! The `batchnorm` layer kind: a per-channel scale and shift (inference-time
//! batch normalization with its statistics folded into the two tensors).
//!
//! For every value `x` of channel `c` (the last dimension of the input:
//! an image's channels, or each element of a vector), exactly the dense
//! arithmetic of one neuron with one input (docs/numerics.md):
//!
//! 1. `acc = cast<accum>(shift[c])`
//! 2. `acc = acc + cast<accum>(scale[c] * x)` (exact product, cast with the
//!    accumulator's modes; exact sum, then its overflow mode)
//! 3. `relu`: `acc = max(acc, 0)`; `linear` (the default): unchanged
//! 4. `y = cast<output>(acc)`
//!
//! Tensors: `scale` and `shift`, each shaped `[channels]`, each with its
//! own format (`precision: {scale, shift, accum, output}`); either may be
//! trainable. A frozen batch norm after a frozen layer may be folded into
//! that layer's weights by the generator where the folded values are
//! exact; the simulator always computes it as written here.

use num_traits::Float;

use super::{Activation, Backward, LayerInput, LayerKind, TensorSpec};
use crate::error::ModelError;
use crate::fixed::Format;
use crate::weights::LayerParams;

/// The model file's `type` of the kind.
pub const TYPE: &str = "batchnorm";

/// What the kind is, for the error that lists the types.
pub const WHAT: &str = "per-channel scale and shift";

/// Index of the scale tensor.
pub const SCALE: usize = 0;
/// Index of the shift tensor.
pub const SHIFT: usize = 1;

/// A per-channel scale and shift.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct BatchNorm {
    /// The input shape (the output has the same).
    pub shape: Vec<usize>,
    /// Channels: the last dimension.
    pub channels: usize,
    /// The format of the input values.
    pub input_format: Format,
    /// Scale format.
    pub scale: Format,
    /// Shift format.
    pub shift: Format,
    /// Accumulator format.
    pub accum: Format,
    /// Output format.
    pub output: Format,
    /// Activation.
    pub activation: Activation,
    /// Which of scale and shift are trainable.
    pub trainable: [bool; 2],
}

impl BatchNorm {
    /// Reads a `type: batchnorm` entry of the model file.
    pub(crate) fn from_file(input: &LayerInput) -> Result<BatchNorm, ModelError> {
        input.only(&["activation", "precision", "trainable"], &["scale", "shift", "accum", "output"])?;
        let [scale, shift, accum, output] = input.formats(["scale", "shift", "accum", "output"])?;
        let channels = *input.shape.last().unwrap_or(&1);
        Ok(BatchNorm {
            shape: input.shape.to_vec(),
            channels,
            input_format: input.format,
            scale,
            shift,
            accum,
            output,
            activation: input.activation(true)?,
            trainable: input.trainable(["scale", "shift"])?,
        })
    }

    /// Output `i` of input code `x` (channel `i % channels`).
    fn value(&self, p: &LayerParams, i: usize, x: i128) -> i128 {
        let c = i % self.channels;
        let mut acc = self.accum.cast_from(p.tensors[SHIFT][c], &self.shift);
        acc = self.accum.add(acc, self.accum.mul_from(p.tensors[SCALE][c], &self.scale, x, &self.input_format));
        if self.activation == Activation::Relu && acc < 0 {
            acc = 0;
        }
        self.output.cast_from(acc, &self.accum)
    }

    fn forward_float<T: Float>(&self, params: &[Vec<T>], x: &[T]) -> Vec<T> {
        x.iter()
            .enumerate()
            .map(|(i, &v)| {
                let c = i % self.channels;
                let y = params[SHIFT][c] + params[SCALE][c] * v;
                if self.activation == Activation::Relu && y < T::zero() {
                    T::zero()
                } else {
                    y
                }
            })
            .collect()
    }
}

impl LayerKind for BatchNorm {
    fn type_name(&self) -> &'static str {
        TYPE
    }

    fn describe(&self) -> String {
        format!("batchnorm {} channels", self.channels)
    }

    fn input_len(&self) -> usize {
        self.shape.iter().product()
    }

    fn output_shape(&self) -> Vec<usize> {
        self.shape.clone()
    }

    fn output_format(&self) -> Format {
        self.output
    }

    fn output_floor(&self) -> i128 {
        match self.activation {
            Activation::Relu => 0.max(self.output.lossless_min_raw()),
            Activation::Linear => self.output.lossless_min_raw(),
        }
    }

    fn tensors(&self) -> Vec<TensorSpec> {
        vec![
            TensorSpec::new("scale", "scale", vec![self.channels], self.scale, self.trainable[SCALE]),
            TensorSpec::new("shift", "shift", vec![self.channels], self.shift, self.trainable[SHIFT]),
        ]
    }

    fn macs(&self) -> u64 {
        self.input_len() as u64
    }

    fn forward(&self, _input_format: Format, p: &LayerParams, x: &[i128]) -> Vec<i128> {
        x.iter().enumerate().map(|(i, &v)| self.value(p, i, v)).collect()
    }

    fn recompute(&self, _input_format: Format, p: &LayerParams, x: &[i128], outputs: &[usize], out: &mut [i128]) {
        for &o in outputs {
            out[o] = self.value(p, o, x[o]);
        }
    }

    fn affected(&self, _tensor: usize, index: usize, out: &mut Vec<usize>) {
        out.extend((index..self.input_len()).step_by(self.channels));
    }

    fn forward_f64(&self, params: &[Vec<f64>], x: &[f64]) -> Vec<f64> {
        self.forward_float(params, x)
    }

    fn forward_f32(&self, params: &[Vec<f32>], x: &[f32]) -> Vec<f32> {
        self.forward_float(params, x)
    }

    fn backward(&self, b: Backward<'_>) -> Vec<f32> {
        let (gs, gt) = match b.grads {
            [gs, gt, ..] => (gs, gt),
            _ => return Vec::new(),
        };
        for (i, (&dl, &xi)) in b.delta.iter().zip(b.x).enumerate() {
            let c = i % self.channels;
            gs[c] += dl * xi;
            gt[c] += dl;
        }
        if !b.want_input {
            return Vec::new();
        }
        b.delta.iter().enumerate().map(|(i, &dl)| dl * b.params[SCALE][i % self.channels]).collect()
    }

    fn init_masters(&self, _draw: &mut dyn FnMut(f32) -> f32) -> Vec<Vec<f32>> {
        vec![vec![1.0; self.channels], vec![0.0; self.channels]]
    }

    fn formats(&self) -> Vec<(&'static str, Format)> {
        vec![("scale", self.scale), ("shift", self.shift), ("accum", self.accum), ("output", self.output)]
    }

    fn folding(&self) -> String {
        "-".into()
    }

    fn activation(&self) -> Option<Activation> {
        Some(self.activation)
    }
}
