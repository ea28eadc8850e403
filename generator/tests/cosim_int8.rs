//! Co-simulation of random int8 networks (issue 15): an optional
//! `requantize` of the input, then one or two `dense_int8` layers with
//! random sizes, folding (`pe`, `simd`, including ones that do not divide),
//! zero points, scales (per channel or per tensor), fused activations and
//! roundings, and random int8 weights and int32 biases. Each must be
//! bit-exact with the simulator (whose int8 arithmetic equals LiteRT's
//! reference kernels: `sim/tests/litert_int8.rs`), with the measured
//! initiation interval and latency equal to the plan's. Needs Verilator:
//! the test fails (it does not skip) without it.

use fptgen_generator::cosim;
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

#[allow(clippy::type_complexity)]
fn check(
    inputs: usize,
    interface: (f32, i32),
    requant: Option<((f32, i32), &'static str)>,
    layers: &[(usize, usize, usize, &'static str, &'static str, (f32, i32), bool, u64)],
    seed: u64,
) -> Result<(), TestCaseError> {
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
            "  - name: fc{k}\n    type: dense_int8\n    inputs: {n_in}\n    outputs: {outputs}\n    activation: {act}\n    rounding: {rounding}\n    pe: {pe}\n    simd: {simd}\n    trainable: [weights]\n    quantization:\n      input: {}\n      output: {}\n      weight_scales: [{}]\n",
            q(feed),
            q(out),
            scales.join(", ")
        );
        // Weights -127..127, biases small enough that no int32 partial sum overflows.
        let w: Vec<i128> = (0..outputs * n_in).map(|_| draw(&mut st, -127, 127)).collect();
        let b: Vec<i128> = (0..outputs).map(|_| draw(&mut st, -40_000, 40_000)).collect();
        params.layers.push(LayerParams { tensors: vec![w, b] });
        feed = out;
        n_in = outputs;
    }
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
