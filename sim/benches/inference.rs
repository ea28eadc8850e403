//! Inference throughput of the bit-accurate simulator against the float
//! reference path, on the MNIST network (`examples/mnist`: 784-200-100-10,
//! 4-bit weights and activations, 177,800 multiply-accumulates per sample,
//! with its weights archive).
//!
//! What is measured: one iteration runs a batch of B = 256 seeded random
//! input samples (uniform codes of the input format) through the network,
//! so the throughput is reported in samples per second
//! (`Throughput::Elements(B)`).
//!
//! * `fixed`: [`Network::infer`] on each sample in turn (one thread), the
//!   raw codes of the input format in, raw codes of the output format out.
//! * `fixed_batch_parallel`: [`Network::infer_batch`] on the whole batch:
//!   chunks of 64 samples spread over rayon's threads (every core), each
//!   dense layer one exact integer matrix product per chunk
//!   (`fptgen_sim::fast`); not a single-thread figure.
//! * `fixed_batch_one_thread`: the same in a one-thread rayon pool.
//! * `fixed_rows_parallel`: [`Network::infer_rows`] on the same codes as
//!   one row-major matrix of bytes (the examples' inputs are 8-bit
//!   unsigned), which the first layer's 8-bit kernel reads as they are.
//! * `f32`, `f64`: [`reference::infer`] on each sample in turn (one
//!   thread), the inputs being the exact values of the same input codes
//!   (converted before timing). As that function is written, it converts
//!   each layer's weight codes to floats on every call; that conversion is
//!   part of what is timed.
//! * `f32_preconverted`: not `reference::infer` but the same `f32`
//!   arithmetic in the same order (bias, then `acc + w * x` in input order,
//!   then `relu`) with the weights and biases converted to `f32` once,
//!   before timing: the cost of the float arithmetic alone, for a fair
//!   comparison. Checked to give exactly `reference::infer::<f32>`'s
//!   outputs.
//!
//! Before timing, the group checks that the outputs are not trivial: the
//! fixed-point outputs differ between samples, `infer_batch` equals `infer`
//! on every sample, `infer` equals the neuron's definition
//! (`dense_neuron_reference`, layer by layer) on the first 16 samples, and the fixed-point argmax agrees with the `f64`
//! reference's on at least half of the samples (random weights and inputs,
//! so no accuracy is claimed; the agreement rate is printed).
//!
//! Run: `cargo bench -p fptgen-sim --bench inference -- --warm-up-time 1 --measurement-time 3`

use std::hint::black_box;
use std::path::PathBuf;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use fptgen_sim::fixed::Format;
use fptgen_sim::model;
use fptgen_sim::network::{dense_neuron_reference, Network};
use fptgen_sim::reference;
use fptgen_sim::weights::{self, Conversion};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// B, samples per iteration.
const BATCH: usize = 256;
/// Samples checked against `dense_neuron_reference` before timing.
const CHECKED: usize = 16;
/// Seed of the inputs.
const SEED: u64 = 2103_14007;

/// A uniformly random raw code of `f`.
fn code(rng: &mut ChaCha8Rng, f: Format) -> i128 {
    let (lo, hi) = (f.lossless_min_raw(), f.max_raw());
    let span = u64::try_from(hi - lo + 1).expect("formats of the examples are at most 64 bits wide");
    lo + i128::from(rng.random_range(0..span))
}

/// Index of the largest value (the first one on ties).
fn argmax<T: PartialOrd + Copy>(v: &[T]) -> usize {
    (0..v.len()).fold(0, |best, i| if v[i] > v[best] { i } else { best })
}

/// One layer's parameters as `f32` values.
struct FloatLayer {
    inputs: usize,
    relu: bool,
    weights: Vec<f32>,
    biases: Vec<f32>,
}

/// The network's parameters converted to `f32` once.
fn float_layers(model: &model::Model, params: &weights::Params) -> Vec<FloatLayer> {
    model
        .layers
        .iter()
        .zip(&params.layers)
        .map(|(layer, p)| {
            let d = layer.as_dense().expect("a dense layer");
            let pr = &d.precision;
            FloatLayer {
                inputs: d.inputs,
                relu: d.activation == model::Activation::Relu,
                weights: p.tensors[fptgen_sim::layers::dense::W].iter().map(|&r| pr.weight.to_f64(r) as f32).collect(),
                biases: p.tensors[fptgen_sim::layers::dense::B].iter().map(|&r| pr.bias.to_f64(r) as f32).collect(),
            }
        })
        .collect()
}

/// `reference::infer::<f32>`'s arithmetic on pre-converted parameters.
fn infer_preconverted(layers: &[FloatLayer], input: &[f32]) -> Vec<f32> {
    let mut x = input.to_vec();
    for l in layers {
        x = l
            .biases
            .iter()
            .zip(l.weights.chunks_exact(l.inputs))
            .map(|(&b, row)| {
                let acc = row.iter().zip(&x).fold(b, |acc, (&w, &xi)| acc + w * xi);
                if l.relu && acc < 0.0 {
                    0.0
                } else {
                    acc
                }
            })
            .collect();
    }
    x
}

fn mnist(c: &mut Criterion) {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../examples/mnist/model.yaml");
    let model = model::load(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let params = weights::load(&model, Conversion::Exact).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let net = Network::new(model, params).expect("the weights fit the model");
    let (model, params) = (net.model(), net.params());

    let mut rng = ChaCha8Rng::seed_from_u64(SEED);
    let inputs: Vec<Vec<i128>> =
        (0..BATCH).map(|_| (0..model.input_len()).map(|_| code(&mut rng, model.input_format)).collect()).collect();
    let fmt = model.input_format;
    let inputs_f64: Vec<Vec<f64>> = inputs.iter().map(|x| x.iter().map(|&r| fmt.to_f64(r)).collect()).collect();
    // 8-bit codes: their values are exact in f32 too.
    let inputs_f32: Vec<Vec<f32>> = inputs_f64.iter().map(|x| x.iter().map(|&v| v as f32).collect()).collect();
    assert!(inputs_f32.iter().flatten().zip(inputs_f64.iter().flatten()).all(|(&a, &b)| f64::from(a) == b));

    // Sanity checks, not timed.
    let fixed: Vec<Vec<i128>> = inputs.iter().map(|x| net.infer(x).expect("valid input")).collect();
    assert_eq!(net.infer_batch(&inputs).expect("valid inputs"), fixed, "infer_batch differs from infer");
    let bytes: Vec<u8> = inputs.iter().flatten().map(|&c| u8::try_from(c).expect("8-bit unsigned input codes")).collect();
    let rows: Vec<i64> = fixed.iter().flatten().map(|&c| c as i64).collect();
    assert_eq!(net.infer_rows(&bytes).expect("valid inputs"), rows, "infer_rows differs from infer");
    // Bit-exactness of what is timed, on the real model: the first samples
    // against the neuron's definition, operation by operation.
    for (x, y) in inputs.iter().zip(&fixed).take(CHECKED) {
        let mut v = x.clone();
        for (layer, p) in model.layers.iter().zip(&params.layers) {
            let d = layer.as_dense().expect("a dense layer");
            v = (0..d.outputs).map(|o| dense_neuron_reference(d, layer.input_format, p, &v, o)).collect();
        }
        assert_eq!(&v, y, "Network::infer differs from dense_neuron_reference");
    }
    let distinct = {
        let mut v = fixed.clone();
        v.sort();
        v.dedup();
        v.len()
    };
    assert!(distinct > 1, "every sample gives the same fixed-point output");
    let float: Vec<Vec<f64>> =
        inputs_f64.iter().map(|x| reference::infer::<f64>(model, params, x).expect("input length")).collect();
    let agree = fixed.iter().zip(&float).filter(|(a, b)| argmax(a) == argmax(b)).count();
    eprintln!(
        "mnist: {BATCH} samples, {distinct} distinct fixed-point outputs, argmax agrees with the f64 reference on {agree}"
    );
    assert!(2 * agree >= BATCH, "the fixed-point argmax agrees with the f64 reference on only {agree} of {BATCH} samples");

    let layers = float_layers(model, params);
    for x in &inputs_f32 {
        let want = reference::infer::<f32>(model, params, x).expect("input length");
        assert_eq!(infer_preconverted(&layers, x), want, "the pre-converted f32 loop differs from reference::infer");
    }

    let mut group = c.benchmark_group("inference/mnist");
    group.throughput(Throughput::Elements(BATCH as u64));
    // One iteration is B full inferences (tens of milliseconds or more):
    // criterion's minimum of 10 samples keeps the run short.
    group.sample_size(10);
    group.bench_function(BenchmarkId::from_parameter("fixed"), |b| {
        b.iter(|| {
            for x in &inputs {
                black_box(net.infer(black_box(x)).expect("valid input"));
            }
        })
    });
    group.bench_function(BenchmarkId::from_parameter("fixed_batch_parallel"), |b| {
        b.iter(|| black_box(net.infer_batch(black_box(&inputs)).expect("valid inputs")))
    });
    group.bench_function(BenchmarkId::from_parameter("fixed_rows_parallel"), |b| {
        b.iter(|| black_box(net.infer_rows(black_box(&bytes)).expect("valid inputs")))
    });
    let one = rayon::ThreadPoolBuilder::new().num_threads(1).build().expect("a thread pool");
    group.bench_function(BenchmarkId::from_parameter("fixed_batch_one_thread"), |b| {
        b.iter(|| one.install(|| black_box(net.infer_batch(black_box(&inputs)).expect("valid inputs"))))
    });
    group.bench_function(BenchmarkId::from_parameter("f32"), |b| {
        b.iter(|| {
            for x in &inputs_f32 {
                black_box(reference::infer::<f32>(model, params, black_box(x)).expect("input length"));
            }
        })
    });
    group.bench_function(BenchmarkId::from_parameter("f32_preconverted"), |b| {
        b.iter(|| {
            for x in &inputs_f32 {
                black_box(infer_preconverted(&layers, black_box(x)));
            }
        })
    });
    group.bench_function(BenchmarkId::from_parameter("f64"), |b| {
        b.iter(|| {
            for x in &inputs_f64 {
                black_box(reference::infer::<f64>(model, params, black_box(x)).expect("input length"));
            }
        })
    });
    group.finish();
}

criterion_group!(benches, mnist);
criterion_main!(benches);
