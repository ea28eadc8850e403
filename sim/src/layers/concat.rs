//! The `concat` layer kind: two or more inputs as one. Its input is the
//! gather of its inputs (`crate::model::Gather`: images of equal height and
//! width side by side in the channels, `[h, w, sum c_k]`, a pixel's
//! channels of input 0 first; vectors one after the other), and its output
//! is that gathered input unchanged: codes and format pass as they are.

use super::{Backward, LayerInput, LayerKind};
use crate::error::ModelError;
use crate::fixed::Format;
use crate::weights::LayerParams;

/// The model file's `type` of the kind.
pub const TYPE: &str = "concat";

/// What the kind is, for the error that lists the types.
pub const WHAT: &str = "two or more inputs as one (channels of images, or vectors one after the other)";

/// Several inputs as one.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Concat {
    /// The gathered shape: `[n]` or `[height, width, channels]`.
    pub shape: Vec<usize>,
    /// Number of inputs (at least 2).
    pub parts: usize,
    /// The format of the values.
    pub format: Format,
}

impl Concat {
    /// Reads a `type: concat` entry of the model file.
    pub(crate) fn from_file(input: &LayerInput) -> Result<Concat, ModelError> {
        input.only(&[], &[])?;
        if input.parts.len() < 2 {
            return Err(input.err_at_inputs(format!(
                "a concat layer takes at least 2 inputs; '{}' has {} (list them: `inputs: [a, b]`)",
                input.name,
                input.parts.len()
            )));
        }
        Ok(Concat { shape: input.shape.to_vec(), parts: input.parts.len(), format: input.format })
    }
}

impl LayerKind for Concat {
    fn type_name(&self) -> &'static str {
        TYPE
    }

    fn describe(&self) -> String {
        let s: Vec<String> = self.shape.iter().map(usize::to_string).collect();
        format!("concat {} of {}", s.join("x"), self.parts)
    }

    fn input_len(&self) -> usize {
        self.shape.iter().product()
    }

    fn output_shape(&self) -> Vec<usize> {
        self.shape.clone()
    }

    fn output_format(&self) -> Format {
        self.format
    }

    fn ste_mask(&self) -> bool {
        false
    }

    fn forward(&self, _input_format: Format, _p: &LayerParams, x: &[i128]) -> Vec<i128> {
        x.to_vec()
    }

    fn recompute(&self, _input_format: Format, _p: &LayerParams, x: &[i128], outputs: &[usize], out: &mut [i128]) {
        for &o in outputs {
            out[o] = x[o];
        }
    }

    fn forward_f64(&self, _params: &[Vec<f64>], x: &[f64]) -> Vec<f64> {
        x.to_vec()
    }

    fn forward_f32(&self, _params: &[Vec<f32>], x: &[f32]) -> Vec<f32> {
        x.to_vec()
    }

    fn backward(&self, b: Backward<'_>) -> Vec<f32> {
        if b.want_input {
            b.delta.to_vec()
        } else {
            Vec::new()
        }
    }
}
