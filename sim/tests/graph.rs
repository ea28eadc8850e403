//! Models as directed acyclic graphs (`inputs:`, `concat`, `add`): every
//! evaluation path against definitions written here, independently of
//! `sim/src/model` and `sim/src/layers` (a direct convolution loop, a
//! direct 2x2 maximum, a direct dense sum, the gather written out pixel by
//! pixel, `cast<output>(a + b)` of the exact sum); the cached and batched
//! ES evaluators against full evaluation on graphs with trainable tensors
//! in both branches; the graph's QAT backward pass against the numerical
//! gradient of the float reference; the lowered add's constant tensors in
//! the weights archive; and every new model-file error at its line and
//! column.

use std::path::Path;

use proptest::prelude::*;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use fptgen_sim::fixed::{Format, Overflow, Quant};
use fptgen_sim::model::{parse, Model};
use fptgen_sim::network::Network;
use fptgen_sim::qat::backward_graph;
use fptgen_sim::train::{trainable_params, Buffer, EvalMode, Evaluator};
use fptgen_sim::weights::{self, LayerParams, Params};

fn fmt(s: &str) -> Format {
    s.parse().expect("format")
}

fn model(yaml: &str) -> Model {
    parse(yaml, Path::new("model.yaml")).unwrap_or_else(|e| panic!("{e}\n{yaml}"))
}

/// A random code of `f`.
fn code(rng: &mut ChaCha8Rng, f: Format) -> i128 {
    rng.random_range(f.lossless_min_raw()..=f.max_raw())
}

/// Random codes for every tensor; a lowered layer keeps its constants.
fn random_params(m: &Model, rng: &mut ChaCha8Rng) -> Params {
    Params {
        layers: m
            .layers
            .iter()
            .map(|l| match &l.lowered {
                Some(c) => c.params.clone(),
                None => LayerParams {
                    tensors: l.kind().tensors().iter().map(|t| (0..t.len()).map(|_| code(rng, t.format)).collect()).collect(),
                },
            })
            .collect(),
    }
}

fn random_input(m: &Model, rng: &mut ChaCha8Rng) -> Vec<i128> {
    (0..m.input_len()).map(|_| code(rng, m.input_format)).collect()
}

/// `same` padding on top (left) and output size, as TensorFlow defines it.
fn tf_same(input: usize) -> (usize, usize) {
    let total = (input + 2).saturating_sub(input);
    (input, total / 2)
}

/// A stride-1 `same` convolution by its definition: for each output pixel
/// and filter, the bias, then every in-image product in (ky, kx, c) order,
/// each cast to the accumulator and added, then relu and the output cast.
fn conv_same(x: &[i128], [h, w, c]: [usize; 3], p: &LayerParams, filters: usize, [xf, wf, bf, af, yf]: [Format; 5], relu: bool) -> Vec<i128> {
    let (wts, bias) = (&p.tensors[0], &p.tensors[1]);
    let ((oh, pt), (ow, pl)) = (tf_same(h), tf_same(w));
    let mut out = Vec::new();
    for oy in 0..oh {
        for ox in 0..ow {
            for f in 0..filters {
                let mut acc = af.cast_from(bias[f], &bf);
                for ky in 0..3 {
                    for kx in 0..3 {
                        let (iy, ix) = ((oy + ky) as isize - pt as isize, (ox + kx) as isize - pl as isize);
                        if iy < 0 || ix < 0 || iy >= h as isize || ix >= w as isize {
                            continue;
                        }
                        for ci in 0..c {
                            let xv = x[((iy as usize) * w + ix as usize) * c + ci];
                            let wv = wts[((f * 3 + ky) * 3 + kx) * c + ci];
                            acc = af.add(acc, af.mul_from(wv, &wf, xv, &xf));
                        }
                    }
                }
                if relu && acc < 0 {
                    acc = 0;
                }
                out.push(yf.cast_from(acc, &af));
            }
        }
    }
    out
}

/// A dense layer by its definition.
fn dense(x: &[i128], p: &LayerParams, outputs: usize, [xf, wf, bf, af, yf]: [Format; 5], relu: bool) -> Vec<i128> {
    let n = x.len();
    (0..outputs)
        .map(|o| {
            let mut acc = af.cast_from(p.tensors[1][o], &bf);
            for (i, &xi) in x.iter().enumerate() {
                acc = af.add(acc, af.mul_from(p.tensors[0][o * n + i], &wf, xi, &xf));
            }
            if relu && acc < 0 {
                acc = 0;
            }
            yf.cast_from(acc, &af)
        })
        .collect()
}

/// 2x2 max-pooling, stride 2, a last odd row or column dropped.
fn maxpool(x: &[i128], [h, w, c]: [usize; 3]) -> Vec<i128> {
    let mut out = Vec::new();
    for oy in 0..h / 2 {
        for ox in 0..w / 2 {
            for ci in 0..c {
                let at = |dy: usize, dx: usize| x[((2 * oy + dy) * w + 2 * ox + dx) * c + ci];
                out.push(at(0, 0).max(at(0, 1)).max(at(1, 0)).max(at(1, 1)));
            }
        }
    }
    out
}

/// Channel concatenation of images with `cs` channels each: per pixel the
/// channels of the first, then of the second, ...
fn concat_channels(parts: &[(&[i128], usize)], pixels: usize) -> Vec<i128> {
    let mut out = Vec::new();
    for p in 0..pixels {
        for (x, c) in parts {
            out.extend_from_slice(&x[p * c..(p + 1) * c]);
        }
    }
    out
}

/// The exact sum of two codes of `f`, cast to `out`: `f`'s fraction bits,
/// one more integer bit, then the output format's own modes.
fn add_cast(a: &[i128], b: &[i128], f: Format, out: Format) -> Vec<i128> {
    let sum = Format::new(f.signed(), f.width() + 1, f.int_bits() + 1, Quant::Trn, Overflow::Wrap).expect("sum format");
    a.iter().zip(b).map(|(&x, &y)| out.cast_from(x + y, &sum)).collect()
}

const QUANTS: [Quant; 3] = [Quant::Trn, Quant::RndConv, Quant::TrnZero];
const OVERFLOWS: [Overflow; 4] = [Overflow::Wrap, Overflow::Sat, Overflow::SatSym, Overflow::SatZero];

fn any_format(signed: bool, width: u32, int_bits: i32, q: usize, o: usize) -> Format {
    Format::new(signed, width, int_bits, QUANTS[q], OVERFLOWS[o]).expect("format")
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// The lowered add (a conv2d over the concatenation of images, a
    /// dense [I I] over the concatenation of vectors) is `cast<output>(a + b)`
    /// on random codes, for random input formats and random output formats
    /// (wrapping, saturating, symmetric, to zero; or by default the exact
    /// sum); and a network with it equals the definition end to end.
    #[test]
    fn add_is_the_cast_of_the_exact_sum(
        image in any::<bool>(), h in 1usize..4, w in 1usize..4, c in 1usize..4,
        signed in any::<bool>(), width in 1u32..14, int_bits in -3i32..7, q in 0usize..3, o in 0usize..4,
        out in proptest::option::of((any::<bool>(), 1u32..10, -2i32..6, 0usize..3, 0usize..4)),
        seed in any::<u64>(),
    ) {
        let fin = any_format(signed, width, int_bits, q, o);
        let fout = out.map(|(s, w, i, q, o)| any_format(s, w, i, q, o));
        let precision = fout.map(|f| format!("\n    precision: {{output: '{f}'}}")).unwrap_or_default();
        // Two sources of the same shape and format: two maxpools (images) or
        // two flattens (vectors) of the network input.
        let (shape, kind) = if image { (format!("[{}, {}, {c}]", 2 * h, 2 * w), "maxpool2d") } else { (format!("[1, 1, {c}]"), "flatten") };
        let yaml = format!(
            "name: t\ninput: {{shape: {shape}, format: '{fin}'}}\nweights: w.npz\nlayers:\n  - name: a\n    type: {kind}\n  - name: b\n    type: {kind}\n    inputs: [input]\n  - name: s\n    type: add\n    inputs: [b, a]{precision}\n"
        );
        let m = model(&yaml);
        let layer = &m.layers[2];
        let lowered = layer.lowered.as_ref().expect("lowered");
        prop_assert_eq!(layer.kind().type_name(), if image { "conv2d" } else { "dense" });
        let yf = fout.unwrap_or_else(|| Format::new(signed, width + 1, int_bits + 1, Quant::Trn, Overflow::Wrap).expect("sum"));
        prop_assert_eq!(layer.kind().output_format(), yf);
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let (pixels, n) = if image { (h * w, c) } else { (1, c) };
        for _ in 0..4 {
            let a: Vec<i128> = (0..pixels * n).map(|_| code(&mut rng, fin)).collect();
            let b: Vec<i128> = (0..pixels * n).map(|_| code(&mut rng, fin)).collect();
            let gathered = concat_channels(&[(&a, n), (&b, n)], pixels);
            let y = layer.kind().forward(layer.input_format, &lowered.params, &gathered);
            prop_assert_eq!(y, add_cast(&a, &b, fin, yf));
        }
        let net = Network::new(m.clone(), weights::random(&m, seed)).expect("net");
        let x = random_input(&m, &mut rng);
        let src = if image { maxpool(&x, [2 * h, 2 * w, c]) } else { x.clone() };
        prop_assert_eq!(net.infer(&x).expect("infer"), add_cast(&src, &src, fin, yf));
    }
}

const Q: &str = "{weight: 'ap_fixed<4,1>', bias: 'ap_fixed<6,2>', accum: 'ap_fixed<16,6>', output: 'ap_ufixed<4,2,AP_RND_CONV,AP_SAT>'}";

/// conv -> conv -> add with the block input -> maxpool -> a side branch
/// concatenated with the pooled image -> flatten -> dense.
fn residual(trainable: bool) -> String {
    let t = |what: &str| if trainable { format!("\n    trainable: [{what}]") } else { String::new() };
    format!(
        "name: residual
input: {{shape: [6, 6, 2], format: 'ap_ufixed<4,0,AP_RND_CONV,AP_SAT>'}}
weights: w.npz
layers:
  - name: conv1
    type: conv2d
    filters: 3
    activation: relu
    precision: {Q}{}
  - name: conv2
    type: conv2d
    filters: 3
    activation: relu
    precision: {{weight: 'ap_fixed<4,1>', bias: 'ap_fixed<6,2>', accum: 'ap_fixed<10,4,AP_TRN,AP_SAT>', output: 'ap_ufixed<4,2,AP_RND_CONV,AP_SAT>'}}
  - name: res
    type: add
    inputs: [conv2, conv1]
    precision: {{output: 'ap_ufixed<4,2,AP_RND_CONV,AP_SAT>'}}
  - name: pool
    type: maxpool2d
  - name: side
    type: conv2d
    filters: 2
    activation: relu
    precision: {Q}{}
  - name: cat
    type: concat
    inputs: [pool, side]
  - name: flat
    type: flatten
  - name: fc
    type: dense
    inputs: 45
    outputs: 3
    activation: linear
    precision: {{weight: 'ap_fixed<4,1>', bias: 'ap_fixed<6,2>', accum: 'ap_fixed<16,6>', output: 'ap_fixed<8,4,AP_RND_CONV,AP_SAT>'}}{}
",
        t("weights"),
        t("biases"),
        t("weights, biases")
    )
}

/// The residual network by hand: every layer's output.
fn residual_by_hand(m: &Model, p: &Params, x: &[i128]) -> Vec<Vec<i128>> {
    let xf = m.input_format;
    let (w, b, a16, u4) = (fmt("ap_fixed<4,1>"), fmt("ap_fixed<6,2>"), fmt("ap_fixed<16,6>"), fmt("ap_ufixed<4,2,AP_RND_CONV,AP_SAT>"));
    let conv1 = conv_same(x, [6, 6, 2], &p.layers[0], 3, [xf, w, b, a16, u4], true);
    let conv2 = conv_same(&conv1, [6, 6, 3], &p.layers[1], 3, [u4, w, b, fmt("ap_fixed<10,4,AP_TRN,AP_SAT>"), u4], true);
    let res = add_cast(&conv2, &conv1, u4, u4);
    let pool = maxpool(&res, [6, 6, 3]);
    let side = conv_same(&pool, [3, 3, 3], &p.layers[4], 2, [u4, w, b, a16, u4], true);
    let cat = concat_channels(&[(&pool, 3), (&side, 2)], 9);
    let fc = dense(&cat, &p.layers[7], 3, [u4, w, b, a16, fmt("ap_fixed<8,4,AP_RND_CONV,AP_SAT>")], false);
    vec![conv1, conv2, res, pool, side, cat.clone(), cat, fc]
}

#[test]
fn residual_network_equals_a_hand_composition() {
    let m = model(&residual(false));
    assert_eq!(m.layers[5].kind().output_shape(), vec![3, 3, 5]);
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    for _ in 0..3 {
        let p = random_params(&m, &mut rng);
        let net = Network::new(m.clone(), p.clone()).expect("net");
        // 70 samples: two chunks of the batched path.
        let xs: Vec<Vec<i128>> = (0..70).map(|_| random_input(&m, &mut rng)).collect();
        let hand: Vec<Vec<Vec<i128>>> = xs.iter().map(|x| residual_by_hand(&m, &p, x)).collect();
        for (x, want) in xs.iter().zip(&hand) {
            assert_eq!(&net.trace(x).expect("trace"), want);
            assert_eq!(&m.forward_all(&p, x), want);
        }
        let batch = net.infer_batch(&xs).expect("batch");
        assert!(net.batch_kernels().iter().any(Option::is_some), "the batched path runs");
        for (y, want) in batch.iter().zip(&hand) {
            assert_eq!(y, &want[7]);
        }
    }
}

/// Two dense branches of the input, concatenated in the other order, then
/// a dense layer.
fn two_branch() -> String {
    let q = "{weight: 'ap_fixed<5,1>', bias: 'ap_fixed<6,2>', accum: 'ap_fixed<20,8>', output: 'ap_fixed<6,2,AP_RND,AP_SAT>'}";
    format!(
        "name: twob
input: {{shape: [6], format: 'ap_fixed<6,2>'}}
weights: w.npz
layers:
  - name: d1
    type: dense
    inputs: 6
    outputs: 4
    activation: relu
    precision: {q}
    trainable: [weights, biases]
  - name: d2
    type: dense
    inputs: [input]
    outputs: 3
    activation: linear
    precision: {q}
    trainable: [weights]
  - name: cat
    type: concat
    inputs: [d2, d1]
  - name: out
    type: dense
    inputs: 7
    outputs: 2
    activation: linear
    precision: {q}
    trainable: [biases]
"
    )
}

#[test]
fn two_branch_vector_concat_equals_a_hand_composition() {
    let m = model(&two_branch());
    let mut rng = ChaCha8Rng::seed_from_u64(2);
    let p = random_params(&m, &mut rng);
    let net = Network::new(m.clone(), p.clone()).expect("net");
    let (xf, w, b, a, y) = (m.input_format, fmt("ap_fixed<5,1>"), fmt("ap_fixed<6,2>"), fmt("ap_fixed<20,8>"), fmt("ap_fixed<6,2,AP_RND,AP_SAT>"));
    let xs: Vec<Vec<i128>> = (0..100).map(|_| random_input(&m, &mut rng)).collect();
    let batch = net.infer_batch(&xs).expect("batch");
    for (x, got) in xs.iter().zip(&batch) {
        let d1 = dense(x, &p.layers[0], 4, [xf, w, b, a, y], true);
        let d2 = dense(x, &p.layers[1], 3, [xf, w, b, a, y], false);
        let cat: Vec<i128> = d2.iter().chain(&d1).copied().collect();
        let out = dense(&cat, &p.layers[3], 2, [y, w, b, a, y], false);
        assert_eq!(net.infer(x).expect("infer"), out);
        assert_eq!(got, &out);
    }
}

/// A vector graph with an add and a concat and trainable dense layers in
/// both branches (exact accumulation: the batched evaluator's layers).
fn vector_dag() -> String {
    let q = "{weight: 'ap_fixed<5,1>', bias: 'ap_fixed<6,2>', accum: 'ap_fixed<20,8>', output: 'ap_fixed<6,2,AP_RND,AP_SAT>'}";
    format!(
        "name: vdag
input: {{shape: [6], format: 'ap_fixed<6,2>'}}
weights: w.npz
layers:
  - name: a
    type: dense
    inputs: 6
    outputs: 5
    activation: relu
    precision: {q}
    trainable: [weights, biases]
  - name: b
    type: dense
    inputs: [input]
    outputs: 5
    activation: linear
    precision: {q}
    trainable: [weights, biases]
  - name: s
    type: add
    inputs: [a, b]
    precision: {{output: 'ap_fixed<6,2,AP_RND,AP_SAT>'}}
  - name: cat
    type: concat
    inputs: [s, a]
  - name: out
    type: dense
    inputs: 10
    outputs: 3
    activation: linear
    precision: {q}
    trainable: [weights, biases]
"
    )
}

/// Random member groups (within one layer, so the batched path takes
/// them; sometimes across layers) and commits: the naive, cached and
/// batched evaluators agree on every loss.
fn evaluators_agree(m: &Model, seed: u64, steps: usize) -> u64 {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let p = random_params(m, &mut rng);
    let net = Network::new(m.clone(), p.clone()).expect("net");
    let inputs: Vec<Vec<i128>> = (0..10).map(|_| random_input(m, &mut rng)).collect();
    let yf = m.output_format();
    let targets: Vec<Vec<i128>> = (0..10).map(|_| (0..m.output_len()).map(|_| code(&mut rng, yf)).collect()).collect();
    let buffer = Buffer::new(m, inputs, targets).expect("buffer");
    let mut evs: Vec<Evaluator> = [EvalMode::Naive, EvalMode::Cached, EvalMode::Batched].map(|e| Evaluator::new(e, &net, buffer.clone())).into();
    let all = trainable_params(m);
    let layers: Vec<usize> = {
        let mut l: Vec<usize> = all.iter().map(|r| r.layer).collect();
        l.dedup();
        l
    };
    assert!(layers.len() >= 2, "trainable tensors in several layers");
    let mut params = p;
    for step in 0..steps {
        let across = step % 5 == 4;
        let layer = layers[rng.random_range(0..layers.len())];
        let pool: Vec<_> = all.iter().filter(|r| across || r.layer == layer).copied().collect();
        let mut refs = Vec::new();
        for _ in 0..rng.random_range(1..7) {
            let r = pool[rng.random_range(0..pool.len())];
            if !refs.contains(&r) {
                refs.push(r);
            }
        }
        let members: Vec<Vec<i128>> = (0..4).map(|_| refs.iter().map(|r| code(&mut rng, r.format(m))).collect()).collect();
        let losses: Vec<Vec<u32>> = evs.iter_mut().map(|e| e.evaluate_members(&mut params, &refs, &members).expect("members")).collect();
        assert_eq!(losses[0], losses[1], "step {step}: cached");
        assert_eq!(losses[0], losses[2], "step {step}: batched");
        // Commit member 0.
        for (r, &v) in refs.iter().zip(&members[0]) {
            r.set(&mut params, v);
        }
        let committed: Vec<u32> = evs.iter_mut().map(|e| e.commit(&params, &refs).expect("commit")).collect();
        assert_eq!(committed[0], committed[1], "step {step}: cached commit");
        assert_eq!(committed[0], committed[2], "step {step}: batched commit");
        let fresh = Evaluator::new(EvalMode::Naive, &Network::new(m.clone(), params.clone()).expect("net"), buffer.clone());
        assert_eq!(fresh.loss(), committed[0], "step {step}: naive from scratch");
    }
    evs[2].batched_groups()
}

#[test]
fn cached_and_batched_evaluators_equal_full_evaluation_on_a_vector_dag() {
    let groups = evaluators_agree(&model(&vector_dag()), 3, 60);
    assert!(groups > 20, "the batched path took {groups} groups");
}

#[test]
fn cached_and_batched_evaluators_equal_full_evaluation_on_a_residual_dag() {
    let groups = evaluators_agree(&model(&residual(true)), 4, 40);
    assert!(groups > 0, "the batched path took {groups} groups (fc)");
}

/// The float network on `x` with `params` (per layer, per tensor), each
/// layer on its inputs gathered by hand: every layer's output.
fn float_forward(m: &Model, params: &[Vec<Vec<f64>>], x: &[f64]) -> Vec<Vec<f64>> {
    let mut outs: Vec<Vec<f64>> = Vec::new();
    for (l, layer) in m.layers.iter().enumerate() {
        let parts: Vec<&[f64]> = layer
            .inputs
            .iter()
            .map(|s| match s {
                fptgen_sim::model::Source::Input => x,
                fptgen_sim::model::Source::Layer(j) => outs[*j].as_slice(),
            })
            .collect();
        let xin: Vec<f64> = if parts.len() == 1 {
            parts[0].to_vec()
        } else {
            // Images here: per pixel, each part's channels.
            let shapes: Vec<Vec<usize>> = layer
                .inputs
                .iter()
                .map(|s| match s {
                    fptgen_sim::model::Source::Input => m.input_shape.clone(),
                    fptgen_sim::model::Source::Layer(j) => m.layers[*j].kind().output_shape(),
                })
                .collect();
            let pixels = shapes[0][0] * shapes[0][1];
            let mut v = Vec::new();
            for p in 0..pixels {
                for (part, s) in parts.iter().zip(&shapes) {
                    v.extend_from_slice(&part[p * s[2]..(p + 1) * s[2]]);
                }
            }
            v
        };
        outs.push(layer.kind().forward_f64(&params[l], &xin));
    }
    outs
}

/// The QAT backward pass through a graph (an output read by two layers
/// gets the sum of their gradients; a gathered input's gradient is split
/// among its inputs) equals the numerical gradient of the float network
/// `L = g . y(params)`, for every parameter of every layer, the lowered
/// add's constants included.
#[test]
fn qat_backward_on_a_dag_equals_the_numerical_gradient_of_the_float_reference() {
    let checked = qat_matches_numerical_gradient(&model(&residual(true)), 11);
    // conv1 (57) + conv2 (84) + res (165 constants) + side (56) + fc (138).
    assert_eq!(checked, 57 + 84 + 165 + 56 + 138);
}

/// Checks every parameter's QAT gradient on `m` against the numerical one
/// (random values from `seed`); returns how many it checked.
fn qat_matches_numerical_gradient(m: &Model, seed: u64) -> usize {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let x: Vec<f64> = (0..m.input_len()).map(|_| rng.random_range(0.0..1.0)).collect();
    let params: Vec<Vec<Vec<f64>>> = m
        .layers
        .iter()
        .map(|l| l.kind().tensors().iter().map(|t| (0..t.len()).map(|_| rng.random_range(-1.0..1.0)).collect()).collect())
        .collect();
    let outs = float_forward(m, &params, &x);
    let g: Vec<f64> = (0..m.output_len()).map(|_| rng.random_range(-1.0..1.0)).collect();
    let loss = |p: &[Vec<Vec<f64>>]| -> f64 { float_forward(m, p, &x).last().expect("out").iter().zip(&g).map(|(a, b)| a * b).sum() };
    // The straight-through masks of the float network: a relu's clipped
    // outputs (0) pass no gradient, as at a format's floor.
    let masks: Vec<Vec<i8>> = m
        .layers
        .iter()
        .zip(&outs)
        .map(|(l, y)| {
            let relu = l.kind().activation() == Some(fptgen_sim::layers::Activation::Relu);
            y.iter().map(|&v| if relu && v <= 0.0 { -1 } else { 0 }).collect()
        })
        .collect();
    let mut xs: Vec<Vec<f32>> = vec![x.iter().map(|&v| v as f32).collect()];
    xs.extend(outs.iter().map(|y| y.iter().map(|&v| v as f32).collect()));
    let p32: Vec<Vec<Vec<f32>>> = params.iter().map(|l| l.iter().map(|t| t.iter().map(|&v| v as f32).collect()).collect()).collect();
    let mut grads: Vec<Vec<Vec<f32>>> = params.iter().map(|l| l.iter().map(|t| vec![0.0; t.len()]).collect()).collect();
    backward_graph(m, &xs, &p32, &masks, g.iter().map(|&v| v as f32).collect(), &mut grads);
    let eps = 1e-4;
    let mut checked = 0;
    for l in 0..params.len() {
        for t in 0..params[l].len() {
            for i in 0..params[l][t].len() {
                let (mut hi, mut lo) = (params.clone(), params.clone());
                hi[l][t][i] += eps;
                lo[l][t][i] -= eps;
                let num = (loss(&hi) - loss(&lo)) / (2.0 * eps);
                let got = f64::from(grads[l][t][i]);
                assert!((num - got).abs() < 2e-3 * (1.0 + num.abs()), "{}: tensor {t}[{i}]: numerical {num}, backward {got}", m.layers[l].name);
                checked += 1;
            }
        }
    }
    checked
}

#[test]
fn the_lowered_add_tensors_are_generated_not_read() {
    let dir = tempfile::tempdir().expect("tempdir");
    let m = model(&residual(true));
    let p = weights::random(&m, 3);
    assert_eq!(p.layers[2], m.layers[2].lowered.as_ref().expect("lowered").params);
    let path = dir.path().join("w.npz");
    weights::save(&m, &p, &path, &[]).expect("save");
    let names: Vec<String> = fptgen_sim::tensor::read_npz(&path).expect("npz").keys().cloned().collect();
    assert_eq!(names, ["conv1/b", "conv1/w", "conv2/b", "conv2/w", "fc/b", "fc/w", "side/b", "side/w"]);
    assert_eq!(weights::load_from(&m, &path, weights::Conversion::Exact).expect("load"), p);
    // An archive that holds the constants anyway: accepted with exactly the
    // generated values, refused with any other.
    let arrays = fptgen_sim::tensor::read_npz(&path).expect("npz");
    let spec = m.layers[2].kind().tensors();
    let write = |w: Vec<f64>, name: &str| {
        let mut out: Vec<fptgen_sim::tensor::NamedArray> = arrays
            .iter()
            .map(|(k, a)| fptgen_sim::tensor::NamedArray {
                name: k.clone(),
                shape: a.shape.clone(),
                values: match &a.values {
                    fptgen_sim::tensor::Values::Float(v) => fptgen_sim::tensor::OutValues::F64(v.clone()),
                    _ => unreachable!(),
                },
            })
            .collect();
        out.push(fptgen_sim::tensor::NamedArray { name: "res/w".into(), shape: spec[0].shape.clone(), values: fptgen_sim::tensor::OutValues::F64(w) });
        let file = dir.path().join(name);
        fptgen_sim::tensor::write_npz(&file, &out).expect("write");
        file
    };
    let consts: Vec<f64> = p.layers[2].tensors[0].iter().map(|&c| c as f64).collect();
    let same = write(consts.clone(), "same.npz");
    assert_eq!(weights::load_from(&m, &same, weights::Conversion::Exact).expect("load"), p);
    let mut other = consts;
    other[0] = 1.0;
    let e = weights::load_from(&m, &write(other, "other.npz"), weights::Conversion::Exact).expect_err("altered constant").to_string();
    assert!(e.contains("res/w") && e.contains("made by fptgen at load (lowered from add)") && e.contains("remove the tensor"), "{e}");
}

#[test]
fn check_shows_the_lowering_and_chains_are_chains() {
    let m = model(&residual(false));
    assert!(!m.is_chain());
    assert_eq!(m.layers[2].describe(), "add 6x6x3 (lowered: concat + conv3x3 6->3)");
    let v = model(&vector_dag());
    assert_eq!(v.layers[2].describe(), "add 5 (lowered: concat + dense 10->5)");
    assert_eq!(m.params(), 57 + 84 + 56 + 138, "the constants are not parameters");
}

/// Each bad graph, with the token the error must point at (line and
/// column) and words it must contain.
#[test]
fn bad_graphs_are_located() {
    let base = residual(false);
    let cases: &[(&str, &str, &str, &[&str])] = &[
        ("inputs: [conv2, conv1]", "inputs: [conv2, nope]", "nope", &["takes 'nope', but no earlier layer has that name", "input, conv1, conv2"]),
        ("inputs: [conv2, conv1]", "inputs: [conv2, side]", "side]", &["takes 'side', which comes later", "topological order"]),
        ("inputs: [conv2, conv1]", "inputs: [conv2, conv2]", "conv2]", &["lists 'conv2' twice"]),
        ("inputs: [conv2, conv1]", "inputs: [conv2, res]", "res]", &["takes its own output"]),
        ("inputs: [conv2, conv1]", "inputs: []", "[]", &["lists no inputs"]),
        ("inputs: [conv2, conv1]", "inputs: [conv2, input]", "[conv2, input]", &["gathers inputs of different formats", "'conv2' gives ap_ufixed<4,2", "'input' gives ap_ufixed<4,0"]),
        ("inputs: [conv2, conv1]", "inputs: [conv2]", "[conv2]", &["an add layer takes exactly 2 inputs; 'res' has 1"]),
        ("inputs: [pool, side]", "inputs: [pool, conv1]", "[pool, conv1]", &["gathers images of different sizes", "'pool' is 3x3 but 'conv1' is 6x6"]),
        ("inputs: [pool, side]", "inputs: [side]", "[side]", &["a concat layer takes at least 2 inputs; 'cat' has 1"]),
        ("inputs: [pool, side]", "inputs: 4", "4", &["`inputs` does not apply to a concat layer as a number"]),
        ("    precision: {output: 'ap_ufixed<4,2,AP_RND_CONV,AP_SAT>'}\n", "    precision: {weight: 'ap_fixed<4,1>'}\n", "'ap_fixed<4,1>'", &["an add layer has no weight format"]),
        ("  - name: cat\n    type: concat\n    inputs: [pool, side]\n", "  - name: cat\n    type: concat\n    inputs: [pool, pool]\n", "pool]", &["lists 'pool' twice"]),
        ("  - name: cat\n    type: concat\n    inputs: [pool, side]\n", "  - name: cat\n    type: flatten\n    inputs: [pool]\n", "side", &["the output of layer 'side' is used by no later layer (a dead branch)"]),
    ];
    for (from, to, at, words) in cases {
        assert!(base.contains(from), "{from}");
        let text = base.replacen(from, to, 1);
        let text = if to.contains("type: flatten") {
            text.replacen("  - name: flat\n    type: flatten\n", "", 1).replacen("inputs: 45", "inputs: 27", 1)
        } else {
            text
        };
        // The token is looked for from the changed entry on.
        let start = text.find(to).map_or(0, |i| text[..i].matches('\n').count());
        let (line, col) = if *at == "side" {
            // The dead branch: at the layer's name.
            let l = text.lines().position(|l| l.contains("name: side")).expect("side");
            (l + 1, text.lines().nth(l).expect("line").find("side").expect("col") + 1)
        } else {
            let l = text.lines().enumerate().skip(start).find(|(_, l)| l.contains(at)).unwrap_or_else(|| panic!("{at}")).0;
            (l + 1, text.lines().nth(l).expect("line").find(at).expect("col") + 1)
        };
        let e = parse(&text, Path::new("model.yaml")).expect_err(to).to_string();
        assert!(e.starts_with(&format!("model.yaml:{line}:{col}:")), "{to:?}: want {line}:{col}: {e}");
        for w in *words {
            assert!(e.contains(w), "{to:?}: {w:?} in {e}");
        }
    }
    // An image and a vector gathered.
    let v = two_branch().replace("inputs: [d2, d1]", "inputs: [d2, d1, input]");
    let e = parse(&v, Path::new("model.yaml")).expect_err("formats").to_string();
    assert!(e.contains("gathers inputs of different formats"), "{e}");
    let mixed = residual(false).replacen("inputs: [pool, side]", "inputs: [pool, flat0]", 1).replacen(
        "  - name: cat\n",
        "  - name: flat0\n    type: flatten\n    inputs: [side]\n  - name: cat\n",
        1,
    );
    let e = parse(&mixed, Path::new("model.yaml")).expect_err("mixed").to_string();
    assert!(e.contains("gathers an image ('pool', [3, 3, 3]) and a vector ('flat0', [18])"), "{e}");
}

/// A chain written with explicit `inputs:` (each the previous layer) is the
/// same model as without them.
#[test]
fn explicit_default_inputs_change_nothing() {
    let chain = two_branch()
        .replace("inputs: [input]\n    outputs: 3", "inputs: 4\n    outputs: 3")
        .replace("  - name: cat\n    type: concat\n    inputs: [d2, d1]\n", "")
        .replace("inputs: 7", "inputs: 3");
    let m = model(&chain);
    assert!(m.is_chain());
    let explicit = model(&chain.replace("inputs: 6\n", "inputs: [input]\n").replace("inputs: 4\n", "inputs: [d1]\n").replace("inputs: 3\n", "inputs: [d2]\n"));
    assert_eq!(m.layers, explicit.layers);
}

/// A network with a conv2d of 7 filters and a dense layer of 5 outputs.
fn wide(max_channels: Option<usize>) -> String {
    let q = "{weight: 'ap_fixed<4,1>', bias: 'ap_fixed<6,2>', accum: 'ap_fixed<16,6>', output: 'ap_fixed<6,2,AP_RND,AP_SAT>'}";
    let max = max_channels.map(|m| format!("max_channels: {m}\n")).unwrap_or_default();
    format!(
        "name: wide
input: {{shape: [4, 4, 2], format: 'ap_fixed<6,2>'}}
weights: w.npz
{max}layers:
  - name: c
    type: conv2d
    filters: 7
    activation: relu
    precision: {q}
    pe: 7
    trainable: [weights]
  - name: p
    type: maxpool2d
  - name: f
    type: flatten
  - name: d
    type: dense
    inputs: 28
    outputs: 5
    activation: linear
    precision: {q}
  - name: o
    type: dense
    inputs: 5
    outputs: 2
    activation: linear
    precision: {q}
"
    )
}

/// `max_channels` splits a conv2d's filters and a dense layer's outputs
/// into parts and a concat; the split network reads the same archive (the
/// parts' tensors are slices of the original ones), draws the same random
/// weights, writes the same archive, and computes the same bits.
#[test]
fn split_layers_equal_the_unsplit_network_bit_for_bit() {
    let whole = model(&wide(None));
    let split = model(&wide(Some(3)));
    let names: Vec<&str> = split.layers.iter().map(|l| l.name.as_str()).collect();
    assert_eq!(names, ["c_part0", "c_part1", "c_part2", "c", "p", "f", "d_part0", "d_part1", "d", "o"]);
    assert_eq!(split.layers[2].kind().output_shape(), vec![4, 4, 1]);
    assert_eq!(split.layers[3].kind().output_shape(), vec![4, 4, 7]);
    assert_eq!(split.trainable_params(), whole.trainable_params());
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("w.npz");
    let pw = weights::random(&whole, 7);
    weights::save(&whole, &pw, &path, &[]).expect("save");
    let ps = weights::load_from(&split, &path, weights::Conversion::Exact).expect("load split");
    assert_eq!(ps, weights::random(&split, 7), "the same random draws");
    let again = dir.path().join("again.npz");
    weights::save(&split, &ps, &again, &[]).expect("save split");
    assert_eq!(weights::load_from(&whole, &again, weights::Conversion::Exact).expect("load"), pw, "the same archive");
    let (nw, ns) = (Network::new(whole.clone(), pw).expect("net"), Network::new(split.clone(), ps).expect("net"));
    let mut rng = ChaCha8Rng::seed_from_u64(8);
    let xs: Vec<Vec<i128>> = (0..80).map(|_| random_input(&whole, &mut rng)).collect();
    assert_eq!(nw.infer_batch(&xs).expect("batch"), ns.infer_batch(&xs).expect("batch"));
    for x in &xs[..10] {
        let (tw, ts) = (nw.trace(x).expect("trace"), ns.trace(x).expect("trace"));
        assert_eq!(tw[0], ts[3], "the concat of the parts is the conv's output");
        assert_eq!(tw.last(), ts.last());
    }
}

#[test]
fn bad_max_channels_are_located() {
    let text = wide(Some(0));
    let e = parse(&text, Path::new("model.yaml")).expect_err("0").to_string();
    assert!(e.starts_with("model.yaml:4:15:") && e.contains("max_channels is 0; it must be between 1 and"), "{e}");
    // 2 input channels above max_channels 1: two groups of one channel,
    // whose sum would take 2 channels.
    let e = parse(&wide(Some(1)), Path::new("model.yaml")).expect_err("inputs").to_string();
    assert!(e.starts_with("model.yaml:7:11:"), "{e}");
    assert!(e.contains("layer 'c' takes 2 input channels: 2 groups of at most max_channels (1), too many to add"), "{e}");
    // An input split of an accumulation that can saturate would differ.
    let sat = deep(Some(4), "ap_fixed<16,6,AP_TRN,AP_SAT>");
    let e = parse(&sat, Path::new("model.yaml")).expect_err("saturating").to_string();
    assert!(e.starts_with("model.yaml:7:11:"), "{e}");
    assert!(e.contains("layer 'c' takes 5 input channels, more than max_channels (4)"), "{e}");
    assert!(e.contains("exact only when the accumulation is"), "{e}");
    // An add cannot be split with one channel per layer.
    let e = parse(&deep(Some(1), WRAP), Path::new("model.yaml")).expect_err("add").to_string();
    assert!(e.contains("layer 'c' takes 5 input channels: 5 groups"), "{e}");
}

/// The accumulator of `deep`'s split convolutions: wraps, so any order of
/// the sum gives the same codes.
const WRAP: &str = "ap_fixed<16,6>";

/// A network whose convolutions `c` (5 input channels, 5 filters,
/// trainable) and `a1` (5 input channels, 3 filters) and whose add `s` (of
/// two 3-channel images) exceed `max_channels` 4, `c` with accumulator
/// `accum`.
fn deep(max_channels: Option<usize>, accum: &str) -> String {
    let q = "{weight: 'ap_fixed<4,1>', bias: 'ap_fixed<6,2>', accum: 'ap_fixed<16,6>', output: 'ap_fixed<6,2,AP_RND,AP_SAT>'}";
    let max = max_channels.map(|m| format!("max_channels: {m}\n")).unwrap_or_default();
    format!(
        "name: deep
input: {{shape: [5, 5, 5], format: 'ap_fixed<6,2>'}}
weights: w.npz
{max}layers:
  - name: c
    type: conv2d
    filters: 5
    activation: relu
    precision: {{weight: 'ap_fixed<4,1>', bias: 'ap_fixed<6,2>', accum: '{accum}', output: 'ap_fixed<6,2,AP_RND,AP_SAT>'}}
    pe: 5
    simd: 9
    trainable: [weights, biases]
  - name: a1
    type: conv2d
    filters: 3
    activation: linear
    precision: {q}
  - name: a2
    type: conv2d
    filters: 3
    stride: 1
    activation: relu
    precision: {q}
  - name: s
    type: add
    inputs: [a1, a2]
  - name: f
    type: flatten
  - name: o
    type: dense
    inputs: 75
    outputs: 2
    activation: linear
    precision: {q}
    trainable: [weights]
"
    )
}

/// `max_channels` below a conv2d's input channels splits them into groups
/// (slices, partial convolutions, a lowered sum), and below an add's
/// gathered channels splits the add; the split network reads, draws and
/// writes the same archive as the unsplit one and computes the same bits
/// (the accumulators wrap).
#[test]
fn input_splits_equal_the_unsplit_network_bit_for_bit() {
    let whole = model(&deep(None, WRAP));
    let split = model(&deep(Some(4), WRAP));
    let names: Vec<&str> = split.layers.iter().map(|l| l.name.as_str()).collect();
    #[rustfmt::skip]
    assert_eq!(names, [
        "c_in0", "c_in1", "c_part0_in0", "c_part0_in1", "c_part0", "c_part1_in0", "c_part1_in1", "c_part1",
        "c_part2_in0", "c_part2_in1", "c_part2", "c",
        "a1_in0", "a1_in1", "a1_part0_in0", "a1_part0_in1", "a1_part0", "a1_part1_in0", "a1_part1_in1", "a1_part1", "a1",
        "a2", "s_part0_a", "s_part0_b", "s_part0", "s_part1_a", "s_part1_b", "s_part1", "s", "f", "o",
    ]);
    for l in &split.layers {
        let k = l.kind();
        let channels = match &l.op {
            fptgen_sim::model::LayerOp::Conv2d(c) => vec![c.input[2], c.filters],
            fptgen_sim::model::LayerOp::Dense(d) => vec![d.outputs],
            _ => Vec::new(),
        };
        assert!(channels.iter().all(|&c| c <= 4), "{}: {} has {channels:?} channels", l.name, k.describe());
    }
    assert_eq!(split.layers[0].kind().output_shape(), vec![5, 5, 3]);
    assert_eq!(split.layers[1].kind().output_shape(), vec![5, 5, 2]);
    assert_eq!(split.trainable_params(), whole.trainable_params());
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("w.npz");
    let pw = weights::random(&whole, 5);
    weights::save(&whole, &pw, &path, &[]).expect("save");
    let ps = weights::load_from(&split, &path, weights::Conversion::Exact).expect("load split");
    assert_eq!(ps, weights::random(&split, 5), "the same random draws");
    let again = dir.path().join("again.npz");
    weights::save(&split, &ps, &again, &[]).expect("save split");
    assert_eq!(weights::load_from(&whole, &again, weights::Conversion::Exact).expect("load"), pw, "the same archive");
    // Full-range weights, so that the accumulators wrap.
    let mut rng = ChaCha8Rng::seed_from_u64(9);
    let pw = random_params(&whole, &mut rng);
    let full = dir.path().join("full.npz");
    weights::save(&whole, &pw, &full, &[]).expect("save");
    let ps = weights::load_from(&split, &full, weights::Conversion::Exact).expect("load split");
    let (nw, ns) = (Network::new(whole.clone(), pw).expect("net"), Network::new(split.clone(), ps).expect("net"));
    let xs: Vec<Vec<i128>> = (0..60).map(|_| random_input(&whole, &mut rng)).collect();
    assert_eq!(nw.infer_batch(&xs).expect("batch"), ns.infer_batch(&xs).expect("batch"));
    for x in &xs[..10] {
        let (tw, ts) = (nw.trace(x).expect("trace"), ns.trace(x).expect("trace"));
        assert_eq!(tw[0], ts[11], "the split c");
        assert_eq!(tw[1], ts[20], "the split a1");
        assert_eq!(tw[3], ts[28], "the split add");
        assert_eq!(tw.last(), ts.last());
    }
}

/// The evaluators and the QAT backward pass on a network with input
/// splits (trainable partial convolutions, slices, lowered sums).
#[test]
fn evaluators_and_qat_backward_agree_on_input_splits() {
    let m = model(&deep(Some(4), WRAP));
    let groups = evaluators_agree(&m, 6, 30);
    assert!(groups > 0, "the batched path took {groups} groups");
    assert!(qat_matches_numerical_gradient(&m, 12) > 0);
}

/// A layer whose parameter tensor holds more values than the budget
/// (`model::MAX_TENSOR_VALUES`) is refused at load, naming the layer,
/// the tensor and its size, before any of it is drawn or read.
#[test]
fn a_tensor_beyond_the_budget_is_refused_at_load() {
    let text = include_str!("../../examples/tiny/model.yaml")
        .replace("shape: [2]", "shape: [65536]")
        .replace("inputs: 2\n    outputs: 2", "inputs: 65536\n    outputs: 257");
    let e = parse(&text, Path::new("model.yaml")).expect_err("over the budget").to_string();
    assert!(e.starts_with("model.yaml:12:11:"), "{e}");
    assert!(e.contains("layer 'fc1' has a tensor 'w' of shape [257, 65536] (16842752 values); at most 16777216"), "{e}");
}
