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

/// The block `conv2_s1, conv2_s2, conv2` (the 7x7's stack) as a model of
/// its own, reading `[8, 8, 3]` in the stem's output format, with the
/// block's arrays of `archive`; returns the model file's path.
fn block_model(imported: &Path, archive: &str, tag: &str) -> PathBuf {
    let text = std::fs::read_to_string(imported.join("model.yaml")).unwrap();
    let start = text.find("  - name: conv2_s1 ").expect("layer conv2_s1 in model.yaml");
    let end = text.find("  - name: pool1 ").expect("layer pool1 in model.yaml");
    let stem = &text[text.find("  - name: conv1 ").expect("layer conv1")..start];
    let format = stem.lines().find_map(|l| l.trim().strip_prefix("output: ")).expect("conv1's output format");
    let weights = format!("block_{tag}.npz");
    let yaml = format!("name: block\ninput:\n  shape: [8, 8, 3]\n  format: {format}\nweights: {weights}\nlayers:\n{}", &text[start..end]);
    let arrays = read_npz(&imported.join(archive)).unwrap();
    let named: Vec<NamedArray> = arrays
        .into_iter()
        .filter(|(k, _)| ["conv2_s1/", "conv2_s2/", "conv2/"].iter().any(|p| k.starts_with(p)))
        .map(|(name, a)| {
            let values = match a.values {
                Values::Float(v) => OutValues::F64(v),
                Values::Int(v) => OutValues::I64(v.into_iter().map(|x| x as i64).collect()),
            };
            NamedArray { name, shape: a.shape, values }
        })
        .collect();
    assert_eq!(named.len(), 6, "the block's w and b arrays in {archive}");
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

/// NCHW `[n, c, h, w]` values as NHWC.
fn nhwc(shape: &[usize], v: &[f32]) -> Vec<f64> {
    let [n, c, h, w] = shape[..] else { panic!("shape {shape:?}") };
    (0..n * h * w * c)
        .map(|j| {
            let (s, y, x, k) = (j / (h * w * c), j / (w * c) % h, j / c % w, j % c);
            f64::from(v[((s * c + k) * h + y) * w + x])
        })
        .collect()
}

#[test]
fn distillation_brings_the_stacked_block_closer_to_qonnx_and_the_network_still_generates() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (code, out, err) = fptgen(&["import", conv7().to_str().unwrap(), "-o", "imported", "--lower", "approximate"], d);
    assert_eq!(code, 0, "{err}");
    for w in ["distill.yaml", "layers conv2_s1, conv2_s2, conv2 replace node 'conv7' (Conv)", "layers conv3_s1, conv3 replace node 'conv5' (Conv)"] {
        assert!(out.contains(w), "expected {w:?} in: {out}");
    }
    let imported = d.join("imported");
    let record = std::fs::read_to_string(imported.join("distill.yaml")).unwrap();
    for w in ["node: \"conv7\"", "layers: [\"conv2_s1\", \"conv2_s2\", \"conv2\"]", "tensor: \"q_a0_out\"", "tensor: \"q_a1_out\"", "node: \"conv5\""] {
        assert!(record.contains(w), "expected {w:?} in distill.yaml: {record}");
    }

    let teacher = conv7();
    let train = ["train", "imported/model.yaml", "--teacher", teacher.to_str().unwrap(), "-o", "imported/distilled.npz", "--samples", "128", "--epochs", "12", "--batch", "8", "--lr", "0.01", "--seed", "3"];
    let (code, out, err) = fptgen(&train, d);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("held-out MSE"), "{out}");
    // Never overwrites.
    let (code, _, err) = fptgen(&train, d);
    assert_eq!(code, 1);
    assert!(err.contains("distilled.npz") && err.contains("already exists"), "{err}");

    // Held-out network inputs (codes of ap_fixed<6,3>: k/8, k in -32..31),
    // another seed than the trainer's.
    let mut rng = ChaCha8Rng::seed_from_u64(99);
    let x: Vec<f64> = (0..HELD_OUT * 2 * 64).map(|_| f64::from(rng.random_range(-32i32..32)) / 8.0).collect();
    let x_path = d.join("x.npy");
    write_npy(&x_path, &[HELD_OUT, 2, 8, 8], &OutValues::F64(x)).unwrap();
    let t_path = d.join("teacher.npz");
    let script = root().join("tests/fixtures/qonnx/make_fixtures.py");
    let o = Command::new("python3")
        .args([script.to_str().unwrap(), "tensors", conv7().to_str().unwrap(), x_path.to_str().unwrap(), "q_a0_out,q_a1_out", t_path.to_str().unwrap()])
        .output()
        .expect("python3");
    assert!(o.status.success(), "QONNX's executor failed (pip install qonnx==1.0.0): {}", String::from_utf8_lossy(&o.stderr));
    let teacher = read_npz(&t_path).unwrap();
    let tensor = |name: &str| {
        let a = &teacher[name];
        let Values::Float(v) = &a.values else { panic!("{name}: not floats") };
        nhwc(&a.shape, &v.iter().map(|&x| x as f32).collect::<Vec<f32>>())
    };
    let (block_in, block_out) = (tensor("q_a0_out"), tensor("q_a1_out"));
    let bx = d.join("block_x.npy");
    write_npy(&bx, &[HELD_OUT, 8, 8, 3], &OutValues::F64(block_in)).unwrap();
    let before = block_mse(&block_model(&imported, "weights.npz", "before"), &bx, &block_out, d, "before");
    let after = block_mse(&block_model(&imported, "distilled.npz", "after"), &bx, &block_out, d, "after");
    eprintln!("block conv2_s1..conv2 against QONNX on {HELD_OUT} held-out inputs: MSE {before} before, {after} after distillation");
    assert!(after < 0.8 * before, "the block's MSE against QONNX went from {before} to {after}: not down by 20%");

    // The distilled network passes check and generates.
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
fn train_teacher_refuses_a_record_that_names_a_missing_layer() {
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
    // And without --data or --teacher, train says what it needs.
    let (code, _, err) = fptgen(&["train", "imported/model.yaml"], d);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("--data"), "{err}");
}
