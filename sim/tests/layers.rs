//! The image layer kinds (conv2d, maxpool2d, batchnorm, flatten) against
//! definitions written here from docs/numerics.md, independently of
//! `sim/src/layers`: a direct convolution loop with explicit padding, a
//! direct 2x2 maximum, a direct multiply-add per channel. Random shapes,
//! strides, paddings and formats (wrapping and saturating accumulators);
//! every output code compared. Also: the cached ES evaluator equals full
//! re-evaluation on CNNs, the QAT backward pass equals the float
//! reference's numerical gradient, and the model file's checks.

use std::path::Path;

use proptest::prelude::*;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use fptgen_sim::fixed::Format;
use fptgen_sim::layers::Backward;
use fptgen_sim::model::{parse, Model};
use fptgen_sim::network::Network;
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

fn random_params(m: &Model, rng: &mut ChaCha8Rng) -> Params {
    Params {
        layers: m
            .layers
            .iter()
            .map(|l| LayerParams { tensors: l.kind().tensors().iter().map(|t| (0..t.len()).map(|_| code(rng, t.format)).collect()).collect() })
            .collect(),
    }
}

/// `same` padding on top (left) and output size, as TensorFlow defines it.
fn tf_same(input: usize, s: usize) -> (usize, usize) {
    let out = input.div_ceil(s);
    let total = ((out - 1) * s + 3).saturating_sub(input);
    (out, total / 2)
}

/// The convolution by its definition: for each output pixel and filter,
/// the bias, then every in-image product in (ky, kx, c) order, each cast
/// to the accumulator and added, then relu and the output cast.
#[allow(clippy::too_many_arguments)]
fn conv_reference(
    x: &[i128],
    [h, w, c]: [usize; 3],
    wts: &[i128],
    bias: &[i128],
    filters: usize,
    stride: usize,
    same: bool,
    [xf, wf, bf, af, yf]: [Format; 5],
    relu: bool,
) -> Vec<i128> {
    let ((oh, pt), (ow, pl)) = if same {
        (tf_same(h, stride), tf_same(w, stride))
    } else {
        (((h - 3) / stride + 1, 0), ((w - 3) / stride + 1, 0))
    };
    let mut out = Vec::new();
    for oy in 0..oh {
        for ox in 0..ow {
            for f in 0..filters {
                let mut acc = af.cast_from(bias[f], &bf);
                for ky in 0..3 {
                    for kx in 0..3 {
                        let (iy, ix) = ((oy * stride + ky) as isize - pt as isize, (ox * stride + kx) as isize - pl as isize);
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

const ACCUMS: &[&str] = &["ap_fixed<20,8>", "ap_fixed<10,4,AP_TRN,AP_SAT>", "ap_fixed<12,5,AP_RND,AP_SAT_SYM>", "ap_fixed<9,2>"];

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn conv2d_equals_its_definition(
        h in 1usize..7, w in 1usize..7, c in 1usize..4, filters in 1usize..4,
        stride in 1usize..3, same in any::<bool>(), relu in any::<bool>(),
        acc in 0usize..ACCUMS.len(), seed in any::<u64>(),
    ) {
        prop_assume!(same || (h >= 3 && w >= 3));
        let (xf, wf, bf, af, yf) = (fmt("ap_fixed<6,2>"), fmt("ap_fixed<4,1>"), fmt("ap_fixed<6,3>"), fmt(ACCUMS[acc]), fmt("ap_fixed<8,3,AP_RND_CONV,AP_SAT>"));
        let yaml = format!(
            "name: t\ninput: {{shape: [{h}, {w}, {c}], format: '{xf}'}}\nweights: w.npz\nlayers:\n  - name: c\n    type: conv2d\n    filters: {filters}\n    stride: {stride}\n    padding: {}\n    activation: {}\n    precision: {{weight: '{wf}', bias: '{bf}', accum: '{af}', output: '{yf}'}}\n",
            if same { "same" } else { "valid" },
            if relu { "relu" } else { "linear" },
        );
        let m = model(&yaml);
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let p = random_params(&m, &mut rng);
        let x: Vec<i128> = (0..h * w * c).map(|_| code(&mut rng, xf)).collect();
        let net = Network::new(m.clone(), p.clone()).expect("net");
        let got = net.infer(&x).expect("infer");
        let want = conv_reference(&x, [h, w, c], &p.layers[0].tensors[0], &p.layers[0].tensors[1], filters, stride, same, [xf, wf, bf, af, yf], relu);
        prop_assert_eq!(&got, &want);
        // Recomputing a few outputs gives the same codes.
        let k = m.layers[0].kind();
        let mut out = vec![0; got.len()];
        let some: Vec<usize> = (0..got.len()).step_by(3).collect();
        k.recompute(xf, &p.layers[0], &x, &some, &mut out);
        for &o in &some {
            prop_assert_eq!(out[o], want[o]);
        }
    }

    #[test]
    fn maxpool_batchnorm_flatten_equal_their_definitions(
        h in 2usize..7, w in 2usize..7, c in 1usize..4, relu in any::<bool>(), seed in any::<u64>(), signed in any::<bool>(),
    ) {
        let xf = if signed { fmt("ap_fixed<6,2>") } else { fmt("ap_ufixed<6,2>") };
        let (sf, tf, af, yf) = (fmt("ap_fixed<5,2>"), fmt("ap_fixed<6,3>"), fmt("ap_fixed<10,4,AP_TRN,AP_SAT>"), fmt("ap_fixed<7,3,AP_RND,AP_SAT>"));
        let yaml = format!(
            "name: t\ninput: {{shape: [{h}, {w}, {c}], format: '{xf}'}}\nweights: w.npz\nlayers:\n  - name: p\n    type: maxpool2d\n  - name: n\n    type: batchnorm\n    activation: {}\n    precision: {{scale: '{sf}', shift: '{tf}', accum: '{af}', output: '{yf}'}}\n  - name: f\n    type: flatten\n",
            if relu { "relu" } else { "linear" },
        );
        let m = model(&yaml);
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let p = random_params(&m, &mut rng);
        let x: Vec<i128> = (0..h * w * c).map(|_| code(&mut rng, xf)).collect();
        let trace = Network::new(m.clone(), p.clone()).expect("net").trace(&x).expect("trace");
        let (oh, ow) = (h / 2, w / 2);
        let mut pooled = Vec::new();
        for oy in 0..oh {
            for ox in 0..ow {
                for ch in 0..c {
                    let at = |dy: usize, dx: usize| x[((2 * oy + dy) * w + 2 * ox + dx) * c + ch];
                    pooled.push(at(0, 0).max(at(0, 1)).max(at(1, 0)).max(at(1, 1)));
                }
            }
        }
        prop_assert_eq!(&trace[0], &pooled);
        let (scale, shift) = (&p.layers[1].tensors[0], &p.layers[1].tensors[1]);
        let normed: Vec<i128> = pooled
            .iter()
            .enumerate()
            .map(|(i, &v)| {
                let ch = i % c;
                let mut acc = af.add(af.cast_from(shift[ch], &tf), af.mul_from(scale[ch], &sf, v, &xf));
                if relu && acc < 0 {
                    acc = 0;
                }
                yf.cast_from(acc, &af)
            })
            .collect();
        prop_assert_eq!(&trace[1], &normed);
        prop_assert_eq!(&trace[2], &normed);
        prop_assert_eq!(m.output_len(), oh * ow * c);
    }
}

/// A small CNN with every image kind, trainable conv weights and biases and
/// batch-norm scale and shift.
fn cnn(trainable_dense: bool) -> String {
    let q = "precision: {weight: 'ap_fixed<4,1>', bias: 'ap_fixed<6,2>', accum: 'ap_fixed<14,6>', output: 'ap_fixed<8,3,AP_RND,AP_SAT>'}";
    let lines = [
        "name: cnn",
        "input: {shape: [6, 6, 2], format: 'ap_fixed<8,3>'}",
        "weights: w.npz",
        "layers:",
        "  - name: c1",
        "    type: conv2d",
        "    filters: 3",
        "    activation: relu",
        "    precision: {weight: 'ap_fixed<4,1>', bias: 'ap_fixed<6,2>', accum: 'ap_fixed<14,6,AP_TRN,AP_SAT>', output: 'ap_ufixed<6,3,AP_RND,AP_SAT>'}",
        "    trainable: [weights, biases]",
        "  - name: p1",
        "    type: maxpool2d",
        "  - name: n1",
        "    type: batchnorm",
        "    precision: {scale: 'ap_fixed<6,2>', shift: 'ap_fixed<6,2>', accum: 'ap_fixed<14,6>', output: 'ap_fixed<8,3,AP_RND,AP_SAT>'}",
        "    trainable: [scale, shift]",
        "  - name: c2",
        "    type: conv2d",
        "    filters: 2",
        "    stride: 2",
        "    padding: valid",
        "    activation: linear",
        &format!("    {q}"),
        "    trainable: [weights]",
        "  - name: f",
        "    type: flatten",
        "  - name: d",
        "    type: dense",
        "    inputs: 2",
        "    outputs: 3",
        "    activation: linear",
        &format!("    {q}"),
        if trainable_dense { "    trainable: [biases]" } else { "" },
    ];
    lines.join("\n") + "\n"
}

#[test]
fn cached_evaluator_equals_full_evaluation_on_a_cnn() {
    let m = model(&cnn(true));
    assert_eq!(m.layers[3].kind().output_shape(), vec![1, 1, 2]);
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    let p = random_params(&m, &mut rng);
    let net = Network::new(m.clone(), p.clone()).expect("net");
    let inputs: Vec<Vec<i128>> = (0..6).map(|_| (0..m.input_len()).map(|_| code(&mut rng, m.input_format)).collect()).collect();
    let yf = m.output_format();
    let targets: Vec<Vec<i128>> = (0..6).map(|_| (0..3).map(|_| code(&mut rng, yf)).collect()).collect();
    let buffer = Buffer::new(&m, inputs, targets).expect("buffer");
    let mut cached = Evaluator::new(EvalMode::Cached, &net, buffer.clone());
    let mut naive = Evaluator::new(EvalMode::Naive, &net, buffer);
    assert_eq!(cached.loss(), naive.loss());
    let all = trainable_params(&m);
    // c1: 3 filters x 3 x 3 x 2 channels + 3 biases; n1: 3 scales + 3
    // shifts; c2: 2 x 3 x 3 x 3 weights; d: 3 biases.
    assert_eq!(all.len(), 54 + 3 + 3 + 3 + 54 + 3);
    let mut params = p;
    for step in 0..60 {
        let changed: Vec<_> = (0..1 + step % 4).map(|_| all[rng.random_range(0..all.len())]).collect();
        let saved: Vec<i128> = changed.iter().map(|r| r.get(&params)).collect();
        for r in &changed {
            let f = r.format(&m);
            r.set(&mut params, code(&mut rng, f));
        }
        let (a, b) = (cached.evaluate(&params, &changed).expect("cached"), naive.evaluate(&params, &changed).expect("naive"));
        assert_eq!(a, b, "step {step}: {:?}", changed.iter().map(|r| r.describe(&m)).collect::<Vec<_>>());
        if step % 3 == 0 {
            assert_eq!(cached.commit(&params, &changed).expect("commit"), naive.commit(&params, &changed).expect("commit"));
        } else {
            for (r, v) in changed.iter().zip(saved).rev() {
                r.set(&mut params, v);
            }
        }
    }
}

/// The backward pass of every kind equals the numerical gradient of its
/// float reference: for a random output gradient `g`, `L = g . forward(p, x)`
/// is linear in each parameter and in each input away from relu kinks, so a
/// central difference is exact up to rounding.
#[test]
fn backward_equals_the_numerical_gradient_of_the_float_reference() {
    let m = model(&cnn(false));
    let mut rng = ChaCha8Rng::seed_from_u64(9);
    let mut x: Vec<f64> = (0..m.input_len()).map(|_| rng.random_range(-1.0..1.0)).collect();
    for (li, layer) in m.layers.iter().enumerate() {
        let k = layer.kind();
        let params: Vec<Vec<f64>> = k.tensors().iter().map(|t| (0..t.len()).map(|_| rng.random_range(-1.0..1.0)).collect()).collect();
        let y = k.forward_f64(&params, &x);
        // The backward pass is the gradient through the layer's affine part:
        // quantization-aware training's straight-through mask has already
        // zeroed the gradient where a relu clipped (its output is 0).
        let relu = k.activation() == Some(fptgen_sim::layers::Activation::Relu);
        let g: Vec<f64> = y.iter().map(|&v| if relu && v <= 0.0 { 0.0 } else { rng.random_range(-1.0..1.0) }).collect();
        let loss = |p: &[Vec<f64>], x: &[f64]| -> f64 { k.forward_f64(p, x).iter().zip(&g).map(|(a, b)| a * b).sum() };
        let p32: Vec<Vec<f32>> = params.iter().map(|t| t.iter().map(|&v| v as f32).collect()).collect();
        let x32: Vec<f32> = x.iter().map(|&v| v as f32).collect();
        let g32: Vec<f32> = g.iter().map(|&v| v as f32).collect();
        let mut grads: Vec<Vec<f32>> = params.iter().map(|t| vec![0.0; t.len()]).collect();
        let dx = k.backward(Backward { x: &x32, params: &p32, delta: &g32, grads: &mut grads, want_input: true });
        let eps = 1e-4;
        for (t, tensor) in params.iter().enumerate() {
            for i in 0..tensor.len() {
                let (mut hi, mut lo) = (params.clone(), params.clone());
                hi[t][i] += eps;
                lo[t][i] -= eps;
                let num = (loss(&hi, &x) - loss(&lo, &x)) / (2.0 * eps);
                assert!((num - f64::from(grads[t][i])).abs() < 1e-3, "layer {li} tensor {t}[{i}]: numerical {num}, backward {}", grads[t][i]);
            }
        }
        assert_eq!(dx.len(), x.len(), "layer {li}");
        for i in 0..x.len() {
            let (mut hi, mut lo) = (x.clone(), x.clone());
            hi[i] += eps;
            lo[i] -= eps;
            let num = (loss(&params, &hi) - loss(&params, &lo)) / (2.0 * eps);
            assert!((num - f64::from(dx[i])).abs() < 1e-3, "layer {li} input {i}: numerical {num}, backward {}", dx[i]);
        }
        x = y;
    }
}

#[test]
fn random_weights_and_the_archive_round_trip_for_a_cnn() {
    let dir = tempfile::tempdir().expect("tempdir");
    let m = model(&cnn(true));
    let p = weights::random(&m, 3);
    let path = dir.path().join("w.npz");
    weights::save(&m, &p, &path, &[]).expect("save");
    assert_eq!(weights::load_from(&m, &path, weights::Conversion::Exact).expect("load"), p);
    let names: Vec<String> = fptgen_sim::tensor::read_npz(&path).expect("npz").keys().cloned().collect();
    assert_eq!(names, ["c1/b", "c1/w", "c2/b", "c2/w", "d/b", "d/w", "n1/scale", "n1/shift"]);
    let arrays = fptgen_sim::tensor::read_npz(&path).expect("npz");
    assert_eq!(arrays["c1/w"].shape, vec![3, 3, 3, 2], "OHWI");
}

/// Each bad conv-network entry, with the line the error must name and
/// words it must contain.
#[test]
fn bad_image_layers_are_located() {
    let base = cnn(false);
    for (from, to, at, words) in [
        ("    filters: 3\n", "    filters: 3\n    kernel: 5\n", "kernel: 5", &["kernel is 5", "stacked 3x3"][..]),
        ("    filters: 3\n", "    filters: 3\n    kernel: 1\n", "kernel: 1", &["zero outside the centre"][..]),
        ("    stride: 2\n", "    stride: 3\n", "stride: 3", &["stride 1 or 2"][..]),
        ("  - name: p1\n    type: maxpool2d\n", "  - name: p1\n    type: maxpool2d\n    pool: 3\n", "pool: 3", &["pool 2"][..]),
        ("    filters: 3\n", "    filters: 3\n    inputs: 4\n", "inputs: 4", &["`inputs` does not apply to a conv2d layer"][..]),
        ("  - name: f\n    type: flatten\n", "", "inputs: 2", &["put a `type: flatten` layer before it"][..]),
        ("    type: flatten\n", "    type: avgpool2d\n", "type: avgpool2d", &["'avgpool2d' is not in the core operator set", "rewrites it as"][..]),
        ("    trainable: [scale, shift]\n", "    trainable: [weights]\n", "trainable: [weights]", &["no weights to train"][..]),
        ("    filters: 2\n", "    filters: 0\n", "filters: 0", &["filters is 0"][..]),
        ("input: {shape: [6, 6, 2]", "input: {shape: [72]", "type: conv2d", &["takes an image", "[72]"][..]),
        ("scale: 'ap_fixed<6,2>', ", "", "precision: {shift", &["precision needs `scale`"][..]),
    ] {
        let text = base.replacen(from, to, 1);
        let line = text.lines().position(|l| l.contains(at)).unwrap_or_else(|| panic!("{at}")) + 1;
        let e = parse(&text, Path::new("model.yaml")).expect_err(to).to_string();
        assert!(e.starts_with(&format!("model.yaml:{line}:")), "{to:?}: {e}");
        for w in words {
            assert!(e.contains(w), "{to:?}: {w:?} in {e}");
        }
    }
    // A valid-padded 3x3 convolution of a 2x2 image.
    let e = parse(&base.replace("[6, 6, 2]", "[2, 2, 2]").replace("    filters: 3\n", "    filters: 3\n    padding: valid\n"), Path::new("model.yaml"))
        .expect_err("too small")
        .to_string();
    assert!(e.contains("at least 3x3"), "{e}");
}

/// `multipliers: packed` is read for dense and conv2d layers where it
/// applies, and refused, at its line with the layer's name and the reason,
/// where it does not (`packing_refusal`).
#[test]
fn packed_multipliers_are_checked() {
    use fptgen_sim::layers::dense::Multipliers;
    use fptgen_sim::model::LayerOp;
    let base = cnn(false);
    // c2 (wrapping accumulator, exact products) with two filters in
    // parallel, and d with two outputs in parallel: both pack.
    let ok = base
        .replacen("    padding: valid\n", "    padding: valid\n    pe: 2\n    multipliers: packed\n", 1)
        .replacen("    outputs: 3\n", "    outputs: 3\n    pe: 2\n    multipliers: packed\n", 1);
    let m = parse(&ok, Path::new("model.yaml")).expect("packed c2 and d");
    let packed: Vec<&str> = m
        .layers
        .iter()
        .filter(|l| match &l.op {
            LayerOp::Dense(d) => d.multipliers == Multipliers::Packed,
            LayerOp::Conv2d(c) => c.mvau.multipliers == Multipliers::Packed,
            _ => false,
        })
        .map(|l| l.name.as_str())
        .collect();
    assert_eq!(packed, ["c2", "d"]);
    let wide = "precision: {weight: 'ap_fixed<12,2>', bias: 'ap_fixed<6,2>', accum: 'ap_fixed<40,20>', output: 'ap_fixed<8,3,AP_RND,AP_SAT>'}";
    for (from, to, words) in [
        // pe 1: nothing to pair.
        ("    padding: valid\n", "    padding: valid\n    multipliers: packed\n", &["layer 'c2'", "pe is 1"][..]),
        // c1's saturating accumulator is proven exact by its bounds, but a
        // 12-bit weight's products have 15 fraction bits, more than d's
        // accumulator keeps: not exact, no tree.
        ("    outputs: 3\n", "    outputs: 3\n    pe: 3\n    multipliers: packed\n    precision: {weight: 'ap_fixed<12,2>', bias: 'ap_fixed<6,2>', accum: 'ap_fixed<14,6>', output: 'ap_fixed<8,3>'}\n", &["layer 'd'", "not exact"][..]),
        // Exact, but 2 x 12 + 8 + 3 = 35 bits do not fit a DSP48E2.
        ("    outputs: 3\n", &format!("    outputs: 3\n    pe: 3\n    multipliers: packed\n    {wide}\n"), &["layer 'd'", "35 x 9", "27 x 18"][..]),
        ("    outputs: 3\n", "    outputs: 3\n    multipliers: many\n", &["unknown variant `many`"][..]),
    ] {
        let mut text = base.replacen(from, to, 1);
        if to.contains("precision:") {
            // The replaced precision is d's own; drop the original line after it.
            let q = "    precision: {weight: 'ap_fixed<4,1>', bias: 'ap_fixed<6,2>', accum: 'ap_fixed<14,6>', output: 'ap_fixed<8,3,AP_RND,AP_SAT>'}\n";
            let at = text.rfind(q).expect("d's precision");
            text.replace_range(at..at + q.len(), "");
        }
        let line = text.lines().position(|l| l.contains("multipliers:")).expect("multipliers line") + 1;
        let e = parse(&text, Path::new("model.yaml")).expect_err(to).to_string();
        assert!(e.starts_with(&format!("model.yaml:{line}:")), "{to:?}: {e}");
        for w in words {
            assert!(e.contains(w), "{to:?}: {w:?} in {e}");
        }
    }
}
