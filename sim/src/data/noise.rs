//! Gaussian input noise: the sensor drift of seed 003's experiment
//! (`examples/mnist_noise`), and the augmentation `fptgen train --sgm
//! --noise` fits synthetic-gradient modules on.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::dataset::Dataset;
use crate::model::Model;

/// `d` with `sigma` times seeded standard-normal draws added to every
/// input value's real value, converted back to the input format (its own
/// rounding and saturation; a value it cannot take becomes code 0). The
/// draws depend only on `seed` and the value's position (Box-Muller, one
/// normal value per pair of uniforms from ChaCha8 seeded with
/// `seed ^ 0x0015_E000`), so every sigma scales the same draws.
pub fn add_gaussian_noise(model: &Model, d: &Dataset, sigma: f64, seed: u64) -> Dataset {
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x0015_E000);
    let f = model.input_format;
    let mut codes = Vec::with_capacity(d.len() * d.input_len());
    for i in 0..d.len() {
        for &c in d.input(i) {
            let u1: f64 = 1.0 - rng.random::<f64>();
            let u2: f64 = rng.random::<f64>();
            let z = (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos();
            codes.push(f.quantize_f64(f.to_f64(c) + sigma * z).unwrap_or(0));
        }
    }
    Dataset::new(d.input_len(), codes, d.labels().to_vec()).expect("same shape")
}
