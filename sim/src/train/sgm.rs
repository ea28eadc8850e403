//! Static synthetic-gradient modules, `training: rule: sgm` (seed 002;
//! `docs/training.md`, "Synthetic-gradient modules").
//!
//! Under `rule: sgm` every trainable hidden (dense) layer `l` has a small
//! fixed linear network, its module, from the layer's output codes `a` and
//! the sample's target codes `t` to `g`, the layer's estimate of the
//! gradient of the loss with respect to `a` (in the same units as the
//! error `e = y - t` that the output layer gets). It is pretrained on the
//! host against the true gradients ([`fit`], `fptgen train --sgm`),
//! quantized, and then frozen: on the device it is a read-only memory.
//! With `C` classes and `N` outputs of the layer:
//!
//! ```text
//! u      = [a[0] << sa, .., a[N-1] << sa, t[0] << st, .., t[C-1] << st]   (F_in = max(F_a, F_y) fraction bits)
//! h[k]   = sat_E( R( c[k] + sum_i v[k][i] * u[i], s_h ) )                 k < C
//! g[o]   = R( sum_k u[o][k] * h[k], s_g )                                  o < N
//! ```
//!
//! `sa = F_in - F_a` and `st = F_in - F_y` align the layer's output format
//! and the network's output format (fraction bits `F_a`, `F_y`) exactly;
//! `v` (`C x (N + C)`) and `u` (`N x C`) are 8-bit codes in `-127..=127`,
//! `c` a 32-bit code in `-(2^31 - 1)..=2^31 - 1`, `s_h` and `s_g` in
//! `0..=31`; `R(x, k)` is [`super::feedback::round_shift`] (`x / 2^k`
//! rounded to nearest, ties to even); `sat_E` saturates to `E` bits signed, `E` the error's width
//! (the output format's width plus 2, as the hardware's `e`). So `h` is an
//! estimate of the error `e` in output codes (a linear read-out of the
//! output from `a`, minus the target), and `g` maps it back to the layer's
//! outputs: for the layer just before a linear output layer the exact
//! gradient `W^T (W a + b - t)` has this form.
//!
//! The archive (`training: sgm:`) holds per module four integer arrays,
//! named after the layer: `<layer>/sgm_v`, `<layer>/sgm_c`, `<layer>/sgm_u`
//! and `<layer>/sgm_shift` (`[s_h, s_g]`), plus `meta/` arrays, which are
//! ignored.

use std::collections::BTreeMap;
use std::path::Path;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::error::{Error, TensorError};
use crate::layers::dense::W;
use crate::layers::Activation;
use crate::model::{LayerOp, Model, Source};
use crate::tensor::{self, unravel, Array, NamedArray, OutValues, Values};
use crate::weights::Params;

use super::feedback::round_shift;

/// Largest magnitude of a `v` or `u` code (8 bits, symmetric).
pub const CODE_MAX: i128 = 127;
/// Largest magnitude of a `c` code (32 bits, symmetric).
pub const BIAS_MAX: i128 = (1 << 31) - 1;
/// Largest `s_h` and `s_g` (both are at least 0: `R` only narrows, so
/// the hardware's widths do not depend on the archive).
pub const SHIFT_MAX: i32 = 31;

/// One hidden trainable layer's module.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SgmModule {
    /// The layer's index in the model.
    pub layer: usize,
    /// N, the layer's outputs.
    pub outputs: usize,
    /// C, the network's outputs.
    pub classes: usize,
    /// `sa`: the left shift of the layer's output codes into `u`.
    pub shift_a: u32,
    /// `st`: the left shift of the target codes into `u`.
    pub shift_t: u32,
    /// `E`: `h` saturates to this many bits, signed.
    pub h_bits: u32,
    /// `v`, `C` rows of `N + C` codes.
    pub v: Vec<i128>,
    /// `c`, `C` codes.
    pub c: Vec<i128>,
    /// `u`, `N` rows of `C` codes.
    pub u: Vec<i128>,
    /// `s_h`.
    pub shift_h: i32,
    /// `s_g`.
    pub shift_g: i32,
}

impl SgmModule {
    /// `h` (`C` values) for the layer's output codes `a` and the target
    /// codes `t`.
    pub fn hidden(&self, a: &[i128], t: &[i128]) -> Vec<i128> {
        let width = self.outputs + self.classes;
        let hi = (1i128 << (self.h_bits - 1)) - 1;
        (0..self.classes)
            .map(|k| {
                let row = &self.v[k * width..(k + 1) * width];
                let acc = self.c[k]
                    + row[..self.outputs].iter().zip(a).map(|(&v, &x)| v * (x << self.shift_a)).sum::<i128>()
                    + row[self.outputs..].iter().zip(t).map(|(&v, &x)| v * (x << self.shift_t)).sum::<i128>();
                round_shift(acc, self.shift_h).clamp(-hi - 1, hi)
            })
            .collect()
    }

    /// `g` (`N` values) from `h`.
    pub fn gradient(&self, h: &[i128]) -> Vec<i128> {
        (0..self.outputs)
            .map(|o| round_shift(self.u[o * self.classes..(o + 1) * self.classes].iter().zip(h).map(|(&u, &x)| u * x).sum(), self.shift_g))
            .collect()
    }
}

/// The modules of a model under `rule: sgm`, one per hidden trainable
/// layer, in model order.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Sgm {
    /// The modules.
    pub modules: Vec<SgmModule>,
}

impl Sgm {
    /// The module of layer `layer`, if it has one.
    pub fn module(&self, layer: usize) -> Option<&SgmModule> {
        self.modules.iter().find(|m| m.layer == layer)
    }
}

/// The shape of one module before its codes: layer, N, C, `sa`, `st`, `E`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ModuleShape {
    /// The layer's index in the model.
    pub layer: usize,
    /// N.
    pub outputs: usize,
    /// C.
    pub classes: usize,
    /// `sa`.
    pub shift_a: u32,
    /// `st`.
    pub shift_t: u32,
    /// `E`.
    pub h_bits: u32,
    /// Bits of an entry of `u` (signed): the wider of the shifted output
    /// and target codes, plus a sign bit.
    pub u_bits: u32,
}

impl ModuleShape {
    fn module(self, v: Vec<i128>, c: Vec<i128>, u: Vec<i128>, shift_h: i32, shift_g: i32) -> SgmModule {
        SgmModule {
            layer: self.layer,
            outputs: self.outputs,
            classes: self.classes,
            shift_a: self.shift_a,
            shift_t: self.shift_t,
            h_bits: self.h_bits,
            v,
            c,
            u,
            shift_h,
            shift_g,
        }
    }
}

/// The layers that need a module: every trainable layer but the output
/// layer (which gets the error itself), each a dense, conv2d or dense_int8
/// layer (what the feedback rules train; the model's load checks it for a
/// model file). A conv2d's module has one output per value of its output
/// image (pixel-major).
pub fn module_shapes(model: &Model) -> Vec<ModuleShape> {
    let last = model.layers.len().saturating_sub(1);
    let Some(out) = model.layers.last() else { return Vec::new() };
    let fy = out.kind().output_format();
    let classes = model.output_len();
    model
        .layers
        .iter()
        .enumerate()
        .take(last)
        .filter(|(_, l)| l.kind().tensors().iter().any(|t| t.trainable))
        .filter_map(|(i, l)| {
            let outputs = match &l.op {
                LayerOp::Dense(d) => d.outputs,
                LayerOp::Conv2d(c) => c.pixels() * c.filters,
                LayerOp::DenseInt8(d) => d.outputs,
                _ => return None,
            };
            // A dense_int8 layer's output format is its int8 codes'.
            let fa_format = l.kind().output_format();
            let fa = fa_format.frac_bits();
            let f_in = fa.max(fy.frac_bits());
            let (shift_a, shift_t) = ((f_in - fa) as u32, (f_in - fy.frac_bits()) as u32);
            Some(ModuleShape {
                layer: i,
                outputs,
                classes,
                shift_a,
                shift_t,
                h_bits: fy.width() + 2,
                u_bits: (fa_format.width() + shift_a).max(fy.width() + shift_t) + 1,
            })
        })
        .collect()
}

fn names(model: &Model, layer: usize) -> [String; 4] {
    let n = &model.layers[layer].name;
    [format!("{n}/sgm_v"), format!("{n}/sgm_c"), format!("{n}/sgm_u"), format!("{n}/sgm_shift")]
}

/// Reads the modules of `model` from the archive at `path`. Errors name
/// the archive, the tensor and the index: a missing or misshapen array, a
/// float array, a code out of range, an array that belongs to no module.
pub fn load(model: &Model, path: &Path) -> Result<Sgm, Error> {
    if !path.exists() {
        return Err(TensorError::file(
            path,
            format!(
                "synthetic-gradient modules not found (training: sgm: of {}); write them with `fptgen train --sgm`",
                model.source.display()
            ),
        )
        .into());
    }
    let mut arrays = tensor::read_npz(path)?;
    let mut modules = Vec::new();
    for s in module_shapes(model) {
        let [nv, nc, nu, ns] = names(model, s.layer);
        let v = ints(&mut arrays, path, &nv, &[s.classes, s.outputs + s.classes], CODE_MAX)?;
        let c = ints(&mut arrays, path, &nc, &[s.classes], BIAS_MAX)?;
        let u = ints(&mut arrays, path, &nu, &[s.outputs, s.classes], CODE_MAX)?;
        let sh = ints(&mut arrays, path, &ns, &[2], SHIFT_MAX.into())?;
        if let Some(i) = sh.iter().position(|&v| v < 0) {
            return Err(TensorError::value(path, &ns, vec![i], format!("is {}; s_h and s_g must be between 0 and {SHIFT_MAX}", sh[i])).into());
        }
        modules.push(s.module(v, c, u, sh[0] as i32, sh[1] as i32));
    }
    if let Some(extra) = arrays.keys().find(|k| !k.starts_with("meta/")) {
        return Err(TensorError::tensor(path, extra, "is not an array of this model's synthetic-gradient modules").into());
    }
    Ok(Sgm { modules })
}

fn ints(arrays: &mut BTreeMap<String, Array>, path: &Path, name: &str, shape: &[usize], max: i128) -> Result<Vec<i128>, Error> {
    let a = arrays.remove(name).ok_or_else(|| TensorError::tensor(path, name, "is missing from the archive"))?;
    if a.shape != shape {
        return Err(TensorError::tensor(path, name, format!("has shape {:?} but the module needs {:?}", a.shape, shape)).into());
    }
    let Values::Int(values) = a.values else {
        return Err(TensorError::tensor(path, name, format!("is {} but the modules' arrays are integer codes", a.dtype)).into());
    };
    if let Some(i) = values.iter().position(|v| v.abs() > max) {
        return Err(TensorError::value(path, name, unravel(i, shape), format!("is {}; it must be between -{max} and {max}", values[i])).into());
    }
    Ok(values)
}

/// Writes `sgm` as a new archive at `path` (never over an existing file),
/// with `meta` arrays beside the modules.
pub fn save(model: &Model, sgm: &Sgm, path: &Path, meta: &[NamedArray]) -> Result<(), Error> {
    let mut arrays = Vec::new();
    for m in &sgm.modules {
        let [nv, nc, nu, ns] = names(model, m.layer);
        let i64s = |v: &[i128]| OutValues::I64(v.iter().map(|&x| x as i64).collect());
        arrays.push(NamedArray { name: nv, shape: vec![m.classes, m.outputs + m.classes], values: i64s(&m.v) });
        arrays.push(NamedArray { name: nc, shape: vec![m.classes], values: i64s(&m.c) });
        arrays.push(NamedArray { name: nu, shape: vec![m.outputs, m.classes], values: i64s(&m.u) });
        arrays.push(NamedArray { name: ns, shape: vec![2], values: OutValues::I64(vec![m.shift_h.into(), m.shift_g.into()]) });
    }
    arrays.extend(meta.iter().cloned());
    tensor::write_npz(path, &arrays)
}

/// Seeded random modules (for tests and random designs): every code in
/// range; `s_h` drawn around the shift that brings a typical sum of
/// `N + C` products into `h`'s range (so that some `h` saturate and most
/// do not), `c` within a quarter of that range, `s_g` in `0..=10`.
pub fn random(model: &Model, seed: u64) -> Sgm {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let modules = module_shapes(model)
        .into_iter()
        .map(|s| {
            let width = s.outputs + s.classes;
            let typical = s.u_bits as i32 + 6 + (usize::BITS - width.leading_zeros()) as i32 / 2;
            let shift_h = (typical - s.h_bits as i32 + 2 + rng.random_range(-2..=2)).clamp(0, SHIFT_MAX);
            let c_max = 1i128 << (shift_h + s.h_bits as i32 - 3).clamp(0, 30);
            let mut codes = |n: usize, max: i128| (0..n).map(|_| rng.random_range(-max..=max)).collect::<Vec<i128>>();
            let v = codes(s.classes * width, CODE_MAX);
            let c = codes(s.classes, c_max);
            let u = codes(s.outputs * s.classes, CODE_MAX);
            s.module(v, c, u, shift_h, rng.random_range(0..=10))
        })
        .collect();
    Sgm { modules }
}

/// How well fitted modules reproduce the true gradients on the fitting
/// data, per module.
#[derive(Debug, Clone, PartialEq)]
pub struct FitReport {
    /// The layer's index in the model.
    pub layer: usize,
    /// Samples fitted.
    pub samples: usize,
    /// Mean over samples of the cosine between the quantized module's `g`
    /// and the true gradient (samples with a zero true gradient skipped).
    pub cosine: f64,
    /// The same for a fixed random +-1 projection of the error (DFA's `g`),
    /// for comparison.
    pub cosine_dfa: f64,
}

/// The true gradient of `sum_k e_k^2 / 2` (in output codes, `e = y - t`)
/// with respect to layer `layer`'s output, for one sample's input codes `x`
/// and activations `outs` ([`Model::forward_all`]). When the layers after
/// `layer` are a chain of dense and dense_int8 layers each fed by the one
/// before, it is backpropagated in real arithmetic through their weights
/// and activations exactly (in codes for dense_int8: `M_c w[c][i]`,
/// `M_c = s_in s_w[c] / s_out`); otherwise (a conv2d, pooling, a concat,
/// ... after it) through the graph by quantization-aware training's
/// backward pass ([`crate::qat::backward_walk`], whose straight-through
/// masks also stop the gradient at a saturated output).
pub fn true_gradient(model: &Model, params: &Params, x: &[i128], outs: &[Vec<i128>], t: &[i128], layer: usize) -> Vec<f64> {
    dense_chain_gradient(model, params, outs, t, layer).unwrap_or_else(|| graph_gradient(model, params, x, outs, t, layer))
}

fn dense_chain_gradient(model: &Model, params: &Params, outs: &[Vec<i128>], t: &[i128], layer: usize) -> Option<Vec<f64>> {
    let last = model.layers.len() - 1;
    let mut g: Vec<f64> = outs[last].iter().zip(t).map(|(&y, &t)| (y - t) as f64).collect();
    for m in (layer + 1..=last).rev() {
        let l = &model.layers[m];
        if l.inputs.as_slice() != [Source::Layer(m - 1)] || l.part_of.is_some() {
            return None;
        }
        if let LayerOp::DenseInt8(d) = &l.op {
            // In codes: y[c] ~ z_out + M_c (sum_i w[c][i] (x[i] - z_in) + b[c]),
            // M_c = s_in s_w[c] / s_out, so dy[c]/dx[i] = M_c w[c][i]; f' as
            // the feedback rules' (feedback::Derivative).
            let spec = super::feedback::int8_derivative(d);
            let scales = d.weight_scales();
            let (s_in, s_out) = (f64::from(d.input_q().scale()), f64::from(d.output_q().scale()));
            let wt = &params.layers[m].tensors[W];
            let mut prev = vec![0.0; d.inputs];
            for (o, &go) in g.iter().enumerate() {
                if go == 0.0 || !spec.holds(outs[m][o]) {
                    continue;
                }
                let mc = s_in * f64::from(scales[if scales.len() == 1 { 0 } else { o }]) / s_out;
                for (p, &w) in prev.iter_mut().zip(&wt[o * d.inputs..(o + 1) * d.inputs]) {
                    *p += w as f64 * mc * go;
                }
            }
            g = prev;
            continue;
        }
        let LayerOp::Dense(d) = &l.op else { return None };
        if d.activation == Activation::Relu {
            for (gi, &a) in g.iter_mut().zip(&outs[m]) {
                if a <= 0 {
                    *gi = 0.0;
                }
            }
        }
        let fw = d.precision.weight;
        let wt = &params.layers[m].tensors[W];
        let mut prev = vec![0.0; d.inputs];
        for (o, &go) in g.iter().enumerate() {
            if go != 0.0 {
                for (p, &w) in prev.iter_mut().zip(&wt[o * d.inputs..(o + 1) * d.inputs]) {
                    *p += fw.to_f64(w) * go;
                }
            }
        }
        g = prev;
    }
    Some(g)
}

fn graph_gradient(model: &Model, params: &Params, x: &[i128], outs: &[Vec<i128>], t: &[i128], layer: usize) -> Vec<f64> {
    let last = model.layers.len() - 1;
    let real = |f: crate::fixed::Format, c: &[i128]| -> Vec<f32> { c.iter().map(|&v| f.to_f64(v) as f32).collect() };
    let mut xs = vec![real(model.input_format, x)];
    let mut masks = Vec::with_capacity(model.layers.len());
    for (l, out) in model.layers.iter().zip(outs) {
        let k = l.kind();
        xs.push(real(k.output_format(), out));
        let (lo, hi) = if k.ste_mask() { (k.output_floor(), k.output_ceiling()) } else { (i128::MIN, i128::MAX) };
        masks.push(out.iter().map(|&c| if c <= lo { -1i8 } else if c >= hi { 1 } else { 0 }).collect::<Vec<i8>>());
    }
    let p32: Vec<Vec<Vec<f32>>> =
        crate::reference::real_params(model, params).into_iter().map(|l| l.into_iter().map(|t| t.into_iter().map(|v| v as f32).collect()).collect()).collect();
    let mut grads: Vec<Vec<Vec<f32>>> = p32.iter().map(|l| l.iter().map(|t| vec![0.0; t.len()]).collect()).collect();
    let e: Vec<f32> = outs[last].iter().zip(t).map(|(&y, &t)| (y - t) as f32).collect();
    let mut g = vec![0.0; outs[layer].len()];
    crate::qat::backward_walk(model, &xs, &p32, &masks, e, &mut grads, &mut |l, d| {
        if l == layer {
            g = d.iter().map(|&v| f64::from(v)).collect();
        }
    });
    g
}

/// The input noise levels `fptgen train --sgm` fits the modules on by
/// default, besides the clean samples, as fractions of the span of the
/// samples' real input values (`max - min` over every value): a spread of
/// drifts chosen without knowing the device's (docs/training.md,
/// "Synthetic-gradient modules"; measured on the validation images of
/// docs/results/rules.md, "Under the protocol").
pub const NOISE_SPREAD: [f64; 4] = [0.1, 0.3, 0.6, 0.9];

/// [`NOISE_SPREAD`] in real input units for the samples `d` of `model`:
/// the standard deviations of the Gaussian input noise
/// (`crate::data::noise`) of the default fit. Empty when every input value
/// is the same (no span to scale).
pub fn default_noise(model: &Model, d: &crate::data::Dataset) -> Vec<f64> {
    let f = model.input_format;
    let (lo, hi) = (0..d.len()).flat_map(|i| d.input(i).iter().copied()).fold((i128::MAX, i128::MIN), |(lo, hi), c| (lo.min(c), hi.max(c)));
    if lo >= hi {
        return Vec::new();
    }
    let span = f.to_f64(hi) - f.to_f64(lo);
    NOISE_SPREAD.iter().map(|k| k * span).collect()
}

/// Fits the modules of `model` (with parameters `params`) to the true
/// gradients ([`true_gradient`]) of the samples `(x, t)` (input and target
/// codes), by least squares in two stages, and quantizes them:
///
/// 1. `h`: ridge regression of the error `e` (output codes) on `u` and a
///    constant, which gives `v` and `c` in real numbers;
/// 2. `g`: ridge regression of the true gradient on the fitted `h` (no
///    constant), which gives `u`;
/// 3. each of `v` and `u` is scaled by the largest power of two `2^s`
///    that keeps its codes within +-127 (`s_h`, `s_g`), `c` by `s_h`, and
///    rounded to the nearest integer.
///
/// `ridge` is the regularization, relative to the mean diagonal of the
/// normal equations. Errors: no samples.
pub fn fit(model: &Model, params: &Params, samples: &[(Vec<i128>, Vec<i128>)], ridge: f64, seed: u64) -> Result<(Sgm, Vec<FitReport>), String> {
    if samples.is_empty() {
        return Err("no samples to fit the synthetic-gradient modules on".into());
    }
    let shapes = module_shapes(model);
    let outs: Vec<Vec<Vec<i128>>> = samples.iter().map(|(x, _)| model.forward_all(params, x)).collect();
    let mut modules = Vec::new();
    let mut reports = Vec::new();
    for s in shapes {
        let grads: Vec<Vec<f64>> = samples.iter().zip(&outs).map(|((x, t), o)| true_gradient(model, params, x, o, t, s.layer)).collect();
        let u = |i: usize| -> Vec<f64> {
            let (_, t) = &samples[i];
            let a = &outs[i][s.layer];
            a.iter().map(|&x| (x << s.shift_a) as f64).chain(t.iter().map(|&x| (x << s.shift_t) as f64)).chain([1.0]).collect()
        };
        let last = model.layers.len() - 1;
        let errs: Vec<Vec<f64>> =
            samples.iter().zip(&outs).map(|((_, t), o)| o[last].iter().zip(t).map(|(&y, &t)| (y - t) as f64).collect()).collect();
        // Stage 1: e ~ V u + c.
        let d = s.outputs + s.classes + 1;
        let beta = least_squares((0..samples.len()).map(u), &errs, d, s.classes, ridge);
        let h: Vec<Vec<f64>> = (0..samples.len())
            .map(|i| {
                let ui = u(i);
                (0..s.classes).map(|k| (0..d).map(|j| beta[j * s.classes + k] * ui[j]).sum()).collect()
            })
            .collect();
        // Stage 2: g ~ U h.
        let gamma = least_squares(h.iter().cloned(), &grads, s.classes, s.outputs, ridge);
        // Quantize: v[k][i] = beta[i][k], u[o][k] = gamma[k][o].
        let vr: Vec<f64> = (0..s.classes).flat_map(|k| (0..d - 1).map(move |i| (i, k))).map(|(i, k)| beta[i * s.classes + k]).collect();
        let cr: Vec<f64> = (0..s.classes).map(|k| beta[(d - 1) * s.classes + k]).collect();
        let ur: Vec<f64> = (0..s.outputs).flat_map(|o| (0..s.classes).map(move |k| (o, k))).map(|(o, k)| gamma[k * s.outputs + o]).collect();
        let shift_h = po2_scale(&vr);
        let shift_g = po2_scale(&ur);
        let q = |x: f64, k: i32, max: i128| ((x * 2f64.powi(k)).round() as i128).clamp(-max, max);
        let module = s.module(
            vr.iter().map(|&x| q(x, shift_h, CODE_MAX)).collect(),
            cr.iter().map(|&x| q(x, shift_h, BIAS_MAX)).collect(),
            ur.iter().map(|&x| q(x, shift_g, CODE_MAX)).collect(),
            shift_h,
            shift_g,
        );
        // How well the quantized module and a random projection do.
        let b = super::feedback::feedback_matrix(seed, s.layer, s.outputs, s.classes);
        let (mut cos, mut cos_dfa, mut n) = (0.0, 0.0, 0usize);
        for i in 0..samples.len() {
            let (_, t) = &samples[i];
            let g = module.gradient(&module.hidden(&outs[i][s.layer], t));
            let dfa: Vec<f64> = (0..s.outputs).map(|o| (0..s.classes).map(|k| f64::from(b[o * s.classes + k]) * errs[i][k]).sum()).collect();
            let truth = &grads[i];
            if truth.iter().all(|&x| x == 0.0) {
                continue;
            }
            cos += cosine(&g.iter().map(|&x| x as f64).collect::<Vec<_>>(), truth);
            cos_dfa += cosine(&dfa, truth);
            n += 1;
        }
        let n_f = n.max(1) as f64;
        reports.push(FitReport { layer: s.layer, samples: samples.len(), cosine: cos / n_f, cosine_dfa: cos_dfa / n_f });
        modules.push(module);
    }
    Ok((Sgm { modules }, reports))
}

/// The largest `s` in `0..=31` with `max |x| * 2^s <= 127` (0 for all
/// zeros, and when even `s = 0` does not fit: the codes then saturate).
fn po2_scale(x: &[f64]) -> i32 {
    let m = x.iter().fold(0.0f64, |m, &v| m.max(v.abs()));
    if m == 0.0 {
        return 0;
    }
    ((CODE_MAX as f64 / m).log2().floor() as i32).clamp(0, SHIFT_MAX)
}

fn cosine(a: &[f64], b: &[f64]) -> f64 {
    let dot: f64 = a.iter().zip(b).map(|(x, y)| x * y).sum();
    let na: f64 = a.iter().map(|x| x * x).sum::<f64>().sqrt();
    let nb: f64 = b.iter().map(|x| x * x).sum::<f64>().sqrt();
    if na == 0.0 || nb == 0.0 {
        0.0
    } else {
        dot / (na * nb)
    }
}

/// Ridge least squares: `beta` (`d x k`, row-major) minimizing
/// `sum_i |y_i - beta^T x_i|^2 + lambda |beta|^2`, `lambda` = `ridge`
/// times the mean diagonal of `X^T X`, by Cholesky on the normal equations.
fn least_squares(xs: impl Iterator<Item = Vec<f64>>, ys: &[Vec<f64>], d: usize, k: usize, ridge: f64) -> Vec<f64> {
    let mut a = vec![0.0; d * d];
    let mut b = vec![0.0; d * k];
    for (x, y) in xs.zip(ys) {
        for i in 0..d {
            if x[i] == 0.0 {
                continue;
            }
            for j in i..d {
                a[i * d + j] += x[i] * x[j];
            }
            for (c, &yc) in y.iter().enumerate() {
                b[i * k + c] += x[i] * yc;
            }
        }
    }
    for i in 0..d {
        for j in 0..i {
            a[i * d + j] = a[j * d + i];
        }
    }
    let mean_diag = (0..d).map(|i| a[i * d + i]).sum::<f64>() / d as f64;
    let lambda = ridge * mean_diag.max(1e-12);
    for i in 0..d {
        a[i * d + i] += lambda;
    }
    // Cholesky: a = L L^T.
    let mut l = vec![0.0; d * d];
    for i in 0..d {
        for j in 0..=i {
            let s: f64 = a[i * d + j] - (0..j).map(|p| l[i * d + p] * l[j * d + p]).sum::<f64>();
            l[i * d + j] = if i == j { s.max(1e-300).sqrt() } else { s / l[j * d + j] };
        }
    }
    let mut beta = vec![0.0; d * k];
    for c in 0..k {
        let mut z = vec![0.0; d];
        for i in 0..d {
            z[i] = (b[i * k + c] - (0..i).map(|p| l[i * d + p] * z[p]).sum::<f64>()) / l[i * d + i];
        }
        for i in (0..d).rev() {
            beta[i * k + c] = (z[i] - (i + 1..d).map(|p| l[p * d + i] * beta[p * k + c]).sum::<f64>()) / l[i * d + i];
        }
    }
    beta
}
