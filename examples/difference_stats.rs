//! How much of the network a member of ES actually changes: the numbers
//! behind the design of evaluation by difference in hardware
//! (docs/training.md, "Evaluation by difference in hardware").
//!
//! For the MNIST example (fc1 trainable) it takes the training buffer (the
//! first M test images with their one-hot targets), draws members' noise
//! with the trainer's own noise sources (block `j` seeded as the trainer
//! seeds it) and perturbs a group's parameters as the trainer does
//! (`w + (e << perturb_shift)`, clamped to the format). For every member
//! and buffered sample it compares the perturbed network's layer outputs
//! with the committed ones, and prints, per layer, how many outputs differ
//! and on how many samples any output differs. Every number is a count of
//! the bit-accurate simulator's outputs; nothing is estimated.
//!
//! Run:
//!
//!     cargo run --release --example difference_stats -- \
//!         --model examples/mnist/model_ii56.yaml --data ../shared/data/mnist
//!
//! (`examples/mnist/get-data.sh DIR` fetches the data; 16 s on 2 cores with
//! `--groups 157 --members 20`). `--sigma 0.5` buffers noisy images instead.

use std::path::PathBuf;

use anyhow::{bail, Context};
use clap::Parser;
use fptgen_sim::data;
use fptgen_sim::model;
use fptgen_sim::network::Network;
use fptgen_sim::train::order::clamp_range;
use fptgen_sim::train::{trainable_params, Buffer, NoiseSource};
use fptgen_sim::weights::{self, Conversion};
use rayon::prelude::*;

/// Options.
#[derive(Parser)]
struct Args {
    /// The model file (its training section gives N, P, M, the noise and the seed).
    #[arg(long)]
    model: PathBuf,
    /// The MNIST directory (IDX files).
    #[arg(long)]
    data: PathBuf,
    /// How many groups to sample, spread evenly over the parameter order.
    #[arg(long, default_value_t = 8)]
    groups: usize,
    /// Members per group (at most the population).
    #[arg(long, default_value_t = 10)]
    members: usize,
    /// Gaussian noise added to the buffered images (standard deviation in
    /// units of full scale, seed 003's sensor drift:
    /// `fptgen_sim::data::noise::add_gaussian_noise`, seed 1); 0 keeps them clean.
    #[arg(long, default_value_t = 0.0)]
    sigma: f64,
}

fn main() -> anyhow::Result<()> {
    let a = Args::parse();
    let m = model::load(&a.model)?;
    let params = weights::load(&m, Conversion::Exact)?;
    let t = data::es::training_section(&m).with_context(|| format!("{}: no ES training section", a.model.display()))?;
    let splits = data::load_dir(&m, &a.data)?;
    let test = if a.sigma > 0.0 { data::noise::add_gaussian_noise(&m, &splits.test, a.sigma, 1) } else { splits.test };
    if test.len() < t.buffer {
        bail!("{}: {} test images, the buffer needs {}", a.data.display(), test.len(), t.buffer);
    }
    let labels: Vec<usize> = test.labels()[..t.buffer].to_vec();
    let targets = data::es::label_targets(&m, &a.data, &labels)?;
    let inputs: Vec<Vec<i128>> = test.inputs()[..t.buffer].to_vec();
    let buffer = Buffer::new(&m, inputs, targets)?;
    let net = Network::new(m.clone(), params.clone())?;
    let committed: Vec<Vec<Vec<i128>>> = buffer.inputs().par_iter().map(|x| net.trace(x)).collect::<Result<_, _>>()?;
    let order = trainable_params(&m);
    let p = t.blocks;
    let n_groups = order.len().div_ceil(p);
    let members = a.members.min(t.population);
    let layers = m.layers.len();
    println!(
        "{}: {} trainable parameters in {} groups of P = {}; buffer M = {} (test images 0..M, noise sigma {}); perturb_shift {}; sampling {} groups x {} members",
        a.model.display(),
        order.len(),
        n_groups,
        p,
        t.buffer,
        a.sigma,
        t.perturb_shift,
        a.groups.min(n_groups),
        members
    );
    // Per layer: outputs that differ (summed over members and samples),
    // samples with any difference; and samples whose loss input (the last
    // layer's output) differs.
    let mut changed_outputs = vec![0u64; layers];
    let mut changed_samples = vec![0u64; layers];
    let mut worst_samples = vec![0usize; layers];
    let mut rows_touched = Vec::new();
    // Per sampled member: its group and the samples whose first trainable
    // layer's output differs (those a difference evaluator must carry on).
    let mut per_member: Vec<(usize, usize)> = Vec::new();
    let mut evaluated = 0u64;
    for k in 0..a.groups.min(n_groups) {
        let g = k * n_groups / a.groups.min(n_groups);
        let refs = &order[g * p..((g + 1) * p).min(order.len())];
        let mut rows = Vec::new();
        for r in refs {
            r.affected(&m, &mut rows);
        }
        rows.sort_unstable();
        rows.dedup();
        rows_touched.push((g, rows.len()));
        let mut sources: Vec<NoiseSource> = (0..refs.len()).map(|j| NoiseSource::seeded(&t.noise, t.seed, j)).collect();
        for _ in 0..members {
            let mut q = params.clone();
            for (j, r) in refs.iter().enumerate() {
                let (lo, hi) = clamp_range(&r.format(&m));
                let e = sources[j].draw();
                r.set(&mut q, r.get(&params).saturating_add(i128::from(e) << t.perturb_shift).clamp(lo, hi));
            }
            let pnet = Network::new(m.clone(), q)?;
            let traces: Vec<Vec<Vec<i128>>> = buffer.inputs().par_iter().map(|x| pnet.trace(x)).collect::<Result<_, _>>()?;
            let mut per_layer_samples = vec![0usize; layers];
            for (s, tr) in traces.iter().enumerate() {
                for l in 0..layers {
                    let d = tr[l].iter().zip(&committed[s][l]).filter(|(a, b)| a != b).count() as u64;
                    changed_outputs[l] += d;
                    if d > 0 {
                        changed_samples[l] += 1;
                        per_layer_samples[l] += 1;
                    }
                }
            }
            for l in 0..layers {
                worst_samples[l] = worst_samples[l].max(per_layer_samples[l]);
            }
            per_member.push((rows.len(), per_layer_samples[refs[0].layer]));
            evaluated += 1;
        }
    }
    println!("groups sampled (group: layer outputs a group's parameters enter): {rows_touched:?}");
    println!("{} members x {} samples = {} member-samples", evaluated, t.buffer, evaluated * t.buffer as u64);
    println!("| layer | outputs | changed outputs per member-sample (mean) | samples changed per member (mean) | most samples changed in one member |");
    println!("|---|---:|---:|---:|---:|");
    for (l, layer) in m.layers.iter().enumerate() {
        let ms = (evaluated * t.buffer as u64) as f64;
        println!(
            "| {} | {} | {:.2} | {:.1} of {} | {} |",
            layer.name,
            committed[0][l].len(),
            changed_outputs[l] as f64 / ms,
            changed_samples[l] as f64 / evaluated as f64,
            t.buffer,
            worst_samples[l]
        );
    }
    // The distribution of changed samples per member, by how many outputs
    // of the trained layer the group's parameters enter.
    let mut kinds: Vec<usize> = per_member.iter().map(|&(r, _)| r).collect();
    kinds.sort_unstable();
    kinds.dedup();
    println!();
    println!("| outputs the group's parameters enter | members | samples changed: mean | median | 90th percentile | max |");
    println!("|---:|---:|---:|---:|---:|---:|");
    for k in kinds {
        let mut v: Vec<usize> = per_member.iter().filter(|&&(r, _)| r == k).map(|&(_, c)| c).collect();
        v.sort_unstable();
        let mean = v.iter().sum::<usize>() as f64 / v.len() as f64;
        let pct = |q: f64| v[((v.len() - 1) as f64 * q).round() as usize];
        println!("| {k} | {} | {mean:.1} | {} | {} | {} |", v.len(), pct(0.5), pct(0.9), v[v.len() - 1]);
    }
    Ok(())
}
