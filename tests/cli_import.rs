//! `fptgen import` of QONNX models, checked against QONNX itself.
//!
//! Each fixture of `tests/fixtures/qonnx/` (dense networks, a CNN, a
//! residual CNN with 1x1 convolutions, batch norms and a concat, a
//! residual dense network, standalone Relu and Quant nodes and joins of two
//! formats, BipolarQuant and Trunc) (made by `make_fixtures.py make`
//! with onnx.helper and QONNX `Quant` nodes; and a dense network and a
//! residual CNN with 1x1 convolutions exported by Brevitas,
//! `make_brevitas.py make`) is imported with the CLI; 1,000
//! seeded random inputs on the input format's grid (its extremes and zero
//! first; images transposed to ONNX's NCHW for QONNX) run through QONNX's own executor (`make_fixtures.py run`:
//! `qonnx.core.onnx_exec.execute_onnx`) and through `fptgen simulate` on
//! the imported model, and the outputs must be equal, value for value (the
//! scales are powers of two and every accumulator fits float32's 24 bits,
//! so QONNX's float arithmetic is exact). The expected values come from
//! QONNX, never from fptgen.
//!
//! The imported designs also co-simulate bit-exact in Verilator
//! (`fptgen cosim --vectors 20`).
//!
//! QONNX comes from PyPI (`qonnx`, which `tests/run.sh` installs). Without
//! python3 or the package this test FAILS with the install command: it is
//! never skipped.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::{fptgen, root};
use fptgen_sim::tensor::{read_npy, write_npy, OutValues, Values};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

const INPUTS: usize = 1_000;
const SEED: u64 = 18;

fn fixture(name: &str) -> PathBuf {
    root().join("tests/fixtures/qonnx").join(format!("{name}.onnx"))
}

/// Runs QONNX's executor on `x` through the fixture script.
fn run_qonnx(model: &Path, x: &Path, y: &Path) {
    let script = root().join("tests/fixtures/qonnx/make_fixtures.py");
    let out = Command::new("python3")
        .arg(&script)
        .args(["run".as_ref(), model.as_os_str(), x.as_os_str(), y.as_os_str()])
        .output()
        .expect("python3 is needed: install Python 3, then `pip install qonnx==1.0.0` (tests/run.sh does)");
    assert!(
        out.status.success(),
        "QONNX's executor failed (install it with `pip install qonnx==1.0.0`, as tests/run.sh does):\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn floats(path: &Path) -> (Vec<usize>, Vec<f64>) {
    let a = read_npy(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    match a.values {
        Values::Float(v) => (a.shape, v),
        Values::Int(_) => panic!("{}: expected floats, got {}", path.display(), a.dtype),
    }
}

/// Imports fixture `name` and compares fptgen's simulator with QONNX on random inputs.
fn check_against_qonnx(name: &str) {
    check_file_against_qonnx(&fixture(name), name);
}

/// Imports `file` and compares fptgen's simulator with QONNX on random
/// inputs (`name` in the messages).
fn check_file_against_qonnx(file: &Path, name: &str) {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("imported");
    let (code, stdout, err) = fptgen(&["import", file.to_str().unwrap(), "-o", out.to_str().unwrap()], dir.path());
    assert_eq!(code, 0, "import {name}: {err}");
    assert!(stdout.contains("wrote"), "{stdout}");
    let model = fptgen_sim::model::load(&out.join("model.yaml")).unwrap();
    let (f, n) = (model.input_format, model.input_len());
    let mut rng = ChaCha8Rng::seed_from_u64(SEED);
    let mut x = Vec::with_capacity(INPUTS * n);
    for s in 0..INPUTS {
        for _ in 0..n {
            let raw = match s {
                0 => f.max_raw(),
                1 => f.lossless_min_raw(),
                2 => 0,
                _ => rng.random_range(f.lossless_min_raw()..=f.max_raw()),
            };
            x.push(f.to_f64(raw));
        }
    }
    // fptgen reads [N, h, w, c] images, ONNX [N, c, h, w].
    let shape = &model.input_shape;
    let (xs, onnx_xs) = (dir.path().join("x.npy"), dir.path().join("x_onnx.npy"));
    write_npy(&xs, &[&[INPUTS][..], shape].concat(), &OutValues::F64(x.clone())).unwrap();
    let onnx_shape = match shape[..] {
        [h, w, c] => {
            let nchw = (0..INPUTS * n).map(|j| {
                let (s, k, y, xx) = (j / n, j / (h * w) % c, j / w % h, j % w);
                x[s * n + (y * w + xx) * c + k]
            });
            x = nchw.collect();
            vec![INPUTS, c, h, w]
        }
        _ => vec![INPUTS, n],
    };
    write_npy(&onnx_xs, &onnx_shape, &OutValues::F64(x)).unwrap();
    let want_path = dir.path().join("qonnx.npy");
    run_qonnx(file, &onnx_xs, &want_path);
    let got_path = dir.path().join("fptgen.npy");
    let (code, _, err) =
        fptgen(&["simulate", out.join("model.yaml").to_str().unwrap(), "--inputs", xs.to_str().unwrap(), "--output", got_path.to_str().unwrap()], dir.path());
    assert_eq!(code, 0, "simulate {name}: {err}");
    let (want_shape, want) = floats(&want_path);
    let (got_shape, got) = floats(&got_path);
    assert_eq!(want_shape, vec![INPUTS, model.output_len()], "{name}: QONNX's output shape");
    assert_eq!(got_shape, want_shape, "{name}: output shape");
    let m = model.output_len();
    if let Some(k) = (0..want.len()).find(|&k| want[k] != got[k]) {
        panic!("{name}: input {} output {}: QONNX {} fptgen {}", k / m, k % m, want[k], got[k]);
    }
}

/// The quantization `(scale, zero point)` of an int8 model's input (its
/// interface) and of its last layer's output.
fn int8_quantizations(model: &fptgen_sim::model::Model) -> ((f32, i32), (f32, i32)) {
    use fptgen_sim::model::LayerOp;
    let i = model.interface.as_ref().expect("an int8 import has an interface").quantization;
    let o = match &model.layers.last().unwrap().op {
        LayerOp::DenseInt8(d) => d.output_q(),
        LayerOp::Requantize(r) => r.output_q(),
        op => panic!("an int8 import ends in an int8 layer, not {op:?}"),
    };
    ((i.scale(), i.zero_point()), (o.scale(), o.zero_point()))
}

/// Imports fixture `name` (a graph of float scales: fptgen's int8 domain)
/// and compares fptgen's simulator with QONNX's executor on 1,000 random
/// int8 inputs (the extremes and the zero point first; QONNX gets their
/// real values `(q - z) * s` in float32). QONNX computes in float32 and
/// rounds the real value, fptgen requantizes integers as TFLite does, so
/// they may differ on ties and near them: every output code must be within
/// `max_diff` of QONNX's (its output divided by the output scale, plus the
/// zero point) and at least `min_equal` of them equal. The import is not
/// exact, so it is refused without `--accept-inexact` (nothing written) and
/// says what it measured; QONNX's figures here must agree with what it
/// says (the share of outputs that differ within a point, the largest
/// difference within a code). Returns the number equal and the largest
/// difference.
fn check_int8_against_qonnx(name: &str, max_diff: i64, min_equal: f64) -> (usize, i64) {
    let file = fixture(name);
    refused(&file, &["the import is not exact", "int8 domain", "of the graph's", "--accept-inexact"]);
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("imported");
    let (code, stdout, err) = fptgen(&["import", file.to_str().unwrap(), "-o", out.to_str().unwrap(), "--accept-inexact"], dir.path());
    assert_eq!(code, 0, "import {name}: {err}");
    assert!(stdout.contains("wrote"), "{stdout}");
    let (said_differ, said_outputs, said_worst) = reported_disagreement(&err);
    let model = fptgen_sim::model::load(&out.join("model.yaml")).unwrap();
    let ((s_in, z_in), (s_out, z_out)) = int8_quantizations(&model);
    let n = model.input_len();
    let mut rng = ChaCha8Rng::seed_from_u64(SEED);
    let codes: Vec<i64> = (0..INPUTS * n)
        .map(|j| match j / n {
            0 => 127,
            1 => -128,
            2 => i64::from(z_in),
            _ => rng.random_range(-128..=127),
        })
        .collect();
    let (xs, onnx_xs) = (dir.path().join("x.npy"), dir.path().join("x_onnx.npy"));
    write_npy(&xs, &[INPUTS, n], &OutValues::F64(codes.iter().map(|&q| q as f64).collect())).unwrap();
    let reals = codes.iter().map(|&q| f64::from((q - i64::from(z_in)) as f32 * s_in)).collect();
    write_npy(&onnx_xs, &[INPUTS, n], &OutValues::F64(reals)).unwrap();
    let want_path = dir.path().join("qonnx.npy");
    run_qonnx(&file, &onnx_xs, &want_path);
    let got_path = dir.path().join("fptgen.npy");
    let (code, _, err) =
        fptgen(&["simulate", out.join("model.yaml").to_str().unwrap(), "--inputs", xs.to_str().unwrap(), "--output", got_path.to_str().unwrap()], dir.path());
    assert_eq!(code, 0, "simulate {name}: {err}");
    let (want_shape, want) = floats(&want_path);
    let (got_shape, got) = floats(&got_path);
    let m = model.output_len();
    assert_eq!(want_shape, vec![INPUTS, m], "{name}: QONNX's output shape");
    assert_eq!(got_shape, want_shape, "{name}: output shape");
    let (mut equal, mut worst) = (0, 0);
    for k in 0..want.len() {
        let q = (f64::from(want[k] as f32 / s_out)).round() as i64 + i64::from(z_out);
        let d = (q - got[k] as i64).abs();
        assert!(d <= max_diff, "{name}: input {} output {}: QONNX {} (code {q}) fptgen code {}", k / m, k % m, want[k], got[k]);
        equal += usize::from(d == 0);
        worst = worst.max(d);
    }
    let fraction = equal as f64 / want.len() as f64;
    eprintln!("{name}: {equal} of {} outputs equal to QONNX's ({:.2}%), largest difference {worst} code(s)", want.len(), 100.0 * fraction);
    assert!(fraction >= min_equal, "{name}: only {equal} of {} outputs equal QONNX's", want.len());
    let (said, seen) = (said_differ as f64 / said_outputs as f64, 1.0 - fraction);
    assert!((said - seen).abs() <= 0.01, "{name}: the import says {said_differ} of {said_outputs} outputs differ, QONNX differs on {} of {}", want.len() - equal, want.len());
    assert!(worst <= said_worst + 1, "{name}: the import says at most {said_worst} code(s), QONNX differs by {worst}");
    (equal, worst)
}

/// The figures of an inexact import's warning: outputs that differ, outputs
/// compared, the largest difference in codes (0 when none differ).
fn reported_disagreement(stderr: &str) -> (usize, usize, i64) {
    let line = stderr.lines().find(|l| l.starts_with("warning: the import is not exact")).unwrap_or_else(|| panic!("no inexact warning in: {stderr}"));
    let before = line.split(" of the graph's ").next().unwrap();
    let differ: usize = before.rsplit(' ').next().unwrap().parse().unwrap();
    let after = line.split(" of the graph's ").nth(1).unwrap();
    let outputs: usize = after.split(' ').next().unwrap().parse().unwrap();
    let worst = line.split("by at most ").nth(1).map_or(0, |r| r.split(' ').next().unwrap().parse().unwrap());
    assert!(differ <= outputs && (differ == 0) == (worst == 0), "{line}");
    (differ, outputs, worst)
}

#[test]
fn dense_relu_network_equals_qonnx() {
    check_against_qonnx("mlp_relu");
}

#[test]
fn gemm_flatten_and_every_rounding_mode_equal_qonnx() {
    check_against_qonnx("gemm_modes");
}

#[test]
fn cnn_with_valid_and_strided_same_convs_pooling_and_flatten_equals_qonnx() {
    check_against_qonnx("cnn");
}

/// A 4x4 stride-4 MaxPool, imported as two 2x2 stride-2 pools (an exact
/// rewrite: `lower/pool.rs`), on a 9x9 image (the last row and column
/// dropped).
#[test]
fn a_4x4_stride_4_pool_as_two_2x2_pools_equals_qonnx() {
    check_against_qonnx("pool4");
}

/// Residual additions (fptgen's add, and concat + 3x3 conv with a relu),
/// 1x1 convolutions of strides 1 and 2 (lowered to padded 3x3), two
/// BatchNormalizations (one right after a conv), a Concat of two branches.
#[test]
fn residual_cnn_with_1x1_convs_batchnorm_and_concat_equals_qonnx() {
    check_against_qonnx("resnet");
}

/// Brevitas's own export (`make_brevitas.py make`: QuantIdentity,
/// QuantLinear with Int16 biases and one without a bias, which Brevitas
/// writes as a MatMul of a Transpose, QuantReLU, fixed-point quantizers of
/// 4 to 8 bits) of a dense network, imported as Brevitas wrote it.
#[test]
fn brevitas_dense_network_equals_qonnx() {
    check_against_qonnx("brevitas_mlp");
}

/// Brevitas's export of a residual CNN: 3x3 and 1x1 QuantConv2d (stride 1
/// and 2), two residual additions (of two formats, and of one shared
/// QuantIdentity), QuantReLU, max-pool, flatten, QuantLinear.
#[test]
fn brevitas_residual_cnn_with_1x1_convs_equals_qonnx() {
    check_against_qonnx("brevitas_cnn");
}

/// The README's real model: a 784-64-10 network trained on MNIST with
/// Brevitas (`examples/brevitas_mnist/`, 4-bit weights and activations,
/// 22-bit accumulators).
#[test]
fn brevitas_mnist_example_equals_qonnx() {
    check_file_against_qonnx(&root().join("examples/brevitas_mnist/mnist_dense.onnx"), "brevitas_mnist");
}

/// The imported designs are generated and co-simulated in Verilator bit
/// for bit against the simulator, with the predicted cycles.
#[test]
fn imported_designs_cosimulate() {
    common::require("verilator");
    for name in ["mlp_relu", "gemm_modes", "cnn", "resnet", "mlp_residual", "casts_cnn", "bipolar_trunc", "brevitas_mlp"] {
        let dir = tempfile::tempdir().unwrap();
        let (code, _, err) = fptgen(&["import", fixture(name).to_str().unwrap(), "-o", "imported"], dir.path());
        assert_eq!(code, 0, "import {name}: {err}");
        let (code, out, err) = fptgen(&["cosim", "imported/model.yaml", "--vectors", "20"], dir.path());
        assert_eq!(code, 0, "cosim {name}: {out}{err}");
        assert!(out.contains("vectors 20 mismatches 0"), "{name}: {out}");
    }
}

/// Imports `file` expecting exit 1, an error with every one of `words`, and
/// nothing written.
fn refused(file: &Path, words: &[&str]) {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("imported");
    let (code, _, err) = fptgen(&["import", file.to_str().unwrap(), "-o", out.to_str().unwrap()], dir.path());
    assert_eq!(code, 1, "{}: {err}", file.display());
    assert!(err.starts_with("error: "), "{err}");
    for w in words {
        assert!(err.contains(w), "expected {w:?} in: {err}");
    }
    assert!(!out.exists(), "{}: something was written", out.display());
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0, "files left beside the output");
}

#[test]
fn refuses_a_file_that_is_not_onnx() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("model.onnx");
    std::fs::write(&bad, b"name: not onnx\nlayers: []\n\xff\xff\xff").unwrap();
    // Kept outside the checked directory: refused() wants it empty.
    let kept = tempfile::tempdir().unwrap();
    let file = kept.path().join("model.onnx");
    std::fs::rename(&bad, &file).unwrap();
    refused(&file, &["model.onnx", "not an ONNX model"]);
}

#[test]
fn refuses_an_operator_with_no_mapping() {
    refused(&fixture("bad_sigmoid"), &["bad_sigmoid.onnx", "node 'act_sigmoid' (Sigmoid)", "no mapping"]);
}

/// Brevitas's default float-scaled quantizers (`make_brevitas.py
/// make-int8`): int8 input, per-tensor and per-channel weight scales, an
/// Int32Bias, no bias (MatMul of a Transpose), a float bias, unsigned
/// QuantReLUs, as dense_int8 layers.
#[test]
fn brevitas_float_scales_map_to_int8_within_one_code_of_qonnx() {
    check_int8_against_qonnx("brevitas_int8", 1, 0.99);
}

/// Float scales with zero points (`make_fixtures.py make-int8`): an
/// unsigned input with zero point 37, per-channel weight scales, float
/// biases by an Add and by Gemm's C, a Relu after a signed Quant with zero
/// point -5, a standalone Quant (requantize, HALF_UP), an IntQuant.
#[test]
fn float_scales_and_zero_points_map_to_int8_within_one_code_of_qonnx() {
    check_int8_against_qonnx("int8_affine", 1, 0.99);
}

/// A small MLP as a new user writes it (`make_fixtures.py make-int8`,
/// `int8_mlp`): power-of-two activation scales, weights of scale 0.0371.
/// Each layer is within one code of the graph on its own inputs, but a
/// hidden code one off moves an output by up to |w| s_w s_in / s_out = 127
/// x 0.0371 codes, so the outputs may differ by more than one: what the
/// import reports, and QONNX agrees.
#[test]
fn an_int8_mlp_reports_its_disagreement_and_qonnx_agrees() {
    let (_, worst) = check_int8_against_qonnx("int8_mlp", 6, 0.99);
    assert!(worst >= 1, "some output differs from QONNX's (else the report's claim is untested)");
}

/// The int8 imports (dense_int8 and requantize hardware) and the
/// per-channel BipolarQuant and Trunc batch norms are generated and
/// co-simulated in Verilator bit for bit against the simulator.
#[test]
fn int8_and_per_channel_imports_cosimulate() {
    common::require("verilator");
    for name in ["brevitas_int8", "int8_affine", "channels_v1"] {
        let dir = tempfile::tempdir().unwrap();
        let (code, _, err) = fptgen(&["import", fixture(name).to_str().unwrap(), "-o", "imported", "--accept-inexact"], dir.path());
        assert_eq!(code, 0, "import {name}: {err}");
        let (code, out, err) = fptgen(&["cosim", "imported/model.yaml", "--vectors", "20"], dir.path());
        assert_eq!(code, 0, "cosim {name}: {out}{err}");
        assert!(out.contains("vectors 20 mismatches 0"), "{name}: {out}");
    }
}

#[test]
fn refuses_an_int8_convolution() {
    refused(&fixture("bad_int8_conv"), &["node 'conv_float' (Conv)", "no int8 convolution", "node 'q_in' (Quant)", "int8 domain"]);
}

#[test]
fn refuses_an_int8_activation_that_is_not_8_bits() {
    refused(&fixture("bad_int8_bits"), &["node 'q_a4' (Quant)", "bit width 4", "8 bits"]);
}

#[test]
fn refuses_an_int8_weight_zero_point() {
    refused(&fixture("bad_int8_weight_zeropt"), &["node 'q_w_zp' (Quant)", "weight zero point other than 0"]);
}

#[test]
fn refuses_a_scale_that_is_not_a_power_of_two() {
    // Not a power of two: the int8 domain, where the MatMul's output must be an 8-bit Quant.
    refused(&fixture("bad_scale"), &["node 'q_w_third' (Quant)", "scale 0.3", "not a power of two", "node 'fc1' (MatMul)", "8-bit Quant"]);
}

#[test]
fn refuses_padding_that_is_not_tensorflows_same() {
    refused(&fixture("bad_pads"), &["node 'conv_even' (Conv)", "pads [1, 1, 1, 1]", "[0, 0, 1, 1]"]);
}

#[test]
fn refuses_a_dynamic_shape() {
    refused(&fixture("bad_dynamic"), &["bad_dynamic.onnx", "input 'x'", "dynamic size"]);
}

/// The same between vectors: a residual Add with a Relu (concat + [I I]
/// dense), a BatchNormalization of a vector, a Concat of two dense
/// branches and its Add without a Relu to a third (fptgen's add).
#[test]
fn residual_mlp_with_vector_batchnorm_concat_and_adds_equals_qonnx() {
    check_against_qonnx("mlp_residual");
}

/// An Add of two formats that neither holds (both widened by a cast).
#[test]
fn add_of_two_formats_is_widened_and_equals_qonnx() {
    check_against_qonnx("add_formats");
}

/// Standalone Relu and Quant nodes (after a tensor with two readers, after
/// the input Quant, after another Quant between two layers) and the
/// widening casts before an Add and a Concat of different formats.
#[test]
fn standalone_relu_and_quant_and_widened_joins_equal_qonnx() {
    check_against_qonnx("casts_cnn");
}

/// BipolarQuant weights (scales 2^-2 and 1) and a BipolarQuant of an
/// activation (two batch norms: a step and a sign), and Trunc version 1
/// (QONNX opset 1: FLOOR and ROUND, not clipped).
#[test]
fn bipolar_quant_and_trunc_v1_equal_qonnx() {
    check_against_qonnx("bipolar_trunc");
}

/// Trunc version 2 (QONNX opset 2: an output scale, clipped).
#[test]
fn trunc_v2_equals_qonnx() {
    check_against_qonnx("trunc_v2");
}

/// A Trunc of values finer than its scale: QONNX rounds them to the scale
/// (ties to even), then truncates; two batch norms that each round once.
#[test]
fn trunc_of_values_finer_than_its_scale_equals_qonnx() {
    check_against_qonnx("trunc_fine");
}

/// Per-channel scales of BipolarQuant (weights of MatMul and of Gemm
/// transB 1, an activation) and of Trunc version 1, some channels coarser
/// than the input.
#[test]
fn per_channel_bipolar_quant_and_trunc_v1_equal_qonnx() {
    check_against_qonnx("channels_v1");
}

/// Trunc version 2 with per-channel scales and output scales (clipped),
/// and a per-tensor one of an input finer than its scale.
#[test]
fn per_channel_trunc_v2_equals_qonnx() {
    check_against_qonnx("channels_v2");
}

#[test]
fn refuses_a_per_channel_bipolar_scale_that_is_not_a_power_of_two() {
    refused(&fixture("bad_bipolar_channels"), &["node 'bipolar_ch_third' (BipolarQuant)", "channel 2", "not a power of two"]);
}

#[test]
fn refuses_a_bipolar_quant_whose_scale_is_not_a_power_of_two() {
    refused(&fixture("bad_bipolar_scale"), &["node 'bipolar_third' (BipolarQuant)", "scale 0.333", "not a power of two"]);
}

#[test]
fn refuses_a_join_whose_common_format_needs_more_than_64_bits() {
    refused(&fixture("bad_wide_formats"), &["node 'cat_wide' (Concat)", "ap_fixed<40,40", "ap_fixed<40,0", "more than 64 bits"]);
}

#[test]
fn refuses_a_batchnorm_that_has_no_fixed_point_form() {
    refused(&fixture("bad_bn"), &["node 'bn_sqrt2' (BatchNormalization)", "channel 1", "sqrt(2)", "not a dyadic rational"]);
}

#[test]
fn refuses_a_1x1_convolution_whose_3x3_lowering_would_read_other_pixels() {
    refused(&fixture("bad_1x1_even"), &["node 'conv_1x1_even' (Conv)", "stride-2 1x1", "6x6", "odd pixels"]);
}

#[test]
fn refuses_a_directory_it_did_not_create() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("notes.txt"), "mine").unwrap();
    let (code, _, err) = fptgen(&["import", fixture("mlp_relu").to_str().unwrap(), "-o", "."], dir.path());
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("was not created by fptgen"), "{err}");
    assert!(!dir.path().join("model.yaml").exists());
}

/// A graph whose input is far larger than a model file may describe (a
/// 65536 x 65536 image: 2^32 values) is refused at its input with the
/// bound, before anything proportional to its size is allocated (the
/// process once aborted allocating 68 GB). The graph is tests/fixtures'
/// cnn.onnx with its input's height and width changed by the onnx package.
#[test]
fn refuses_an_input_beyond_the_size_bound() {
    let dir = tempfile::tempdir().unwrap();
    let big = edited(dir.path(), "cnn", "huge_input", "d = g.input[0].type.tensor_type.shape.dim\nd[2].dim_value = 65536\nd[3].dim_value = 65536");
    refused(&big, &["huge_input.onnx", "input 'x'", "2 x 65536 x 65536 = 8589934592 values", "at most 1048576"]);
}

/// tests/fixtures' `fixture`.onnx changed by `edit` (Python, with `m` the
/// model and `g` its graph, using the onnx package that qonnx brings) and
/// saved in `dir` as `name`.onnx.
fn edited(dir: &Path, fixture_name: &str, name: &str, edit: &str) -> PathBuf {
    let out = dir.join(format!("{name}.onnx"));
    let script = format!("import onnx, sys\nm = onnx.load(sys.argv[1])\ng = m.graph\n{edit}\nonnx.save(m, sys.argv[2])\n");
    let o = Command::new("python3").args(["-c", &script]).arg(fixture(fixture_name)).arg(&out).output().expect("python3");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    out
}

/// mlp_relu.onnx changed by `edit` ([`edited`]).
fn broken(dir: &Path, name: &str, edit: &str) -> PathBuf {
    edited(dir, "mlp_relu", name, edit)
}

/// Graphs broken in different ways each get their own diagnosis, located
/// at the node at fault: a cycle names its nodes, a tensor read but never
/// written names its reader, a tensor written twice names both writers, a
/// graph output written by no node names the output.
#[test]
fn broken_graphs_are_diagnosed_at_the_node_at_fault() {
    let dir = tempfile::tempdir().unwrap();
    let node = |n: &str| format!("next(x for x in g.node if x.name == '{n}')");
    let cycle = broken(dir.path(), "cycle", &format!("{}.input[0] = 'fc1_relu_out'", node("fc1_matmul")));
    refused(&cycle, &["cycle.onnx", "the graph has a cycle", "'fc1_matmul' (MatMul)", "'fc1_bias' (Add)", "'fc1_relu' (Relu)"]);
    let unwritten = broken(dir.path(), "unwritten", &format!("{}.input[0] = 'missing_t'", node("fc2_matmul")));
    refused(&unwritten, &["unwritten.onnx: node 'fc2_matmul' (MatMul)", "reads tensor 'missing_t', which no node, initializer or graph input writes"]);
    let twice = broken(dir.path(), "twice", &format!("{}.output[0] = 'q_w1_out'", node("q_w2")));
    refused(&twice, &["twice.onnx: node 'q_w2' (Quant)", "writes tensor 'q_w1_out', which node 'q_w1' (Quant) writes too"]);
    let nowhere = broken(dir.path(), "nowhere", "g.output[0].name = 'nowhere'");
    refused(&nowhere, &["nowhere.onnx", "the graph output 'nowhere' is written by no node"]);
    let order = broken(dir.path(), "order", "n = g.node[5]\ng.node.remove(n)\ng.node.insert(0, n)");
    refused(&order, &["order.onnx: node 'fc1_relu' (Relu)", "reads tensor 'fc1_bias_out' before node 'fc1_bias' (Add) writes it", "topological order"]);
}

/// A dead branch (a node no graph output depends on) is a warning naming
/// it; the rest imports as without it (the same weights).
#[test]
fn a_dead_branch_is_a_warning_and_the_rest_imports() {
    let dir = tempfile::tempdir().unwrap();
    let dead = broken(dir.path(), "dead", "g.node.append(onnx.helper.make_node('Relu', ['fc1_relu_out'], ['unused_t'], name='stray_relu'))");
    let out = dir.path().join("imported");
    let (code, stdout, err) = fptgen(&["import", dead.to_str().unwrap(), "-o", out.to_str().unwrap()], dir.path());
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("warning: ") && err.contains("dead.onnx: 1 node computes a result no graph output depends on") && err.contains("'stray_relu' (Relu)"), "{err}");
    assert!(stdout.contains("model.yaml"), "{stdout}");
    let plain = dir.path().join("plain");
    let (code, _, err) = fptgen(&["import", fixture("mlp_relu").to_str().unwrap(), "-o", plain.to_str().unwrap()], dir.path());
    assert_eq!(code, 0, "{err}");
    assert!(!err.contains("warning"), "{err}");
    assert_eq!(std::fs::read(out.join("weights.npz")).unwrap(), std::fs::read(plain.join("weights.npz")).unwrap());
}

/// A TFLite model given to `import` is named as such, with the way it comes
/// in instead: the `tflite:` field and `init-weights --from-tflite`.
#[test]
fn a_tflite_model_is_pointed_at_the_tflite_field() {
    refused(&root().join("examples/int8_head/prefix.tflite"), &["prefix.tflite: a TFLite model, not ONNX", "tflite: {file, output}", "init-weights MODEL --from-tflite"]);
}

/// An initializer whose shape claims more values than exist (2^40 x 2^40,
/// past i64) is refused naming the tensor and its shape, without
/// allocating for the shape or overflowing its product.
#[test]
fn an_initializer_with_an_impossible_shape_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let bad = broken(dir.path(), "bad_dims", "w = next(t for t in g.initializer if t.name == 'w1')\ndel w.dims[:]\nw.dims.extend([1 << 40, 1 << 40])");
    refused(&bad, &["bad_dims.onnx", "tensor 'w1' has", "values for shape [1099511627776, 1099511627776]"]);
}
