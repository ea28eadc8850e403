//! The `requantize` layer kind: int8 to int8 with another scale and zero
//! point, exactly as TFLite's reference `REQUANTIZE` (and `QUANTIZE` from
//! int8 to int8) computes it, element by element:
//!
//! ```text
//! (M, shift) = QuantizeMultiplier((double) s_in / (double) s_out)
//! y = clamp(MultiplyByQuantizedMultiplier(x - z_in, M, shift) + z_out, -128, 127)
//! ```
//!
//! It has no parameters. It is what connects an int8 layer to a producer
//! whose quantization differs from the layer's input quantization (the
//! interface contract, `docs/numerics.md`, "Int8 layers").

use super::dense_int8::{check_feed, int8_feed, int8_format, read_affine, read_rounding, refuse_trainable_quantization, Affine};
use super::{Backward, LayerInput, LayerKind};
use crate::error::ModelError;
use crate::fixed::Format;
use crate::int8::{QuantizedMultiplier, Rounding};
use crate::weights::LayerParams;

/// The model file's `type` of the kind.
pub const TYPE: &str = "requantize";

/// What the kind is, for the error that lists the types.
pub const WHAT: &str = "int8 to int8 with another scale and zero point, as TFLite's REQUANTIZE";

/// An int8-to-int8 requantization of `shape`'s values.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Requantize {
    /// The shape (input and output): `[n]` or `[h, w, c]`.
    pub shape: Vec<usize>,
    /// How the multiplier rounds.
    pub rounding: Rounding,
    input_q: Affine,
    output_q: Affine,
    multiplier: QuantizedMultiplier,
}

impl Requantize {
    /// The requantization of `shape`'s values from `input` to `output`.
    /// Errors when TFLite's `QuantizeMultiplier` cannot take `s_in / s_out`
    /// in `rounding` (a ratio of `2^30` or more under double rounding).
    pub fn new(shape: Vec<usize>, input: Affine, output: Affine, rounding: Rounding) -> Result<Requantize, String> {
        let real = f64::from(input.scale()) / f64::from(output.scale());
        let multiplier =
            QuantizedMultiplier::from_real(real, rounding).map_err(|e| format!("the ratio of the scales s_in/s_out: {e}"))?;
        Ok(Requantize { shape, rounding, input_q: input, output_q: output, multiplier })
    }

    /// The input's quantization.
    pub fn input_q(&self) -> Affine {
        self.input_q
    }

    /// The output's quantization.
    pub fn output_q(&self) -> Affine {
        self.output_q
    }

    /// The multiplier and shift of `s_in / s_out`.
    pub fn multiplier(&self) -> QuantizedMultiplier {
        self.multiplier
    }

    /// One value.
    fn one(&self, x: i128) -> i128 {
        let x = x.clamp(-128, 127) as i32 - self.input_q.zero_point();
        let y = self.multiplier.apply(x, self.rounding).saturating_add(self.output_q.zero_point());
        i128::from(y.clamp(-128, 127))
    }

    fn ratio(&self) -> f64 {
        f64::from(self.input_q.scale()) / f64::from(self.output_q.scale())
    }

    /// Reads a `type: requantize` entry of the model file.
    pub(crate) fn from_file(input: &LayerInput) -> Result<Requantize, ModelError> {
        let c = input.c;
        input.only(&["quantization", "rounding", "trainable"], &[])?;
        let feed = int8_feed(input)?;
        refuse_trainable_quantization(input)?;
        input.trainable::<0>([])?;
        let q = input.require(&input.lf.quantization, "quantization")?;
        if let Some(ws) = &q.value.weight_scales {
            return Err(c.err(ws, "a requantize layer has no weights; its quantization takes `input` and `output` only"));
        }
        let in_q = read_affine(c, &q.value.input)?;
        let out_q = read_affine(c, &q.value.output)?;
        check_feed(input, &q.value.input.value.scale.referenced, &q.value.input.value.zero_point.referenced, in_q, feed)?;
        let rounding = read_rounding(input.lf.rounding.as_ref());
        Requantize::new(input.shape.to_vec(), in_q, out_q, rounding).map_err(|m| c.err(&q.value.output.value.scale, m))
    }
}

impl LayerKind for Requantize {
    fn type_name(&self) -> &'static str {
        TYPE
    }

    fn describe(&self) -> String {
        let s: Vec<String> = self.shape.iter().map(usize::to_string).collect();
        format!("requantize {} ({} -> {})", s.join("x"), self.input_q, self.output_q)
    }

    fn input_len(&self) -> usize {
        self.shape.iter().product()
    }

    fn output_shape(&self) -> Vec<usize> {
        self.shape.clone()
    }

    fn output_format(&self) -> Format {
        int8_format()
    }

    fn forward(&self, _input_format: Format, _p: &LayerParams, x: &[i128]) -> Vec<i128> {
        x.iter().map(|&v| self.one(v)).collect()
    }

    fn recompute(&self, _input_format: Format, _p: &LayerParams, x: &[i128], outputs: &[usize], out: &mut [i128]) {
        for &o in outputs {
            out[o] = self.one(x[o]);
        }
    }

    fn affected(&self, _tensor: usize, _index: usize, _out: &mut Vec<usize>) {}

    fn forward_f64(&self, _params: &[Vec<f64>], x: &[f64]) -> Vec<f64> {
        let (zi, zo, m) = (f64::from(self.input_q.zero_point()), f64::from(self.output_q.zero_point()), self.ratio());
        x.iter().map(|&v| (zo + m * (v - zi)).clamp(-128.0, 127.0)).collect()
    }

    fn forward_f32(&self, _params: &[Vec<f32>], x: &[f32]) -> Vec<f32> {
        let (zi, zo, m) = (self.input_q.zero_point() as f32, self.output_q.zero_point() as f32, self.ratio() as f32);
        x.iter().map(|&v| (zo + m * (v - zi)).clamp(-128.0, 127.0)).collect()
    }

    fn backward(&self, b: Backward<'_>) -> Vec<f32> {
        if !b.want_input {
            return Vec::new();
        }
        let m = self.ratio() as f32;
        b.delta.iter().map(|&d| d * m).collect()
    }

    fn output_quantization(&self) -> Option<Affine> {
        Some(self.output_q)
    }

    fn output_real(&self, code: i128) -> f64 {
        (code - i128::from(self.output_q.zero_point())) as f64 * f64::from(self.output_q.scale())
    }

    fn input_quantization(&self) -> Option<Affine> {
        Some(self.input_q)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(s: f32, z: i64) -> Affine {
        Affine::new(s, z).unwrap()
    }

    #[test]
    fn hand_computed_values() {
        // s_in / s_out = 0.5 / 0.25 = 2: y = 2 (x - 3) - 5, clamped.
        let r = Requantize::new(vec![4], q(0.5, 3), q(0.25, -5), Rounding::Single).unwrap();
        assert_eq!(r.forward(int8_format(), &LayerParams::default(), &[3, 10, -50, 100]), vec![-5, 9, -111, 127]);
        // s_in / s_out = 0.25: y = (x + 1) / 4 + 2: x = 1 -> 0.5 -> single 1 -> 3;
        // x = -3 -> -0.5 -> single 0 -> 2, double -1 -> 1; x = -128 -> -31.75 -> -32 -> -30.
        let s = Requantize::new(vec![3], q(0.25, -1), q(1.0, 2), Rounding::Single).unwrap();
        assert_eq!(s.forward(int8_format(), &LayerParams::default(), &[1, -3, -128]), vec![3, 2, -30]);
        let d = Requantize::new(vec![3], q(0.25, -1), q(1.0, 2), Rounding::Double).unwrap();
        assert_eq!(d.forward(int8_format(), &LayerParams::default(), &[1, -3, -128]), vec![3, 1, -30]);
    }

    #[test]
    fn the_identity_leaves_codes_unchanged() {
        let r = Requantize::new(vec![256], q(0.1, 7), q(0.1, 7), Rounding::Single).unwrap();
        let x: Vec<i128> = (-128..=127).collect();
        assert_eq!(r.forward(int8_format(), &LayerParams::default(), &x), x);
    }

    #[test]
    fn a_huge_ratio_under_double_rounding_is_an_error() {
        assert!(Requantize::new(vec![1], q(1e10, 0), q(1.0, 0), Rounding::Double).is_err());
        assert!(Requantize::new(vec![1], q(1e10, 0), q(1.0, 0), Rounding::Single).is_ok());
    }
}
