//! The `slice` layer kind: a contiguous range of an image's channels (seed
//! 004's channel split). Input `[h, w, c]`, output `[h, w, count]`: output
//! pixel `p`, channel `k` is input pixel `p`, channel `first + k`; codes and
//! format pass unchanged. The model file does not write it: the split of a
//! layer with more input channels than `max_channels` makes it at load
//! (`crate::model::load`), one slice per group of input channels.

use super::{Backward, LayerKind};
use crate::fixed::Format;
use crate::weights::LayerParams;

/// The kind's name (a slice is made by a split, never written in a model
/// file).
pub const TYPE: &str = "slice";

/// A range of an image's channels.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Slice {
    /// Input image `[height, width, channels]`.
    pub input: [usize; 3],
    /// The first channel taken.
    pub first: usize,
    /// Channels taken (at least 1; `first + count <= channels`).
    pub count: usize,
    /// The format of the values.
    pub format: Format,
}

impl Slice {
    /// Input index of output `o`.
    fn source(&self, o: usize) -> usize {
        (o / self.count) * self.input[2] + self.first + o % self.count
    }

    fn gather<T: Copy>(&self, x: &[T]) -> Vec<T> {
        (0..self.output_len()).map(|o| x[self.source(o)]).collect()
    }
}

impl LayerKind for Slice {
    fn type_name(&self) -> &'static str {
        TYPE
    }

    fn describe(&self) -> String {
        let [h, w, c] = self.input;
        format!("slice {h}x{w}x{c} channels {}..{}", self.first, self.first + self.count)
    }

    fn input_len(&self) -> usize {
        self.input.iter().product()
    }

    fn output_shape(&self) -> Vec<usize> {
        vec![self.input[0], self.input[1], self.count]
    }

    fn output_format(&self) -> Format {
        self.format
    }

    fn ste_mask(&self) -> bool {
        false
    }

    fn forward(&self, _input_format: Format, _p: &LayerParams, x: &[i128]) -> Vec<i128> {
        self.gather(x)
    }

    fn recompute(&self, _input_format: Format, _p: &LayerParams, x: &[i128], outputs: &[usize], out: &mut [i128]) {
        for &o in outputs {
            out[o] = x[self.source(o)];
        }
    }

    fn forward_f64(&self, _params: &[Vec<f64>], x: &[f64]) -> Vec<f64> {
        self.gather(x)
    }

    fn forward_f32(&self, _params: &[Vec<f32>], x: &[f32]) -> Vec<f32> {
        self.gather(x)
    }

    fn backward(&self, b: Backward<'_>) -> Vec<f32> {
        if !b.want_input {
            return Vec::new();
        }
        let mut dx = vec![0.0; self.input_len()];
        for (o, &d) in b.delta.iter().enumerate() {
            dx[self.source(o)] = d;
        }
        dx
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixed::{Overflow, Quant};

    fn slice(first: usize, count: usize) -> Slice {
        let format = Format::new(true, 8, 4, Quant::Trn, Overflow::Wrap).unwrap();
        Slice { input: [2, 3, 5], first, count, format }
    }

    #[test]
    fn takes_the_channel_range_of_every_pixel() {
        let s = slice(1, 3);
        // Input value = 10 * pixel + channel.
        let x: Vec<i128> = (0..6).flat_map(|p| (0..5).map(move |c| 10 * p + c)).collect();
        let y = s.forward(s.format, &LayerParams::default(), &x);
        let want: Vec<i128> = (0..6).flat_map(|p| (1..4).map(move |c| 10 * p + c)).collect();
        assert_eq!(y, want);
        assert_eq!(s.output_shape(), vec![2, 3, 3]);
    }

    #[test]
    fn backward_scatters_into_the_range_and_leaves_other_channels_zero() {
        let s = slice(4, 1);
        let delta: Vec<f32> = (1..=6).map(|v| v as f32).collect();
        let dx = s.backward(Backward { x: &[], params: &[], delta: &delta, grads: &mut [], want_input: true });
        for (i, &d) in dx.iter().enumerate() {
            let want = if i % 5 == 4 { (i / 5 + 1) as f32 } else { 0.0 };
            assert_eq!(d, want, "input {i}");
        }
    }
}
