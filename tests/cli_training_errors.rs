//! Bad values in a model file's `training:` section: each gets a message
//! that names the file and line:column and a non-zero exit from `fptgen
//! check`, never a panic. A valid section prints a one-line summary.


mod common;

use fptgen_sim::tensor::{write_npz, NamedArray, OutValues};

/// A valid model with every training field written out; tests break one
/// thing at a time. Line numbers below refer to this text.
const MODEL: &str = "\
name: net
input:
  shape: [3]
  format: ap_fixed<8,3>
weights: w.npz
layers:
  - name: fc1
    type: dense
    inputs: 3
    outputs: 2
    activation: relu
    precision:
      weight: ap_fixed<4,1>
      bias: ap_fixed<8,3>
      accum: ap_fixed<16,6>
      output: ap_ufixed<8,3>
    trainable: [weights, biases]
training:
  population: 6
  iterations: 3
  blocks: 4
  buffer: 16
  noise:
    width: 16
    distribution: uniform
    bits: 5
  perturb_shift: 1
  lr_shift: 6
  loss: mae
  fitness: antithetic
  loss_quantization: po2
  seed: 7
";

struct Case {
    dir: tempfile::TempDir,
}

impl Case {
    fn new(text: &str) -> Case {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::write(dir.path().join("model.yaml"), text).expect("write model");
        let arr = |name: &str, shape: &[usize], v: Vec<f64>| NamedArray { name: name.into(), shape: shape.to_vec(), values: OutValues::F64(v) };
        write_npz(
            &dir.path().join("w.npz"),
            &[arr("fc1/w", &[2, 3], vec![0.5, -0.25, 0.125, -1.0, 0.875, 0.0]), arr("fc1/b", &[2], vec![0.25, -0.5])],
        )
        .expect("write npz");
        Case { dir }
    }

    fn check(&self) -> (i32, String, String) {
        common::fptgen(&["check", "model.yaml"], self.dir.path())
    }

    fn check_fails(&self) -> String {
        common::check_fails(self.dir.path())
    }
}

/// Replaces exactly one occurrence of `from`.
fn edit(from: &str, to: &str) -> String {
    assert_eq!(MODEL.matches(from).count(), 1, "{from:?} must occur once");
    MODEL.replace(from, to)
}

fn expect_at(err: &str, line: u32, col: u32, words: &[&str]) {
    common::expect_at(err, line, Some(col), words);
}

#[test]
fn valid_section_prints_a_training_summary() {
    let (code, out, err) = Case::new(MODEL).check();
    assert_eq!(code, 0, "{err}");
    // T = 6 + 2 = 8, G = ceil(8 / 4) = 2, passes = G * N = 12.
    assert!(
        out.contains("  training: N 6, k 3, P 4, M 16, T 8, G 2; 12 forward passes per sample per iteration; antithetic, po2, uniform 5 bits of a 16-bit LFSR, sigma 1, lr_shift 6, seed 7\n"),
        "{out}"
    );
    // baseline adds one unperturbed pass per group: G * (N + 1).
    let (code, out, err) = Case::new(&edit("fitness: antithetic", "fitness: baseline")).check();
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("G 2; 14 forward passes"), "{out}");
    // An empty section takes every default of docs/training.md; the steps
    // are automatic: F_w 3 (ap_fixed<4,1> weights), F_y 5 (ap_ufixed<8,3>),
    // sigma max(0, 3 - 6) = 0, lr_shift round(3.25 - 6 + log2(100 * 64) -
    // 0.47123 + log2(100) / 2 + 5 - 3) = round(14.745) = 15.
    let start = MODEL.find("training:").expect("section");
    let (code, out, err) = Case::new(&format!("{}training: {{}}\n", &MODEL[..start])).check();
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("training: N 100, k 100, P 1, M 64, T 8, G 8; 800 forward passes per sample per iteration; antithetic, po2, rademacher 8-bit LFSR, sigma 0 (auto), lr_shift 15 (auto), seed 1"),
        "{out}"
    );
    // Without a section there is no training line.
    let (code, out, _) = Case::new(&MODEL[..start]).check();
    assert_eq!(code, 0);
    assert!(!out.contains("training:"), "{out}");
}

#[test]
fn odd_population_with_antithetic() {
    let err = Case::new(&edit("population: 6", "population: 5")).check_fails();
    expect_at(&err, 19, 15, &["population is 5", "antithetic", "even"]);
    // Odd populations are fine for the other fitness modes.
    let text = edit("population: 6", "population: 5").replace("fitness: antithetic", "fitness: plain");
    let (code, _, err) = Case::new(&text).check();
    assert_eq!(code, 0, "{err}");
}

/// `fitness: ranks` mirrors pairs as `antithetic` does (an odd population
/// is refused at its line); the simulator takes it, the generator refuses
/// it by name (no ranking unit yet) and writes nothing.
#[test]
fn ranks_fitness() {
    let err = Case::new(&edit("population: 6", "population: 5").replace("fitness: antithetic", "fitness: ranks")).check_fails();
    expect_at(&err, 19, 15, &["population is 5", "ranks", "even"]);
    let case = Case::new(&edit("fitness: antithetic", "fitness: ranks"));
    let (code, out, err) = case.check();
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("; ranks, po2, uniform 5 bits"), "{out}");
    // The automatic step of ranks (docs/training.md): round(5.88 +
    // log2(2 * 6 * 5 * 341 * 0.72135) + log2(3) / 2 + 1 - 2 * 3) =
    // round(5.88 + 13.8493 + 0.7925 - 5) = round(15.52) = 16; E[e^2] of 5
    // uniform bits is (4^5 - 1) / 3 = 341, sigma 1 as written, F_w 3.
    let auto = Case::new(&edit("fitness: antithetic", "fitness: ranks").replace("lr_shift: 6", "lr_shift: auto"));
    let (code, out, err) = auto.check();
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("sigma 1, lr_shift 16 (auto)"), "{out}");
    let (code, out, err) = common::fptgen(&["generate", "model.yaml", "-o", "out"], case.dir.path());
    assert_eq!(code, 1, "{out}{err}");
    assert!(err.contains("model.yaml") && err.contains("fitness: ranks has no hardware yet"), "{err}");
    assert!(!case.dir.path().join("out").exists(), "generate wrote its output directory");
}

#[test]
fn counts_of_zero() {
    for (from, to, line, words) in [
        ("population: 6", "population: 0", 19, ["population is 0", "between 1 and"]),
        ("iterations: 3", "iterations: 0", 20, ["iterations is 0", "between 1 and"]),
        ("blocks: 4", "blocks: 0", 21, ["blocks is 0", "between 1 and"]),
        ("buffer: 16", "buffer: 0", 22, ["buffer is 0", "between 1 and"]),
    ] {
        let err = Case::new(&edit(from, to)).check_fails();
        let col = from.find(':').expect("colon") as u32 + 5;
        expect_at(&err, line, col, &words);
    }
}

#[test]
fn noise_width_not_8_16_or_32() {
    for w in ["0", "12", "64"] {
        let err = Case::new(&edit("width: 16", &format!("width: {w}"))).check_fails();
        expect_at(&err, 24, 12, &[&format!("noise width is {w}"), "8, 16 or 32"]);
    }
}

#[test]
fn noise_bits_outside_one_to_width() {
    let err = Case::new(&edit("bits: 5", "bits: 0")).check_fails();
    expect_at(&err, 26, 11, &["noise bits is 0", "between 1 and 16"]);
    let err = Case::new(&edit("bits: 5", "bits: 17")).check_fails();
    expect_at(&err, 26, 11, &["noise bits is 17", "between 1 and 16"]);
    // The bound is the width: 9 bits of an 8-bit LFSR are refused.
    let err = Case::new(&edit("bits: 5", "bits: 9").replace("width: 16", "width: 8")).check_fails();
    expect_at(&err, 26, 11, &["noise bits is 9", "between 1 and 8"]);
    let (code, _, err) = Case::new(&edit("bits: 5", "bits: 32").replace("width: 16", "width: 32")).check();
    assert_eq!(code, 0, "{err}");
}

#[test]
fn shifts_above_31() {
    let err = Case::new(&edit("perturb_shift: 1", "perturb_shift: 32")).check_fails();
    expect_at(&err, 27, 18, &["perturb_shift is 32", "between 0 and 31"]);
    let err = Case::new(&edit("lr_shift: 6", "lr_shift: 40")).check_fails();
    expect_at(&err, 28, 13, &["lr_shift is 40", "between -31 and 31"]);
    let err = Case::new(&edit("lr_shift: 6", "lr_shift: -32")).check_fails();
    expect_at(&err, 28, 13, &["lr_shift is -32", "between -31 and 31"]);
    for ok in ["lr_shift: 31", "lr_shift: -31"] {
        let (code, _, err) = Case::new(&edit("lr_shift: 6", ok)).check();
        assert_eq!(code, 0, "{ok}: {err}");
    }
}

#[test]
fn training_without_trainable_parameters() {
    let err = Case::new(&edit("    trainable: [weights, biases]\n", "")).check_fails();
    expect_at(&err, 17, 1, &["training section", "no trainable parameters"]);
}

#[test]
fn unknown_fields_and_values() {
    let err = Case::new(&edit("  seed: 7\n", "  seed: 7\n  sigma: 3\n")).check_fails();
    assert!(err.starts_with("error: model.yaml:33:"), "{err}");
    assert!(err.contains("unknown field `sigma`"), "{err}");
    let err = Case::new(&edit("    bits: 5\n", "    bits: 5\n    taps: 184\n")).check_fails();
    assert!(err.starts_with("error: model.yaml:27:"), "{err}");
    assert!(err.contains("unknown field `taps`"), "{err}");
    for (from, to, line, word) in [
        ("fitness: antithetic", "fitness: mirrored", 30, "mirrored"),
        ("loss: mae", "loss: mse", 29, "mse"),
        ("distribution: uniform", "distribution: gaussian", 25, "gaussian"),
        ("loss_quantization: po2", "loss_quantization: log", 31, "log"),
    ] {
        let err = Case::new(&edit(from, to)).check_fails();
        assert!(err.starts_with(&format!("error: model.yaml:{line}:")), "{err}");
        assert!(err.contains(word), "{err}");
    }
    let err = Case::new(&edit("seed: 7", "seed: -1")).check_fails();
    assert!(err.starts_with("error: model.yaml:32:"), "{err}");
}
