//! The `flatten` layer kind: an image `[h, w, c]` as the vector of its
//! `h·w·c` values in C order (row by row, a pixel's channels together: the
//! order the pixels stream in). Codes and format pass unchanged.

use super::{Backward, LayerInput, LayerKind};
use crate::error::ModelError;
use crate::fixed::Format;
use crate::weights::LayerParams;

/// The model file's `type` of the kind.
pub const TYPE: &str = "flatten";

/// What the kind is, for the error that lists the types.
pub const WHAT: &str = "an image as a vector";

/// An image as a vector.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Flatten {
    /// Input image `[height, width, channels]`.
    pub input: [usize; 3],
    /// The format of the values.
    pub format: Format,
}

impl Flatten {
    /// Reads a `type: flatten` entry of the model file.
    pub(crate) fn from_file(input: &LayerInput) -> Result<Flatten, ModelError> {
        input.only(&[], &[])?;
        Ok(Flatten { input: input.image()?, format: input.format })
    }
}

impl LayerKind for Flatten {
    fn type_name(&self) -> &'static str {
        TYPE
    }

    fn describe(&self) -> String {
        let [h, w, c] = self.input;
        format!("flatten {h}x{w}x{c}->{}", h * w * c)
    }

    fn input_len(&self) -> usize {
        self.input.iter().product()
    }

    fn output_shape(&self) -> Vec<usize> {
        vec![self.input_len()]
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
