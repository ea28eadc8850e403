//! Seed 003's experiment (steps 1 to 6, Figure 7): a deployed MNIST network
//! meets Gaussian sensor noise, and ES retraining in the bit-accurate
//! simulator recovers accuracy. Results: `docs/results/mnist.md`.
//!
//! 1. The training set is split 50,000 / 10,000 (the last 10,000 are the
//!    validation images); the deployed network is the model's weights
//!    archive, trained on the first 50,000 by `fptgen train`.
//! 2. Gaussian noise of standard deviation sigma (in units of full scale,
//!    the image's [0, 1)) is added to every validation pixel, and the sum is
//!    converted to the input format (saturating, so pixels stay in range).
//!    The same standard-normal draws are scaled for every sigma.
//! 3. The first half of the noisy validation images is the pool ES learns
//!    from (the first M fill the on-chip buffer). Accuracy is measured in
//!    the bit-accurate simulator on the images `--eval` names: `pool`
//!    (the default), the pool's second half, as the pages measured before
//!    issue 40's protocol; `validation`, the first 5,000 MNIST test images
//!    with their own noise, where every step and option is chosen;
//!    `heldout`, the last 5,000 test images, reported once the choices
//!    are made (docs/results/rules.md, "Under the protocol").
//! 4. ES retrains a subset of the parameters with the hardware's exact
//!    algorithm (`fptgen_sim::train::Trainer`, N, k, P, M below), for each
//!    subset, each precision of the trained layer and each sigma; with
//!    `--rule dfa` or `drtp`, the feedback rule instead
//!    (`fptgen_sim::train::FeedbackTrainer`, M and k below, step
//!    `--feedback-lr-shift`; `docs/results/rules.md`); with `--rule
//!    backprop`, the host's ceiling: `fptgen train`'s quantization-aware
//!    backpropagation (`fptgen_sim::qat::Qat::from_params`) on the same M
//!    buffered images with their labels, moving only the same tensors, k
//!    epochs over the buffer.
//!
//! Precision W of the trained layer: its trained tensors get W-bit formats
//! with the same integer bits (`ap_fixed<W, I>`), holding the deployed 4-bit
//! values exactly, and its accumulator gets enough fraction bits to stay
//! exact, so the start is the deployed network at every W. ES then moves
//! parameters in steps of 2^-(W - I). A noise value moves a parameter by
//! 2^-perturb_exp (`perturb_shift = F - perturb_exp`, at least 0, F the
//! fraction bits) and the update is the accumulator times
//! `2^-(lr_base - F)` codes (`lr_shift = lr_base - F`, negative for wide
//! formats), so the real step sizes are the same at every W, except where
//! the format is too coarse for them.
//!
//! Run (writes OUT/results.csv, OUT/results.json, OUT/table.md, OUT/mnist_noise.svg):
//!
//!     cargo run --release --example mnist_noise -- --out target/mnist_noise
//!
//! (about 32 minutes on 2 cores). `--replot DIR --out NEW` redraws the
//! table and plot from DIR/results.json without training.

#[path = "common/mnist_args.rs"]
mod mnist_args;

use std::fmt::Write as _;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use anyhow::{anyhow, bail, Context};
use clap::Parser;
use mnist_args::MnistArgs;
use fptgen_sim::data::{self, Dataset};
use fptgen_sim::fixed::Format;
use fptgen_sim::model::{self, Fitness, LayerOp, LossQuantization, Model, Rule, StepRounding, Trainable, Training};
use fptgen_sim::network::Network;
use fptgen_sim::qat::{accuracy, Loss, Qat, QatConfig};
use fptgen_sim::train::feedback_float::FloatFeedbackTrainer;
use fptgen_sim::train::{naive_loss, Buffer, EvalMode, FeedbackTrainer, Trainer};
use fptgen_sim::weights::{self, Conversion, Params};
use plotters::prelude::*;
use rayon::prelude::*;

#[derive(Debug, Parser)]
struct Args {
    #[command(flatten)]
    mnist: MnistArgs,
    /// Output directory (must not exist).
    #[arg(long)]
    out: PathBuf,
    /// Noise levels sigma.
    #[arg(long, value_delimiter = ',', default_value = "0,0.25,0.5,0.75,1")]
    sigmas: Vec<f64>,
    /// Trainable subsets: `LAYER` (weights and biases), `LAYER-weights` or
    /// `LAYER-biases`, or several joined by `+` (trained together).
    #[arg(long, value_delimiter = ',', default_value = "fc1-weights,fc3,fc1-biases")]
    subsets: Vec<String>,
    /// Precisions (bits) of the trained tensors, for the first subset: the
    /// first at every sigma, the others at --sweep-sigmas (0: the model's
    /// own formats).
    #[arg(long, value_delimiter = ',', default_value = "16,4,12,24,32")]
    precisions: Vec<u32>,
    /// Noise levels of the precision sweep (the first subset's other precisions).
    #[arg(long, value_delimiter = ',', default_value = "0,0.25,0.5,0.75,1")]
    sweep_sigmas: Vec<f64>,
    /// Precisions for the other subsets.
    #[arg(long, value_delimiter = ',', default_value = "4,16")]
    other_precisions: Vec<u32>,
    /// N.
    #[arg(long, default_value_t = 100)]
    population: usize,
    /// k.
    #[arg(long, default_value_t = 100)]
    iterations: u64,
    /// P (0: all trainable parameters of the subset at once, one group).
    #[arg(long, default_value_t = 0)]
    blocks: usize,
    /// M.
    #[arg(long, default_value_t = 64)]
    buffer: usize,
    /// A noise value moves a parameter by 2^-perturb_exp.
    #[arg(long, default_value_t = 6)]
    perturb_exp: i32,
    /// lr_shift = lr_base - fraction bits of the trained tensor; `auto`:
    /// the library's automatic steps instead (`perturb_shift` and
    /// `lr_shift` both, `fptgen_sim::train::steps`; --perturb-exp is then
    /// unused).
    #[arg(long, default_value = "22", allow_hyphen_values = true, value_parser = parse_lr_base)]
    lr_base: LrBase,
    /// Target of the label's output (real value; the others get
    /// --target-low). Default: the median of the deployed network's output
    /// for the label on 5,000 clean training images.
    #[arg(long, allow_hyphen_values = true)]
    target_high: Option<f64>,
    /// Target of the other outputs. Default: the median of the other
    /// outputs on the same images.
    #[arg(long, allow_hyphen_values = true)]
    target_low: Option<f64>,
    /// Seeds of the pixel noise, the LFSRs and the host's fits; with
    /// several (`--seed 1,2,3`) every run is repeated per seed and the
    /// table gives the mean and the range.
    #[arg(long = "seed", value_delimiter = ',', default_value = "1")]
    seeds: Vec<u64>,
    /// Where accuracy is measured: pool (the pool's second half), validation
    /// (MNIST test images 0..5,000) or heldout (test images 5,000..10,000).
    #[arg(long, default_value = "pool", value_parser = ["pool", "validation", "heldout"])]
    eval: String,
    /// ES's fitness signal (docs/training.md): antithetic, ranks, baseline or plain.
    #[arg(long, default_value = "antithetic", value_parser = parse_fitness)]
    fitness: Fitness,
    /// ES's loss quantization: po2 or exact.
    #[arg(long, default_value = "po2", value_parser = parse_quantization)]
    loss_quantization: LossQuantization,
    /// Only redraw the table and plot from an earlier run's DIR/results.json (no training).
    #[arg(long, value_name = "DIR")]
    replot: Option<PathBuf>,
    /// Validation images (the end of the training set).
    #[arg(long, default_value_t = 10_000)]
    validation: usize,
    /// The training rule: es (the default), or seed 002's forward-only
    /// feedback rules dfa, drtp or sgm (docs/training.md, "Feedback rules"; one
    /// forward pass and one update per buffered sample per iteration).
    #[arg(long, default_value = "es")]
    rule: String,
    /// With a feedback rule: also run its float reference
    /// (`fptgen_sim::train::feedback_float`, nothing quantized) and report
    /// its held-out accuracy beside the device's.
    #[arg(long)]
    float_reference: bool,
    /// With --rule sgm: clean training images the synthetic-gradient
    /// modules are fitted on (the first of the training set, with the
    /// deployed weights; `fptgen train --sgm`'s fit).
    #[arg(long, default_value_t = 10_000)]
    sgm_samples: usize,
    /// With --rule sgm: also fit on copies of those images with pixel
    /// noise of these sigmas (drawn with another seed than the evaluation's
    /// noise; the modules then see the family of drifts, as seed 002's
    /// pretraining on several tasks does). Empty: clean images only.
    #[arg(long, value_delimiter = ',')]
    sgm_noise: Vec<f64>,
    /// The feedback rules' lr_shift (their step is 2^-lr_shift times the
    /// delta, in output codes, times the input).
    #[arg(long, default_value_t = 12, allow_hyphen_values = true)]
    feedback_lr_shift: i32,
    /// The feedback rules' step rounding: auto (stochastic for tensors of
    /// at most 8 bits), nearest or stochastic (docs/training.md,
    /// "Stochastic rounding").
    #[arg(long, default_value = "auto", value_parser = parse_rounding)]
    step_rounding: StepRounding,
    /// With --rule backprop: Adam's step size (cosine-decayed over the run).
    #[arg(long, default_value_t = 1e-3)]
    backprop_lr: f32,
    /// With --rule backprop: samples per step.
    #[arg(long, default_value_t = 16)]
    backprop_batch: usize,
    /// With --rule backprop: the loss (mae, mse or ce).
    #[arg(long, default_value = "ce")]
    backprop_loss: String,
}

/// `--fitness`: a fitness mode by its model-file name.
fn parse_fitness(s: &str) -> Result<Fitness, String> {
    [Fitness::Antithetic, Fitness::Ranks, Fitness::Baseline, Fitness::Plain]
        .into_iter()
        .find(|f| f.to_string() == s)
        .ok_or_else(|| format!("{s}: expected antithetic, ranks, baseline or plain"))
}

/// `--loss-quantization`: po2 or exact.
fn parse_quantization(s: &str) -> Result<LossQuantization, String> {
    [LossQuantization::Po2, LossQuantization::Exact]
        .into_iter()
        .find(|q| q.to_string() == s)
        .ok_or_else(|| format!("{s}: expected po2 or exact"))
}

/// `--step-rounding`: auto, nearest or stochastic.
fn parse_rounding(s: &str) -> Result<StepRounding, String> {
    [StepRounding::Auto, StepRounding::Nearest, StepRounding::Stochastic]
        .into_iter()
        .find(|r| r.name() == s)
        .ok_or_else(|| format!("{s}: expected auto, nearest or stochastic"))
}

/// `--lr-base`: a number, or `auto`.
#[derive(Debug, Clone, Copy, PartialEq)]
enum LrBase {
    Auto,
    Base(i32),
}

impl std::fmt::Display for LrBase {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LrBase::Auto => f.write_str("auto"),
            LrBase::Base(b) => write!(f, "{b}"),
        }
    }
}

fn parse_lr_base(s: &str) -> Result<LrBase, String> {
    if s == "auto" {
        return Ok(LrBase::Auto);
    }
    s.parse().map(LrBase::Base).map_err(|_| format!("expected an integer or auto, not {s:?}"))
}

/// One retraining run.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
struct Row {
    subset: String,
    /// The seed of the run (results written before seeds were a list: 1).
    #[serde(default = "first_seed")]
    seed: u64,
    precision: u32,
    sigma: f64,
    params: usize,
    groups: usize,
    perturb_shift: u32,
    lr_shift: i32,
    before: f64,
    after: f64,
    loss_before: u32,
    loss_after: u32,
    seconds: f64,
    /// With --float-reference, a feedback rule's held-out accuracy in its
    /// float reference (nothing quantized).
    #[serde(default)]
    float_after: Option<f64>,
}

fn first_seed() -> u64 {
    1
}

/// One noisy copy of the data for a sigma and a seed: the pool (whose
/// first M images fill the buffer) and the images accuracy is measured on.
struct Noisy {
    sigma: f64,
    seed: u64,
    pool: Dataset,
    eval: Dataset,
}

/// Salt of the evaluation images' pixel noise (the pool's is the seed).
const EVAL_NOISE: u64 = 0xE7A1_0000;

fn main() -> anyhow::Result<()> {
    let a = Args::parse();
    if let Some(dir) = &a.replot {
        if a.out.exists() {
            bail!("{}: already exists; choose a new output directory", a.out.display());
        }
        return replot(dir, &a.out);
    }
    if a.out.exists() {
        bail!("{}: already exists; choose a new output directory", a.out.display());
    }
    let base = model::load(&a.mnist.model)?;
    let params = weights::load(&base, Conversion::Exact)?;
    let splits = data::load_dir(&base, &a.mnist.data)?;
    let (_, val) = splits.train.split_last(a.validation).ok_or_else(|| anyhow!("fewer than {} training images", a.validation))?;
    let half = val.len() / 2;
    if a.buffer > half {
        bail!("--buffer {} is more than the {half} pool images", a.buffer);
    }
    let test_half = splits.test.len() / 2;
    let eval_images = match a.eval.as_str() {
        "validation" => Some(splits.test.slice(0..test_half)),
        "heldout" => Some(splits.test.slice(test_half..splits.test.len())),
        _ => None,
    };
    let mut noisy: Vec<Noisy> = Vec::new();
    for &seed in &a.seeds {
        for &sigma in &a.sigmas {
            let d = add_noise(&base, &val, sigma, seed);
            let eval = match &eval_images {
                Some(e) => add_noise(&base, e, sigma, seed ^ EVAL_NOISE),
                None => d.slice(half..d.len()),
            };
            noisy.push(Noisy { sigma, seed, pool: d.slice(0..half), eval });
        }
    }
    let deployed = Network::new(base.clone(), params.clone())?;
    let (high, low) = medians(&deployed, &splits.train.slice(0..5000.min(splits.train.len())))?;
    let targets = (a.target_high.unwrap_or(high), a.target_low.unwrap_or(low));
    println!("targets: {} for the label's output, {} for the others (clean medians {high} and {low})", targets.0, targets.1);
    println!("deployed {}: accuracy on the {} images per sigma and seed (bit-accurate):", base.name, a.eval);
    for n in &noisy {
        println!("  sigma {}, seed {}: {:.2}%", n.sigma, n.seed, pct(accuracy(&deployed, &n.eval)?, n.eval.len()));
    }

    let mut jobs = Vec::new();
    for (i, subset) in a.subsets.iter().enumerate() {
        let precisions = if i == 0 { &a.precisions } else { &a.other_precisions };
        for (j, &w) in precisions.iter().enumerate() {
            for (si, n) in noisy.iter().enumerate() {
                if i > 0 || j == 0 || a.sweep_sigmas.contains(&n.sigma) {
                    jobs.push((subset.clone(), w, si));
                }
            }
        }
    }
    let clean = splits.train.slice(0..a.sgm_samples.min(splits.train.len() - a.validation));
    let pre = if a.sgm_noise.is_empty() {
        clean
    } else {
        let mut codes = Vec::new();
        let mut labels = Vec::new();
        for (k, &s) in std::iter::once(&0.0).chain(&a.sgm_noise).enumerate() {
            let d = if s == 0.0 { clean.clone() } else { add_noise(&base, &clean, s, a.seeds[0] ^ 0x5C5C_0000 ^ k as u64) };
            for i in 0..d.len() {
                codes.extend_from_slice(d.input(i));
                labels.push(d.label(i));
            }
        }
        Dataset::new(clean.input_len(), codes, labels).expect("same shape")
    };
    let done = AtomicUsize::new(0);
    let start = Instant::now();
    let total = jobs.len();
    let rows: Vec<anyhow::Result<Row>> = jobs
        .par_iter()
        .map(|(subset, w, si)| {
            let t0 = Instant::now();
            let n = &noisy[*si];
            let (sigma, seed) = (n.sigma, n.seed);
            let r = run(&a, &base, &params, subset, *w, n, targets, &pre).map(|mut r| {
                r.seconds = t0.elapsed().as_secs_f64();
                r
            });
            let n = done.fetch_add(1, Ordering::SeqCst) + 1;
            match &r {
                Ok(r) => println!(
                    "[{n}/{total}, {:.0} s] {} {}-bit sigma {} seed {}: {:.2}% -> {:.2}% (buffer loss {} -> {}, {:.0} s)",
                    start.elapsed().as_secs_f64(),
                    r.subset,
                    r.precision,
                    r.sigma,
                    r.seed,
                    100.0 * r.before,
                    100.0 * r.after,
                    r.loss_before,
                    r.loss_after,
                    r.seconds
                ),
                Err(e) => println!("[{n}/{total}] {subset} {w}-bit sigma {sigma} seed {seed}: failed: {e:#}"),
            }
            r
        })
        .collect();
    let rows: Vec<Row> = rows.into_iter().collect::<anyhow::Result<_>>()?;
    std::fs::create_dir_all(&a.out).with_context(|| format!("creating {}", a.out.display()))?;
    let mut csv = String::from("subset,precision,sigma,seed,params,groups,perturb_shift,lr_shift,before,after,loss_before,loss_after,seconds\n");
    for r in &rows {
        let _ = writeln!(
            csv,
            "{},{},{},{},{},{},{},{},{},{},{},{},{:.1}",
            r.subset, r.precision, r.sigma, r.seed, r.params, r.groups, r.perturb_shift, r.lr_shift, r.before, r.after, r.loss_before, r.loss_after, r.seconds
        );
    }
    std::fs::write(a.out.join("results.csv"), csv)?;
    // The options of the rule that ran (ES's fitness and steps mean
    // nothing to the feedback rules or the ceiling).
    let rule = match a.rule.as_str() {
        "es" => format!(
            "rule es, fitness {}, {}, N {}, P {}, perturbation 2^-{}, lr_base {}",
            a.fitness,
            a.loss_quantization,
            a.population,
            if a.blocks == 0 { "all".to_string() } else { a.blocks.to_string() },
            a.perturb_exp,
            a.lr_base
        ),
        "backprop" => format!("rule backprop, {} loss, Adam {}, batch {}", a.backprop_loss, a.backprop_lr, a.backprop_batch),
        other => format!("rule {other}, lr_shift {}, step rounding {}", a.feedback_lr_shift, a.step_rounding.name()),
    };
    let settings = format!(
        "{rule}, k {}, M {}, targets {}/{}, seeds {:?}, accuracy on {}",
        a.iterations, a.buffer, targets.0, targets.1, a.seeds, a.eval
    );
    std::fs::write(a.out.join("results.json"), serde_json::to_string_pretty(&serde_json::json!({ "settings": settings, "rows": rows }))?)?;
    std::fs::write(a.out.join("table.md"), table(&rows))?;
    plot(&rows, &a.out.join("mnist_noise.svg"))?;
    println!("wrote {} ({settings})", a.out.display());
    Ok(())
}

/// Adds `sigma` times seeded standard-normal draws (the same draws for every
/// sigma) to every pixel's real value and converts back to the input format.
fn add_noise(model: &Model, d: &Dataset, sigma: f64, seed: u64) -> Dataset {
    data::noise::add_gaussian_noise(model, d, sigma, seed)
}

/// The model and parameters with `subset` trainable at `bits` bits.
fn variant(base: &Model, params: &Params, subset: &str, bits: u32) -> anyhow::Result<(Model, Params)> {
    let mut m = base.clone();
    let mut p = params.clone();
    for l in &mut m.layers {
        if let Some(d) = engine_mut(&mut l.op) {
            d.trainable = Trainable::default();
        }
    }
    // `A+B+...`: several layers trained together, each as its own subset.
    for part in subset.split('+') {
        train_part(&mut m, &mut p, part, bits)?;
    }
    Ok((m, p))
}

/// A dense layer, or a conv2d's dense engine over its windows (the same
/// formats and trainable tensors).
fn engine_mut(op: &mut LayerOp) -> Option<&mut fptgen_sim::layers::dense::Dense> {
    match op {
        LayerOp::Dense(d) => Some(d),
        LayerOp::Conv2d(c) => Some(&mut c.mvau),
        _ => None,
    }
}

fn engine(op: &LayerOp) -> Option<&fptgen_sim::layers::dense::Dense> {
    match op {
        LayerOp::Dense(d) => Some(d),
        LayerOp::Conv2d(c) => Some(&c.mvau),
        _ => None,
    }
}

/// Makes one subset (`LAYER`, `LAYER-weights` or `LAYER-biases`) of `m`
/// trainable, its tensors widened to `bits` (codes converted exactly).
fn train_part(m: &mut Model, p: &mut Params, subset: &str, bits: u32) -> anyhow::Result<()> {
    let (layer, which) = match subset.rsplit_once('-') {
        Some((l, "weights")) => (l, Trainable { weights: true, biases: false }),
        Some((l, "biases")) => (l, Trainable { weights: false, biases: true }),
        _ => (subset, Trainable { weights: true, biases: true }),
    };
    let li = m.layers.iter().position(|l| l.name == layer).ok_or_else(|| anyhow!("no layer {layer}"))?;
    let in_frac = m.layers[li].input_format.frac_bits();
    let Some(d) = engine_mut(&mut m.layers[li].op) else { anyhow::bail!("layer {layer} is neither dense nor conv2d") };
    d.trainable = which;
    let widen = |f: Format| -> anyhow::Result<Format> {
        // 0: the deployed formats.
        if bits == 0 || bits == f.width() {
            return Ok(f);
        }
        Ok(Format::new(f.signed(), bits, f.int_bits(), f.quant(), f.overflow())?)
    };
    let (old_w, old_b) = (d.precision.weight, d.precision.bias);
    if which.weights {
        d.precision.weight = widen(old_w)?;
    }
    if which.biases {
        d.precision.bias = widen(old_b)?;
    }
    let acc = d.precision.accum;
    let frac = acc.frac_bits().max(d.precision.weight.frac_bits() + in_frac).max(d.precision.bias.frac_bits());
    if frac != acc.frac_bits() {
        d.precision.accum = Format::new(acc.signed(), (acc.int_bits() + frac) as u32, acc.int_bits(), acc.quant(), acc.overflow())?;
    }
    let (nw, nb) = (d.precision.weight, d.precision.bias);
    let lp = &mut p.layers[li];
    for (codes, old, new) in lp.tensors.iter_mut().zip([(old_w, nw), (old_b, nb)]).map(|(c, (o, n))| (c, o, n)) {
        for c in codes.iter_mut() {
            *c = new.exact_f64(old.to_f64(*c)).map_err(|e| anyhow!("{e}"))?;
        }
    }
    Ok(())
}

#[allow(clippy::too_many_arguments)]
fn run(
    a: &Args,
    base: &Model,
    params: &Params,
    subset: &str,
    bits: u32,
    noisy: &Noisy,
    (t_high, t_low): (f64, f64),
    pre: &Dataset,
) -> anyhow::Result<Row> {
    let (sigma, seed, d, held) = (noisy.sigma, noisy.seed, &noisy.pool, &noisy.eval);
    let (m, p) = variant(base, params, subset, bits)?;
    let t: u64 = m.trainable_params();
    let trained =
        m.layers.iter().filter_map(|l| engine(&l.op)).find(|d| d.trainable.any()).ok_or_else(|| anyhow!("no trainable dense or conv2d layer"))?;
    let f = if trained.trainable.weights { trained.precision.weight } else { trained.precision.bias }.frac_bits();
    let blocks = if a.blocks == 0 { t as usize } else { a.blocks };
    let training = Training {
        population: a.population,
        iterations: a.iterations,
        blocks,
        buffer: a.buffer,
        perturb_shift: (f - a.perturb_exp).max(0) as u32,
        lr_shift: match a.lr_base {
            LrBase::Base(b) => (b - f).clamp(-31, 31),
            LrBase::Auto => 0,
        },
        fitness: a.fitness,
        loss_quantization: a.loss_quantization,
        seed,
        ..Training::default()
    };
    let training = match a.lr_base {
        LrBase::Base(_) => training,
        // The library's rule, on this variant's formats, N and M.
        LrBase::Auto => Training { perturb_shift_auto: true, lr_shift_auto: true, ..training }
            .resolve(fptgen_sim::train::steps::StepBasis::of(&m).as_ref()),
    };
    let (perturb_shift, lr_shift) = (training.perturb_shift, training.lr_shift);
    training.check().map_err(|e| anyhow!(e))?;
    let out = m.output_format();
    let hi = out.quantize_f64(t_high)?;
    let lo = out.quantize_f64(t_low)?;
    let targets = (0..a.buffer).map(|i| (0..m.output_len()).map(|o| if o == d.label(i) { hi } else { lo }).collect()).collect();
    let inputs = (0..a.buffer).map(|i| d.input(i).to_vec()).collect();
    let buffer = Buffer::new(&m, inputs, targets)?;
    let net = Network::new(m, p)?;
    let before = accuracy(&net, held)? as f64 / held.len() as f64;
    let rule = match a.rule.as_str() {
        "es" => Rule::Es,
        "dfa" => Rule::Dfa,
        "drtp" => Rule::Drtp,
        "sgm" => Rule::Sgm,
        "backprop" => {
            // The ceiling: host backpropagation (fptgen train's QAT) on the
            // same buffer, moving only the same trainable tensors, one
            // epoch over the buffer per iteration.
            let loss = match a.backprop_loss.as_str() {
                "mae" => Loss::Mae,
                "mse" => Loss::Mse,
                "ce" => Loss::CrossEntropy,
                other => bail!("--backprop-loss {other}: expected mae, mse or ce"),
            };
            let config = QatConfig { batch: a.backprop_batch, lr: a.backprop_lr, total_epochs: a.iterations as usize, seed, loss };
            let loss_before = naive_loss(net.model(), net.params(), &buffer);
            let (model, params) = net.into_parts();
            let mut qat = Qat::from_params(model, &params, config, true);
            let data = d.slice(0..a.buffer);
            for _ in 0..a.iterations {
                qat.epoch(&data, &mut |_| {});
            }
            let after = accuracy(&qat.network()?, held)? as f64 / held.len() as f64;
            let loss_after = naive_loss(qat.model(), &qat.params(), &buffer);
            return Ok(Row {
                seed,
                float_after: None,
                subset: subset.to_string(),
                precision: bits,
                sigma,
                params: t as usize,
                groups: 0,
                perturb_shift: 0,
                lr_shift: 0,
                before,
                after,
                loss_before,
                loss_after,
                seconds: 0.0,
            });
        }
        other => bail!("--rule {other}: expected es, dfa, drtp, sgm or backprop"),
    };
    if rule != Rule::Es {
        let training = Training { rule, lr_shift: a.feedback_lr_shift, step_rounding: a.step_rounding, ..training };
        let sgm = if rule == Rule::Sgm && !fptgen_sim::train::sgm::module_shapes(net.model()).is_empty() {
            // The modules, fitted on clean training images with the
            // deployed (variant) weights, as `fptgen train --sgm` fits them.
            let samples: Vec<(Vec<i128>, Vec<i128>)> = (0..pre.len())
                .map(|i| (pre.input(i).to_vec(), (0..net.model().output_len()).map(|o| if o == pre.label(i) { hi } else { lo }).collect()))
                .collect();
            let (sgm, reports) = fptgen_sim::train::sgm::fit(net.model(), net.params(), &samples, 1e-6, seed).map_err(|e| anyhow!(e))?;
            for r in &reports {
                println!("  {subset} sigma {sigma}: module of layer {} fitted, cosine {:.3} (dfa {:.3})", r.layer, r.cosine, r.cosine_dfa);
            }
            Some(sgm)
        } else {
            None
        };
        let float_after = if a.float_reference {
            let mut reference = FloatFeedbackTrainer::new(&net, training, &buffer, sgm.as_ref())?;
            reference.run(a.iterations);
            let right = (0..held.len())
                .filter(|&i| {
                    let y = reference.infer(held.input(i));
                    (0..y.len()).fold(0, |b, k| if y[k] > y[b] { k } else { b }) == held.label(i)
                })
                .count();
            Some(right as f64 / held.len() as f64)
        } else {
            None
        };
        let mut trainer = FeedbackTrainer::with_sgm(net, training, buffer, sgm.as_ref())?;
        let loss_before = trainer.loss();
        let loss_after = trainer.run(a.iterations, &mut |_| {});
        let after = accuracy(&Network::new(trainer.model().clone(), trainer.params().clone())?, held)? as f64 / held.len() as f64;
        if let Some(f) = float_after {
            println!("  {subset} sigma {sigma}: float reference {:.2}%, device {:.2}%", 100.0 * f, 100.0 * after);
        }
        return Ok(Row {
            seed,
            float_after,
            subset: subset.to_string(),
            precision: bits,
            sigma,
            params: t as usize,
            groups: 0,
            perturb_shift: 0,
            lr_shift: a.feedback_lr_shift,
            before,
            after,
            loss_before,
            loss_after,
            seconds: 0.0,
        });
    }
    let mut trainer = Trainer::with_training(net, training, buffer, EvalMode::Batched)?;
    let loss_before = trainer.loss();
    trainer.run(a.iterations, &mut |_| {})?;
    let after = accuracy(&trainer.network()?, held)? as f64 / held.len() as f64;
    Ok(Row {
        seed,
        float_after: None,
        subset: subset.to_string(),
        precision: bits,
        sigma,
        params: t as usize,
        groups: trainer.groups(),
        perturb_shift,
        lr_shift,
        before,
        after,
        loss_before,
        loss_after: trainer.loss(),
        seconds: 0.0,
    })
}

/// Medians of the label's output and of the other outputs (real values):
/// the targets whose MAE the clean network nearly minimizes (a median
/// minimizes absolute error).
fn medians(net: &Network, d: &Dataset) -> anyhow::Result<(f64, f64)> {
    let f = net.model().output_format();
    let (mut hi, mut lo) = (Vec::new(), Vec::new());
    for i in 0..d.len() {
        for (o, &y) in net.infer(d.input(i))?.iter().enumerate() {
            if o == d.label(i) { hi.push(y) } else { lo.push(y) }
        }
    }
    hi.sort_unstable();
    lo.sort_unstable();
    let mid = |v: &[i128]| f.to_f64(v[v.len() / 2]);
    Ok((mid(&hi), mid(&lo)))
}

fn pct(right: usize, total: usize) -> f64 {
    100.0 * right as f64 / total.max(1) as f64
}

/// The noise levels of `rows`, in increasing order.
fn sigmas(rows: &[Row]) -> Vec<f64> {
    let mut s: Vec<f64> = rows.iter().map(|r| r.sigma).collect();
    s.sort_by(f64::total_cmp);
    s.dedup();
    s
}

/// `--replot DIR`: the table and plot again from `DIR/results.json`, into OUT.
fn replot(dir: &std::path::Path, out: &std::path::Path) -> anyhow::Result<()> {
    let path = dir.join("results.json");
    let text = std::fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?;
    let v: serde_json::Value = serde_json::from_str(&text).with_context(|| format!("{}: not JSON", path.display()))?;
    let rows: Vec<Row> = serde_json::from_value(v["rows"].clone()).with_context(|| format!("{}: no rows", path.display()))?;
    std::fs::create_dir_all(out).with_context(|| format!("creating {}", out.display()))?;
    std::fs::write(out.join("table.md"), table(&rows))?;
    plot(&rows, &out.join("mnist_noise.svg"))?;
    println!("wrote {}: table.md, mnist_noise.svg from {}", out.display(), path.display());
    Ok(())
}

/// The Markdown table: one row per sigma, the deployed accuracy, then ES
/// per subset and precision.
fn table(rows: &[Row]) -> String {
    let mut cols: Vec<(String, u32)> = Vec::new();
    for r in rows {
        if !cols.contains(&(r.subset.clone(), r.precision)) {
            cols.push((r.subset.clone(), r.precision));
        }
    }
    let mut s = String::from("| sigma | deployed (noisy data) |");
    for (sub, w) in &cols {
        let _ = write!(s, " ES {sub} {w}-bit |");
    }
    s += "\n|---|---|";
    s += &"---|".repeat(cols.len());
    s += "\n";
    for sigma in sigmas(rows) {
        // The deployed network's accuracy per seed (the noise draw differs).
        let mut seen = Vec::new();
        let before: Vec<f64> = rows.iter().filter(|r| r.sigma == sigma && !seen.contains(&r.seed) && { seen.push(r.seed); true }).map(|r| r.before).collect();
        let _ = write!(s, "| {sigma} | {} |", spread(&before).unwrap_or_default());
        for (sub, w) in &cols {
            let cell: Vec<&Row> = rows.iter().filter(|r| r.sigma == sigma && &r.subset == sub && r.precision == *w).collect();
            let after: Vec<f64> = cell.iter().map(|r| r.after).collect();
            let gain = cell.iter().map(|r| r.after - r.before).sum::<f64>() / cell.len().max(1) as f64;
            let text = spread(&after).map(|t| format!("{t} ({:+.2})", 100.0 * gain)).unwrap_or_default();
            let _ = write!(s, " {text} |");
        }
        s += "\n";
    }
    s
}

/// An accuracy in percent, or over several seeds their mean and range:
/// `91.20% (90.80..91.64)`.
fn spread(v: &[f64]) -> Option<String> {
    let mean = v.iter().sum::<f64>() / v.len() as f64;
    let (lo, hi) = v.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &x| (lo.min(x), hi.max(x)));
    match v.len() {
        0 => None,
        1 => Some(format!("{:.2}%", 100.0 * mean)),
        _ => Some(format!("{:.2}% ({:.2}..{:.2})", 100.0 * mean, 100.0 * lo, 100.0 * hi)),
    }
}

/// Accuracy against sigma: the deployed network, and after ES per subset
/// and precision (Figure 7's layout).
fn plot(rows: &[Row], path: &std::path::Path) -> anyhow::Result<()> {
    let sigmas = sigmas(rows);
    let root = SVGBackend::new(path, (900, 560)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| anyhow!("{e}"))?;
    let lo = rows.iter().map(|r| r.before.min(r.after)).fold(1.0f64, f64::min);
    let smax = sigmas.iter().cloned().fold(0.0f64, f64::max).max(1e-9);
    let mut chart = ChartBuilder::on(&root)
        .caption("MNIST 784-200-100-10, 4-bit: held-out accuracy under input noise", ("sans-serif", 20))
        .margin(15)
        .x_label_area_size(40)
        .y_label_area_size(55)
        .build_cartesian_2d(0.0..smax, (100.0 * lo - 5.0).max(0.0)..100.0)
        .map_err(|e| anyhow!("{e}"))?;
    chart
        .configure_mesh()
        .x_desc("noise sigma (fraction of full scale)")
        .y_desc("accuracy (%)")
        .draw()
        .map_err(|e| anyhow!("{e}"))?;
    let mut series: Vec<(String, Vec<(f64, f64)>)> = Vec::new();
    let mut deployed: Vec<(f64, f64)> = Vec::new();
    // Means over the seeds.
    let mean = |v: Vec<f64>| (!v.is_empty()).then(|| 100.0 * v.iter().sum::<f64>() / v.len() as f64);
    for &s in &sigmas {
        if let Some(b) = mean(rows.iter().filter(|r| r.sigma == s && r.subset == rows[0].subset && r.precision == rows[0].precision).map(|r| r.before).collect()) {
            deployed.push((s, b));
        }
    }
    let mut keys: Vec<(String, u32)> = Vec::new();
    for r in rows {
        if !keys.contains(&(r.subset.clone(), r.precision)) {
            keys.push((r.subset.clone(), r.precision));
        }
    }
    for (sub, w) in keys {
        let pts = sigmas
            .iter()
            .filter_map(|&s| mean(rows.iter().filter(|r| r.sigma == s && r.subset == sub && r.precision == w).map(|r| r.after).collect()).map(|a| (s, a)))
            .collect();
        series.push((format!("ES {sub} {w}-bit"), pts));
    }
    // The deployed network last, in black, over any ES line equal to it.
    series.push(("noisy data (deployed, no retraining)".into(), deployed));
    let last = series.len() - 1;
    for (i, (name, pts)) in series.into_iter().enumerate() {
        let color = if i == last { BLACK.to_rgba() } else { Palette99::pick(i).to_rgba() };
        chart
            .draw_series(LineSeries::new(pts.clone(), color.stroke_width(2)))
            .map_err(|e| anyhow!("{e}"))?
            .label(name)
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2)));
        chart.draw_series(pts.into_iter().map(|p| Circle::new(p, 3, color.filled()))).map_err(|e| anyhow!("{e}"))?;
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::LowerLeft)
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .draw()
        .map_err(|e| anyhow!("{e}"))?;
    root.present().map_err(|e| anyhow!("{e}"))?;
    Ok(())
}
