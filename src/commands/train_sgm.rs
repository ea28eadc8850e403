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

/// Options of `fptgen train --sgm` besides the model and the data.
#[derive(Debug, Clone)]
pub struct Options<'a> {
    /// Training samples held out from the end.
    pub validation: usize,
    /// Use only the first this many training samples (after the hold-out).
    pub limit: Option<usize>,
    /// Where to write the archive (default: the model's `sgm:`).
    pub output: Option<&'a Path>,
    /// Seeds the noise of `noise`.
    pub seed: u64,
    /// Which noisy copies of the samples the fit also takes.
    pub noise: Noise,
}

/// The noisy copies of the samples besides the clean ones.
#[derive(Debug, Clone, PartialEq)]
pub enum Noise {
    /// None (`--clean`).
    Clean,
    /// The default spread ([`sgm::default_noise`] of the samples).
    Spread,
    /// Gaussian input noise of these standard deviations (real input units).
    Levels(Vec<f64>),
}

/// Runs `fptgen train --sgm` on `model_path` with the training samples of
/// `data_dir` (the first `limit` after holding out `validation`, and their
/// noisy copies), writing `output` or the model's `sgm:` archive.
pub fn run(model_path: &Path, data_dir: &Path, o: &Options) -> anyhow::Result<()> {
    let (validation, limit, output) = (o.validation, o.limit, o.output);
    let (model, params) = super::load(model_path, false)?;
    let Some(training) = model.training else {
        bail!("{}: --sgm fits the modules of rule sgm, but the model has no training section", model.source.display());
    };
    // The fit does not depend on the rule: a model trained with another
    // rule gets modules for `--rule sgm --sgm FILE` (then -o names FILE).
    if training.rule != Rule::Sgm && output.is_none() {
        bail!(
            "{}: the training section's rule is {}, so it names no sgm archive; give -o FILE and use the modules with --rule sgm --sgm FILE",
            model.source.display(),
            training.rule.name()
        );
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
    fptgen_sim::files::check_new(&out, "the modules' archive")?;
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
    let mut samples: Vec<(Vec<i128>, Vec<i128>)> = train.inputs().into_iter().zip(targets.iter().cloned()).collect();
    let levels = match &o.noise {
        Noise::Clean => Vec::new(),
        Noise::Spread => sgm::default_noise(&model, &train),
        Noise::Levels(v) => v.clone(),
    };
    // Noisy copies, each with its own draws (as examples/mnist_noise's
    // --sgm-noise makes them).
    for (k, &sigma) in levels.iter().enumerate() {
        let noisy = data::noise::add_gaussian_noise(&model, &train, sigma, o.seed ^ 0x5C5C_0000 ^ (k as u64 + 1));
        samples.extend(noisy.inputs().into_iter().zip(targets.iter().cloned()));
    }
    let noise = match &o.noise {
        Noise::Clean => " (clean only: --clean)".to_string(),
        Noise::Spread => format!(" and copies with Gaussian input noise {levels:?} (the default spread: 0.1, 0.3, 0.6 and 0.9 times the span of the samples' input values; --clean for none), seed {}", o.seed),
        Noise::Levels(_) => format!(" and copies with Gaussian input noise {levels:?}, seed {}", o.seed),
    };
    println!(
        "fitting the synthetic-gradient modules of {} ({} module(s)) on {} samples: {} training samples from {}{noise}",
        model.name,
        shapes.len(),
        samples.len(),
        train.len(),
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
    let mut meta = vec![
        NamedArray { name: "meta/samples".into(), shape: vec![1], values: OutValues::U64(vec![samples.len() as u64]) },
        NamedArray { name: "meta/seed".into(), shape: vec![1], values: OutValues::U64(vec![o.seed]) },
        NamedArray { name: "meta/cosine".into(), shape: vec![reports.len()], values: OutValues::F64(reports.iter().map(|r| r.cosine).collect()) },
    ];
    if !levels.is_empty() {
        meta.push(NamedArray { name: "meta/noise".into(), shape: vec![levels.len()], values: OutValues::F64(levels.clone()) });
    }
    sgm::save(&model, &modules, &out, &meta)?;
    println!("wrote {}", out.display());
    Ok(())
}
