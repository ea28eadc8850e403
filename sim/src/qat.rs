//! Quantization-aware training on the host (`fptgen train`): the trained
//! network that on-device ES training starts from.
//!
//! Float master copies of every weight and bias are what the optimizer
//! moves. Every step quantizes them to their formats (each format's own
//! quantization and overflow modes) and runs the forward pass exactly as
//! the hardware does (each layer kind's exact forward pass), so the
//! loss is the loss of the network that will be deployed. The backward pass
//! is in `f32` with the straight-through estimator: a quantizer passes the
//! gradient unchanged, except where its output sits at a bound of its
//! format (saturated, or zero after a ReLU), where it passes none; at the
//! network's output, a gradient that points back inside the format passes
//! (so a saturated output can still learn). The
//! gradient with respect to a layer's input uses the quantized weights (each
//! kind's `LayerKind::backward`);
//! the gradient reaches the master weights unchanged, and the masters are
//! kept within their formats' ranges. Adam (beta 0.9 / 0.999, eps 1e-8)
//! with a cosine-decayed step size.
//!
//! Everything is seeded: initialization and each epoch's shuffle come from
//! ChaCha8 streams of the seed, and a batch's gradient is summed over
//! fixed chunks of samples in a fixed order, so the result does not depend
//! on the number of threads.
//!
//! [`distill`]: block-wise distillation (seed 004), the same training on
//! one block of layers against a teacher's outputs.

pub mod distill;

use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;

use crate::data::Dataset;
use crate::fixed::Format;
use crate::layers::{Backward, TensorSpec};
use crate::model::{Model, Source};
use crate::network::{Network, SimError};
use crate::weights::{LayerParams, Params};

/// The loss that host training minimizes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Loss {
    /// Mean absolute error against one-hot targets (1.0 for the label's
    /// output, 0.0 elsewhere, in the output format): the loss ES minimizes
    /// on the device (`docs/training.md`).
    Mae,
    /// Mean squared error against the same one-hot targets: the same
    /// minimum as `Mae` where the targets can be met, but a gradient that
    /// shrinks near it (plain `Mae` drives every output to 0 from a random
    /// start, the median of one-hot targets).
    Mse,
    /// Softmax cross-entropy of the outputs (read as logits).
    CrossEntropy,
}

/// Host-training settings.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct QatConfig {
    /// Samples per optimizer step.
    pub batch: usize,
    /// Adam's initial step size (decayed by a cosine to 0 over `total_epochs`).
    pub lr: f32,
    /// Epochs of the whole run (for the decay).
    pub total_epochs: usize,
    /// Seeds initialization and shuffling.
    pub seed: u64,
    /// The loss.
    pub loss: Loss,
}

/// Samples per gradient chunk: the unit of parallel work, summed in order.
const CHUNK: usize = 8;

/// One tensor's float masters (values of its format), with Adam's moments,
/// the range they are kept in (the tensor's `range`) and, for a kind whose
/// format's value is not the real value (int8), each parameter's step
/// factor `1 / scale` ([`crate::layers::LayerKind::param_scales`]).
#[derive(Debug, Clone)]
struct Master {
    value: Vec<f32>,
    m: Vec<f32>,
    v: Vec<f32>,
    format: Format,
    lo: f32,
    hi: f32,
    step: Option<Vec<f32>>,
}

impl Master {
    fn new(value: Vec<f32>, t: &TensorSpec, scales: Option<Vec<f32>>) -> Master {
        let n = value.len();
        let lo = t.format.to_f64(t.range.0) as f32;
        let hi = t.format.to_f64(t.range.1) as f32;
        let step = scales.map(|s| s.iter().map(|&x| 1.0 / x).collect());
        Master { value, m: vec![0.0; n], v: vec![0.0; n], format: t.format, lo, hi, step }
    }

    /// Raw codes of the masters, and their exact values.
    fn quantize(&self) -> (Vec<i128>, Vec<f32>) {
        let codes: Vec<i128> = self
            .value
            .iter()
            .map(|&x| self.format.quantize_f64(f64::from(x)).unwrap_or(0))
            .collect();
        let real = codes.iter().map(|&c| self.format.to_f64(c) as f32).collect();
        (codes, real)
    }

    fn adam(&mut self, grad: &[f32], lr: f32, t: i32) {
        const B1: f32 = 0.9;
        const B2: f32 = 0.999;
        let c1 = 1.0 - B1.powi(t);
        let c2 = 1.0 - B2.powi(t);
        for (i, (((x, m), v), &g)) in self.value.iter_mut().zip(&mut self.m).zip(&mut self.v).zip(grad).enumerate() {
            *m = B1 * *m + (1.0 - B1) * g;
            *v = B2 * *v + (1.0 - B2) * g * g;
            let factor = self.step.as_ref().map_or(1.0, |s| s[i]);
            let step = lr * factor * (*m / c1) / ((*v / c2).sqrt() + 1e-8);
            *x = (*x - step).clamp(self.lo, self.hi);
        }
    }
}

/// The quantized network of one step: codes for the simulator and their
/// real values for the backward pass (per layer, per tensor).
struct Quantized {
    params: Params,
    real: Vec<Vec<Vec<f32>>>,
}

/// Gradients of one chunk of samples: per layer, per tensor.
struct Grad {
    grads: Vec<Vec<Vec<f32>>>,
    loss: f64,
}

/// Quantization-aware training of a network.
#[derive(Debug, Clone)]
pub struct Qat {
    model: Model,
    config: QatConfig,
    /// Per layer, per tensor.
    masters: Vec<Vec<Master>>,
    /// Per layer, per tensor: never moved (a lowered layer's constants, or
    /// a tensor that is not trainable in a run from [`Qat::from_params`]
    /// with `trainable_only`).
    frozen: Vec<Vec<bool>>,
    steps: i32,
    epochs: usize,
}

impl Qat {
    /// Starts from seeded random masters, each kind's choice
    /// (`LayerKind::init_masters`; a dense layer: weights uniform in `±a`
    /// with `a = max(sqrt(6 / fan_in), 2 steps of the weight format)`, so
    /// the quantized network is not all zeros, biases zero), within the
    /// formats' ranges.
    pub fn new(model: Model, config: QatConfig) -> Qat {
        let mut rng = ChaCha8Rng::seed_from_u64(config.seed);
        let mut masters = Vec::new();
        for l in &model.layers {
            let k = l.kind();
            let values = match &l.lowered {
                // A lowered layer's constants: exact, and never updated.
                Some(c) => k.tensors().iter().zip(&c.params.tensors).map(|(t, v)| v.iter().map(|&r| t.format.to_f64(r) as f32).collect()).collect(),
                None => k.init_masters(&mut |a| rng.random_range(-a..=a)),
            };
            let tensors = k
                .tensors()
                .iter()
                .zip(values)
                .enumerate()
                .map(|(i, (t, v))| {
                    let mut m = Master::new(v, t, k.param_scales(i));
                    let (lo, hi) = (m.lo, m.hi);
                    m.value.iter_mut().for_each(|x| *x = x.clamp(lo, hi));
                    m
                })
                .collect();
            masters.push(tensors);
        }
        let frozen = model.layers.iter().map(|l| (0..l.kind().tensors().len()).map(|i| l.is_constant(i)).collect()).collect();
        Qat { model, config, masters, frozen, steps: 0, epochs: 0 }
    }

    /// Starts from `params` (the masters are the codes' exact values) and,
    /// with `trainable_only`, moves only the tensors the model marks
    /// trainable: backpropagation on the host restricted to the subset the
    /// device retrains (docs/results/rules.md's ceiling).
    pub fn from_params(model: Model, params: &Params, config: QatConfig, trainable_only: bool) -> Qat {
        let mut q = Qat::new(model, config);
        for ((masters, frozen), (layer, p)) in q.masters.iter_mut().zip(&mut q.frozen).zip(q.model.layers.iter().zip(&params.layers)) {
            let specs = layer.kind().tensors();
            for (i, (m, codes)) in masters.iter_mut().zip(&p.tensors).enumerate() {
                m.value = codes.iter().map(|&c| m.format.to_f64(c) as f32).collect();
                if trainable_only && !specs[i].trainable {
                    frozen[i] = true;
                }
            }
        }
        q
    }

    /// The model being trained.
    pub fn model(&self) -> &Model {
        &self.model
    }

    /// Epochs run so far.
    pub fn epochs(&self) -> usize {
        self.epochs
    }

    /// The current quantized parameters (what the weights archive holds).
    pub fn params(&self) -> Params {
        self.quantized().params
    }

    /// The current quantized network.
    pub fn network(&self) -> Result<Network, SimError> {
        Network::new(self.model.clone(), self.params())
    }

    fn quantized(&self) -> Quantized {
        let mut layers = Vec::new();
        let mut real = Vec::new();
        for masters in &self.masters {
            let (codes, values): (Vec<Vec<i128>>, Vec<Vec<f32>>) = masters.iter().map(Master::quantize).unzip();
            layers.push(LayerParams { tensors: codes });
            real.push(values);
        }
        Quantized { params: Params { layers }, real }
    }

    /// One epoch over `data` in a seeded random order; `progress` is called
    /// after every step with the number of samples done. Returns the mean
    /// training loss per sample (MAE: per output, in real units).
    pub fn epoch(&mut self, data: &Dataset, progress: &mut dyn FnMut(usize)) -> f64 {
        let mut order: Vec<usize> = (0..data.len()).collect();
        let mut rng = ChaCha8Rng::seed_from_u64(self.config.seed ^ 0x5EED_0000_0000_0000u64.wrapping_add(self.epochs as u64));
        order.shuffle(&mut rng);
        let batch = self.config.batch.max(1);
        let total_steps = (data.len().div_ceil(batch) * self.config.total_epochs.max(1)) as f32;
        let mut loss = 0.0;
        for (k, idx) in order.chunks(batch).enumerate() {
            let q = self.quantized();
            let chunks: Vec<Grad> = idx.par_chunks(CHUNK).map(|c| self.gradient(&q, data, c)).collect();
            let mut total = chunks.into_iter().reduce(|mut a, b| {
                for (x, y) in a.grads.iter_mut().zip(&b.grads) {
                    add_into(x, y);
                }
                a.loss += b.loss;
                a
            });
            let Some(g) = total.as_mut() else { continue };
            loss += g.loss;
            let scale = 1.0 / idx.len() as f32;
            self.steps += 1;
            let lr = self.config.lr * 0.5 * (1.0 + (std::f32::consts::PI * self.steps as f32 / total_steps).min(std::f32::consts::PI).cos());
            for ((masters, grads), frozen) in self.masters.iter_mut().zip(&g.grads).zip(&self.frozen) {
                for (i, (m, grad)) in masters.iter_mut().zip(grads).enumerate() {
                    if frozen[i] {
                        continue;
                    }
                    let grad: Vec<f32> = grad.iter().map(|x| x * scale).collect();
                    m.adam(&grad, lr, self.steps);
                }
            }
            progress((k * batch + idx.len()).min(data.len()));
        }
        self.epochs += 1;
        loss / data.len().max(1) as f64
    }

    /// Forward (exact) and backward (straight-through) for a few samples.
    fn gradient(&self, q: &Quantized, data: &Dataset, samples: &[usize]) -> Grad {
        let layers = &self.model.layers;
        let mut g = Grad {
            grads: layers.iter().map(|l| l.kind().tensors().iter().map(|t| vec![0.0; t.len()]).collect()).collect(),
            loss: 0.0,
        };
        // The loss sees the output's real values: an int8 output's code `q`
        // is `(q - z) * s` (`LayerKind::output_real`), so its gradient
        // with respect to the code is `s` times the real one.
        let last = layers.last().map(|l| l.kind());
        let out_format = self.model.output_format();
        let real = |q: i128| last.map_or_else(|| out_format.to_f64(q), |k| k.output_real(q)) as f32;
        let unit = last.and_then(|k| k.output_quantization()).map_or(1.0, |q| q.scale());
        // The one-hot targets' values: 1 for the label's output and 0 for
        // the others, as the output quantizes them, for `Mae` and `Mse`.
        let target_code = |v: f64| match last.and_then(|k| k.output_quantization()) {
            Some(q) => ((v / f64::from(q.scale())).round() as i128 + i128::from(q.zero_point())).clamp(-128, 127),
            None => out_format.quantize_f64(v).unwrap_or(0),
        };
        let [t_hi, t_lo] = [1.0, 0.0].map(|v| real(target_code(v)));
        let target = |is_label: bool| if is_label { t_hi } else { t_lo };
        for &s in samples {
            // Forward: every layer's output codes and real values (index 0:
            // the network input), and each output's straight-through mask.
            let mut xs: Vec<Vec<f32>> = Vec::with_capacity(layers.len() + 1);
            let mut codes: Vec<Vec<i128>> = Vec::with_capacity(layers.len() + 1);
            // Per output: 0 inside the format, -1 at its lower bound (or 0
            // after a ReLU), +1 at its upper bound.
            let mut masks: Vec<Vec<i8>> = Vec::with_capacity(layers.len());
            let fmt = self.model.input_format;
            codes.push(data.input(s).to_vec());
            xs.push(codes[0].iter().map(|&c| fmt.to_f64(c) as f32).collect());
            for (l, layer) in layers.iter().enumerate() {
                let k = layer.kind();
                let y = {
                    let x = self.model.layer_input(l, |src| &codes[slot(src)]);
                    k.forward(layer.input_format, &q.params.layers[l], &x)
                };
                let of = k.output_format();
                let lo = if k.ste_mask() { k.output_floor() } else { i128::MIN };
                let hi = if k.ste_mask() { k.output_ceiling() } else { i128::MAX };
                masks.push(y.iter().map(|&c| if c <= lo { -1 } else if c >= hi { 1 } else { 0 }).collect());
                xs.push(y.iter().map(|&c| of.to_f64(c) as f32).collect());
                codes.push(y);
            }
            // Loss gradient at the output, in real units.
            let y: Vec<f32> = codes[layers.len()].iter().map(|&q| real(q)).collect();
            let y = &y;
            let label = data.label(s);
            let delta: Vec<f32> = match self.config.loss {
                Loss::Mse => {
                    let n = y.len() as f32;
                    y.iter()
                        .enumerate()
                        .map(|(o, &v)| {
                            let t = target(o == label);
                            g.loss += f64::from((v - t) * (v - t) / n);
                            2.0 * (v - t) / n
                        })
                        .collect()
                }
                Loss::Mae => {
                    let n = y.len() as f32;
                    y.iter()
                        .enumerate()
                        .map(|(o, &v)| {
                            let t = target(o == label);
                            g.loss += f64::from((v - t).abs() / n);
                            if v > t {
                                1.0 / n
                            } else if v < t {
                                -1.0 / n
                            } else {
                                0.0
                            }
                        })
                        .collect()
                }
                Loss::CrossEntropy => {
                    let mx = y.iter().cloned().fold(f32::NEG_INFINITY, f32::max);
                    let e: Vec<f32> = y.iter().map(|&v| (v - mx).exp()).collect();
                    let z: f32 = e.iter().sum();
                    g.loss -= f64::from((e[label] / z).max(1e-30).ln());
                    e.iter().enumerate().map(|(o, &v)| v / z - if o == label { 1.0 } else { 0.0 }).collect()
                }
            };
            // Per code of the output (1 for an `ap_fixed` output).
            let delta = delta.into_iter().map(|d| d * unit).collect();
            backward_graph(&self.model, &xs, &q.real, &masks, delta, &mut g.grads);
        }
        g
    }
}

/// Quantization-aware training's backward pass through the model's graph:
/// adds every parameter's gradient into `grads` (per layer, per tensor).
///
/// `xs` holds the real values of the forward pass (index 0 the network
/// input, `l + 1` layer `l`'s output), `params` the quantized parameters'
/// real values, `masks` each output's straight-through mask (0 inside its
/// format, -1 at its lower bound, +1 at its upper bound), `delta` the loss
/// gradient with respect to the network's output. Layers run in reverse
/// order; a layer gets its gathered input's gradient back from its kind's
/// backward pass and each input gets its part
/// ([`crate::model::Gather::part`]); a layer output read by several layers
/// gets the sum of their gradients. A mask stops the gradient where its
/// output sits at a bound, except at the network's output where a gradient
/// pointing back inside the format passes.
pub fn backward_graph(model: &Model, xs: &[Vec<f32>], params: &[Vec<Vec<f32>>], masks: &[Vec<i8>], delta: Vec<f32>, grads: &mut [Vec<Vec<f32>>]) {
    backward_walk(model, xs, params, masks, delta, grads, &mut |_, _| {});
}

/// [`backward_graph`]'s pass, also handing `seen` each layer's gradient
/// with respect to its output before its own mask (layers in reverse
/// order; a layer no gradient reaches gets zeros).
pub fn backward_walk(
    model: &Model,
    xs: &[Vec<f32>],
    params: &[Vec<Vec<f32>>],
    masks: &[Vec<i8>],
    delta: Vec<f32>,
    grads: &mut [Vec<Vec<f32>>],
    seen: &mut dyn FnMut(usize, &[f32]),
) {
    let layers = &model.layers;
    // `deltas[l]` is empty until a reader of layer `l` passes a gradient.
    let mut deltas: Vec<Vec<f32>> = vec![Vec::new(); layers.len()];
    if let Some(d) = deltas.last_mut() {
        *d = delta;
    }
    for l in (0..layers.len()).rev() {
        let last = l + 1 == layers.len();
        let mut delta = std::mem::take(&mut deltas[l]);
        if delta.is_empty() {
            delta = vec![0.0; xs[l + 1].len()];
        }
        seen(l, &delta);
        for (dl, &bound) in delta.iter_mut().zip(&masks[l]) {
            // The loss sees the network's output itself: there a
            // gradient that points back inside the format passes
            // (a saturated logit can still come down).
            let inward = last && ((bound > 0 && *dl > 0.0) || (bound < 0 && *dl < 0.0));
            if bound != 0 && !inward {
                *dl = 0.0;
            }
        }
        let layer = &layers[l];
        let want_input = layer.inputs.iter().any(|src| matches!(src, Source::Layer(_)));
        let dx = {
            let x = model.layer_input(l, |src| &xs[slot(src)]);
            layer.kind().backward(Backward { x: &x, params: &params[l], delta: &delta, grads: &mut grads[l], want_input })
        };
        if !want_input {
            continue;
        }
        let parts: Vec<Vec<f32>> = match layer.inputs.len() {
            1 => vec![dx],
            n => (0..n).map(|k| layer.gather.part(&dx, k)).collect(),
        };
        for (src, part) in layer.inputs.iter().zip(parts) {
            let Source::Layer(j) = *src else { continue };
            if deltas[j].is_empty() {
                deltas[j] = part;
            } else {
                for (a, b) in deltas[j].iter_mut().zip(&part) {
                    *a += b;
                }
            }
        }
    }
}

/// Where a source's values sit in the forward pass's vectors (index 0 the
/// network input, `l + 1` layer `l`'s output).
fn slot(src: Source) -> usize {
    match src {
        Source::Input => 0,
        Source::Layer(j) => j + 1,
    }
}

fn add_into(a: &mut [Vec<f32>], b: &[Vec<f32>]) {
    for (x, y) in a.iter_mut().zip(b) {
        for (p, q) in x.iter_mut().zip(y) {
            *p += q;
        }
    }
}

/// Correct predictions of `net` on `data`: the argmax of the raw outputs (a
/// tie goes to the lowest index) against the label. Runs in parallel.
pub fn accuracy(net: &Network, data: &Dataset) -> Result<usize, SimError> {
    // Batched (`Network::infer_batch`), a few thousand samples at a time.
    let mut right = 0;
    for start in (0..data.len()).step_by(4096) {
        let end = (start + 4096).min(data.len());
        let inputs: Vec<Vec<i128>> = (start..end).map(|i| data.input(i).to_vec()).collect();
        let outs = net.infer_batch(&inputs)?;
        right += outs.iter().zip(start..end).filter(|(y, i)| argmax(y) == Some(data.label(*i))).count();
    }
    Ok(right)
}

/// Index of the first largest value.
pub fn argmax(y: &[i128]) -> Option<usize> {
    let mut best: Option<(usize, i128)> = None;
    for (i, &v) in y.iter().enumerate() {
        if best.is_none_or(|(_, b)| v > b) {
            best = Some((i, v));
        }
    }
    best.map(|(i, _)| i)
}
