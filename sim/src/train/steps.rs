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

use crate::model::{Distribution, LossQuantization, Model, Noise, Training};

/// The measured constant of the rule (`docs/results/rules.md`,
/// "Automatic steps for ES"): on a format at least as fine as the
/// perturbation, the real step is about `2^-(K + log2(k) / 2)` times the
/// gradient of the loss per sample.
pub const K: f64 = 3.25;

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
    let n = t.population as f64 * noise_power(&t.noise) * t.buffer as f64 * quantization_gain(t.loss_quantization);
    let extra = f64::from(t.perturb_shift) - f64::from(auto_perturb_shift(basis));
    let k = (t.iterations.max(1) as f64).log2() / 2.0;
    let v = K - f64::from(PERTURB_FRAC) + n.log2() + k + basis.output_frac - basis.trained_frac + extra;
    let m = f64::from(Training::MAX_SHIFT);
    v.round().clamp(-m, m) as i32
}
