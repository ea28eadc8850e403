//! The bit-accurate simulator against hand-worked cases and against the
//! independent float reference path.

use std::path::Path;

use fptgen_sim::fixed::Format;
use fptgen_sim::model::{self, Model};
use fptgen_sim::network::Network;
use fptgen_sim::reference;
use fptgen_sim::weights::{LayerParams, Params};
use proptest::prelude::*;
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};

fn parse(text: &str) -> Model {
    model::parse(text, Path::new("test.yaml")).unwrap_or_else(|e| panic!("{e}"))
}

#[allow(clippy::too_many_arguments)]
fn one_layer(input: &str, weight: &str, bias: &str, accum: &str, output: &str, act: &str, n_in: usize, n_out: usize) -> Model {
    parse(&format!(
        "name: t\ninput: {{shape: [{n_in}], format: '{input}'}}\nweights: w.npz\nlayers:\n  - name: l\n    type: dense\n    inputs: {n_in}\n    outputs: {n_out}\n    activation: {act}\n    precision: {{weight: '{weight}', bias: '{bias}', accum: '{accum}', output: '{output}'}}\n"
    ))
}

fn f(s: &str) -> Format {
    s.parse().unwrap_or_else(|e| panic!("{s}: {e}"))
}

#[test]
fn hand_worked_dense_relu() {
    // x = [1.5, -2.0] in ap_fixed<8,4> (raw 24, -32 with F = 4).
    // w = [[0.5, 0.25], [-0.75, 1.0]] in ap_fixed<4,1> (F = 3: raw 4, 2, -6, 8?)
    // 1.0 is not representable in ap_fixed<4,1> (max 0.875), so use 0.875 (raw 7).
    // b = [0.125, -0.5] in ap_fixed<8,4> (raw 2, -8).
    // accum ap_fixed<16,8> (F = 8).
    // o0: 0.125 + 0.5*1.5 + 0.25*(-2.0) = 0.125 + 0.75 - 0.5 = 0.375
    // o1: -0.5 + (-0.75)*1.5 + 0.875*(-2.0) = -0.5 - 1.125 - 1.75 = -3.375 -> relu -> 0
    // output ap_fixed<6,3,AP_TRN> (F = 3): 0.375 = 3/8 -> raw 3; 0 -> raw 0.
    let m = one_layer("ap_fixed<8,4>", "ap_fixed<4,1>", "ap_fixed<8,4>", "ap_fixed<16,8>", "ap_fixed<6,3>", "relu", 2, 2);
    let p = Params { layers: vec![LayerParams { tensors: vec![vec![4, 2, -6, 7], vec![2, -8]] }] };
    let net = Network::new(m, p).expect("valid");
    assert_eq!(net.infer(&[24, -32]).expect("infer"), vec![3, 0]);
}

#[test]
fn hand_worked_linear_with_rounding_and_saturation() {
    // Same as above with linear activation and output ap_fixed<5,2,AP_RND,AP_SAT> (F = 3,
    // range [-2, 1.875]): o0 = 0.375 -> raw 3; o1 = -3.375 saturates to -2 -> raw -16.
    let m = one_layer("ap_fixed<8,4>", "ap_fixed<4,1>", "ap_fixed<8,4>", "ap_fixed<16,8>", "ap_fixed<5,2,AP_RND,AP_SAT>", "linear", 2, 2);
    let p = Params { layers: vec![LayerParams { tensors: vec![vec![4, 2, -6, 7], vec![2, -8]] }] };
    let net = Network::new(m, p).expect("valid");
    assert_eq!(net.infer(&[24, -32]).expect("infer"), vec![3, -16]);
}

#[test]
fn saturating_accumulator_adds_in_input_order() {
    // accum ap_fixed<4,4,AP_TRN,AP_SAT>: integers in [-8, 7]. Bias 0, x = [1, 1, 1],
    // w = [7, 7, -7] as ap_int<4>... use ap_fixed<4,4> weights (integers).
    // In order: 0 + 7 = 7; 7 + 7 = 14 -> saturates to 7; 7 - 7 = 0. Result 0.
    // (Summing exactly first would give 7; the hardware order is the spec.)
    let m = one_layer("ap_fixed<4,4>", "ap_fixed<4,4>", "ap_fixed<4,4>", "ap_fixed<4,4,AP_TRN,AP_SAT>", "ap_fixed<8,8>", "linear", 3, 1);
    let p = Params { layers: vec![LayerParams { tensors: vec![vec![7, 7, -7], vec![0]] }] };
    let net = Network::new(m, p).expect("valid");
    assert_eq!(net.infer(&[1, 1, 1]).expect("infer"), vec![0]);
}

#[test]
fn wrapping_accumulator_wraps_each_step() {
    // accum ap_fixed<4,4> (AP_WRAP): 7 + 7 = 14 wraps to -2; -2 - 7 = -9 wraps to 7.
    // Exact sum 7 also gives 7: wrap-around is associative, the end result agrees.
    // Then with w = [7, 7, 0]: 14 wraps to -2.
    let m = one_layer("ap_fixed<4,4>", "ap_fixed<4,4>", "ap_fixed<4,4>", "ap_fixed<4,4>", "ap_fixed<8,8>", "linear", 3, 1);
    let p = Params { layers: vec![LayerParams { tensors: vec![vec![7, 7, 0], vec![0]] }] };
    let net = Network::new(m, p).expect("valid");
    assert_eq!(net.infer(&[1, 1, 1]).expect("infer"), vec![-2]);
}

#[test]
fn product_is_cast_to_accumulator_with_its_rounding() {
    // x = 0.75 (ap_ufixed<2,0>, raw 3), w = 0.75 (raw 3); product 0.5625.
    // accum ap_fixed<8,4,AP_RND_CONV> has F = 4: 0.5625 = 9/16 exactly -> raw 9.
    // accum ap_fixed<6,4,AP_RND_CONV> has F = 2: 0.5625 = 2.25 quarters -> rounds to 2 (0.5).
    // accum ap_fixed<6,4,AP_RND> : 2.25 -> 2. ap_fixed<6,4,AP_TRN>: 2.
    // With x = 0.25 (raw 1) and w = 0.5 (raw 2): product 0.125 = 0.5 quarter:
    //   AP_RND -> 1 (half up), AP_RND_CONV -> 0 (half to even), AP_TRN -> 0.
    for (accum, x, w, want) in [
        ("ap_fixed<8,4,AP_RND_CONV>", 3, 3, 9),
        ("ap_fixed<6,4,AP_RND_CONV>", 3, 3, 2),
        ("ap_fixed<6,4,AP_RND>", 1, 2, 1),
        ("ap_fixed<6,4,AP_RND_CONV>", 1, 2, 0),
        ("ap_fixed<6,4,AP_TRN>", 1, 2, 0),
    ] {
        let m = one_layer("ap_ufixed<2,0>", "ap_ufixed<2,0>", "ap_fixed<4,4>", accum, "ap_fixed<16,8>", "linear", 1, 1);
        let p = Params { layers: vec![LayerParams { tensors: vec![vec![w], vec![0]] }] };
        let net = Network::new(m, p).expect("valid");
        let acc = f(accum);
        let out = net.infer(&[x]).expect("infer")[0];
        // The output format ap_fixed<16,8> has F = 8, finer than every accum here.
        assert_eq!(out, f("ap_fixed<16,8>").cast_from(want, &acc), "{accum} x={x} w={w}");
        assert_eq!(out, want << (8 - acc.frac_bits()), "{accum}");
    }
}

#[test]
fn rejects_bad_params_and_inputs() {
    let m = one_layer("ap_fixed<8,4>", "ap_fixed<4,1>", "ap_fixed<8,4>", "ap_fixed<16,8>", "ap_fixed<6,3>", "relu", 2, 2);
    let short = Params { layers: vec![LayerParams { tensors: vec![vec![0; 3], vec![0; 2]] }] };
    assert!(Network::new(m.clone(), short).is_err());
    let out_of_range = Params { layers: vec![LayerParams { tensors: vec![vec![0, 0, 8, 0], vec![0; 2]] }] };
    let e = Network::new(m.clone(), out_of_range).expect_err("8 is not a code of ap_fixed<4,1>");
    assert!(e.to_string().contains("weights[2] = 8"), "{e}");
    let net = Network::new(m, Params { layers: vec![LayerParams { tensors: vec![vec![0; 4], vec![0; 2]] }] }).expect("valid");
    assert!(net.infer(&[0]).is_err());
    assert!(net.infer(&[0, 128]).is_err(), "128 is not a code of ap_fixed<8,4>");
}

/// Random format with at most `max_w` bits, any modes.
fn format_strategy(max_w: u32) -> impl Strategy<Value = String> {
    let q = prop::sample::select(vec!["AP_RND", "AP_RND_ZERO", "AP_RND_MIN_INF", "AP_RND_INF", "AP_RND_CONV", "AP_TRN", "AP_TRN_ZERO"]);
    let o = prop::sample::select(vec!["AP_SAT", "AP_SAT_ZERO", "AP_SAT_SYM", "AP_WRAP"]);
    (any::<bool>(), 1..=max_w, -4i32..=12, q, o).prop_map(|(s, w, i, q, o)| {
        format!("{}<{w},{i},{q},{o}>", if s { "ap_fixed" } else { "ap_ufixed" })
    })
}

/// The simulator's layer outputs equal the float reference evaluated on the
/// same layer inputs whenever the accumulator is wide and fine enough to hold
/// every partial sum exactly (so that only the output cast quantizes): the
/// integer path and the float path then agree to the bit.
#[test]
fn matches_float_reference_when_accumulation_is_exact() {
    let mut runner = TestRunner::new_with_rng(
        Config { cases: 200, ..Config::default() },
        TestRng::from_seed(RngAlgorithm::ChaCha, &[7; 32]),
    );
    let strat = (format_strategy(10), format_strategy(8), format_strategy(8), format_strategy(12), 1usize..6, 1usize..5, any::<bool>(), any::<u64>());
    runner
        .run(&strat, |(inf, wf, bf, of, n_in, n_out, relu, seed)| {
            let (fin, fw, fb) = (f(&inf), f(&wf), f(&bf));
            // Exact accumulator: enough fraction bits for products and bias,
            // enough integer bits for any sum of n_in products plus the bias.
            let frac = (fin.frac_bits() + fw.frac_bits()).max(fb.frac_bits());
            let int = (fin.int_bits() + fw.int_bits()).max(fb.int_bits()) + 4;
            let width = (frac + int).clamp(1, 64) as u32;
            prop_assume!(frac + int <= 60 && frac + int >= 2);
            let accum = format!("ap_fixed<{width},{int}>");
            let m = one_layer(&inf, &wf, &bf, &accum, &of, if relu { "relu" } else { "linear" }, n_in, n_out);
            let mut s = seed;
            let mut next = |fmt: Format| {
                s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                let span = (fmt.max_raw() - fmt.min_raw() + 1) as u128;
                fmt.min_raw() + ((s >> 11) as u128 % span) as i128
            };
            let weights = (0..n_in * n_out).map(|_| next(fw)).collect();
            let biases = (0..n_out).map(|_| next(fb)).collect();
            let x: Vec<i128> = (0..n_in).map(|_| next(fin)).collect();
            let params = Params { layers: vec![LayerParams { tensors: vec![weights, biases] }] };
            let net = Network::new(m.clone(), params.clone()).expect("valid");
            let got = net.infer(&x).expect("infer");
            let xf: Vec<f64> = x.iter().map(|&r| fin.to_f64(r)).collect();
            let want: Vec<i128> = reference::infer(&m, &params, &xf)
                .expect("len")
                .iter()
                .map(|&v| m.output_format().quantize_f64(v).expect("finite"))
                .collect();
            prop_assert_eq!(got, want);
            Ok(())
        })
        .expect("simulator agrees with the float reference");
}

#[test]
fn batch_equals_one_by_one() {
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/jet_tagging/model.yaml")).expect("example");
    let m = model::parse(&text, Path::new("jet.yaml")).expect("valid");
    let p = fptgen_sim::weights::random(&m, 11);
    let net = Network::new(m.clone(), p).expect("valid");
    let fin = m.input_format;
    let inputs: Vec<Vec<i128>> = (0..64)
        .map(|s| (0..m.input_len()).map(|i| ((s * 7919 + i * 104729) as i128 % (fin.max_raw() - fin.min_raw())) + fin.min_raw()).collect())
        .collect();
    let batch = net.infer_batch(&inputs).expect("batch");
    for (x, y) in inputs.iter().zip(&batch) {
        assert_eq!(&net.infer(x).expect("one"), y);
    }
}
