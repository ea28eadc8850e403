//! `fptgen train MODEL --teacher ORIGINAL.onnx`: block-wise distillation
//! (seed 004, the mean-squared-error form) of the layers an approximate
//! import wrote (`distill.yaml` beside the model file).
//!
//! The data flows one way: this command evaluates the teacher (the ONNX
//! graph, exactly, by the generator's reference evaluator) on the network
//! inputs, hands each block its teacher inputs and targets as arrays, and
//! the simulator's trainer (`fptgen_sim::qat::distill`) trains the block's
//! layers alone.

use std::io::Write;
use std::path::Path;

use anyhow::{anyhow, bail, Context};
use fptgen_import::distill::{self, Pair};
use fptgen_sim::data;
use fptgen_sim::fixed::Format;
use fptgen_sim::model::Model;
use fptgen_sim::qat::distill::{block_mse, check_block, random_inputs, BlockData};
use fptgen_sim::qat::{Loss, Qat, QatConfig};
use fptgen_sim::tensor::{self, NamedArray, OutValues};
use fptgen_sim::weights;

/// Options of `fptgen train --teacher`.
#[derive(Debug, Clone)]
pub struct Options<'a> {
    /// Epochs per block.
    pub epochs: usize,
    /// Samples per step.
    pub batch: usize,
    /// Adam's initial step size.
    pub lr: f32,
    /// Seeds the random inputs and the shuffling.
    pub seed: u64,
    /// A data directory (train's forms), or `None` for random inputs.
    pub data: Option<&'a Path>,
    /// With `data`: training samples held out (from the end).
    pub validation: usize,
    /// Without `data`: random training inputs (and a quarter as many
    /// held-out ones).
    pub samples: usize,
    /// Where to write the weights (default: the model's weights archive).
    pub output: Option<&'a Path>,
    /// Per-epoch CSV log.
    pub log: Option<&'a Path>,
}

/// Per sample, codes.
type Codes = Vec<Vec<i128>>;

/// Stream of the held-out random inputs (the training ones use the seed).
const HELD_OUT_STREAM: u64 = 0x4E1D_0D7D;

/// Runs `fptgen train --teacher`.
pub fn run(model_path: &Path, teacher: &Path, o: &Options) -> anyhow::Result<()> {
    let (model, mut params) = super::load(model_path, false)?;
    if !(o.lr.is_finite() && o.lr > 0.0) {
        bail!("--lr is {}; it must be a positive number", o.lr);
    }
    let out = o.output.unwrap_or(&model.weights_path).to_path_buf();
    let outputs: Vec<(&Path, &str)> = std::iter::once((out.as_path(), "the weights output (-o)")).chain(o.log.map(|l| (l, "--log"))).collect();
    fptgen_sim::files::check_new_all(&outputs)?;
    let record_path = model_path.parent().unwrap_or(Path::new(".")).join(distill::FILE);
    if !record_path.exists() {
        bail!(
            "{}: no distillation record beside the model file; `fptgen import --lower approximate` writes it (docs/import.md)",
            record_path.display()
        );
    }
    let record = distill::read(&record_path).map_err(|e| anyhow!(e))?;
    if record.blocks.is_empty() {
        bail!("{}: lists no blocks; nothing to distill", record_path.display());
    }
    let blocks: Vec<Vec<usize>> = record
        .blocks
        .iter()
        .map(|b| {
            b.layers
                .iter()
                .map(|name| {
                    model.layers.iter().position(|l| &l.name == name).ok_or_else(|| {
                        anyhow!("{}: block of node '{}' names layer '{name}', which {} does not have", record_path.display(), b.node, model_path.display())
                    })
                })
                .collect::<anyhow::Result<Vec<usize>>>()
        })
        .collect::<anyhow::Result<_>>()?;
    let (train_inputs, held_inputs, from) = inputs(&model, o)?;
    println!(
        "distilling {} block by block against {}: {} training and {} held-out inputs ({from}); {} epochs per block, batch {}, lr {}, seed {}",
        record.blocks.len(),
        teacher.display(),
        train_inputs.len(),
        held_inputs.len(),
        o.epochs,
        o.batch,
        o.lr,
        o.seed
    );
    let all: Vec<Vec<i128>> = train_inputs.iter().chain(&held_inputs).cloned().collect();
    let values = distill::teacher_values(teacher, &record, &all, model.input_format, &model.input_shape)?;
    let n_train = train_inputs.len();
    let mut meta = vec![
        NamedArray { name: "meta/distill_seed".into(), shape: vec![1], values: OutValues::U64(vec![o.seed]) },
        NamedArray { name: "meta/distill_epochs".into(), shape: vec![1], values: OutValues::U64(vec![o.epochs as u64]) },
    ];
    let mut rows = Vec::new();
    let mut mse = Vec::new();
    for (k, ((b, layers), pairs)) in record.blocks.iter().zip(&blocks).zip(&values).enumerate() {
        let in_format = model.layers[layers[0]].input_format;
        let in_len: usize = b.input.shape.iter().product();
        let out_len: usize = b.output.shape.iter().product();
        check_block(&model, layers, in_len, out_len).map_err(|e| anyhow!("{}: block of node '{}': {e}", record_path.display(), b.node))?;
        let (xs, ts) = block_arrays(pairs, in_format).with_context(|| format!("block of node '{}', teacher tensor '{}'", b.node, b.input.tensor))?;
        let train = BlockData { inputs: &xs[..n_train], targets: &ts[..n_train] };
        let held = BlockData { inputs: &xs[n_train..], targets: &ts[n_train..] };
        let before = block_mse(&model, &params, layers, held);
        let config = QatConfig { batch: o.batch, lr: o.lr, total_epochs: o.epochs, seed: o.seed.wrapping_add(k as u64), loss: Loss::Mse };
        let mut qat = Qat::from_params(model.clone(), &params, config, false);
        for e in 1..=o.epochs {
            let loss = qat.distill_epoch(layers, train, &mut |_| {});
            rows.push((k + 1, e, loss));
        }
        params = qat.params();
        let after = block_mse(&model, &params, layers, held);
        println!(
            "block {} (layers {} for node '{}' ({})): held-out MSE {before:.6} before, {after:.6} after",
            k + 1,
            b.layers.join(", "),
            b.node,
            b.op
        );
        mse.push(before);
        mse.push(after);
    }
    meta.push(NamedArray { name: "meta/distill_mse_before_after".into(), shape: vec![record.blocks.len(), 2], values: OutValues::F64(mse) });
    weights::save(&model, &params, &out, &meta)?;
    if let Some(log) = o.log {
        let mut text = String::from("block,epoch,loss\n");
        for (b, e, l) in &rows {
            text += &format!("{b},{e},{l}\n");
        }
        tensor::write_new(log, |mut f| f.write_all(text.as_bytes()))?;
    }
    println!("wrote {}", out.display());
    Ok(())
}

/// The training and held-out network inputs: the data directory's training
/// samples (the last `validation` held out), or seeded random codes of the
/// input format (`samples`, and a quarter as many held out, at least 1).
fn inputs(model: &Model, o: &Options) -> anyhow::Result<(Codes, Codes, String)> {
    if let Some(dir) = o.data {
        let splits = data::load_dir(model, dir)?;
        let (train, val) = splits.train.split_last(o.validation).ok_or_else(|| {
            anyhow!("--validation {} is more than the {} training samples in {}", o.validation, splits.train.len(), dir.display())
        })?;
        if train.is_empty() || val.is_empty() {
            bail!("{}: --validation {} leaves {} training and {} held-out samples; both must be at least 1", dir.display(), o.validation, train.len(), val.len());
        }
        let take = |d: &data::Dataset| (0..d.len()).map(|i| d.input(i).to_vec()).collect::<Vec<_>>();
        return Ok((take(&train), take(&val), format!("{}", dir.display())));
    }
    let n: usize = model.input_shape.iter().product();
    let train = random_inputs(model.input_format, n, o.samples, o.seed);
    let held = random_inputs(model.input_format, n, (o.samples / 4).max(1), o.seed ^ HELD_OUT_STREAM);
    Ok((train, held, "seeded random inputs, uniform over the input format's codes".into()))
}

/// A block's inputs as codes of `format` and its targets as real values.
fn block_arrays(pairs: &[Pair], format: Format) -> anyhow::Result<(Codes, Vec<Vec<f32>>)> {
    let (lo, hi) = (format.lossless_min_raw().min(format.max_raw()), format.max_raw());
    let mut xs = Vec::with_capacity(pairs.len());
    let mut ts = Vec::with_capacity(pairs.len());
    for p in pairs {
        let x = p
            .input
            .iter()
            .map(|v| v.at(format.frac_bits()).filter(|c| (lo..=hi).contains(c)))
            .collect::<Option<Vec<i128>>>()
            .ok_or_else(|| anyhow!("the teacher's value is not a value of the block's input format {format}"))?;
        xs.push(x);
        ts.push(p.output.iter().map(|v| v.approx() as f32).collect());
    }
    Ok((xs, ts))
}
