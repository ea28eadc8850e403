//! Co-simulation of random int8 networks (issue 15): an optional
//! `requantize` of the input, then one or two `dense_int8` layers with
//! random sizes, folding (`pe`, `simd`, including ones that do not divide),
//! zero points, scales (per channel or per tensor), fused activations and
//! roundings, and random int8 weights and int32 biases. Each must be
//! bit-exact with the simulator (whose int8 arithmetic equals LiteRT's
//! reference kernels: `sim/tests/litert_int8.rs`), with the measured
//! initiation interval and latency equal to the plan's. And the feedback
//! rules' on-chip training of random int8 networks of two trainable
//! dense_int8 layers (docs/training.md, "dense_int8 layers"), bit for bit.
//! Needs Verilator: the tests fail (they do not skip) without it.

use fptgen_flow::cosim;
use fptgen_generator::output::write_dir;
use fptgen_generator::plan::plan;
use fptgen_generator::render::{render, GenInfo};
use fptgen_sim::model;
use fptgen_sim::network::Network;
use fptgen_sim::weights::{LayerParams, Params};
use proptest::prelude::*;
use proptest::test_runner::{Config, RngAlgorithm, TestCaseError, TestRng, TestRunner};

/// An affine quantization: a scale (a power of two times a random
/// mantissa) and a zero point.
fn affine() -> impl Strategy<Value = (f32, i32)> {
    (1u32..=0x7f_ffff, -9i32..=-3, -128i32..=127).prop_map(|(m, e, z)| (f32::from_bits(m | 0x3f80_0000) * 2f32.powi(e), z))
}

/// One dense_int8 layer: outputs, pe, simd, activation, rounding, output
/// quantization, per-channel scales or not, a seed for its parameters.
#[allow(clippy::type_complexity)]
fn layer() -> impl Strategy<Value = (usize, usize, usize, &'static str, &'static str, (f32, i32), bool, u64)> {
    (
        1usize..=12,
        1usize..=12,
        1usize..=16,
        prop::sample::select(vec!["linear", "relu", "relu6"]),
        prop::sample::select(vec!["single", "double"]),
        affine(),
        any::<bool>(),
        any::<u64>(),
    )
}

fn q((s, z): (f32, i32)) -> String {
    format!("{{scale: {s:?}, zero_point: {z}}}")
}

/// A small linear congruential generator for the parameters.
fn draw(state: &mut u64, lo: i128, hi: i128) -> i128 {
    *state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
    lo + i128::from(*state >> 33) % (hi - lo + 1)
}

type Layer = (usize, usize, usize, &'static str, &'static str, (f32, i32), bool, u64);

/// The model file (without a `training:` section) and the parameters of a
/// random int8 network, each dense_int8 layer's `trainable:` list being
/// `trainable`, the biases drawn in `-bias_max..=bias_max`.
fn network(
    inputs: usize,
    interface: (f32, i32),
    requant: Option<((f32, i32), &'static str)>,
    layers: &[Layer],
    trainable: &str,
    bias_max: i128,
) -> (String, Params) {
    let mut yaml = format!("name: r8\ninput: {{shape: [{inputs}], format: 'ap_fixed<8,8>'}}\nweights: w.npz\ninterface: {}\nlayers:\n", q(interface));
    let mut feed = interface;
    if let Some((out, rounding)) = requant {
        yaml += &format!("  - name: rq\n    type: requantize\n    rounding: {rounding}\n    quantization: {{input: {}, output: {}}}\n", q(feed), q(out));
        feed = out;
    }
    let mut n_in = inputs;
    let mut params = Params { layers: Vec::new() };
    if requant.is_some() {
        params.layers.push(LayerParams { tensors: Vec::new() });
    }
    for (k, &(outputs, pe, simd, act, rounding, out, per_channel, pseed)) in layers.iter().enumerate() {
        let (pe, simd) = (pe.min(outputs), simd.min(n_in));
        let mut st = pseed;
        let scales: Vec<String> = (0..if per_channel { outputs } else { 1 })
            .map(|_| format!("{:?}", f32::from_bits(0x3f80_0000 | draw(&mut st, 1, 0x7f_ffff) as u32) * 2f32.powi(-7)))
            .collect();
        yaml += &format!(
            "  - name: fc{k}\n    type: dense_int8\n    inputs: {n_in}\n    outputs: {outputs}\n    activation: {act}\n    rounding: {rounding}\n    pe: {pe}\n    simd: {simd}\n    trainable: [{trainable}]\n    quantization:\n      input: {}\n      output: {}\n      weight_scales: [{}]\n",
            q(feed),
            q(out),
            scales.join(", ")
        );
        // Weights -127..127, biases small enough that no int32 partial sum overflows.
        let w: Vec<i128> = (0..outputs * n_in).map(|_| draw(&mut st, -127, 127)).collect();
        let b: Vec<i128> = (0..outputs).map(|_| draw(&mut st, -bias_max, bias_max)).collect();
        params.layers.push(LayerParams { tensors: vec![w, b] });
        feed = out;
        n_in = outputs;
    }
    (yaml, params)
}

fn check(inputs: usize, interface: (f32, i32), requant: Option<((f32, i32), &'static str)>, layers: &[Layer], seed: u64) -> Result<(), TestCaseError> {
    let (yaml, params) = network(inputs, interface, requant, layers, "weights", 40_000);
    let dir = tempfile::tempdir().map_err(|e| TestCaseError::fail(e.to_string()))?;
    let m = model::parse(&yaml, &dir.path().join("model.yaml")).map_err(|e| TestCaseError::fail(format!("{e}\n{yaml}")))?;
    let n = plan(&m);
    let gen = GenInfo { version: fptgen_generator::VERSION, source: "random".into() };
    let files = render(&params, &n, &gen).map_err(|e| TestCaseError::fail(e.to_string()))?;
    let out = dir.path().join("out");
    write_dir(&out, fptgen_generator::output::DESIGN, &files).map_err(|e| TestCaseError::fail(e.to_string()))?;
    let net = Network::new(m, params).map_err(|e| TestCaseError::fail(format!("{e}\n{yaml}")))?;
    let r = cosim::run(&out, &n, &net, 200, seed, None).map_err(|e| TestCaseError::fail(format!("{e}\n{yaml}")))?;
    prop_assert!(r.passed(), "{}\n{:?}\n{yaml}", r.summary(), r.first_mismatch);
    Ok(())
}

#[test]
fn random_int8_networks_are_bit_exact_with_predicted_cycles() {
    cosim::require_tool("verilator").unwrap_or_else(|e| panic!("{e}"));
    let mut runner = TestRunner::new_with_rng(
        Config { cases: 4, failure_persistence: None, ..Config::default() },
        TestRng::from_seed(RngAlgorithm::ChaCha, &[8; 32]),
    );
    let requant = prop::option::of((affine(), prop::sample::select(vec!["single", "double"])));
    let strat = (1usize..=40, affine(), requant, prop::collection::vec(layer(), 1..=2), any::<u64>());
    runner
        .run(&strat, |(inputs, interface, requant, layers, seed)| check(inputs, interface, requant, &layers, seed))
        .unwrap_or_else(|e| panic!("{e}"));
}

/// The feedback rules on random int8 networks: two trainable dense_int8
/// layers (weights and biases; the first hidden, the second the output
/// layer, linear) with random sizes, folding, zero points, scales, hidden activations and
/// roundings, an optional requantize before them, a random buffer size,
/// lr_shift and seed, under dfa, drtp and sgm (seeded random modules).
/// Every delta, every parameter written, every answer to an injected
/// request, every iteration's cycle count and the final memories must equal
/// the simulator's `FeedbackTrainer` (`cosim_train::run_train`); on these
/// fixed seeds both layers get nonzero deltas and change parameters.
#[test]
fn random_int8_networks_train_bit_exact_with_the_feedback_rules() {
    use fptgen_flow::cosim_train::{run_train, TrainCosimOptions};
    cosim::require_tool("verilator").unwrap_or_else(|e| panic!("{e}"));
    let requant = prop::option::of((affine(), prop::sample::select(vec!["single", "double"])));
    let strat = (1usize..=24, affine(), requant, layer(), layer(), 1usize..=4, 0i32..=6, any::<u64>());
    // Each rule with one hidden activation (f' of FP_MODE 2, 1 and 0).
    for (rule, rng_seed, act) in [("dfa", 21u8, "relu6"), ("drtp", 22, "relu"), ("sgm", 23, "linear")] {
        let mut runner = TestRunner::new_with_rng(
            Config { cases: 1, max_shrink_iters: 0, failure_persistence: None, ..Config::default() },
            TestRng::from_seed(RngAlgorithm::ChaCha, &[rng_seed; 32]),
        );
        runner
            .run(&strat, |(inputs, interface, requant, mut hidden, mut output, buffer, lr_shift, seed)| {
                hidden.3 = act;
                // A linear head (a clamped output has f' = 0), small biases
                // (fewer hidden outputs stuck at a clamp).
                output.3 = "linear";
                let (mut yaml, params) = network(inputs, interface, requant, &[hidden, output], "weights, biases", 2_000);
                let sgm = if rule == "sgm" { "  sgm: sgm.npz\n" } else { "" };
                yaml += &format!("training:\n  rule: {rule}\n{sgm}  buffer: {buffer}\n  lr_shift: {lr_shift}\n  seed: {seed}\n");
                let fail = |e: String| TestCaseError::fail(format!("{e}\n{yaml}"));
                let dir = tempfile::tempdir().map_err(|e| fail(e.to_string()))?;
                let m = model::parse(&yaml, &dir.path().join("model.yaml")).map_err(|e| fail(e.to_string()))?;
                let mut n = plan(&m);
                prop_assert!(n.feedback.is_some(), "no feedback trainer planned\n{yaml}");
                if let Some(p) = &m.sgm_path {
                    let modules = fptgen_sim::train::sgm::random(&m, seed ^ 0x5a);
                    prop_assert_eq!(modules.modules.len(), 1, "the hidden layer has a module");
                    fptgen_sim::train::sgm::save(&m, &modules, p, &[]).map_err(|e| fail(e.to_string()))?;
                    fptgen_generator::design::load_sgm(&m, &mut n).map_err(|e| fail(e.to_string()))?;
                }
                let gen = GenInfo { version: fptgen_generator::VERSION, source: "random".into() };
                let files = render(&params, &n, &gen).map_err(|e| fail(e.to_string()))?;
                let out = dir.path().join("out");
                write_dir(&out, fptgen_generator::output::DESIGN, &files).map_err(|e| fail(e.to_string()))?;
                let net = Network::new(m, params).map_err(|e| fail(e.to_string()))?;
                let opts = TrainCosimOptions { iterations: 2, interrupt_permille: 20, seed };
                let r = run_train(&out, &n, &net, opts).map_err(|e| fail(e.to_string()))?;
                eprintln!("{rule}: {} | per layer (name, nonzero deltas, parameters changed) {:?}", r.summary(), r.trained_layers);
                prop_assert!(r.answers > 0 && r.losses > 0, "nothing was checked: {}\n{yaml}", r.summary());
                // Both layers trained: the hidden one and the output one.
                let names: Vec<&str> = r.trained_layers.iter().map(|l| l.0.as_str()).collect();
                prop_assert_eq!(names, vec!["fc0", "fc1"]);
                for (name, deltas, changed) in &r.trained_layers {
                    prop_assert!(*deltas > 0 && *changed > 0, "{rule}: layer {name} did not train ({deltas} nonzero deltas, {changed} parameters changed)\n{yaml}");
                }
                if rule == "sgm" {
                    prop_assert!(r.synthetic > 0, "no nonzero delta came from the module\n{yaml}");
                }
                Ok(())
            })
            .unwrap_or_else(|e| panic!("{rule}: {e}"));
    }
}
