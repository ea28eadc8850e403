//! `fptgen init-weights`: seeded random weights for bring-up.

use std::path::Path;

use fptgen_sim::tensor::{NamedArray, OutValues};
use fptgen_sim::weights;

/// Writes seeded random weights for the model.
pub fn run(model: &Path, seed: u64, output: Option<&Path>) -> anyhow::Result<()> {
    let model = fptgen_sim::model::load(model)?;
    let params = weights::random(&model, seed);
    let path = output.unwrap_or(&model.weights_path);
    let meta = [NamedArray { name: "meta/seed".into(), shape: vec![1], values: OutValues::U64(vec![seed]) }];
    weights::save(&model, &params, path, &meta)?;
    println!("wrote {} (random, seed {seed})", path.display());
    Ok(())
}
