//! `fptgen init-weights`: seeded random weights for bring-up.

use std::path::Path;

use fptgen_sim::tensor::{NamedArray, OutValues};
use fptgen_sim::weights;

/// Writes seeded random weights for the model, or with `from_tflite` the
/// weights and biases of the TFLite operators its int8 layers name.
pub fn run(model: &Path, seed: u64, output: Option<&Path>, from_tflite: bool) -> anyhow::Result<()> {
    let model = fptgen_sim::model::load(model)?;
    if from_tflite {
        let params = weights::from_tflite(&model)?;
        let path = output.unwrap_or(&model.weights_path);
        weights::save(&model, &params, path, &[])?;
        println!("wrote {} (from the TFLite operators the model's int8 layers name)", path.display());
        return Ok(());
    }
    let params = weights::random(&model, seed);
    let path = output.unwrap_or(&model.weights_path);
    let meta = [NamedArray { name: "meta/seed".into(), shape: vec![1], values: OutValues::U64(vec![seed]) }];
    weights::save(&model, &params, path, &meta)?;
    println!("wrote {} (random, seed {seed})", path.display());
    Ok(())
}
