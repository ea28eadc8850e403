//! `fptgen train`: quantization-aware training on the host
//! (`fptgen_sim::qat`), scored in the bit-accurate simulator.

use std::io::Write;
use std::path::Path;
use std::time::Instant;

use anyhow::{anyhow, bail};
use fptgen_sim::data::{self, Dataset};
use fptgen_sim::network::Network;
use fptgen_sim::qat::{self, Loss, Qat, QatConfig};
use fptgen_sim::tensor::{self, NamedArray, OutValues};
use fptgen_sim::weights;
use indicatif::{ProgressBar, ProgressStyle};

/// Options of `fptgen train` besides the model and the data.
#[derive(Debug, Clone)]
pub struct Options<'a> {
    /// Epochs over the training set.
    pub epochs: usize,
    /// Samples per step.
    pub batch: usize,
    /// Adam's initial step size.
    pub lr: f32,
    /// The loss.
    pub loss: Loss,
    /// Seeds initialization and shuffling.
    pub seed: u64,
    /// Samples held out from the end of the training set for validation.
    pub validation: usize,
    /// Use only the first this many training samples (after the hold-out).
    pub limit: Option<usize>,
    /// Where to write the weights (default: the model's weights archive).
    pub output: Option<&'a Path>,
    /// Per-epoch CSV log.
    pub log: Option<&'a Path>,
}

/// Runs `fptgen train`.
pub fn run(model_path: &Path, data_dir: &Path, o: &Options) -> anyhow::Result<()> {
    let model = fptgen_sim::model::load(model_path)?;
    if o.epochs == 0 || o.batch == 0 {
        bail!("--epochs and --batch must be at least 1");
    }
    if !(o.lr.is_finite() && o.lr > 0.0) {
        bail!("--lr is {}; it must be a positive number", o.lr);
    }
    let out = o.output.unwrap_or(&model.weights_path).to_path_buf();
    let outputs: Vec<(&Path, &str)> = std::iter::once((out.as_path(), "the weights output (-o)")).chain(o.log.map(|l| (l, "--log"))).collect();
    fptgen_sim::files::check_new_all(&outputs)?;
    let splits = data::load_dir(&model, data_dir)?;
    let (train, val) = splits.train.split_last(o.validation).ok_or_else(|| {
        anyhow!("--validation {} is more than the {} training samples in {}", o.validation, splits.train.len(), data_dir.display())
    })?;
    let train = match o.limit {
        Some(n) if n < train.len() => train.slice(0..n),
        _ => train,
    };
    if train.is_empty() {
        bail!("no training samples left after holding out --validation {}", o.validation);
    }
    let test = splits.test;
    println!(
        "training {} on the host: {} training, {} validation, {} test samples from {}; {} epochs, batch {}, lr {}, loss {}, seed {}",
        model.name,
        train.len(),
        val.len(),
        test.len(),
        data_dir.display(),
        o.epochs,
        o.batch,
        o.lr,
        loss_name(o.loss),
        o.seed
    );
    let config = QatConfig { batch: o.batch, lr: o.lr, total_epochs: o.epochs, seed: o.seed, loss: o.loss };
    let mut qat = Qat::new(model.clone(), config);
    let bar = ProgressBar::new((o.epochs * train.len()) as u64);
    bar.set_style(
        ProgressStyle::with_template("{wide_bar} epoch {msg}, {pos}/{len} samples, {elapsed} elapsed, ETA {eta}")
            .map_err(|e| anyhow!("progress bar template: {e}"))?,
    );
    let mut rows = Vec::new();
    let start = Instant::now();
    for e in 1..=o.epochs {
        bar.set_message(format!("{e}/{}", o.epochs));
        let base = ((e - 1) * train.len()) as u64;
        let loss = qat.epoch(&train, &mut |done| bar.set_position(base + done as u64));
        let net = qat.network()?;
        let va = score(&net, &val)?;
        bar.suspend(|| {
            println!(
                "epoch {e}: training loss {loss:.5}, validation accuracy {} ({:.0} s)",
                percent(va, val.len()),
                start.elapsed().as_secs_f64()
            )
        });
        rows.push((e, loss, va.map(|r| r as f64 / val.len() as f64)));
    }
    bar.finish_and_clear();
    let net = qat.network()?;
    let right = score(&net, &test)?;
    println!("test accuracy (bit-accurate simulator): {}", percent(right, test.len()));
    let params = qat.params();
    let mut meta = vec![
        NamedArray { name: "meta/train_seed".into(), shape: vec![1], values: OutValues::U64(vec![o.seed]) },
        NamedArray { name: "meta/train_epochs".into(), shape: vec![1], values: OutValues::U64(vec![o.epochs as u64]) },
    ];
    if let Some(r) = right {
        meta.push(NamedArray {
            name: "meta/test_accuracy".into(),
            shape: vec![1],
            values: OutValues::F64(vec![r as f64 / test.len() as f64]),
        });
    }
    weights::save(&model, &params, &out, &meta)?;
    if let Some(log) = o.log {
        let mut text = String::from("epoch,loss,validation_accuracy\n");
        for (e, l, a) in &rows {
            text += &format!("{e},{l},{}\n", a.map(|a| a.to_string()).unwrap_or_default());
        }
        tensor::write_new(log, |mut f| f.write_all(text.as_bytes()))?;
    }
    println!("wrote {}", out.display());
    Ok(())
}

fn loss_name(l: Loss) -> &'static str {
    match l {
        Loss::Mae => "mae",
        Loss::Mse => "mse",
        Loss::CrossEntropy => "cross-entropy",
    }
}

/// Correct predictions in the bit-accurate simulator (`None` for an empty set).
fn score(net: &Network, data: &Dataset) -> anyhow::Result<Option<usize>> {
    if data.is_empty() {
        return Ok(None);
    }
    Ok(Some(qat::accuracy(net, data)?))
}

fn percent(right: Option<usize>, total: usize) -> String {
    match right {
        Some(r) => format!("{:.2}% ({r}/{total})", 100.0 * r as f64 / total as f64),
        None => "n/a (no samples)".into(),
    }
}
