//! `fptgen train-es`: evolution-strategies training in the bit-accurate
//! simulator, exactly as the training hardware will do it on the device.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{anyhow, bail};
use fptgen_sim::fixed::Format;
use fptgen_sim::model::{Model, Training};
use fptgen_sim::network::Network;
use fptgen_sim::qat::argmax;
use fptgen_sim::tensor::{self, unravel, Array, NamedArray, OutValues, Values};
use fptgen_sim::train::{Buffer, EvalMode, Trainer};
use fptgen_sim::{weights, TensorError};
use indicatif::{ProgressBar, ProgressStyle};

/// The training data: every sample's raw input codes and raw target codes,
/// and the class labels when the archive has them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Data {
    /// Raw codes of the input format, one vector per sample.
    pub inputs: Vec<Vec<i128>>,
    /// Raw codes of the output format, one vector per sample.
    pub targets: Vec<Vec<i128>>,
    /// Class index per sample, if the archive has `labels`.
    pub labels: Option<Vec<usize>>,
}

/// Runs `fptgen train-es`.
pub fn run(
    model_path: &Path,
    data_path: &Path,
    iterations: Option<u64>,
    output: Option<&Path>,
    log: Option<&Path>,
    quantize: bool,
) -> anyhow::Result<()> {
    let (model, params) = super::load(model_path, quantize)?;
    let mut training = training_section(&model)?;
    if let Some(k) = iterations {
        check_iterations(k)?;
        training.iterations = k;
    }
    let out_path = match output {
        Some(p) => p.to_path_buf(),
        None => default_output(&model.weights_path),
    };
    // Refuse before training, not after: fptgen never replaces a file.
    for p in std::iter::once(out_path.as_path()).chain(log) {
        if p.exists() {
            bail!("{}: already exists; fptgen does not overwrite files, remove it or choose another path", p.display());
        }
    }
    if log == Some(out_path.as_path()) {
        bail!("--log and the weights output are the same file {}", out_path.display());
    }
    let data = read_data(&model, data_path)?;
    let m = training.buffer;
    let buffer = buffer(&model, m, &data, data_path)?;
    let net = Network::new(model.clone(), params)?;
    let mut trainer = Trainer::with_training(net, training, buffer, EvalMode::Cached)?;
    let k = training.iterations;
    let groups = trainer.groups() as u64;
    let out_format = model.output_format();
    let per_output = (m * model.output_len()) as f64;
    let describe = |loss: u32, acc: Option<(usize, usize)>| -> String {
        let saturated = if loss == u32::MAX { " (saturated)" } else { "" };
        let mut s = format!("loss {loss}{saturated} (mean |error| {:.6} per output)", out_format.to_f64(1) * f64::from(loss) / per_output);
        if let Some((right, total)) = acc {
            s += &format!(", accuracy {:.2}% ({right}/{total})", 100.0 * right as f64 / total.max(1) as f64);
        }
        s
    };
    println!(
        "training {}: {} of {} parameters, {} groups of {} blocks, {} members, {k} iterations, buffer {m} of {} samples",
        model.name,
        trainer.order().len(),
        model.params(),
        groups,
        training.blocks,
        training.population,
        data.inputs.len()
    );
    let mut rows: Vec<(u64, u32, Option<f64>)> = Vec::new();
    let acc0 = accuracy(&trainer.network()?, &data)?;
    println!("iteration 0: {}", describe(trainer.loss(), acc0));
    rows.push((0, trainer.loss(), acc0.map(ratio)));

    let bar = ProgressBar::new(k.saturating_mul(groups));
    bar.set_style(
        ProgressStyle::with_template("{wide_bar} {pos}/{len} groups, iteration {msg}, {elapsed} elapsed, ETA {eta}")
            .map_err(|e| anyhow!("progress bar template: {e}"))?,
    );
    for i in 1..=k {
        bar.set_message(format!("{i}/{k}"));
        let loss = trainer.run_iteration(&mut |_| bar.inc(1))?;
        let acc = accuracy(&trainer.network()?, &data)?;
        bar.suspend(|| println!("iteration {i}: {}", describe(loss, acc)));
        rows.push((i, loss, acc.map(ratio)));
    }
    bar.finish_and_clear();

    let meta = [
        NamedArray { name: "meta/es_seed".into(), shape: vec![1], values: OutValues::U64(vec![training.seed]) },
        NamedArray { name: "meta/es_iterations".into(), shape: vec![1], values: OutValues::U64(vec![k]) },
    ];
    weights::save(&model, trainer.params(), &out_path, &meta)?;
    if let Some(log) = log {
        write_log(log, &rows)?;
    }
    let first = rows.first().map(|r| r.1).unwrap_or(0);
    println!(
        "wrote {} ({k} iterations, seed {}): buffer loss {first} -> {}{}",
        out_path.display(),
        training.seed,
        trainer.loss(),
        log.map(|l| format!(", log {}", l.display())).unwrap_or_default()
    );
    Ok(())
}

/// `<weights stem>.es.npz` beside the model's weights archive.
pub fn default_output(weights: &Path) -> PathBuf {
    let stem = weights.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_else(|| "weights".into());
    weights.with_file_name(format!("{stem}.es.npz"))
}

/// The model's `training:` section, or the error for a model without one.
pub(crate) fn training_section(model: &Model) -> anyhow::Result<Training> {
    model.training.ok_or_else(|| {
        anyhow!(
            "{}: the model file has no `training:` section; add one to train (see docs/training.md)",
            model.source.display()
        )
    })
}

/// Checks an `--iterations` value: 1 to 2^32 - 1, as the model file's.
pub(crate) fn check_iterations(k: u64) -> anyhow::Result<()> {
    if k == 0 || k > u64::from(u32::MAX) {
        bail!("--iterations is {k}; it must be between 1 and {}", u32::MAX);
    }
    Ok(())
}

/// The training buffer: the first `m` samples of `data` (read from
/// `data_path`), or an error naming `x` if there are fewer.
pub(crate) fn buffer(model: &Model, m: usize, data: &Data, data_path: &Path) -> anyhow::Result<Buffer> {
    if data.inputs.len() < m {
        bail!(TensorError::tensor(
            data_path,
            "x",
            format!("holds {} samples but the training buffer needs {m} (training: buffer)", data.inputs.len())
        ));
    }
    Ok(Buffer::new(model, data.inputs[..m].to_vec(), data.targets[..m].to_vec())?)
}

/// Correct over all, as a fraction.
pub(crate) fn ratio((right, total): (usize, usize)) -> f64 {
    right as f64 / total.max(1) as f64
}

/// Correct argmax predictions of `net` on all samples, when there are
/// labels. The argmax is over raw output codes; a tie goes to the lowest
/// index.
pub(crate) fn accuracy(net: &Network, data: &Data) -> anyhow::Result<Option<(usize, usize)>> {
    let Some(labels) = &data.labels else {
        return Ok(None);
    };
    let outs = net.infer_batch(&data.inputs)?;
    let right = outs.iter().zip(labels).filter(|(y, &l)| argmax(y) == Some(l)).count();
    Ok(Some((right, labels.len())))
}

fn write_log(path: &Path, rows: &[(u64, u32, Option<f64>)]) -> anyhow::Result<()> {
    let mut text = String::from("iteration,loss,accuracy\n");
    for (i, loss, acc) in rows {
        text += &format!("{i},{loss},{}\n", acc.map(|a| a.to_string()).unwrap_or_default());
    }
    tensor::write_new(path, |mut f| f.write_all(text.as_bytes()))?;
    Ok(())
}

/// Reads the training data archive: `x` (float inputs `[S, ...input
/// shape]` or `[S, inputs]`, converted to the input format with its
/// quantization and overflow modes), and `t` (float targets `[S, outputs]`)
/// or `labels` (integer class indices, one per sample; one-hot targets 1.0/0.0) or
/// both (then `t` are the targets and `labels` only score accuracy).
///
/// Targets are converted to the output format with its quantization mode; a
/// target outside the format's range is an error rather than wrapped or
/// saturated. `meta/...` arrays are ignored; any other array is an error.
pub fn read_data(model: &Model, path: &Path) -> anyhow::Result<Data> {
    let mut arrays = tensor::read_npz(path)?;
    let n_in = model.input_len();
    let n_out = model.output_len();
    let x = arrays.remove("x").ok_or_else(|| {
        TensorError::tensor(path, "x", format!("is missing from the archive; it holds the input samples [S, {n_in}]"))
    })?;
    let per_sample_ok = x.shape.len() >= 2
        && (x.shape[1..] == model.input_shape[..] || (x.shape.len() == 2 && x.shape[1] == n_in));
    if !per_sample_ok {
        bail!(TensorError::tensor(
            path,
            "x",
            format!("has shape {:?}; expected [S, {n_in}] or [S, {:?}] for model '{}'", x.shape, model.input_shape, model.name)
        ));
    }
    let s = x.shape[0];
    if s == 0 {
        bail!(TensorError::tensor(path, "x", "holds no samples"));
    }
    let xv = floats(path, "x", &x)?;
    let mut inputs = Vec::with_capacity(s);
    for (si, chunk) in xv.chunks(n_in).enumerate() {
        let mut raw = Vec::with_capacity(n_in);
        for (i, &v) in chunk.iter().enumerate() {
            let r = model.input_format.quantize_f64(v).map_err(|e| {
                TensorError::value(path, "x", unravel(si * n_in + i, &x.shape), format!("value {v}: {e}"))
            })?;
            raw.push(r);
        }
        inputs.push(raw);
    }
    let labels = match arrays.remove("labels") {
        None => None,
        Some(a) => Some(read_labels(path, &a, s, n_out)?),
    };
    let out = model.output_format();
    let targets = match arrays.remove("t") {
        Some(t) => {
            if t.shape != [s, n_out] {
                bail!(TensorError::tensor(path, "t", format!("has shape {:?}; expected [{s}, {n_out}] (samples of x, outputs)", t.shape)));
            }
            let tv = floats(path, "t", &t)?;
            let mut targets = Vec::with_capacity(s);
            for (si, chunk) in tv.chunks(n_out).enumerate() {
                let mut raw = Vec::with_capacity(n_out);
                for (o, &v) in chunk.iter().enumerate() {
                    let r = target_code(out, v).map_err(|m| TensorError::value(path, "t", vec![si, o], m))?;
                    raw.push(r);
                }
                targets.push(raw);
            }
            targets
        }
        None => {
            let Some(labels) = &labels else {
                bail!(TensorError::file(
                    path,
                    format!("has neither 't' (float targets [S, {n_out}]) nor 'labels' (integer class indices [S])")
                ));
            };
            let one = target_code(out, 1.0).map_err(|m| {
                TensorError::tensor(path, "labels", format!("one-hot targets need 1.0 in the output format, but {m}; give float targets in 't' instead"))
            })?;
            let zero = target_code(out, 0.0).map_err(|m| TensorError::tensor(path, "labels", format!("one-hot targets need 0.0: {m}")))?;
            labels.iter().map(|&l| (0..n_out).map(|o| if o == l { one } else { zero }).collect()).collect()
        }
    };
    if let Some(extra) = arrays.keys().find(|k| !k.starts_with("meta/")) {
        bail!(TensorError::tensor(path, extra, "is not a training data array; expected x, t and/or labels (and meta/...)"));
    }
    Ok(Data { inputs, targets, labels })
}

/// An array's float values, or an error naming it.
fn floats<'a>(path: &Path, name: &str, a: &'a Array) -> anyhow::Result<&'a [f64]> {
    match &a.values {
        Values::Float(v) => {
            if let Some(i) = v.iter().position(|x| !x.is_finite()) {
                bail!(TensorError::value(path, name, unravel(i, &a.shape), format!("value {} is not finite", v[i])));
            }
            Ok(v)
        }
        Values::Int(_) => bail!(TensorError::tensor(path, name, format!("has integer type {}; give float32 or float64 values", a.dtype))),
    }
}

/// A target value as a raw code of the output format `f`: quantized with
/// its quantization mode; out of its range is an error.
fn target_code(f: Format, v: f64) -> Result<i128, String> {
    let c = f.convert_f64(v).map_err(|e| format!("value {v}: {e}"))?;
    if c.overflowed {
        return Err(format!(
            "value {v} is outside the range of the output format {f} [{}, {}]",
            f.to_decimal(f.lossless_min_raw()),
            f.to_decimal(f.max_raw())
        ));
    }
    Ok(c.raw)
}

fn read_labels(path: &Path, a: &Array, s: usize, n_out: usize) -> anyhow::Result<Vec<usize>> {
    if a.shape != [s] {
        bail!(TensorError::tensor(path, "labels", format!("has shape {:?}; expected [{s}] (one class index per sample of x)", a.shape)));
    }
    let Values::Int(v) = &a.values else {
        bail!(TensorError::tensor(path, "labels", format!("has float type {}; labels must be integer class indices", a.dtype)));
    };
    v.iter()
        .enumerate()
        .map(|(i, &l)| {
            usize::try_from(l).ok().filter(|&l| l < n_out).ok_or_else(|| {
                TensorError::value(path, "labels", vec![i], format!("class {l} is not an output index (0 to {})", n_out - 1)).into()
            })
        })
        .collect()
}
