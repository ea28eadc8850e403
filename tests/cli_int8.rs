//! The `fptgen` commands on the int8 example (`examples/int8_head/`, issue
//! 15): `check` accepts it and states the interface contract; a wrong
//! interface zero point fails with the message a user needs; `init-weights
//! --from-tflite` makes its archive; `simulate` runs it as the kernel read
//! from the TFLite file; `generate` writes its design (the co-simulations
//! are `tests/cosim_examples.rs`, `tests/litert_rtl.rs` and
//! `flow/tests/cosim_int8.rs`).

mod common;
use common::{fptgen, root};

#[path = "../sim/tests/common/litert.rs"]
mod litert;

use std::path::Path;

use fptgen_sim::int8::tflite::TfliteModel;
use fptgen_sim::int8::Rounding;
use fptgen_sim::tensor::{self, OutValues, Values};
use fptgen_sim::weights::{self, Conversion};

/// A copy of the example in a temporary directory.
fn example_copy() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    for f in ["model.yaml", "weights.npz", "prefix.tflite"] {
        std::fs::copy(root().join("examples/int8_head").join(f), dir.path().join(f)).expect("copy");
    }
    dir
}

#[test]
fn check_accepts_the_int8_example_and_states_the_interface() {
    let (code, out, err) = fptgen(&["check", "examples/int8_head/model.yaml"], &root());
    assert_eq!(code, 0, "{err}");
    // 10 x 32 weights and 10 biases; 320 multiply-accumulates.
    assert!(out.contains("total: 330 parameters, 320 MACs per inference, 330 trainable parameters"), "{out}");
    assert!(out.contains("interface: scale 0.032746293, zero point -128 (from tensor"), "{out}");
    assert!(out.contains("equals the input quantization of 'head' bit for bit"), "{out}");
}

#[test]
fn a_wrong_interface_zero_point_fails_check_with_the_fix() {
    let dir = example_copy();
    let path = dir.path().join("model.yaml");
    let text = std::fs::read_to_string(&path).unwrap();
    let start = text.find("interface:\n").expect("interface");
    let end = text.find("layers:").expect("layers");
    // The prefix's true zero point is -128; this interface says -127.
    let wrong = format!("{}interface: {{scale: 0.032746293, zero_point: -127}}\n{}", &text[..start], &text[end..]);
    std::fs::write(&path, &wrong).unwrap();
    let (code, _, err) = fptgen(&["check", "model.yaml"], dir.path());
    assert_eq!(code, 1, "{err}");
    // Located at the layer's operator (its quantization comes from it).
    let line = wrong.lines().position(|l| l.contains("output: \"StatefulPartitionedCall_1:0\"")).unwrap() + 1;
    assert!(err.starts_with(&format!("error: model.yaml:{line}:")), "{err}");
    for w in [
        "layer 'head' input zero point is -128 but the interface (the network input)'s is -127",
        "add a `type: requantize` layer before 'head'",
    ] {
        assert!(err.contains(w), "{w:?} in {err}");
    }
    // The scale, one float32 step away, is another mismatch.
    let scale = f32::from_bits(0.032746293f32.to_bits() + 1);
    std::fs::write(&path, wrong.replace("scale: 0.032746293, zero_point: -127", &format!("scale: {scale:?}, zero_point: -128"))).unwrap();
    let (code, _, err) = fptgen(&["check", "model.yaml"], dir.path());
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("input scale is 0.032746293") && err.contains(&format!("{scale:?}")), "{err}");
}

#[test]
fn init_weights_from_tflite_makes_the_example_archive() {
    let dir = example_copy();
    let (code, out, err) = fptgen(&["init-weights", "model.yaml", "--from-tflite", "-o", "made.npz"], dir.path());
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("wrote made.npz"), "{out}");
    let model = fptgen_sim::model::load(&dir.path().join("model.yaml")).unwrap();
    let made = weights::load_from(&model, &dir.path().join("made.npz"), Conversion::Exact).unwrap();
    let committed = weights::load(&model, Conversion::Exact).unwrap();
    assert_eq!(made, committed);
    // The codes are the file's int8 weights and int32 biases.
    let m = TfliteModel::open(&dir.path().join("prefix.tflite")).unwrap();
    let head = m.fully_connected().last().unwrap();
    let k = m.fully_connected_kernel(head, Rounding::Single).unwrap();
    let w: Vec<i128> = k.params().weights.iter().map(|&v| i128::from(v)).collect();
    assert_eq!(made.layers[0].tensors[0], w);
}

#[test]
fn simulate_runs_the_example_as_the_tflite_kernel() {
    let dir = example_copy();
    let n = 200;
    let x: Vec<i64> = (0..n * 32).map(|i| ((i * 37 + 11) % 256) as i64 - 128).collect();
    tensor::write_npy(&dir.path().join("x.npy"), &[n, 32], &OutValues::I64(x.clone())).unwrap();
    let (code, _, err) = fptgen(
        &["simulate", "model.yaml", "--inputs", "x.npy", "--input-kind", "raw", "--output-kind", "raw", "-o", "y.npy"],
        dir.path(),
    );
    assert_eq!(code, 0, "{err}");
    let y = tensor::read_npy(&dir.path().join("y.npy")).unwrap();
    assert_eq!(y.shape, vec![n, 10]);
    let Values::Int(y) = y.values else { panic!("raw outputs are integers") };
    let m = TfliteModel::open(Path::new(&dir.path().join("prefix.tflite"))).unwrap();
    let k = m.fully_connected_kernel(m.fully_connected().last().unwrap(), Rounding::Single).unwrap();
    for s in 0..n {
        let xs: Vec<i8> = x[s * 32..(s + 1) * 32].iter().map(|&v| v as i8).collect();
        let want: Vec<i128> = k.run(&xs).unwrap().into_iter().map(i128::from).collect();
        assert_eq!(&y[s * 10..(s + 1) * 10], &want[..], "sample {s}");
    }
}

/// `generate` writes the int8 design: the layer's module with its
/// requantizer, the library files it needs, and a report that states the
/// folding and the requantizer's constants.
#[test]
fn generate_writes_the_int8_design() {
    let dir = example_copy();
    let (code, out, err) = fptgen(&["generate", "model.yaml", "-o", "out"], dir.path());
    assert_eq!(code, 0, "{out}{err}");
    let rtl = dir.path().join("out/rtl");
    for f in ["int8_head.v", "int8_head_head.v", "fptgen_dense.v", "fptgen_requant.v", "fptgen_requant_vec.v"] {
        assert!(rtl.join(f).is_file(), "{f} missing");
    }
    let head = std::fs::read_to_string(rtl.join("int8_head_head.v")).unwrap();
    assert!(head.contains("localparam [8:0] Z_IN = 9'h180;  // -128"), "the interface's zero point -128");
    assert!(head.contains(".OUT_ZP(-4)") && head.contains(".ROUNDING(0),  // single rounding"), "{head}");
    let report = std::fs::read_to_string(dir.path().join("out/report.md")).unwrap();
    assert!(report.contains("PE 1 x SIMD 8, 10 x 4 folds"), "{report}");
}

/// Host quantization-aware training of the int8 head, with the interface
/// and every scale fixed: on a task a linear layer can learn (labels from a
/// random linear teacher of the inputs' real values, `(q + 128) * s_in`),
/// `fptgen train` reaches at least 90 % test accuracy in the bit-accurate
/// simulator (chance: 10 %), and its archive holds int8 weights in
/// -127..127 and biases in the range ES keeps them in.
#[test]
fn train_trains_the_int8_head() {
    let dir = example_copy();
    let data = dir.path().join("data");
    std::fs::create_dir(&data).unwrap();
    let mut state = 11u64;
    let mut next = || {
        state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (state >> 11) as f64 / (1u64 << 53) as f64
    };
    let teacher: Vec<f64> = (0..10 * 32).map(|_| next() * 2.0 - 1.0).collect();
    for (split, n) in [("train", 5000usize), ("test", 1000)] {
        let x: Vec<i8> = (0..n * 32).map(|_| (next() * 256.0).floor() as i32 as i8).collect();
        let y: Vec<u8> = x
            .chunks(32)
            .map(|r| {
                let score = |c: usize| -> f64 { r.iter().enumerate().map(|(i, &q)| teacher[c * 32 + i] * (f64::from(q) + 128.0)).sum() };
                (0..10).fold(0, |b, c| if score(c) > score(b) { c } else { b }) as u8
            })
            .collect();
        write_npy(&data.join(format!("x_{split}.npy")), &[n as u64, 32], &x);
        write_npy(&data.join(format!("y_{split}.npy")), &[n as u64], &y);
    }
    let args = ["train", "model.yaml", "--data", "data", "--epochs", "20", "--lr", "0.01", "--validation", "1000", "-o", "trained.npz"];
    let (code, out, err) = fptgen(&args, dir.path());
    assert_eq!(code, 0, "{out}{err}");
    let line = out.lines().find(|l| l.starts_with("test accuracy")).unwrap_or_else(|| panic!("{out}"));
    let pct: f64 = line.split_whitespace().find_map(|w| w.strip_suffix('%').and_then(|v| v.parse().ok())).unwrap();
    assert!(pct >= 90.0, "{out}");
    let m = fptgen_sim::model::load(&dir.path().join("model.yaml")).unwrap();
    let trained = fptgen_sim::model::Model { weights_path: dir.path().join("trained.npz"), ..m.clone() };
    let p = weights::load(&trained, Conversion::Exact).expect("the trained archive loads");
    let fptgen_sim::model::LayerOp::DenseInt8(d) = &m.layers[0].op else { panic!("dense_int8") };
    let (lo, hi) = d.bias_range();
    assert!(p.layers[0].tensors[0].iter().all(|w| (-127..=127).contains(w)));
    assert!(p.layers[0].tensors[1].iter().all(|b| (lo..=hi).contains(b)));
}

/// A `.npy` file of `shape` holding `values`.
fn write_npy<T: npyz::Serialize + npyz::AutoSerialize + Copy>(path: &Path, shape: &[u64], values: &[T]) {
    use npyz::WriterBuilder;
    let mut w = npyz::WriteOptions::<T>::new().default_dtype().shape(shape).writer(std::fs::File::create(path).unwrap()).begin_nd().unwrap();
    w.extend(values.iter().copied()).unwrap();
    w.finish().unwrap();
}

/// `train-es` trains the int8 head as its hardware does (the hardware's
/// equality is `cosim --train`, `tests/cosim_examples.rs`): on int8 input
/// codes with `labels` (one-hot targets: the output codes of 1.0 and 0.0),
/// the trained archive holds int8 weights in -127..127 and int32 biases in
/// the range that keeps every accumulator in int32, and it loads.
#[test]
fn train_es_trains_the_int8_head() {
    let dir = example_copy();
    let mut state = 5u64;
    let mut next = |n: u64| {
        state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (state >> 33) % n
    };
    let x: Vec<f64> = (0..64 * 32).map(|_| next(256) as f64 - 128.0).collect();
    let labels: Vec<i64> = (0..64).map(|_| next(10) as i64).collect();
    tensor::write_npz(
        &dir.path().join("data.npz"),
        &[
            tensor::NamedArray { name: "x".into(), shape: vec![64, 32], values: OutValues::F64(x) },
            tensor::NamedArray { name: "labels".into(), shape: vec![64], values: OutValues::I64(labels) },
        ],
    )
    .unwrap();
    let (code, out, err) = fptgen(&["train-es", "model.yaml", "--data", "data.npz", "--iterations", "2", "-o", "trained.npz"], dir.path());
    assert_eq!(code, 0, "{out}{err}");
    let m = fptgen_sim::model::load(&dir.path().join("model.yaml")).unwrap();
    let before = weights::load(&m, Conversion::Exact).unwrap();
    let m_after = fptgen_sim::model::Model { weights_path: dir.path().join("trained.npz"), ..m.clone() };
    let after = weights::load(&m_after, Conversion::Exact).expect("the trained archive loads");
    assert_ne!(before, after, "training changed nothing:\n{out}");
    let fptgen_sim::model::LayerOp::DenseInt8(d) = &m.layers[0].op else { panic!("dense_int8") };
    let (lo, hi) = d.bias_range();
    assert!(after.layers[0].tensors[0].iter().all(|w| (-127..=127).contains(w)));
    assert!(after.layers[0].tensors[1].iter().all(|b| (lo..=hi).contains(b)));
    // The trained layer exported as a .tflite runs in the LiteRT
    // interpreter (reference kernels) exactly as the simulator computes it
    // with the trained weights, on 2,000 random network inputs.
    let (code, _, err) = fptgen(&["export", "model.yaml", "--weights", "trained.npz", "--format", "tflite", "-o", "trained.tflite"], dir.path());
    assert_eq!(code, 0, "{err}");
    let tfl = TfliteModel::open(&dir.path().join("trained.tflite")).unwrap();
    let head = tfl.fully_connected().iter().find(|op| tfl.outputs().contains(&op.output)).unwrap().clone();
    let n = 2000;
    let features = *tfl.tensor_at(tfl.inputs()[0]).unwrap().shape.last().unwrap() as usize;
    let x: Vec<i8> = (0..n * features).map(|_| (next(256) as i64 - 128) as i8).collect();
    litert::write_i8(&dir.path().join("in.npy"), n, features, &x);
    litert::run_litert(&dir.path().join("trained.tflite"), &dir.path().join("in.npy"), head.input, head.output, dir.path());
    let (_, head_in) = litert::read_i8(&dir.path().join("head_in.npy"));
    let (_, head_out) = litert::read_i8(&dir.path().join("head_out.npy"));
    let net = fptgen_sim::network::Network::new(m_after, after).unwrap();
    let inputs: Vec<Vec<i128>> = head_in.chunks(32).map(|r| r.iter().map(|&v| i128::from(v)).collect()).collect();
    let sim = net.infer_batch(&inputs).unwrap();
    for (i, (got, want)) in sim.iter().zip(head_out.chunks(10)).enumerate() {
        let want: Vec<i128> = want.iter().map(|&v| i128::from(v)).collect();
        assert_eq!(got, &want, "input {i}: the simulator with the trained weights against LiteRT on the exported .tflite");
    }
}

/// A truncated or corrupted `.tflite` is an error at the line that names
/// it (the interface's `tflite:`, the first to read it), never a panic.
#[test]
fn a_damaged_tflite_is_an_error_at_its_line() {
    let dir = example_copy();
    let bytes = std::fs::read(dir.path().join("prefix.tflite")).unwrap();
    let text = std::fs::read_to_string(dir.path().join("model.yaml")).unwrap();
    let line = text.lines().position(|l| l.starts_with("  tflite: prefix.tflite")).unwrap() + 1;
    for cut in [0, 7, 64, bytes.len() / 2, bytes.len() - 1] {
        std::fs::write(dir.path().join("prefix.tflite"), &bytes[..cut]).unwrap();
        let (code, _, err) = fptgen(&["check", "model.yaml"], dir.path());
        assert_eq!(code, 1, "cut {cut}: {err}");
        assert!(err.starts_with(&format!("error: model.yaml:{line}:")) && err.contains("prefix.tflite"), "cut {cut}: {err}");
    }
}

/// `export --format tflite` with the archive read from the .tflite gives
/// the .tflite back byte for byte; with other (trained) weights, the copy
/// holds them in the head's tensors and nothing else changes; an existing
/// output file is never replaced.
#[test]
fn export_tflite_replaces_only_the_trained_tensors() {
    let dir = example_copy();
    let (code, out, err) = fptgen(&["export", "model.yaml", "--format", "tflite", "-o", "same.tflite"], dir.path());
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("wrote same.tflite"), "{out}");
    let source = std::fs::read(dir.path().join("prefix.tflite")).unwrap();
    assert_eq!(std::fs::read(dir.path().join("same.tflite")).unwrap(), source, "the untrained export is the source");
    // "Trained" weights: every code moved by one toward zero, biases + 7.
    let model = fptgen_sim::model::load(&dir.path().join("model.yaml")).unwrap();
    let mut params = weights::load(&model, Conversion::Exact).unwrap();
    for w in params.layers[0].tensors[0].iter_mut() {
        *w -= w.signum();
    }
    for b in params.layers[0].tensors[1].iter_mut() {
        *b += 7;
    }
    weights::save(&model, &params, &dir.path().join("trained.npz"), &[]).unwrap();
    let (code, _, err) = fptgen(&["export", "model.yaml", "--weights", "trained.npz", "--format", "tflite", "-o", "trained.tflite"], dir.path());
    assert_eq!(code, 0, "{err}");
    let src = TfliteModel::open(&dir.path().join("prefix.tflite")).unwrap();
    let new = TfliteModel::open(&dir.path().join("trained.tflite")).unwrap();
    let head = src.fully_connected().iter().find(|op| src.outputs().contains(&op.output)).unwrap();
    let (wt, bt) = (src.tensor_at(head.weights).unwrap(), src.tensor_at(head.bias.unwrap()).unwrap());
    let want_w: Vec<i8> = params.layers[0].tensors[0].iter().map(|&v| v as i8).collect();
    let want_b: Vec<i32> = params.layers[0].tensors[1].iter().map(|&v| v as i32).collect();
    assert_eq!(new.int8_data(&wt.name).unwrap(), want_w);
    assert_eq!(new.int32_data(&bt.name).unwrap(), want_b);
    assert_ne!(src.int8_data(&wt.name).unwrap(), want_w);
    for t in src.tensors().iter().filter(|t| t.index != wt.index && t.index != bt.index) {
        if let Ok(d) = src.data(t) {
            assert_eq!(new.data(t).unwrap(), d, "tensor '{}' changed", t.name);
        }
    }
    // Never over an existing file.
    let (code, _, err) = fptgen(&["export", "model.yaml", "--format", "tflite", "-o", "trained.tflite"], dir.path());
    assert_eq!(code, 1);
    assert!(err.contains("trained.tflite") && err.contains("already exists"), "{err}");
}

/// `export --format cmsis-nn` writes the head's C header and source into a
/// new directory (the C itself is checked against the simulator in
/// generator/tests/export_cmsis.rs), refuses a directory it did not make,
/// and a model without int8 layers has nothing to export.
#[test]
fn export_cmsis_nn_writes_the_header_and_source() {
    let dir = example_copy();
    let (code, out, err) = fptgen(&["export", "model.yaml", "--format", "cmsis-nn", "-o", "c"], dir.path());
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("wrote head.h, head.c in c (CMSIS-NN)"), "{out}");
    let h = std::fs::read_to_string(dir.path().join("c/head.h")).unwrap();
    // z_in of the interface is -128: input_offset is 128.
    assert!(h.contains("#define HEAD_INPUT_OFFSET (128)") && h.contains("#define HEAD_OUTPUTS 10"), "{h}");
    assert!(std::fs::read_to_string(dir.path().join("c/head.c")).unwrap().contains("const int8_t head_weights[] = {"));
    std::fs::create_dir(dir.path().join("mine")).unwrap();
    std::fs::write(dir.path().join("mine/notes.txt"), "mine").unwrap();
    let (code, _, err) = fptgen(&["export", "model.yaml", "--format", "cmsis-nn", "-o", "mine"], dir.path());
    assert_eq!(code, 1);
    assert!(err.contains("was not created by fptgen"), "{err}");
    let (code, _, err) = fptgen(&["export", "examples/tiny/model.yaml", "--format", "cmsis-nn", "-o", "x"], &root().join("."));
    assert_eq!(code, 1);
    assert!(err.contains("has no dense_int8 layer"), "{err}");
    assert!(!root().join("x").exists());
}
