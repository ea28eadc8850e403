//! Member evaluations of ES training: the cached evaluator against naive
//! recomputation and against the float reference path (`docs/training.md`,
//! "The simulator").
//!
//! What is measured: one call of [`Evaluator::evaluate`] for one ES member,
//! that is, the buffer loss of the committed parameters with the first
//! group (in training order) whose member changes some sample's output,
//! its P trainable parameters perturbed (P = `blocks`, each moved by a
//! Rademacher value `±1 << perturb_shift` and clamped, as
//! `Trainer::run_group` does). The buffer holds M = 64 seeded random input
//! samples with seeded random targets, so the throughput is reported in
//! member-sample evaluations per second (`Throughput::Elements(M)`): one
//! element is one buffered sample evaluated for one member.
//!
//! * `cached`: [`EvalMode::Cached`], which reuses the unperturbed layer
//!   outputs and recomputes only the changed neurons and what follows them.
//! * `naive`: [`EvalMode::Naive`], every sample through every layer.
//! * `float`: the same member on the float reference path: the perturbed
//!   parameters through [`reference::infer`]`::<f32>` for every buffered
//!   sample (inputs the exact values of the input codes), and the `mae`
//!   loss (the sum of `|y - t|`) in `f32` against the targets' values. The
//!   float inputs and targets are converted before timing; as
//!   `reference::infer` is written, the weight codes are converted to
//!   floats on every call, and that is timed.
//!
//! Setting up (building the evaluator and its cache) is not timed; nothing
//! is committed, so every iteration evaluates the same member against the
//! same cache. Before timing, each group checks once that the two modes
//! give the same loss for the member, and that the member does change the
//! loss of at least one sample, so a wrong or trivial fast path cannot be
//! what is measured. The float member loss must differ from the float loss
//! of the committed parameters.
//!
//! `es_group/mnist/P1000` times a whole group instead: its N = 100 members
//! at once with [`EvalMode::Batched`] (`Evaluator::evaluate_members`) and,
//! for the same call, the cached evaluator member by member (see
//! `bench_group`).
//!
//! Networks: `examples/jet_tagging` (16-64-32-32-5, fc4 trainable) and
//! `examples/mnist` (784-200-100-10, fc1 trainable), with P from their
//! `training:` sections (4 and 100) and their weights archives.
//!
//! Run: `cargo bench -p fptgen-sim --bench es_eval -- --warm-up-time 1 --measurement-time 3`

use std::hint::black_box;
use std::path::PathBuf;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use fptgen_sim::fixed::Format;
use fptgen_sim::model::{self, Model};
use fptgen_sim::network::{dense_forward, Network};
use fptgen_sim::reference;
use fptgen_sim::train::eval::{EvalMode, Evaluator};
use fptgen_sim::train::order::clamp_range;
use fptgen_sim::train::{trainable_params, Buffer, ParamRef};
use fptgen_sim::weights::{self, Conversion, Params};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// M, buffered samples.
const BUFFER: usize = 64;
/// P when the model has no `training:` section.
const DEFAULT_BLOCKS: usize = 4;
/// Seed of the buffer and of the member's noise.
const SEED: u64 = 2103_14007;

/// One benchmark case: the network, its buffer, and one member.
struct Case {
    net: Network,
    buffer: Buffer,
    /// The committed parameters with the member's perturbation applied.
    perturbed: Params,
    /// The perturbed parameters (the group chosen in [`case`]).
    changed: Vec<ParamRef>,
}

fn load(example: &str) -> (Model, Params) {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../examples").join(example).join("model.yaml");
    let model = model::load(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let params = weights::load(&model, Conversion::Exact).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    (model, params)
}

/// A uniformly random raw code of `f`.
fn code(rng: &mut ChaCha8Rng, f: Format) -> i128 {
    let (lo, hi) = (f.lossless_min_raw(), f.max_raw());
    let span = u64::try_from(hi - lo + 1).expect("formats of the examples are at most 64 bits wide");
    lo + i128::from(rng.random_range(0..span))
}

/// The final outputs of one sample, through every layer.
fn forward(model: &Model, params: &Params, x: &[i128]) -> Vec<i128> {
    let mut v = x.to_vec();
    for (layer, p) in model.layers.iter().zip(&params.layers) {
        v = dense_forward(layer.as_dense().expect("a dense layer"), layer.input_format, p, &v);
    }
    v
}

fn case(example: &str, blocks: Option<usize>) -> Case {
    let (model, params) = load(example);
    let training = model.training.unwrap_or_default();
    let blocks = blocks.unwrap_or(if model.training.is_some() { training.blocks } else { DEFAULT_BLOCKS });
    let mut rng = ChaCha8Rng::seed_from_u64(SEED);
    let inputs: Vec<Vec<i128>> =
        (0..BUFFER).map(|_| (0..model.input_len()).map(|_| code(&mut rng, model.input_format)).collect()).collect();
    let targets: Vec<Vec<i128>> =
        (0..BUFFER).map(|_| (0..model.output_len()).map(|_| code(&mut rng, model.output_format())).collect()).collect();
    let buffer = Buffer::new(&model, inputs, targets).expect("a valid buffer");

    // The first group whose member changes some sample's output, perturbed
    // as `Trainer::run_group` perturbs a member. (A member that changes no
    // output would let the cached evaluator return its cached loss without
    // work. With trained weights the first groups can be such: the MNIST
    // example's fc1 neuron 0 is dead on these inputs.)
    let order = trainable_params(&model);
    assert!(order.len() >= blocks, "{example}: {} trainable parameters, fewer than P = {blocks}", order.len());
    let mut found = None;
    for (g, changed) in order.chunks_exact(blocks).enumerate() {
        let mut perturbed = params.clone();
        for r in changed {
            let (lo, hi) = clamp_range(&r.format(&model));
            let before = r.get(&params);
            let e: i128 = if rng.random::<bool>() { 1 } else { -1 };
            // Move away from a bound rather than be clamped back onto it.
            let e = if before + e > hi || before + e < lo { -e } else { e };
            let w = (before + (e << training.perturb_shift)).clamp(lo, hi);
            assert_ne!(w, before, "{example}: {} does not move", r.describe(&model));
            r.set(&mut perturbed, w);
        }
        let moved = buffer.inputs().iter().filter(|x| forward(&model, &params, x) != forward(&model, &perturbed, x)).count();
        if moved > 0 {
            found = Some((g, changed.to_vec(), perturbed, moved));
            break;
        }
    }
    let (g, changed, perturbed, moved) = found.unwrap_or_else(|| panic!("{example}: no group's member changes any sample's output"));
    eprintln!(
        "{example}: P = {blocks}, group {g} ({}), the member changes the outputs of {moved} of {BUFFER} samples",
        match changed.as_slice() {
            [one] => one.describe(&model),
            [first, .., last] => format!("{} .. {}", first.describe(&model), last.describe(&model)),
            [] => String::new(),
        }
    );

    let net = Network::new(model, params).expect("the weights fit the model");
    Case { net, buffer, perturbed, changed }
}

fn bench_example(c: &mut Criterion, example: &str, sample_size: Option<usize>) {
    let Case { net, buffer, perturbed, changed } = case(example, None);
    let mut cached = Evaluator::new(EvalMode::Cached, &net, buffer.clone());
    let mut naive = Evaluator::new(EvalMode::Naive, &net, buffer.clone());
    assert_eq!(cached.loss(), naive.loss(), "{example}: committed losses differ");
    let a = cached.evaluate(&perturbed, &changed).expect("fits");
    let b = naive.evaluate(&perturbed, &changed).expect("fits");
    assert_eq!(a, b, "{example}: the cached evaluator disagrees with the naive one for the benchmarked member");
    assert_eq!(a, fptgen_sim::train::naive_loss(net.model(), &perturbed, &buffer), "{example}: member loss");
    eprintln!("{example}: loss {} committed, {a} for the member (both modes)", naive.loss());

    // The float path's buffer: exact values of the input and target codes.
    let model = net.model();
    let (fin, fout) = (model.input_format, model.output_format());
    let inputs_f32: Vec<Vec<f32>> =
        buffer.inputs().iter().map(|x| x.iter().map(|&r| fin.to_f64(r) as f32).collect()).collect();
    let targets_f32: Vec<Vec<f32>> =
        buffer.targets().iter().map(|t| t.iter().map(|&r| fout.to_f64(r) as f32).collect()).collect();
    let float_loss = |params: &Params| -> f32 {
        inputs_f32
            .iter()
            .zip(&targets_f32)
            .map(|(x, t)| {
                let y = reference::infer::<f32>(model, params, x).expect("input length");
                y.iter().zip(t).map(|(&y, &t)| (y - t).abs()).sum::<f32>()
            })
            .sum()
    };
    let (float_committed, float_member) = (float_loss(net.params()), float_loss(&perturbed));
    assert_ne!(float_committed, float_member, "{example}: the member does not change the float loss");
    eprintln!("{example}: float loss {float_committed} committed, {float_member} for the member");

    let mut group = c.benchmark_group(format!("es_eval/{example}"));
    group.throughput(Throughput::Elements(buffer.len() as u64));
    if let Some(n) = sample_size {
        group.sample_size(n);
    }
    for (name, evaluator) in [("cached", &mut cached), ("naive", &mut naive)] {
        group.bench_function(BenchmarkId::from_parameter(name), |bench| {
            bench.iter(|| evaluator.evaluate(black_box(&perturbed), black_box(&changed)).expect("fits"))
        });
    }
    group.bench_function(BenchmarkId::from_parameter("float"), |bench| bench.iter(|| float_loss(black_box(&perturbed))));
    group.finish();
}

/// A whole group: the N members of the [`case`] group with P = `blocks`
/// (antithetic pairs of Rademacher noise `+-1 << perturb_shift`, clamped,
/// as `Trainer::run_group` forms them), all evaluated by one
/// [`Evaluator::evaluate_members`] call with [`EvalMode::Batched`], and by
/// the cached evaluator (the same call, member by member). Throughput:
/// member-sample evaluations (N * M per call). Checked first: both give
/// the same losses, and some member's loss differs from the committed one.
fn bench_group(c: &mut Criterion, example: &str, blocks: usize) {
    let Case { net, buffer, changed, .. } = case(example, Some(blocks));
    let model = net.model().clone();
    let training = model.training.unwrap_or_default();
    let mut rng = ChaCha8Rng::seed_from_u64(SEED ^ 1);
    let before: Vec<i128> = changed.iter().map(|r| r.get(net.params())).collect();
    let mut noise: Vec<i128> = Vec::new();
    let members: Vec<Vec<i128>> = (0..training.population)
        .map(|m| {
            if m % 2 == 0 {
                noise = (0..changed.len()).map(|_| if rng.random::<bool>() { 1 } else { -1 }).collect();
            } else {
                noise.iter_mut().for_each(|e| *e = -*e);
            }
            changed
                .iter()
                .zip(&before)
                .zip(&noise)
                .map(|((r, &b), &e)| {
                    let (lo, hi) = clamp_range(&r.format(&model));
                    (b + (e << training.perturb_shift)).clamp(lo, hi)
                })
                .collect()
        })
        .collect();
    let mut params = net.params().clone();
    let mut batched = Evaluator::new(EvalMode::Batched, &net, buffer.clone());
    let mut cached = Evaluator::new(EvalMode::Cached, &net, buffer.clone());
    let a = batched.evaluate_members(&mut params, &changed, &members).expect("fits");
    let b = cached.evaluate_members(&mut params, &changed, &members).expect("fits");
    assert_eq!(a, b, "{example}: the batched evaluator disagrees with the cached one");
    assert_eq!(batched.batched_groups(), 1, "{example}: the group did not take the batched path");
    assert!(a.iter().any(|&l| l != batched.loss()), "{example}: no member changes the loss");
    let mut group = c.benchmark_group(format!("es_group/{example}/P{blocks}"));
    group.throughput(Throughput::Elements((members.len() * buffer.len()) as u64));
    group.sample_size(10);
    for (name, evaluator) in [("batched", &mut batched), ("cached", &mut cached)] {
        group.bench_function(BenchmarkId::from_parameter(name), |bench| {
            bench.iter(|| evaluator.evaluate_members(&mut params, black_box(&changed), black_box(&members)).expect("fits"))
        });
    }
    group.finish();
}

/// MNIST's fc1 with P = 1,000, the seed 003 setting of `docs/results/mnist.md`.
fn mnist_group(c: &mut Criterion) {
    bench_group(c, "mnist", 1000);
}

fn jet_tagging(c: &mut Criterion) {
    bench_example(c, "jet_tagging", None);
}

/// A naive MNIST evaluation is 64 x 177,800 multiply-accumulates: criterion's
/// minimum of 10 samples keeps the run short.
fn mnist(c: &mut Criterion) {
    bench_example(c, "mnist", Some(10));
}

criterion_group!(benches, jet_tagging, mnist, mnist_group);
criterion_main!(benches);
