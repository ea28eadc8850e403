//! The forward-only feedback rules, `training: rule: drtp`, `dfa` and `sgm`
//! (seed 002; `docs/training.md`, "Feedback rules"), on raw codes with
//! integer arithmetic only: the simulator's definition of what the device
//! does, one buffered sample at a time.
//!
//! For a sample, the network runs forward once with the current
//! parameters. With `y` the output codes and `t` the target codes, the
//! output error is `e_k = y_k - t_k` and the target class `k*` the first
//! index of the largest `t_k`. Each trainable (dense or dense_int8) layer `l`, with input
//! codes `x` and output codes `a`, then gets a delta per output `o`:
//!
//! ```text
//! g[o]     = e[o]                                  (l the output layer)
//!          = sum_k B_l[o][k] * e[k]                (dfa, a hidden layer)
//!          = -B_l[o][k*]                           (drtp, a hidden layer)
//!          = S_l(a, t)[o]                          (sgm, a hidden layer: its module, super::sgm)
//! delta[o] = g[o] if f'(o) else 0                  (relu: f'(o) = a[o] > 0; linear: always)
//! ```
//!
//! `B_l` is a fixed matrix of +-1 ([`feedback_matrix`]): never stored in the
//! hardware, regenerated from an LFSR. DRTP is DFA with the error replaced
//! by the part of it known before the output is: `-onehot(k*)` (Frenkel,
//! Lefebvre and Bol, 2021). Every delta comes from the same forward pass;
//! then every trainable tensor of every trainable layer is updated, with
//! `s = lr_shift`, `F_x`, `F_w`, `F_b` the fraction bits of the layer's
//! input, weight and bias formats and `R(v, k)` = `v / 2^k` rounded to
//! nearest, ties to even (`v * 2^-k` for `k < 0`):
//!
//! ```text
//! w[o][i] <- clamp(w[o][i] - R(delta[o] * x[i], s + F_x - F_w))
//! b[o]    <- clamp(b[o]    - R(delta[o],        s - F_b))
//! ```
//!
//! that is `w -= 2^-s * delta * x` and `b -= 2^-s * delta` in real units of
//! the weights and inputs (the delta in output codes), clamped to the
//! tensor's range ([`crate::layers::TensorSpec::range`]). The samples of
//! the buffer run in order, `iterations` times.
//!
//! A conv2d layer is a dense one over each output pixel's window (its
//! `mvau`): with `P` output pixels, `F` filters and `win_p[j]` the input
//! code at window position `j` of pixel `p` (0 in the padding), its deltas
//! `delta[p * F + f]` (pixel-major, the order of its outputs) give
//!
//! ```text
//! w[f][j] <- clamp(w[f][j] - R(sum_p delta[p*F + f] * win_p[j], s + F_x - F_w + q))
//! b[f]    <- clamp(b[f]    - R(sum_p delta[p*F + f],            s - F_b + q))
//! ```
//!
//! with `q = ceil(log2(P))`: the mean over the pixels rather than the sum,
//! so that a step has the size of a dense layer's. Each sum is exact and
//! rounded once; a filter none of whose deltas is nonzero is left alone
//! (for `P = 1` this is the dense rule).
//!
//! A `dense_int8` layer (`docs/training.md`, "dense_int8 layers") has
//! `f'(o)` from its output code clamp (`relu`: `a[o] > act_min`; `relu6`:
//! `act_min < a[o] < act_max`), uses `x[i] - z_x` for `x[i]`, and the shifts
//! `s - round(log2(s_x / s_w))` and `s + round(log2(s_x * s_w))` (`s_w` the
//! largest weight scale), [`Derivative`] and [`FeedbackLayer::x_offset`].

use crate::model::{LayerOp, Model, Rule, Training};
use crate::network::Network;
use crate::weights::Params;
use crate::layers::dense::{B, W};
use crate::layers::dense_int8::Int8Activation;
use crate::layers::Activation;

use super::eval::{naive_loss, Buffer};
use super::lfsr::{block_seed, splitmix64, Lfsr};
use super::TrainError;
use crate::model::LfsrWidth;

/// Mixed into the training seed for the feedback matrices, so that they
/// are not the ES blocks' LFSR streams.
const FEEDBACK_TAG: u64 = 0xFEED_BAC4_0000_0002;
/// Separates the rounding LFSRs' seeds from every other LFSR's.
const ROUND_TAG: u64 = 0x5EED_0F5E_0000_0003;

/// The initial state of trainable layer `layer`'s feedback LFSR (32 bits):
/// block `layer` of the seed `splitmix64(seed ^ FEEDBACK_TAG)`.
pub fn feedback_seed(seed: u64, layer: usize) -> u64 {
    block_seed(splitmix64(seed ^ FEEDBACK_TAG), layer, LfsrWidth::W32)
}

/// `B_l` of trainable layer `layer` (its index in the model): `outputs`
/// rows of `classes` signs, row-major, the bits of one 32-bit LFSR
/// (`docs/training.md`, "Noise") started at [`feedback_seed`], read in
/// order: entry `(o, k)` is `+1` if output bit `o * classes + k` is 1, else
/// `-1`.
pub fn feedback_matrix(seed: u64, layer: usize, outputs: usize, classes: usize) -> Vec<i8> {
    let mut lfsr = Lfsr::new(LfsrWidth::W32, feedback_seed(seed, layer)).expect("a block seed is nonzero");
    (0..outputs * classes).map(|_| if lfsr.step() { 1 } else { -1 }).collect()
}

/// The feedback rules' `lr_shift` when the model gives none (`auto`):
/// `16 + F_y`, `F_y` the fraction bits of the network's output format,
/// clamped to `[-31, 31]`. A delta is in output codes, `e * 2^F_y` for a
/// real error `e`, so the real step is `2^-(lr_shift - F_y) * e * x`: auto
/// makes it `2^-16 * e * x` whatever the output format. 2^-16 is measured
/// (`docs/results/rules.md`, "Automatic step"): the best of the steps tried
/// on the MNIST MLP's last layer at M = 64 and M = 1,024, and within 3
/// points of the best on the MNIST CNN's.
pub fn auto_lr_shift(output: crate::fixed::Format) -> i32 {
    auto_lr_shift_frac(output.frac_bits())
}

/// [`auto_lr_shift`] from `F_y` itself: `clamp(16 + F_y, -31, 31)`. For an
/// int8 output layer `F_y` is `-round(log2(s_y))`, `s_y` its output scale
/// ([`super::steps::StepBasis::feedback_output_frac`]): a delta of one
/// output code is then about `2^-F_y` real, as for a fixed-point output.
pub fn auto_lr_shift_frac(f_y: i32) -> i32 {
    (16 + f_y).clamp(-31, 31)
}

/// The initial state of the rounding LFSR (32 bits) of tensor `tensor`
/// (0 weights, 1 biases) of trainable layer `layer` when its steps round
/// stochastically: block `2 * layer + tensor` of the seed
/// `splitmix64(seed ^ ROUND_TAG)`.
pub fn round_seed(seed: u64, layer: usize, tensor: usize) -> u64 {
    block_seed(splitmix64(seed ^ ROUND_TAG), 2 * layer + tensor, LfsrWidth::W32)
}

/// `R_s(v, k)`, a stochastic step for `k > 0` (`docs/training.md`,
/// "Stochastic rounding"): `floor((v + r) / 2^k)`, where `r` is `b =
/// min(k, 32)` fresh output bits of `lfsr` (the first in the least
/// significant position, as ES's noise takes them) shifted left by `k - b`.
/// Since `r` is uniform on multiples of `2^(k-b)` below `2^k`, the
/// expected step is `v / 2^k` (exactly for `k <= 32`). `R(v, k)` for
/// `k <= 0`, without a draw.
pub fn stochastic_shift(v: i128, k: i32, lfsr: &mut Lfsr) -> i128 {
    if k <= 0 {
        return round_shift(v, k);
    }
    let k = k.min(126) as u32;
    let b = k.min(32);
    let r = (0..b).fold(0i128, |r, i| r | (i128::from(lfsr.step()) << i)) << (k - b);
    v.saturating_add(r) >> k
}

/// `R(v, k)`: `v / 2^k` rounded to the nearest integer, ties to even;
/// `v * 2^-k` (saturating) for `k < 0`.
pub fn round_shift(v: i128, k: i32) -> i128 {
    if k <= 0 {
        let k = k.unsigned_abs().min(127);
        return v.checked_mul(1i128.checked_shl(k).unwrap_or(i128::MAX)).unwrap_or(if v < 0 { i128::MIN } else { i128::MAX });
    }
    let k = k.min(126) as u32;
    let q = v >> k;
    let dropped = v - (q << k);
    let half = 1i128 << (k - 1);
    let up = dropped > half || (dropped == half && q & 1 == 1);
    q + i128::from(up)
}

/// What one sample's step did: enough to check a device against.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SampleRecord {
    /// Iteration number, from 0.
    pub iteration: u64,
    /// The sample's index in the buffer.
    pub sample: usize,
    /// Per trainable layer (model index), its deltas.
    pub deltas: Vec<(usize, Vec<i128>)>,
    /// `rule: sgm`: per hidden trainable layer (model index), its
    /// module's `h` ([`super::sgm::SgmModule::hidden`]); empty otherwise.
    pub hidden: Vec<(usize, Vec<i128>)>,
    /// Parameters whose value changed.
    pub changed: usize,
}

/// Where a trainable layer's `g` comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Feedback {
    /// The network's output layer: `g = e`.
    Error,
    /// `dfa` on a hidden layer: `g = B e`.
    Dfa,
    /// `drtp` on a hidden layer: `g = -B[:, k*]`.
    Drtp,
    /// `sgm` on a hidden layer: `g` from the layer's synthetic-gradient
    /// module ([`super::sgm`]).
    Sgm,
}

/// `f'(o)` of a trainable layer, a test of its output code `a[o]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Derivative {
    /// Linear: always 1.
    Always,
    /// `a[o] > lo` (dense relu: 0; dense_int8 relu: `act_min`).
    Above(i128),
    /// `lo < a[o] < hi` (dense_int8 relu6: `act_min`, `act_max`).
    Between(i128, i128),
}

impl Derivative {
    /// Whether `f'` is 1 at output code `a`.
    pub fn holds(self, a: i128) -> bool {
        match self {
            Derivative::Always => true,
            Derivative::Above(lo) => a > lo,
            Derivative::Between(lo, hi) => lo < a && a < hi,
        }
    }

    /// [`Derivative::holds`] on a real output (in codes' units).
    pub fn holds_real(self, a: f64) -> bool {
        match self {
            Derivative::Always => true,
            Derivative::Above(lo) => a > lo as f64,
            Derivative::Between(lo, hi) => (lo as f64) < a && a < hi as f64,
        }
    }
}

/// `f'` of a dense_int8 layer: from its output code clamp
/// ([`Int8Activation::range`]): linear always, relu `a > act_min`, relu6
/// `act_min < a < act_max`.
pub fn int8_derivative(d: &crate::layers::dense_int8::DenseInt8) -> Derivative {
    let (lo, hi) = d.activation_range();
    match d.activation {
        Int8Activation::Linear => Derivative::Always,
        Int8Activation::Relu => Derivative::Above(lo.into()),
        Int8Activation::Relu6 => Derivative::Between(lo.into(), hi.into()),
    }
}

/// `round(log2(v))`, halves away from zero: the dense_int8 layer's
/// power-of-two scale exponents.
fn log2_round(v: f64) -> i32 {
    v.log2().round() as i32
}

/// One trainable layer of a feedback rule: everything the device needs to
/// know about it besides its parameters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FeedbackLayer {
    /// Its index in the model.
    pub layer: usize,
    /// Inputs of a row of the weight matrix (a conv2d layer's window).
    pub inputs: usize,
    /// Outputs, one delta each: `pixels * rows`, pixel-major.
    pub outputs: usize,
    /// Rows of the weight matrix (dense outputs, conv2d filters).
    pub rows: usize,
    /// Output pixels: 1 for a dense layer.
    pub pixels: usize,
    /// A conv2d layer: for pixel `p` and window position `j`, entry
    /// `p * inputs + j` is the index of the layer input it reads, `None` in
    /// the padding. Empty for a dense layer (the input itself).
    pub window: Vec<Option<usize>>,
    /// `f'(o)` of its output codes (`relu`: `a[o] > 0`; linear: always).
    pub derivative: Derivative,
    /// Subtracted from every input code in the weight update: 0 for dense
    /// and conv2d, the input zero point `z_x` for dense_int8.
    pub x_offset: i128,
    /// Where `g` comes from.
    pub feedback: Feedback,
    /// The initial state of its feedback LFSR ([`feedback_seed`]).
    pub seed: u64,
    /// Shifts of the weight and bias updates: `s + F_x - F_w + q`,
    /// `s - F_b + q`, `q = ceil(log2(pixels))`.
    pub shift_w: i32,
    /// Shift of the bias update.
    pub shift_b: i32,
    /// Whether each tensor trains, and its clamp range.
    pub train_w: Option<(i128, i128)>,
    /// The biases: trainable, and the clamp range.
    pub train_b: Option<(i128, i128)>,
    /// The weights' steps round stochastically ([`stochastic_shift`]):
    /// the initial state of their rounding LFSR ([`round_seed`]). `None`:
    /// to nearest ([`round_shift`]; also when the weights do not train
    /// or `shift_w <= 0`, where nothing is rounded).
    pub round_w: Option<u64>,
    /// The same for the biases.
    pub round_b: Option<u64>,
}

/// Whether the feedback rules can train a layer of this kind: dense,
/// conv2d and dense_int8 layers (their update is a sum of outer products
/// of deltas and inputs).
pub fn trains(op: &LayerOp) -> bool {
    matches!(op, LayerOp::Dense(_) | LayerOp::Conv2d(_) | LayerOp::DenseInt8(_))
}

/// The trainable layers of `model` under the feedback rule of `training`,
/// in model order. Errors: another rule, a trainable layer the rules cannot
/// train ([`trains`]), no trainable parameter.
pub fn feedback_layers(model: &Model, training: &Training) -> Result<Vec<FeedbackLayer>, TrainError> {
    let feedback = match training.rule {
        Rule::Dfa => Feedback::Dfa,
        Rule::Drtp => Feedback::Drtp,
        Rule::Sgm => Feedback::Sgm,
        Rule::Es => return Err(TrainError::Config(format!("rule {} is not a feedback rule (drtp, dfa, sgm)", training.rule.name()))),
    };
    let last = model.layers.len().saturating_sub(1);
    let s = training.lr_shift;
    let mut layers = Vec::new();
    for (l, layer) in model.layers.iter().enumerate() {
        let specs = layer.kind().tensors();
        if !specs.iter().any(|t| t.trainable) {
            continue;
        }
        let (rows, pixels, window, inputs, derivative, x_offset, shift_w, shift_b) = match &layer.op {
            LayerOp::Dense(_) | LayerOp::Conv2d(_) => {
                let (d, pixels, window) = match &layer.op {
                    LayerOp::Conv2d(c) => (&c.mvau, c.pixels(), (0..c.pixels()).flat_map(|p| c.window_sources(p)).collect()),
                    LayerOp::Dense(d) => (d, 1, Vec::new()),
                    _ => unreachable!("matched above"),
                };
                let q = pixel_shift(pixels);
                let (fx, fw, fb) = (layer.input_format.frac_bits(), d.precision.weight.frac_bits(), d.precision.bias.frac_bits());
                let derivative = if d.activation == Activation::Relu { Derivative::Above(0) } else { Derivative::Always };
                let shift_w = s.saturating_add(fx).saturating_sub(fw).saturating_add(q);
                (d.outputs, pixels, window, d.inputs, derivative, 0, shift_w, s.saturating_sub(fb).saturating_add(q))
            }
            LayerOp::DenseInt8(d) => {
                // docs/training.md, "dense_int8 layers": the input code is
                // x - z_x; the shifts carry the scales as powers of two (the
                // largest channel scale of per-channel weights).
                let derivative = int8_derivative(d);
                let sx = f64::from(d.input_q().scale());
                let sw = d.weight_scales().into_iter().fold(0f32, f32::max) as f64;
                let shift_w = s.saturating_sub(log2_round(sx / sw));
                let shift_b = s.saturating_add(log2_round(sx * sw));
                (d.outputs, 1, Vec::new(), d.inputs, derivative, i128::from(d.input_q().zero_point()), shift_w, shift_b)
            }
            _ => {
                return Err(TrainError::Config(format!(
                    "rule {} trains dense, conv2d and dense_int8 layers only; layer '{}' is a trainable {} layer",
                    training.rule.name(),
                    layer.name,
                    layer.kind().type_name()
                )))
            }
        };
        layers.push(FeedbackLayer {
            layer: l,
            inputs,
            outputs: pixels * rows,
            rows,
            pixels,
            window,
            derivative,
            x_offset,
            feedback: if l == last { Feedback::Error } else { feedback },
            seed: feedback_seed(training.seed, l),
            shift_w,
            shift_b,
            train_w: specs[W].trainable.then_some(specs[W].range),
            train_b: specs[B].trainable.then_some(specs[B].range),
            round_w: (specs[W].trainable && shift_w > 0 && training.step_rounding.stochastic(specs[W].range))
                .then(|| round_seed(training.seed, l, W)),
            round_b: (specs[B].trainable && shift_b > 0 && training.step_rounding.stochastic(specs[B].range))
                .then(|| round_seed(training.seed, l, B)),
        });
    }
    if layers.is_empty() {
        return Err(TrainError::NoTrainable);
    }
    Ok(layers)
}

/// `ceil(log2(pixels))`: a conv2d layer's steps are the mean over its
/// output pixels (0 for a dense layer).
pub fn pixel_shift(pixels: usize) -> i32 {
    pixels.max(1).next_power_of_two().trailing_zeros() as i32
}

/// The sums of a trainable layer's update from one sample's deltas
/// (`spec.outputs`, pixel-major) and its layer input. For each row `r`
/// (dense output, conv2d filter) with a nonzero delta, in order: first,
/// when the weights train, `visit(W, r * inputs + j, S_j)` for every `j`
/// with `S_j = sum_p delta[p * rows + r] * win_p[j]`; then, when the
/// biases train, `visit(B, r, sum_p delta[p * rows + r])`. `win_p` is the
/// input itself for a dense layer, pixel `p`'s window for a conv2d (0 in
/// the padding). Generic so that the device's integers and the float
/// reference share it.
pub fn update_sums<T>(spec: &FeedbackLayer, delta: &[T], input: &[T], mut visit: impl FnMut(usize, usize, T))
where
    T: Copy + PartialEq + num_traits::Zero + std::ops::Mul<Output = T>,
{
    let n = spec.inputs;
    for r in 0..spec.rows {
        let d = |p: usize| delta[p * spec.rows + r];
        if (0..spec.pixels).all(|p| d(p).is_zero()) {
            continue;
        }
        if spec.train_w.is_some() {
            for j in 0..n {
                let sum = if spec.window.is_empty() {
                    d(0) * input[j]
                } else {
                    (0..spec.pixels).fold(T::zero(), |acc, p| match spec.window[p * n + j] {
                        Some(i) => acc + d(p) * input[i],
                        None => acc,
                    })
                };
                visit(W, r * n + j, sum);
            }
        }
        if spec.train_b.is_some() {
            visit(B, r, (0..spec.pixels).fold(T::zero(), |acc, p| acc + d(p)));
        }
    }
}

/// One trainable layer's fixed data in the trainer.
#[derive(Debug, Clone)]
struct Trained {
    spec: FeedbackLayer,
    /// `B_l` (empty for the output layer, which gets the error itself,
    /// and under `sgm`).
    feedback: Vec<i8>,
    /// `sgm`: the layer's module (None for the output layer).
    module: Option<super::sgm::SgmModule>,
}

/// Trains a network's dense layers with a feedback rule, exactly as the
/// device does (see the module documentation).
#[derive(Debug)]
pub struct FeedbackTrainer {
    model: Model,
    training: Training,
    params: Params,
    buffer: Buffer,
    layers: Vec<Trained>,
    /// Per trainable layer, the rounding LFSRs of its weights and biases
    /// (`None`: rounded to nearest); they run on across samples and
    /// iterations.
    rounders: Vec<[Option<Lfsr>; 2]>,
    iteration: u64,
    /// The next sample of the current iteration.
    next: usize,
}

impl FeedbackTrainer {
    /// A trainer for `net` with `training` (whose rule must be `drtp`,
    /// `dfa` or `sgm`) on `buffer` (`training.buffer` samples); under `sgm`
    /// the modules are read from the model's `sgm_path`
    /// ([`super::sgm::load`]). Errors: another rule, a trainable layer that
    /// is not dense, no trainable parameter, a buffer of another size, and
    /// under `sgm` no archive or a bad one.
    pub fn new(net: Network, training: Training, buffer: Buffer) -> Result<FeedbackTrainer, TrainError> {
        let sgm = match training.rule {
            Rule::Sgm if !super::sgm::module_shapes(net.model()).is_empty() => {
                let model = net.model();
                let path = model.sgm_path.as_ref().ok_or_else(|| {
                    TrainError::Config(format!(
                        "rule sgm needs the synthetic-gradient modules of the hidden trainable layers: {} has no `sgm:` in its \
                         training section (write them with `fptgen train --sgm`)",
                        model.source.display()
                    ))
                })?;
                Some(super::sgm::load(model, path).map_err(|e| TrainError::Config(e.to_string()))?)
            }
            _ => None,
        };
        FeedbackTrainer::with_sgm(net, training, buffer, sgm.as_ref())
    }

    /// [`FeedbackTrainer::new`] with the modules of `rule: sgm` given
    /// (`sgm` is ignored under the other rules). Errors as `new`'s, and a
    /// hidden trainable layer without a module, or one of another shape.
    pub fn with_sgm(net: Network, training: Training, buffer: Buffer, sgm: Option<&super::sgm::Sgm>) -> Result<FeedbackTrainer, TrainError> {
        if buffer.len() != training.buffer {
            return Err(TrainError::BufferSize { got: buffer.len(), want: training.buffer });
        }
        let (model, params) = net.into_parts();
        let classes = model.output_len();
        let shapes = super::sgm::module_shapes(&model);
        let mut layers = Vec::new();
        for spec in feedback_layers(&model, &training)? {
            let module = match spec.feedback {
                Feedback::Sgm => {
                    let want = shapes.iter().find(|s| s.layer == spec.layer).copied();
                    let m = sgm.and_then(|s| s.module(spec.layer)).cloned().ok_or_else(|| {
                        TrainError::Config(format!("rule sgm: layer '{}' has no synthetic-gradient module", model.layers[spec.layer].name))
                    })?;
                    if want.map(|w| (w.outputs, w.classes, w.shift_a, w.shift_t, w.h_bits)) != Some((m.outputs, m.classes, m.shift_a, m.shift_t, m.h_bits)) {
                        return Err(TrainError::Config(format!(
                            "rule sgm: the module of layer '{}' does not fit the layer",
                            model.layers[spec.layer].name
                        )));
                    }
                    Some(m)
                }
                _ => None,
            };
            let feedback = match spec.feedback {
                Feedback::Dfa | Feedback::Drtp => feedback_matrix(training.seed, spec.layer, spec.outputs, classes),
                Feedback::Error | Feedback::Sgm => Vec::new(),
            };
            layers.push(Trained { spec, feedback, module });
        }
        let rounders = layers
            .iter()
            .map(|t| {
                let lfsr = |s: Option<u64>| s.map(|s| Lfsr::new(LfsrWidth::W32, s).expect("a block seed is nonzero"));
                [lfsr(t.spec.round_w), lfsr(t.spec.round_b)]
            })
            .collect();
        Ok(FeedbackTrainer { model, training, params, buffer, layers, rounders, iteration: 0, next: 0 })
    }

    /// The current parameters.
    pub fn params(&self) -> &Params {
        &self.params
    }

    /// The model.
    pub fn model(&self) -> &Model {
        &self.model
    }

    /// The rule.
    pub fn rule(&self) -> Rule {
        self.training.rule
    }

    /// Samples in the buffer.
    pub fn buffer_len(&self) -> usize {
        self.buffer.len()
    }

    /// Iterations run so far.
    pub fn iteration(&self) -> u64 {
        self.iteration
    }

    /// The buffer loss of the current parameters (the sum of `|y - t|`
    /// over every output of every buffered sample, saturated to 32 bits,
    /// as ES's).
    pub fn loss(&self) -> u32 {
        naive_loss(&self.model, &self.params, &self.buffer)
    }

    /// The trainable layers, in model order.
    pub fn layers(&self) -> impl Iterator<Item = &FeedbackLayer> {
        self.layers.iter().map(|t| &t.spec)
    }

    /// Trains the next sample (the buffer's samples in order, iteration
    /// after iteration) and returns its record.
    pub fn step(&mut self) -> SampleRecord {
        let record = self.sample(self.next);
        self.next += 1;
        if self.next == self.buffer.len() {
            self.next = 0;
            self.iteration += 1;
        }
        record
    }

    /// Runs one iteration (every buffered sample once, in order), handing
    /// each sample's record to `observer`. Returns the buffer loss
    /// afterwards.
    pub fn run_iteration(&mut self, observer: &mut dyn FnMut(&SampleRecord)) -> u32 {
        let it = self.iteration;
        while self.iteration == it {
            let record = self.step();
            observer(&record);
        }
        self.loss()
    }

    /// Runs `iterations` iterations; returns the buffer loss afterwards.
    pub fn run(&mut self, iterations: u64, observer: &mut dyn FnMut(&SampleRecord)) -> u32 {
        for _ in 0..iterations {
            self.run_iteration(observer);
        }
        self.loss()
    }

    /// One sample: the forward pass, every delta, then every update.
    fn sample(&mut self, s: usize) -> SampleRecord {
        let x = &self.buffer.inputs()[s];
        let t = &self.buffer.targets()[s];
        let outs = self.model.forward_all(&self.params, x);
        let y = outs.last().cloned().unwrap_or_default();
        let e: Vec<i128> = y.iter().zip(t).map(|(&a, &b)| a - b).collect();
        let k_star = (0..t.len()).fold(0, |best, k| if t[k] > t[best] { k } else { best });
        let classes = e.len();
        let mut deltas = Vec::with_capacity(self.layers.len());
        let mut hidden = Vec::new();
        for tl in &self.layers {
            let a = &outs[tl.spec.layer];
            let synthetic = tl.module.as_ref().map(|m| {
                let h = m.hidden(a, t);
                let g = m.gradient(&h);
                hidden.push((tl.spec.layer, h));
                g
            });
            let delta: Vec<i128> = (0..a.len())
                .map(|o| {
                    let g = if let Some(g) = &synthetic {
                        g[o]
                    } else if tl.feedback.is_empty() {
                        e[o]
                    } else {
                        let row = &tl.feedback[o * classes..(o + 1) * classes];
                        match tl.spec.feedback {
                            Feedback::Drtp => -i128::from(row[k_star]),
                            _ => row.iter().zip(&e).map(|(&b, &v)| i128::from(b) * v).sum(),
                        }
                    };
                    if tl.spec.derivative.holds(a[o]) {
                        g
                    } else {
                        0
                    }
                })
                .collect();
            deltas.push((tl.spec.layer, delta));
        }
        // The updates, from the deltas and inputs of this forward pass.
        let mut changed = 0;
        for ((tl, (l, delta)), rounders) in self.layers.iter().map(|t| &t.spec).zip(&deltas).zip(&mut self.rounders) {
            let input = self.model.layer_input(*l, |src| match src {
                crate::model::Source::Input => x.as_slice(),
                crate::model::Source::Layer(j) => outs[j].as_slice(),
            });
            let p = &mut self.params.layers[*l];
            // x - z_x (dense_int8's input zero point; 0 elsewhere).
            let input: Vec<i128> = input.iter().map(|&v| v - tl.x_offset).collect();
            update_sums(tl, delta, &input, |tensor, i, sum| {
                let (shift, (lo, hi)) = if tensor == W {
                    (tl.shift_w, tl.train_w.expect("visited only when the weights train"))
                } else {
                    (tl.shift_b, tl.train_b.expect("visited only when the biases train"))
                };
                let v = &mut p.tensors[tensor][i];
                let step = match &mut rounders[tensor] {
                    Some(lfsr) => stochastic_shift(sum, shift, lfsr),
                    None => round_shift(sum, shift),
                };
                let next = v.saturating_sub(step).clamp(lo, hi);
                changed += usize::from(next != *v);
                *v = next;
            });
        }
        SampleRecord { iteration: self.iteration, sample: s, deltas, hidden, changed }
    }
}
