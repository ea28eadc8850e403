//! The ES training reference (`fptgen_sim::train`) against independent
//! references and hand-worked cases (`docs/training.md`). Every property
//! test runs with a fixed seed.

use std::path::Path;

use fptgen_sim::fixed::{Format, Overflow, Quant};
use fptgen_sim::model::{self, Distribution, Fitness, LfsrWidth, LossQuantization, Model, Noise, Training};
use fptgen_sim::network::Network;
use fptgen_sim::train::lfsr::state_mask;
use fptgen_sim::train::{
    leading_one, naive_loss, po2, rounded_step, saturating_accumulate, taps, trainable_params, Buffer, EvalMode, Evaluator,
    GroupRecord, Lfsr, NoiseSource, ParamRef, TrainError, Trainer,
};
use fptgen_sim::layers::dense::{B, W};
use fptgen_sim::weights::{LayerParams, Params};
use proptest::prelude::*;
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};

fn runner(cases: u32, seed: u8) -> TestRunner {
    TestRunner::new_with_rng(Config { cases, ..Config::default() }, TestRng::from_seed(RngAlgorithm::ChaCha, &[seed; 32]))
}

fn parse(text: &str) -> Model {
    model::parse(text, Path::new("test.yaml")).unwrap_or_else(|e| panic!("{e}\n{text}"))
}

// ---------------------------------------------------------------------------
// Random small networks, parameters, buffers and training configurations.

/// Formats small enough that saturation and wrapping happen often.
const PARAM_FORMATS: &[&str] = &[
    "ap_fixed<4,2>",
    "ap_fixed<6,2,AP_RND_CONV,AP_SAT>",
    "ap_fixed<5,1,AP_TRN,AP_SAT_SYM>",
    "ap_ufixed<4,2,AP_RND,AP_SAT>",
    "ap_int<3>",
];
const ACCUM_FORMATS: &[&str] = &["ap_fixed<8,4,AP_TRN,AP_SAT>", "ap_fixed<10,5>", "ap_fixed<16,8,AP_RND,AP_SAT>", "ap_fixed<7,4,AP_TRN,AP_SAT_SYM>"];
const OUTPUT_FORMATS: &[&str] = &["ap_fixed<6,3,AP_RND_CONV,AP_SAT>", "ap_ufixed<6,2>", "ap_fixed<5,2>", "ap_fixed<8,4,AP_TRN,AP_SAT>"];

/// Accumulators wide enough that a layer's accumulation is exact (wrapping,
/// or saturating but provably never saturating): the batched evaluator's
/// fast path, and one narrow accumulator that keeps it off.
const WIDE_ACCUM_FORMATS: &[&str] = &["ap_fixed<24,12>", "ap_fixed<24,14,AP_RND,AP_SAT>", "ap_fixed<22,12,AP_TRN,AP_SAT_SYM>", "ap_fixed<10,5>"];

/// The input formats of the random networks: `ap_fixed<6,3>`, and (for the
/// wide networks) 8-bit unsigned codes, which take the 8-bit kernels.
const INPUT_FORMATS: &[&str] = &["ap_fixed<6,3>", "ap_ufixed<8,0>"];

/// One layer: outputs, activation, formats (indices), trainable flags.
#[derive(Debug, Clone)]
struct LayerSpec {
    outputs: usize,
    relu: bool,
    weight: usize,
    bias: usize,
    accum: usize,
    output: usize,
    train_w: bool,
    train_b: bool,
}

fn layer_spec() -> impl Strategy<Value = LayerSpec> {
    (1usize..=4, any::<bool>(), 0..PARAM_FORMATS.len(), 0..PARAM_FORMATS.len(), 0..ACCUM_FORMATS.len(), 0..OUTPUT_FORMATS.len(), any::<bool>(), any::<bool>())
        .prop_map(|(outputs, relu, weight, bias, accum, output, train_w, train_b)| LayerSpec { outputs, relu, weight, bias, accum, output, train_w, train_b })
}

/// The YAML of a network with `inputs` inputs and these layers (no training section).
fn net_yaml(inputs: usize, layers: &[LayerSpec]) -> String {
    net_yaml_with(inputs, layers, INPUT_FORMATS[0], ACCUM_FORMATS)
}

/// [`net_yaml`] with another input format and accumulator list.
fn net_yaml_with(inputs: usize, layers: &[LayerSpec], input: &str, accums: &[&str]) -> String {
    let mut s = format!("name: t\ninput: {{shape: [{inputs}], format: '{input}'}}\nweights: w.npz\nlayers:\n");
    let mut n_in = inputs;
    for (i, l) in layers.iter().enumerate() {
        let mut tr = Vec::new();
        if l.train_w {
            tr.push("weights");
        }
        if l.train_b {
            tr.push("biases");
        }
        s += &format!(
            "  - {{name: l{i}, type: dense, inputs: {n_in}, outputs: {}, activation: {}, trainable: [{}],\n     precision: {{weight: '{}', bias: '{}', accum: '{}', output: '{}'}}}}\n",
            l.outputs,
            if l.relu { "relu" } else { "linear" },
            tr.join(", "),
            PARAM_FORMATS[l.weight],
            PARAM_FORMATS[l.bias],
            accums[l.accum],
            OUTPUT_FORMATS[l.output],
        );
        n_in = l.outputs;
    }
    s
}

/// A deterministic stream of codes from a seed.
struct Codes(u64);

impl Codes {
    fn next(&mut self, f: Format) -> i128 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        let lo = f.lossless_min_raw();
        let span = (f.max_raw() - lo + 1) as u128;
        lo + ((self.0 >> 11) as u128 % span) as i128
    }

    fn index(&mut self, n: usize) -> usize {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        ((self.0 >> 11) % n as u64) as usize
    }
}

fn random_params(m: &Model, codes: &mut Codes) -> Params {
    Params {
        layers: m
            .layers
            .iter()
            .map(|l| {
                let d = l.as_dense().expect("a dense layer");
                LayerParams {
                    tensors: vec![
                        (0..d.inputs * d.outputs).map(|_| codes.next(d.precision.weight)).collect(),
                        (0..d.outputs).map(|_| codes.next(d.precision.bias)).collect(),
                    ],
                }
            })
            .collect(),
    }
}

fn random_buffer(m: &Model, samples: usize, codes: &mut Codes) -> Buffer {
    let inputs = (0..samples).map(|_| (0..m.input_len()).map(|_| codes.next(m.input_format)).collect()).collect();
    let targets = (0..samples).map(|_| (0..m.output_len()).map(|_| codes.next(m.output_format())).collect()).collect();
    Buffer::new(m, inputs, targets).expect("valid buffer")
}

fn training_strategy() -> impl Strategy<Value = Training> {
    let fitness = prop::sample::select(vec![Fitness::Antithetic, Fitness::Baseline, Fitness::Plain, Fitness::Ranks]);
    let quant = prop::sample::select(vec![LossQuantization::Po2, LossQuantization::Exact]);
    let width = prop::sample::select(vec![LfsrWidth::W8, LfsrWidth::W16, LfsrWidth::W32]);
    let dist = prop::sample::select(vec![Distribution::Rademacher, Distribution::Uniform]);
    (1usize..=3, 1usize..=4, fitness, quant, width, dist, 1u32..=8, 0u32..=3, -3i32..=8, any::<u64>())
        .prop_map(|(pairs, blocks, fitness, loss_quantization, width, distribution, bits, perturb_shift, lr_shift, seed)| Training {
            population: 2 * pairs,
            iterations: 2,
            blocks,
            buffer: 3,
            noise: Noise { width, distribution, bits },
            perturb_shift,
            lr_shift,
            fitness,
            loss_quantization,
            seed,
            ..Training::default()
        })
}

/// A random network with at least one trainable parameter, its parameters
/// and a buffer of `training.buffer` samples.
fn random_case() -> impl Strategy<Value = (Model, Params, Training, u64)> {
    (1usize..=4, prop::collection::vec(layer_spec(), 1..=3), training_strategy(), any::<u64>())
        .prop_filter("something trainable", |(_, layers, _, _)| layers.iter().any(|l| l.train_w || l.train_b))
        .prop_map(|(inputs, layers, training, seed)| {
            let m = parse(&net_yaml(inputs, &layers));
            let params = random_params(&m, &mut Codes(seed));
            (m, params, training, seed)
        })
}

/// [`random_case`] with the wide accumulators (most layers' accumulation
/// is exact) and, half of the time, 8-bit unsigned inputs.
fn random_wide_case() -> impl Strategy<Value = (Model, Params, Training, u64)> {
    (1usize..=12, prop::collection::vec(layer_spec(), 1..=3), training_strategy(), any::<u64>(), 0..INPUT_FORMATS.len())
        .prop_filter("something trainable", |(_, layers, _, _, _)| layers.iter().any(|l| l.train_w || l.train_b))
        .prop_map(|(inputs, layers, training, seed, x)| {
            let m = parse(&net_yaml_with(inputs, &layers, INPUT_FORMATS[x], WIDE_ACCUM_FORMATS));
            let params = random_params(&m, &mut Codes(seed));
            (m, params, training, seed)
        })
}

/// Every parameter of a dense network, trainable or not: the evaluators
/// must handle any.
fn all_params(m: &Model) -> Vec<ParamRef> {
    let mut all: Vec<ParamRef> = Vec::new();
    for (layer, l) in m.layers.iter().enumerate() {
        let d = l.as_dense().expect("a dense layer");
        all.extend((0..d.inputs * d.outputs).map(|index| ParamRef { layer, tensor: W, index }));
        all.extend((0..d.outputs).map(|index| ParamRef { layer, tensor: B, index }));
    }
    all
}

fn train(m: &Model, p: &Params, t: Training, buffer: &Buffer, mode: EvalMode, iterations: u64) -> (Vec<GroupRecord>, Params, u32) {
    let net = Network::new(m.clone(), p.clone()).expect("valid params");
    let mut trainer = Trainer::with_training(net, t, buffer.clone(), mode).expect("valid trainer");
    let mut records = Vec::new();
    let loss = trainer.run(iterations, &mut |r| records.push(r.clone())).expect("runs");
    (records, trainer.params().clone(), loss)
}

// ---------------------------------------------------------------------------
// The fast path is the naive path.

/// The cached evaluator gives the naive evaluator's loss, bit for bit, for
/// random sets of changed parameters (including repeats, unchanged values
/// and parameters in several layers), and keeps doing so after commits.
#[test]
fn fast_path_equals_naive_path_per_evaluation() {
    runner(96, 11)
        .run(&(random_case(), any::<u64>()), |((m, p, _, seed), seed2)| {
            let buffer = random_buffer(&m, 1 + (seed % 5) as usize, &mut Codes(seed2));
            let net = Network::new(m.clone(), p.clone()).expect("valid");
            let mut fast = Evaluator::new(EvalMode::Cached, &net, buffer.clone());
            let mut naive = Evaluator::new(EvalMode::Naive, &net, buffer.clone());
            prop_assert_eq!(fast.loss(), naive.loss());
            prop_assert_eq!(fast.loss(), naive_loss(&m, &p, &buffer));
            // All parameters, trainable or not: the evaluator must handle any.
            let all = all_params(&m);
            let mut codes = Codes(seed2 ^ 0x5555);
            let mut committed = p.clone();
            for round in 0..12 {
                let k = 1 + codes.index(4);
                let changed: Vec<ParamRef> = (0..k).map(|_| all[codes.index(all.len())]).collect();
                let mut perturbed = committed.clone();
                for r in &changed {
                    let v = codes.next(r.format(&m));
                    r.set(&mut perturbed, v);
                }
                let a = fast.evaluate(&perturbed, &changed).expect("fits");
                let b = naive.evaluate(&perturbed, &changed).expect("fits");
                prop_assert_eq!(a, b, "round {} changed {:?}", round, changed);
                if round % 3 == 2 {
                    committed = perturbed;
                    let a = fast.commit(&committed, &changed).expect("fits");
                    let b = naive.commit(&committed, &changed).expect("fits");
                    prop_assert_eq!(a, b);
                    prop_assert_eq!(a, naive_loss(&m, &committed, &buffer));
                }
            }
            Ok(())
        })
        .expect("the cached evaluator equals the naive one");
}

/// Whole training runs with the cached, the batched and the naive
/// evaluator produce the same records (every member's loss, every noise
/// value, every accumulator, every update) and the same parameters; on
/// networks with narrow accumulators and with wide ones (where the batched
/// evaluator takes its matrix path).
#[test]
fn fast_path_equals_naive_path() {
    let batched_groups = std::cell::Cell::new(0u64);
    for (case, seed) in [(random_case().boxed(), 12u8), (random_wide_case().boxed(), 14)] {
        runner(64, seed)
            .run(&case, |(m, p, t, seed)| {
                let buffer = random_buffer(&m, t.buffer, &mut Codes(seed ^ 0xABCD));
                let (rb, pb, lb) = train(&m, &p, t, &buffer, EvalMode::Naive, 2);
                for mode in [EvalMode::Cached, EvalMode::Batched] {
                    let net = Network::new(m.clone(), p.clone()).expect("valid params");
                    let mut trainer = Trainer::with_training(net, t, buffer.clone(), mode).expect("valid trainer");
                    let mut ra = Vec::new();
                    let la = trainer.run(2, &mut |r| ra.push(r.clone())).expect("runs");
                    batched_groups.set(batched_groups.get() + trainer.evaluator().batched_groups());
                    prop_assert_eq!(ra.len(), rb.len());
                    for (a, b) in ra.iter().zip(&rb) {
                        prop_assert_eq!(a, b, "{:?}", mode);
                    }
                    prop_assert_eq!(trainer.params(), &pb, "{:?}", mode);
                    prop_assert_eq!(la, lb, "{:?}", mode);
                }
                Ok(())
            })
            .expect("training with the cached and batched evaluators equals training with the naive one");
    }
    eprintln!("{} groups took the batched path", batched_groups.get());
    assert!(batched_groups.get() >= 200, "only {} groups took the batched path", batched_groups.get());
}

/// `evaluate_members` with the batched evaluator gives, for every member,
/// the loss the naive and the cached evaluators give member by member, for
/// groups as the trainer forms them (consecutive trainable parameters),
/// random groups within one layer (weights and biases, any order) and
/// random groups across layers (which take the cached path); and keeps
/// doing so after commits of random updates.
#[test]
fn batched_members_equal_naive_and_cached() {
    let mut batched_groups = 0;
    for (case, seed) in [(random_wide_case().boxed(), 21u8), (random_case().boxed(), 22)] {
        let mut runner = runner(64, seed);
        let hits = std::cell::Cell::new(0u64);
        runner
            .run(&(case, any::<u64>()), |((m, p, _, seed), seed2)| {
                let buffer = random_buffer(&m, 1 + (seed % 7) as usize, &mut Codes(seed2));
                let net = Network::new(m.clone(), p.clone()).expect("valid");
                let mut batched = Evaluator::new(EvalMode::Batched, &net, buffer.clone());
                let mut cached = Evaluator::new(EvalMode::Cached, &net, buffer.clone());
                let mut naive = Evaluator::new(EvalMode::Naive, &net, buffer.clone());
                prop_assert_eq!(batched.loss(), naive.loss());
                let all = all_params(&m);
                let mut codes = Codes(seed2 ^ 0x7777);
                let mut committed = p.clone();
                for round in 0..9 {
                    let refs: Vec<ParamRef> = match round % 3 {
                        0 => {
                            let start = codes.index(all.len());
                            let k = 1 + codes.index(6);
                            all[start..(start + k).min(all.len())].to_vec()
                        }
                        1 => {
                            let layer = all[codes.index(all.len())].layer;
                            let mut in_layer: Vec<ParamRef> = all.iter().copied().filter(|r| r.layer == layer).collect();
                            let k = 1 + codes.index(in_layer.len());
                            (0..k).map(|_| in_layer.swap_remove(codes.index(in_layer.len()))).collect()
                        }
                        _ => (0..1 + codes.index(4)).map(|_| all[codes.index(all.len())]).collect(),
                    };
                    let members: Vec<Vec<i128>> = (0..1 + codes.index(6))
                        .map(|_| refs.iter().map(|r| if codes.index(3) == 0 { r.get(&committed) } else { codes.next(r.format(&m)) }).collect())
                        .collect();
                    let mut work = committed.clone();
                    let got = batched.evaluate_members(&mut work, &refs, &members).expect("fits");
                    prop_assert_eq!(&work, &committed, "params unchanged");
                    let want_cached = cached.evaluate_members(&mut work, &refs, &members).expect("fits");
                    let mut want = Vec::new();
                    for v in &members {
                        let mut q = committed.clone();
                        for (r, &x) in refs.iter().zip(v) {
                            r.set(&mut q, x);
                        }
                        want.push(naive.evaluate(&q, &refs).expect("fits"));
                    }
                    prop_assert_eq!(&got, &want, "round {} refs {:?}", round, refs);
                    prop_assert_eq!(&want_cached, &want);
                    if round % 2 == 1 {
                        // Commit one member (the last) as an update.
                        let v = members.last().expect("a member");
                        for (r, &x) in refs.iter().zip(v) {
                            r.set(&mut committed, x);
                        }
                        let a = batched.commit(&committed, &refs).expect("fits");
                        let b = naive.commit(&committed, &refs).expect("fits");
                        let c = cached.commit(&committed, &refs).expect("fits");
                        prop_assert_eq!(a, b);
                        prop_assert_eq!(c, b);
                    }
                }
                hits.set(hits.get() + batched.batched_groups());
                Ok(())
            })
            .expect("the batched evaluator equals the naive and cached ones");
        eprintln!("seed {seed}: {} groups took the batched path", hits.get());
        batched_groups += hits.get();
    }
    assert!(batched_groups >= 200, "only {batched_groups} groups took the batched path");
}

// ---------------------------------------------------------------------------
// What training must not do.

/// With every noise value forced to 0, no member differs from the
/// unperturbed network, every accumulator stays 0 and nothing changes, in
/// every fitness mode.
#[test]
fn zero_noise_changes_nothing() {
    runner(48, 13)
        .run(&random_case(), |(m, p, t, seed)| {
            let buffer = random_buffer(&m, t.buffer, &mut Codes(seed));
            let net = Network::new(m.clone(), p.clone()).expect("valid");
            let mut trainer = Trainer::with_training(net, t, buffer.clone(), EvalMode::Cached).expect("trainer");
            trainer.override_noise(|_| 0);
            let start = trainer.loss();
            let mut records = Vec::new();
            trainer.run(2, &mut |r| records.push(r.clone())).expect("runs");
            prop_assert_eq!(trainer.params(), &p);
            prop_assert_eq!(trainer.loss(), start);
            for r in &records {
                prop_assert!(r.losses.iter().all(|&l| l == start), "{:?}", r.losses);
                prop_assert!(r.accumulators.iter().all(|&g| g == 0), "{:?}", r.accumulators);
                prop_assert_eq!(&r.before, &r.after);
            }
            Ok(())
        })
        .expect("zero noise changes nothing");
}

/// A first layer that is trainable, followed by a layer with zero weights:
/// the output is the second layer's bias whatever the first layer does, so
/// the loss is constant. Antithetic pairs, ranks (all tied) and the
/// baseline cancel it exactly (every accumulator stays 0); `plain` adds
/// `Q(L) * e` anyway and moves the parameters on noise alone.
#[test]
fn antithetic_pairs_cancel_a_constant_loss() {
    let yaml = "name: t\ninput: {shape: [3], format: 'ap_fixed<8,3>'}\nweights: w.npz\nlayers:\n\
        - {name: a, type: dense, inputs: 3, outputs: 4, activation: relu, trainable: [weights, biases],\n   \
           precision: {weight: 'ap_fixed<6,2,AP_RND_CONV,AP_SAT>', bias: 'ap_fixed<6,2>', accum: 'ap_fixed<20,8>', output: 'ap_fixed<8,4>'}}\n\
        - {name: b, type: dense, inputs: 4, outputs: 2, activation: linear,\n   \
           precision: {weight: 'ap_fixed<6,2>', bias: 'ap_fixed<6,2>', accum: 'ap_fixed<20,8>', output: 'ap_fixed<8,4>'}}\n";
    let m = parse(yaml);
    let mut codes = Codes(99);
    let mut p = random_params(&m, &mut codes);
    p.layers[1].tensors[W].iter_mut().for_each(|w| *w = 0);
    p.layers[1].tensors[B] = vec![5, -7];
    let buffer = random_buffer(&m, 8, &mut codes);
    for fitness in [Fitness::Antithetic, Fitness::Baseline, Fitness::Plain, Fitness::Ranks] {
        for distribution in [Distribution::Rademacher, Distribution::Uniform] {
            let t = Training {
                population: 6,
                blocks: 3,
                buffer: 8,
                lr_shift: 2,
                perturb_shift: 1,
                fitness,
                noise: Noise { width: LfsrWidth::W16, distribution, bits: 3 },
                ..Training::default()
            };
            let (records, after, _) = train(&m, &p, t, &buffer, EvalMode::Cached, 3);
            let constant = records[0].losses[0];
            assert!(records.iter().all(|r| r.losses.iter().all(|&l| l == constant)), "the loss does not depend on layer a");
            let moved = records.iter().any(|r| r.accumulators.iter().any(|&g| g != 0));
            match fitness {
                Fitness::Antithetic | Fitness::Baseline | Fitness::Ranks => {
                    assert!(!moved, "{fitness}: accumulators must stay 0");
                    assert_eq!(after, p, "{fitness}: parameters must not move");
                }
                Fitness::Plain => {
                    assert!(moved, "plain: Q(L) * e is not 0 on a constant loss");
                    assert_ne!(after, p, "plain: the parameters drift on noise alone");
                }
            }
        }
    }
}

// ---------------------------------------------------------------------------
// A group worked by hand.

/// One weight, one block, noise forced to known values: every loss,
/// accumulator and the update follow from the tables of docs/training.md.
///
/// Network: y = w * x, x in ap_fixed<8,8> (integers), w in ap_int<8>,
/// accum ap_int<24>, output ap_int<16>, no bias change (bias 0, frozen).
/// Buffer: x = 1 and x = 2, targets 10 and 20 (so the best w is 10).
/// Start w = 4: L(w) = |w - 10| + |2w - 20| = 3 |w - 10|.
#[test]
fn hand_worked_group() {
    let yaml = "name: t\ninput: {shape: [1], format: 'ap_int<8>'}\nweights: w.npz\nlayers:\n\
        - {name: l, type: dense, inputs: 1, outputs: 1, activation: linear, trainable: [weights],\n   \
           precision: {weight: 'ap_int<8>', bias: 'ap_int<8>', accum: 'ap_int<24>', output: 'ap_int<16>'}}\n";
    let m = parse(yaml);
    let p = Params { layers: vec![LayerParams { tensors: vec![vec![4], vec![0]] }] };
    let buffer = Buffer::new(&m, vec![vec![1], vec![2]], vec![vec![10], vec![20]]).expect("buffer");
    let run = |fitness: Fitness, quant: LossQuantization, population: usize, noise: Vec<i64>| {
        let t = Training {
            population,
            blocks: 1,
            buffer: 2,
            perturb_shift: 1,
            lr_shift: 3,
            fitness,
            loss_quantization: quant,
            noise: Noise { width: LfsrWidth::W8, distribution: Distribution::Uniform, bits: 4 },
            ..Training::default()
        };
        let net = Network::new(m.clone(), p.clone()).expect("valid");
        let mut trainer = Trainer::with_training(net, t, buffer.clone(), EvalMode::Naive).expect("trainer");
        let mut it = noise.into_iter();
        trainer.override_noise(move |_| it.next().unwrap_or(0));
        let mut rec = None;
        trainer.run_iteration(&mut |r| rec = Some(r.clone())).expect("runs");
        rec.expect("one group")
    };
    // Antithetic, exact, N = 4, sigma 1. Members: e = 1 (w' = 6, L = 12),
    // -1 (w' = 2, L = 24), e = 3 (w' = 10, L = 0), -3 (w' = -2, L = 36).
    // Pairs: s = 12 - 24 = -12, G += -12 * 1 = -12; s = 0 - 36 = -36,
    // G += -36 * 3 = -108; G = -120. Update: -120 / 8 = -15 exactly,
    // w = 4 + 15 = 19.
    let r = run(Fitness::Antithetic, LossQuantization::Exact, 4, vec![1, 3]);
    assert_eq!(r.noise, vec![vec![1], vec![-1], vec![3], vec![-3]]);
    assert_eq!(r.losses, vec![12, 24, 0, 36]);
    assert_eq!(r.accumulators, vec![-120]);
    assert_eq!(r.after, vec![19]);
    // The same with po2: Q(-12) = -8, Q(-36) = -32; G = -8 - 96 = -104;
    // -104 / 8 = -13, w = 17.
    let r = run(Fitness::Antithetic, LossQuantization::Po2, 4, vec![1, 3]);
    assert_eq!(r.accumulators, vec![-104]);
    assert_eq!(r.after, vec![17]);
    // Baseline, po2, N = 2, noise 2 then -1: L_base = 18. e = 2: w' = 8,
    // L = 6, s = -12, Q = -8, G = -16. e = -1: w' = 2, L = 24, s = 6, Q = 4,
    // G = -16 - 4 = -20. -20 / 8 = -2.5 ties to even: -2; w = 6.
    let r = run(Fitness::Baseline, LossQuantization::Po2, 2, vec![2, -1]);
    assert_eq!(r.baseline, Some(18));
    assert_eq!(r.losses, vec![6, 24]);
    assert_eq!(r.accumulators, vec![-20]);
    assert_eq!(r.after, vec![6]);
    // Plain, po2, the same noise: s = 6 gives Q = 4, G = 8; s = 24 gives
    // Q = 16, G = 8 - 16 = -8. -8 / 8 = -1, w = 5. (Right by luck: the
    // signal is the loss itself.)
    let r = run(Fitness::Plain, LossQuantization::Po2, 2, vec![2, -1]);
    assert_eq!(r.accumulators, vec![-8]);
    assert_eq!(r.after, vec![5]);
    // Clamping: e = 1000 << 1 = 2000 takes w' to 2004 and -1996, clamped to
    // ap_int<8>'s 127 and -128: L(127) = 3 * 117 = 351, L(-128) = 3 * 138
    // = 414.
    let r = run(Fitness::Antithetic, LossQuantization::Exact, 2, vec![1000]);
    assert_eq!(r.losses, vec![351, 414]);
    // G = (351 - 414) * 1000 = -63000; / 8 = -7875; w = 4 + 7875 clamps to 127.
    assert_eq!(r.accumulators, vec![-63000]);
    assert_eq!(r.after, vec![127]);
    // Ranks, exact, N = 4, the noise of the first case: losses 12, 24, 0,
    // 36. Ranks (better minus worse): 12 has one better (0), two worse:
    // -1; 24: 2 - 1 = 1; 0: -3; 36: 3. Pairs: s = -1 - 1 = -2, G += -2 *
    // 1; s = -3 - 3 = -6, G += -6 * 3 = -18; G = -20. -20 / 8 = -2.5 ties
    // to even: -2; w = 6.
    let r = run(Fitness::Ranks, LossQuantization::Exact, 4, vec![1, 3]);
    assert_eq!(r.noise, vec![vec![1], vec![-1], vec![3], vec![-3]]);
    assert_eq!(r.losses, vec![12, 24, 0, 36]);
    assert_eq!(r.accumulators, vec![-20]);
    assert_eq!(r.after, vec![6]);
    // po2: Q(-2) = -2, Q(-6) = -4: G = -2 - 12 = -14; -14 / 8 = -1.75
    // rounds to -2; w = 6.
    let r = run(Fitness::Ranks, LossQuantization::Po2, 4, vec![1, 3]);
    assert_eq!(r.accumulators, vec![-14]);
    assert_eq!(r.after, vec![6]);
}

/// Every group's accumulators and update, recomputed from its record (the
/// member losses, the baseline, the noise) by a reference written apart
/// from the trainer: the fitness signals from the tables of
/// docs/training.md, the ranks of `ranks` as Salimans et al. compute them
/// (positions in the sorted losses, here with ties given their mean
/// position, the utility `rank / (N - 1) - 1/2` in floating point, scaled
/// by `2 (N - 1)`), the quantization by doubling, the saturating sum member
/// by member in 128 bits, the rounded update by floating-point rounding
/// to even. Random networks, every fitness, quantization and noise setting.
#[test]
fn group_updates_equal_an_independent_reference() {
    fn q(s: i128, quant: LossQuantization) -> i128 {
        if quant == LossQuantization::Exact || s == 0 {
            return s;
        }
        let mut p = 1i128;
        while p * 2 <= s.abs() {
            p *= 2;
        }
        p * s.signum()
    }
    fn twice_centered_ranks(l: &[u32]) -> Vec<i128> {
        let n = l.len();
        let mut order: Vec<usize> = (0..n).collect();
        order.sort_by_key(|&i| l[i]);
        let mut rank = vec![0f64; n];
        let mut i = 0;
        while i < n {
            let mut j = i;
            while j + 1 < n && l[order[j + 1]] == l[order[i]] {
                j += 1;
            }
            for k in i..=j {
                rank[order[k]] = (i + j) as f64 / 2.0;
            }
            i = j + 1;
        }
        let scale = 2.0 * (n as f64 - 1.0);
        rank.iter().map(|r| if n == 1 { 0 } else { ((r / (n as f64 - 1.0) - 0.5) * scale).round() as i128 }).collect()
    }
    let seen = std::cell::Cell::new([0usize; 4]);
    runner(64, 31)
        .run(&random_case(), |(m, p, t, seed)| {
            let buffer = random_buffer(&m, t.buffer, &mut Codes(seed));
            let (records, _, _) = train(&m, &p, t, &buffer, EvalMode::Cached, 2);
            for r in &records {
                let n = r.losses.len();
                let mut signals: Vec<(i128, usize)> = Vec::new();
                match t.fitness {
                    Fitness::Antithetic => (0..n / 2).for_each(|i| signals.push((i128::from(r.losses[2 * i]) - i128::from(r.losses[2 * i + 1]), 2 * i))),
                    Fitness::Ranks => {
                        let u = twice_centered_ranks(&r.losses);
                        (0..n / 2).for_each(|i| signals.push((u[2 * i] - u[2 * i + 1], 2 * i)));
                    }
                    Fitness::Baseline => {
                        let b = i128::from(r.baseline.expect("a baseline"));
                        (0..n).for_each(|i| signals.push((i128::from(r.losses[i]) - b, i)));
                    }
                    Fitness::Plain => (0..n).for_each(|i| signals.push((i128::from(r.losses[i]), i))),
                }
                for j in 0..r.params.len() {
                    let mut g: i128 = 0;
                    for &(s, k) in &signals {
                        g = (g + q(s, t.loss_quantization) * i128::from(r.noise[k][j])).clamp(i128::from(i32::MIN), i128::from(i32::MAX));
                    }
                    prop_assert_eq!(i128::from(r.accumulators[j]), g, "block {} of {:?}", j, r.losses);
                    let step = if t.lr_shift >= 0 {
                        let x = g as f64 / 2f64.powi(t.lr_shift);
                        let f = x.floor();
                        let d = x - f;
                        (if d > 0.5 || (d == 0.5 && f.rem_euclid(2.0) == 1.0) { f + 1.0 } else { f }) as i128
                    } else {
                        g << -t.lr_shift
                    };
                    let (lo, hi) = fptgen_sim::train::order::clamp_range(&r.params[j].format(&m));
                    prop_assert_eq!(r.after[j], (r.before[j] - step).clamp(lo, hi));
                }
                let mut s = seen.get();
                s[t.fitness as usize] += usize::from(r.accumulators.iter().any(|&g| g != 0));
                seen.set(s);
            }
            Ok(())
        })
        .expect("the trainer's updates equal the reference's");
    assert!(seen.get().iter().all(|&k| k >= 5), "groups with a non-zero accumulator per fitness: {:?}", seen.get());
}

// ---------------------------------------------------------------------------
// Update rounding and accumulators.

/// `R(G / 2^k)`, nearest with ties to even, worked by hand.
#[test]
fn update_rounding_ties_to_even() {
    for (g, k, want) in [
        (6, 2, 2),    // 1.5 -> 2 (even)
        (10, 2, 2),   // 2.5 -> 2 (even)
        (14, 2, 4),   // 3.5 -> 4 (even)
        (-6, 2, -2),  // -1.5 -> -2 (even)
        (-10, 2, -2), // -2.5 -> -2 (even)
        (-14, 2, -4), // -3.5 -> -4
        (5, 2, 1),    // 1.25 -> 1
        (7, 2, 2),    // 1.75 -> 2
        (-5, 2, -1),  // -1.25 -> -1
        (-7, 2, -2),  // -1.75 -> -2
        (1, 1, 0),    // 0.5 -> 0 (even)
        (3, 1, 2),    // 1.5 -> 2
        (-1, 1, 0),   // -0.5 -> 0
        (-3, 1, -2),  // -1.5 -> -2
        (9, 4, 1),    // 0.5625 -> 1
        (8, 4, 0),    // 0.5 -> 0
        (24, 4, 2),   // 1.5 -> 2
        (-120, 3, -15),
        (123, 0, 123),
        (i32::MIN, 31, -1),  // exactly -1
        (i32::MAX, 31, 1),   // 0.99999... -> 1
        (i32::MIN, 32, 0),   // -0.5 -> 0
        (i32::MAX, 32, 0),   // just under 0.5 -> 0
        (i32::MIN, 0, i32::MIN as i64),
        // Negative shifts multiply, exactly.
        (-3, -1, -6),
        (i32::MIN, -31, -(1i64 << 62)),
        (i32::MAX, -31, (i32::MAX as i64) * (1i64 << 31)),
    ] {
        assert_eq!(rounded_step(g, k), want, "R({g} / 2^{k})");
    }
}

/// The update rounding equals the simulator's own AP_RND_CONV quantization
/// of the exact value `G * 2^-k` (an independent implementation).
#[test]
fn update_rounding_equals_ap_rnd_conv() {
    let int = Format::new(true, 64, 64, Quant::RndConv, Overflow::Wrap).expect("format");
    runner(2000, 14)
        .run(&(any::<i32>(), -31i32..=33), |(g, k)| {
            prop_assert_eq!(i128::from(rounded_step(g, k)), int.quantize_exact(i128::from(g), k));
            Ok(())
        })
        .expect("rounding is AP_RND_CONV");
}

#[test]
fn accumulators_saturate() {
    assert_eq!(saturating_accumulate(i32::MAX - 1, 5), i32::MAX);
    assert_eq!(saturating_accumulate(i32::MIN + 1, -5), i32::MIN);
    assert_eq!(saturating_accumulate(0, 1 << 62), i32::MAX);
    assert_eq!(saturating_accumulate(i32::MAX, -(1 << 40)), i32::MIN);
    assert_eq!(saturating_accumulate(-3, 10), 7);
}

// ---------------------------------------------------------------------------
// Loss quantization.

/// `po2` against a reference written differently: the largest power of two
/// not above |s| found by doubling in u128, and, where a double holds |s|
/// exactly, the exponent field of that double.
#[test]
fn po2_equals_independent_reference() {
    fn reference(s: i64) -> i64 {
        if s == 0 {
            return 0;
        }
        let a = i128::from(s).unsigned_abs();
        let mut p: u128 = 1;
        while p * 2 <= a {
            p *= 2;
        }
        let p = p as i128;
        (if s < 0 { -p } else { p }) as i64
    }
    let strat = prop_oneof![any::<i64>(), -70000i64..70000, (0u32..63).prop_map(|k| 1i64 << k), (1u32..63).prop_map(|k| (1i64 << k) - 1)];
    runner(4000, 15)
        .run(&strat, |s| {
            prop_assert_eq!(po2(s), reference(s));
            let a = s.unsigned_abs();
            if a != 0 && a < (1 << 53) {
                let exp = ((((a as f64).to_bits() >> 52) & 0x7ff) as i64 - 1023) as u32;
                prop_assert_eq!(leading_one(a), Some(exp));
            }
            Ok(())
        })
        .expect("po2 equals the reference");
    assert_eq!(po2(0), 0);
    assert_eq!(leading_one(0), None);
    assert_eq!(po2(1), 1);
    assert_eq!(po2(-1), -1);
    assert_eq!(po2(12), 8);
    assert_eq!(po2(-36), -32);
    assert_eq!(po2(i64::MIN), i64::MIN);
    assert_eq!(po2(i64::MAX), 1 << 62);
}

// ---------------------------------------------------------------------------
// Noise.

fn widths() -> [LfsrWidth; 3] {
    [LfsrWidth::W8, LfsrWidth::W16, LfsrWidth::W32]
}

/// 8 and 16 bits by stepping: from any start, the state returns after
/// exactly 2^w - 1 steps and visits every nonzero state once.
#[test]
fn lfsr_period_is_maximal_by_stepping() {
    for w in [LfsrWidth::W8, LfsrWidth::W16] {
        let n = state_mask(w) as usize;
        let mut seen = vec![false; n + 1];
        let mut l = Lfsr::new(w, 1).expect("state 1");
        for step in 0..n {
            let s = l.state() as usize;
            assert!(!seen[s], "width {}: state {s:#x} repeats after {step} steps", w.bits());
            seen[s] = true;
            l.step();
        }
        assert_eq!(l.state(), 1, "width {}: period is not 2^w - 1", w.bits());
        assert!(!seen[0]);
    }
}

/// A w x w matrix over GF(2), column k = the image of basis vector k.
type Matrix = Vec<u64>;

fn apply(a: &Matrix, v: u64) -> u64 {
    a.iter().enumerate().filter(|(k, _)| v >> k & 1 == 1).fold(0, |acc, (_, c)| acc ^ c)
}

fn mul(a: &Matrix, b: &Matrix) -> Matrix {
    b.iter().map(|&c| apply(a, c)).collect()
}

fn pow(a: &Matrix, mut e: u64) -> Matrix {
    let mut result: Matrix = (0..a.len()).map(|k| 1u64 << k).collect();
    let mut base = a.clone();
    while e > 0 {
        if e & 1 == 1 {
            result = mul(&result, &base);
        }
        base = mul(&base, &base);
        e >>= 1;
    }
    result
}

/// All widths algebraically, including 32 where stepping takes too long:
/// one step is a linear map A on GF(2)^w (built from `Lfsr::step` itself).
/// A^(2^w - 1) = I, and A^((2^w - 1) / q) != I for every prime q dividing
/// 2^w - 1, so A has order exactly 2^w - 1; the only elements of GL(w, 2)
/// of that order are Singer cycles, which run through all 2^w - 1 nonzero
/// states in one cycle. (2^8 - 1 = 3*5*17, 2^16 - 1 = 3*5*17*257,
/// 2^32 - 1 = 3*5*17*257*65537.)
#[test]
fn lfsr_period_is_maximal_by_matrix_order() {
    for w in widths() {
        let bits = w.bits();
        let a: Matrix = (0..bits)
            .map(|k| {
                let mut l = Lfsr::new(w, 1 << k).expect("nonzero");
                l.step();
                l.state()
            })
            .collect();
        // The map is linear, as the Galois form promises.
        let s = 0x5A5A_5A5Au64 & state_mask(w);
        let mut l = Lfsr::new(w, s).expect("nonzero");
        l.step();
        assert_eq!(apply(&a, s), l.state());
        let n = state_mask(w);
        let identity: Matrix = (0..bits).map(|k| 1u64 << k).collect();
        assert_eq!(pow(&a, n), identity, "width {bits}: A^(2^w-1) != I");
        for q in [3u64, 5, 17, 257, 65537].into_iter().filter(|q| n.is_multiple_of(*q)) {
            assert_ne!(pow(&a, n / q), identity, "width {bits}: order divides (2^w-1)/{q}");
        }
        // The product of the primes is 2^w - 1: no prime factor is missing.
        let product: u64 = [3u64, 5, 17, 257, 65537].into_iter().filter(|q| n.is_multiple_of(*q)).product();
        assert_eq!(product, n);
        assert_eq!(taps(w) >> (bits - 1), 1, "the top tap is x^w");
    }
}

/// Consecutive noise values use consecutive, disjoint runs of the LFSR's
/// output bits: `uniform` takes b bits (first = least significant) as a
/// two's complement `u` and gives `2u + 1`, `rademacher` takes one bit.
#[test]
fn uniform_values_never_reuse_bits() {
    let strat = (prop::sample::select(widths().to_vec()), 1u32..=32, any::<u64>(), any::<usize>(), any::<bool>());
    runner(200, 16)
        .run(&strat, |(w, b, seed, block, uniform)| {
            let b = b.min(w.bits());
            let distribution = if uniform { Distribution::Uniform } else { Distribution::Rademacher };
            let noise = Noise { width: w, distribution, bits: b };
            let mut src = NoiseSource::seeded(&noise, seed, block % 64);
            let mut bits = Lfsr::seeded(w, seed, block % 64);
            for _ in 0..40 {
                let e = src.draw();
                if uniform {
                    let mut v: i64 = 0;
                    for k in 0..b {
                        v |= i64::from(bits.step()) << k;
                    }
                    let want = 2 * (if v >= 1 << (b - 1) { v - (1 << b) } else { v }) + 1;
                    prop_assert_eq!(e, want);
                    prop_assert!(e > -(1 << b) && e < 1 << b && e % 2 != 0);
                } else {
                    prop_assert_eq!(e, if bits.step() { 1 } else { -1 });
                }
                prop_assert_eq!(src.lfsr(), &bits, "the source used exactly the bits of its values");
            }
            Ok(())
        })
        .expect("noise values take fresh bits");
}

// ---------------------------------------------------------------------------
// Determinism and configuration.

/// The same seed gives the same records and parameters.
#[test]
fn same_seed_same_result() {
    runner(24, 17)
        .run(&random_case(), |(m, p, t, seed)| {
            let buffer = random_buffer(&m, t.buffer, &mut Codes(seed));
            let a = train(&m, &p, t, &buffer, EvalMode::Cached, 2);
            let b = train(&m, &p, t, &buffer, EvalMode::Cached, 2);
            prop_assert_eq!(a, b);
            Ok(())
        })
        .expect("training is deterministic");
}

/// The trainer draws a group's noise block by block in parallel; the values
/// are those of the hardware's order (member by member, block by block, each
/// block from its own LFSR), here drawn one at a time through the test
/// override. 320 trainable weights in groups of 300 blocks: three chunks of
/// blocks, and a short last group.
#[test]
fn parallel_noise_draws_equal_the_hardware_order() {
    let layer = LayerSpec { outputs: 8, relu: true, weight: 0, bias: 1, accum: 2, output: 0, train_w: true, train_b: false };
    let m = parse(&net_yaml(40, &[layer]));
    runner(12, 23)
        .run(&(training_strategy(), any::<u64>()), |(t, seed)| {
            let t = Training { blocks: 300, ..t };
            let p = random_params(&m, &mut Codes(seed));
            let buffer = random_buffer(&m, t.buffer, &mut Codes(seed ^ 1));
            let parallel = train(&m, &p, t, &buffer, EvalMode::Cached, 2);
            let net = Network::new(m.clone(), p.clone()).expect("valid params");
            let mut trainer = Trainer::with_training(net, t, buffer.clone(), EvalMode::Cached).expect("valid trainer");
            let mut sources: Vec<NoiseSource> = (0..t.blocks).map(|b| NoiseSource::seeded(&t.noise, t.seed, b)).collect();
            trainer.override_noise(move |b| sources[b].draw());
            let mut records = Vec::new();
            let loss = trainer.run(2, &mut |r| records.push(r.clone())).expect("runs");
            prop_assert_eq!(parallel, (records, trainer.params().clone(), loss));
            Ok(())
        })
        .expect("the parallel draws are the hardware's");
}

/// Parameters are numbered layer by layer, weights row-major before biases;
/// groups take P consecutive ones.
#[test]
fn trainable_order_and_groups() {
    let yaml = "name: t\ninput: {shape: [2], format: 'ap_fixed<8,3>'}\nweights: w.npz\nlayers:\n\
        - {name: a, type: dense, inputs: 2, outputs: 2, activation: relu, trainable: [biases, weights],\n   \
           precision: {weight: 'ap_fixed<6,2>', bias: 'ap_fixed<6,2>', accum: 'ap_fixed<20,8>', output: 'ap_fixed<8,4>'}}\n\
        - {name: b, type: dense, inputs: 2, outputs: 1, activation: linear, trainable: [biases],\n   \
           precision: {weight: 'ap_fixed<6,2>', bias: 'ap_fixed<6,2>', accum: 'ap_fixed<20,8>', output: 'ap_fixed<8,4>'}}\n\
        training: {population: 2, blocks: 3, buffer: 1}\n";
    let m = parse(yaml);
    let order: Vec<String> = trainable_params(&m).iter().map(|p| p.describe(&m)).collect();
    assert_eq!(order, ["a/w[0, 0]", "a/w[0, 1]", "a/w[1, 0]", "a/w[1, 1]", "a/b[0]", "a/b[1]", "b/b[0]"]);
    let p = random_params(&m, &mut Codes(3));
    let buffer = random_buffer(&m, 1, &mut Codes(4));
    let net = Network::new(m.clone(), p).expect("valid");
    let mut trainer = Trainer::new(net, buffer, EvalMode::Cached).expect("trainer");
    assert_eq!(trainer.groups(), 3);
    let mut groups = Vec::new();
    trainer.run_iteration(&mut |r| groups.push(r.params.iter().map(|p| p.describe(&m)).collect::<Vec<_>>())).expect("runs");
    assert_eq!(groups, vec![vec!["a/w[0, 0]", "a/w[0, 1]", "a/w[1, 0]"], vec!["a/w[1, 1]", "a/b[0]", "a/b[1]"], vec!["b/b[0]"]]);
    // One mirrored pair per group: one draw (one bit) per active block and
    // group. The last group's idle blocks draw nothing: block 0 drew 3 bits,
    // blocks 1 and 2 drew 2.
    let draws = |j: usize| {
        let mut l = Lfsr::seeded(LfsrWidth::W8, 1, j);
        let target = trainer.noise_sources()[j].lfsr().state();
        (0..300).position(|_| {
            let hit = l.state() == target;
            l.step();
            hit
        })
    };
    assert_eq!(draws(0), Some(3));
    assert_eq!(draws(1), Some(2));
    assert_eq!(draws(2), Some(2));
}

#[test]
fn trainer_refuses_bad_configurations() {
    let yaml = "name: t\ninput: {shape: [1], format: 'ap_int<8>'}\nweights: w.npz\nlayers:\n\
        - {name: l, type: dense, inputs: 1, outputs: 1, activation: linear,\n   \
           precision: {weight: 'ap_int<8>', bias: 'ap_int<8>', accum: 'ap_int<24>', output: 'ap_int<16>'}}\n";
    let m = parse(yaml);
    let p = Params { layers: vec![LayerParams { tensors: vec![vec![1], vec![0]] }] };
    let buffer = Buffer::new(&m, vec![vec![1]], vec![vec![1]]).expect("buffer");
    let net = || Network::new(m.clone(), p.clone()).expect("valid");
    let ok = Training { population: 2, buffer: 1, ..Training::default() };
    assert_eq!(Trainer::new(net(), buffer.clone(), EvalMode::Cached).err(), Some(TrainError::NoTraining));
    assert_eq!(Trainer::with_training(net(), ok, buffer.clone(), EvalMode::Cached).err(), Some(TrainError::NoTrainable));
    for bad in [
        Training { population: 3, ..ok },
        Training { lr_shift: 32, ..ok },
        Training { lr_shift: -32, ..ok },
        Training { perturb_shift: 40, ..ok },
        Training { blocks: 0, ..ok },
        Training { noise: Noise { bits: 9, ..ok.noise }, ..ok },
        Training { noise: Noise { bits: 0, ..ok.noise }, ..ok },
    ] {
        assert!(matches!(Trainer::with_training(net(), bad, buffer.clone(), EvalMode::Cached), Err(TrainError::Config(_))), "{bad:?}");
    }
    let two = Training { buffer: 2, ..ok };
    assert!(matches!(Trainer::with_training(net(), two, buffer.clone(), EvalMode::Cached), Err(TrainError::BufferSize { got: 1, want: 2 })));
    assert!(Buffer::new(&m, vec![vec![1, 2]], vec![vec![1]]).is_err(), "input length");
    assert!(Buffer::new(&m, vec![vec![128]], vec![vec![1]]).is_err(), "input code");
    assert!(Buffer::new(&m, vec![vec![1]], vec![vec![1 << 15]]).is_err(), "target code");
    assert!(Buffer::new(&m, vec![vec![1]], vec![]).is_err(), "pairs");
    let mut e = Evaluator::new(EvalMode::Cached, &net(), buffer);
    let stray = ParamRef { layer: 3, tensor: W, index: 0 };
    assert!(e.evaluate(&p, &[stray]).is_err());
    assert!(e.evaluate(&Params { layers: vec![] }, &[]).is_err());
}
