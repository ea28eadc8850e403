//! The simulator's fast path (an integer dot product when every product fits
//! the accumulator exactly) gives the same bits as the reference definition
//! of a neuron (`dense_neuron_reference`: every product cast and every sum
//! cast, in input order), for random layers where the fast path applies and
//! where it does not.

use std::path::Path;

use fptgen_sim::model;
use fptgen_sim::network::{dense_neuron, dense_neuron_reference};
use fptgen_sim::weights::LayerParams;
use proptest::prelude::*;
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};

const QUANT: [&str; 7] = ["AP_RND", "AP_RND_ZERO", "AP_RND_MIN_INF", "AP_RND_INF", "AP_RND_CONV", "AP_TRN", "AP_TRN_ZERO"];
const OVF: [&str; 4] = ["AP_SAT", "AP_SAT_ZERO", "AP_SAT_SYM", "AP_WRAP"];

fn format(min_w: u32, max_w: u32, int: std::ops::RangeInclusive<i32>) -> impl Strategy<Value = String> {
    (any::<bool>(), min_w..=max_w, int, 0..QUANT.len(), 0..OVF.len())
        .prop_map(|(s, w, i, q, o)| format!("{}<{w},{i},{},{}>", if s { "ap_fixed" } else { "ap_ufixed" }, QUANT[q], OVF[o]))
}

#[test]
fn fast_path_equals_the_reference() {
    let mut runner = TestRunner::new_with_rng(
        Config { cases: 400, ..Config::default() },
        TestRng::from_seed(RngAlgorithm::ChaCha, &[3; 32]),
    );
    // Wide accumulators (the fast path applies) and narrow ones (it does not).
    let strat = (
        format(1, 12, -2..=6),
        format(1, 10, -2..=4),
        format(1, 10, -2..=6),
        prop_oneof![format(20, 48, 8..=24), format(2, 12, -2..=6)],
        format(1, 16, -2..=8),
        1usize..40,
        any::<bool>(),
        (any::<u64>(), any::<bool>()),
    );
    runner
        .run(&strat, |(xf, wf, bf, af, yf, n_in, relu, (seed, out_is_accum))| {
            // Half of the cases output the accumulator itself, so an error in
            // its last bit cannot hide behind a coarser output format.
            let yf = if out_is_accum { af.clone() } else { yf };
            let text = format!(
                "name: t\ninput: {{shape: [{n_in}], format: '{xf}'}}\nweights: w.npz\nlayers:\n  - name: l\n    type: dense\n    inputs: {n_in}\n    outputs: 1\n    activation: {}\n    precision: {{weight: '{wf}', bias: '{bf}', accum: '{af}', output: '{yf}'}}\n",
                if relu { "relu" } else { "linear" }
            );
            let m = model::parse(&text, Path::new("t.yaml")).map_err(|e| TestCaseError::fail(e.to_string()))?;
            let layer = &m.layers[0];
            let d = layer.dense();
            let mut s = seed;
            let mut draw = |f: fptgen_sim::fixed::Format| {
                s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                // Extremes half of the time, so saturation and wrap-around happen.
                match (s >> 60) % 4 {
                    0 => f.min_raw(),
                    1 => f.max_raw(),
                    _ => f.min_raw() + ((s >> 8) as i128).rem_euclid(f.max_raw() - f.min_raw() + 1),
                }
            };
            let p = LayerParams {
                weights: (0..n_in).map(|_| draw(d.precision.weight)).collect(),
                biases: vec![draw(d.precision.bias)],
            };
            let x: Vec<i128> = (0..n_in).map(|_| draw(layer.input_format)).collect();
            prop_assert_eq!(
                dense_neuron(d, layer.input_format, &p, &x, 0),
                dense_neuron_reference(d, layer.input_format, &p, &x, 0),
                "{}",
                text
            );
            Ok(())
        })
        .unwrap_or_else(|e| panic!("{e}"));
}
