//! The float reference of the feedback rules (`drtp`, `dfa`, `sgm`): the
//! rule of [`super::feedback`] in `f64` with nothing quantized, for
//! measuring what the device's fixed point costs and as an independent
//! model the bit-exact trainer is checked against.
//!
//! Real master weights (the deployed codes' values to start), every
//! layer's forward pass in real arithmetic
//! ([`crate::reference::forward_all_real`]), the error `e = y - t` in real
//! units, and per trainable layer
//!
//! ```text
//! g[o] = e[o]                                      the output layer
//!      = sum_k B[o][k] e[k]                        dfa
//!      = -B[o][k*] 2^-F_y                          drtp (one output code)
//!      = 2^-F_y R'(u h)[o],  h = R'(c + v u')      sgm: the module's codes, no rounding or saturation
//! delta[o] = f'(o) g[o]
//! w[o][i] -= 2^(F_y - s) delta[o] x[i],   b[o] -= 2^(F_y - s) delta[o]      (dense)
//! w[o][i] -= 2^(F_y - shift_w) delta[o] (x[i] - z_x),   b[o] -= 2^(F_y - shift_b) delta[o]   (dense_int8, in codes)
//! ```
//!
//! where `R'(x)` is `x / 2^k` without rounding and `u'` the module's input
//! in codes of `F_in` fraction bits, unrounded. `2^(F_y - s)` is the
//! device's step in real units: a delta of `d` output codes (`d 2^-F_y`
//! real) moves a weight by `d x 2^-s` codes of the product's scale
//! (`docs/training.md`, "Feedback rules"). No clamping: the reference has
//! no format.

use crate::layers::dense::{B, W};
use crate::model::{Model, Rule, Source, Training};
use crate::network::Network;
use crate::reference::{forward_all_real, real_params};

use super::eval::Buffer;
use super::feedback::{feedback_layers, feedback_matrix, update_sums, Feedback, FeedbackLayer};
use super::sgm::{Sgm, SgmModule};
use super::TrainError;

/// One trainable layer of the float reference.
#[derive(Debug, Clone)]
struct Layer {
    spec: FeedbackLayer,
    feedback: Vec<i8>,
    module: Option<SgmModule>,
    /// The real steps of the weights and the biases: `2^(F_y - s)` for a
    /// dense layer; in general `2^(F_y + F_x - F_w - shift_w)` and
    /// `2^(F_y - F_b - shift_b)`, the device's step in real units (the
    /// same powers of two for dense; for dense_int8, whose formats have
    /// no fraction bits, `2^(F_y - shift_w)` and `2^(F_y - shift_b)`).
    eta: (f64, f64),
}

/// The feedback rules in `f64` (see the module documentation).
#[derive(Debug, Clone)]
pub struct FloatFeedbackTrainer {
    model: Model,
    params: Vec<Vec<Vec<f64>>>,
    inputs: Vec<Vec<f64>>,
    targets: Vec<Vec<f64>>,
    layers: Vec<Layer>,
    /// `2^-F_y`: one output code, real.
    code: f64,
}

impl FloatFeedbackTrainer {
    /// The reference of [`super::FeedbackTrainer::with_sgm`] for the same
    /// network, section, buffer and modules. Errors as its.
    pub fn new(net: &Network, training: Training, buffer: &Buffer, sgm: Option<&Sgm>) -> Result<FloatFeedbackTrainer, TrainError> {
        let model = net.model().clone();
        let classes = model.output_len();
        let out = model.output_format();
        let mut layers = Vec::new();
        for spec in feedback_layers(&model, &training)? {
            let module = match spec.feedback {
                Feedback::Sgm => Some(sgm.and_then(|s| s.module(spec.layer)).cloned().ok_or_else(|| {
                    TrainError::Config(format!("rule sgm: layer '{}' has no synthetic-gradient module", model.layers[spec.layer].name))
                })?),
                _ => None,
            };
            let feedback = match spec.feedback {
                Feedback::Dfa | Feedback::Drtp => feedback_matrix(training.seed, spec.layer, spec.outputs, classes),
                _ => Vec::new(),
            };
            let ml = &model.layers[spec.layer];
            let specs = ml.kind().tensors();
            let (fx, fw, fb) = (ml.input_format.frac_bits(), specs[W].format.frac_bits(), specs[B].format.frac_bits());
            let fy = out.frac_bits();
            let eta = (2f64.powi(fy + fx - fw - spec.shift_w), 2f64.powi(fy - fb - spec.shift_b));
            layers.push(Layer { spec, feedback, module, eta });
        }
        debug_assert!(training.rule != Rule::Es);
        let fy = out.frac_bits();
        let inputs = buffer.inputs().iter().map(|x| x.iter().map(|&c| model.input_format.to_f64(c)).collect()).collect();
        let targets = buffer.targets().iter().map(|t| t.iter().map(|&c| out.to_f64(c)).collect()).collect();
        Ok(FloatFeedbackTrainer {
            params: real_params(&model, net.params()),
            model,
            inputs,
            targets,
            layers,
            code: 2f64.powi(-fy),
        })
    }

    /// The real parameters, per layer and tensor.
    pub fn params(&self) -> &[Vec<Vec<f64>>] {
        &self.params
    }

    /// The network's real outputs for input codes `x`.
    pub fn infer(&self, x: &[i128]) -> Vec<f64> {
        let xr: Vec<f64> = x.iter().map(|&c| self.model.input_format.to_f64(c)).collect();
        forward_all_real(&self.model, &self.params, &xr).and_then(|mut o| o.pop()).unwrap_or_default()
    }

    /// The buffer loss: the sum of `|y - t|` over every output of every
    /// buffered sample, in output codes (the device's loss, unrounded).
    pub fn loss(&self) -> f64 {
        self.inputs
            .iter()
            .zip(&self.targets)
            .map(|(x, t)| {
                let y = forward_all_real(&self.model, &self.params, x).and_then(|mut o| o.pop()).unwrap_or_default();
                y.iter().zip(t).map(|(a, b)| (a - b).abs()).sum::<f64>() / self.code
            })
            .sum()
    }

    /// Runs `iterations` passes over the buffer, sample by sample in order.
    pub fn run(&mut self, iterations: u64) {
        for _ in 0..iterations {
            for s in 0..self.inputs.len() {
                self.sample(s);
            }
        }
    }

    fn sample(&mut self, s: usize) {
        let x = &self.inputs[s];
        let t = &self.targets[s];
        let outs = forward_all_real(&self.model, &self.params, x).expect("the buffer fits the model");
        let y = outs.last().cloned().unwrap_or_default();
        let e: Vec<f64> = y.iter().zip(t).map(|(a, b)| a - b).collect();
        let k_star = (0..t.len()).fold(0, |best, k| if t[k] > t[best] { k } else { best });
        let classes = e.len();
        let out_frac = self.model.output_format().frac_bits();
        let mut deltas = Vec::with_capacity(self.layers.len());
        for tl in &self.layers {
            let a = &outs[tl.spec.layer];
            let g: Vec<f64> = match (&tl.module, tl.spec.feedback) {
                (Some(m), _) => module_real(m, a, t, self.model.layers[tl.spec.layer].kind().output_format().frac_bits(), out_frac)
                    .into_iter()
                    .map(|v| v * self.code)
                    .collect(),
                (None, Feedback::Error) => e.clone(),
                (None, Feedback::Drtp) => (0..a.len()).map(|o| -f64::from(tl.feedback[o * classes + k_star]) * self.code).collect(),
                (None, _) => (0..a.len()).map(|o| (0..classes).map(|k| f64::from(tl.feedback[o * classes + k]) * e[k]).sum()).collect(),
            };
            let delta: Vec<f64> = g.iter().zip(a).map(|(&g, &a)| if tl.spec.derivative.holds_real(a) { g } else { 0.0 }).collect();
            deltas.push(delta);
        }
        for (tl, delta) in self.layers.iter().zip(&deltas) {
            let l = tl.spec.layer;
            let input: Vec<f64> = self
                .model
                .layer_input(l, |src| match src {
                    Source::Input => x.as_slice(),
                    Source::Layer(j) => outs[j].as_slice(),
                })
                .into_owned();
            let (eta_w, eta_b) = tl.eta;
            // x - z_x (dense_int8's input zero point; 0 elsewhere).
            let x_off = tl.spec.x_offset as f64;
            let input: Vec<f64> = input.iter().map(|&v| v - x_off).collect();
            let p = &mut self.params[l];
            // eta carries the device's shifts, a conv2d's mean over its
            // pixels included.
            update_sums(&tl.spec, delta, &input, |tensor, i, sum| p[tensor][i] -= (if tensor == W { eta_w } else { eta_b }) * sum);
        }
    }
}

/// A module's `g` in output codes, unrounded and unsaturated, for the real
/// layer output `a` and target `t` (fraction bits `fa`, `fy`).
fn module_real(m: &SgmModule, a: &[f64], t: &[f64], fa: i32, fy: i32) -> Vec<f64> {
    let f_in = fa.max(fy);
    let scale = 2f64.powi(f_in);
    let u: Vec<f64> = a.iter().chain(t).map(|v| v * scale).collect();
    let width = m.outputs + m.classes;
    let h: Vec<f64> = (0..m.classes)
        .map(|k| (m.c[k] as f64 + (0..width).map(|i| m.v[k * width + i] as f64 * u[i]).sum::<f64>()) / 2f64.powi(m.shift_h))
        .collect();
    (0..m.outputs).map(|o| (0..m.classes).map(|k| m.u[o * m.classes + k] as f64 * h[k]).sum::<f64>() / 2f64.powi(m.shift_g)).collect()
}
