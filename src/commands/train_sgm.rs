//! `fptgen train --sgm`: fits the synthetic-gradient modules of `rule:
//! sgm` to the true gradients of the network's current weights on the
//! pretraining data (`fptgen_sim::train::sgm::fit`), quantizes them and
//! writes their archive.

use std::path::Path;

use anyhow::{anyhow, bail};
use fptgen_sim::data;
use fptgen_sim::model::Rule;
use fptgen_sim::tensor::{NamedArray, OutValues};
use fptgen_sim::train::sgm;

/// Relative ridge of the least-squares fits.
const RIDGE: f64 = 1e-6;

/// Runs `fptgen train --sgm` on `model_path` with the training samples of
/// `data_dir` (the first `limit` after holding out `validation`), writing
/// `output` or the model's `sgm:` archive.
pub fn run(model_path: &Path, data_dir: &Path, validation: usize, limit: Option<usize>, output: Option<&Path>) -> anyhow::Result<()> {
    let (model, params) = super::load(model_path, false)?;
    let Some(training) = model.training else {
        bail!("{}: --sgm fits the modules of rule sgm, but the model has no training section", model.source.display());
    };
    if training.rule != Rule::Sgm {
        bail!("{}: --sgm fits the modules of rule sgm, but the training section's rule is {}", model.source.display(), training.rule.name());
    }
    let shapes = sgm::module_shapes(&model);
    if shapes.is_empty() {
        bail!("{}: no hidden trainable layer, so rule sgm has no module to fit (the output layer learns from the error itself)", model.source.display());
    }
    let out = match (output, &model.sgm_path) {
        (Some(o), _) => o.to_path_buf(),
        (None, Some(p)) => p.clone(),
        (None, None) => bail!("{}: the training section has no `sgm:` and no --output was given", model.source.display()),
    };
    if out.exists() {
        bail!("{}: already exists; fptgen does not overwrite files, remove it or choose another path (-o)", out.display());
    }
    let splits = data::load_dir(&model, data_dir)?;
    let (train, _) = splits.train.split_last(validation).ok_or_else(|| {
        anyhow!("--validation {validation} is more than the {} training samples in {}", splits.train.len(), data_dir.display())
    })?;
    let train = match limit {
        Some(n) if n < train.len() => train.slice(0..n),
        _ => train,
    };
    if train.is_empty() {
        bail!("no training samples left after holding out --validation {validation}");
    }
    let targets = data::es::label_targets(&model, data_dir, train.labels())?;
    let samples: Vec<(Vec<i128>, Vec<i128>)> = train.inputs().into_iter().zip(targets).collect();
    println!(
        "fitting the synthetic-gradient modules of {} ({} module(s)) on {} training samples from {}",
        model.name,
        shapes.len(),
        samples.len(),
        data_dir.display()
    );
    let (modules, reports) = sgm::fit(&model, &params, &samples, RIDGE, training.seed).map_err(|e| anyhow!("{}: {e}", model.source.display()))?;
    for (r, m) in reports.iter().zip(&modules.modules) {
        println!(
            "  {}: {} x {} module, s_h {}, s_g {}; mean cosine with the true gradient {:.3} (dfa's random projection: {:.3})",
            model.layers[r.layer].name,
            m.outputs,
            m.classes,
            m.shift_h,
            m.shift_g,
            r.cosine,
            r.cosine_dfa
        );
    }
    let meta = [
        NamedArray { name: "meta/samples".into(), shape: vec![1], values: OutValues::U64(vec![samples.len() as u64]) },
        NamedArray { name: "meta/cosine".into(), shape: vec![reports.len()], values: OutValues::F64(reports.iter().map(|r| r.cosine).collect()) },
    ];
    sgm::save(&model, &modules, &out, &meta)?;
    println!("wrote {}", out.display());
    Ok(())
}
