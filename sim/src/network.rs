//! The bit-accurate inference simulator: the executable specification of the
//! hardware's arithmetic.
//!
//! A dense layer computes, for each output `o`, exactly this (every step in
//! the formats of `docs/numerics.md`, section "Layer arithmetic"):
//!
//! 1. `acc = cast<accum>(b[o])`
//! 2. for `i` in `0..inputs`, in increasing order:
//!    `acc = acc + cast<accum>(w[o][i] * x[i])` — the product is exact, then
//!    cast with the accumulator's quantization and overflow modes; the sum is
//!    exact, then the accumulator's overflow mode applies (so with saturating
//!    accumulators the order matters, and it is this one);
//! 3. `relu`: `acc = max(acc, 0)`; `linear`: unchanged;
//! 4. `y[o] = cast<output>(acc)`.

use rayon::prelude::*;

use crate::fixed::{Format, Overflow};
use crate::model::{Activation, Dense, Model};
use crate::weights::{LayerParams, Params};

/// Why a simulator call was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SimError {
    /// Parameters do not match the model's shapes.
    #[error("layer '{layer}': {what} has {got} values but the model needs {want}")]
    ParamShape {
        /// Layer name.
        layer: String,
        /// "weights" or "biases".
        what: &'static str,
        /// Values given.
        got: usize,
        /// Values needed.
        want: usize,
    },
    /// A raw parameter code is outside its format.
    #[error("layer '{layer}': {what}[{index}] = {raw} is not a code of {format}")]
    ParamRange {
        /// Layer name.
        layer: String,
        /// "weights" or "biases".
        what: &'static str,
        /// Flat index.
        index: usize,
        /// The code.
        raw: i128,
        /// The format.
        format: Format,
    },
    /// An input vector has the wrong length.
    #[error("input sample {sample} has {got} values but the network takes {want}")]
    InputLen {
        /// Sample number.
        sample: usize,
        /// Values given.
        got: usize,
        /// Values needed.
        want: usize,
    },
    /// A raw input code is outside the input format.
    #[error("input sample {sample}, value {index}: raw code {raw} is not a code of {format}")]
    InputRange {
        /// Sample number.
        sample: usize,
        /// Index within the sample.
        index: usize,
        /// The code.
        raw: i128,
        /// The input format.
        format: Format,
    },
}

/// A model with its parameters, ready to run.
#[derive(Debug, Clone)]
pub struct Network {
    model: Model,
    params: Params,
}

impl Network {
    /// Pairs a model with parameters, checking their shapes and codes.
    pub fn new(model: Model, params: Params) -> Result<Network, SimError> {
        if params.layers.len() != model.layers.len() {
            return Err(SimError::ParamShape {
                layer: model.name.clone(),
                what: "weights",
                got: params.layers.len(),
                want: model.layers.len(),
            });
        }
        for (layer, p) in model.layers.iter().zip(&params.layers) {
            let d = layer.dense();
            for (what, vals, want, fmt) in [
                ("weights", &p.weights, d.inputs * d.outputs, d.precision.weight),
                ("biases", &p.biases, d.outputs, d.precision.bias),
            ] {
                if vals.len() != want {
                    return Err(SimError::ParamShape { layer: layer.name.clone(), what, got: vals.len(), want });
                }
                if let Some((index, &raw)) = vals.iter().enumerate().find(|(_, &r)| !fmt.contains_raw(r)) {
                    return Err(SimError::ParamRange { layer: layer.name.clone(), what, index, raw, format: fmt });
                }
            }
        }
        Ok(Network { model, params })
    }

    /// The model.
    pub fn model(&self) -> &Model {
        &self.model
    }

    /// The parameters.
    pub fn params(&self) -> &Params {
        &self.params
    }

    /// The model and its parameters, taken apart.
    pub fn into_parts(self) -> (Model, Params) {
        (self.model, self.params)
    }

    /// Checks that `input` is one sample of raw input codes.
    pub fn check_input(&self, sample: usize, input: &[i128]) -> Result<(), SimError> {
        let want = self.model.input_len();
        if input.len() != want {
            return Err(SimError::InputLen { sample, got: input.len(), want });
        }
        let f = self.model.input_format;
        if let Some((index, &raw)) = input.iter().enumerate().find(|(_, &r)| !f.contains_raw(r)) {
            return Err(SimError::InputRange { sample, index, raw, format: f });
        }
        Ok(())
    }

    /// Runs one sample (raw codes of the input format) and returns the raw
    /// codes of every layer's output, input to output.
    pub fn trace(&self, input: &[i128]) -> Result<Vec<Vec<i128>>, SimError> {
        self.check_input(0, input)?;
        let mut outs: Vec<Vec<i128>> = Vec::with_capacity(self.model.layers.len());
        for (layer, p) in self.model.layers.iter().zip(&self.params.layers) {
            let x = outs.last().map(Vec::as_slice).unwrap_or(input);
            let y = dense_forward(layer.dense(), layer.input_format, p, x);
            outs.push(y);
        }
        Ok(outs)
    }

    /// Runs one sample and returns the raw codes of the network's output.
    pub fn infer(&self, input: &[i128]) -> Result<Vec<i128>, SimError> {
        Ok(self.trace(input)?.pop().unwrap_or_default())
    }

    /// Runs many samples in parallel (rayon); the result for each sample is
    /// the same as [`Network::infer`]'s.
    pub fn infer_batch(&self, inputs: &[Vec<i128>]) -> Result<Vec<Vec<i128>>, SimError> {
        for (s, x) in inputs.iter().enumerate() {
            self.check_input(s, x)?;
        }
        inputs.par_iter().map(|x| self.infer(x)).collect()
    }
}

/// One dense layer on raw codes: `x` in `input_format`, result in the
/// layer's output format. Callers guarantee the lengths.
pub fn dense_forward(d: &Dense, input_format: Format, p: &LayerParams, x: &[i128]) -> Vec<i128> {
    (0..d.outputs).map(|o| dense_neuron(d, input_format, p, x, o)).collect()
}

/// Output `o` of one dense layer on raw codes (steps 1 to 4 above, the
/// whole sum in input order): what [`dense_forward`] computes for that
/// output. Callers guarantee the lengths and `o < d.outputs`.
///
/// When every product fits the accumulator exactly (see [`exact_product_shift`]),
/// the products are plain integer products shifted into the accumulator's
/// fraction bits, and with `AP_WRAP` the sum is wrapped once at the end
/// (wrap-around is associative); otherwise this is
/// [`dense_neuron_reference`]. Both give the same bits (`sim/tests/fast_path.rs`).
pub fn dense_neuron(d: &Dense, input_format: Format, p: &LayerParams, x: &[i128], o: usize) -> i128 {
    let Some(shift) = exact_product_shift(d, input_format) else {
        return dense_neuron_reference(d, input_format, p, x, o);
    };
    let pr = &d.precision;
    let row = &p.weights[o * d.inputs..(o + 1) * d.inputs];
    let bias = pr.accum.cast_from(p.biases[o], &pr.bias);
    let mut acc = if pr.accum.overflow() == Overflow::Wrap {
        // Each |w * x| << shift fits the accumulator (< 2^64), so a sum of at
        // most 2^20 of them cannot overflow an i128.
        let sum: i128 = row.iter().zip(x).map(|(&w, &xi)| w * xi).sum();
        pr.accum.add(bias, sum << shift)
    } else {
        row.iter().zip(x).fold(bias, |acc, (&w, &xi)| pr.accum.add(acc, (w * xi) << shift))
    };
    if d.activation == Activation::Relu && acc < 0 {
        acc = 0;
    }
    pr.output.cast_from(acc, &pr.accum)
}

/// The definition of one output of a dense layer, operation by operation:
/// every product cast to the accumulator, every sum cast, in input order.
pub fn dense_neuron_reference(d: &Dense, input_format: Format, p: &LayerParams, x: &[i128], o: usize) -> i128 {
    let pr = &d.precision;
    let row = &p.weights[o * d.inputs..(o + 1) * d.inputs];
    let mut acc = pr.accum.cast_from(p.biases[o], &pr.bias);
    for (&w, &xi) in row.iter().zip(x) {
        let prod = pr.accum.mul_from(w, &pr.weight, xi, &input_format);
        acc = pr.accum.add(acc, prod);
    }
    if d.activation == Activation::Relu && acc < 0 {
        acc = 0;
    }
    pr.output.cast_from(acc, &pr.accum)
}

/// `Some(s)` when casting any product of a weight code and an input code to
/// the accumulator is exact and changes nothing but the scale: the
/// accumulator has `s >= 0` more fraction bits than the product, and every
/// product shifted by `s` lies within the codes a conversion leaves
/// unchanged (`lossless_min_raw ..= max_raw`). `None` otherwise.
pub fn exact_product_shift(d: &Dense, input_format: Format) -> Option<u32> {
    let pr = &d.precision;
    let shift = pr.accum.frac_bits() - (pr.weight.frac_bits() + input_format.frac_bits());
    let shift = u32::try_from(shift).ok().filter(|&s| s < 64)?;
    let (w, x) = (pr.weight, input_format);
    let mut lo = i128::MAX;
    let mut hi = i128::MIN;
    for a in [w.min_raw(), w.max_raw()] {
        for b in [x.min_raw(), x.max_raw()] {
            let p = a.checked_mul(b)?.checked_mul(1i128.checked_shl(shift)?)?;
            lo = lo.min(p);
            hi = hi.max(p);
        }
    }
    (lo >= pr.accum.lossless_min_raw() && hi <= pr.accum.max_raw()).then_some(shift)
}

/// Converts float input values to raw codes of the model's input format,
/// with that format's quantization and overflow modes (as the sensor
/// interface would). Errors name the first non-finite value's index.
pub fn quantize_input(model: &Model, values: &[f64]) -> Result<Vec<i128>, (usize, String)> {
    values
        .iter()
        .enumerate()
        .map(|(i, &x)| model.input_format.quantize_f64(x).map_err(|e| (i, e.to_string())))
        .collect()
}
