//! The `dense_int8` layer kind: fully connected on affine int8 values,
//! exactly as TFLite's reference int8 `FULLY_CONNECTED` kernel computes it
//! (issue 15; `docs/numerics.md`, "Int8 requantization" and "Int8 layers").
//!
//! Values are affine int8: `real = (code - zero_point) * scale`. In the
//! simulator an int8 activation is its code (`-128..=127`) in the format
//! `ap_fixed<8,8,AP_TRN,AP_WRAP>` ([`int8_format`]), so the real value of
//! an `ap_fixed` code is the int8 code itself; the scale and zero point are
//! the layer's own fields ([`Affine`]). The weights are symmetric int8
//! codes in `-127..=127` (`w`, `[outputs, inputs]`, format
//! `ap_fixed<8,8,AP_TRN,AP_SAT_SYM>`), one scale per output channel or one
//! for all; the biases are int32 codes (`b`, `[outputs]`,
//! `ap_fixed<32,32>`) whose scale `s_in * s_w[c]` is derived, never given.
//!
//! For output channel `c` the layer computes [`crate::int8::FullyConnected`]:
//!
//! ```text
//! acc = sum_i w[c][i] * (x[i] - z_in) + b[c]                      (int32)
//! y   = clamp(MultiplyByQuantizedMultiplier(acc, M_c, shift_c) + z_out, act_min, act_max)
//! ```
//!
//! with `(M_c, shift_c) = QuantizeMultiplier((double) s_in * (double) s_w[c] /
//! (double) s_out)` and the activation range of `linear`, `relu` or
//! `relu6` as TFLite's `CalculateActivationRangeQuantized` gives it.

use num_traits::Float;
use serde_saphyr::{Location, Spanned};

use super::{Activation, Backward, LayerInput, LayerKind, TensorSpec, Trainable};
use crate::error::{ModelError, TensorError};
use crate::int8::tflite::{Activation as TfliteActivation, FullyConnectedOp, TfliteModel};
use crate::fixed::{Format, Overflow, Quant};
use crate::int8::{activation_range, FullyConnected, FullyConnectedParams, Int8Error, QuantizedMultiplier, Requant, Rounding};
use crate::model::schema::{ActivationFile, AffineFile, InputsFile, RoundingFile, ScalesFile, TfliteOpFile, TrainableFile};
use crate::model::Checker;
use crate::weights::LayerParams;

/// The model file's `type` of the kind.
pub const TYPE: &str = "dense_int8";

/// What the kind is, for the error that lists the types.
pub const WHAT: &str = "fully connected on affine int8 values, as TFLite's reference int8 kernel (issue 15)";

/// Index of the weight tensor in [`LayerParams::tensors`].
pub const W: usize = 0;
/// Index of the bias tensor in [`LayerParams::tensors`].
pub const B: usize = 1;

/// The format of an int8 activation's codes: `ap_fixed<8,8,AP_TRN,AP_WRAP>`.
pub fn int8_format() -> Format {
    Format::new(true, 8, 8, Quant::Trn, Overflow::Wrap).expect("a valid format")
}

/// The format of symmetric int8 weight codes: `ap_fixed<8,8,AP_TRN,AP_SAT_SYM>`
/// (its codes are `-128..=127`; symmetric saturation keeps random draws and
/// training within `-127..=127`, and [`LayerKind::check_params`] refuses -128).
pub fn weight_format() -> Format {
    Format::new(true, 8, 8, Quant::Trn, Overflow::SatSym).expect("a valid format")
}

/// The format of int32 bias codes: `ap_fixed<32,32,AP_TRN,AP_WRAP>`.
pub fn bias_format() -> Format {
    Format::new(true, 32, 32, Quant::Trn, Overflow::Wrap).expect("a valid format")
}

/// The affine quantization of an int8 tensor: `real = (code - zero_point) * scale`,
/// the scale a positive finite float32 (kept as its bits, so that equality
/// is bit for bit), the zero point in `-128..=127`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Affine {
    scale_bits: u32,
    zero_point: i32,
}

impl Affine {
    /// The quantization of `scale` and `zero_point`, or a message saying
    /// which is out of its domain.
    pub fn new(scale: f32, zero_point: i64) -> Result<Affine, String> {
        if !(scale.is_finite() && scale > 0.0) {
            return Err(format!("scale {scale} is not a positive finite float32"));
        }
        if !(-128..=127).contains(&zero_point) {
            return Err(format!("zero point {zero_point} is outside -128..=127"));
        }
        Ok(Affine { scale_bits: scale.to_bits(), zero_point: zero_point as i32 })
    }

    /// The scale.
    pub fn scale(&self) -> f32 {
        f32::from_bits(self.scale_bits)
    }

    /// The zero point.
    pub fn zero_point(&self) -> i32 {
        self.zero_point
    }

    /// Why `self` (a layer's input quantization) differs from `feed` (the
    /// quantization of what feeds it, described by `from`), naming the
    /// parameter and both values; `None` if they are equal bit for bit.
    pub fn difference(&self, feed: &Affine, from: &str) -> Option<String> {
        if self.scale_bits != feed.scale_bits {
            return Some(format!(
                "input scale is {:?} (float32 bits {:#010x}) but {from}'s is {:?} (bits {:#010x})",
                self.scale(),
                self.scale_bits,
                feed.scale(),
                feed.scale_bits
            ));
        }
        if self.zero_point != feed.zero_point {
            return Some(format!("input zero point is {} but {from}'s is {}", self.zero_point, feed.zero_point));
        }
        None
    }
}

impl std::fmt::Display for Affine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "scale {:?}, zero point {}", self.scale(), self.zero_point)
    }
}

/// The fused activation of an int8 layer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Int8Activation {
    /// No clamp beyond int8.
    Linear,
    /// Real values below 0 clamp to 0.
    Relu,
    /// Real values clamp to `0..=6`.
    Relu6,
}

impl Int8Activation {
    /// The output codes `(act_min, act_max)` for an output quantized by `q`.
    pub fn range(self, q: &Affine) -> (i32, i32) {
        match self {
            Int8Activation::Linear => (-128, 127),
            Int8Activation::Relu => activation_range(Some(0.0), None, q.scale(), q.zero_point()),
            Int8Activation::Relu6 => activation_range(Some(0.0), Some(6.0), q.scale(), q.zero_point()),
        }
    }
}

impl std::fmt::Display for Int8Activation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Int8Activation::Linear => "linear",
            Int8Activation::Relu => "relu",
            Int8Activation::Relu6 => "relu6",
        })
    }
}

/// A fully connected int8 layer (see the module documentation).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct DenseInt8 {
    /// Number of inputs (>= 1).
    pub inputs: usize,
    /// Number of outputs (>= 1).
    pub outputs: usize,
    /// The fused activation.
    pub activation: Int8Activation,
    /// How the requantization rounds.
    pub rounding: Rounding,
    /// Retrainable parameters (weights, biases; never the quantization).
    pub trainable: Trainable,
    /// The TFLite operator the quantization was read from (`tflite:`), if any.
    pub tflite: Option<TfliteSource>,
    /// Hardware folding: output neurons in parallel (`1..=outputs`).
    pub pe: usize,
    /// Hardware folding: inputs per cycle (`1..=inputs`).
    pub simd: usize,
    input_q: Affine,
    output_q: Affine,
    /// The weight scales' float32 bits: one, or one per output.
    weight_scales: Vec<u32>,
    /// Per output channel (one for a per-tensor scale), derived.
    multipliers: Vec<QuantizedMultiplier>,
    act_min: i32,
    act_max: i32,
}

impl DenseInt8 {
    /// A layer of `inputs` x `outputs` with these quantizations, activation
    /// and rounding. Errors: an empty shape, a number of weight scales other
    /// than 1 or `outputs`, a weight scale that is not a positive finite
    /// float32 (with its index), an effective scale `s_in * s_w / s_out`
    /// that TFLite's `QuantizeMultiplier` cannot take in this rounding.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        inputs: usize,
        outputs: usize,
        activation: Int8Activation,
        input: Affine,
        output: Affine,
        weight_scales: &[f32],
        rounding: Rounding,
        trainable: Trainable,
    ) -> Result<DenseInt8, (Option<usize>, String)> {
        if inputs == 0 || outputs == 0 {
            return Err((None, format!("a dense_int8 layer needs at least 1 input and 1 output, not {inputs} and {outputs}")));
        }
        if weight_scales.len() != 1 && weight_scales.len() != outputs {
            return Err((
                None,
                format!(
                    "weight_scales has {} values; give one (per tensor) or one per output channel ({outputs})",
                    weight_scales.len()
                ),
            ));
        }
        let mut multipliers = Vec::with_capacity(weight_scales.len());
        for (c, &s) in weight_scales.iter().enumerate() {
            if !(s.is_finite() && s > 0.0) {
                return Err((Some(c), format!("weight scale {c} is {s}, not a positive finite float32")));
            }
            let real = f64::from(input.scale()) * f64::from(s) / f64::from(output.scale());
            let m = QuantizedMultiplier::from_real(real, rounding)
                .map_err(|e| (Some(c), format!("weight scale {c}: effective scale s_in*s_w/s_out: {e}")))?;
            multipliers.push(m);
        }
        let (act_min, act_max) = activation.range(&output);
        Ok(DenseInt8 {
            inputs,
            outputs,
            activation,
            rounding,
            trainable,
            tflite: None,
            pe: 1,
            simd: 1,
            input_q: input,
            output_q: output,
            weight_scales: weight_scales.iter().map(|s| s.to_bits()).collect(),
            multipliers,
            act_min,
            act_max,
        })
    }

    /// The input's quantization.
    pub fn input_q(&self) -> Affine {
        self.input_q
    }

    /// The output's quantization.
    pub fn output_q(&self) -> Affine {
        self.output_q
    }

    /// The weight scales: one (per tensor) or one per output channel.
    pub fn weight_scales(&self) -> Vec<f32> {
        self.weight_scales.iter().map(|&b| f32::from_bits(b)).collect()
    }

    /// The codes a trained bias is clamped to: `+-(2^31 - 1 - 127 * inputs *
    /// x_max)`, `x_max` the largest `|x - z_in|` of an int8 code, so that
    /// with any weights in `-127..=127` no int32 accumulator can overflow
    /// (the kernel's condition, [`FullyConnected::new`]), and the hardware's
    /// wrapping int32 sum is TFLite's for every member ES tries. (`(0, 0)`
    /// for a layer so wide that even zero biases could overflow.)
    pub fn bias_range(&self) -> (i128, i128) {
        let z = i128::from(self.input_q.zero_point);
        let x_max = (-128 - z).abs().max((127 - z).abs());
        let b = (i128::from(i32::MAX) - 127 * self.inputs as i128 * x_max).max(0);
        (-b, b)
    }

    /// The multiplier and shift of output channel `c` (the one of a
    /// per-tensor weight scale for every `c`).
    pub fn multiplier(&self, c: usize) -> QuantizedMultiplier {
        self.multipliers[if self.multipliers.len() == 1 { 0 } else { c.min(self.multipliers.len() - 1) }]
    }

    /// The smallest and largest output code (the activation range).
    pub fn activation_range(&self) -> (i32, i32) {
        (self.act_min, self.act_max)
    }

    /// The TFLite kernel of the layer with parameters `p` (weight codes,
    /// bias codes). Errors as [`FullyConnected::new`]'s (an int32
    /// accumulator that can overflow).
    pub fn kernel(&self, p: &LayerParams) -> Result<FullyConnected, Int8Error> {
        let requant = if self.multipliers.len() == 1 {
            Requant::PerTensor(self.multipliers[0])
        } else {
            Requant::PerChannel(self.multipliers.clone())
        };
        FullyConnected::new(FullyConnectedParams {
            inputs: self.inputs,
            outputs: self.outputs,
            // Codes of the weight format (-128..=127) and of int32.
            weights: p.tensors[W].iter().map(|&w| w.clamp(-128, 127) as i8).collect(),
            bias: Some(p.tensors[B].iter().map(|&b| b.clamp(i32::MIN.into(), i32::MAX.into()) as i32).collect()),
            input_offset: -self.input_q.zero_point,
            weights_offset: 0,
            output_offset: self.output_q.zero_point,
            requant,
            act_min: self.act_min,
            act_max: self.act_max,
            rounding: self.rounding,
        })
    }

    /// The weight scale of output channel `c`.
    fn weight_scale(&self, c: usize) -> f32 {
        f32::from_bits(self.weight_scales[if self.weight_scales.len() == 1 { 0 } else { c }])
    }

    /// The real multiplier of output channel `c`, `s_in * s_w[c] / s_out`.
    fn real_multiplier(&self, c: usize) -> f64 {
        let s = f32::from_bits(self.weight_scales[if self.weight_scales.len() == 1 { 0 } else { c }]);
        f64::from(self.input_q.scale()) * f64::from(s) / f64::from(self.output_q.scale())
    }

    fn forward_float<T: Float>(&self, params: &[Vec<T>], x: &[T]) -> Vec<T> {
        let (w, b) = (&params[W], &params[B]);
        let z_in = T::from(self.input_q.zero_point).unwrap_or_else(T::zero);
        let z_out = T::from(self.output_q.zero_point).unwrap_or_else(T::zero);
        let (lo, hi) = (T::from(self.act_min).unwrap_or_else(T::zero), T::from(self.act_max).unwrap_or_else(T::zero));
        (0..self.outputs)
            .map(|c| {
                let mut acc = b[c];
                for (&wi, &xi) in w[c * self.inputs..(c + 1) * self.inputs].iter().zip(x) {
                    acc = acc + wi * (xi - z_in);
                }
                let m = T::from(self.real_multiplier(c)).unwrap_or_else(T::zero);
                (z_out + m * acc).max(lo).min(hi)
            })
            .collect()
    }

    /// Reads a `type: dense_int8` entry of the model file.
    pub(crate) fn from_file(input: &LayerInput) -> Result<DenseInt8, ModelError> {
        let (c, lf) = (input.c, input.lf);
        input.only(&["inputs", "outputs", "activation", "trainable", "quantization", "rounding", "tflite", "pe", "simd"], &[])?;
        let feed = int8_feed(input)?;
        let count = input.input_count();
        if let [h, w, ch] = input.shape {
            return Err(input.err_at_inputs(format!(
                "layer '{}' is dense_int8 but {} is an image [{h}, {w}, {ch}]; a dense_int8 layer takes a vector",
                input.name, input.from
            )));
        }
        let prev_len: usize = input.shape.iter().product();
        if let Some(at) = &count {
            let n = c.dim(at, "inputs")?;
            if n != prev_len {
                return Err(c.err(at, format!("layer '{}' has {n} inputs but {} has {prev_len} values", input.name, input.from)));
            }
        } else if !matches!(lf.inputs.as_ref().map(|i| &i.value), Some(InputsFile::Names(_))) {
            input.require(&count, "inputs")?;
        }
        let rounding = read_rounding(lf.rounding.as_ref());
        refuse_trainable_quantization(input)?;
        let [weights, biases] = input.trainable(["weights", "biases"])?;
        let trainable = Trainable { weights, biases };
        let mut d = match (&lf.quantization, &lf.tflite) {
            (Some(_), Some(t)) => Err(c.err(t, "a dense_int8 layer takes `quantization` or `tflite`, not both")),
            (None, None) => Err(input.err_at_type(
                "a dense_int8 layer needs `quantization` (input, output, weight_scales) or `tflite` (file, output: a FULLY_CONNECTED operator's output tensor)",
            )),
            (None, Some(t)) => from_tflite(input, t, prev_len, rounding, trainable, feed),
            (Some(q), None) => {
                let outputs = c.dim(input.require(&lf.outputs, "outputs")?, "outputs")?;
                let in_q = read_affine(c, &q.value.input)?;
                let out_q = read_affine(c, &q.value.output)?;
                check_feed(input, &q.value.input.value.scale.referenced, &q.value.input.value.zero_point.referenced, in_q, feed)?;
                let ws = q
                    .value
                    .weight_scales
                    .as_ref()
                    .ok_or_else(|| c.err(q, "a dense_int8 layer's quantization needs `weight_scales` (one, or one per output channel)"))?;
                let written: Vec<(f64, Option<&Spanned<f64>>)> = match &ws.value {
                    ScalesFile::One(s) => vec![(*s, None)],
                    ScalesFile::Many(v) => v.iter().map(|s| (s.value, Some(s))).collect(),
                };
                let at = |i: Option<usize>, m: String| match i.and_then(|i| written.get(i)).and_then(|s| s.1) {
                    Some(v) => c.err(v, m),
                    None => c.err(ws, m),
                };
                let mut scales = Vec::with_capacity(written.len());
                for (i, (v, _)) in written.iter().enumerate() {
                    scales.push(check_scale(*v).map_err(|m| at(Some(i), format!("weight {m} (index {i})")))?);
                }
                let activation = match lf.activation.as_ref().map(|a| a.value) {
                    None | Some(ActivationFile::Linear) => Int8Activation::Linear,
                    Some(ActivationFile::Relu) => Int8Activation::Relu,
                    Some(ActivationFile::Relu6) => Int8Activation::Relu6,
                };
                DenseInt8::new(prev_len, outputs, activation, in_q, out_q, &scales, rounding, trainable).map_err(|(i, m)| at(i, m))
            }
        }?;
        (d.pe, d.simd) = c.fold_pair(&lf.pe, &lf.simd, (d.outputs, d.inputs), ("outputs", "inputs"), 1)?;
        Ok(d)
    }
}

/// Where a `dense_int8` layer's quantization came from, when it names a
/// TFLite operator (`tflite:`): the file (resolved against the model file's
/// directory) and the operator's output tensor.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct TfliteSource {
    /// The `.tflite` file.
    pub file: std::path::PathBuf,
    /// The name of the FULLY_CONNECTED operator's output tensor.
    pub output: String,
}

impl TfliteSource {
    /// The FULLY_CONNECTED operator of `model` whose output tensor is
    /// named `output`, or an error naming the file and the tensor.
    pub fn find<'m>(model: &'m TfliteModel, output: &str) -> Result<&'m FullyConnectedOp, TensorError> {
        let named = |op: &FullyConnectedOp| model.tensor_at(op.output).map(|t| t.name.clone()).unwrap_or_default();
        model.fully_connected().iter().find(|op| named(op) == output).ok_or_else(|| {
            let outs: Vec<String> = model.fully_connected().iter().map(|op| format!("'{}'", named(op))).collect();
            TensorError::tensor(
                model.path(),
                output,
                format!(
                    "is not the output of a FULLY_CONNECTED operator; the FULLY_CONNECTED outputs are {}",
                    if outs.is_empty() { "none".to_string() } else { outs.join(", ") }
                ),
            )
        })
    }

    /// The weight and bias codes of the operator, as a `dense_int8`
    /// layer's [`LayerParams`] (`w`, `b`; a missing bias is zeros).
    pub fn params(&self) -> Result<LayerParams, TensorError> {
        let model = TfliteModel::open(&self.file).map_err(|e| TensorError::file(&self.file, e.to_string()))?;
        let op = Self::find(&model, &self.output)?;
        let k = model.fully_connected_kernel(op, Rounding::Single)?;
        let p = k.params();
        let w = p.weights.iter().map(|&w| i128::from(w)).collect();
        let b = p.bias.as_ref().map_or_else(|| vec![0; p.outputs], |b| b.iter().map(|&b| i128::from(b)).collect());
        Ok(LayerParams { tensors: vec![w, b] })
    }
}

/// A `dense_int8` layer whose quantization comes from the TFLite operator
/// `t` names.
fn from_tflite(
    input: &LayerInput,
    t: &Spanned<TfliteOpFile>,
    inputs: usize,
    rounding: Rounding,
    trainable: Trainable,
    feed: Option<Affine>,
) -> Result<DenseInt8, ModelError> {
    let (c, lf) = (input.c, input.lf);
    if let Some(a) = &lf.activation {
        return Err(c.err(a, "with `tflite`, the operator's fused activation applies; remove `activation`"));
    }
    let (file, output) = (&t.value.file, &t.value.output);
    let path = c.dir().join(&file.value);
    let model = TfliteModel::open(&path).map_err(|e| c.err(file, e.to_string()))?;
    let op = TfliteSource::find(&model, &output.value).map_err(|e| c.err(output, e.to_string()))?;
    // The kernel validates every tensor (types, shapes, scales, zero points).
    let kernel = model.fully_connected_kernel(op, rounding).map_err(|e| c.err(output, e.to_string()))?;
    let kp = kernel.params();
    let tensor = |i: usize| model.tensor_at(i).map_err(|e| c.err(output, e.to_string()));
    let (x, w, y) = (tensor(op.input)?, tensor(op.weights)?, tensor(op.output)?);
    let affine = |t: &crate::int8::tflite::TensorInfo| {
        Affine::new(t.scales[0], t.zero_points.first().copied().unwrap_or(0)).map_err(|m| c.err(output, format!("tensor '{}': {m}", t.name)))
    };
    let (in_q, out_q) = (affine(x)?, affine(y)?);
    if kp.weights_offset != 0 {
        return Err(c.err(
            output,
            format!("weights tensor '{}' has zero point {}; dense_int8 takes symmetric weights (zero point 0)", w.name, -kp.weights_offset),
        ));
    }
    if kp.inputs != inputs {
        return Err(c.err(
            output,
            format!("the operator takes {} inputs but {} has {inputs} values", kp.inputs, input.from),
        ));
    }
    if let Some(o) = &lf.outputs {
        if o.value != kp.outputs as u64 {
            return Err(c.err(o, format!("outputs is {} but the operator has {}", o.value, kp.outputs)));
        }
    }
    let activation = match op.activation {
        TfliteActivation::None => Int8Activation::Linear,
        TfliteActivation::Relu => Int8Activation::Relu,
        TfliteActivation::Relu6 => Int8Activation::Relu6,
        other => return Err(c.err(output, format!("the operator's fused activation {other:?} is not one dense_int8 takes (linear, relu, relu6)"))),
    };
    check_feed(input, &output.referenced, &output.referenced, in_q, feed)?;
    let mut d = DenseInt8::new(kp.inputs, kp.outputs, activation, in_q, out_q, &w.scales, rounding, trainable)
        .map_err(|(_, m)| c.err(output, m))?;
    d.tflite = Some(TfliteSource { file: path, output: output.value.clone() });
    Ok(d)
}

/// A scale as written: positive, finite, and so as a float32.
pub(crate) fn check_scale(v: f64) -> Result<f32, String> {
    let s = v as f32;
    if !(v.is_finite() && v > 0.0 && s.is_finite() && s > 0.0) {
        return Err(format!("scale {v} is not a positive finite float32"));
    }
    Ok(s)
}

/// An `{scale, zero_point}` of the model file, with errors at the value at fault.
pub(crate) fn read_affine(c: &Checker, a: &Spanned<AffineFile>) -> Result<Affine, ModelError> {
    let s = check_scale(a.value.scale.value).map_err(|m| c.err(&a.value.scale, m))?;
    let z = a.value.zero_point.value;
    Affine::new(s, z).map_err(|m| c.err(&a.value.zero_point, m))
}

/// The rounding of a model file's `rounding:` (default single).
pub(crate) fn read_rounding(r: Option<&Spanned<RoundingFile>>) -> Rounding {
    match r.map(|r| r.value) {
        None | Some(RoundingFile::Single) => Rounding::Single,
        Some(RoundingFile::Double) => Rounding::Double,
    }
}

/// Refuses `trainable:` entries that name an int8 layer's quantization.
pub(crate) fn refuse_trainable_quantization(input: &LayerInput) -> Result<(), ModelError> {
    let Some(t) = &input.lf.trainable else { return Ok(()) };
    if let Some(item) = t.value.iter().find(|i| matches!(i, TrainableFile::Scales | TrainableFile::ZeroPoints | TrainableFile::Scale | TrainableFile::Shift)) {
        return Err(input.c.err(
            t,
            format!(
                "trainable lists {}, but the quantization of an int8 layer (its scales and zero points, and the interface's) is fixed, \
                 never trained; {} layer trains only its weights and biases",
                item.role(),
                super::a_kind(&input.lf.kind.value)
            ),
        ));
    }
    Ok(())
}

/// What feeds an int8 layer: int8 values (the layer's input format must be
/// [`int8_format`]) from the network input or an int8 layer.
pub(crate) fn int8_feed(input: &LayerInput) -> Result<Option<Affine>, ModelError> {
    let kind = &input.lf.kind.value;
    if input.format != int8_format() {
        return Err(input.err_at_type(format!(
            "{} layer takes int8 codes in {} (the codes -128..127), but {} gives {}; \
             give the network input that format, or feed the layer from an int8 layer",
            super::a_kind(kind),
            int8_format(),
            input.from,
            input.format
        )));
    }
    match input.feed {
        Some(q) => Ok(q),
        None => Err(input.err_at_inputs(format!(
            "{} layer takes one int8 input, the network input or an int8 layer (dense_int8, requantize), but {} is not one",
            super::a_kind(kind),
            input.from
        ))),
    }
}

/// Checks that the quantization `got` of an int8 layer's input (written at
/// `at`) equals `feed`'s bit for bit: a direct connection is equivalent
/// only then, and otherwise a `requantize` layer is needed.
pub(crate) fn check_feed(
    input: &LayerInput,
    scale_at: &Location,
    zero_point_at: &Location,
    got: Affine,
    feed: Option<Affine>,
) -> Result<(), ModelError> {
    let Some(feed) = feed else { return Ok(()) };
    let from = if input.from == "the network input" { "the interface (the network input)" } else { input.from };
    let Some(diff) = got.difference(&feed, from) else { return Ok(()) };
    let at_value = if got.scale_bits != feed.scale_bits { scale_at } else { zero_point_at };
    Err(input.c.err_at(
        at_value,
        format!(
            "layer '{}' {}; an int8 connection is direct only when scale (float32 bits) and zero point are equal: \
             add a `type: requantize` layer before '{}' with `quantization: {{input: {{scale: {:?}, zero_point: {}}}, \
             output: {{scale: {:?}, zero_point: {}}}}}`, or fix the value",
            input.name,
            diff,
            input.name,
            feed.scale(),
            feed.zero_point,
            got.scale(),
            got.zero_point
        ),
    ))
}

impl LayerKind for DenseInt8 {
    fn type_name(&self) -> &'static str {
        TYPE
    }

    fn describe(&self) -> String {
        let per = if self.weight_scales.len() == 1 { "per-tensor" } else { "per-channel" };
        // The act column shows linear and relu; relu6 is said here.
        let act = if self.activation == Int8Activation::Relu6 { " relu6" } else { "" };
        format!("dense_int8 {}x{} {per}{act}", self.outputs, self.inputs)
    }

    fn input_len(&self) -> usize {
        self.inputs
    }

    fn output_shape(&self) -> Vec<usize> {
        vec![self.outputs]
    }

    fn output_format(&self) -> Format {
        int8_format()
    }

    fn output_floor(&self) -> i128 {
        self.act_min.into()
    }

    fn tensors(&self) -> Vec<TensorSpec> {
        vec![
            TensorSpec::new("w", "weights", vec![self.outputs, self.inputs], weight_format(), self.trainable.weights),
            TensorSpec { range: self.bias_range(), ..TensorSpec::new("b", "biases", vec![self.outputs], bias_format(), self.trainable.biases) },
        ]
    }

    fn macs(&self) -> u64 {
        self.inputs as u64 * self.outputs as u64
    }

    fn forward(&self, _input_format: Format, p: &LayerParams, x: &[i128]) -> Vec<i128> {
        let x: Vec<i8> = x.iter().map(|&v| v.clamp(-128, 127) as i8).collect();
        match self.kernel(p) {
            Ok(k) => (0..self.outputs).map(|c| k.output(&x, c).map_or(0, i128::from)).collect(),
            // Unreachable for parameters that passed `check_params`.
            Err(_) => vec![i128::from(self.output_q.zero_point.clamp(self.act_min, self.act_max)); self.outputs],
        }
    }

    fn recompute(&self, _input_format: Format, p: &LayerParams, x: &[i128], outputs: &[usize], out: &mut [i128]) {
        let x: Vec<i8> = x.iter().map(|&v| v.clamp(-128, 127) as i8).collect();
        let k = self.kernel(p).ok();
        for &c in outputs {
            out[c] = k.as_ref().and_then(|k| k.output(&x, c)).map_or(i128::from(self.output_q.zero_point.clamp(self.act_min, self.act_max)), i128::from);
        }
    }

    fn affected(&self, tensor: usize, index: usize, out: &mut Vec<usize>) {
        out.push(if tensor == W { index / self.inputs.max(1) } else { index });
    }

    fn forward_f64(&self, params: &[Vec<f64>], x: &[f64]) -> Vec<f64> {
        self.forward_float(params, x)
    }

    fn forward_f32(&self, params: &[Vec<f32>], x: &[f32]) -> Vec<f32> {
        self.forward_float(params, x)
    }

    fn backward(&self, b: Backward<'_>) -> Vec<f32> {
        let z_in = self.input_q.zero_point as f32;
        let ms: Vec<f32> = (0..self.outputs).map(|c| self.real_multiplier(c) as f32).collect();
        if let [gw, gb, ..] = b.grads {
            for (c, &dl) in b.delta.iter().enumerate() {
                if dl == 0.0 {
                    continue;
                }
                let d = dl * ms[c];
                gb[c] += d;
                for (gi, &xi) in gw[c * self.inputs..(c + 1) * self.inputs].iter_mut().zip(b.x) {
                    *gi += d * (xi - z_in);
                }
            }
        }
        if !b.want_input {
            return Vec::new();
        }
        let mut dx = vec![0.0f32; self.inputs];
        for (c, &dl) in b.delta.iter().enumerate() {
            if dl == 0.0 {
                continue;
            }
            for (p, &wi) in dx.iter_mut().zip(&b.params[W][c * self.inputs..(c + 1) * self.inputs]) {
                *p += dl * ms[c] * wi;
            }
        }
        dx
    }

    fn init_masters(&self, draw: &mut dyn FnMut(f32) -> f32) -> Vec<Vec<f32>> {
        // Uniform in +-sqrt(6 / fan_in) in real units, in codes of each
        // channel's scale (at least one code, at most 127).
        let a = (6.0 / self.inputs as f64).sqrt();
        let w = (0..self.outputs)
            .flat_map(|c| {
                let bound = (a / f64::from(self.weight_scale(c))).clamp(1.0, 127.0) as f32;
                (0..self.inputs).map(|_| draw(bound)).collect::<Vec<f32>>()
            })
            .collect();
        vec![w, vec![0.0; self.outputs]]
    }

    fn param_scales(&self, tensor: usize) -> Option<Vec<f32>> {
        let s_in = f64::from(self.input_q.scale());
        Some(match tensor {
            W => (0..self.outputs).flat_map(|c| std::iter::repeat_n(self.weight_scale(c), self.inputs)).collect(),
            _ => (0..self.outputs).map(|c| (s_in * f64::from(self.weight_scale(c))) as f32).collect(),
        })
    }

    fn output_real(&self, code: i128) -> f64 {
        (code - i128::from(self.output_q.zero_point)) as f64 * f64::from(self.output_q.scale())
    }

    fn output_ceiling(&self) -> i128 {
        self.act_max.into()
    }

    fn formats(&self) -> Vec<(&'static str, Format)> {
        vec![("weight", weight_format()), ("bias", bias_format()), ("output", int8_format())]
    }

    fn folding(&self) -> String {
        format!("{}/{}", self.pe, self.simd)
    }

    fn activation(&self) -> Option<Activation> {
        match self.activation {
            Int8Activation::Linear => Some(Activation::Linear),
            Int8Activation::Relu => Some(Activation::Relu),
            Int8Activation::Relu6 => None,
        }
    }

    fn output_quantization(&self) -> Option<Affine> {
        Some(self.output_q)
    }

    fn input_quantization(&self) -> Option<Affine> {
        Some(self.input_q)
    }

    fn check_params(&self, p: &LayerParams) -> Result<(), (usize, usize, String)> {
        if let Some(i) = p.tensors[W].iter().position(|w| !(-127..=127).contains(w)) {
            return Err((W, i, format!("weight code {} is outside -127..=127 (int8 weights are symmetric)", p.tensors[W][i])));
        }
        if let Some(i) = p.tensors[B].iter().position(|b| i32::try_from(*b).is_err()) {
            return Err((B, i, format!("bias {} is outside int32", p.tensors[B][i])));
        }
        match self.kernel(p) {
            Ok(_) => Ok(()),
            Err(Int8Error::AccumulatorOverflow { channel, bound }) => Err((
                B,
                channel,
                format!("output channel {channel} can overflow its int32 accumulator (|sum w*(x - z_in) + b| up to {bound})"),
            )),
            Err(e) => Err((W, 0, e.to_string())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(s: f32, z: i64) -> Affine {
        Affine::new(s, z).unwrap()
    }

    /// 2 inputs, 2 outputs: s_in 0.5, s_w 0.5 / 0.25, s_out 0.25 and 0.5:
    /// multipliers 1 and 0.5 (per channel).
    fn layer(act: Int8Activation, rounding: Rounding) -> DenseInt8 {
        DenseInt8::new(2, 2, act, q(0.5, 3), q(0.25, -4), &[0.125, 0.0625], rounding, Trainable::default()).unwrap()
    }

    fn params() -> LayerParams {
        LayerParams { tensors: vec![vec![2, -1, 3, 5], vec![7, -9]] }
    }

    #[test]
    fn hand_computed_outputs() {
        // Multipliers: 0.5*0.125/0.25 = 0.25, 0.5*0.0625/0.25 = 0.125.
        // x = [5, -1]: x - 3 = [2, -4].
        // c0: 2*2 + -1*-4 + 7 = 15 -> 15 * 0.25 = 3.75 -> 4 -> 4 - 4 = 0.
        // c1: 3*2 + 5*-4 - 9 = -23 -> -23 * 0.125 = -2.875 -> -3 -> -7.
        let d = layer(Int8Activation::Linear, Rounding::Single);
        assert_eq!(d.forward(int8_format(), &params(), &[5, -1]), vec![0, -7]);
        // Relu: the real 0 is code -4, so c1 clamps to -4.
        let d = layer(Int8Activation::Relu, Rounding::Single);
        assert_eq!(d.activation_range(), (-4, 127));
        assert_eq!(d.forward(int8_format(), &params(), &[5, -1]), vec![0, -4]);
        // Relu6: 6 / 0.25 = 24 -> -4 + 24 = 20.
        let d = layer(Int8Activation::Relu6, Rounding::Single);
        assert_eq!(d.activation_range(), (-4, 20));
        // x = [127, -128]: x - 3 = [124, -131]; c0: 248 + 131 + 7 = 386 -> 96.5 -> 97 -> 93 -> 20.
        assert_eq!(d.forward(int8_format(), &params(), &[127, -128])[0], 20);
    }

    #[test]
    fn the_roundings_differ_on_a_negative_tie() {
        // x = [3, 12]: x - 3 = [0, 9]; c0: 2*0 - 1*9 + 7 = -2 -> -2 * 0.25 = -0.5:
        // single rounding (half up) gives 0 -> -4, double rounding (half away from zero) -1 -> -5.
        let s = layer(Int8Activation::Linear, Rounding::Single);
        let d = layer(Int8Activation::Linear, Rounding::Double);
        assert_eq!(s.forward(int8_format(), &params(), &[3, 12])[0], -4);
        assert_eq!(d.forward(int8_format(), &params(), &[3, 12])[0], -5);
    }

    #[test]
    fn recompute_and_float_reference_agree_with_forward() {
        let d = layer(Int8Activation::Linear, Rounding::Single);
        let x = [5i128, -1];
        let mut out = vec![99, 99];
        d.recompute(int8_format(), &params(), &x, &[1], &mut out);
        assert_eq!(out, vec![99, -7]);
        // Float: c0: 4 - 4 + ... = -4 + 3.75 = -0.25; c1: -4 - 2.875 = -6.875.
        let p: Vec<Vec<f64>> = params().tensors.iter().map(|t| t.iter().map(|&v| v as f64).collect()).collect();
        assert_eq!(d.forward_f64(&p, &[5.0, -1.0]), vec![-0.25, -6.875]);
    }

    #[test]
    fn bad_parameters_are_located() {
        let d = layer(Int8Activation::Linear, Rounding::Single);
        let mut p = params();
        p.tensors[W][2] = -128;
        assert!(matches!(d.check_params(&p), Err((0, 2, m)) if m.contains("-128")));
        let mut p = params();
        p.tensors[B][1] = i128::from(i32::MAX) + 1;
        assert!(matches!(d.check_params(&p), Err((1, 1, _))));
        let mut p = params();
        p.tensors[B][0] = i128::from(i32::MAX);
        assert!(matches!(d.check_params(&p), Err((1, 0, m)) if m.contains("accumulator")));
        assert!(d.check_params(&params()).is_ok());
        let e = DenseInt8::new(2, 3, Int8Activation::Linear, q(0.5, 3), q(0.25, -4), &[0.1, 0.2], Rounding::Single, Trainable::default());
        assert!(matches!(e, Err((None, m)) if m.contains("2 values")));
        let e = DenseInt8::new(2, 2, Int8Activation::Linear, q(0.5, 3), q(0.25, -4), &[0.1, -0.2], Rounding::Single, Trainable::default());
        assert!(matches!(e, Err((Some(1), _))));
        assert!(Affine::new(0.0, 0).is_err());
        assert!(Affine::new(f32::NAN, 0).is_err());
        assert!(Affine::new(1.0, 128).is_err());
        assert!(Affine::new(1.0, -129).is_err());
    }

    #[test]
    fn differences_name_the_parameter() {
        let a = q(0.5, 3);
        assert_eq!(a.difference(&q(0.5, 3), "x"), None);
        assert_eq!(a.difference(&q(0.5, 4), "x").unwrap(), "input zero point is 3 but x's is 4");
        let next = f32::from_bits(0.5f32.to_bits() + 1);
        assert_eq!(
            a.difference(&q(next, 3), "x").unwrap(),
            "input scale is 0.5 (float32 bits 0x3f000000) but x's is 0.50000006 (bits 0x3f000001)"
        );
    }
}
