//! The `fptgen` commands on the int8 example (`examples/int8_head/`, issue
//! 15): `check` accepts it and states the interface contract; a wrong
//! interface zero point fails with the message a user needs; `init-weights
//! --from-tflite` makes its archive; `simulate` runs it as the kernel read
//! from the TFLite file; `generate` refuses it (no int8 hardware yet).

mod common;
use common::{fptgen, root};

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

#[test]
fn generate_refuses_int8_layers_and_writes_nothing() {
    let dir = example_copy();
    let (code, _, err) = fptgen(&["generate", "model.yaml", "-o", "out"], dir.path());
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("layer 'head' is a dense_int8 layer; fptgen generates hardware for dense"), "{err}");
    assert!(err.contains("check and simulate take every layer kind, train and train-es every kind but the int8 ones"), "{err}");
    assert!(!dir.path().join("out").exists());
}

/// Host training of int8 layers is not built: `train` refuses the example
/// with a message, before reading any data, and writes nothing.
#[test]
fn train_refuses_int8_layers() {
    let dir = example_copy();
    let (code, _, err) = fptgen(&["train", "model.yaml", "--data", "nodata", "-o", "trained.npz"], dir.path());
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("layer 'head' is a dense_int8 layer; fptgen train does not train int8 layers yet"), "{err}");
    assert!(!dir.path().join("trained.npz").exists());
}

/// Nor is ES training of int8 layers: `train-es` refuses the example.
#[test]
fn train_es_refuses_int8_layers() {
    let dir = example_copy();
    let (code, _, err) = fptgen(&["train-es", "model.yaml", "--data", "nodata.npz", "-o", "trained.npz"], dir.path());
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("layer 'head' is a dense_int8 layer; fptgen train-es does not train int8 layers yet"), "{err}");
    assert!(!dir.path().join("trained.npz").exists());
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
