//! TFLite's reference int8 fully-connected kernels
//! (`reference_integer_ops/fully_connected.h`): `FullyConnected`, one
//! requantization multiplier for the layer, and `FullyConnectedPerChannel`,
//! one per output channel.

use super::error::Int8Error;
use super::multiplier::{QuantizedMultiplier, Rounding};

/// How the accumulators are requantized to the output scale.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Requant {
    /// One multiplier for every output channel (TFLite's `FullyConnected`,
    /// per-tensor weight scale). The weights offset applies.
    PerTensor(QuantizedMultiplier),
    /// One multiplier per output channel (`FullyConnectedPerChannel`,
    /// per-channel weight scales); the weights are symmetric, so the
    /// weights offset must be 0.
    PerChannel(Vec<QuantizedMultiplier>),
}

/// The parameters of an int8 fully-connected layer, named as TFLite's
/// `FullyConnectedParams` names them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FullyConnectedParams {
    /// Inputs per output (`accum_depth`).
    pub inputs: usize,
    /// Output channels (`output_depth`).
    pub outputs: usize,
    /// The weight codes, `outputs` rows of `inputs` (TFLite's filter
    /// layout `[output_depth, accum_depth]`).
    pub weights: Vec<i8>,
    /// The int32 bias codes, one per output, or none.
    pub bias: Option<Vec<i32>>,
    /// `-z_in`, the negated input zero point (`-127..=128`).
    pub input_offset: i32,
    /// `-z_w`, the negated weights zero point (`-127..=128`); 0 for
    /// [`Requant::PerChannel`].
    pub weights_offset: i32,
    /// `z_out`, the output zero point (`-128..=127`).
    pub output_offset: i32,
    /// The requantization multiplier(s).
    pub requant: Requant,
    /// The smallest output code (`quantized_activation_min`).
    pub act_min: i32,
    /// The largest output code (`quantized_activation_max`).
    pub act_max: i32,
    /// How the multiplier rounds.
    pub rounding: Rounding,
}

/// A validated int8 fully-connected layer. For each output channel `c`:
///
/// ```text
/// acc = sum_i (w[c][i] + weights_offset) * (x[i] + input_offset) + bias[c]   (int32)
/// y   = clamp(MultiplyByQuantizedMultiplier(acc, M_c, shift_c) + output_offset,
///             act_min, act_max)
/// ```
///
/// exactly as TFLite's reference kernels compute it. Construction checks
/// that no accumulator can overflow int32 for any int8 input, so running
/// never fails except on a wrong input length.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FullyConnected {
    params: FullyConnectedParams,
}

impl FullyConnected {
    /// Validates `params`: non-empty shape; `weights`, `bias` and per-channel
    /// multiplier lengths; offsets that are negated (input, weights) or
    /// plain (output) int8 zero points; a weights offset of 0 per channel;
    /// `-128 <= act_min <= act_max <= 127`; no int32 accumulator overflow.
    pub fn new(params: FullyConnectedParams) -> Result<Self, Int8Error> {
        let FullyConnectedParams { inputs, outputs, .. } = params;
        if inputs == 0 || outputs == 0 {
            return Err(Int8Error::EmptyShape { inputs, outputs });
        }
        let expected = inputs.saturating_mul(outputs);
        check_len("weights", expected, params.weights.len())?;
        if let Some(bias) = &params.bias {
            check_len("bias", outputs, bias.len())?;
        }
        if let Requant::PerChannel(ms) = &params.requant {
            check_len("multipliers", outputs, ms.len())?;
        }
        check_zero_point("input", -i64::from(params.input_offset))?;
        check_zero_point("weights", -i64::from(params.weights_offset))?;
        check_zero_point("output", i64::from(params.output_offset))?;
        if matches!(params.requant, Requant::PerChannel(_)) && params.weights_offset != 0 {
            return Err(Int8Error::ZeroPoint { what: "per-channel weights", value: -i64::from(params.weights_offset) });
        }
        let (lo, hi) = (params.act_min, params.act_max);
        if lo > hi || lo < -128 || hi > 127 {
            return Err(Int8Error::ActivationRange { min: lo, max: hi });
        }
        let x_max = i64::from((-128 + params.input_offset).abs().max((127 + params.input_offset).abs()));
        for c in 0..outputs {
            let row = &params.weights[c * inputs..(c + 1) * inputs];
            let w_sum: i64 = row.iter().map(|&w| (i64::from(w) + i64::from(params.weights_offset)).abs()).sum();
            let b = params.bias.as_ref().map_or(0, |b| i64::from(b[c]).abs());
            let bound = w_sum * x_max + b;
            if bound > i64::from(i32::MAX) {
                return Err(Int8Error::AccumulatorOverflow { channel: c, bound });
            }
        }
        Ok(FullyConnected { params })
    }

    /// The parameters.
    pub fn params(&self) -> &FullyConnectedParams {
        &self.params
    }

    /// The same layer in another rounding.
    pub fn with_rounding(mut self, rounding: Rounding) -> Self {
        self.params.rounding = rounding;
        self
    }

    /// The int32 accumulator of output channel `c` (before requantization)
    /// for `input`, which must have [`FullyConnectedParams::inputs`]
    /// elements; `None` for a channel out of range.
    pub fn accumulator(&self, input: &[i8], c: usize) -> Option<i32> {
        let p = &self.params;
        if c >= p.outputs || input.len() != p.inputs {
            return None;
        }
        let row = &p.weights[c * p.inputs..(c + 1) * p.inputs];
        // No overflow: `new` bounded every partial sum by i32::MAX.
        let mut acc: i32 = 0;
        for (&w, &x) in row.iter().zip(input) {
            acc += (i32::from(w) + p.weights_offset) * (i32::from(x) + p.input_offset);
        }
        if let Some(bias) = &p.bias {
            acc += bias[c];
        }
        Some(acc)
    }

    /// Computes the outputs for one input vector into `output`.
    pub fn run_into(&self, input: &[i8], output: &mut [i8]) -> Result<(), Int8Error> {
        let p = &self.params;
        check_len("input", p.inputs, input.len())?;
        check_len("output", p.outputs, output.len())?;
        for (c, out) in output.iter_mut().enumerate() {
            *out = self.output(input, c).unwrap_or(0);
        }
        Ok(())
    }

    /// Output channel `c` for `input` (which must have
    /// [`FullyConnectedParams::inputs`] elements): the accumulator
    /// requantized, offset and clamped, as [`FullyConnected::run`] gives it;
    /// `None` for a channel out of range or a wrong input length.
    pub fn output(&self, input: &[i8], c: usize) -> Option<i8> {
        let p = &self.params;
        let acc = self.accumulator(input, c)?;
        let m = match &p.requant {
            Requant::PerTensor(m) => m,
            Requant::PerChannel(ms) => &ms[c],
        };
        let y = m.apply(acc, p.rounding).wrapping_add(p.output_offset);
        Some(y.clamp(p.act_min, p.act_max) as i8)
    }

    /// Computes the outputs for one input vector.
    pub fn run(&self, input: &[i8]) -> Result<Vec<i8>, Int8Error> {
        let mut out = vec![0; self.params.outputs];
        self.run_into(input, &mut out)?;
        Ok(out)
    }
}

/// TFLite's `CalculateActivationRangeQuantized` for int8: the output codes
/// `(act_min, act_max)` of a fused activation whose real bounds are `lo`
/// and `hi` (`None`: unbounded), for an output of scale `scale` and zero
/// point `zero_point`. A bound is `zero_point + round(f / scale)`, the
/// quotient in float32 rounded half away from zero, kept within
/// `-128..=127`: ReLU is `(Some(0.0), None)`, ReLU6 `(Some(0.0), Some(6.0))`.
pub fn activation_range(lo: Option<f32>, hi: Option<f32>, scale: f32, zero_point: i32) -> (i32, i32) {
    // `as` saturates a huge quotient (a tiny scale), so the sum cannot overflow.
    let quantize = |f: f32| zero_point.saturating_add((f / scale).round() as i32);
    (lo.map_or(-128, |f| quantize(f).max(-128)), hi.map_or(127, |f| quantize(f).min(127)))
}

fn check_len(what: &'static str, expected: usize, got: usize) -> Result<(), Int8Error> {
    if expected == got {
        Ok(())
    } else {
        Err(Int8Error::Length { what, expected, got })
    }
}

fn check_zero_point(what: &'static str, value: i64) -> Result<(), Int8Error> {
    if (-128..=127).contains(&value) {
        Ok(())
    } else {
        Err(Int8Error::ZeroPoint { what, value })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 2 inputs, 2 outputs, per tensor, multiplier 0.25 exactly.
    fn small(rounding: Rounding) -> FullyConnectedParams {
        FullyConnectedParams {
            inputs: 2,
            outputs: 2,
            weights: vec![1, 2, -3, 4],
            bias: Some(vec![10, -20]),
            input_offset: 5,
            weights_offset: 0,
            output_offset: -3,
            requant: Requant::PerTensor(QuantizedMultiplier::new(1 << 30, -1).unwrap()),
            act_min: -128,
            act_max: 127,
            rounding,
        }
    }

    #[test]
    fn hand_computed_outputs() {
        let fc = FullyConnected::new(small(Rounding::Single)).unwrap();
        // x = [1, -7]: x + 5 = [6, -2].
        // c0: 1*6 + 2*(-2) + 10 = 12 -> 12/4 = 3 -> 3 - 3 = 0.
        // c1: -3*6 + 4*(-2) - 20 = -46 -> -11.5 -> single -11 -> -14.
        assert_eq!(fc.accumulator(&[1, -7], 0), Some(12));
        assert_eq!(fc.accumulator(&[1, -7], 1), Some(-46));
        assert_eq!(fc.run(&[1, -7]).unwrap(), vec![0, -14]);
        // Double rounding: -46 / 4 = -11.5 -> -12 -> -15.
        let fc = fc.with_rounding(Rounding::Double);
        assert_eq!(fc.run(&[1, -7]).unwrap(), vec![0, -15]);
    }

    #[test]
    fn clamps_to_the_activation_range_and_applies_weights_offset() {
        let mut p = small(Rounding::Single);
        p.act_min = -3; // a ReLU with output zero point -3
        p.act_max = 100;
        let fc = FullyConnected::new(p.clone()).unwrap();
        assert_eq!(fc.run(&[1, -7]).unwrap(), vec![0, -3]);
        // Per tensor with weights offset 1: w + 1 = [2, 3, -2, 5].
        // x = [1, -7]: c0: 2*6 + 3*(-2) + 10 = 16 -> 4 -> 1; c1: -12 - 10 - 20 = -42
        // -> -10.5 -> -10 -> clamped at -3.
        p.weights_offset = 1;
        let fc = FullyConnected::new(p).unwrap();
        assert_eq!(fc.run(&[1, -7]).unwrap(), vec![1, -3]);
    }

    #[test]
    fn per_channel_multipliers() {
        let mut p = small(Rounding::Single);
        // c0 times 0.5, c1 times 0.125.
        p.requant = Requant::PerChannel(vec![
            QuantizedMultiplier::new(1 << 30, 0).unwrap(),
            QuantizedMultiplier::new(1 << 30, -2).unwrap(),
        ]);
        let fc = FullyConnected::new(p).unwrap();
        // 12 * 0.5 = 6 -> 3; -46 / 8 = -5.75 -> -6 -> -9.
        assert_eq!(fc.run(&[1, -7]).unwrap(), vec![3, -9]);
    }

    #[test]
    fn bad_parameters_are_errors() {
        let mut p = small(Rounding::Single);
        p.weights.pop();
        assert_eq!(FullyConnected::new(p).unwrap_err(), Int8Error::Length { what: "weights", expected: 4, got: 3 });
        let mut p = small(Rounding::Single);
        p.input_offset = -128; // z_in = 128
        assert!(matches!(FullyConnected::new(p), Err(Int8Error::ZeroPoint { what: "input", value: 128 })));
        let mut p = small(Rounding::Single);
        p.output_offset = i32::MIN;
        assert!(matches!(FullyConnected::new(p), Err(Int8Error::ZeroPoint { what: "output", .. })));
        let mut p = small(Rounding::Single);
        p.input_offset = i32::MIN; // -z_in would overflow i32
        assert!(matches!(FullyConnected::new(p), Err(Int8Error::ZeroPoint { what: "input", .. })));
        let mut p = small(Rounding::Single);
        p.act_min = 5;
        p.act_max = 4;
        assert!(matches!(FullyConnected::new(p), Err(Int8Error::ActivationRange { .. })));
        let mut p = small(Rounding::Single);
        p.requant = Requant::PerChannel(vec![QuantizedMultiplier::new(1 << 30, 0).unwrap(); 2]);
        p.weights_offset = 1;
        assert!(matches!(FullyConnected::new(p), Err(Int8Error::ZeroPoint { .. })));
        let mut p = small(Rounding::Single);
        p.bias = Some(vec![i32::MAX, 0]);
        assert!(matches!(FullyConnected::new(p), Err(Int8Error::AccumulatorOverflow { channel: 0, .. })));
        let mut p = small(Rounding::Single);
        p.inputs = 0;
        assert!(matches!(FullyConnected::new(p), Err(Int8Error::EmptyShape { .. })));
        let fc = FullyConnected::new(small(Rounding::Single)).unwrap();
        assert!(matches!(fc.run(&[1, 2, 3]), Err(Int8Error::Length { what: "input", .. })));
        assert_eq!(fc.accumulator(&[1, 2], 2), None);
    }
}
