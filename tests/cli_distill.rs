//! `fptgen import --lower approximate` and block-wise distillation with
//! `fptgen train --teacher` (docs/import.md, "Approximate rewrites";
//! docs/training.md, "Block-wise distillation").
//!
//! The fixture `tests/fixtures/qonnx/conv7.onnx` (`make_fixtures.py make`)
//! has a 7x7 and a 5x5 convolution. Without the flag the import refuses the
//! 7x7 one, naming it and the rewrite. With it, the 7x7 becomes three
//! stacked 3x3 layers, which `fptgen train --teacher` trains against the
//! original graph. The block's error is measured here independently of the
//! trainer: QONNX's own executor (`make_fixtures.py tensors`) gives the
//! teacher's block input and output on held-out inputs, and `fptgen
//! simulate` runs a model of the block's layers alone (cut from the
//! imported model file) with the weights before and after training; the
//! mean squared error must fall. The distilled network must still pass
//! `fptgen check` and generate.
//!
//! Needs python3 with `qonnx` (which `tests/run.sh` installs); without it
//! the test fails, it is never skipped.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::{fptgen, root};
use fptgen_sim::tensor::{read_npy, read_npz, write_npy, write_npz, NamedArray, OutValues, Values};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Held-out inputs of the independent measurement.
const HELD_OUT: usize = 24;

fn conv7() -> PathBuf {
    root().join("tests/fixtures/qonnx/conv7.onnx")
}

fn floats(path: &Path) -> (Vec<usize>, Vec<f64>) {
    let a = read_npy(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    match a.values {
        Values::Float(v) => (a.shape, v),
        Values::Int(_) => panic!("{}: expected floats, got {}", path.display(), a.dtype),
    }
}

#[test]
fn import_without_lower_approximate_refuses_the_7x7_convolution_naming_it_and_the_rewrite() {
    let dir = tempfile::tempdir().unwrap();
    let (code, _, err) = fptgen(&["import", conv7().to_str().unwrap(), "-o", "imported"], dir.path());
    assert_eq!(code, 1, "{err}");
    for w in ["conv7.onnx", "node 'conv7' (Conv)", "7x7 convolution as 3 stacked 3x3 convolutions", "--lower approximate"] {
        assert!(err.contains(w), "expected {w:?} in: {err}");
    }
    assert!(!dir.path().join("imported").exists(), "something was written");
}

/// Where a block sits in an imported model file: its first layer, the
/// layer after it, its input's shape and format (the output format of
/// layer `format_of`, or the network input's) and its layers with
/// parameters.
struct Cut<'a> {
    first: &'a str,
    stop: &'a str,
    shape: &'a [usize],
    format_of: Option<&'a str>,
    params: &'a [&'a str],
}

/// The block `cut` as a model of its own with the block's arrays of
/// `archive`; returns the model file's path.
fn block_model(imported: &Path, archive: &str, tag: &str, cut: &Cut) -> PathBuf {
    let text = std::fs::read_to_string(imported.join("model.yaml")).unwrap();
    let at = |name: &str| text.find(&format!("  - name: {name} ")).unwrap_or_else(|| panic!("layer {name} in model.yaml"));
    let (start, end) = (at(cut.first), at(cut.stop));
    let format = match cut.format_of {
        Some(l) => text[at(l)..start].lines().find_map(|l| l.trim().strip_prefix("output: ")).expect("the output format").to_string(),
        None => text.lines().find_map(|l| l.trim().strip_prefix("format: ")).expect("the input format").to_string(),
    };
    let weights = format!("block_{tag}.npz");
    let shape: Vec<String> = cut.shape.iter().map(usize::to_string).collect();
    let yaml = format!("name: block\ninput:\n  shape: [{}]\n  format: {format}\nweights: {weights}\nlayers:\n{}", shape.join(", "), &text[start..end]);
    let arrays = read_npz(&imported.join(archive)).unwrap();
    let named: Vec<NamedArray> = arrays
        .into_iter()
        .filter(|(k, _)| cut.params.iter().any(|p| k.starts_with(&format!("{p}/"))))
        .map(|(name, a)| {
            let values = match a.values {
                Values::Float(v) => OutValues::F64(v),
                Values::Int(v) => OutValues::I64(v.into_iter().map(|x| x as i64).collect()),
            };
            NamedArray { name, shape: a.shape, values }
        })
        .collect();
    assert_eq!(named.len(), 2 * cut.params.len(), "the block's w and b arrays in {archive}");
    write_npz(&imported.join(&weights), &named).unwrap();
    let path = imported.join(format!("block_{tag}.yaml"));
    std::fs::write(&path, yaml).unwrap();
    path
}

/// Mean squared error of the block model's outputs on `x` (NHWC) against
/// `want` (NHWC, flattened per sample).
fn block_mse(model: &Path, x: &Path, want: &[f64], dir: &Path, tag: &str) -> f64 {
    let y = dir.join(format!("y_{tag}.npy"));
    let (code, _, err) = fptgen(&["simulate", model.to_str().unwrap(), "--inputs", x.to_str().unwrap(), "-o", y.to_str().unwrap()], dir);
    assert_eq!(code, 0, "simulate {tag}: {err}");
    let (_, got) = floats(&y);
    assert_eq!(got.len(), want.len());
    got.iter().zip(want).map(|(a, b)| (a - b) * (a - b)).sum::<f64>() / got.len() as f64
}

/// NCHW `[n, c, h, w]` values as NHWC (vectors `[n, k]` as they are).
fn nhwc(shape: &[usize], v: &[f64]) -> Vec<f64> {
    if shape.len() == 2 {
        return v.to_vec();
    }
    let [n, c, h, w] = shape[..] else { panic!("shape {shape:?}") };
    (0..n * h * w * c)
        .map(|j| {
            let (s, y, x, k) = (j / (h * w * c), j / (w * c) % h, j / c % w, j % c);
            v[((s * c + k) * h + y) * w + x]
        })
        .collect()
}

/// Imports `fixture` with `--lower approximate` into `d/imported`, checks
/// that stdout has every one of `says`, distills with `fptgen train
/// --teacher` into `imported/distilled.npz`, and measures the block `cut`
/// before and after against QONNX's tensors `teacher_in` and `teacher_out`
/// on held-out inputs of the network's ONNX input shape `net` (codes of
/// ap_fixed<6,3>: k/8, k in -32..31, another seed than the trainer's).
/// Returns the two mean squared errors.
fn distill_and_measure(d: &Path, fixture: &str, net: &[usize], says: &[&str], cut: &Cut, (teacher_in, teacher_out): (&str, &str)) -> (f64, f64) {
    let onnx = root().join("tests/fixtures/qonnx").join(format!("{fixture}.onnx"));
    let (code, out, err) = fptgen(&["import", onnx.to_str().unwrap(), "-o", "imported", "--lower", "approximate"], d);
    assert_eq!(code, 0, "{err}");
    for w in says {
        assert!(out.contains(w), "expected {w:?} in: {out}");
    }
    let train = ["train", "imported/model.yaml", "--teacher", onnx.to_str().unwrap(), "-o", "imported/distilled.npz", "--samples", "128", "--epochs", "12", "--batch", "8", "--lr", "0.01", "--seed", "3"];
    let (code, out, err) = fptgen(&train, d);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("held-out MSE"), "{out}");
    // Never overwrites.
    let (code, _, err) = fptgen(&train, d);
    assert_eq!(code, 1);
    assert!(err.contains("distilled.npz") && err.contains("already exists"), "{err}");

    let mut rng = ChaCha8Rng::seed_from_u64(99);
    let per: usize = net.iter().product();
    let x: Vec<f64> = (0..HELD_OUT * per).map(|_| f64::from(rng.random_range(-32i32..32)) / 8.0).collect();
    let x_path = d.join("x.npy");
    let x_shape: Vec<usize> = std::iter::once(HELD_OUT).chain(net.iter().copied()).collect();
    write_npy(&x_path, &x_shape, &OutValues::F64(x)).unwrap();
    let t_path = d.join("teacher.npz");
    let script = root().join("tests/fixtures/qonnx/make_fixtures.py");
    let names = format!("{teacher_in},{teacher_out}");
    let o = Command::new("python3")
        .args([script.to_str().unwrap(), "tensors", onnx.to_str().unwrap(), x_path.to_str().unwrap(), &names, t_path.to_str().unwrap()])
        .output()
        .expect("python3");
    assert!(o.status.success(), "QONNX's executor failed (pip install qonnx==1.0.0): {}", String::from_utf8_lossy(&o.stderr));
    let teacher = read_npz(&t_path).unwrap();
    let tensor = |name: &str| {
        let a = &teacher[name];
        let Values::Float(v) = &a.values else { panic!("{name}: not floats") };
        nhwc(&a.shape, v)
    };
    let (block_in, block_out) = (tensor(teacher_in), tensor(teacher_out));
    let bx = d.join("block_x.npy");
    let bx_shape: Vec<usize> = std::iter::once(HELD_OUT).chain(cut.shape.iter().copied()).collect();
    write_npy(&bx, &bx_shape, &OutValues::F64(block_in)).unwrap();
    let imported = d.join("imported");
    let imported = imported.as_path();
    let before = block_mse(&block_model(imported, "weights.npz", "before", cut), &bx, &block_out, d, "before");
    let after = block_mse(&block_model(imported, "distilled.npz", "after", cut), &bx, &block_out, d, "after");
    eprintln!("{fixture}: block {}.. against QONNX on {HELD_OUT} held-out inputs: MSE {before} before, {after} after distillation", cut.first);
    (before, after)
}

/// The distilled model `imported/model.yaml` with `distilled.npz` passes
/// `fptgen check` and generates.
fn distilled_generates(d: &Path) {
    let imported = d.join("imported");
    let text = std::fs::read_to_string(imported.join("model.yaml")).unwrap();
    assert!(text.contains("weights: weights.npz"));
    std::fs::write(imported.join("distilled.yaml"), text.replace("weights: weights.npz", "weights: distilled.npz")).unwrap();
    let (code, _, err) = fptgen(&["check", "imported/distilled.yaml"], d);
    assert_eq!(code, 0, "{err}");
    let (code, _, err) = fptgen(&["generate", "imported/distilled.yaml", "-o", "rtl"], d);
    assert_eq!(code, 0, "{err}");
    assert!(std::fs::read_dir(d.join("rtl")).unwrap().count() > 0, "generate wrote nothing");
}

#[test]
fn distillation_brings_the_stacked_block_closer_to_qonnx_and_the_network_still_generates() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let says = ["distill.yaml", "layers conv2_s1, conv2_s2, conv2 replace node 'conv7' (Conv)", "layers conv3_s1, conv3 replace node 'conv5' (Conv)"];
    let cut = Cut { first: "conv2_s1", stop: "pool1", shape: &[8, 8, 3], format_of: Some("conv1"), params: &["conv2_s1", "conv2_s2", "conv2"] };
    let (before, after) = distill_and_measure(d, "conv7", &[2, 8, 8], &says, &cut, ("q_a0_out", "q_a1_out"));
    assert!(after < 0.8 * before, "the block's MSE against QONNX went from {before} to {after}: not down by 20%");
    let record = std::fs::read_to_string(d.join("imported/distill.yaml")).unwrap();
    for w in ["node: \"conv7\"", "layers: [\"conv2_s1\", \"conv2_s2\", \"conv2\"]", "tensor: \"q_a0_out\"", "tensor: \"q_a1_out\"", "node: \"conv5\""] {
        assert!(record.contains(w), "expected {w:?} in distill.yaml: {record}");
    }
    distilled_generates(d);
}

#[test]
fn a_3x3_stride_2_pool_after_the_7x7_joins_its_block_and_is_distilled_with_it() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // Without the flag: refused at the 7x7 convolution.
    let onnx = root().join("tests/fixtures/qonnx/conv7_pool.onnx");
    let (code, _, err) = fptgen(&["import", onnx.to_str().unwrap(), "-o", "exact"], d);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("node 'stem7' (Conv)"), "{err}");
    let says = ["layers conv1_s1, conv1_s2, conv1, pool1 replace node 'stem7' (Conv)", "MaxPool 'stem_pool': 3x3 stride-2 max-pool as a 2x2 stride-2 max-pool"];
    let cut = Cut { first: "conv1_s1", stop: "flatten1", shape: &[8, 8, 2], format_of: None, params: &["conv1_s1", "conv1_s2", "conv1"] };
    let (before, after) = distill_and_measure(d, "conv7_pool", &[2, 8, 8], &says, &cut, ("q_in_out", "stem_pool_out"));
    assert!(after < 0.8 * before, "the block's MSE against QONNX went from {before} to {after}: not down by 20%");
    let record = std::fs::read_to_string(d.join("imported/distill.yaml")).unwrap();
    assert!(record.contains("tensor: \"stem_pool_out\"") && record.contains("\"pool1\"]"), "{record}");
    distilled_generates(d);
}

#[test]
fn a_layer_norm_becomes_a_batch_norm_that_distillation_brings_closer_to_qonnx() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let onnx = root().join("tests/fixtures/qonnx/layernorm.onnx");
    let (code, _, err) = fptgen(&["import", onnx.to_str().unwrap(), "-o", "exact"], d);
    assert_eq!(code, 1, "{err}");
    for w in ["node 'ln' (LayerNormalization)", "layer normalization as a batch norm", "--lower approximate"] {
        assert!(err.contains(w), "expected {w:?} in: {err}");
    }
    let says = ["layers bn1 replace node 'ln' (LayerNormalization)"];
    let cut = Cut { first: "bn1", stop: "fc2", shape: &[12], format_of: Some("fc1"), params: &["bn1"] };
    let (before, after) = distill_and_measure(d, "layernorm", &[16], &says, &cut, ("q_a1_out", "q_a2_out"));
    assert!(after < 0.8 * before, "the block's MSE against QONNX went from {before} to {after}: not down by 20%");
    distilled_generates(d);
}

#[test]
fn train_teacher_refuses_a_record_that_names_a_missing_layer_and_another_network_as_teacher() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (code, _, err) = fptgen(&["import", conv7().to_str().unwrap(), "-o", "imported", "--lower", "approximate"], d);
    assert_eq!(code, 0, "{err}");
    let record = d.join("imported/distill.yaml");
    let text = std::fs::read_to_string(&record).unwrap();
    std::fs::write(&record, text.replace("\"conv2_s2\"", "\"conv9_s2\"")).unwrap();
    let (code, _, err) = fptgen(&["train", "imported/model.yaml", "--teacher", conv7().to_str().unwrap(), "-o", "w.npz", "--samples", "4", "--epochs", "1"], d);
    assert_eq!(code, 1, "{err}");
    for w in ["distill.yaml", "node 'conv7'", "layer 'conv9_s2'"] {
        assert!(err.contains(w), "expected {w:?} in: {err}");
    }
    assert!(!d.join("w.npz").exists());
    // Another network as the teacher: named, with the input it has.
    std::fs::write(&record, text).unwrap();
    let other = root().join("tests/fixtures/qonnx/layernorm.onnx");
    let (code, _, err) = fptgen(&["train", "imported/model.yaml", "--teacher", other.to_str().unwrap(), "-o", "w.npz", "--samples", "4", "--epochs", "1"], d);
    assert_eq!(code, 1, "{err}");
    for w in ["layernorm.onnx", "input 'x'", "[-1, 16]", "[1, 2, 8, 8]"] {
        assert!(err.contains(w), "expected {w:?} in: {err}");
    }
    assert!(!d.join("w.npz").exists());
    // And without --data or --teacher, train says what it needs.
    let (code, _, err) = fptgen(&["train", "imported/model.yaml"], d);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("--data"), "{err}");
}
