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
    /// Per layer, its weights as `i32` when [`NarrowLayer::new`] applies.
    narrow: Vec<Option<NarrowLayer>>,
}

/// A layer whose dot products [`dense_neuron`] forms in `i32` (exact
/// products, a wrapping accumulator, [`dot_product_bits`] at most 32),
/// with its weight codes converted to `i32` once. [`Network`] runs such a
/// layer with [`NarrowLayer::forward`], which gives [`dense_forward`]'s bits.
#[derive(Debug, Clone)]
struct NarrowLayer {
    /// The layer's input format.
    input_format: Format,
    /// [`exact_product_shift`] of the layer.
    shift: u32,
    /// The weight codes, row by row.
    weights: Vec<i32>,
}

impl NarrowLayer {
    /// `Some` when the layer qualifies; `p` must hold codes of its formats.
    fn new(d: &Dense, input_format: Format, p: &LayerParams) -> Option<NarrowLayer> {
        let shift = exact_product_shift(d, input_format)?;
        let narrow = d.precision.accum.overflow() == Overflow::Wrap
            && dot_product_bits(d.precision.weight, input_format, d.inputs)? <= 32;
        // The codes fit i32 (dot_product_bits bounds them too).
        narrow.then(|| NarrowLayer { input_format, shift, weights: p.weights.iter().map(|&w| w as i32).collect() })
    }

    /// [`dense_forward`]'s result. Inputs that are not all codes of the
    /// input format (possible only with a hand-built [`Model`] whose
    /// layers' formats do not chain) go to [`dense_forward`] itself.
    fn forward(&self, d: &Dense, p: &LayerParams, x: &[i128]) -> Vec<i128> {
        if !x.iter().all(|&v| self.input_format.contains_raw(v)) {
            return dense_forward(d, self.input_format, p, x);
        }
        let x: Vec<i32> = x.iter().map(|&v| v as i32).collect();
        self.weights
            .chunks_exact(d.inputs)
            .enumerate()
            .map(|(o, row)| {
                let sum: i32 = row.iter().zip(&x).map(|(&w, &xi)| w * xi).sum();
                finish_wrapping(d, p, o, i128::from(sum), self.shift)
            })
            .collect()
    }
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
        let narrow = model
            .layers
            .iter()
            .zip(&params.layers)
            .map(|(layer, p)| NarrowLayer::new(layer.dense(), layer.input_format, p))
            .collect();
        Ok(Network { model, params, narrow })
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
        for ((layer, p), narrow) in self.model.layers.iter().zip(&self.params.layers).zip(&self.narrow) {
            let x = outs.last().map(Vec::as_slice).unwrap_or(input);
            let y = match narrow {
                Some(n) => n.forward(layer.dense(), p, x),
                None => dense_forward(layer.dense(), layer.input_format, p, x),
            };
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
/// (wrap-around is associative); the unshifted dot product is then formed
/// in `i32` or `i64` when [`dot_product_bits`] shows it cannot overflow
/// them, in `i128` otherwise. Without an exact product this is
/// [`dense_neuron_reference`]. All give the same bits (`sim/tests/fast_path.rs`).
///
/// Like the reference, the fast path assumes `x` holds codes of
/// `input_format` and `p` codes of the layer's formats (as
/// [`Network::new`] and [`Network::check_input`] ensure).
pub fn dense_neuron(d: &Dense, input_format: Format, p: &LayerParams, x: &[i128], o: usize) -> i128 {
    let Some(shift) = exact_product_shift(d, input_format) else {
        return dense_neuron_reference(d, input_format, p, x, o);
    };
    let pr = &d.precision;
    let row = &p.weights[o * d.inputs..(o + 1) * d.inputs];
    if pr.accum.overflow() == Overflow::Wrap {
        // Each |w * x| << shift fits the accumulator (< 2^64), so a sum of at
        // most 2^20 of them cannot overflow an i128.
        let sum: i128 = match dot_product_bits(pr.weight, input_format, row.len()) {
            // Every |w * x| and every partial sum is below 2^(bits-1), so the
            // codes and the sum fit the narrower type exactly.
            Some(bits) if bits <= 32 => {
                i128::from(row.iter().zip(x).map(|(&w, &xi)| (w as i32) * (xi as i32)).sum::<i32>())
            }
            Some(bits) if bits <= 64 => {
                i128::from(row.iter().zip(x).map(|(&w, &xi)| (w as i64) * (xi as i64)).sum::<i64>())
            }
            _ => row.iter().zip(x).map(|(&w, &xi)| w * xi).sum(),
        };
        return finish_wrapping(d, p, o, sum, shift);
    }
    let bias = pr.accum.cast_from(p.biases[o], &pr.bias);
    let mut acc = row.iter().zip(x).fold(bias, |acc, (&w, &xi)| pr.accum.add(acc, (w * xi) << shift));
    if d.activation == Activation::Relu && acc < 0 {
        acc = 0;
    }
    pr.output.cast_from(acc, &pr.accum)
}

/// Output `o` of a layer with exact products and an `AP_WRAP` accumulator,
/// from the exact dot product `sum` of its weight and input codes: the
/// bias, then the products' sum shifted into the accumulator (one wrap),
/// the activation and the output cast.
fn finish_wrapping(d: &Dense, p: &LayerParams, o: usize, sum: i128, shift: u32) -> i128 {
    let pr = &d.precision;
    let bias = pr.accum.cast_from(p.biases[o], &pr.bias);
    let mut acc = pr.accum.add(bias, sum << shift);
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

/// The smallest `b` such that every code of `weight` and of `input`, and
/// every sum of at most `n` products of one code of each, lies strictly
/// within `-2^(b-1) .. 2^(b-1)`, that is, fits a `b`-bit two's complement
/// integer; `None` if `b` would exceed 127. [`dense_neuron`] uses it to
/// form the dot product in `i32` or `i64`.
pub fn dot_product_bits(weight: Format, input: Format, n: usize) -> Option<u32> {
    let mag = |f: Format| f.min_raw().unsigned_abs().max(f.max_raw().unsigned_abs());
    let (w, x) = (mag(weight), mag(input));
    let bound = w.checked_mul(x)?.checked_mul(u128::try_from(n).ok()?)?.max(w).max(x);
    // |v| <= bound < 2^(b-1) for every value v in question.
    let bits = 128 - bound.leading_zeros() + 1;
    (bits <= 127).then_some(bits)
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
