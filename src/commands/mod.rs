//! One module per subcommand.

pub mod check;
pub mod cosim;
pub mod generate;
pub mod init_weights;
pub mod simulate;
pub mod train_es;

use std::path::Path;

use fptgen_sim::model::Model;
use fptgen_sim::weights::{self, Conversion, Params};

/// Loads a model file and its weights archive.
pub fn load(model: &Path, quantize: bool) -> anyhow::Result<(Model, Params)> {
    let model = fptgen_sim::model::load(model)?;
    let conv = if quantize { Conversion::Quantize } else { Conversion::Exact };
    let params = weights::load(&model, conv)?;
    Ok((model, params))
}
