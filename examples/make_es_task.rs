//! A reproducible ES training task: a network's own weights are the teacher,
//! and the student starts from the same weights with every trainable
//! parameter moved away from the teacher's. `fptgen train-es` should bring
//! the student's buffer loss down (docs/training.md, "Results").
//!
//! ```text
//! cargo run --release --example make_es_task -- --out target/es_task
//! ```
//!
//! writes into OUT:
//!
//! * `data.npz`: `x` (S random inputs), `t` (the teacher's outputs, exact
//!   codes of the output format), `labels` (the teacher's argmax), `meta/seed`;
//! * `student.npz`: the teacher's weights with each trainable parameter
//!   moved by a random offset in `[-offset, offset]` codes (clamped);
//! * `model.yaml`, `model_baseline.yaml`, `model_plain.yaml`: the source
//!   model pointing at `student.npz`, with its `training:` section and
//!   fitness `antithetic`, `baseline` and `plain`.
//!
//! With `--compare SEEDS` it also trains the student in-process with each
//! fitness mode for ES seeds 1..=SEEDS and prints the buffer losses.
//!
//! Inputs are sums of four uniform draws in [-1, 1) (roughly normal, sd
//! 1.15) from SplitMix64, so the data depends only on `--seed`.

use std::fmt::Write as _;
use std::path::PathBuf;

use anyhow::{bail, Context};
use clap::Parser;
use fptgen_sim::model::{Fitness, Model, Training};
use fptgen_sim::network::Network;
use fptgen_sim::tensor::{self, NamedArray, OutValues};
use fptgen_sim::train::{splitmix64, trainable_params, Buffer, EvalMode, Evaluator, GroupRecord, Trainer};
use fptgen_sim::weights::{self, Conversion, Params};

/// Make a teacher/student ES task from a model with a `training:` section.
#[derive(Debug, Parser)]
struct Args {
    /// The teacher: a model file whose weights archive holds the teacher's weights.
    #[arg(long, default_value = "examples/jet_tagging/model.yaml")]
    model: PathBuf,
    /// Output directory (created; must not hold the files already).
    #[arg(long, default_value = "target/es_task")]
    out: PathBuf,
    /// Number of samples S.
    #[arg(long, default_value_t = 512)]
    samples: usize,
    /// Largest offset, in codes, added to each trainable parameter of the student.
    #[arg(long, default_value_t = 4)]
    offset: i128,
    /// Seed of the inputs and of the offsets.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Use this lr_shift instead of the source model's (in the written
    /// model files and in --compare).
    #[arg(long)]
    lr_shift: Option<i32>,
    /// Also train in-process with each fitness mode for ES seeds 1..=SEEDS.
    #[arg(long, value_name = "SEEDS")]
    compare: Option<u64>,
}

/// SplitMix64 as a stream.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        let v = splitmix64(self.0);
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        v
    }

    /// Uniform in [-1, 1).
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 52) as f64 - 1.0
    }

    /// Uniform integer in [-k, k].
    fn offset(&mut self, k: i128) -> i128 {
        let span = (2 * k + 1) as u64;
        (self.next() % span) as i128 - k
    }
}

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let model = fptgen_sim::model::load(&args.model)?;
    let Some(mut training) = model.training else {
        bail!("{}: the model has no training: section", args.model.display());
    };
    if let Some(lr) = args.lr_shift {
        training.lr_shift = lr;
        training.check().map_err(anyhow::Error::msg)?;
    }
    // The written model files hold the steps as numbers (an automatic
    // step resolved for the source model, or --lr-shift).
    let training = Training { perturb_shift_auto: false, lr_shift_auto: false, ..training };
    let teacher = weights::load(&model, Conversion::Exact)?;
    let net = Network::new(model.clone(), teacher.clone())?;
    let mut rng = Rng(args.seed);

    // Inputs and the teacher's outputs.
    let n_in = model.input_len();
    let n_out = model.output_len();
    let mut xs = Vec::with_capacity(args.samples * n_in);
    let mut raw_inputs = Vec::with_capacity(args.samples);
    for _ in 0..args.samples {
        let x: Vec<f64> = (0..n_in).map(|_| (0..4).map(|_| rng.unit()).sum()).collect();
        raw_inputs.push(fptgen_sim::network::quantize_input(&model, &x).map_err(|(i, m)| anyhow::anyhow!("input {i}: {m}"))?);
        xs.extend(x);
    }
    let outs = net.infer_batch(&raw_inputs)?;
    let f_out = model.output_format();
    let t: Vec<f64> = outs.iter().flatten().map(|&r| f_out.to_f64(r)).collect();
    let labels: Vec<i64> = outs.iter().map(|y| argmax(y) as i64).collect();

    // The student: every trainable parameter moved by up to `offset` codes.
    let mut student = teacher.clone();
    for p in trainable_params(&model) {
        let f = p.format(&model);
        let w = (p.get(&student) + rng.offset(args.offset)).clamp(f.lossless_min_raw(), f.max_raw());
        p.set(&mut student, w);
    }

    std::fs::create_dir_all(&args.out).with_context(|| format!("creating {}", args.out.display()))?;
    let data = [
        NamedArray { name: "x".into(), shape: vec![args.samples, n_in], values: OutValues::F64(xs) },
        NamedArray { name: "t".into(), shape: vec![args.samples, n_out], values: OutValues::F64(t) },
        NamedArray { name: "labels".into(), shape: vec![args.samples], values: OutValues::I64(labels.clone()) },
        NamedArray { name: "meta/seed".into(), shape: vec![1], values: OutValues::U64(vec![args.seed]) },
    ];
    tensor::write_npz(&args.out.join("data.npz"), &data)?;
    weights::save(&model, &student, &args.out.join("student.npz"), &[])?;
    // Model files are written for dense networks only (--compare runs any).
    let dense = model.layers.iter().all(|l| l.as_dense().is_some());
    for (file, fitness) in [("model.yaml", Fitness::Antithetic), ("model_baseline.yaml", Fitness::Baseline), ("model_plain.yaml", Fitness::Plain)] {
        if !dense {
            break;
        }
        let t = Training { fitness, population: population_for(fitness, training.population), ..training };
        let text = model_yaml(&model, "student.npz", &t, &args);
        tensor::write_new(&args.out.join(file), |mut f| std::io::Write::write_all(&mut f, text.as_bytes()))?;
        // The written file must load as the same network.
        let m = fptgen_sim::model::load(&args.out.join(file))?;
        if m.layers != model.layers || m.training != Some(t) {
            bail!("{file}: the written model differs from the source");
        }
    }
    let classes = {
        let mut c = vec![0usize; n_out];
        labels.iter().for_each(|&l| c[l as usize] += 1);
        c
    };
    println!(
        "wrote {}: {} samples (teacher labels per class {:?}), student offsets up to {} codes on {} parameters",
        args.out.display(),
        args.samples,
        classes,
        args.offset,
        model.trainable_params()
    );

    if let Some(seeds) = args.compare {
        compare(&model, &student, &raw_inputs, &outs, &training, seeds)?;
    }
    Ok(())
}

/// An odd population cannot be antithetic; keep the others the same.
fn population_for(fitness: Fitness, n: usize) -> usize {
    if fitness == Fitness::Antithetic && n % 2 == 1 {
        n + 1
    } else {
        n
    }
}

fn argmax(y: &[i128]) -> usize {
    let mut best = 0;
    for (i, &v) in y.iter().enumerate() {
        if v > y[best] {
            best = i;
        }
    }
    best
}

/// Trains the student with each fitness mode and ES seed; prints one line
/// per mode with the final buffer losses and how often the sign of each
/// gradient accumulator `G_j` matches the true slope of the loss.
///
/// The true slope of a group's parameter is `L(w + 1) - L(w - 1)` (one code
/// either way, the perturbation of `rademacher` noise with sigma 0) at the
/// parameters the group starts from, computed with a separate evaluator
/// that follows the trainer's updates. `G_j > 0` moves `w` down, so it
/// agrees with a positive slope.
fn compare(model: &Model, student: &Params, inputs: &[Vec<i128>], targets: &[Vec<i128>], training: &Training, seeds: u64) -> anyhow::Result<()> {
    let m = training.buffer;
    let buffer = Buffer::new(model, inputs[..m].to_vec(), targets[..m].to_vec())?;
    let start = fptgen_sim::train::naive_loss(model, student, &buffer);
    println!(
        "compare: buffer loss {start} before training; after {} iterations (N {}, P {}, M {m}), ES seeds 1..={seeds}:",
        training.iterations, training.population, training.blocks
    );
    for fitness in [Fitness::Antithetic, Fitness::Baseline, Fitness::Plain] {
        let mut finals = Vec::new();
        let mut tally = Tally::default();
        for seed in 1..=seeds {
            let t = Training { fitness, seed, population: population_for(fitness, training.population), ..*training };
            let net = Network::new(model.clone(), student.clone())?;
            let mut shadow = Evaluator::new(EvalMode::Cached, &net, buffer.clone());
            let mut shadow_params = student.clone();
            let mut trainer = Trainer::with_training(net, t, buffer.clone(), EvalMode::Batched)?;
            let mut failed = None;
            finals.push(trainer.run(t.iterations, &mut |rec| {
                if let Err(e) = tally.group(model, &mut shadow, &mut shadow_params, rec) {
                    failed = Some(e);
                }
            })?);
            if let Some(e) = failed {
                bail!("slope check: {e}");
            }
        }
        let mean = finals.iter().map(|&l| f64::from(l)).sum::<f64>() / finals.len().max(1) as f64;
        println!(
            "  {:<10} final loss mean {:>7.0} ({:+.1}%) per seed {:?}",
            fitness.to_string(),
            mean,
            100.0 * (mean - f64::from(start)) / f64::from(start.max(1)),
            finals
        );
        let signed = tally.agree + tally.disagree;
        println!(
            "  {:<10} sign(G_j) vs slope: {} agree, {} disagree ({:.1}% agree), {} G_j = 0, {} flat",
            "",
            tally.agree,
            tally.disagree,
            100.0 * tally.agree as f64 / signed.max(1) as f64,
            tally.zero,
            tally.flat
        );
    }
    Ok(())
}

/// Counts of accumulator signs against the true slope.
#[derive(Debug, Default)]
struct Tally {
    agree: u64,
    disagree: u64,
    /// `G_j = 0` where the slope is not 0.
    zero: u64,
    /// The slope is 0.
    flat: u64,
}

impl Tally {
    fn group(&mut self, model: &Model, shadow: &mut Evaluator, params: &mut Params, rec: &GroupRecord) -> anyhow::Result<()> {
        for (j, r) in rec.params.iter().enumerate() {
            let f = r.format(model);
            let w = rec.before[j];
            r.set(params, (w + 1).min(f.max_raw()));
            let up = shadow.evaluate(params, &[*r])?;
            r.set(params, (w - 1).max(f.lossless_min_raw()));
            let down = shadow.evaluate(params, &[*r])?;
            r.set(params, w);
            let slope = (i64::from(up) - i64::from(down)).signum();
            let est = i64::from(rec.accumulators[j].signum());
            match (slope, est) {
                (0, _) => self.flat += 1,
                (_, 0) => self.zero += 1,
                (a, b) if a == b => self.agree += 1,
                _ => self.disagree += 1,
            }
        }
        for (j, r) in rec.params.iter().enumerate() {
            r.set(params, rec.after[j]);
        }
        shadow.commit(params, &rec.params)?;
        Ok(())
    }
}

/// The model file of `model` with weights `weights` and training `t`.
fn model_yaml(model: &Model, weights: &str, t: &Training, args: &Args) -> String {
    let mut s = String::new();
    let lr = args.lr_shift.map(|l| format!(" --lr-shift {l}")).unwrap_or_default();
    let _ = writeln!(s, "# Written by `cargo run --release --example make_es_task -- --model {} --samples {} --offset {} --seed {}{lr}`:",
        args.model.display(), args.samples, args.offset, args.seed);
    let _ = writeln!(s, "# {} with the student's weights (see docs/training.md, \"Results\").", args.model.display());
    let _ = writeln!(s, "name: {}", model.name);
    let _ = writeln!(s, "part: {}", model.part);
    let _ = writeln!(s, "clock_period_ns: {}", model.clock_period_ns);
    let shape: Vec<String> = model.input_shape.iter().map(usize::to_string).collect();
    let _ = writeln!(s, "input:\n  shape: [{}]\n  format: '{}'", shape.join(", "), model.input_format);
    let _ = writeln!(s, "weights: {weights}");
    let _ = writeln!(s, "layers:");
    for l in &model.layers {
        let d = l.as_dense().expect("a dense layer");
        let p = &d.precision;
        let _ = writeln!(s, "  - name: {}\n    type: dense\n    inputs: {}\n    outputs: {}\n    activation: {}", l.name, d.inputs, d.outputs, d.activation);
        let _ = writeln!(s, "    precision:\n      weight: '{}'\n      bias: '{}'\n      accum: '{}'\n      output: '{}'", p.weight, p.bias, p.accum, p.output);
        let _ = writeln!(s, "    pe: {}\n    simd: {}", d.pe, d.simd);
        let mut tr = Vec::new();
        if d.trainable.weights {
            tr.push("weights");
        }
        if d.trainable.biases {
            tr.push("biases");
        }
        if !tr.is_empty() {
            let _ = writeln!(s, "    trainable: [{}]", tr.join(", "));
        }
    }
    let _ = writeln!(s, "training:");
    let _ = writeln!(s, "  population: {}\n  iterations: {}\n  blocks: {}\n  buffer: {}", t.population, t.iterations, t.blocks, t.buffer);
    let _ = writeln!(s, "  noise: {{width: {}, distribution: {}, bits: {}}}", t.noise.width.bits(), t.noise.distribution, t.noise.bits);
    let _ = writeln!(s, "  perturb_shift: {}\n  lr_shift: {}\n  loss: {}", t.perturb_shift, t.lr_shift, t.loss);
    let _ = writeln!(s, "  fitness: {}\n  loss_quantization: {}\n  seed: {}", t.fitness, t.loss_quantization, t.seed);
    s
}
