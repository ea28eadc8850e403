//! The `maxpool2d` layer kind: 2x2 max-pooling with stride 2.
//!
//! Output pixel `(oy, ox)`, channel `c`, is the largest code of
//! `x[2oy + dy][2ox + dx][c]` for `dy, dx` in 0..2 (codes of one format, so
//! the largest code is the largest value). The output is
//! `floor(h / 2) x floor(w / 2)`: a last odd row or column is dropped, as
//! Keras' `valid` pooling does. No parameters; the output format is the
//! input's.

use super::{Backward, LayerInput, LayerKind};
use crate::error::ModelError;
use crate::fixed::Format;
use crate::weights::LayerParams;

/// The model file's `type` of the kind.
pub const TYPE: &str = "maxpool2d";

/// What the kind is, for the error that lists the types.
pub const WHAT: &str = "2x2 max-pooling, stride 2";

/// A 2x2 max-pooling layer.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct MaxPool2d {
    /// Input image `[height, width, channels]`.
    pub input: [usize; 3],
    /// The format of the input and output values.
    pub format: Format,
}

impl MaxPool2d {
    /// Reads a `type: maxpool2d` entry of the model file.
    pub(crate) fn from_file(input: &LayerInput) -> Result<MaxPool2d, ModelError> {
        input.only(&["pool"], &[])?;
        if let Some(p) = &input.lf.pool {
            if p.value != 2 {
                return Err(input.c.err(p, format!("pool is {}; maxpool2d takes pool 2 (2x2, stride 2; a larger window is stacked 2x2 pools or a strided conv2d)", p.value)));
            }
        }
        let [h, w, c] = input.image()?;
        if h < 2 || w < 2 {
            return Err(input.err_at_type(format!("2x2 pooling needs an input of at least 2x2 pixels; {} is {h}x{w}", input.from)));
        }
        Ok(MaxPool2d { input: [h, w, c], format: input.format })
    }

    fn out(&self) -> [usize; 3] {
        [self.input[0] / 2, self.input[1] / 2, self.input[2]]
    }

    /// The input index of the `k`-th (0..4: top left, top right, bottom
    /// left, bottom right) value of output `o`'s window.
    fn source(&self, o: usize, k: usize) -> usize {
        let [_, ow, c] = self.out();
        let (px, ch) = (o / c, o % c);
        let (oy, ox) = (px / ow, px % ow);
        let (iy, ix) = (2 * oy + k / 2, 2 * ox + k % 2);
        (iy * self.input[1] + ix) * c + ch
    }

    /// The window position (0..4) of the first largest value.
    fn argmax<T: PartialOrd + Copy>(&self, x: &[T], o: usize) -> usize {
        (1..4).fold(0, |best, k| if x[self.source(o, k)] > x[self.source(o, best)] { k } else { best })
    }

    fn forward_float<T: PartialOrd + Copy>(&self, x: &[T]) -> Vec<T> {
        (0..self.output_len()).map(|o| x[self.source(o, self.argmax(x, o))]).collect()
    }
}

impl LayerKind for MaxPool2d {
    fn type_name(&self) -> &'static str {
        TYPE
    }

    fn describe(&self) -> String {
        let [h, w, c] = self.input;
        let [oh, ow, _] = self.out();
        format!("maxpool2d 2x2 {h}x{w}x{c}->{oh}x{ow}x{c}")
    }

    fn input_len(&self) -> usize {
        self.input.iter().product()
    }

    fn output_shape(&self) -> Vec<usize> {
        self.out().to_vec()
    }

    fn output_format(&self) -> Format {
        self.format
    }

    fn ste_mask(&self) -> bool {
        false
    }

    fn forward(&self, _input_format: Format, _p: &LayerParams, x: &[i128]) -> Vec<i128> {
        self.forward_float(x)
    }

    fn recompute(&self, _input_format: Format, _p: &LayerParams, x: &[i128], outputs: &[usize], out: &mut [i128]) {
        for &o in outputs {
            out[o] = x[self.source(o, self.argmax(x, o))];
        }
    }

    fn forward_f64(&self, _params: &[Vec<f64>], x: &[f64]) -> Vec<f64> {
        self.forward_float(x)
    }

    fn forward_f32(&self, _params: &[Vec<f32>], x: &[f32]) -> Vec<f32> {
        self.forward_float(x)
    }

    fn backward(&self, b: Backward<'_>) -> Vec<f32> {
        if !b.want_input {
            return Vec::new();
        }
        let mut dx = vec![0.0f32; self.input_len()];
        for (o, &dl) in b.delta.iter().enumerate() {
            dx[self.source(o, self.argmax(b.x, o))] += dl;
        }
        dx
    }
}
