//! The simulator's fast path (an integer dot product when every product fits
//! the accumulator exactly) gives the same bits as the reference definition
//! of a neuron (`dense_neuron_reference`: every product cast and every sum
//! cast, in input order), for random layers where the fast path applies and
//! where it does not; its dot product in `i32`, `i64` and `i128` each give
//! the reference's bits; and [`Network`] (which keeps `i32` copies of the
//! weights of layers whose dot products fit `i32`) gives the bits of the
//! reference neuron chained layer by layer.

use std::path::Path;

use fptgen_sim::fast::finish::Cast;
use fptgen_sim::fast::kernel::{has_vnni, Kernel};
use fptgen_sim::fast::FastDense;
use fptgen_sim::fixed::{Format, Overflow};
use fptgen_sim::model::{self, Dense};
use fptgen_sim::network::{
    dense_neuron, dense_neuron_reference, dot_product_bits, exact_accumulation, exact_product_shift, Network,
};
use fptgen_sim::weights::{LayerParams, Params};
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
            let d = layer.as_dense().expect("a dense layer");
            // Extremes half of the time, so saturation and wrap-around happen.
            let mut codes = Codes(seed);
            let p = codes.params(d);
            let x: Vec<i128> = (0..n_in).map(|_| codes.draw(layer.input_format)).collect();
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

/// A seeded stream of codes: a format's extremes half of the time (so
/// saturation and wrap-around happen), uniform codes otherwise.
struct Codes(u64);

impl Codes {
    fn draw(&mut self, f: Format) -> i128 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        let s = self.0;
        match (s >> 60) % 4 {
            0 => f.min_raw(),
            1 => f.max_raw(),
            _ => {
                let t = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                self.0 = t;
                let wide = (i128::from(s >> 8) << 64) | i128::from(t);
                f.min_raw() + wide.rem_euclid(f.max_raw() - f.min_raw() + 1)
            }
        }
    }

    fn params(&mut self, d: &Dense) -> LayerParams {
        LayerParams {
            tensors: vec![
                (0..d.inputs * d.outputs).map(|_| self.draw(d.precision.weight)).collect(),
                (0..d.outputs).map(|_| self.draw(d.precision.bias)).collect(),
            ],
        }
    }
}

/// Which dot product `dense_neuron` forms for a layer: "i32", "i64",
/// "i128" (exact products, wrapping accumulator), or "other".
fn dot_path(d: &Dense, input_format: Format) -> &'static str {
    if exact_product_shift(d, input_format).is_none() || d.precision.accum.overflow() != Overflow::Wrap {
        return "other";
    }
    match dot_product_bits(d.precision.weight, input_format, d.inputs) {
        Some(b) if b <= 32 => "i32",
        Some(b) if b <= 64 => "i64",
        _ => "i128",
    }
}

/// A signed accumulator for inputs `(width, int bits)` and weights alike:
/// `extra` more fraction bits than a product and `guard` more bits of
/// room (at most 64 bits wide).
fn accum_format((xw, xi): (u32, i32), (ww, wi): (u32, i32), (extra, guard): (i32, i32), quant: &str, overflow: &str) -> String {
    let frac = (xw as i32 - xi) + (ww as i32 - wi) + extra;
    let aw = (xw as i32 + ww as i32 + extra + guard).min(64);
    format!("ap_fixed<{aw},{},{quant},{overflow}>", aw - frac)
}

/// A one-layer dense model with these formats (`[weight, bias, accum,
/// output]`), and its text.
fn one_layer(xf: &str, (n_in, n_out): (usize, usize), relu: bool, [wf, bf, af, yf]: [&str; 4]) -> Result<(model::Model, String), TestCaseError> {
    let text = format!(
        "name: t\ninput: {{shape: [{n_in}], format: '{xf}'}}\nweights: w.npz\nlayers:\n  - name: l\n    type: dense\n    inputs: {n_in}\n    outputs: {n_out}\n    activation: {}\n    precision: {{weight: '{wf}', bias: '{bf}', accum: '{af}', output: '{yf}'}}\n",
        if relu { "relu" } else { "linear" }
    );
    let m = model::parse(&text, Path::new("t.yaml")).map_err(|e| TestCaseError::fail(format!("{e}\n{text}")))?;
    Ok((m, text))
}

/// A width, weighted towards the widest so that 64-bit dot products occur.
fn width() -> impl Strategy<Value = u32> {
    prop_oneof![1u32..=12, 12u32..=32, 29u32..=32]
}

#[test]
fn dot_products_in_every_width_equal_the_reference() {
    let mut runner = TestRunner::new_with_rng(
        Config { cases: 600, ..Config::default() },
        TestRng::from_seed(RngAlgorithm::ChaCha, &[5; 32]),
    );
    let seen = std::cell::RefCell::new(std::collections::BTreeMap::<&str, usize>::new());
    // Input and weight formats up to 32 bits; the accumulator signed, with
    // 0 to 3 more fraction bits than a product and room for a product plus
    // 0 to 4 guard bits (at most 64), wrapping three times in four.
    let strat = (
        (any::<bool>(), width(), -4i32..=12),
        (any::<bool>(), width(), -4i32..=8),
        format(1, 16, -2..=8),
        (0i32..=3, 0i32..=4, 0..QUANT.len(), 0..4usize),
        format(1, 16, -2..=8),
        1usize..64,
        any::<bool>(),
        (any::<u64>(), any::<bool>()),
    );
    runner
        .run(&strat, |((xs, xw, xi), (ws, ww, wi), bf, (extra, guard, aq, ao), yf, n_in, relu, (seed, out_is_accum))| {
            let fixed = |s: bool, w: u32, i: i32| format!("{}<{w},{i},AP_TRN,AP_WRAP>", if s { "ap_fixed" } else { "ap_ufixed" });
            let (xf, wf) = (fixed(xs, xw, xi), fixed(ws, ww, wi));
            let af = accum_format((xw, xi), (ww, wi), (extra, guard), QUANT[aq], if ao < 3 { "AP_WRAP" } else { OVF[ao] });
            let yf = if out_is_accum { af.clone() } else { yf };
            let (m, text) = one_layer(&xf, (n_in, 1), relu, [&wf, &bf, &af, &yf])?;
            let layer = &m.layers[0];
            let d = layer.as_dense().expect("a dense layer");
            *seen.borrow_mut().entry(dot_path(d, layer.input_format)).or_default() += 1;
            let mut codes = Codes(seed);
            let p = codes.params(d);
            let x: Vec<i128> = (0..n_in).map(|_| codes.draw(layer.input_format)).collect();
            prop_assert_eq!(
                dense_neuron(d, layer.input_format, &p, &x, 0),
                dense_neuron_reference(d, layer.input_format, &p, &x, 0),
                "{}",
                text
            );
            Ok(())
        })
        .unwrap_or_else(|e| panic!("{e}"));
    let seen = seen.into_inner();
    eprintln!("dot products: {seen:?}");
    for path in ["i32", "i64", "i128", "other"] {
        assert!(seen.get(path).copied().unwrap_or(0) >= 20, "too few cases take the {path} path: {seen:?}");
    }
}

#[test]
fn network_equals_the_reference_chain() {
    let mut runner = TestRunner::new_with_rng(
        Config { cases: 300, ..Config::default() },
        TestRng::from_seed(RngAlgorithm::ChaCha, &[7; 32]),
    );
    let narrow = std::cell::Cell::new(0usize);
    let batched = std::cell::Cell::new(0usize);
    // Two layers; wide accumulators (mostly where Network's i32 copy
    // applies) or narrow ones.
    let layer = || {
        (
            format(1, 10, -2..=4),
            format(1, 10, -2..=6),
            prop_oneof![
                2 => (28u32..=40, 6i32..=12, 0..QUANT.len()).prop_map(|(w, i, q)| format!("ap_fixed<{w},{i},{},AP_WRAP>", QUANT[q])),
                1 => format(20, 40, 8..=20),
                1 => format(2, 12, -2..=6),
            ],
            format(1, 10, -2..=6),
            1usize..6,
            any::<bool>(),
        )
    };
    let strat = (format(1, 12, -2..=6), 1usize..60, layer(), layer(), any::<u64>(), 1usize..=70);
    runner
        .run(&strat, |(xf, n_in, l1, l2, seed, batch)| {
            let text_layer = |name: &str, inputs: usize, (wf, bf, af, yf, outputs, relu): &(String, String, String, String, usize, bool)| {
                format!(
                    "  - name: {name}\n    type: dense\n    inputs: {inputs}\n    outputs: {outputs}\n    activation: {}\n    precision: {{weight: '{wf}', bias: '{bf}', accum: '{af}', output: '{yf}'}}\n",
                    if *relu { "relu" } else { "linear" }
                )
            };
            let text = format!(
                "name: t\ninput: {{shape: [{n_in}], format: '{xf}'}}\nweights: w.npz\nlayers:\n{}{}",
                text_layer("a", n_in, &l1),
                text_layer("b", l1.4, &l2)
            );
            let m = model::parse(&text, Path::new("t.yaml")).map_err(|e| TestCaseError::fail(format!("{e}\n{text}")))?;
            let mut codes = Codes(seed);
            let params = Params { layers: m.layers.iter().map(|l| codes.params(l.as_dense().expect("a dense layer"))).collect() };
            let x: Vec<i128> = (0..n_in).map(|_| codes.draw(m.input_format)).collect();
            let mut want: Vec<Vec<i128>> = Vec::new();
            for (l, p) in m.layers.iter().zip(&params.layers) {
                let d = l.as_dense().expect("a dense layer");
                if dot_path(d, l.input_format) == "i32" {
                    narrow.set(narrow.get() + 1);
                }
                let v = want.last().unwrap_or(&x);
                want.push((0..d.outputs).map(|o| dense_neuron_reference(d, l.input_format, p, v, o)).collect());
            }
            // More samples for the batch (up to 70: two chunks of the batched path).
            let mut batch_in = vec![x.clone()];
            let mut batch_want = vec![want[1].clone()];
            for _ in 1..batch {
                let x: Vec<i128> = (0..n_in).map(|_| codes.draw(m.input_format)).collect();
                let mut v = x.clone();
                for (l, p) in m.layers.iter().zip(&params.layers) {
                    let d = l.as_dense().expect("a dense layer");
                    v = (0..d.outputs).map(|o| dense_neuron_reference(d, l.input_format, p, &v, o)).collect();
                }
                batch_in.push(x);
                batch_want.push(v);
            }
            let net = Network::new(m, params).map_err(|e| TestCaseError::fail(e.to_string()))?;
            batched.set(batched.get() + net.batch_kernels().iter().flatten().count());
            prop_assert_eq!(net.trace(&x).map_err(|e| TestCaseError::fail(e.to_string()))?, want.clone(), "{}", text);
            prop_assert_eq!(net.infer_batch(&batch_in).map_err(|e| TestCaseError::fail(e.to_string()))?, batch_want, "{}", text);
            Ok(())
        })
        .unwrap_or_else(|e| panic!("{e}"));
    eprintln!("{} of 600 layers take Network's i32 path", narrow.get());
    assert!(narrow.get() >= 150, "only {} layers take Network's i32 path", narrow.get());
    eprintln!("{} of 600 layers take the batched path", batched.get());
    assert!(batched.get() >= 150, "only {} layers take the batched path", batched.get());
}

/// Any format (all modes, widths 1 to 64) for the casts.
fn any_format() -> impl Strategy<Value = Format> {
    (any::<bool>(), 1u32..=64, -8i32..=70, 0..QUANT.len(), 0..OVF.len()).prop_filter_map("a valid format", |(s, w, i, q, o)| {
        format!("{}<{w},{i},{},{}>", if s { "ap_fixed" } else { "ap_ufixed" }, QUANT[q], OVF[o]).parse::<Format>().ok()
    })
}

/// `Format::quantize_f64` (an `f64` path where `x · 2^F` is below `2^52`)
/// equals `Format::convert_f64` (exact arithmetic) for every format and
/// mode: arbitrary doubles, small integers times powers of two (exact ties
/// at every F), ties and their neighbours one ulp away, values near 2^52
/// after scaling, subnormals and zeros.
#[test]
fn quantize_f64_equals_the_exact_conversion() {
    let doubles = prop_oneof![
        any::<u64>().prop_map(f64::from_bits).prop_filter("finite", |x| x.is_finite()),
        (-300i64..=300, -75i32..=75).prop_map(|(m, e)| m as f64 * 2f64.powi(e)),
        ((-1i64 << 20)..(1i64 << 20), -75i32..=75, -1i32..=1).prop_map(|(m, e, k)| {
            // (m + 1/2) · 2^e, then one ulp either side or none.
            let x = (m as f64 + 0.5) * 2f64.powi(e);
            match k {
                -1 => x.next_down(),
                1 => x.next_up(),
                _ => x,
            }
        }),
        (any::<i64>(), -75i32..=20).prop_map(|(m, e)| (m >> 10) as f64 * 2f64.powi(e)),
        Just(0.0),
        Just(-0.0),
        Just(f64::MIN_POSITIVE / 4.0),
        Just(-f64::MIN_POSITIVE),
    ];
    let mut runner = TestRunner::new_with_rng(
        Config { cases: 20_000, ..Config::default() },
        TestRng::from_seed(RngAlgorithm::ChaCha, &[29; 32]),
    );
    runner
        .run(&(any_format(), doubles), |(f, x)| {
            prop_assert_eq!(f.quantize_f64(x).ok(), f.convert_f64(x).ok().map(|c| c.raw), "{} from {:e} ({:?})", f, x, x.to_bits());
            Ok(())
        })
        .unwrap_or_else(|e| panic!("{e}"));
}

/// `Format::quantize_f64_into` (a loop specialised to the quantization
/// mode, rounding in `f64` where that is exact and skipping the overflow
/// step for codes in range) gives, for every format and mode, the codes of
/// `Format::convert_f64` (exact arithmetic) one value at a time: vectors of
/// ties and their neighbours, values just inside and outside the format's
/// range after scaling (where the overflow mode decides), arbitrary and
/// subnormal doubles; and with a NaN or an infinity in the vector, the
/// error names its index, the codes before it written.
#[test]
fn quantize_f64_into_equals_the_exact_conversion() {
    let doubles = |f: Format| {
        let scale = 2f64.powi(-f.frac_bits());
        let (lo, hi) = (f.min_raw() as f64, f.max_raw() as f64);
        prop_oneof![
            any::<u64>().prop_map(f64::from_bits).prop_filter("finite", |x| x.is_finite()),
            (-300i64..=300, -75i32..=75).prop_map(|(m, e)| m as f64 * 2f64.powi(e)),
            // Ties (k / 2) near the range's ends, one ulp either side or none.
            (-4i32..=4, any::<bool>(), -1i32..=1).prop_map(move |(d, top, k)| {
                let x = ((if top { hi } else { lo }) + f64::from(d) / 2.0) * scale;
                match k {
                    -1 => x.next_down(),
                    1 => x.next_up(),
                    _ => x,
                }
            }),
            ((-1i64 << 20)..(1i64 << 20), -1i32..=1).prop_map(move |(m, k)| {
                let x = (m as f64 + 0.5) * scale;
                match k {
                    -1 => x.next_down(),
                    1 => x.next_up(),
                    _ => x,
                }
            }),
            Just(0.0),
            Just(-0.0),
            Just(f64::MIN_POSITIVE / 4.0),
            Just(-f64::MIN_POSITIVE),
        ]
    };
    let case = any_format().prop_flat_map(move |f| {
        (
            Just(f),
            proptest::collection::vec(doubles(f), 0..40),
            prop_oneof![Just(None), (0usize..40, prop_oneof![Just(f64::NAN), Just(f64::INFINITY), Just(f64::NEG_INFINITY)]).prop_map(Some)],
        )
    });
    let mut runner = TestRunner::new_with_rng(
        Config { cases: 4_000, ..Config::default() },
        TestRng::from_seed(RngAlgorithm::ChaCha, &[31; 32]),
    );
    runner
        .run(&case, |(f, mut xs, bad)| {
            if let Some((at, v)) = bad {
                let at = at.min(xs.len());
                xs.insert(at, v);
            }
            let mut got = Vec::new();
            let result = f.quantize_f64_into(&xs, &mut got, |c| c);
            let first_bad = xs.iter().position(|x| !x.is_finite());
            let want: Vec<i128> = xs[..first_bad.unwrap_or(xs.len())].iter().map(|&x| f.convert_f64(x).unwrap().raw).collect();
            prop_assert_eq!(result.map_err(|(i, _)| i), first_bad.map_or(Ok(()), Err), "{}: error index", f);
            prop_assert_eq!(&got, &want, "{} from {:?}", f, xs);
            Ok(())
        })
        .unwrap_or_else(|e| panic!("{e}"));
}

/// `fast::finish::Cast` (plain integer rounding and overflow) equals
/// `Format::cast_from` for every pair of formats and any code of the source.
#[test]
fn fast_cast_equals_format_cast() {
    let mut runner = TestRunner::new_with_rng(
        Config { cases: 3000, ..Config::default() },
        TestRng::from_seed(RngAlgorithm::ChaCha, &[11; 32]),
    );
    runner
        .run(&(any_format(), any_format(), any::<u64>()), |(from, to, seed)| {
            let mut codes = Codes(seed);
            let cast = Cast::new(from, to);
            for _ in 0..8 {
                let a = codes.draw(from);
                prop_assert_eq!(cast.apply(a), to.cast_from(a, &from), "{} -> {}: {}", from, to, a);
            }
            Ok(())
        })
        .unwrap_or_else(|e| panic!("{e}"));
}

/// `FastDense` (a batch as one exact integer matrix product, then the
/// finisher) equals `dense_neuron_reference` on every sample and output,
/// with each kernel: VNNI (`u8` inputs, `i8` weights; where the CPU has
/// it), `i32` and `i64`; with wrapping accumulators and with saturating
/// ones that `exact_accumulation` proves never saturate.
#[test]
fn batched_layers_equal_the_reference() {
    let mut runner = TestRunner::new_with_rng(
        Config { cases: 500, ..Config::default() },
        TestRng::from_seed(RngAlgorithm::ChaCha, &[13; 32]),
    );
    let seen = std::cell::RefCell::new(std::collections::BTreeMap::<String, usize>::new());
    let input = prop_oneof![
        (0i32..=8, 0..QUANT.len()).prop_map(|(i, q)| (false, 8u32, i, q)),
        (any::<bool>(), 1u32..=12, -2i32..=8, 0..QUANT.len()),
        (any::<bool>(), 12u32..=32, -2i32..=12, 0..QUANT.len()),
    ];
    let weight = prop_oneof![
        (1u32..=8, -2i32..=4).prop_map(|(w, i)| (true, w, i)),
        (any::<bool>(), 1u32..=16, -2i32..=6),
        (any::<bool>(), 16u32..=30, -2i32..=8),
    ];
    let strat = (input, weight, format(1, 16, -2..=8), (0i32..=3, 0i32..=24, 0..QUANT.len(), 0..OVF.len()), format(1, 64, -4..=40), (1usize..80, 1usize..40, 1usize..20), any::<bool>(), any::<u64>());
    runner
        .run(&strat, |((xs, xw, xi, xq), (ws, ww, wi), bf, (extra, guard, aq, ao), yf, (n_in, n_out, m), relu, seed)| {
            let xf = format!("{}<{xw},{xi},{},AP_SAT>", if xs { "ap_fixed" } else { "ap_ufixed" }, QUANT[xq]);
            let wf = format!("{}<{ww},{wi}>", if ws { "ap_fixed" } else { "ap_ufixed" });
            let af = accum_format((xw, xi), (ww, wi), (extra, guard), QUANT[aq], OVF[ao]);
            let (model, text) = one_layer(&xf, (n_in, n_out), relu, [&wf, &bf, &af, &yf])?;
            let layer = &model.layers[0];
            let d = layer.as_dense().expect("a dense layer");
            let mut codes = Codes(seed);
            let p = codes.params(d);
            let x: Vec<i128> = (0..m * n_in).map(|_| codes.draw(layer.input_format)).collect();
            let want: Vec<i128> = x
                .chunks(n_in)
                .flat_map(|xs| (0..n_out).map(|o| dense_neuron_reference(d, layer.input_format, &p, xs, o)).collect::<Vec<_>>())
                .collect();
            for vnni in [true, false] {
                let Some(f) = FastDense::new(d, layer.input_format, &p, vnni) else {
                    *seen.borrow_mut().entry("none".into()).or_default() += 1;
                    break;
                };
                let sat = if d.precision.accum.overflow() == Overflow::Wrap { "wrap" } else { "sat" };
                *seen.borrow_mut().entry(format!("{:?}", f.kernel())).or_default() += 1;
                *seen.borrow_mut().entry(sat.into()).or_default() += 1;
                let x64: Vec<i64> = x.iter().map(|&v| v as i64).collect();
                let got: Vec<i128> = f.forward(x64, m).iter().map(|&v| i128::from(v)).collect();
                prop_assert_eq!(&got, &want, "{:?} {}", f.kernel(), text);
                prop_assert!(exact_accumulation(d, layer.input_format).is_some());
            }
            Ok(())
        })
        .unwrap_or_else(|e| panic!("{e}"));
    let seen = seen.into_inner();
    eprintln!("batched layers: {seen:?}");
    let want: &[&str] = if has_vnni() { &["Vnni", "I32", "I64", "none", "wrap", "sat"] } else { &["I32", "I64", "none", "wrap", "sat"] };
    for k in want {
        assert!(seen.get(*k).copied().unwrap_or(0) >= 20, "too few cases of {k}: {seen:?}");
    }
    let _ = Kernel::Vnni;
}

/// [`Network::infer_rows`] (a row-major matrix of codes; `u8` codes go to
/// the first layer's 8-bit kernel as they are) gives the reference chain's
/// codes for byte, `i16` and `i64` inputs, in networks with unsigned inputs
/// of up to 8 bits (the byte path where the CPU has VNNI and the input
/// count is a multiple of 4) and 1 to 150 samples (three chunks).
#[test]
fn matrix_inference_equals_the_reference_chain() {
    let mut runner = TestRunner::new_with_rng(
        Config { cases: 120, ..Config::default() },
        TestRng::from_seed(RngAlgorithm::ChaCha, &[29; 32]),
    );
    let bytes = std::cell::Cell::new(0usize);
    let layer = || {
        (
            (any::<bool>(), 1u32..=8, -2i32..=4, 0..QUANT.len(), 0..OVF.len())
                .prop_map(|(s, w, i, q, o)| format!("{}<{w},{i},{},{}>", if s { "ap_fixed" } else { "ap_ufixed" }, QUANT[q], OVF[o])),
            format(1, 10, -2..=6),
            (24u32..=40, 8i32..=14, 0..QUANT.len()).prop_map(|(w, i, q)| format!("ap_fixed<{w},{i},{},AP_WRAP>", QUANT[q])),
            format(1, 8, -2..=6),
            1usize..24,
            any::<bool>(),
        )
    };
    let input = (1u32..=8, -2i32..=8, 0..QUANT.len()).prop_map(|(w, i, q)| format!("ap_ufixed<{w},{i},{},AP_SAT>", QUANT[q]));
    let strat = (input, 1usize..=20, any::<bool>(), layer(), layer(), any::<u64>(), 1usize..=150);
    runner
        .run(&strat, |(xf, n4, by4, l1, l2, seed, batch)| {
            let n_in = if by4 { 4 * n4 } else { 4 * n4 - 1 };
            let text_layer = |name: &str, inputs: usize, (wf, bf, af, yf, outputs, relu): &(String, String, String, String, usize, bool)| {
                format!(
                    "  - name: {name}\n    type: dense\n    inputs: {inputs}\n    outputs: {outputs}\n    activation: {}\n    precision: {{weight: '{wf}', bias: '{bf}', accum: '{af}', output: '{yf}'}}\n",
                    if *relu { "relu" } else { "linear" }
                )
            };
            let text = format!(
                "name: t\ninput: {{shape: [{n_in}], format: '{xf}'}}\nweights: w.npz\nlayers:\n{}{}",
                text_layer("a", n_in, &l1),
                text_layer("b", l1.4, &l2)
            );
            let m = model::parse(&text, Path::new("t.yaml")).map_err(|e| TestCaseError::fail(format!("{e}\n{text}")))?;
            let mut codes = Codes(seed);
            let params = Params { layers: m.layers.iter().map(|l| codes.params(l.as_dense().expect("a dense layer"))).collect() };
            let mut x: Vec<i128> = Vec::new();
            let mut want: Vec<i64> = Vec::new();
            for _ in 0..batch {
                let mut v: Vec<i128> = (0..n_in).map(|_| codes.draw(m.input_format)).collect();
                x.extend(&v);
                for (l, p) in m.layers.iter().zip(&params.layers) {
                    let d = l.as_dense().expect("a dense layer");
                    v = (0..d.outputs).map(|o| dense_neuron_reference(d, l.input_format, p, &v, o)).collect();
                }
                want.extend(v.iter().map(|&c| i64::try_from(c).expect("8-bit outputs")));
            }
            let net = Network::new(m, params).map_err(|e| TestCaseError::fail(e.to_string()))?;
            if has_vnni() && by4 && net.batch_kernels()[0] == Some(Kernel::Vnni) {
                bytes.set(bytes.get() + 1);
            }
            let x8: Vec<u8> = x.iter().map(|&c| u8::try_from(c).expect("unsigned 8-bit codes")).collect();
            let x16: Vec<i16> = x.iter().map(|&c| c as i16).collect();
            let x64: Vec<i64> = x.iter().map(|&c| c as i64).collect();
            let run = |r: Result<Vec<i64>, _>| r.map_err(|e: fptgen_sim::network::SimError| TestCaseError::fail(e.to_string()));
            prop_assert_eq!(run(net.infer_rows(&x8))?, want.clone(), "u8 {}", text);
            prop_assert_eq!(run(net.infer_rows(&x16))?, want.clone(), "i16 {}", text);
            prop_assert_eq!(run(net.infer_rows(&x64))?, want, "i64 {}", text);
            Ok(())
        })
        .unwrap_or_else(|e| panic!("{e}"));
    eprintln!("{} of 120 networks read bytes as they are", bytes.get());
    if has_vnni() {
        assert!(bytes.get() >= 20, "only {} networks took the byte path", bytes.get());
    }
}

/// [`Network::infer_rows`] refuses a partial sample and a code outside the
/// input format, naming the first bad sample and value, as `infer_batch`
/// does; both paths agree on which is first when several chunks are bad.
#[test]
fn matrix_inference_names_the_first_bad_code() {
    let text = "name: t\ninput: {shape: [8], format: 'ap_ufixed<4,0>'}\nweights: w.npz\nlayers:\n  - {name: a, type: dense, inputs: 8, outputs: 2, activation: relu,\n     precision: {weight: 'ap_fixed<4,1>', bias: 'ap_fixed<4,1>', accum: 'ap_fixed<24,12>', output: 'ap_ufixed<4,2>'}}\n";
    let m = model::parse(text, Path::new("t.yaml")).expect("valid model");
    let params = Params { layers: vec![LayerParams { tensors: vec![vec![1; 16], vec![0; 2]] }] };
    let net = Network::new(m, params).expect("valid params");
    let mut x = vec![3u8; 8 * 200];
    x[8 * 150 + 5] = 16;
    x[8 * 70 + 2] = 200;
    let e = net.infer_rows(&x).expect_err("16 and 200 are not codes of ap_ufixed<4,0>");
    assert_eq!(e.to_string(), "input sample 70, value 2: raw code 200 is not a code of ap_ufixed<4,0,AP_TRN,AP_WRAP>");
    let rows: Vec<Vec<i128>> = x.chunks(8).map(|r| r.iter().map(|&v| i128::from(v)).collect()).collect();
    assert_eq!(net.infer_batch(&rows).expect_err("the same codes").to_string(), e.to_string());
    let e = net.infer_rows(&x[..8 * 3 + 5]).expect_err("a partial sample");
    assert_eq!(e.to_string(), "input sample 3 has 5 values but the network takes 8");
}
