//! Every kind of bad input named in the foundation issue gets a message that
//! names the file and line:column (or the tensor and index) and a non-zero
//! exit from the `fptgen` binary, never a panic.


mod common;
use common::expect_at;

use fptgen_sim::tensor::{write_npz, NamedArray, OutValues};

/// A valid two-layer model; tests break one thing in it at a time.
/// Line numbers below refer to this text.
const MODEL: &str = "\
name: net
clock_period_ns: 4.0
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
    pe: 2
    simd: 3
  - name: fc2
    type: dense
    inputs: 2
    outputs: 1
    activation: linear
    precision:
      weight: ap_fixed<4,1>
      bias: ap_fixed<8,3>
      accum: ap_fixed<16,6>
      output: ap_fixed<8,3>
";

struct Case {
    dir: tempfile::TempDir,
}

impl Case {
    /// A directory holding `model.yaml` with `text` and a valid `w.npz`
    /// whose arrays can be replaced.
    fn new(text: &str) -> Case {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::write(dir.path().join("model.yaml"), text).expect("write model");
        Case { dir }
    }

    fn weights(&self, arrays: &[NamedArray]) {
        write_npz(&self.dir.path().join("w.npz"), arrays).expect("write npz");
    }

    fn run(&self, args: &[&str]) -> (i32, String, String) {
        common::fptgen(args, self.dir.path())
    }

    /// Runs `fptgen check model.yaml`, expects failure, returns stderr.
    fn check_fails(&self) -> String {
        common::check_fails(self.dir.path())
    }
}

fn arr(name: &str, shape: &[usize], v: Vec<f64>) -> NamedArray {
    NamedArray { name: name.into(), shape: shape.to_vec(), values: OutValues::F64(v) }
}

/// Valid weights for MODEL (all codes representable).
fn good_weights() -> Vec<NamedArray> {
    vec![
        arr("fc1/w", &[2, 3], vec![0.5, -0.25, 0.125, -1.0, 0.875, 0.0]),
        arr("fc1/b", &[2], vec![0.25, -0.5]),
        arr("fc2/w", &[1, 2], vec![0.75, -0.625]),
        arr("fc2/b", &[1], vec![1.5]),
    ]
}

fn replace(mut v: Vec<NamedArray>, a: NamedArray) -> Vec<NamedArray> {
    let i = v.iter().position(|x| x.name == a.name).expect("known tensor");
    v[i] = a;
    v
}


#[test]
fn valid_model_passes_and_prints_summary() {
    let c = Case::new(MODEL);
    c.weights(&good_weights());
    let (code, out, err) = c.run(&["check", "model.yaml"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("net: ok"), "{out}");
    // 3*2 + 2 + 2*1 + 1 parameters, 3*2 + 2*1 MACs.
    assert!(out.contains("total: 11 parameters, 8 MACs per inference, 0 trainable parameters"), "{out}");
}

#[test]
fn malformed_yaml() {
    let c = Case::new(&MODEL.replace("  shape: [3]", "  shape: [3"));
    let err = c.check_fails();
    // The unclosed flow sequence is reported on or after line 4.
    assert!(err.contains("model.yaml:"), "{err}");
    let line: u32 = err.split(':').nth(2).and_then(|s| s.trim().parse().ok()).expect("line number");
    assert!(line >= 4, "{err}");
}

#[test]
fn unknown_field() {
    let c = Case::new(&MODEL.replace("    pe: 2\n", "    pe: 2\n    reuse_factor: 4\n"));
    let err = c.check_fails();
    expect_at(&err, 19, None, &["reuse_factor"]);
}

#[test]
fn misspelled_layer_type() {
    let c = Case::new(&MODEL.replacen("type: dense", "type: dnse", 1));
    let err = c.check_fails();
    expect_at(&err, 9, None, &["dnse", "dense"]);
}

#[test]
fn bad_format_string_points_into_the_string() {
    let c = Case::new(&MODEL.replacen("accum: ap_fixed<16,6>", "accum: ap_fixed<16,6,AP_RDN>", 1));
    let err = c.check_fails();
    // "      accum: " is 13 characters; the string starts at column 14 and the
    // mode token "AP_RDN" 14 bytes into it, at column 28.
    expect_at(&err, 16, Some(28), &["AP_RDN", "accumulator"]);
}

#[test]
fn width_zero_and_above_64() {
    for (w, what) in [("0", "width 0"), ("65", "width 65")] {
        let c = Case::new(&MODEL.replacen("weight: ap_fixed<4,1>", &format!("weight: ap_fixed<{w},1>"), 1));
        let err = c.check_fails();
        expect_at(&err, 14, None, &[what, "64"]);
    }
}

#[test]
fn layer_input_size_mismatch() {
    let c = Case::new(&MODEL.replace("    inputs: 2\n", "    inputs: 5\n"));
    let err = c.check_fails();
    expect_at(&err, 22, Some(13), &["'fc2' has 5 inputs", "'fc1' has 2 outputs"]);
    let c = Case::new(&MODEL.replace("    inputs: 3\n", "    inputs: 4\n"));
    let err = c.check_fails();
    expect_at(&err, 10, Some(13), &["network input has 3 values"]);
}

#[test]
fn pe_and_simd_out_of_range() {
    for (from, to, line, words) in [
        ("    pe: 2\n", "    pe: 0\n", 18, ["pe is 0", "2 outputs"]),
        ("    pe: 2\n", "    pe: 3\n", 18, ["pe is 3", "2 outputs"]),
        ("    simd: 3\n", "    simd: 0\n", 19, ["simd is 0", "3 inputs"]),
        ("    simd: 3\n", "    simd: 4\n", 19, ["simd is 4", "3 inputs"]),
    ] {
        let c = Case::new(&MODEL.replace(from, to));
        let err = c.check_fails();
        expect_at(&err, line, Some(9 + (from.contains("simd") as u32) * 2), &words);
    }
}

#[test]
fn missing_weights_file() {
    let c = Case::new(MODEL);
    let err = c.check_fails();
    assert!(err.contains("w.npz") && err.contains("not found"), "{err}");
}

#[test]
fn tensor_missing_from_archive() {
    let c = Case::new(MODEL);
    let mut w = good_weights();
    w.retain(|a| a.name != "fc2/b");
    c.weights(&w);
    let err = c.check_fails();
    assert!(err.contains("w.npz: tensor 'fc2/b'") && err.contains("missing"), "{err}");
}

#[test]
fn unexpected_tensor_in_archive() {
    let c = Case::new(MODEL);
    let mut w = good_weights();
    w.push(arr("fc1/W", &[2, 3], vec![0.0; 6]));
    c.weights(&w);
    let err = c.check_fails();
    assert!(err.contains("tensor 'fc1/W'") && err.contains("not a tensor of this model"), "{err}");
}

#[test]
fn tensor_of_wrong_shape() {
    let c = Case::new(MODEL);
    c.weights(&replace(good_weights(), arr("fc1/w", &[3, 2], vec![0.0; 6])));
    let err = c.check_fails();
    assert!(err.contains("tensor 'fc1/w'") && err.contains("[3, 2]") && err.contains("[2, 3]"), "{err}");
}

#[test]
fn value_not_representable_names_tensor_and_index() {
    let c = Case::new(MODEL);
    // ap_fixed<4,1> has steps of 1/8: 0.3 is not a multiple of it.
    c.weights(&replace(good_weights(), arr("fc1/w", &[2, 3], vec![0.5, -0.25, 0.125, -1.0, 0.3, 0.0])));
    let err = c.check_fails();
    assert!(err.contains("tensor 'fc1/w' at index [1, 1]") && err.contains("0.3"), "{err}");
    // Out of range: ap_fixed<4,1> holds [-1, 0.875].
    c.weights_replace(&replace(good_weights(), arr("fc2/w", &[1, 2], vec![0.75, 1.0])));
    let err = c.check_fails();
    assert!(err.contains("tensor 'fc2/w' at index [0, 1]"), "{err}");
    // With --quantize the same archive is accepted (1.0 saturates? no: AP_WRAP
    // is the default overflow, so it wraps; either way it loads).
    let (code, _, err) = c.run(&["check", "--quantize", "model.yaml"]);
    assert_eq!(code, 0, "{err}");
}

#[test]
fn non_finite_value() {
    for bad in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
        let c = Case::new(MODEL);
        c.weights(&replace(good_weights(), arr("fc1/b", &[2], vec![0.25, bad])));
        let err = c.check_fails();
        assert!(err.contains("tensor 'fc1/b' at index [1]") && err.contains("not finite"), "{err}");
    }
}

impl Case {
    fn weights_replace(&self, arrays: &[NamedArray]) {
        std::fs::remove_file(self.dir.path().join("w.npz")).expect("remove");
        self.weights(arrays);
    }
}

#[test]
fn axi_options_that_do_not_fit_name_the_option_and_write_nothing() {
    let c = Case::new(MODEL);
    c.weights(&good_weights());
    let mnist = common::root().join("examples/mnist/model.yaml");
    let mnist = mnist.to_str().expect("utf8");
    let cases: Vec<(Vec<&str>, Vec<&str>)> = vec![
        (vec!["generate", "model.yaml", "-o", "out", "--axi", "--axi-width", "12"], vec!["--axi-width is 12", "multiple of 8 from 8 to 1024"]),
        (vec!["generate", "model.yaml", "-o", "out", "--axi", "--axi-width", "2048"], vec!["--axi-width is 2048"]),
        (vec!["generate", "model.yaml", "-o", "out", "--axi", "--axi-batch", "0"], vec!["'--axi-batch <N>'", "from 1 to"]),
        (vec!["generate", "model.yaml", "-o", "out", "--axi-batch", "2"], vec!["--axi"]),
        // mnist's 784 inputs of 8 bits: 6272 bits, over AXI4-Stream's 1024.
        (vec!["generate", mnist, "-o", "out", "--axi"], vec!["6272 bits", "1024-bit limit", "--axi-width"]),
        (vec!["cosim", mnist, "-o", "out", "--axi"], vec!["6272 bits", "--axi-width"]),
        (vec!["cosim", "model.yaml", "-o", "out", "--axi", "--axi-width", "7"], vec!["--axi-width is 7"]),
    ];
    for (args, words) in cases {
        let (code, _, err) = c.run(&args);
        assert_eq!(code, 1, "{args:?}: {err}");
        assert!(err.starts_with("error"), "{args:?}: {err}");
        for w in words {
            assert!(err.contains(w), "{args:?}: expected {w:?} in {err}");
        }
        assert!(!c.dir.path().join("out").exists(), "{args:?} wrote out/");
    }
    // The same options that fit are accepted.
    let (code, _, err) = c.run(&["generate", "model.yaml", "-o", "out", "--axi", "--axi-width", "8", "--axi-batch", "4"]);
    assert_eq!(code, 0, "{err}");
    assert!(c.dir.path().join("out/rtl/net_axi.v").is_file());
}
