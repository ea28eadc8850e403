//! ES's automatic steps (`fptgen_sim::train::steps`, docs/training.md,
//! "Update"): every expected value below is worked by hand from the
//! formula
//!
//!     perturb_shift = clamp(round(F_w) - 6, 0, 31)
//!     lr_shift = clamp(round(K - 6 + log2(N E[e^2] M c_Q) + log2(k)/2 + F_y - F_w + sigma - sigma_auto), -31, 31)
//!
//! with K = 3.25, c_Q = 1 (exact) or 1/(2 ln 2) = 0.72135 (po2,
//! log2 = -0.47123), and the model file's parsing of `auto`, absent and
//! written shifts.

use std::path::Path;

use fptgen_sim::fixed::Format;
use fptgen_sim::model::{self, Distribution, LfsrWidth, Model, Noise, Rule, Training};
use fptgen_sim::train::steps::{self, StepBasis};

fn parse(yaml: &str) -> Model {
    model::parse(yaml, Path::new("t.yaml")).unwrap_or_else(|e| panic!("{e}\n{yaml}"))
}

/// A 2-2 dense network with trainable weights of `w` (biases `ap_fixed<8,2>`,
/// frozen) and output format `out`, and the training section `training`.
fn net(w: &str, out: &str, training: &str) -> String {
    format!(
        "name: t\ninput: {{shape: [2], format: 'ap_fixed<8,3>'}}\nweights: w.npz\nlayers:\n\
  - {{name: o, type: dense, inputs: 2, outputs: 2, activation: linear, trainable: [weights],\n\
     precision: {{weight: '{w}', bias: 'ap_fixed<8,2>', accum: 'ap_fixed<40,16>', output: '{out}'}}}}\n\
training: {training}\n"
    )
}

#[test]
fn the_constant_is_the_documented_one() {
    assert_eq!(steps::K, 3.25);
    assert_eq!(steps::PERTURB_FRAC, 6);
}

#[test]
fn noise_power_and_quantization_gain() {
    let r = Noise { width: LfsrWidth::W8, distribution: Distribution::Rademacher, bits: 4 };
    assert_eq!(steps::noise_power(&r), 1.0);
    // uniform, 1 bit: +-1; 2 bits: +-1, +-3, (1 + 9) / 2 = 5; 3 bits:
    // (1 + 9 + 25 + 49) / 4 = 21.
    for (bits, want) in [(1, 1.0), (2, 5.0), (3, 21.0)] {
        let u = Noise { width: LfsrWidth::W8, distribution: Distribution::Uniform, bits };
        assert_eq!(steps::noise_power(&u), want, "{bits} bits");
    }
    assert_eq!(steps::quantization_gain(model::LossQuantization::Exact), 1.0);
    let g = steps::quantization_gain(model::LossQuantization::Po2);
    assert!((g - 0.721_347_5).abs() < 1e-6, "{g}");
}

/// F_w 6, F_y 8, N 4, M 2, k 4, exact, rademacher: 3.25 - 6 + log2(8) +
/// log2(4)/2 + 8 - 6 = 3.25 - 6 + 3 + 1 + 2 = 3.25, so 3; sigma 0.
#[test]
fn a_small_case_by_hand() {
    let m = parse(&net("ap_fixed<8,2>", "ap_fixed<16,8>", "{population: 4, buffer: 2, iterations: 4, loss_quantization: exact}"));
    let t = m.training.unwrap();
    assert_eq!((t.perturb_shift, t.perturb_shift_auto, t.lr_shift, t.lr_shift_auto), (0, true, 3, true));
    // `auto` written is the same as absent.
    let m = parse(&net(
        "ap_fixed<8,2>",
        "ap_fixed<16,8>",
        "{population: 4, buffer: 2, iterations: 4, loss_quantization: exact, perturb_shift: auto, lr_shift: auto}",
    ));
    let a = m.training.unwrap();
    assert_eq!(a, t);
}

/// F_w 10 (`ap_fixed<16,6>`), F_y 4 (`ap_fixed<8,4>`), uniform 2 bits
/// (E[e^2] 5), N 6, M 2, k 16, po2: sigma_auto = 10 - 6 = 4;
/// log2(6 * 5 * 2) = 5.90689, minus 0.47123 = 5.43566;
/// 3.25 - 6 + 5.43566 + 2 + 4 - 10 = -1.31434, so -1. With a written
/// perturb_shift of 7 (3 more than auto): 1.68566, so 2.
#[test]
fn uniform_noise_po2_and_a_written_perturb_shift() {
    let sec = "{population: 6, buffer: 2, iterations: 16, noise: {distribution: uniform, bits: 2}}";
    let t = parse(&net("ap_fixed<16,6>", "ap_fixed<8,4>", sec)).training.unwrap();
    assert_eq!((t.perturb_shift, t.lr_shift), (4, -1));
    let sec = "{population: 6, buffer: 2, iterations: 16, noise: {distribution: uniform, bits: 2}, perturb_shift: 7}";
    let t = parse(&net("ap_fixed<16,6>", "ap_fixed<8,4>", sec)).training.unwrap();
    assert_eq!((t.perturb_shift, t.perturb_shift_auto, t.lr_shift, t.lr_shift_auto), (7, false, 2, true));
}

/// A written lr_shift is kept, whatever the rest; a written 0 is not auto.
#[test]
fn a_written_lr_shift_is_kept() {
    for v in [-31, 0, 5, 31] {
        let t = parse(&net("ap_fixed<8,2>", "ap_fixed<16,8>", &format!("{{population: 4, lr_shift: {v}}}"))).training.unwrap();
        assert_eq!((t.lr_shift, t.lr_shift_auto, t.perturb_shift_auto), (v, false, true), "{v}");
        let again = t.resolve(StepBasis::of(&parse(&net("ap_fixed<16,1>", "ap_fixed<8,4>", "{}"))).as_ref());
        assert_eq!(again.lr_shift, v);
    }
}

#[test]
fn other_words_and_out_of_range_shifts_are_errors() {
    let e = model::parse(&net("ap_fixed<8,2>", "ap_fixed<16,8>", "{lr_shift: fast}"), Path::new("t.yaml")).unwrap_err().to_string();
    assert!(e.contains("auto") && e.contains("t.yaml:"), "{e}");
    let e = model::parse(&net("ap_fixed<8,2>", "ap_fixed<16,8>", "{perturb_shift: -1}"), Path::new("t.yaml")).unwrap_err().to_string();
    assert!(e.contains("perturb_shift is -1") && e.contains("between 0 and 31"), "{e}");
    let e = model::parse(&net("ap_fixed<8,2>", "ap_fixed<16,8>", "{lr_shift: 32}"), Path::new("t.yaml")).unwrap_err().to_string();
    assert!(e.contains("lr_shift is 32") && e.contains("between -31 and 31"), "{e}");
}

/// `resolve` follows a new N and M (what --population and --buffer do):
/// F_w 6, F_y 8, exact, k 4 as in `a_small_case_by_hand`, N 64, M 8:
/// 3.25 - 6 + log2(512) + 1 + 2 = 9.25, so 9.
#[test]
fn resolve_follows_population_and_buffer() {
    let m = parse(&net("ap_fixed<8,2>", "ap_fixed<16,8>", "{population: 4, buffer: 2, iterations: 4, loss_quantization: exact}"));
    let b = StepBasis::of(&m);
    let t = Training { population: 64, buffer: 8, ..m.training.unwrap() }.resolve(b.as_ref());
    assert_eq!(t.lr_shift, 9);
    // A feedback rule takes its own automatic step, 16 + F_y, and back.
    assert_eq!(t.with_rule(Rule::Dfa, b.as_ref()).lr_shift, 24);
    assert_eq!(t.with_rule(Rule::Dfa, b.as_ref()).with_rule(Rule::Es, b.as_ref()).lr_shift, 9);
}

/// Direct on a basis: F_w 0, F_y 0, N 2, M 1, k 1, exact:
/// 3.25 - 6 + 1 = -1.75, so -2. Clamps: F_w 50, F_y 0: sigma_auto
/// 44 clamps to 31, lr 3.25 - 6 + 1 - 50 = -51.75 clamps to -31; F_w 0,
/// F_y 24, N = M = 2^20, k 2^32 - 1 (log2/2 = 16.0): 77.25 clamps to 31.
#[test]
fn integer_formats_and_the_clamps() {
    let out: Format = "ap_fixed<8,8>".parse().unwrap();
    let basis = |w: f64, y: f64| StepBasis { trained_frac: w, output_frac: y, output: out, feedback_output_frac: out.frac_bits() };
    let t = Training {
        population: 2,
        buffer: 1,
        iterations: 1,
        loss_quantization: model::LossQuantization::Exact,
        perturb_shift_auto: true,
        lr_shift_auto: true,
        ..Training::default()
    };
    let r = t.resolve(Some(&basis(0.0, 0.0)));
    assert_eq!((r.perturb_shift, r.lr_shift), (0, -2));
    let r = t.resolve(Some(&basis(50.0, 0.0)));
    assert_eq!((r.perturb_shift, r.lr_shift), (31, -31));
    let big = Training { population: 1 << 20, buffer: 1 << 20, iterations: u64::from(u32::MAX), ..t };
    let r = big.resolve(Some(&basis(0.0, 24.0)));
    assert_eq!((r.perturb_shift, r.lr_shift), (0, 31));
    // No basis (nothing trainable): nothing changes.
    assert_eq!(t.resolve(None), t);
}

/// The int8 head: int8 weights and output codes, 0 fraction bits each
/// (the scales do not enter): F_w 0, F_y 0, N 8, M 32, k 10, po2:
/// 3.25 - 6 + log2(256) - 0.47123 + log2(10)/2 = 3.25 - 6 + 7.52877 +
/// 1.66096 = 6.43973, so 6; sigma 0.
#[test]
fn the_int8_head_by_hand() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let m = model::load(&root.join("examples/int8_head/model.yaml")).unwrap();
    let b = StepBasis::of(&m).unwrap();
    assert_eq!((b.trained_frac, b.output_frac), (0.0, 0.0));
    let t = m.training.unwrap();
    assert_eq!((t.perturb_shift, t.lr_shift, t.lr_shift_auto), (0, 6, true));
}
