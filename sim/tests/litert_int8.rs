//! The independent check of the int8 arithmetic: the head (the last
//! FULLY_CONNECTED layer) of the real int8 TFLite fixtures
//! (`tests/fixtures/int8_head/model.tflite`, per-channel weight scales, and
//! `model_per_tensor.tflite`, one scale; made by TensorFlow's converter),
//! read by fptgen's own TFLite reader and run by `int8::FullyConnected` with
//! the multipliers fptgen derives from the float32 scales, equals the LiteRT
//! interpreter with its reference kernels code for code, on 10,000 seeded
//! random int8 network inputs.
//!
//! The interpreter runs in Python (`tests/fixtures/int8_head/run_litert.py`,
//! `ai-edge-litert` from PyPI, which `tests/run.sh` installs). Without
//! python3 or the package this test FAILS with the install command: it is
//! never skipped.

use std::path::Path;

use fptgen_sim::int8::tflite::{TensorType, TfliteModel};
use fptgen_sim::int8::{Requant, Rounding};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

const INPUTS: usize = 10_000;
const SEED: u64 = 15;

#[path = "common/litert.rs"]
mod litert;
use litert::{fixture_dir, read_i8, run_litert, write_i8};

/// The reader's tensor list equals the interpreter's: names, types, shapes,
/// scales bit for bit, zero points, quantized dimension.
fn check_tensor_list(model: &TfliteModel, listing: &str) {
    let mut seen = 0;
    for line in listing.lines() {
        let f: Vec<&str> = line.split('\t').collect();
        assert_eq!(f.len(), 7, "tensors.txt line {line:?}");
        let index: usize = f[0].parse().unwrap();
        let Some(t) = model.tensors().get(index) else { continue };
        seen += 1;
        assert_eq!(t.name, f[1], "tensor {index}: name");
        let dtype = match f[2] {
            "int8" => TensorType::Int8,
            "int32" => TensorType::Int32,
            "float32" => TensorType::Float32,
            other => panic!("tensor {index}: unexpected dtype {other}"),
        };
        assert_eq!(t.dtype, dtype, "tensor {index} ({}): type", t.name);
        let shape: Vec<i32> = f[3].split(',').filter(|s| !s.is_empty()).map(|s| s.parse().unwrap()).collect();
        assert_eq!(t.shape, shape, "tensor {index} ({}): shape", t.name);
        let scales: Vec<u32> =
            f[4].split(',').filter(|s| !s.is_empty()).map(|s| u32::from_str_radix(s, 16).unwrap()).collect();
        assert_eq!(t.scales.iter().map(|s| s.to_bits()).collect::<Vec<_>>(), scales, "tensor {index}: scales");
        let zps: Vec<i64> = f[5].split(',').filter(|s| !s.is_empty()).map(|s| s.parse().unwrap()).collect();
        assert_eq!(t.zero_points, zps, "tensor {index} ({}): zero points", t.name);
        assert_eq!(t.quantized_dimension.to_string(), f[6], "tensor {index}: quantized dimension");
    }
    assert_eq!(seen, model.tensors().len(), "the interpreter lists {seen} of the model's tensors");
}

#[test]
fn per_channel_head_equals_the_litert_reference_kernel_code_for_code() {
    check_head(&fixture_dir().join("model.tflite"), true, INPUTS);
}

#[test]
fn per_tensor_head_equals_the_litert_reference_kernel_code_for_code() {
    check_head(&fixture_dir().join("model_per_tensor.tflite"), false, INPUTS);
}

/// The export of trained weights (`TfliteModel::with_fully_connected`): the
/// fixture with its head's weights and bias replaced by other values is a
/// model that LiteRT runs, whose head computes what the simulator computes
/// with those values; every other constant tensor is unchanged.
#[test]
fn an_exported_head_runs_in_litert_as_in_the_simulator() {
    let original = TfliteModel::open(&fixture_dir().join("model.tflite")).unwrap();
    let head = original.fully_connected().iter().find(|op| original.outputs().contains(&op.output)).unwrap().clone();
    let (wname, bname) = (original.tensor_at(head.weights).unwrap().name.clone(), original.tensor_at(head.bias.unwrap()).unwrap().name.clone());
    let mut rng = ChaCha8Rng::seed_from_u64(16);
    let w: Vec<i8> = original.int8_data(&wname).unwrap().iter().map(|&v| (i32::from(v) + rng.random_range(-40..=40)).clamp(-127, 127) as i8).collect();
    let b: Vec<i32> = original.int32_data(&bname).unwrap().iter().map(|&v| v + rng.random_range(-2000..=2000)).collect();
    let bytes = original.with_fully_connected(&head, &w, Some(&b)).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("exported.tflite");
    std::fs::write(&path, &bytes).unwrap();
    let exported = TfliteModel::open(&path).unwrap();
    assert_eq!(exported.int8_data(&wname).unwrap(), w);
    assert_eq!(exported.int32_data(&bname).unwrap(), b);
    assert_ne!(original.int8_data(&wname).unwrap(), w, "the replacement changed the weights");
    for t in original.tensors().iter().filter(|t| t.name != wname && t.name != bname) {
        if let Ok(data) = original.data(t) {
            assert_eq!(exported.data(exported.tensor_at(t.index).unwrap()).unwrap(), data, "tensor '{}' changed", t.name);
        }
        assert_eq!(exported.tensor_at(t.index).unwrap(), t, "tensor '{}': its description changed", t.name);
    }
    let kernel = exported.fully_connected_kernel(&head, Rounding::Single).unwrap();
    assert_eq!(kernel.params().weights, w);
    check_head(&path, true, 2_000);
    // A replacement of the wrong size, or a -128 code, is refused.
    assert!(original.with_fully_connected(&head, &w[1..], None).unwrap_err().to_string().contains(&wname));
    let mut bad = w.clone();
    bad[3] = -128;
    let e = original.with_fully_connected(&head, &bad, None).unwrap_err().to_string();
    assert!(e.contains(&wname) && e.contains("-127..127"), "{e}");
}

/// Runs the comparison on the model `model_path`, whose head has
/// per-channel weight scales or not, with `inputs` random inputs.
fn check_head(model_path: &Path, per_channel: bool, inputs: usize) {
    let file = model_path.file_name().unwrap().to_string_lossy().into_owned();
    let model = TfliteModel::open(model_path).unwrap();
    let head = model
        .fully_connected()
        .iter()
        .find(|op| model.outputs().contains(&op.output))
        .expect("the fixture's output comes from a FULLY_CONNECTED operator")
        .clone();
    let single = model.fully_connected_kernel(&head, Rounding::Single).unwrap();
    let double = model.fully_connected_kernel(&head, Rounding::Double).unwrap();
    let (n_in, n_out) = (single.params().inputs, single.params().outputs);
    assert_eq!(matches!(single.params().requant, Requant::PerChannel(_)), per_channel, "{file}: requantization kind");
    let features = *model.tensor_at(model.inputs()[0]).unwrap().shape.last().unwrap() as usize;

    let mut rng = ChaCha8Rng::seed_from_u64(SEED);
    let data: Vec<i8> = (0..inputs * features).map(|_| rng.random()).collect();
    let dir = tempfile::tempdir().unwrap();
    let inputs_path = dir.path().join("inputs.npy");
    write_i8(&inputs_path, inputs, features, &data);
    run_litert(model_path, &inputs_path, head.input, head.output, dir.path());

    check_tensor_list(&model, &std::fs::read_to_string(dir.path().join("tensors.txt")).unwrap());
    let (shape_in, head_in) = read_i8(&dir.path().join("head_in.npy"));
    let (shape_out, head_out) = read_i8(&dir.path().join("head_out.npy"));
    assert_eq!(shape_in, [inputs as u64, n_in as u64]);
    assert_eq!(shape_out, [inputs as u64, n_out as u64]);
    // The head's inputs must exercise the kernel: not all at the ReLU floor.
    let distinct = head_in.iter().collect::<std::collections::BTreeSet<_>>().len();
    assert!(distinct > 64, "only {distinct} distinct head input codes");

    let mut double_differs = 0;
    for n in 0..inputs {
        let x = &head_in[n * n_in..(n + 1) * n_in];
        let want = &head_out[n * n_out..(n + 1) * n_out];
        let got = single.run(x).unwrap();
        if let Some(c) = (0..n_out).find(|&c| got[c] != want[c]) {
            panic!(
                "{file}: input {n}, output {c}: fptgen computes {} (accumulator {}), LiteRT's reference kernel {}",
                got[c],
                single.accumulator(x, c).unwrap(),
                want[c]
            );
        }
        let d = double.run(x).unwrap();
        for c in (0..n_out).filter(|&c| d[c] != want[c]) {
            assert_eq!(
                (i32::from(d[c]) - i32::from(want[c])).abs(),
                1,
                "{file}: input {n}, output {c}: double rounding"
            );
            double_differs += 1;
        }
    }
    let total = inputs * n_out;
    println!(
        "{file}: single rounding: {total} of {total} outputs equal LiteRT's; \
         double rounding would differ on {double_differs}"
    );
    // Double rounding differs on a few outputs per thousand: the comparison
    // tells the two roundings apart, so it would catch the wrong one.
    assert!(
        double_differs > 0,
        "double rounding gave the same {total} outputs: the check cannot tell the roundings apart"
    );
}
