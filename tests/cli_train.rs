//! `fptgen train`: host training on a data directory of `.npy` arrays (and
//! of IDX files), checked from outside: the written archive's accuracy is
//! recomputed with `fptgen simulate`, runs are reproducible whatever the
//! number of threads, and bad input is refused with the file and index.

mod common;

use std::fs;
use std::path::Path;
use std::process::Command;

use npyz::WriterBuilder;

use common::{fptgen, root};

/// A task `examples/tiny` (2 inputs, 2 ReLU outputs) can learn: label 0
/// when x0 > x1, else 1, with a margin; inputs in [-3, 3].
fn task(n: usize, seed: u64) -> (Vec<f32>, Vec<u8>) {
    let mut s = seed;
    let mut next = move || {
        s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        ((s >> 33) as f64 / (1u64 << 31) as f64) as f32 * 6.0 - 3.0
    };
    let (mut x, mut y) = (Vec::new(), Vec::new());
    while y.len() < n {
        let (a, b) = (next(), next());
        if (a - b).abs() < 0.25 {
            continue;
        }
        x.extend([a, b]);
        y.push(u8::from(a <= b));
    }
    (x, y)
}

fn write_npy<T: npyz::Serialize + npyz::AutoSerialize + Copy>(path: &Path, shape: &[u64], v: &[T]) {
    let mut out = Vec::new();
    let mut w = npyz::WriteOptions::new().default_dtype().shape(shape).writer(&mut out).begin_nd().expect("npy");
    w.extend(v.iter().copied()).expect("write");
    w.finish().expect("finish");
    fs::write(path, out).expect("write npy");
}

/// A copy of tiny without its training section, and a data directory.
fn setup(dir: &Path) -> std::path::PathBuf {
    let model = common::untrained_copy(dir, "tiny");
    let data = dir.join("data");
    fs::create_dir_all(&data).expect("mkdir");
    let (x, y) = task(1200, 7);
    write_npy(&data.join("x_train.npy"), &[1200, 2], &x);
    write_npy(&data.join("y_train.npy"), &[1200], &y);
    let (x, y) = task(400, 8);
    write_npy(&data.join("x_test.npy"), &[400, 2], &x);
    write_npy(&data.join("y_test.npy"), &[400], &y);
    model
}

fn train(dir: &Path, extra: &[&str], threads: &str) -> (i32, String, String) {
    // 4 epochs of 63 steps: the step size of a 2-input network is 10 times
    // the default (which is MNIST's), or Adam moves no weight by more than 0.5.
    let mut args =
        vec!["train", "tiny-untrained/model.yaml", "--data", "data", "--epochs", "4", "--batch", "16", "--validation", "200", "--lr", "0.02"];
    args.extend_from_slice(extra);
    let out = Command::new(env!("CARGO_BIN_EXE_fptgen"))
        .args(&args)
        .current_dir(dir)
        .env("RAYON_NUM_THREADS", threads)
        .output()
        .expect("run fptgen");
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(!err.contains("panicked"), "{err}");
    (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stdout).into_owned(), err)
}

#[test]
fn trains_and_the_archive_scores_what_was_printed() {
    let tmp = tempfile::tempdir().expect("tmp");
    let dir = tmp.path();
    setup(dir);
    let (code, out, err) = train(dir, &["--loss", "cross-entropy", "-o", "a.npz"], "2");
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("1000 training, 200 validation, 400 test samples"), "{out}");
    let line = out.lines().find(|l| l.starts_with("test accuracy")).expect("test accuracy line");
    let printed: usize = line.rsplit('(').next().and_then(|s| s.split('/').next()).and_then(|s| s.parse().ok()).expect("count");

    // Recompute from outside: simulate the test inputs with the archive.
    let model = fs::read_to_string(dir.join("tiny-untrained/model.yaml")).expect("model");
    fs::write(dir.join("tiny-untrained/trained.yaml"), model.replace("weights: weights.npz", "weights: ../a.npz")).expect("write");
    let (code, sim, err) = fptgen(&["simulate", "tiny-untrained/trained.yaml", "--inputs", "data/x_test.npy"], dir);
    assert_eq!(code, 0, "{err}");
    let (_, labels) = task(400, 8);
    let mut right = 0;
    for (line, &l) in sim.lines().zip(&labels) {
        let v: Vec<f64> = line.split_whitespace().map(|t| t.trim_matches(|c| c == '[' || c == ']' || c == ',').parse().expect("float")).collect();
        let arg = if v[1] > v[0] { 1 } else { 0 };
        right += usize::from(arg == usize::from(l));
    }
    assert_eq!(right, printed, "printed test accuracy differs from simulate's");
    assert!(right >= 380, "only {right}/400 right on a separable task: {out}");

    // Reproducible, whatever the number of threads.
    let (code, _, err) = train(dir, &["--loss", "cross-entropy", "-o", "b.npz"], "1");
    assert_eq!(code, 0, "{err}");
    assert_eq!(fs::read(dir.join("a.npz")).expect("a"), fs::read(dir.join("b.npz")).expect("b"), "same seed, different bits");
    let (code, _, err) = train(dir, &["--loss", "cross-entropy", "--seed", "2", "-o", "c.npz"], "2");
    assert_eq!(code, 0, "{err}");
    assert_ne!(fs::read(dir.join("a.npz")).expect("a"), fs::read(dir.join("c.npz")).expect("c"), "the seed is ignored");

    // Never overwrites.
    let before = fs::read(dir.join("a.npz")).expect("a");
    let (code, _, err) = train(dir, &["-o", "a.npz"], "2");
    assert_eq!(code, 1);
    assert!(err.contains("a.npz: already exists"), "{err}");
    assert_eq!(before, fs::read(dir.join("a.npz")).expect("a"));
    // The model's own archive exists too: refused without -o.
    let (code, _, err) = train(dir, &[], "2");
    assert_eq!(code, 1);
    assert!(err.contains("weights.npz: already exists"), "{err}");
}

#[test]
fn bad_data_is_named() {
    let tmp = tempfile::tempdir().expect("tmp");
    let dir = tmp.path();
    setup(dir);
    // A label beyond the two outputs, at index 5.
    let (x, mut y) = task(1200, 7);
    y[5] = 2;
    write_npy(&dir.join("data/y_train.npy"), &[1200], &y);
    let (code, _, err) = train(dir, &["-o", "x.npz"], "2");
    assert_eq!(code, 1);
    assert!(err.contains("y_train.npy") && err.contains("[5]") && err.contains("label 2"), "{err}");
    // Inputs of the wrong width.
    write_npy(&dir.join("data/y_train.npy"), &[1200], &task(1200, 7).1);
    write_npy(&dir.join("data/x_train.npy"), &[400, 6], &x);
    let (code, _, err) = train(dir, &["-o", "x.npz"], "2");
    assert_eq!(code, 1);
    assert!(err.contains("x_train.npy") && err.contains("[400, 6]"), "{err}");
    // A directory with no data.
    fs::create_dir_all(dir.join("empty")).expect("mkdir");
    let (code, _, err) = fptgen(&["train", "tiny-untrained/model.yaml", "--data", "empty", "-o", "x.npz"], dir);
    assert_eq!(code, 1);
    assert!(err.contains("empty") && err.contains("x_train.npy"), "{err}");
    // A truncated IDX file is named with its offset.
    let idx = dir.join("idx");
    fs::create_dir_all(&idx).expect("mkdir");
    fs::write(idx.join("train-images-idx3-ubyte"), [0u8, 0, 8, 3, 0, 0, 0, 2, 0, 0, 0, 28, 0, 0, 0, 28, 1, 2]).expect("write");
    let (code, _, err) = fptgen(&["train", "tiny-untrained/model.yaml", "--data", "idx", "-o", "x.npz"], dir);
    assert_eq!(code, 1);
    assert!(err.contains("train-images-idx3-ubyte") && err.contains("byte"), "{err}");
    assert!(!dir.join("x.npz").exists(), "a failed run left an archive");
    let _ = root();
}
