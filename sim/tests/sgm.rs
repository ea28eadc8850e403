//! `training: rule: sgm` (`fptgen_sim::train::sgm`): a step worked by hand,
//! the saturation of `h`, the archive's refusals, the model file's
//! refusals, and the fit, which must find the exact gradient where a linear
//! module can express it.

use std::path::Path;

use fptgen_sim::model::{self, Model, Rule, Training};
use fptgen_sim::network::Network;
use fptgen_sim::tensor::{write_npz, NamedArray, OutValues};
use fptgen_sim::train::sgm::{self, Sgm, SgmModule};
use fptgen_sim::train::{Buffer, FeedbackTrainer};
use fptgen_sim::weights::{LayerParams, Params};

#[path = "common/integer_net.rs"]
mod integer_net;
use integer_net::{parse, INTEGER_NET};

fn training() -> Training {
    Training { rule: Rule::Sgm, lr_shift: 0, buffer: 1, iterations: 1, ..Training::default() }
}

/// x = (3, -2); h = relu(Wh x + bh) = (0, 8) with Wh = [[1, 2], [2, -1]],
/// bh = (1, 0); y = h (Wo the identity), t = (5, 1), e = (-5, 7).
fn params() -> Params {
    Params {
        layers: vec![
            LayerParams { tensors: vec![vec![1, 2, 2, -1], vec![1, 0]] },
            LayerParams { tensors: vec![vec![1, 0, 0, 1], vec![0, 0]] },
        ],
    }
}

fn module(v: Vec<i128>, c: Vec<i128>, u: Vec<i128>, shift_h: i32, shift_g: i32) -> Sgm {
    Sgm { modules: vec![SgmModule { layer: 0, outputs: 2, classes: 2, shift_a: 0, shift_t: 0, h_bits: 10, v, c, u, shift_h, shift_g }] }
}

fn step(m: &Model, sgm: &Sgm) -> (fptgen_sim::train::SampleRecord, Params) {
    let buffer = Buffer::new(m, vec![vec![3, -2]], vec![vec![5, 1]]).expect("buffer");
    let net = Network::new(m.clone(), params()).expect("valid");
    let mut tr = FeedbackTrainer::with_sgm(net, training(), buffer, Some(sgm)).expect("trainer");
    let mut records = Vec::new();
    tr.run(1, &mut |r| records.push(r.clone()));
    (records.remove(0), tr.params().clone())
}

/// u = [a0, a1, t0, t1] = [0, 8, 5, 1].
/// v = [[1, 2, -3, 0], [0, -1, 0, 4]], c = (2, -1), s_h = 1:
///   acc = (2 + 16 - 15, -1 - 8 + 4) = (3, -5); h = (R(3/2), R(-5/2)) = (2, -2) (ties to even).
/// u = [[3, -1], [5, 2]], s_g = 1: g = (R(8/2), R(6/2)) = (4, 3).
/// The hidden layer's neuron 0 is clipped: delta (0, 3); the output layer's is e.
#[test]
fn a_step_worked_by_hand() {
    let m = parse(INTEGER_NET);
    let (rec, p) = step(&m, &module(vec![1, 2, -3, 0, 0, -1, 0, 4], vec![2, -1], vec![3, -1, 5, 2], 1, 1));
    assert_eq!(rec.hidden, vec![(0, vec![2, -2])]);
    assert_eq!(rec.deltas, vec![(0, vec![0, 3]), (1, vec![-5, 7])]);
    // Hidden row 1 moves by 3 * x = (9, -6), its bias by 3; the output
    // layer by e x a = (-5, 7) x (0, 8) and e.
    assert_eq!(p.layers[0].tensors, vec![vec![1, 2, 2 - 9, -1 + 6], vec![1, -3]]);
    assert_eq!(p.layers[1].tensors, vec![vec![1, 40, 0, 1 - 56], vec![5, -7]]);
}

/// h saturates to 10 bits: acc = (10000 + 16 - 15, -10000 - 8 + 4) gives
/// h = (511, -512); with u the identity and s_g 0, g = h.
#[test]
fn h_saturates_to_the_error_width() {
    let m = parse(INTEGER_NET);
    let (rec, _) = step(&m, &module(vec![1, 2, -3, 0, 0, -1, 0, 4], vec![10_000, -10_000], vec![1, 0, 0, 1], 0, 0));
    assert_eq!(rec.hidden, vec![(0, vec![511, -512])]);
    assert_eq!(rec.deltas[0], (0, vec![0, -512]));
}

/// The archive: what `save` writes `load` reads back; every defect is an
/// error naming the archive and the tensor.
#[test]
fn the_archive_round_trips_and_refuses_bad_arrays() {
    let dir = tempfile::tempdir().expect("tempdir");
    let m = parse(&format!("{INTEGER_NET}training: {{rule: sgm, sgm: s.npz}}\n"));
    let good = module(vec![1, 2, -3, 0, 0, -1, 0, 4], vec![2, -1], vec![3, -1, 5, 2], 1, 1);
    let path = dir.path().join("s.npz");
    sgm::save(&m, &good, &path, &[]).expect("save");
    assert_eq!(sgm::load(&m, &path).expect("load"), good);
    let i64s = |v: &[i64]| OutValues::I64(v.to_vec());
    let arrays = |v: OutValues, shift: &[i64], extra: bool| {
        let mut a = vec![
            NamedArray { name: "h/sgm_v".into(), shape: vec![2, 4], values: v },
            NamedArray { name: "h/sgm_c".into(), shape: vec![2], values: i64s(&[0, 0]) },
            NamedArray { name: "h/sgm_u".into(), shape: vec![2, 2], values: i64s(&[0; 4]) },
            NamedArray { name: "h/sgm_shift".into(), shape: vec![2], values: i64s(shift) },
        ];
        if extra {
            a.push(NamedArray { name: "o/sgm_v".into(), shape: vec![1], values: i64s(&[0]) });
        }
        a
    };
    let cases: Vec<(&str, Vec<NamedArray>, &str)> = vec![
        ("range", arrays(i64s(&[0, 0, 128, 0, 0, 0, 0, 0]), &[0, 0], false), "tensor 'h/sgm_v' at index [0, 2]: is 128"),
        ("float", arrays(OutValues::F64(vec![0.0; 8]), &[0, 0], false), "tensor 'h/sgm_v': is <f8"),
        ("shift", arrays(i64s(&[0; 8]), &[0, -1], false), "tensor 'h/sgm_shift' at index [1]: is -1"),
        ("extra", arrays(i64s(&[0; 8]), &[0, 0], true), "tensor 'o/sgm_v': is not an array"),
        ("missing", arrays(i64s(&[0; 8]), &[0, 0], false).into_iter().skip(1).collect(), "tensor 'h/sgm_v': is missing"),
    ];
    for (name, a, want) in cases {
        let p = dir.path().join(format!("{name}.npz"));
        write_npz(&p, &a).expect("write");
        let e = sgm::load(&m, &p).expect_err(name).to_string();
        assert!(e.contains(&p.display().to_string()) && e.contains(want), "{name}: {e}");
    }
    let e = sgm::load(&m, &dir.path().join("absent.npz")).expect_err("absent").to_string();
    assert!(e.contains("absent.npz") && e.contains("fptgen train --sgm"), "{e}");
}

/// The model file: rule sgm needs `sgm:` when a hidden layer trains (the
/// error at the rule's line), and `sgm:` belongs to rule sgm only.
#[test]
fn the_model_file_refuses_sgm_without_modules() {
    let e = model::parse(&format!("{INTEGER_NET}training:\n  rule: sgm\n"), Path::new("t.yaml")).expect_err("no sgm").to_string();
    assert!(e.starts_with("t.yaml:") && e.contains("rule sgm needs") && e.contains("'h'") && e.contains("fptgen train --sgm"), "{e}");
    let e = model::parse(&format!("{INTEGER_NET}training:\n  rule: dfa\n  sgm: s.npz\n"), Path::new("t.yaml")).expect_err("dfa").to_string();
    assert!(e.contains("`sgm:`") && e.contains("the rule is dfa"), "{e}");
    // Only the output layer trains: no module is needed.
    let last_only = INTEGER_NET.replacen("trainable: [weights, biases]", "trainable: []", 1);
    let m = parse(&format!("{last_only}training:\n  rule: sgm\n"));
    assert!(m.sgm_path.is_none() && sgm::module_shapes(&m).is_empty());
    // A trainer without modules for a hidden layer is refused.
    let m = parse(&format!("{INTEGER_NET}training:\n  rule: sgm\n  sgm: s.npz\n"));
    let buffer = Buffer::new(&m, vec![vec![3, -2]], vec![vec![5, 1]]).expect("buffer");
    let net = Network::new(m.clone(), params()).expect("valid");
    let e = FeedbackTrainer::with_sgm(net, training(), buffer, None).expect_err("no module").to_string();
    assert!(e.contains("layer 'h' has no synthetic-gradient module"), "{e}");
}

/// Where the true gradient is linear in `[a, t]` (a hidden layer feeding a
/// linear output layer: `g = Wo^T (Wo a + bo - t)`), the fitted module
/// reproduces it: cosine with the true gradient above 0.99, against about
/// 0 for a random projection.
#[test]
fn the_fit_finds_a_gradient_that_a_linear_module_can_express() {
    let text = "name: t\ninput: {shape: [6], format: 'ap_fixed<8,2>'}\nweights: w.npz\nlayers:\n\
      - {name: h, type: dense, inputs: 6, outputs: 8, activation: relu, trainable: [weights],\n\
         precision: {weight: 'ap_fixed<8,2>', bias: 'ap_fixed<8,2>', accum: 'ap_fixed<24,8>', output: 'ap_fixed<12,4>'}}\n\
      - {name: o, type: dense, inputs: 8, outputs: 4, activation: linear, trainable: [weights],\n\
         precision: {weight: 'ap_fixed<8,2>', bias: 'ap_fixed<8,2>', accum: 'ap_fixed<24,8>', output: 'ap_fixed<12,4>'}}\n\
      training: {rule: sgm, sgm: s.npz}\n";
    let m = parse(text);
    let p = fptgen_sim::weights::random(&m, 7);
    use rand::{Rng, SeedableRng};
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
    let one = 1 << 8; // 1.0 in ap_fixed<12,4>
    let samples: Vec<(Vec<i128>, Vec<i128>)> = (0..2000)
        .map(|_| {
            let x = (0..6).map(|_| rng.random_range(-128..=127)).collect();
            let k = rng.random_range(0..4);
            (x, (0..4).map(|o| if o == k { one } else { 0 }).collect())
        })
        .collect();
    let (modules, reports) = sgm::fit(&m, &p, &samples, 1e-6, 1).expect("fit");
    assert_eq!(modules.modules.len(), 1);
    let r = &reports[0];
    assert!(r.cosine > 0.99, "cosine {} (dfa {})", r.cosine, r.cosine_dfa);
    assert!(r.cosine_dfa.abs() < 0.5, "dfa cosine {}", r.cosine_dfa);
}

/// The same for a hidden convolution read through a flatten (so the true
/// gradient comes from the graph's backward pass, not the dense chain):
/// the true gradient equals `Wo^T e` computed here from its definition,
/// which is linear in `[a, t]` while nothing saturates, and the fitted
/// module follows it.
#[test]
fn the_fit_follows_the_gradient_through_a_flatten_to_a_convolution() {
    let text = "name: t\ninput: {shape: [3, 3, 1], format: 'ap_fixed<8,2>'}\nweights: w.npz\nlayers:\n\
      - {name: c, type: conv2d, filters: 2, padding: same, activation: relu, trainable: [weights],\n\
         precision: {weight: 'ap_fixed<8,2>', bias: 'ap_fixed<8,2>', accum: 'ap_fixed<24,8>', output: 'ap_fixed<14,6>'}}\n\
      - {name: f, type: flatten}\n\
      - {name: o, type: dense, inputs: 18, outputs: 3, activation: linear, trainable: [weights],\n\
         precision: {weight: 'ap_fixed<8,2>', bias: 'ap_fixed<8,2>', accum: 'ap_fixed<24,8>', output: 'ap_fixed<14,6>'}}\n\
      training: {rule: sgm, sgm: s.npz}\n";
    let m = parse(text);
    assert_eq!(sgm::module_shapes(&m).iter().map(|s| (s.layer, s.outputs)).collect::<Vec<_>>(), vec![(0, 18)]);
    let p = fptgen_sim::weights::random(&m, 7);
    use rand::{Rng, SeedableRng};
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(5);
    let one = 1 << 8; // 1.0 in ap_fixed<14,6>
    let samples: Vec<(Vec<i128>, Vec<i128>)> = (0..2000)
        .map(|_| {
            let x = (0..9).map(|_| rng.random_range(-128..=127)).collect();
            let k = rng.random_range(0..3);
            (x, (0..3).map(|o| if o == k { one } else { 0 }).collect())
        })
        .collect();
    // The true gradient itself, from its definition: the output layer is
    // linear and nothing saturates, so it is Wo^T e (weights real, code /
    // 2^6), flatten being the identity.
    for (x, t) in samples.iter().take(50) {
        let outs = m.forward_all(&p, x);
        let e: Vec<f64> = outs[2].iter().zip(t).map(|(&y, &t)| (y - t) as f64).collect();
        let want: Vec<f64> = (0..18).map(|i| (0..3).map(|o| p.layers[2].tensors[0][o * 18 + i] as f64 / 64.0 * e[o]).sum()).collect();
        let got = sgm::true_gradient(&m, &p, x, &outs, t, 0);
        assert_eq!(got.len(), 18);
        for (g, w) in got.iter().zip(&want) {
            assert!((g - w).abs() <= 1e-3 * (1.0 + w.abs()), "true gradient {got:?}, want {want:?}");
        }
    }
    let (_, reports) = sgm::fit(&m, &p, &samples, 1e-6, 1).expect("fit");
    let r = &reports[0];
    assert!(r.cosine > 0.99, "cosine {} (dfa {})", r.cosine, r.cosine_dfa);
    assert!(r.cosine_dfa.abs() < 0.5, "dfa cosine {}", r.cosine_dfa);
}
