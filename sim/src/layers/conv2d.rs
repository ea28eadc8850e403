//! The `conv2d` layer kind: 3x3 convolution, stride 1 or 2, padding `same`
//! or `valid`, per-output-channel bias, relu or linear.
//!
//! An output pixel is a dense neuron over its window: for output pixel
//! `(oy, ox)` and filter `f`, the window is the 9·C input values
//! `x[oy*S + ky - pad_top][ox*S + kx - pad_left][c]` in the order
//! `(ky, kx, c)` (`ky`, `kx` = 0..2, top left first), 0 where the position
//! falls in the padding, and the output is exactly the dense arithmetic of
//! [`super::dense`] on that window with row `f` of the weights (bias first,
//! then every product in window order; a padding position adds a zero
//! product, which changes no accumulator). In hardware the window comes
//! from a sliding-window generator and the dense engine folds it (FINN's
//! ConvolutionInputGenerator + MVAU).
//!
//! Tensors: `w` shaped `[filters, 3, 3, channels]` (TFLite's OHWI order,
//! so a row of the flattened `[filters, 9·channels]` matrix is a window;
//! transpose a PyTorch kernel with `w.permute(0, 2, 3, 1)`, a Keras one
//! with `w.transpose(3, 0, 1, 2)`), and `b` shaped `[filters]`.
//!
//! Padding `same` is TensorFlow's: `out = ceil(in / S)` pixels per
//! dimension, `pad = max((out - 1)·S + 3 - in, 0)` split with the smaller
//! half on top (left). `valid`: `out = floor((in - 3) / S) + 1`.

use super::dense::{dense_neuron, Dense, Multipliers, Precision, Trainable, B, W};
use super::{Activation, Backward, LayerInput, LayerKind, TensorSpec};
use crate::error::ModelError;
use crate::fixed::Format;
use crate::model::schema::PaddingFile;
use crate::weights::LayerParams;

/// The model file's `type` of the kind.
pub const TYPE: &str = "conv2d";

/// What the kind is, for the error that lists the types.
pub const WHAT: &str = "3x3 convolution, stride 1 or 2, padding same or valid";

/// Zero padding of a convolution.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Padding {
    /// TensorFlow's `same`.
    Same,
    /// No padding.
    Valid,
}

impl std::fmt::Display for Padding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Padding::Same => "same",
            Padding::Valid => "valid",
        })
    }
}

/// Output size and the padding before the first pixel, along one dimension.
pub fn out_size(input: usize, stride: usize, padding: Padding) -> Option<(usize, usize)> {
    match padding {
        Padding::Same => {
            let out = input.div_ceil(stride);
            let pad = ((out - 1) * stride + 3).saturating_sub(input);
            Some((out, pad / 2))
        }
        Padding::Valid => (input >= 3).then(|| ((input - 3) / stride + 1, 0)),
    }
}

/// A 3x3 convolution.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Conv2d {
    /// Input image `[height, width, channels]`.
    pub input: [usize; 3],
    /// Output channels (filters).
    pub filters: usize,
    /// 1 or 2.
    pub stride: usize,
    /// Zero padding.
    pub padding: Padding,
    /// The dense engine over one window: `9·channels` inputs, `filters`
    /// outputs, the layer's activation, formats, folding (`pe` over
    /// filters, `simd` over the window) and trainable tensors.
    pub mvau: Dense,
}

impl Conv2d {
    /// Reads a `type: conv2d` entry of the model file.
    pub(crate) fn from_file(input: &LayerInput) -> Result<Conv2d, ModelError> {
        let (c, lf) = (input.c, input.lf);
        input.only(
            &["filters", "kernel", "stride", "padding", "activation", "precision", "pe", "simd", "multipliers", "trainable"],
            &["weight", "bias", "accum", "output"],
        )?;
        let [h, w, ch] = input.image()?;
        let filters = c.dim(input.require(&lf.filters, "filters")?, "filters")?;
        if let Some(k) = &lf.kernel {
            let rewrite = match k.value {
                3 => None,
                1 => Some("a 1x1 convolution is a 3x3 one whose weights are zero outside the centre (seed 004)"),
                5 | 7 => Some("a larger kernel is approximated by stacked 3x3 convolutions (seed 004), retrained with fptgen train"),
                _ => Some("only 3x3 kernels are in the core operator set"),
            };
            if let Some(r) = rewrite {
                return Err(c.err(k, format!("kernel is {}; conv2d takes kernel 3: {r}", k.value)));
            }
        }
        let stride = match &lf.stride {
            None => 1,
            Some(s) if s.value == 1 || s.value == 2 => s.value as usize,
            Some(s) => {
                return Err(c.err(s, format!("stride is {}; conv2d takes stride 1 or 2 (a larger stride is stride 2 followed by pooling)", s.value)))
            }
        };
        let padding = match lf.padding.as_ref().map(|p| p.value) {
            None | Some(PaddingFile::Same) => Padding::Same,
            Some(PaddingFile::Valid) => Padding::Valid,
        };
        if out_size(h, stride, padding).is_none() || out_size(w, stride, padding).is_none() {
            return Err(input.err_at_type(format!(
                "a valid-padded 3x3 convolution needs an input of at least 3x3 pixels; {} is {h}x{w}",
                input.from
            )));
        }
        let [weight, bias, accum, output] = input.formats(["weight", "bias", "accum", "output"])?;
        let window = 9 * ch;
        let pixels = {
            let (oh, _) = out_size(h, stride, padding).unwrap_or((1, 0));
            let (ow, _) = out_size(w, stride, padding).unwrap_or((1, 0));
            oh * ow
        };
        let (pe, simd) = c.fold_pair(&lf.pe, &lf.simd, (filters, window), ("filters", "window values (9 x channels)"), pixels)?;
        let [weights, biases] = input.trainable(["weights", "biases"])?;
        let mut mvau = Dense {
            inputs: window,
            outputs: filters,
            activation: input.activation(false)?,
            precision: Precision { weight, bias, accum, output },
            pe,
            simd,
            multipliers: Multipliers::Dsp,
            trainable: Trainable { weights, biases },
        };
        mvau.multipliers = input.multipliers(&mvau)?;
        Ok(Conv2d { input: [h, w, ch], filters, stride, padding, mvau })
    }

    /// Output height and width, and the padding on top and on the left.
    pub fn geometry(&self) -> ([usize; 2], [usize; 2]) {
        let (oh, pt) = out_size(self.input[0], self.stride, self.padding).unwrap_or((0, 0));
        let (ow, pl) = out_size(self.input[1], self.stride, self.padding).unwrap_or((0, 0));
        ([oh, ow], [pt, pl])
    }

    /// Output pixels.
    pub fn pixels(&self) -> usize {
        let ([oh, ow], _) = self.geometry();
        oh * ow
    }

    /// The window of output pixel `p` (row-major), `zero` in the padding.
    fn window<T: Copy>(&self, x: &[T], p: usize, zero: T, out: &mut Vec<T>) {
        let ([_, ow], [pt, pl]) = self.geometry();
        let [h, w, ch] = self.input;
        let (oy, ox) = (p / ow, p % ow);
        out.clear();
        for ky in 0..3 {
            for kx in 0..3 {
                let iy = (oy * self.stride + ky).checked_sub(pt).filter(|&v| v < h);
                let ix = (ox * self.stride + kx).checked_sub(pl).filter(|&v| v < w);
                match (iy, ix) {
                    (Some(iy), Some(ix)) => out.extend_from_slice(&x[(iy * w + ix) * ch..(iy * w + ix + 1) * ch]),
                    _ => out.extend(std::iter::repeat_n(zero, ch)),
                }
            }
        }
    }

    /// For every window position of output pixel `p` (row-major), in the
    /// window's order `(ky, kx, c)`, the input index it reads, `None` in
    /// the padding.
    pub fn window_sources(&self, p: usize) -> impl Iterator<Item = Option<usize>> + '_ {
        let ([_, ow], [pt, pl]) = self.geometry();
        let [h, w, ch] = self.input;
        let (oy, ox) = (p / ow, p % ow);
        (0..9 * ch).map(move |k| {
            let (ky, kx, c) = (k / (3 * ch), (k / ch) % 3, k % ch);
            let iy = (oy * self.stride + ky).checked_sub(pt).filter(|&v| v < h)?;
            let ix = (ox * self.stride + kx).checked_sub(pl).filter(|&v| v < w)?;
            Some((iy * w + ix) * ch + c)
        })
    }

    fn forward_float<T: num_traits::Float>(&self, params: &[Vec<T>], x: &[T]) -> Vec<T> {
        let mut out = Vec::with_capacity(self.pixels() * self.filters);
        let mut win = Vec::new();
        for p in 0..self.pixels() {
            self.window(x, p, T::zero(), &mut win);
            for f in 0..self.filters {
                let row = &params[W][f * win.len()..(f + 1) * win.len()];
                let mut acc = params[B][f];
                for (&wi, &xi) in row.iter().zip(&win) {
                    acc = acc + wi * xi;
                }
                if self.mvau.activation == Activation::Relu && acc < T::zero() {
                    acc = T::zero();
                }
                out.push(acc);
            }
        }
        out
    }
}

impl LayerKind for Conv2d {
    fn type_name(&self) -> &'static str {
        TYPE
    }

    fn describe(&self) -> String {
        let [h, w, c] = self.input;
        let ([oh, ow], _) = self.geometry();
        format!("conv2d 3x3/{} {} {h}x{w}x{c}->{oh}x{ow}x{}", self.stride, self.padding, self.filters)
    }

    fn input_len(&self) -> usize {
        self.input.iter().product()
    }

    fn output_shape(&self) -> Vec<usize> {
        let ([oh, ow], _) = self.geometry();
        vec![oh, ow, self.filters]
    }

    fn output_format(&self) -> Format {
        self.mvau.output_format()
    }

    fn output_floor(&self) -> i128 {
        self.mvau.output_floor()
    }

    fn tensors(&self) -> Vec<TensorSpec> {
        let mut t = self.mvau.tensors();
        t[W].shape = vec![self.filters, 3, 3, self.input[2]];
        t
    }

    fn macs(&self) -> u64 {
        self.pixels() as u64 * self.mvau.macs()
    }

    fn forward(&self, input_format: Format, p: &LayerParams, x: &[i128]) -> Vec<i128> {
        let mut out = Vec::with_capacity(self.pixels() * self.filters);
        let mut win = Vec::new();
        for px in 0..self.pixels() {
            self.window(x, px, 0, &mut win);
            out.extend((0..self.filters).map(|f| dense_neuron(&self.mvau, input_format, p, &win, f)));
        }
        out
    }

    fn recompute(&self, input_format: Format, p: &LayerParams, x: &[i128], outputs: &[usize], out: &mut [i128]) {
        let mut win = Vec::new();
        let mut pixel = usize::MAX;
        let mut sorted = outputs.to_vec();
        sorted.sort_unstable_by_key(|&o| (o / self.filters, o));
        for o in sorted {
            let px = o / self.filters;
            if px != pixel {
                self.window(x, px, 0, &mut win);
                pixel = px;
            }
            out[o] = dense_neuron(&self.mvau, input_format, p, &win, o % self.filters);
        }
    }

    fn affected(&self, tensor: usize, index: usize, out: &mut Vec<usize>) {
        let f = if tensor == W { index / self.mvau.inputs.max(1) } else { index };
        out.extend((0..self.pixels()).map(|px| px * self.filters + f));
    }

    fn forward_f64(&self, params: &[Vec<f64>], x: &[f64]) -> Vec<f64> {
        self.forward_float(params, x)
    }

    fn forward_f32(&self, params: &[Vec<f32>], x: &[f32]) -> Vec<f32> {
        self.forward_float(params, x)
    }

    fn backward(&self, b: Backward<'_>) -> Vec<f32> {
        let n = self.mvau.inputs;
        let mut dx = if b.want_input { vec![0.0f32; self.input_len()] } else { Vec::new() };
        let (gw, gb) = match b.grads {
            [gw, gb, ..] => (gw, gb),
            _ => return dx,
        };
        for px in 0..self.pixels() {
            let sources: Vec<Option<usize>> = self.window_sources(px).collect();
            for f in 0..self.filters {
                let dl = b.delta[px * self.filters + f];
                if dl == 0.0 {
                    continue;
                }
                gb[f] += dl;
                let (grow, wrow) = (&mut gw[f * n..(f + 1) * n], &b.params[W][f * n..(f + 1) * n]);
                for (k, src) in sources.iter().enumerate() {
                    if let Some(i) = *src {
                        grow[k] += dl * b.x[i];
                        if b.want_input {
                            dx[i] += dl * wrow[k];
                        }
                    }
                }
            }
        }
        dx
    }

    fn init_masters(&self, draw: &mut dyn FnMut(f32) -> f32) -> Vec<Vec<f32>> {
        self.mvau.init_masters(draw)
    }

    fn formats(&self) -> Vec<(&'static str, Format)> {
        self.mvau.formats()
    }

    fn folding(&self) -> String {
        self.mvau.folding()
    }

    fn activation(&self) -> Option<Activation> {
        Some(self.mvau.activation)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_and_valid_sizes_follow_tensorflow() {
        // same: ceil(in / s), padding split with the smaller half first.
        assert_eq!(out_size(28, 1, Padding::Same), Some((28, 1)));
        assert_eq!(out_size(28, 2, Padding::Same), Some((14, 0)));
        assert_eq!(out_size(7, 2, Padding::Same), Some((4, 1)));
        assert_eq!(out_size(1, 1, Padding::Same), Some((1, 1)));
        // valid: floor((in - 3) / s) + 1.
        assert_eq!(out_size(28, 1, Padding::Valid), Some((26, 0)));
        assert_eq!(out_size(7, 2, Padding::Valid), Some((3, 0)));
        assert_eq!(out_size(2, 1, Padding::Valid), None);
    }
}
