//! `fptgen train-es`: evolution-strategies training in the bit-accurate
//! simulator, exactly as the training hardware will do it on the device.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::anyhow;
use fptgen_sim::data::es::{accuracy, buffer, ratio, read_data, training_section};
use fptgen_sim::network::Network;
use fptgen_sim::tensor::{self, NamedArray, OutValues};
use fptgen_sim::train::device_trainer;
use fptgen_sim::weights;
use indicatif::{ProgressBar, ProgressStyle};

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
        super::check_iterations(k)?;
        training.iterations = k;
    }
    let out_path = match output {
        Some(p) => p.to_path_buf(),
        None => default_output(&model.weights_path),
    };
    // Refuse before training, not after: fptgen never replaces a file.
    let outputs: Vec<(&Path, &str)> = std::iter::once((out_path.as_path(), "the weights output (-o)")).chain(log.map(|l| (l, "--log"))).collect();
    fptgen_sim::files::check_new_all(&outputs)?;
    let data = read_data(&model, data_path)?;
    fptgen_sim::data::es::check_for_rule(&model, &training, &data, data_path)?;
    let m = training.buffer;
    let buffer = buffer(&model, m, &data, data_path)?;
    let net = Network::new(model.clone(), params)?;
    let mut trainer = device_trainer(net, training, buffer)?;
    let k = training.iterations;
    let steps = trainer.steps();
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
    println!("training {}: {}, {k} iterations, buffer {m} of {} samples", model.name, trainer.header(), data.inputs.len());
    let mut rows: Vec<(u64, u32, Option<f64>)> = Vec::new();
    let acc0 = accuracy(&trainer.current_network()?, &data)?;
    println!("iteration 0: {}", describe(trainer.buffer_loss(), acc0));
    rows.push((0, trainer.buffer_loss(), acc0.map(ratio)));

    let bar = ProgressBar::new(k.saturating_mul(steps.0));
    bar.set_style(
        ProgressStyle::with_template(&format!("{{wide_bar}} {{pos}}/{{len}} {}, iteration {{msg}}, {{elapsed}} elapsed, ETA {{eta}}", steps.1))
            .map_err(|e| anyhow!("progress bar template: {e}"))?,
    );
    for i in 1..=k {
        bar.set_message(format!("{i}/{k}"));
        let loss = trainer.run_steps(&mut || bar.inc(1))?;
        let acc = accuracy(&trainer.current_network()?, &data)?;
        bar.suspend(|| println!("iteration {i}: {}", describe(loss, acc)));
        rows.push((i, loss, acc.map(ratio)));
    }
    bar.finish_and_clear();

    let meta = [
        NamedArray { name: "meta/es_seed".into(), shape: vec![1], values: OutValues::U64(vec![training.seed]) },
        NamedArray { name: "meta/es_iterations".into(), shape: vec![1], values: OutValues::U64(vec![k]) },
    ];
    weights::save(&model, trainer.current_params(), &out_path, &meta)?;
    if let Some(log) = log {
        write_log(log, &rows)?;
    }
    let first = rows.first().map(|r| r.1).unwrap_or(0);
    println!(
        "wrote {} ({k} iterations, seed {}): buffer loss {first} -> {}{}",
        out_path.display(),
        training.seed,
        trainer.buffer_loss(),
        log.map(|l| format!(", log {}", l.display())).unwrap_or_default()
    );
    Ok(())
}

/// `<weights stem>.es.npz` beside the model's weights archive.
pub fn default_output(weights: &Path) -> PathBuf {
    let stem = weights.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_else(|| "weights".into());
    weights.with_file_name(format!("{stem}.es.npz"))
}

/// Writes the per-iteration log as CSV: iteration, loss, accuracy.
fn write_log(path: &Path, rows: &[(u64, u32, Option<f64>)]) -> anyhow::Result<()> {
    let mut text = String::from("iteration,loss,accuracy\n");
    for (i, loss, acc) in rows {
        text += &format!("{i},{loss},{}\n", acc.map(|a| a.to_string()).unwrap_or_default());
    }
    tensor::write_new(path, |mut f| f.write_all(text.as_bytes()))?;
    Ok(())
}
