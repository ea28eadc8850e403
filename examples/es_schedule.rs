//! The ES trainer's exact cycles per iteration on real data: the schedule
//! that `fptgen cosim --train` checks against the hardware, evaluated for a
//! training iteration on MNIST images (docs/results/kintex.md, "Evaluation
//! by difference").
//!
//! It runs the bit-accurate simulator's ES trainer for the model's own N,
//! P, M, noise and seed on a buffer of the first M test images (one-hot
//! targets, as `fptgen train-es`), and for every member of every group
//! counts the buffered samples whose trained layer's output the member
//! changes, as the hardware's difference unit decides it
//! (`fptgen_sim::train::difference::changed_samples`). With those counts
//! the generator's schedule (`TrainHwPlan::diff_group_cycles`, the formula
//! co-simulation compares with the hardware cycle by cycle) gives every
//! iteration's cycles; the full evaluation's and the worst case (every
//! member changing every sample) are printed beside them, with the time per
//! iteration per image at the model's clock.
//!
//! Run:
//!
//!     cargo run --release --example es_schedule -- \
//!         --model examples/mnist/model_ii56.yaml --data ../shared/data/mnist
//!
//! (`examples/mnist/get-data.sh DIR` fetches the data.) `--sigma 0.5`
//! buffers noisy images instead; `--iterations K` runs K iterations.

use std::path::PathBuf;

use anyhow::{bail, Context};
use clap::Parser;
use fptgen_generator::plan::plan;
use fptgen_sim::data;
use fptgen_sim::model;
use fptgen_sim::network::Network;
use fptgen_sim::train::difference::changed_counts;
use fptgen_sim::train::{Buffer, EvalMode, Trainer};
use fptgen_sim::weights::{self, Conversion};

/// Options.
#[derive(Parser)]
struct Args {
    /// The model file (its training section gives N, P, M, the noise and the seed).
    #[arg(long)]
    model: PathBuf,
    /// The MNIST directory (IDX files).
    #[arg(long)]
    data: PathBuf,
    /// Iterations to run.
    #[arg(long, default_value_t = 1)]
    iterations: u64,
    /// Gaussian noise added to the buffered images (standard deviation in
    /// units of full scale, `fptgen_sim::data::noise::add_gaussian_noise`,
    /// seed 1); 0 keeps them clean.
    #[arg(long, default_value_t = 0.0)]
    sigma: f64,
}

fn main() -> anyhow::Result<()> {
    let a = Args::parse();
    let m = model::load(&a.model)?;
    let params = weights::load(&m, Conversion::Exact)?;
    let t = data::es::training_section(&m).with_context(|| format!("{}: no ES training section", a.model.display()))?;
    let hw = plan(&m).trainer.with_context(|| format!("{}: no ES trainer", a.model.display()))?;
    let splits = data::load_dir(&m, &a.data)?;
    let test = if a.sigma > 0.0 { data::noise::add_gaussian_noise(&m, &splits.test, a.sigma, 1) } else { splits.test };
    if test.len() < t.buffer {
        bail!("{}: {} test images, the buffer needs {}", a.data.display(), test.len(), t.buffer);
    }
    let labels: Vec<usize> = test.labels()[..t.buffer].to_vec();
    let targets = data::es::label_targets(&m, &a.data, &labels)?;
    let inputs: Vec<Vec<i128>> = test.inputs()[..t.buffer].to_vec();
    let buffer = Buffer::new(&m, inputs.clone(), targets)?;
    let net = Network::new(m.clone(), params.clone())?;
    let mut trainer = Trainer::with_training(net, t, buffer, EvalMode::Batched)?;
    let sigma = trainer.training().perturb_shift;
    let mut records = Vec::new();
    trainer.run(a.iterations, &mut |r| records.push(r.clone()))?;

    let clock_ns = m.clock_period_ns;
    let ms_per_image = |cycles: u64| cycles as f64 * clock_ns / 1e6 / t.buffer as f64;
    println!(
        "{}: N = {}, P = {}, M = {} (test images 0..M, noise sigma {}), {} groups, evaluation {} ({})",
        a.model.display(),
        hw.n,
        hw.p,
        hw.m,
        a.sigma,
        hw.g,
        hw.evaluation.mode,
        hw.evaluation.reason
    );
    let Some(diff) = hw.diff.as_ref() else {
        println!("full evaluation: {} cycles per iteration, {:.3} ms per iteration per image", hw.cycles_per_iteration, ms_per_image(hw.cycles_per_iteration));
        return Ok(());
    };
    // Per group, in order: the samples each member changes.
    let counts = changed_counts(&m, &params, &records, sigma, &inputs)?;
    let mut per_iteration = vec![0u64; a.iterations as usize];
    let members: usize = counts.iter().map(Vec::len).sum();
    let changed_total: usize = counts.iter().flatten().sum();
    let mut hist = vec![0usize; hw.m + 1];
    for (r, c) in records.iter().zip(&counts) {
        for &k in c {
            hist[k] += 1;
        }
        per_iteration[r.iteration as usize] += hw.diff_group_cycles(diff, r.group, hw.tg(r.group), c);
    }
    let full: u64 = (0..hw.g as usize).map(|g| hw.group_cycles(hw.tg(g))).sum();
    println!("samples a member changes: {:.2} of {} on average over {members} members", changed_total as f64 / members as f64, hw.m);
    let median = {
        let mut acc = 0;
        (0..=hw.m).find(|&c| {
            acc += hist[c];
            2 * acc >= members
        })
    };
    println!("median {median:?}, most {}", (0..=hw.m).rev().find(|&c| hist[c] > 0).unwrap_or(0));
    println!("| iteration | cycles by difference | ms per iteration per image |");
    println!("|---:|---:|---:|");
    for (k, &c) in per_iteration.iter().enumerate() {
        println!("| {k} | {c} | {:.3} |", ms_per_image(c));
    }
    println!("fill after ctl_start (once, before iteration 0's first group): {} cycles", hw.fill_cycles);
    println!(
        "every sample changed (the most): {} cycles, {:.3} ms; full evaluation: {} cycles, {:.3} ms (per iteration, per image)",
        hw.cycles_per_iteration,
        ms_per_image(hw.cycles_per_iteration),
        full,
        ms_per_image(full)
    );
    Ok(())
}
