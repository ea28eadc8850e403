//! An int8 `FULLY_CONNECTED` operator of a TFLite model as a
//! [`FullyConnected`] kernel, with the parameters TFLite's `Prepare`
//! derives from the tensors.

use super::model::TfliteModel;
use super::types::{Activation, FullyConnectedOp, TensorInfo, TensorType};
use crate::error::TensorError;
use crate::int8::{activation_range, FullyConnected, FullyConnectedParams, QuantizedMultiplier, Requant, Rounding};

impl TfliteModel {
    /// The kernel of the int8 fully-connected operator `op`:
    ///
    /// * weights `[outputs, inputs]` int8, per-tensor scale or one scale per
    ///   output channel (`quantized_dimension` 0, zero points 0); input and
    ///   output int8 with one scale and zero point each; an optional int32
    ///   bias of `outputs` values;
    /// * `input_offset = -z_in`, `weights_offset = -z_w`,
    ///   `output_offset = z_out`;
    /// * for each channel, the real multiplier
    ///   `(double) s_in * (double) s_w[c] / (double) s_out` through
    ///   TFLite's `QuantizeMultiplier` for `rounding`;
    /// * the activation range of the fused activation as TFLite's
    ///   `CalculateActivationRangeQuantized` computes it:
    ///   `z_out + round(f / s_out)` in float for the bounds `f` of ReLU
    ///   (0), ReLU6 (0, 6) and ReLU-1..1 (-1, 1), within `-128..=127`.
    ///
    /// Errors name the file and the tensor at fault (and the channel where
    /// one is): a tensor that is not int8 (int32 for the bias), a shape that
    /// does not fit, a missing, non-positive or non-finite scale, a zero
    /// point outside int8, shuffled weights, an activation other than these.
    pub fn fully_connected_kernel(
        &self,
        op: &FullyConnectedOp,
        rounding: Rounding,
    ) -> Result<FullyConnected, TensorError> {
        let path = self.path();
        let input = self.tensor_at(op.input)?;
        let weights = self.tensor_at(op.weights)?;
        let output = self.tensor_at(op.output)?;
        let bias = op.bias.map(|b| self.tensor_at(b)).transpose()?;
        for t in [input, weights, output] {
            expect_type(self, t, TensorType::Int8)?;
        }
        if let Some(b) = bias {
            expect_type(self, b, TensorType::Int32)?;
        }
        let werr = |msg: String| TensorError::tensor(path, &weights.name, msg);
        if op.weights_format != 0 {
            return Err(werr(format!("weights_format {} (shuffled) is not supported", op.weights_format)));
        }
        let (outputs, inputs) = match weights.shape[..] {
            [o, i] if o > 0 && i > 0 => (o as usize, i as usize),
            _ => return Err(werr(format!("shape {:?} is not [outputs, inputs]", weights.shape))),
        };
        if input.shape.last() != Some(&(inputs as i32)) {
            return Err(TensorError::tensor(
                path,
                &input.name,
                format!("shape {:?} does not end in the weights' {inputs} inputs", input.shape),
            ));
        }
        if output.shape.last() != Some(&(outputs as i32)) {
            return Err(TensorError::tensor(
                path,
                &output.name,
                format!("shape {:?} does not end in the weights' {outputs} outputs", output.shape),
            ));
        }
        let (s_in, z_in) = per_tensor(self, input)?;
        let (s_out, z_out) = per_tensor(self, output)?;

        // Weight scales: one, or one per output channel along dimension 0.
        let n_scales = weights.scales.len();
        let per_channel = n_scales == outputs && outputs > 1;
        if !(n_scales == 1 || per_channel) {
            return Err(werr(format!("has {n_scales} scales; expected 1 or one per output channel ({outputs})")));
        }
        if per_channel && weights.quantized_dimension != 0 {
            return Err(werr(format!(
                "per-channel scales along dimension {}, expected 0 (output channels)",
                weights.quantized_dimension
            )));
        }
        for (c, &s) in weights.scales.iter().enumerate() {
            check_scale(self, weights, s, Some(c))?;
        }
        let z_w = weights.zero_points.first().copied().unwrap_or(0);
        if per_channel {
            if let Some(c) = weights.zero_points.iter().position(|&z| z != 0) {
                return Err(TensorError::value(
                    path,
                    &weights.name,
                    vec![c],
                    format!("per-channel weights must be symmetric, but the zero point is {}", weights.zero_points[c]),
                ));
            }
        } else {
            check_zero_point(self, weights, z_w)?;
        }

        let multiplier = |c: usize| -> Result<QuantizedMultiplier, TensorError> {
            let real = f64::from(s_in) * f64::from(weights.scales[c]) / f64::from(s_out);
            QuantizedMultiplier::from_real(real, rounding).map_err(|e| {
                TensorError::value(path, &weights.name, vec![c], format!("effective scale s_in*s_w/s_out: {e}"))
            })
        };
        let requant = if per_channel {
            Requant::PerChannel((0..outputs).map(multiplier).collect::<Result<_, _>>()?)
        } else {
            Requant::PerTensor(multiplier(0)?)
        };

        let weight_codes: Vec<i8> = self.data(weights)?.iter().map(|&b| b as i8).collect();
        let bias_values = match bias {
            None => None,
            Some(b) => {
                if b.shape[..] != [outputs as i32] {
                    return Err(TensorError::tensor(
                        path,
                        &b.name,
                        format!("shape {:?} is not [{outputs}], one per output channel", b.shape),
                    ));
                }
                let bytes = self.data(b)?;
                Some(bytes.chunks_exact(4).map(|c| i32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect())
            }
        };

        let range = |lo, hi| activation_range(lo, hi, s_out, z_out as i32);
        let (act_min, act_max) = match op.activation {
            Activation::None => (-128, 127),
            Activation::Relu => range(Some(0.0), None),
            Activation::Relu6 => range(Some(0.0), Some(6.0)),
            Activation::ReluN1To1 => range(Some(-1.0), Some(1.0)),
            Activation::Other(code) => {
                return Err(TensorError::tensor(
                    path,
                    &output.name,
                    format!("fused activation code {code} of operator {} is not supported on int8", op.index),
                ))
            }
        };

        let params = FullyConnectedParams {
            inputs,
            outputs,
            weights: weight_codes,
            bias: bias_values,
            input_offset: -(z_in as i32),
            weights_offset: if per_channel { 0 } else { -(z_w as i32) },
            output_offset: z_out as i32,
            requant,
            act_min,
            act_max,
            rounding,
        };
        FullyConnected::new(params).map_err(|e| werr(format!("operator {}: {e}", op.index)))
    }
}

impl TfliteModel {
    /// The quantization of the int8 activation tensor `name`: its one
    /// scale and zero point. Errors name the file and the tensor: no such
    /// tensor, a tensor that is not int8, not exactly one scale, a scale
    /// that is not positive and finite, a zero point outside `-128..=127`.
    pub fn int8_quantization(&self, name: &str) -> Result<(f32, i64), TensorError> {
        let t = self.tensor(name)?;
        expect_type(self, t, TensorType::Int8)?;
        per_tensor(self, t)
    }
}

fn expect_type(m: &TfliteModel, t: &TensorInfo, dtype: TensorType) -> Result<(), TensorError> {
    if t.dtype == dtype {
        Ok(())
    } else {
        Err(TensorError::tensor(m.path(), &t.name, format!("is {}, expected {dtype}", t.dtype)))
    }
}

/// The one scale and zero point of an activation tensor.
fn per_tensor(m: &TfliteModel, t: &TensorInfo) -> Result<(f32, i64), TensorError> {
    if t.scales.len() != 1 {
        return Err(TensorError::tensor(
            m.path(),
            &t.name,
            format!("has {} quantization scales, expected one", t.scales.len()),
        ));
    }
    check_scale(m, t, t.scales[0], None)?;
    let z = t.zero_points.first().copied().unwrap_or(0);
    check_zero_point(m, t, z)?;
    Ok((t.scales[0], z))
}

fn check_scale(m: &TfliteModel, t: &TensorInfo, s: f32, channel: Option<usize>) -> Result<(), TensorError> {
    if s.is_finite() && s > 0.0 {
        return Ok(());
    }
    let msg = format!("quantization scale {s} is not a positive finite number");
    Err(match channel {
        Some(c) => TensorError::value(m.path(), &t.name, vec![c], msg),
        None => TensorError::tensor(m.path(), &t.name, msg),
    })
}

fn check_zero_point(m: &TfliteModel, t: &TensorInfo, z: i64) -> Result<(), TensorError> {
    if (-128..=127).contains(&z) {
        Ok(())
    } else {
        Err(TensorError::tensor(m.path(), &t.name, format!("zero point {z} is outside -128..=127")))
    }
}
