//! The int8 layer kinds of issue 15 (`dense_int8`, `requantize`) and the
//! interface contract, through the model file:
//!
//! * the head of the real TFLite fixtures (`tests/fixtures/int8_head/`),
//!   written as a model file (quantization imported with `tflite:`, or
//!   written out as values; interface = the head's input tensor) with the
//!   weights taken from the file, runs in [`Network`] exactly as the kernel
//!   that `litert_int8.rs` checks against LiteRT, on random inputs;
//! * a wrong interface, bad scales, zero points, weight scales and
//!   weight codes are errors at the file and line (or tensor and index).

use std::path::{Path, PathBuf};

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use fptgen_sim::int8::tflite::{Activation, TfliteModel};
use fptgen_sim::int8::Rounding;
use fptgen_sim::model::{load, parse, LayerOp, Model};
use fptgen_sim::network::Network;
use fptgen_sim::tensor::{write_npz, NamedArray, OutValues};
use fptgen_sim::weights::{self, Conversion, LayerParams, Params};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/int8_head").join(name)
}

/// The head's input and output tensor names in `tflite`.
fn head_tensors(m: &TfliteModel) -> (String, String) {
    let head = m.fully_connected().last().expect("a head");
    (m.tensor_at(head.input).unwrap().name.clone(), m.tensor_at(head.output).unwrap().name.clone())
}

/// A model file whose one layer is the fixture's head, imported by `tflite:`.
fn imported(file: &str, rounding: &str, input_tensor: &str, output_tensor: &str) -> String {
    format!(
        "name: int8_head\ninput: {{shape: [32], format: 'ap_fixed<8,8>'}}\nweights: weights.npz\n\
         interface:\n  tflite: {file}\n  tensor: \"{input_tensor}\"\n\
         layers:\n  - name: head\n    type: dense_int8\n    inputs: 32\n    rounding: {rounding}\n\
         \x20   tflite: {{file: {file}, output: \"{output_tensor}\"}}\n"
    )
}

/// The same model with the quantization written out as values, from the
/// fixture's tensors (scales in Rust's shortest round-trip notation).
fn written(m: &TfliteModel, rounding: &str) -> String {
    let head = m.fully_connected().last().expect("a head");
    let t = |i: usize| m.tensor_at(i).unwrap();
    let (x, w, y) = (t(head.input), t(head.weights), t(head.output));
    let scales: Vec<String> = w.scales.iter().map(|s| format!("{s:?}")).collect();
    let act = match head.activation {
        Activation::None => "linear",
        Activation::Relu => "relu",
        Activation::Relu6 => "relu6",
        other => panic!("fixture activation {other:?}"),
    };
    format!(
        "name: int8_head\ninput: {{shape: [32], format: 'ap_fixed<8,8>'}}\nweights: weights.npz\n\
         interface: {{scale: {:?}, zero_point: {}}}\n\
         layers:\n  - name: head\n    type: dense_int8\n    inputs: 32\n    outputs: {}\n    activation: {act}\n    rounding: {rounding}\n\
         \x20   quantization:\n      input: {{scale: {:?}, zero_point: {}}}\n      output: {{scale: {:?}, zero_point: {}}}\n\
         \x20     weight_scales: [{}]\n",
        x.scales[0],
        x.zero_points[0],
        w.shape[0],
        x.scales[0],
        x.zero_points[0],
        y.scales[0],
        y.zero_points[0],
        scales.join(", ")
    )
}

fn random_inputs(n: usize, seed: u64) -> Vec<Vec<i128>> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    (0..n).map(|_| (0..32).map(|_| rng.random_range(-128i128..=127)).collect()).collect()
}

/// The fixture's head as a model file, in a temporary directory with a copy
/// of the `.tflite`; the model and the weights read from the file.
fn head_model(tflite: &str, text: impl Fn(&str) -> String) -> (tempfile::TempDir, Model, Params) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(fixture(tflite), dir.path().join("prefix.tflite")).unwrap();
    let path = dir.path().join("model.yaml");
    std::fs::write(&path, text("prefix.tflite")).unwrap();
    let model = load(&path).unwrap_or_else(|e| panic!("{e}"));
    let params = weights::from_tflite(&model).unwrap_or_else(|e| panic!("{e}"));
    (dir, model, params)
}

#[test]
fn the_fixture_heads_as_models_equal_the_litert_checked_kernel() {
    for tflite in ["model.tflite", "model_per_tensor.tflite"] {
        let m = TfliteModel::open(&fixture(tflite)).unwrap();
        let (xin, yout) = head_tensors(&m);
        let head = m.fully_connected().last().unwrap();
        for (rounding, name) in [(Rounding::Single, "single"), (Rounding::Double, "double")] {
            let kernel = m.fully_connected_kernel(head, rounding).unwrap();
            let (_dir, model, params) = head_model(tflite, |f| imported(f, name, &xin, &yout));
            let net = Network::new(model, params).unwrap();
            for x in random_inputs(2000, 15) {
                let want: Vec<i128> = kernel.run(&x.iter().map(|&v| v as i8).collect::<Vec<_>>()).unwrap().into_iter().map(i128::from).collect();
                assert_eq!(net.infer(&x).unwrap(), want, "{tflite} {name} input {x:?}");
            }
        }
    }
}

#[test]
fn written_quantization_values_give_the_imported_layer() {
    for tflite in ["model.tflite", "model_per_tensor.tflite"] {
        let m = TfliteModel::open(&fixture(tflite)).unwrap();
        let (xin, yout) = head_tensors(&m);
        for name in ["single", "double"] {
            let (_d1, a, pa) = head_model(tflite, |f| imported(f, name, &xin, &yout));
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("model.yaml");
            std::fs::write(&path, written(&m, name)).unwrap();
            let b = load(&path).unwrap_or_else(|e| panic!("{e}"));
            let (LayerOp::DenseInt8(da), LayerOp::DenseInt8(db)) = (&a.layers[0].op, &b.layers[0].op) else { panic!("not dense_int8") };
            let mut da = da.clone();
            assert!(da.tflite.take().is_some());
            assert_eq!(&da, db, "{tflite} {name}");
            assert_eq!(a.interface.as_ref().unwrap().quantization, b.interface.as_ref().unwrap().quantization);
            // The archive stores the codes; saved and read back, they are the same.
            let npz = dir.path().join("weights.npz");
            weights::save(&b, &pa, &npz, &[]).unwrap();
            assert_eq!(weights::load(&b, Conversion::Exact).unwrap(), pa);
        }
    }
}

/// A small model with written values: interface (0.5, 3), a dense_int8
/// 4 -> 2 with input (0.5, 3).
const BASE: &str = "name: q\n\
input: {shape: [4], format: 'ap_fixed<8,8>'}\n\
weights: w.npz\n\
interface: {scale: 0.5, zero_point: 3}\n\
layers:\n\
\x20 - name: head\n\
\x20   type: dense_int8\n\
\x20   inputs: 4\n\
\x20   outputs: 2\n\
\x20   trainable: [weights, biases]\n\
\x20   quantization:\n\
\x20     input: {scale: 0.5, zero_point: 3}\n\
\x20     output: {scale: 0.25, zero_point: -4}\n\
\x20     weight_scales: [0.125, 0.0625]\n";

/// Each bad model: the text replaced, the token the error must point at
/// (its first occurrence on or after the changed line) and words it must contain.
#[test]
fn bad_int8_models_are_located() {
    let cases: &[(&str, &str, &str, &[&str])] = &[
        (
            "input: {scale: 0.5, zero_point: 3}",
            "input: {scale: 0.5, zero_point: 2}",
            "2}",
            &["layer 'head' input zero point is 2 but the interface (the network input)'s is 3", "`type: requantize`"],
        ),
        (
            "input: {scale: 0.5, zero_point: 3}",
            "input: {scale: 0.50000006, zero_point: 3}",
            "0.50000006",
            &["input scale is 0.50000006 (float32 bits 0x3f000001) but the interface (the network input)'s is 0.5 (bits 0x3f000000)", "requantize"],
        ),
        ("interface: {scale: 0.5, zero_point: 3}", "interface: {scale: 0, zero_point: 3}", "0,", &["interface scale 0 is not a positive finite float32"]),
        ("interface: {scale: 0.5, zero_point: 3}", "interface: {scale: .nan, zero_point: 3}", ".nan", &["not a positive finite"]),
        ("interface: {scale: 0.5, zero_point: 3}", "interface: {scale: 0.5, zero_point: 128}", "128", &["zero point 128 is outside -128..=127"]),
        ("interface: {scale: 0.5, zero_point: 3}", "interface: {scale: 0.5, zero_point: 3, trainable: true}", "true", &["fixed by the frozen prefix, never trained"]),
        ("interface: {scale: 0.5, zero_point: 3}", "interface: {scale: 0.5}", "{scale", &["`scale` and `zero_point`, or `tflite`"]),
        ("output: {scale: 0.25, zero_point: -4}", "output: {scale: -0.25, zero_point: -4}", "-0.25", &["scale -0.25 is not a positive finite float32"]),
        ("output: {scale: 0.25, zero_point: -4}", "output: {scale: 1e-50, zero_point: -4}", "1e-50", &["not a positive finite float32"]),
        ("output: {scale: 0.25, zero_point: -4}", "output: {scale: 0.25, zero_point: -129}", "-129", &["zero point -129 is outside -128..=127"]),
        ("weight_scales: [0.125, 0.0625]", "weight_scales: [0.125, 0.0625, 1.0]", "[0.125", &["weight_scales has 3 values; give one (per tensor) or one per output channel (2)"]),
        ("weight_scales: [0.125, 0.0625]", "weight_scales: [0.125, -0.0625]", "-0.0625", &["weight scale -0.0625 is not a positive finite float32 (index 1)"]),
        ("trainable: [weights, biases]", "trainable: [weights, zero_points]", "[weights", &["zero_points", "fixed, never trained"]),
        ("trainable: [weights, biases]", "trainable: [scales]", "[scales", &["fixed, never trained"]),
        ("format: 'ap_fixed<8,8>'", "format: 'ap_fixed<8,4>'", "dense_int8", &["takes int8 codes in ap_fixed<8,8,AP_TRN,AP_WRAP>", "gives ap_fixed<8,4"]),
        ("    quantization:\n", "    activation: relu7\n    quantization:\n", "relu7", &["relu7"]),
        // The quantization's mapping is located at its first key.
        ("    weight_scales: [0.125, 0.0625]\n", "", "input: {scale", &["needs `weight_scales`"]),
    ];
    for (from, to, at, words) in cases {
        assert!(BASE.contains(from), "{from}");
        let text = BASE.replacen(from, to, 1);
        let start = text.find(to).map_or(0, |i| text[..i].matches('\n').count());
        let l = text.lines().enumerate().skip(start).find(|(_, l)| l.contains(at)).unwrap_or_else(|| panic!("{at}")).0;
        let (line, col) = (l + 1, text.lines().nth(l).unwrap().find(at).unwrap() + 1);
        let e = parse(&text, Path::new("model.yaml")).expect_err(to).to_string();
        assert!(e.starts_with(&format!("model.yaml:{line}:{col}:")), "{to:?}: want {line}:{col}: {e}");
        for w in *words {
            assert!(e.contains(w), "{to:?}: {w:?} in {e}");
        }
    }
    // An ap_fixed layer does not take int8 codes.
    let mixed = format!("{BASE}  - name: after\n    type: flatten\n");
    let e = parse(&mixed, Path::new("model.yaml")).unwrap_err().to_string();
    assert!(e.starts_with("model.yaml:16:11:") && e.contains("'head' outputs affine int8 values"), "{e}");
    // The good base loads, and `relu6` belongs to int8 layers only.
    parse(BASE, Path::new("model.yaml")).unwrap();
    let dense = "name: d\ninput: {shape: [4], format: 'ap_fixed<8,4>'}\nweights: w.npz\nlayers:\n  - name: a\n    type: dense\n    inputs: 4\n    outputs: 2\n    activation: relu6\n    precision: {weight: 'ap_fixed<8,4>', bias: 'ap_fixed<8,4>', accum: 'ap_fixed<16,8>', output: 'ap_fixed<8,4>'}\n";
    let e = parse(dense, Path::new("model.yaml")).unwrap_err().to_string();
    assert!(e.starts_with("model.yaml:9:17:") && e.contains("relu6 applies to int8 layers"), "{e}");
}

/// A requantize layer bridges a different interface; the layer after it is
/// checked against the requantize layer's output.
#[test]
fn requantize_bridges_a_different_interface() {
    let bridged = BASE.replacen("interface: {scale: 0.5, zero_point: 3}", "interface: {scale: 0.25, zero_point: -1}", 1).replacen(
        "layers:\n",
        "layers:\n  - name: rq\n    type: requantize\n    quantization:\n      input: {scale: 0.25, zero_point: -1}\n      output: {scale: 0.5, zero_point: 3}\n",
        1,
    );
    let m = parse(&bridged, Path::new("model.yaml")).unwrap_or_else(|e| panic!("{e}"));
    // rq: y = (x + 1) * 0.5 + 3, rounded half up (single rounding):
    // x = [5, 0, 0, -7] -> [3, 0.5, 0.5, -3] + 3 -> [6, 4, 4, 0].
    // head, w = [[1, 0, 0, 0], [0, 0, 0, -1]], b = [0, 4], input - 3 = [3, 1, 1, -3]:
    // c0: 3 * 0.25 = 0.75 -> 1 -> 1 - 4 = -3; c1: (3 + 4) * 0.125 = 0.875 -> 1 -> -3.
    let p = Params { layers: vec![LayerParams::default(), LayerParams { tensors: vec![vec![1, 0, 0, 0, 0, 0, 0, -1], vec![0, 4]] }] };
    let net = Network::new(m, p).unwrap();
    assert_eq!(net.trace(&[5, 0, 0, -7]).unwrap()[0], vec![6, 4, 4, 0]);
    assert_eq!(net.infer(&[5, 0, 0, -7]).unwrap(), vec![-3, -3]);
    // Without it, the head's input differs from the interface.
    let direct = BASE.replacen("interface: {scale: 0.5, zero_point: 3}", "interface: {scale: 0.25, zero_point: -1}", 1);
    let e = parse(&direct, Path::new("model.yaml")).unwrap_err().to_string();
    assert!(e.contains("input scale is 0.5") && e.contains("requantize"), "{e}");
    // A mismatch after a requantize layer names it.
    let after = bridged.replacen("output: {scale: 0.5, zero_point: 3}", "output: {scale: 0.5, zero_point: 2}", 1);
    let e = parse(&after, Path::new("model.yaml")).unwrap_err().to_string();
    assert!(e.contains("input zero point is 3 but the previous layer 'rq''s is 2"), "{e}");
}

/// Writes `w` and `b` as the archive `w.npz` of [`BASE`] (float64 values, as numpy would).
fn write_archive(dir: &Path, w: &[f64], b: &[f64]) {
    let path = dir.join("w.npz");
    let _ = std::fs::remove_file(&path);
    let arrays = [
        NamedArray { name: "head/w".into(), shape: vec![2, 4], values: OutValues::F64(w.to_vec()) },
        NamedArray { name: "head/b".into(), shape: vec![2], values: OutValues::F64(b.to_vec()) },
    ];
    write_npz(&path, &arrays).unwrap();
}

/// Weight codes of -128, biases beyond int32: errors naming the tensor and index.
#[test]
fn bad_weight_codes_are_located() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("model.yaml");
    std::fs::write(&path, BASE).unwrap();
    let m = load(&path).unwrap();
    let w = [1.0, -127.0, 127.0, 0.0, 5.0, 6.0, 7.0, 8.0];
    write_archive(dir.path(), &w, &[-3.0, 4.0]);
    let p = weights::load(&m, Conversion::Exact).unwrap();
    assert_eq!(p.layers[0].tensors, vec![vec![1, -127, 127, 0, 5, 6, 7, 8], vec![-3, 4]]);
    let mut bad = w;
    bad[6] = -128.0;
    write_archive(dir.path(), &bad, &[-3.0, 4.0]);
    let e = weights::load(&m, Conversion::Exact).unwrap_err().to_string();
    assert!(e.contains("head/w") && e.contains("[1, 2]") && e.contains("-128"), "{e}");
    write_archive(dir.path(), &w, &[-3.0, 2147483648.0]);
    let e = weights::load(&m, Conversion::Exact).unwrap_err().to_string();
    assert!(e.contains("head/b") && e.contains("[1]"), "{e}");
    write_archive(dir.path(), &[0.5, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], &[0.0, 0.0]);
    let e = weights::load(&m, Conversion::Exact).unwrap_err().to_string();
    assert!(e.contains("head/w") && e.contains("[0, 0]"), "{e}");
    // The same codes in a Network: refused, naming the layer and index.
    let mut p = p;
    p.layers[0].tensors[0][6] = -128;
    let e = Network::new(m, p).unwrap_err().to_string();
    assert!(e.contains("'head'") && e.contains("weights[6]") && e.contains("-127..=127"), "{e}");
}

/// A file that is not a TFLite model, a missing tensor, a tensor that is not int8.
#[test]
fn bad_tflite_interfaces_are_located() {
    let m = TfliteModel::open(&fixture("model.tflite")).unwrap();
    let head = m.fully_connected().last().unwrap();
    let bias = m.tensor_at(head.bias.unwrap()).unwrap().name.clone();
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(fixture("model.tflite"), dir.path().join("prefix.tflite")).unwrap();
    std::fs::write(dir.path().join("junk.tflite"), b"not a flatbuffer at all").unwrap();
    let base = BASE.replacen("interface: {scale: 0.5, zero_point: 3}", "interface:\n  tflite: prefix.tflite\n  tensor: \"T\"", 1);
    let cases: &[(&str, &str, &str, &[&str])] = &[
        ("prefix.tflite", "nope", "T", &["tensor 'nope'", "no tensor of this name", "its tensors are"]),
        ("prefix.tflite", &bias, "T", &["is INT32, expected INT8"]),
        ("junk.tflite", "x", "junk.tflite", &["junk.tflite"]),
        ("missing.tflite", "x", "missing.tflite", &["missing.tflite"]),
    ];
    for (file, tensor, at, words) in cases {
        let text = base.replacen("prefix.tflite", file, 1).replacen("\"T\"", &format!("\"{tensor}\""), 1);
        let path = dir.path().join("model.yaml");
        std::fs::write(&path, &text).unwrap();
        let at = if *at == "T" { format!("\"{tensor}\"") } else { at.to_string() };
        let l = text.lines().position(|l| l.contains(&at)).unwrap();
        let col = text.lines().nth(l).unwrap().find(&at).unwrap() + 1;
        let e = load(&path).unwrap_err().to_string();
        assert!(e.starts_with(&format!("{}:{}:{col}:", path.display(), l + 1)), "{e}");
        for w in *words {
            assert!(e.contains(w), "{w:?} in {e}");
        }
    }
}

/// A layer's `tflite:` that names no FULLY_CONNECTED output, or comes with
/// `quantization:` too, or with an `activation`: errors at the line.
#[test]
fn bad_tflite_layers_are_located() {
    let m = TfliteModel::open(&fixture("model.tflite")).unwrap();
    let (xin, yout) = head_tensors(&m);
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(fixture("model.tflite"), dir.path().join("prefix.tflite")).unwrap();
    let good = imported("prefix.tflite", "single", &xin, &yout);
    let path = dir.path().join("model.yaml");
    let cases: Vec<(String, String, Vec<&str>)> = vec![
        (
            good.replacen(&format!("output: \"{yout}\""), "output: \"nope\"", 1),
            "\"nope\"}".to_string(),
            vec!["is not the output of a FULLY_CONNECTED operator", &yout],
        ),
        (
            good.replacen("    rounding: single\n", "    rounding: single\n    quantization: {input: {scale: 1.0, zero_point: 0}, output: {scale: 1.0, zero_point: 0}}\n", 1),
            "{file".to_string(),
            vec!["takes `quantization` or `tflite`, not both"],
        ),
        (good.replacen("    rounding: single\n", "    rounding: single\n    activation: relu\n", 1), "relu".to_string(), vec!["fused activation applies"]),
        (good.replacen("    inputs: 32\n", "    inputs: 32\n    outputs: 11\n", 1), "11".to_string(), vec!["outputs is 11 but the operator has 10"]),
    ];
    for (text, at, words) in cases {
        std::fs::write(&path, &text).unwrap();
        let l = text.lines().enumerate().skip(5).find(|(_, l)| l.contains(&at)).unwrap_or_else(|| panic!("{at}")).0;
        let col = text.lines().nth(l).unwrap().find(&at).unwrap() + 1;
        let e = load(&path).unwrap_err().to_string();
        assert!(e.starts_with(&format!("{}:{}:{col}:", path.display(), l + 1)), "{at}: {e}");
        for w in words {
            assert!(e.contains(w), "{w:?} in {e}");
        }
    }
    std::fs::write(&path, &good).unwrap();
    load(&path).unwrap();
}
