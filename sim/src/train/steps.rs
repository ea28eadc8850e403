//! ES's automatic step sizes (`perturb_shift: auto`, `lr_shift: auto`, the
//! default when the model file gives none; `docs/training.md`, "Update").
//!
//! The rule, with `F_w` the fraction bits of the trained tensor (the one
//! with the most trainable values), `F_y` those of the network's output,
//! N the population, M the buffer, k the section's iterations, `E[e^2]`
//! the noise's mean square and `c_Q` the loss quantization's mean gain:
//!
//! ```text
//! perturb_shift = clamp(round(F_w) - 6, 0, 31)
//! lr_shift      = clamp(round(K - 6 + log2(N * E[e^2] * M * c_Q) + log2(k) / 2 + F_y - F_w + (sigma - sigma_auto)), -31, 31)
//! ```
//!
//! where `sigma` is the perturbation shift in use and `sigma_auto` the
//! first line's (the last term is 0 unless the model file writes a
//! `perturb_shift` of its own). [`K`] is measured
//! (`docs/results/rules.md`, "Automatic steps for ES").
//!
//! Fraction bits are the formats' (`W - I`): 0 for an int8 kind's int8
//! and int32 codes, whatever their scales (measured on
//! `examples/int8_head`, `docs/results/rules.md`).

use crate::model::{Distribution, Fitness, LossQuantization, Model, Noise, Training};

/// The measured constant of the rule (`docs/results/rules.md`,
/// "Automatic steps for ES"): on a format at least as fine as the
/// perturbation, the real step is about `2^-(K + log2(k) / 2)` times the
/// gradient of the loss per sample.
pub const K: f64 = 3.25;

/// The measured constant of the rule for `fitness: ranks`
/// ([`auto_lr_shift_ranks`]; `docs/results/rules.md`, "Under the protocol"):
/// Salimans et al.'s step size is `alpha = 2^-(K_RANKS + log2(k) / 2)`
/// (k iterations). Chosen on the validation images of MNIST fc1 (the
/// best `lr_shift` there, 2, is the middle of the constants that give it).
pub const K_RANKS: f64 = 5.88;

/// The automatic perturbation moves a parameter by about `2^-PERTURB_FRAC`
/// in real terms (one code when the format is coarser).
pub const PERTURB_FRAC: i32 = 6;

/// What the rule needs from the network: the fraction bits of the
/// trained tensor and of the output.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StepBasis {
    /// `F_w`: the fraction bits of the trainable tensor with the most
    /// values (the first in parameter order on a tie).
    pub trained_frac: f64,
    /// `F_y`: the fraction bits of the network's output format.
    pub output_frac: f64,
    /// The network's output format.
    pub output: crate::fixed::Format,
    /// `F_y` of the feedback rules' automatic step
    /// ([`crate::train::feedback::auto_lr_shift_frac`]): the output format's
    /// fraction bits, or, when the last layer is an int8 kind (its output
    /// quantized with scale `s_y`), `-round(log2(s_y))` (halves away from
    /// zero), the fraction bits of the power of two nearest its scale.
    pub feedback_output_frac: i32,
}

impl StepBasis {
    /// The basis of `model`'s trainable tensors and output; None if it has
    /// no trainable tensor.
    pub fn of(model: &Model) -> Option<StepBasis> {
        Self::of_layers(&model.layers)
    }

    /// [`StepBasis::of`] on a model's layers (for the loader, before the
    /// model exists).
    pub fn of_layers(layers: &[crate::model::Layer]) -> Option<StepBasis> {
        let mut best: Option<(usize, i32)> = None;
        for l in layers {
            for t in l.kind().tensors() {
                if t.trainable && !t.is_empty() && best.is_none_or(|(n, _)| t.len() > n) {
                    best = Some((t.len(), t.format.frac_bits()));
                }
            }
        }
        let (_, trained_frac) = best?;
        let last = layers.last()?.kind();
        let output = last.output_format();
        let feedback_output_frac = match last.output_quantization() {
            Some(q) => -(f64::from(q.scale()).log2().round() as i32),
            None => output.frac_bits(),
        };
        Some(StepBasis { trained_frac: f64::from(trained_frac), output_frac: f64::from(output.frac_bits()), output, feedback_output_frac })
    }
}

/// `E[e^2]` of a noise value: 1 for `rademacher`; for `uniform` with b
/// bits, the mean of the squares of the odd values `-(2^b - 1)..=2^b - 1`,
/// `(4^b - 1) / 3`.
pub fn noise_power(noise: &Noise) -> f64 {
    match noise.distribution {
        Distribution::Rademacher => 1.0,
        Distribution::Uniform => (4f64.powi(noise.bits as i32) - 1.0) / 3.0,
    }
}

/// `c_Q`, the mean of `Q(s) / s`: 1 for `exact`; for `po2`, whose
/// `Q(s)` keeps the leading one of `|s|`, `1 / (2 ln 2)` (about 0.72,
/// the mean for a signal whose mantissa is log-uniform).
pub fn quantization_gain(q: LossQuantization) -> f64 {
    match q {
        LossQuantization::Exact => 1.0,
        LossQuantization::Po2 => 1.0 / (2.0 * std::f64::consts::LN_2),
    }
}

/// The automatic `perturb_shift`: `clamp(round(F_w) - 6, 0, 31)`, a
/// perturbation of about `2^-6` in real terms, or one code of a coarser
/// format.
pub fn auto_perturb_shift(basis: &StepBasis) -> u32 {
    (basis.trained_frac.round() as i64 - i64::from(PERTURB_FRAC)).clamp(0, i64::from(Training::MAX_SHIFT)) as u32
}

/// The automatic `lr_shift` of ES for `t` (its N, M, k, noise, loss
/// quantization and `perturb_shift`): the module's formula, rounded to the
/// nearest integer (halves away from zero) and clamped to `[-31, 31]`.
pub fn auto_lr_shift(t: &Training, basis: &StepBasis) -> i32 {
    if t.fitness == Fitness::Ranks {
        return auto_lr_shift_ranks(t, basis);
    }
    let n = t.population as f64 * noise_power(&t.noise) * t.buffer as f64 * quantization_gain(t.loss_quantization);
    let extra = f64::from(t.perturb_shift) - f64::from(auto_perturb_shift(basis));
    let k = (t.iterations.max(1) as f64).log2() / 2.0;
    let v = K - f64::from(PERTURB_FRAC) + n.log2() + k + basis.output_frac - basis.trained_frac + extra;
    let m = f64::from(Training::MAX_SHIFT);
    v.round().clamp(-m, m) as i32
}

/// The automatic `lr_shift` of ES with `fitness: ranks`: the step of
/// Salimans et al., `alpha / (N sigma_r) * sum_m u_m eps_m` with the
/// centered-rank utilities `u_m = r_m / (2 (N - 1))`, unit-variance noise
/// `eps = e / sqrt(E[e^2])` and the real perturbation `sigma_r =
/// 2^(perturb_shift - F_w) sqrt(E[e^2])`, written in codes: the
/// accumulator `G_j = sum Q(r_{m-1} - r_m) e_j` over the pairs is divided
/// by `2^lr_shift` with
///
/// ```text
/// lr_shift = clamp(round(K_RANKS + log2(2 N (N - 1) E[e^2] c_Q) + log2(k) / 2 + perturb_shift - 2 F_w), -31, 31)
/// ```
///
/// (`alpha = 2^-(K_RANKS + log2(k) / 2)`, shrinking with the square root
/// of the section's iterations as ES's rule does). The loss's scale (M, `F_y`)
/// is absent: ranks do not depend on it.
pub fn auto_lr_shift_ranks(t: &Training, basis: &StepBasis) -> i32 {
    let n = t.population as f64;
    let g = 2.0 * n * (n - 1.0).max(1.0) * noise_power(&t.noise) * quantization_gain(t.loss_quantization);
    let k = (t.iterations.max(1) as f64).log2() / 2.0;
    let v = K_RANKS + g.log2() + k + f64::from(t.perturb_shift) - 2.0 * basis.trained_frac;
    let m = f64::from(Training::MAX_SHIFT);
    v.round().clamp(-m, m) as i32
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The MNIST fc1 setting the constant was chosen on (N 100, k 100,
    /// rademacher, po2, 16-bit weights with F_w 15, sigma 15 - 6 = 9):
    /// 5.88 + log2(2 * 100 * 99 * 0.72135) + log2(100) / 2 + 9 - 30 =
    /// 5.88 + 13.802 + 3.322 - 21 = 2.004, so lr_shift 2 (lr_base 17 in
    /// examples/mnist_noise's terms); the signal's scale (M, F_y) is absent.
    #[test]
    fn ranks_step_by_hand() {
        let basis = |output_frac| StepBasis { trained_frac: 15.0, output_frac, output: "ap_fixed<16,8>".parse().unwrap(), feedback_output_frac: 8 };
        let t = Training { fitness: Fitness::Ranks, population: 100, iterations: 100, buffer: 1024, perturb_shift: 9, ..Training::default() };
        assert_eq!(auto_lr_shift(&t, &basis(8.0)), 2);
        assert_eq!(auto_lr_shift(&Training { buffer: 64, ..t }, &basis(0.0)), 2);
        // N = 2: 2 * 2 * 1 pairs the scale; 5.88 + log2(4 * 0.72135) + 3.322 - 21 = -10.27.
        assert_eq!(auto_lr_shift(&Training { population: 2, ..t }, &basis(8.0)), -10);
        // Antithetic at the same setting depends on M.
        let a = Training { fitness: Fitness::Antithetic, ..t };
        assert_ne!(auto_lr_shift(&a, &basis(8.0)), auto_lr_shift(&Training { buffer: 64, ..a }, &basis(8.0)));
    }
}
