//! The bit-exact feedback trainer against its float reference
//! (`fptgen_sim::train::feedback_float`, the rules in `f64` with nothing
//! quantized): on a network whose formats are wide enough that rounding is
//! negligible, every rule moves every parameter as the reference does, to
//! within a thousandth of the parameter's total movement. The two share
//! only the definitions of B and of the modules' codes: the fixed-point
//! trainer rounds raw codes with shifts, the reference multiplies reals.

use std::path::Path;

use fptgen_sim::model::{self, Rule, Training};
use fptgen_sim::network::Network;
use fptgen_sim::reference::real_params;
use fptgen_sim::train::feedback_float::FloatFeedbackTrainer;
use fptgen_sim::train::{sgm, Buffer, FeedbackTrainer};
use rand::{Rng, SeedableRng};

const WIDE_NET: &str = "name: t\ninput: {shape: [5], format: 'ap_fixed<16,4>'}\nweights: w.npz\nlayers:\n\
  - {name: h1, type: dense, inputs: 5, outputs: 6, activation: relu, trainable: [weights, biases],\n\
     precision: {weight: 'ap_fixed<32,6>', bias: 'ap_fixed<32,6>', accum: 'ap_fixed<64,16>', output: 'ap_fixed<32,10>'}}\n\
  - {name: h2, type: dense, inputs: 6, outputs: 4, activation: linear, trainable: [weights, biases],\n\
     precision: {weight: 'ap_fixed<32,6>', bias: 'ap_fixed<32,6>', accum: 'ap_fixed<64,16>', output: 'ap_fixed<32,10>'}}\n\
  - {name: o, type: dense, inputs: 4, outputs: 3, activation: linear, trainable: [weights, biases],\n\
     precision: {weight: 'ap_fixed<32,6>', bias: 'ap_fixed<32,6>', accum: 'ap_fixed<64,16>', output: 'ap_fixed<32,10>'}}\n";

/// A convolution (3x3x2 -> 3x3x2, relu, same padding) under a dense
/// output layer, as wide.
const WIDE_CONV_NET: &str = "name: t\ninput: {shape: [3, 3, 2], format: 'ap_fixed<16,4>'}\nweights: w.npz\nlayers:\n\
  - {name: c, type: conv2d, filters: 2, padding: same, activation: relu, trainable: [weights, biases],\n\
     precision: {weight: 'ap_fixed<32,6>', bias: 'ap_fixed<32,6>', accum: 'ap_fixed<64,16>', output: 'ap_fixed<32,10>'}}\n\
  - {name: f, type: flatten}\n\
  - {name: o, type: dense, inputs: 18, outputs: 3, activation: linear, trainable: [weights, biases],\n\
     precision: {weight: 'ap_fixed<32,6>', bias: 'ap_fixed<32,6>', accum: 'ap_fixed<64,16>', output: 'ap_fixed<32,10>'}}\n";

#[test]
fn every_rule_follows_its_float_reference() {
    follows(WIDE_NET, 5);
}

/// The same with a trainable convolution (its steps summed over the
/// pixels and divided by 2^ceil(log2 9) in both).
#[test]
fn every_rule_follows_its_float_reference_on_a_convolution() {
    follows(WIDE_CONV_NET, 18);
}

fn follows(net: &str, inputs: usize) {
    let m = model::parse(&format!("{net}training: {{rule: sgm, sgm: s.npz}}\n"), Path::new("t.yaml")).expect("model");
    let params = fptgen_sim::weights::random(&m, 11);
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(4);
    let one = 1i128 << 22; // 1.0 in ap_fixed<32,10>
    let sample = |rng: &mut rand_chacha::ChaCha8Rng| -> (Vec<i128>, Vec<i128>) {
        let k = rng.random_range(0..3);
        ((0..inputs).map(|_| rng.random_range(-4096..4096)).collect(), (0..3).map(|o| if o == k { one } else { 0 }).collect())
    };
    let fit: Vec<_> = (0..300).map(|_| sample(&mut rng)).collect();
    let (modules, _) = sgm::fit(&m, &params, &fit, 1e-6, 1).expect("fit");
    let (xs, ts): (Vec<_>, Vec<_>) = (0..8).map(|_| sample(&mut rng)).unzip();
    let buffer = Buffer::new(&m, xs, ts).expect("buffer");
    for rule in [Rule::Dfa, Rule::Drtp, Rule::Sgm] {
        // Real step 2^(F_y - s) = 2^(22 - 30).
        let training = Training { rule, lr_shift: 30, buffer: 8, iterations: 5, ..Training::default() };
        let net = Network::new(m.clone(), params.clone()).expect("net");
        let mut float = FloatFeedbackTrainer::new(&net, training, &buffer, Some(&modules)).expect("float");
        let mut fixed = FeedbackTrainer::with_sgm(net, training, buffer.clone(), Some(&modules)).expect("fixed");
        float.run(5);
        fixed.run(5, &mut |_| {});
        let start = real_params(&m, &params);
        let end = real_params(&m, fixed.params());
        let mut moved = 0.0f64;
        let mut worst = 0.0f64;
        for (l, layer) in start.iter().enumerate() {
            for (t, tensor) in layer.iter().enumerate() {
                for (i, &w0) in tensor.iter().enumerate() {
                    let (wr, wx) = (float.params()[l][t][i], end[l][t][i]);
                    moved = moved.max((wr - w0).abs());
                    worst = worst.max((wr - wx).abs() / (wr - w0).abs().max(1e-3));
                }
            }
        }
        assert!(moved > 1e-2, "{rule:?}: the reference barely moved ({moved})");
        assert!(worst < 1e-3, "{rule:?}: the fixed-point trainer is {worst} of a movement away from its float reference");
    }
}
