//! The feedback rules on `dense_int8` layers (`docs/training.md`,
//! "dense_int8 layers"): a step worked by hand on a two-layer int8 network
//! with zero points, a relu that clips and per-channel weight scales; the
//! f' of relu6; the shifts of scales that are not powers of two; the
//! automatic lr_shift of an int8 output.

use std::path::Path;

use fptgen_sim::model::{self, Model, Rule, Training};
use fptgen_sim::network::Network;
use fptgen_sim::train::feedback::{feedback_layers, feedback_matrix, Derivative};
use fptgen_sim::train::{Buffer, FeedbackTrainer};
use fptgen_sim::weights::{LayerParams, Params};

fn parse(text: &str) -> Model {
    model::parse(text, Path::new("t.yaml")).unwrap_or_else(|e| panic!("{e}\n{text}"))
}

fn training(rule: Rule, lr_shift: i32, seed: u64) -> Training {
    Training { rule, lr_shift, buffer: 1, iterations: 1, seed, ..Training::default() }
}

/// Hidden `h`: 2 -> 2, relu, input scale 0.5 and zero point 3, weight
/// scales 0.25 and 0.125 (per channel), output scale 0.125 and zero point
/// -10, so its multipliers are exactly 1 and 0.5 and its relu clamps codes
/// below -10. Output `o`: 2 -> 2, linear, weight scale 1, output scale
/// 0.125 and zero point 2 (multiplier 1).
const NET: &str = "name: t\ninput: {shape: [2], format: 'ap_fixed<8,8>'}\nweights: w.npz\ninterface: {scale: 0.5, zero_point: 3}\nlayers:\n\
  - {name: h, type: dense_int8, inputs: 2, outputs: 2, activation: relu, trainable: [weights, biases],\n\
     quantization: {input: {scale: 0.5, zero_point: 3}, output: {scale: 0.125, zero_point: -10}, weight_scales: [0.25, 0.125]}}\n\
  - {name: o, type: dense_int8, inputs: 2, outputs: 2, activation: linear, trainable: [weights, biases],\n\
     quantization: {input: {scale: 0.125, zero_point: -10}, output: {scale: 0.125, zero_point: 2}, weight_scales: [1.0]}}\n";

/// One step by hand, with s = lr_shift = 2.
///
/// Forward, x = (7, -1), x - 3 = (4, -4):
/// h: acc = (2*4 + 1*(-4) + 6, -3*4 + 1*(-4) - 14) = (10, -30); times the
/// multipliers (1, 0.5): (10, -15); plus -10: a = (0, -25), clamped to
/// act_min = -10: a = (0, -10). f' = (0 > -10, -10 > -10) = (1, 0).
/// o: a + 10 = (10, 0); acc = (10 + 0 + 3, -10 + 0 - 4) = (13, -14);
/// y = (15, -12). Target t = (5, -2): e = (10, -10), k* = 0.
///
/// Shifts: h: s_x = 0.5, s_w = 0.25 (the largest channel scale):
/// shift_w = 2 - log2(2) = 1, shift_b = 2 + log2(0.125) = -1. o: s_x =
/// 0.125, s_w = 1: shift_w = 2 - log2(0.125) = 5, shift_b = 2 - 3 = -1.
///
/// Updates of o (delta = e): w[0] -= R(10 * (10, 0), 5) = (3, 0),
/// w[1] -= R(-10 * (10, 0), 5) = (-3, 0); b -= (10, -10) * 2.
/// Updates of h: row 1 is skipped (delta 0); row 0 with g = delta[0]:
/// w[0] -= R(g * (4, -4), 1) = (2g, -2g); b[0] -= 2g.
#[test]
fn a_step_worked_by_hand() {
    let m = parse(NET);
    let params = Params {
        layers: vec![
            LayerParams { tensors: vec![vec![2, 1, -3, 1], vec![6, -14]] },
            LayerParams { tensors: vec![vec![1, 2, -1, 1], vec![3, -4]] },
        ],
    };
    let net = Network::new(m.clone(), params.clone()).expect("valid");
    let outs = m.forward_all(net.params(), &[7, -1]);
    assert_eq!(outs, vec![vec![0, -10], vec![15, -12]], "the forward pass worked by hand");
    let buffer = Buffer::new(&m, vec![vec![7, -1]], vec![vec![5, -2]]).expect("buffer");
    let e = [10i128, -10];
    let mut nonzero = 0;
    for (rule, seed) in [(Rule::Dfa, 1u64), (Rule::Dfa, 2), (Rule::Dfa, 3), (Rule::Drtp, 1), (Rule::Drtp, 4)] {
        let b = feedback_matrix(seed, 0, 2, 2);
        let b = |o: usize, k: usize| i128::from(b[o * 2 + k]);
        let g = match rule {
            Rule::Dfa => b(0, 0) * e[0] + b(0, 1) * e[1],
            _ => -b(0, 0),
        };
        nonzero += usize::from(g != 0);
        let tr = training(rule, 2, seed);
        let specs = feedback_layers(&m, &tr).expect("dense_int8 layers train under a feedback rule");
        let shifts: Vec<(i32, i32, i128)> = specs.iter().map(|l| (l.shift_w, l.shift_b, l.x_offset)).collect();
        assert_eq!(shifts, vec![(1, -1, 3), (5, -1, -10)], "{rule:?}");
        assert_eq!(specs[0].derivative, Derivative::Above(-10));
        assert_eq!(specs[1].derivative, Derivative::Always);

        let mut trainer = FeedbackTrainer::new(Network::new(m.clone(), params.clone()).expect("valid"), tr, buffer.clone()).expect("trainer");
        let mut records = Vec::new();
        trainer.run(1, &mut |r| records.push(r.clone()));
        assert_eq!(records[0].deltas, vec![(0, vec![g, 0]), (1, vec![10, -10])], "{rule:?} seed {seed}");
        let p = trainer.params();
        assert_eq!(p.layers[1].tensors[0], vec![1 - 3, 2, -1 + 3, 1], "{rule:?}");
        assert_eq!(p.layers[1].tensors[1], vec![3 - 20, -4 + 20], "{rule:?}");
        assert_eq!(p.layers[0].tensors[0], vec![2 - 2 * g, 1 + 2 * g, -3, 1], "{rule:?} g {g}");
        assert_eq!(p.layers[0].tensors[1], vec![6 - 2 * g, -14], "{rule:?} g {g}");
    }
    assert!(nonzero >= 3, "the seeds give the hidden row no delta");
}

/// The weights clamp to -127..127: a large delta saturates them.
#[test]
fn weights_clamp_to_the_symmetric_int8_range() {
    let m = parse(NET);
    let params = Params {
        layers: vec![
            LayerParams { tensors: vec![vec![2, 1, -3, 1], vec![6, -14]] },
            LayerParams { tensors: vec![vec![120, 2, -120, 1], vec![3, -4]] },
        ],
    };
    // x = (7, -1) as above, so a = (0, -10), a - z = (10, 0); y[0] = 120 *
    // 10 + 3 + 2 = 1205 clamps to 127, y[1] = -1200 - 4 + 2 clamps to -128.
    // Targets (-128, 127): e = (255, -255); with s = 0 the output layer's
    // shift_w is 3: R(2550, 3) = 319 and R(-2550, 3) = -319.
    let buffer = Buffer::new(&m, vec![vec![7, -1]], vec![vec![-128, 127]]).expect("buffer");
    let mut trainer = FeedbackTrainer::new(Network::new(m, params).expect("valid"), training(Rule::Dfa, 0, 1), buffer).expect("trainer");
    let mut records = Vec::new();
    trainer.run(1, &mut |r| records.push(r.clone()));
    assert_eq!(records[0].deltas[1], (1, vec![255, -255]));
    // 120 - 319 = -199 and -120 + 319 = 199 clamp to -127 and 127.
    assert_eq!(trainer.params().layers[1].tensors[0], vec![-127, 2, 127, 1]);
}

/// relu6's f' is act_min < a < act_max; the shifts round log2 of scales
/// that are not powers of two to the nearest integer.
#[test]
fn relu6_and_scales_that_are_not_powers_of_two() {
    let text = "name: t\ninput: {shape: [3], format: 'ap_fixed<8,8>'}\nweights: w.npz\ninterface: {scale: 0.02, zero_point: -5}\nlayers:\n\
      - {name: h, type: dense_int8, inputs: 3, outputs: 2, activation: relu6, trainable: [weights],\n\
         quantization: {input: {scale: 0.02, zero_point: -5}, output: {scale: 0.125, zero_point: -10}, weight_scales: [0.003, 0.0021]}}\n\
      - {name: o, type: dense_int8, inputs: 2, outputs: 2, activation: linear, trainable: [biases],\n\
         quantization: {input: {scale: 0.125, zero_point: -10}, output: {scale: 0.135, zero_point: 0}, weight_scales: [0.7]}}\n";
    let m = parse(text);
    let specs = feedback_layers(&m, &training(Rule::Drtp, 10, 1)).expect("layers");
    // relu6 on scale 0.125, zero point -10: codes -10 ..= -10 + 6 / 0.125 = 38.
    assert_eq!(specs[0].derivative, Derivative::Between(-10, 38));
    // h: log2(0.02 / 0.003) = 2.74 -> 3, log2(0.02 * 0.003) = -14.02 -> -14.
    // o: log2(0.125 / 0.7) = -2.49 -> -2, log2(0.125 * 0.7) = -3.51 -> -4.
    let got: Vec<_> = specs.iter().map(|l| (l.shift_w, l.shift_b, l.x_offset, l.train_w.is_some(), l.train_b.is_some())).collect();
    assert_eq!(got, vec![(10 - 3, 10 - 14, -5, true, false), (10 + 2, 10 - 4, -10, false, true)]);
    // The bias range keeps int32 sums exact: 2^31 - 1 - 127 * inputs *
    // max |a - z| = 2^31 - 1 - 127 * 2 * max(|-128 + 10|, |127 + 10|).
    assert_eq!(specs[1].train_b, Some((-(2_147_483_647 - 127 * 2 * 137), 2_147_483_647 - 127 * 2 * 137)));
}

/// Without `lr_shift`, a feedback rule on an int8 output layer takes
/// 16 + F_y with F_y = -round(log2(s_y)): 0.135 -> 3 (log2 = -2.89),
/// 0.125 -> 3, 0.04 -> 5 (log2 = -4.64), 3.0 -> -2 (log2 = 1.58).
#[test]
fn the_automatic_step_of_an_int8_output() {
    for (scale, want) in [(0.135, 19), (0.125, 19), (0.04, 21), (3.0, 14)] {
        let text = format!(
            "name: t\ninput: {{shape: [2], format: 'ap_fixed<8,8>'}}\nweights: w.npz\ninterface: {{scale: 0.5, zero_point: 0}}\nlayers:\n\
          - {{name: o, type: dense_int8, inputs: 2, outputs: 2, trainable: [weights],\n\
             quantization: {{input: {{scale: 0.5, zero_point: 0}}, output: {{scale: {scale}, zero_point: 0}}, weight_scales: [0.01]}}}}\n\
          training: {{rule: dfa, buffer: 2}}\n"
        );
        let m = parse(&text);
        let t = m.training.expect("training");
        assert!(t.lr_shift_auto);
        assert_eq!(t.lr_shift, want, "output scale {scale}");
    }
}

/// SGM's fit backpropagates through a later dense_int8 layer in codes:
/// with the step's network, y = (15, -12), t = (5, -2), e = (10, -10), the
/// output layer linear with multiplier s_x s_w / s_y = 0.125 * 1 / 0.125 =
/// 1: the gradient at h's output is W_o^T e = (1*10 - 1*(-10), 2*10 +
/// 1*(-10)) = (20, 10); and modules fit on a few samples.
#[test]
fn sgm_fits_through_a_dense_int8_layer() {
    let m = parse(NET);
    let params = Params {
        layers: vec![
            LayerParams { tensors: vec![vec![2, 1, -3, 1], vec![6, -14]] },
            LayerParams { tensors: vec![vec![1, 2, -1, 1], vec![3, -4]] },
        ],
    };
    let outs = m.forward_all(&params, &[7, -1]);
    let g = fptgen_sim::train::sgm::true_gradient(&m, &params, &[7, -1], &outs, &[5, -2], 0);
    assert_eq!(g, vec![20.0, 10.0]);
    let shapes = fptgen_sim::train::sgm::module_shapes(&m);
    assert_eq!(shapes.iter().map(|s| (s.layer, s.outputs, s.classes, s.shift_a, s.shift_t, s.h_bits)).collect::<Vec<_>>(), vec![(0, 2, 2, 0, 0, 10)]);
    let samples: Vec<(Vec<i128>, Vec<i128>)> = (0..8).map(|i| (vec![i * 5 - 20, 30 - i * 7], vec![i - 4, 3 - i])).collect();
    let (sgm, reports) = fptgen_sim::train::sgm::fit(&m, &params, &samples, 1e-6, 1).expect("fit");
    assert_eq!((sgm.modules.len(), reports.len()), (1, 1));
}
