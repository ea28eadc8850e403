//! Block-wise distillation (seed 004, the mean-squared-error form): a
//! block of layers (a chain) is trained alone so that its output matches a
//! teacher's output for the same block input. The block's inputs and the
//! teacher's targets come from the caller as arrays (the CLI evaluates the
//! teacher network; the simulator knows nothing of it).
//!
//! The forward pass is the bit-accurate one of each layer (the parameters
//! quantized to their formats, as in [`super::Qat::epoch`]), the backward
//! pass the same straight-through estimator: a layer's output at a bound
//! of its format passes no gradient, except at the block's output, where a
//! gradient pointing back inside the format passes. Only the block's
//! layers move; Adam with the cosine-decayed step size of host training.

use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;

use super::{add_into, Grad, Qat, Quantized, CHUNK};
use crate::fixed::Format;
use crate::layers::Backward;
use crate::model::{Model, Source};
use crate::weights::Params;

/// A block's training data: per sample, the block's input (codes of the
/// first layer's input format) and the teacher's output (real values, in
/// the order of the block's output).
#[derive(Debug, Clone, Copy)]
pub struct BlockData<'a> {
    /// The block's inputs.
    pub inputs: &'a [Vec<i128>],
    /// The teacher's outputs.
    pub targets: &'a [Vec<f32>],
}

impl BlockData<'_> {
    /// The number of samples.
    pub fn len(&self) -> usize {
        self.inputs.len().min(self.targets.len())
    }

    /// Whether there are no samples.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// `count` seeded random inputs of `n` codes each, uniform over the codes
/// of `format` (its lossless range): seed 004 distills on unlabeled
/// inputs, and without data these stand for them.
pub fn random_inputs(format: Format, n: usize, count: usize, seed: u64) -> Vec<Vec<i128>> {
    let (lo, hi) = (format.lossless_min_raw(), format.max_raw());
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    (0..count).map(|_| (0..n).map(|_| rng.random_range(lo..=hi)).collect()).collect()
}

/// Checks that `layers` (indices into the model's layers) is a chain the
/// distillation can train: every layer reads one source, each after the
/// first reads the one before it; and that the block's input and output
/// sizes are `input_len` and `output_len`. The reason when not.
pub fn check_block(model: &Model, layers: &[usize], input_len: usize, output_len: usize) -> Result<(), String> {
    let (Some(&first), Some(&last)) = (layers.first(), layers.last()) else { return Err("the block has no layers".into()) };
    for (i, &l) in layers.iter().enumerate() {
        let layer = model.layers.get(l).ok_or_else(|| format!("the model has no layer {l}"))?;
        let ok = match (i, layer.inputs.as_slice()) {
            (0, [_]) => true,
            (_, [Source::Layer(j)]) => *j == layers[i - 1],
            _ => false,
        };
        if !ok {
            return Err(format!("layer '{}' does not read only the block's previous layer; a block is a chain", layer.name));
        }
    }
    let inputs = model.layers[first].kind().input_len();
    let outputs = model.layers[last].kind().output_len();
    if inputs != input_len || outputs != output_len {
        return Err(format!(
            "the block '{}'..'{}' takes {inputs} values and gives {outputs}; the teacher's tensors have {input_len} and {output_len}",
            model.layers[first].name, model.layers[last].name
        ));
    }
    Ok(())
}

/// Each block layer's output codes for one block input.
fn forward(model: &Model, params: &Params, layers: &[usize], x: &[i128]) -> Vec<Vec<i128>> {
    let mut out: Vec<Vec<i128>> = Vec::with_capacity(layers.len());
    for &l in layers {
        let layer = &model.layers[l];
        let input = out.last().map_or(x, Vec::as_slice);
        let y = layer.kind().forward(layer.input_format, &params.layers[l], input);
        out.push(y);
    }
    out
}

/// The block's mean squared error per output value against the targets,
/// in real units, with the bit-accurate forward pass of `params` (the
/// measure `fptgen train --teacher` prints before and after).
pub fn block_mse(model: &Model, params: &Params, layers: &[usize], data: BlockData<'_>) -> f64 {
    let Some(&last) = layers.last() else { return 0.0 };
    let of = model.layers[last].kind().output_format();
    let n = data.len();
    if n == 0 {
        return 0.0;
    }
    let total: f64 = (0..n)
        .into_par_iter()
        .map(|s| {
            let ys = forward(model, params, layers, &data.inputs[s]);
            let y = ys.last().map_or(&[][..], Vec::as_slice);
            let t = &data.targets[s];
            y.iter().zip(t).map(|(&c, &t)| (of.to_f64(c) - f64::from(t)).powi(2)).sum::<f64>() / y.len().max(1) as f64
        })
        .collect::<Vec<f64>>()
        .into_iter()
        .sum();
    total / n as f64
}

impl Qat {
    /// One epoch of distillation of the block `layers` (a chain,
    /// [`check_block`]) on `data` in a seeded random order: each step moves
    /// only the block's parameters, down the gradient of the mean squared
    /// error between the block's output and the targets. `progress` is
    /// called after every step with the samples done. Returns the mean
    /// training loss per sample.
    pub fn distill_epoch(&mut self, layers: &[usize], data: BlockData<'_>, progress: &mut dyn FnMut(usize)) -> f64 {
        let n = data.len();
        let mut order: Vec<usize> = (0..n).collect();
        let mut rng = ChaCha8Rng::seed_from_u64(self.config.seed ^ 0xD157_0000_0000_0000u64.wrapping_add(self.epochs as u64));
        order.shuffle(&mut rng);
        let batch = self.config.batch.max(1);
        let total_steps = (n.div_ceil(batch) * self.config.total_epochs.max(1)) as f32;
        let mut loss = 0.0;
        for (k, idx) in order.chunks(batch).enumerate() {
            let q = self.quantized();
            let chunks: Vec<Grad> = idx.par_chunks(CHUNK).map(|c| self.block_gradient(&q, layers, data, c)).collect();
            let total = chunks.into_iter().reduce(|mut a, b| {
                for (x, y) in a.grads.iter_mut().zip(&b.grads) {
                    add_into(x, y);
                }
                a.loss += b.loss;
                a
            });
            let Some(g) = total else { continue };
            loss += g.loss;
            let scale = 1.0 / idx.len() as f32;
            self.steps += 1;
            let lr = self.config.lr * 0.5 * (1.0 + (std::f32::consts::PI * self.steps as f32 / total_steps).min(std::f32::consts::PI).cos());
            for (&l, grads) in layers.iter().zip(&g.grads) {
                for (i, (m, grad)) in self.masters[l].iter_mut().zip(grads).enumerate() {
                    if self.frozen[l][i] {
                        continue;
                    }
                    let grad: Vec<f32> = grad.iter().map(|x| x * scale).collect();
                    m.adam(&grad, lr, self.steps);
                }
            }
            progress((k * batch + idx.len()).min(n));
        }
        self.epochs += 1;
        loss / n.max(1) as f64
    }

    /// Forward (exact) and backward (straight-through) through the block
    /// for a few samples; gradients per block layer, per tensor.
    fn block_gradient(&self, q: &Quantized, layers: &[usize], data: BlockData<'_>, samples: &[usize]) -> Grad {
        let model = &self.model;
        let mut g = Grad {
            grads: layers.iter().map(|&l| model.layers[l].kind().tensors().iter().map(|t| vec![0.0; t.len()]).collect()).collect(),
            loss: 0.0,
        };
        let in_format = model.layers[layers[0]].input_format;
        for &s in samples {
            let codes = forward(model, &q.params, layers, &data.inputs[s]);
            let mut xs: Vec<Vec<f32>> = vec![data.inputs[s].iter().map(|&c| in_format.to_f64(c) as f32).collect()];
            let mut masks: Vec<Vec<i8>> = Vec::with_capacity(layers.len());
            for (&l, y) in layers.iter().zip(&codes) {
                let k = model.layers[l].kind();
                let of = k.output_format();
                let lo = if k.ste_mask() { k.output_floor() } else { i128::MIN };
                let hi = if k.ste_mask() { k.output_ceiling() } else { i128::MAX };
                masks.push(y.iter().map(|&c| if c <= lo { -1 } else if c >= hi { 1 } else { 0 }).collect());
                xs.push(y.iter().map(|&c| of.to_f64(c) as f32).collect());
            }
            let y = xs.last().cloned().unwrap_or_default();
            let t = &data.targets[s];
            let n = y.len().max(1) as f32;
            let mut delta: Vec<f32> = y
                .iter()
                .zip(t)
                .map(|(&v, &t)| {
                    g.loss += f64::from((v - t) * (v - t) / n);
                    2.0 * (v - t) / n
                })
                .collect();
            for i in (0..layers.len()).rev() {
                let last = i + 1 == layers.len();
                for (d, &bound) in delta.iter_mut().zip(&masks[i]) {
                    let inward = last && ((bound > 0 && *d > 0.0) || (bound < 0 && *d < 0.0));
                    if bound != 0 && !inward {
                        *d = 0.0;
                    }
                }
                let l = layers[i];
                delta = model.layers[l].kind().backward(Backward { x: &xs[i], params: &q.real[l], delta: &delta, grads: &mut g.grads[i], want_input: i > 0 });
            }
        }
        g
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::{block_mse, check_block, random_inputs, BlockData};
    use crate::qat::{Loss, Qat, QatConfig};
    use crate::weights::{LayerParams, Params};

    const YAML: &str = "name: t\ninput: {shape: [2], format: 'ap_fixed<8,4>'}\nweights: w.npz\nlayers:\n\
        \x20 - {name: a, type: dense, inputs: 2, outputs: 2, activation: linear,\n\
        \x20   precision: {weight: 'ap_fixed<8,4>', bias: 'ap_fixed<8,4>', accum: 'ap_fixed<24,12>', output: 'ap_fixed<16,8>'}}\n\
        \x20 - {name: b, type: dense, inputs: 2, outputs: 1, activation: linear,\n\
        \x20   precision: {weight: 'ap_fixed<8,4>', bias: 'ap_fixed<8,4>', accum: 'ap_fixed<32,16>', output: 'ap_fixed<16,8>'}}\n";

    #[test]
    fn a_two_layer_block_learns_a_teachers_affine_map_and_only_a_chain_is_a_block() {
        let model = crate::model::parse(YAML, Path::new("t.yaml")).unwrap();
        // a: the identity (codes of 1.0 at F = 4); b: zeros.
        let params = Params { layers: vec![LayerParams { tensors: vec![vec![16, 0, 0, 16], vec![0, 0]] }, LayerParams { tensors: vec![vec![0, 0], vec![0]] }] };
        let f = model.input_format;
        // The teacher, in plain arithmetic: y = 0.75 x0 - 0.5 x1 + 0.25.
        let teacher = |x: &[i128]| vec![(0.75 * f.to_f64(x[0]) - 0.5 * f.to_f64(x[1]) + 0.25) as f32];
        let (train_x, held_x) = (random_inputs(f, 2, 64, 7), random_inputs(f, 2, 32, 8));
        let train_t: Vec<Vec<f32>> = train_x.iter().map(|x| teacher(x)).collect();
        let held_t: Vec<Vec<f32>> = held_x.iter().map(|x| teacher(x)).collect();
        let (train, held) = (BlockData { inputs: &train_x, targets: &train_t }, BlockData { inputs: &held_x, targets: &held_t });
        check_block(&model, &[0, 1], 2, 1).unwrap();
        let before = block_mse(&model, &params, &[0, 1], held);
        let config = QatConfig { batch: 8, lr: 0.05, total_epochs: 30, seed: 1, loss: Loss::Mse };
        let mut qat = Qat::from_params(model.clone(), &params, config, false);
        for _ in 0..30 {
            qat.distill_epoch(&[0, 1], train, &mut |_| {});
        }
        let after = block_mse(&model, &qat.params(), &[0, 1], held);
        assert!(after < 0.05 * before, "held-out MSE {before} before, {after} after");
        assert!(check_block(&model, &[1, 0], 2, 1).unwrap_err().contains("chain"));
        assert!(check_block(&model, &[0, 1], 3, 1).unwrap_err().contains("3"));
    }
}
