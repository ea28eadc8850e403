//! fptgen's TFLite reader (`fptgen_sim::int8::tflite`) on models built here
//! with the `flatbuffers` builder (fields placed by TFLite's schema, so
//! every value is known), on the committed fixture, and on bad input:
//! truncated files, random bytes, flipped bytes (never a panic), a missing
//! tensor, a tensor of the wrong type, data of the wrong size. The fixture's
//! tensor list is compared with the LiteRT interpreter's in
//! `litert_int8.rs`.

use std::path::{Path, PathBuf};

use flatbuffers::{FlatBufferBuilder, WIPOffset};
use fptgen_sim::int8::tflite::{TensorType, TfliteModel};
use fptgen_sim::int8::{Requant, Rounding};
use fptgen_sim::TensorError;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/int8_head/model.tflite")
}

struct T<'a> {
    name: &'a str,
    dtype: i8,
    shape: Vec<i32>,
    buffer: u32,
    scales: Vec<f32>,
    zero_points: Vec<i64>,
}

fn t<'a>(name: &'a str, dtype: i8, shape: &[i32], buffer: u32, scales: &[f32], zero_points: &[i64]) -> T<'a> {
    T { name, dtype, shape: shape.to_vec(), buffer, scales: scales.to_vec(), zero_points: zero_points.to_vec() }
}

/// A model with one subgraph: `tensors`, `buffers` (buffer 0 is TFLite's
/// empty sentinel, added here), and FULLY_CONNECTED operators given as
/// (inputs, outputs, fused activation). Vtable offsets from the schema:
/// field `n` at `4 + 2n`.
fn build(tensors: &[T], buffers: &[Vec<u8>], ops: &[(Vec<i32>, Vec<i32>, i8)]) -> Vec<u8> {
    let mut b = FlatBufferBuilder::new();
    let mut bufs = vec![{
        let s = b.start_table();
        b.end_table(s)
    }];
    for d in buffers {
        let data = b.create_vector(d);
        let s = b.start_table();
        b.push_slot_always(4, data);
        bufs.push(b.end_table(s));
    }
    let bufs = b.create_vector(&bufs);
    let mut ts = Vec::new();
    for x in tensors {
        let shape = b.create_vector(&x.shape);
        let name = b.create_string(x.name);
        let scale = b.create_vector(&x.scales);
        let zp = b.create_vector(&x.zero_points);
        let q = b.start_table();
        b.push_slot_always(8, scale);
        b.push_slot_always(10, zp);
        let q = b.end_table(q);
        let s = b.start_table();
        b.push_slot_always(4, shape);
        b.push_slot::<i8>(6, x.dtype, 0);
        b.push_slot::<u32>(8, x.buffer, 0);
        b.push_slot_always(10, name);
        b.push_slot_always(12, q);
        ts.push(b.end_table(s));
    }
    let ts = b.create_vector(&ts);
    let mut os = Vec::new();
    for (ins, outs, act) in ops {
        let ins = b.create_vector(ins);
        let outs = b.create_vector(outs);
        let opts = b.start_table();
        b.push_slot::<i8>(4, *act, 0);
        let opts = b.end_table(opts);
        let s = b.start_table();
        b.push_slot_always::<u32>(4, 0);
        b.push_slot_always(6, ins);
        b.push_slot_always(8, outs);
        b.push_slot_always::<u8>(10, 8); // BuiltinOptions_FullyConnectedOptions
        b.push_slot_always(12, opts);
        os.push(b.end_table(s));
    }
    let os = b.create_vector(&os);
    let sub_in = b.create_vector(&[0i32]);
    let sub_out = b.create_vector(&[tensors.len() as i32 - 1]);
    let sg = b.start_table();
    b.push_slot_always(4, ts);
    b.push_slot_always(6, sub_in);
    b.push_slot_always(8, sub_out);
    b.push_slot_always(10, os);
    let sg = b.end_table(sg);
    let sgs = b.create_vector(&[sg]);
    let code = b.start_table();
    b.push_slot_always::<i8>(4, 9);
    b.push_slot_always::<i32>(10, 9); // FULLY_CONNECTED
    let code = b.end_table(code);
    let codes = b.create_vector(&[code]);
    let m = b.start_table();
    b.push_slot_always::<u32>(4, 3);
    b.push_slot_always(6, codes);
    b.push_slot_always(8, sgs);
    b.push_slot_always(12, bufs);
    let m: WIPOffset<_> = b.end_table(m);
    b.finish(m, Some("TFL3"));
    b.finished_data().to_vec()
}

const INT8: i8 = 9;
const INT32: i8 = 2;

/// x[2] -> FC 2x2 (per channel, scales 0.5 and 0.25) + bias -> y[2].
fn small_fc(activation: i8, weight_zero_points: &[i64], bias_bytes: Vec<u8>) -> Vec<u8> {
    let weights: Vec<u8> = [1i8, 2, -3, 4].iter().map(|&w| w as u8).collect();
    let tensors = [
        t("x", INT8, &[1, 2], 0, &[0.5], &[-5]),
        t("w", INT8, &[2, 2], 1, &[0.5, 0.25], weight_zero_points),
        t("b", INT32, &[2], 2, &[0.25, 0.125], &[0, 0]),
        t("y", INT8, &[1, 2], 0, &[0.5], &[-3]),
    ];
    build(&tensors, &[weights, bias_bytes], &[(vec![0, 1, 2], vec![3], activation)])
}

fn bias_bytes(b: &[i32]) -> Vec<u8> {
    b.iter().flat_map(|v| v.to_le_bytes()).collect()
}

fn open(bytes: Vec<u8>) -> Result<TfliteModel, TensorError> {
    TfliteModel::from_bytes(Path::new("built.tflite"), bytes)
}

#[test]
fn reads_a_built_model() {
    let m = open(small_fc(0, &[0, 0], bias_bytes(&[10, -20]))).unwrap();
    let names: Vec<&str> = m.tensors().iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["x", "w", "b", "y"]);
    let w = m.tensor("w").unwrap();
    assert_eq!((w.index, w.dtype, &w.shape[..]), (1, TensorType::Int8, &[2, 2][..]));
    assert_eq!((&w.scales[..], &w.zero_points[..]), (&[0.5f32, 0.25][..], &[0i64, 0][..]));
    assert_eq!(m.tensor("x").unwrap().zero_points, [-5]);
    assert_eq!(m.int8_data("w").unwrap(), [1, 2, -3, 4]);
    assert_eq!(m.int32_data("b").unwrap(), [10, -20]);
    assert_eq!((m.inputs(), m.outputs()), (&[0usize][..], &[3usize][..]));
    let ops = m.fully_connected();
    assert_eq!(ops.len(), 1);
    assert_eq!((ops[0].input, ops[0].weights, ops[0].bias, ops[0].output), (0, 1, Some(2), 3));
}

#[test]
fn builds_the_kernel_with_tflite_parameters() {
    let m = open(small_fc(0, &[0, 0], bias_bytes(&[10, -20]))).unwrap();
    let fc = m.fully_connected_kernel(&m.fully_connected()[0], Rounding::Single).unwrap();
    let p = fc.params();
    // Offsets: -z_in = 5, z_out = -3. Multipliers 0.5 * 0.5 / 0.5 = 0.5 and
    // 0.5 * 0.25 / 0.5 = 0.25: (2^30, 0) and (2^30, -1).
    assert_eq!((p.input_offset, p.output_offset, p.weights_offset), (5, -3, 0));
    let Requant::PerChannel(ms) = &p.requant else { panic!("per-channel expected") };
    assert_eq!(ms.iter().map(|m| (m.multiplier(), m.shift())).collect::<Vec<_>>(), [(1 << 30, 0), (1 << 30, -1)]);
    assert_eq!((p.act_min, p.act_max), (-128, 127));
    // x = [1, -7]: x + 5 = [6, -2]; c0: 6 - 4 + 10 = 12 -> 6 -> 3;
    // c1: -18 - 8 - 20 = -46 -> -11.5 -> -11 (single) -> -14.
    assert_eq!(fc.run(&[1, -7]).unwrap(), [3, -14]);
    // ReLU: act_min = z_out + round(0 / 0.5) = -3.
    let m = open(small_fc(1, &[0, 0], bias_bytes(&[10, -20]))).unwrap();
    let fc = m.fully_connected_kernel(&m.fully_connected()[0], Rounding::Double).unwrap();
    assert_eq!((fc.params().act_min, fc.params().act_max), (-3, 127));
    assert_eq!(fc.run(&[1, -7]).unwrap(), [3, -3]);
    // ReLU6: act_max = -3 + round(6 / 0.5) = 9.
    let m = open(small_fc(3, &[0, 0], bias_bytes(&[10, -20]))).unwrap();
    let fc = m.fully_connected_kernel(&m.fully_connected()[0], Rounding::Single).unwrap();
    assert_eq!((fc.params().act_min, fc.params().act_max), (-3, 9));
}

fn message(e: TensorError) -> String {
    e.to_string()
}

#[test]
fn bad_tensors_are_errors_naming_file_and_tensor() {
    let m = open(small_fc(0, &[0, 0], bias_bytes(&[10, -20]))).unwrap();
    let e = message(m.tensor("missing").unwrap_err());
    assert!(e.contains("built.tflite") && e.contains("'missing'") && e.contains("no tensor"), "{e}");
    let e = message(m.int8_data("b").unwrap_err());
    assert!(e.contains("'b'") && e.contains("is INT32, expected INT8"), "{e}");
    let e = message(m.int32_data("w").unwrap_err());
    assert!(e.contains("'w'") && e.contains("is INT8, expected INT32"), "{e}");
    let e = message(m.int8_data("x").unwrap_err());
    assert!(e.contains("'x'") && e.contains("no data"), "{e}");

    // A bias buffer of 3 values for a shape of 2.
    let m = open(small_fc(0, &[0, 0], bias_bytes(&[10, -20, 7]))).unwrap();
    let e = message(m.int32_data("b").unwrap_err());
    assert!(e.contains("'b'") && e.contains("12 bytes") && e.contains("needs 8"), "{e}");
    assert!(m.fully_connected_kernel(&m.fully_connected()[0], Rounding::Single).is_err());

    // Asymmetric per-channel weights.
    let m = open(small_fc(0, &[0, 3], bias_bytes(&[10, -20]))).unwrap();
    let e = message(m.fully_connected_kernel(&m.fully_connected()[0], Rounding::Single).unwrap_err());
    assert!(e.contains("'w' at index [1]") && e.contains("symmetric"), "{e}");

    // TANH is not an int8 fused activation.
    let m = open(small_fc(4, &[0, 0], bias_bytes(&[10, -20]))).unwrap();
    let e = message(m.fully_connected_kernel(&m.fully_connected()[0], Rounding::Single).unwrap_err());
    assert!(e.contains("'y'") && e.contains("activation code 4"), "{e}");
}

#[test]
fn operators_referring_to_missing_tensors_are_errors() {
    let tensors = [t("x", INT8, &[1, 2], 0, &[0.5], &[0]), t("y", INT8, &[1, 2], 0, &[0.5], &[0])];
    let e = message(open(build(&tensors, &[], &[(vec![0, 7], vec![1], 0)])).unwrap_err());
    assert!(e.contains("operator 0 (FULLY_CONNECTED) weights refers to tensor 7"), "{e}");
    let e = message(open(build(&tensors, &[], &[(vec![0], vec![1], 0)])).unwrap_err());
    assert!(e.contains("has 1 inputs"), "{e}");
}

#[test]
fn not_a_tflite_file_is_an_error() {
    let e = message(open(b"hello".to_vec()).unwrap_err());
    assert!(e.contains("built.tflite") && e.contains("too short"), "{e}");
    let e = message(open(b"\x10\0\0\0ABCDxxxxxxxxxxxx".to_vec()).unwrap_err());
    assert!(e.contains("identifier is \"ABCD\""), "{e}");
    let e = message(open(b"\xff\xff\0\0TFL3xxxxxxxxxxxx".to_vec()).unwrap_err());
    assert!(e.contains("not a valid TFLite flatbuffer"), "{e}");
    let missing = Path::new("/nonexistent/model.tflite");
    let e = TfliteModel::open(missing).unwrap_err().to_string();
    assert!(e.contains("/nonexistent/model.tflite"), "{e}");
}

#[test]
fn every_truncation_of_the_fixture_is_an_error() {
    let bytes = std::fs::read(fixture()).unwrap();
    assert!(open(bytes.clone()).is_ok());
    for len in 0..bytes.len() {
        let r = open(bytes[..len].to_vec());
        assert!(r.is_err(), "truncated to {len} bytes, still read");
    }
}

#[test]
fn random_and_corrupted_bytes_never_panic() {
    let mut rng = ChaCha8Rng::seed_from_u64(15);
    let good = std::fs::read(fixture()).unwrap();
    let mut read = 0;
    for i in 0..3000 {
        let bytes = if i % 3 == 0 {
            // Random bytes with the TFLite identifier, so verification runs.
            let n = rng.random_range(8..4096);
            let mut b: Vec<u8> = (0..n).map(|_| rng.random()).collect();
            b[4..8].copy_from_slice(b"TFL3");
            b
        } else {
            // The fixture with a few bytes changed.
            let mut b = good.clone();
            for _ in 0..rng.random_range(1..8) {
                let at = rng.random_range(0..b.len());
                b[at] = rng.random();
            }
            b
        };
        if let Ok(m) = open(bytes) {
            read += 1;
            for op in m.fully_connected().to_vec() {
                let _ = m.fully_connected_kernel(&op, Rounding::Single);
            }
            for t in m.tensors() {
                let _ = m.data(t);
            }
        }
    }
    // Most single-byte changes hit weights or padding and still read.
    assert!(read > 100, "only {read} corrupted files read");
}

#[test]
fn reads_the_fixture() {
    let m = TfliteModel::open(&fixture()).unwrap();
    assert_eq!(m.fully_connected().len(), 2);
    let head = &m.fully_connected()[1];
    assert_eq!(m.outputs(), [head.output]);
    assert_eq!(m.fully_connected()[0].output, head.input);
    let w = m.tensor_at(head.weights).unwrap();
    assert_eq!((w.dtype, &w.shape[..], w.scales.len()), (TensorType::Int8, &[10, 32][..], 10));
    let fc = m.fully_connected_kernel(head, Rounding::Single).unwrap();
    assert_eq!((fc.params().inputs, fc.params().outputs), (32, 10));
}
