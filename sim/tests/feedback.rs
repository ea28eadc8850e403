//! The feedback rules (`training: rule: drtp | dfa`,
//! `fptgen_sim::train::feedback`): a step worked by hand, no change where
//! DFA's error is zero, learning on a task a two-layer network can learn,
//! and the model file's refusals.

use std::path::Path;

use fptgen_sim::model::{self, LfsrWidth, Rule, Training};
use fptgen_sim::network::Network;
use fptgen_sim::train::feedback::{feedback_layers, feedback_matrix, round_shift, stochastic_shift};
use fptgen_sim::train::lfsr::Lfsr;
use fptgen_sim::train::steps::StepBasis;
use fptgen_sim::train::{Buffer, FeedbackTrainer};
use fptgen_sim::weights::{LayerParams, Params};

#[path = "common/integer_net.rs"]
mod integer_net;
use integer_net::{parse, INTEGER_NET};

fn training(rule: Rule, lr_shift: i32, buffer: usize, seed: u64) -> Training {
    Training { rule, lr_shift, buffer, iterations: 1, seed, ..Training::default() }
}

/// One step worked by hand. h = relu(Wh x + bh), y = Wo h + bo with
/// x = (3, -2), Wh = [[1, 2], [2, -1]], bh = (1, 0): h = (0, 8) (the first
/// neuron is clipped); Wo = [[1, 0], [0, 1]], bo = (0, 0): y = (0, 8).
/// Target t = (5, 1): e = y - t = (-5, 7), k* = 0.
#[test]
fn a_step_worked_by_hand() {
    let m = parse(INTEGER_NET);
    let params = Params {
        layers: vec![
            LayerParams { tensors: vec![vec![1, 2, 2, -1], vec![1, 0]] },
            LayerParams { tensors: vec![vec![1, 0, 0, 1], vec![0, 0]] },
        ],
    };
    let buffer = Buffer::new(&m, vec![vec![3, -2]], vec![vec![5, 1]]).expect("buffer");
    let b = feedback_matrix(1, 0, 2, 2);
    let b = |o: usize, k: usize| i128::from(b[o * 2 + k]);
    for rule in [Rule::Dfa, Rule::Drtp] {
        let net = Network::new(m.clone(), params.clone()).expect("valid");
        let mut tr = FeedbackTrainer::new(net, training(rule, 0, 1, 1), buffer.clone()).expect("trainer");
        let mut records = Vec::new();
        tr.run(1, &mut |r| records.push(r.clone()));
        // Hidden deltas: neuron 0 is clipped (relu output 0); neuron 1 gets
        // sum_k B[1][k] e_k (dfa) or -B[1][0] (drtp).
        let g1 = match rule {
            Rule::Dfa => -5 * b(1, 0) + 7 * b(1, 1),
            _ => -b(1, 0),
        };
        assert_eq!(records[0].deltas, vec![(0, vec![0, g1]), (1, vec![-5, 7])], "{rule:?}");
        // Updates from the same forward pass: hidden row 1 by g1 * x, bias 1
        // by g1; the output layer by e * h = (-5, 7) x (0, 8).
        let p = tr.params();
        assert_eq!(p.layers[0].tensors[0], vec![1, 2, (2 - g1 * 3).clamp(-128, 127), (-1 + g1 * 2).clamp(-128, 127)], "{rule:?}");
        assert_eq!(p.layers[0].tensors[1], vec![1, (-g1).clamp(-128, 127)], "{rule:?}");
        assert_eq!(p.layers[1].tensors[0], vec![1, 40, 0, 1 - 56], "{rule:?}");
        assert_eq!(p.layers[1].tensors[1], vec![5, -7], "{rule:?}");
    }
}

/// `R(v, k)`: nearest, ties to even; a negative `k` multiplies.
#[test]
fn round_shift_rounds_to_nearest_even() {
    for (v, k, want) in [(5, 1, 2), (7, 1, 4), (-5, 1, -2), (-7, 1, -4), (6, 2, 2), (10, 2, 2), (-6, 2, -2), (3, 0, 3), (3, -2, 12), (1, 3, 0), (4, 3, 0), (5, 3, 1)] {
        assert_eq!(round_shift(v, k), want, "R({v}, {k})");
    }
}

/// DFA with targets equal to the outputs: every error is 0, so nothing
/// changes, in any layer.
#[test]
fn dfa_with_zero_error_changes_nothing() {
    let m = parse(INTEGER_NET);
    let params = Params {
        layers: vec![
            LayerParams { tensors: vec![vec![1, 2, 2, -1], vec![1, 0]] },
            LayerParams { tensors: vec![vec![1, -3, 2, 1], vec![4, 0]] },
        ],
    };
    let net = Network::new(m.clone(), params.clone()).expect("valid");
    let inputs = vec![vec![3, -2], vec![-1, 4], vec![7, 7]];
    let targets: Vec<Vec<i128>> = inputs.iter().map(|x| net.infer(x).expect("infer")).collect();
    let buffer = Buffer::new(&m, inputs, targets).expect("buffer");
    let mut tr = FeedbackTrainer::new(net, training(Rule::Dfa, 0, 3, 9), buffer).expect("trainer");
    let loss = tr.run(3, &mut |r| assert_eq!(r.changed, 0));
    assert_eq!((tr.params(), loss), (&params, 0));
}

/// A task a two-layer network can learn: 16 inputs, 24 relu units, 4
/// linear outputs whose targets are a fixed random linear map of the
/// inputs. Both rules cut the buffer loss by more than half in 30
/// iterations over 64 samples.
#[test]
fn both_rules_learn_a_linear_task() {
    let text = "name: t\ninput: {shape: [16], format: 'ap_fixed<8,2>'}\nweights: w.npz\nlayers:\n\
      - {name: h, type: dense, inputs: 16, outputs: 24, activation: relu, trainable: [weights, biases],\n\
         precision: {weight: 'ap_fixed<12,2>', bias: 'ap_fixed<12,2>', accum: 'ap_fixed<32,12>', output: 'ap_ufixed<10,4>'}}\n\
      - {name: o, type: dense, inputs: 24, outputs: 4, activation: linear, trainable: [weights, biases],\n\
         precision: {weight: 'ap_fixed<12,2>', bias: 'ap_fixed<12,2>', accum: 'ap_fixed<32,12>', output: 'ap_fixed<12,5>'}}\n";
    let m = parse(text);
    let mut state = 3u64;
    let mut next = |n: i128| -> i128 {
        state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (state >> 33) as i128 % n
    };
    // Small random weights (codes of ap_fixed<12,2>: 2^-10 steps).
    let params = Params {
        layers: vec![
            LayerParams { tensors: vec![(0..16 * 24).map(|_| next(401) - 200).collect(), vec![64; 24]] },
            LayerParams { tensors: vec![(0..24 * 4).map(|_| next(401) - 200).collect(), vec![0; 4]] },
        ],
    };
    let teacher: Vec<i128> = (0..4 * 16).map(|_| next(5) - 2).collect();
    let inputs: Vec<Vec<i128>> = (0..64).map(|_| (0..16).map(|_| next(129) - 64).collect()).collect();
    // Targets: the teacher's map of the input values (x code / 64) on the
    // output grid (code / 128), within the output format.
    let targets: Vec<Vec<i128>> = inputs
        .iter()
        .map(|x| (0..4).map(|k| ((0..16).map(|i| teacher[k * 16 + i] * x[i]).sum::<i128>() / 8).clamp(-2048, 2047)).collect())
        .collect();
    let buffer = Buffer::new(&m, inputs, targets).expect("buffer");
    for (rule, lr_shift) in [(Rule::Dfa, 12), (Rule::Drtp, 12)] {
        let net = Network::new(m.clone(), params.clone()).expect("valid");
        let mut tr = FeedbackTrainer::new(net, training(rule, lr_shift, 64, 5), buffer.clone()).expect("trainer");
        let before = tr.loss();
        let after = tr.run(30, &mut |_| {});
        eprintln!("{rule:?}: buffer loss {before} -> {after}");
        assert!(after * 2 < before, "{rule:?}: buffer loss {before} -> {after}");
    }
}

/// A feedback rule trains dense, conv2d and dense_int8 layers: a trainable batch norm
/// is an error at the rule's line; an unknown rule is an error too.
#[test]
fn the_model_file_refuses_what_a_rule_cannot_train() {
    let bn = "name: t\ninput: {shape: [4], format: 'ap_fixed<8,3>'}\nweights: w.npz\nlayers:\n\
      - {name: n, type: batchnorm, activation: relu, trainable: [scale],\n\
         precision: {scale: 'ap_fixed<6,2>', shift: 'ap_fixed<6,2>', accum: 'ap_fixed<20,8>', output: 'ap_fixed<8,3>'}}\n\
      - {name: d, type: dense, inputs: 4, outputs: 2, activation: linear,\n\
         precision: {weight: 'ap_fixed<6,2>', bias: 'ap_fixed<6,2>', accum: 'ap_fixed<20,8>', output: 'ap_fixed<8,3>'}}\n\
      training:\n  rule: dfa\n";
    let e = model::parse(bn, Path::new("t.yaml")).expect_err("dfa cannot train a batch norm").to_string();
    assert!(e.starts_with("t.yaml:10:") && e.contains("rule dfa trains dense, conv2d and dense_int8 layers only; layer 'n' is a trainable batchnorm layer"), "{e}");
    let e = model::parse(&format!("{INTEGER_NET}training:\n  rule: backprop\n"), Path::new("t.yaml")).expect_err("unknown rule").to_string();
    assert!(e.contains("backprop") && e.contains("t.yaml:"), "{e}");
    let m = parse(&format!("{INTEGER_NET}training:\n  rule: drtp\n  buffer: 4\n"));
    assert_eq!(m.training.map(|t| t.rule), Some(Rule::Drtp));
}

/// Without `lr_shift`, a feedback rule takes 16 + the output format's
/// fraction bits (`auto`); a written `lr_shift` is kept; ES takes its own
/// automatic step (sim/tests/auto_steps.rs); `with_rule` (what `--rule`
/// does) resolves an unwritten one for the new rule.
#[test]
fn lr_shift_auto_follows_the_output_format() {
    let net = |out: &str| {
        format!(
            "name: t\ninput: {{shape: [2], format: 'ap_fixed<8,3>'}}\nweights: w.npz\nlayers:\n\
  - {{name: o, type: dense, inputs: 2, outputs: 2, activation: linear, trainable: [weights],\n\
     precision: {{weight: 'ap_fixed<8,2>', bias: 'ap_fixed<8,2>', accum: 'ap_fixed<20,8>', output: '{out}'}}}}\n"
        )
    };
    for (out, frac) in [("ap_fixed<16,8>", 8), ("ap_fixed<8,4>", 4), ("ap_int<8>", 0)] {
        let m = parse(&format!("{}training: {{rule: dfa}}\n", net(out)));
        let t = m.training.expect("training");
        assert_eq!((t.lr_shift, t.lr_shift_auto), (16 + frac, true), "{out}");
        let m = parse(&format!("{}training: {{rule: drtp, lr_shift: 3}}\n", net(out)));
        let t = m.training.expect("training");
        assert_eq!((t.lr_shift, t.lr_shift_auto), (3, false), "{out}");
        let m = parse(&format!("{}training: {{population: 2}}\n", net(out)));
        let es = m.training.expect("training");
        assert_eq!((es.rule, es.lr_shift_auto), (Rule::Es, true), "{out}");
        let f = StepBasis::of(&m);
        let f = f.as_ref();
        assert_eq!(es.with_rule(Rule::Dfa, f).lr_shift, 16 + frac, "{out}");
        assert_eq!(es.with_rule(Rule::Dfa, f).with_rule(Rule::Es, f).lr_shift, es.lr_shift, "{out}");
        let written = Training { lr_shift_auto: false, lr_shift: 7, ..es };
        assert_eq!(written.with_rule(Rule::Dfa, f).lr_shift, 7, "{out}");
    }
}

/// Stochastic rounding (docs/training.md, "Stochastic rounding"): every
/// step is the floor or the ceiling of `v / 2^k`, and over many draws its
/// mean is `v / 2^k`, for steps far below half a code (where rounding to
/// nearest gives 0 every time) and for negative ones; `k` above 32 draws
/// 32 bits; `k <= 0` is exact and draws nothing.
#[test]
fn stochastic_steps_are_unbiased() {
    for (v, k) in [(3i128, 4), (-3, 4), (1, 9), (-1000, 5), (77, 1), (5, 36)] {
        let mut lfsr = Lfsr::new(LfsrWidth::W32, 0x1234_5679).expect("nonzero");
        let n = 40_000;
        let exact = v as f64 / 2f64.powi(k);
        let (lo, hi) = (exact.floor() as i128, exact.ceil() as i128);
        let mut sum = 0i128;
        for _ in 0..n {
            let s = stochastic_shift(v, k, &mut lfsr);
            assert!(s == lo || s == hi, "R_s({v}, {k}) = {s}, not {lo} or {hi}");
            sum += s;
        }
        let mean = sum as f64 / n as f64;
        // The fraction (exact - lo) of draws round up: a binomial mean,
        // within 5 standard deviations.
        let p = exact - lo as f64;
        let tol = 5.0 * (p * (1.0 - p) / n as f64).sqrt() + 1e-9;
        assert!((mean - exact).abs() <= tol, "R_s({v}, {k}): mean {mean}, expected {exact} within {tol}");
        if v.abs() < 1 << (k - 1) {
            assert_eq!(round_shift(v, k), 0, "to nearest, {v} / 2^{k} is 0");
        }
    }
    let mut lfsr = Lfsr::new(LfsrWidth::W32, 7).expect("nonzero");
    assert_eq!(stochastic_shift(-5, 0, &mut lfsr), -5);
    assert_eq!(stochastic_shift(3, -2, &mut lfsr), 12);
    assert_eq!(lfsr.state(), 7, "k <= 0 draws nothing");
}

/// `step_rounding` in the model file: `auto` rounds the steps of a tensor
/// of at most 256 codes stochastically and wider ones to nearest; nothing
/// is rounded when the shift is not positive; `nearest` and `stochastic`
/// apply to every tensor; each tensor has its own LFSR seed; ES refuses
/// an explicit rounding, at its line.
#[test]
fn step_rounding_auto_is_stochastic_for_narrow_tensors() {
    let net = |rounding: &str, lr_shift: i32| {
        format!(
            "name: t\ninput: {{shape: [2], format: 'ap_fixed<8,3>'}}\nweights: w.npz\nlayers:\n\
  - {{name: o, type: dense, inputs: 2, outputs: 2, activation: linear, trainable: [weights, biases],\n\
     precision: {{weight: 'ap_fixed<4,1>', bias: 'ap_fixed<12,4>', accum: 'ap_fixed<20,8>', output: 'ap_fixed<10,4>'}}}}\n\
training:\n  rule: dfa\n  buffer: 2\n  lr_shift: {lr_shift}\n{rounding}"
        )
    };
    let rounds = |text: String| {
        let m = parse(&text);
        let t = m.training.clone().expect("training");
        let l = feedback_layers(&m, &t).expect("layers").remove(0);
        (l.round_w, l.round_b)
    };
    let (w, b) = rounds(net("", 12));
    assert!(w.is_some() && b.is_none(), "auto: 4-bit weights stochastic, 12-bit biases to nearest: {w:?} {b:?}");
    let (w2, b2) = rounds(net("  step_rounding: stochastic\n", 12));
    assert!(w2.is_some() && b2.is_some() && w2 != b2, "stochastic: both, with their own seeds");
    assert_eq!(w, w2, "the weights' seed does not depend on the rounding option");
    assert_eq!(rounds(net("  step_rounding: nearest\n", 12)), (None, None));
    // lr_shift -3: the weight shift 8 + 5 - 3... is still positive, the
    // bias shift -3 - 8 is not: nothing to round there.
    let (_, b) = rounds(net("  step_rounding: stochastic\n", -3));
    assert_eq!(b, None, "a left-shifted bias step is exact");
    let es = "name: t\ninput: {shape: [2], format: 'ap_fixed<8,3>'}\nweights: w.npz\nlayers:\n\
  - {name: o, type: dense, inputs: 2, outputs: 2, activation: linear, trainable: [weights],\n\
     precision: {weight: 'ap_fixed<4,1>', bias: 'ap_fixed<12,4>', accum: 'ap_fixed<20,8>', output: 'ap_fixed<10,4>'}}\n\
training:\n  population: 2\n  step_rounding: stochastic\n";
    let e = model::parse(es, Path::new("t.yaml")).expect_err("ES rounds to nearest").to_string();
    assert!(e.starts_with("t.yaml:9:") && e.contains("step_rounding stochastic is for the feedback rules"), "{e}");
}

/// Why stochastic rounding: a layer with 4-bit weights and a small step
/// (the automatic one's size) learns the linear task of
/// [`both_rules_learn_a_linear_task`] only when its steps round
/// stochastically; rounded to nearest every weight step is 0.
#[test]
fn narrow_weights_learn_only_with_stochastic_steps() {
    let text = |rounding: &str| {
        format!(
            "name: t\ninput: {{shape: [2], format: 'ap_fixed<8,2>'}}\nweights: w.npz\nlayers:\n\
  - {{name: o, type: dense, inputs: 2, outputs: 1, activation: linear, trainable: [weights],\n\
     precision: {{weight: 'ap_fixed<4,2>', bias: 'ap_fixed<4,2>', accum: 'ap_fixed<20,8>', output: 'ap_fixed<12,4>'}}}}\n\
training:\n  rule: dfa\n  buffer: 16\n  iterations: 200\n  lr_shift: 14\n  step_rounding: {rounding}\n"
        )
    };
    // Target y = 1.0 * x0 - 0.5 * x1 (exact 4-bit weights 4 and -2 in
    // codes of 2^-2), from weights 0; inputs on a 2^-6 grid in [-1, 1).
    let mut seed = 99u64;
    let mut draw = || {
        seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        ((seed >> 33) % 128) as i128 - 64
    };
    let xs: Vec<Vec<i128>> = (0..16).map(|_| vec![draw(), draw()]).collect();
    let mut results = Vec::new();
    for rounding in ["nearest", "stochastic"] {
        let m = parse(&text(rounding));
        let t = m.training.clone().expect("training");
        let params = Params { layers: vec![LayerParams { tensors: vec![vec![0, 0], vec![0]] }] };
        // Targets in output codes (F_y = 8): y = x0 - x1 / 2, inputs F_x = 6.
        let ys: Vec<Vec<i128>> = xs.iter().map(|x| vec![4 * x[0] - 2 * x[1]]).collect();
        let buffer = Buffer::new(&m, xs.clone(), ys).expect("buffer");
        let mut tr = FeedbackTrainer::new(Network::new(m, params).expect("valid"), t, buffer).expect("trainer");
        tr.run(200, &mut |_| {});
        results.push(tr.params().layers[0].tensors[0].clone());
    }
    assert_eq!(results[0], vec![0, 0], "to nearest, no weight step reaches half a code");
    assert_eq!(results[1], vec![4, -2], "stochastic steps reach the target's weights");
}
