//! The robustness suite: hundreds of generated bad inputs (model files,
//! weights archives, data files, option values, output paths), each run
//! through the `fptgen` binary in a directory of its own. Every one must
//! exit with status 1 and a message that starts `error: ` and names where the
//! fault is (the model file's line, the archive and tensor, the data file,
//! the option), must not panic, and must leave every file in the directory
//! exactly as it was: nothing changed, nothing added, nothing removed.
//!
//! The cases are generated from one valid setup by rules (one bad value per
//! field of the model file, one corruption per archive member and offset,
//! one bad value per count option, ...), so the suite is the same on every
//! run. Run it alone with `cargo test --test robustness`.

mod common;

use std::collections::BTreeMap;
use std::path::Path;

use fptgen_sim::tensor::{write_npy, write_npz, NamedArray, OutValues};
use fptgen_import::onnx::{self, AttributeProto, GraphProto, ModelProto};

/// A valid model with a training section. Cases name its lines by number.
const MODEL: &str = "\
name: net
part: xcku035-fbva676-3-e
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
    trainable: [weights]
  - name: fc2
    type: dense
    inputs: 2
    outputs: 2
    activation: linear
    precision:
      weight: ap_fixed<4,1>
      bias: ap_fixed<8,3>
      accum: ap_fixed<16,6>
      output: ap_fixed<8,3>
training:
  population: 4
  iterations: 2
  blocks: 2
  buffer: 4
  noise: {width: 8, distribution: rademacher}
  perturb_shift: 0
  lr_shift: 4
  fitness: antithetic
  loss_quantization: po2
  seed: 1
";

/// Where a case's message must point.
#[derive(Debug, Clone)]
enum Loc {
    /// `error: model.yaml:LINE:`
    Line(usize),
    /// `error: model.yaml:` with any line (or none).
    Model,
    /// `error: FILE` (a path relative to the case directory).
    File(String),
    /// `error: FILE: tensor 'T'`
    Tensor(String, String),
    /// The message names the option and says what it takes.
    Option(String),
    /// `error: FILE: node 'N'` (an ONNX node).
    Node(String, String),
    /// `error: WHERE` and the message names the file `F` too.
    Both(String, String),
}

#[derive(Debug, Clone)]
struct Case {
    /// What the case tries, for failure messages.
    name: String,
    /// Files replacing (or adding to, or with `None` removing from) the
    /// valid setup.
    files: Vec<(String, Option<Vec<u8>>)>,
    args: Vec<String>,
    loc: Loc,
}

fn case(name: impl Into<String>, files: Vec<(&str, Option<Vec<u8>>)>, args: &[&str], loc: Loc) -> Case {
    Case {
        name: name.into(),
        files: files.into_iter().map(|(p, b)| (p.to_string(), b)).collect(),
        args: args.iter().map(|s| s.to_string()).collect(),
        loc,
    }
}

fn arr(name: &str, shape: &[usize], v: Vec<f64>) -> NamedArray {
    NamedArray { name: name.into(), shape: shape.to_vec(), values: OutValues::F64(v) }
}

fn good_weights() -> Vec<NamedArray> {
    vec![
        arr("fc1/w", &[2, 3], vec![0.5, -0.25, 0.125, -1.0, 0.875, 0.0]),
        arr("fc1/b", &[2], vec![0.25, -0.5]),
        arr("fc2/w", &[2, 2], vec![0.75, -0.625, 0.25, 0.5]),
        arr("fc2/b", &[2], vec![1.5, -1.0]),
    ]
}

/// The bytes `write` puts in a new file.
fn bytes_of(write: impl FnOnce(&Path)) -> Vec<u8> {
    let d = tempfile::tempdir().expect("tempdir");
    let p = d.path().join("f");
    write(&p);
    std::fs::read(&p).expect("read back")
}

fn npz(arrays: &[NamedArray]) -> Vec<u8> {
    bytes_of(|p| write_npz(p, arrays).expect("npz"))
}

fn npy(shape: &[usize], values: OutValues) -> Vec<u8> {
    bytes_of(|p| write_npy(p, shape, &values).expect("npy"))
}

/// A zip archive of raw members, stored uncompressed.
fn zip_of(members: &[(&str, Vec<u8>)]) -> Vec<u8> {
    let mut z = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let opts = zip::write::FileOptions::default().compression_method(zip::CompressionMethod::Stored);
    for (name, bytes) in members {
        z.start_file(*name, opts).expect("start");
        std::io::Write::write_all(&mut z, bytes).expect("write");
    }
    z.finish().expect("finish").into_inner()
}

/// The valid setup every case starts from: the model, its weights, an
/// input batch, an ES data archive and a host-training data directory.
fn base_files() -> BTreeMap<String, Vec<u8>> {
    let mut m = BTreeMap::new();
    m.insert("model.yaml".into(), MODEL.as_bytes().to_vec());
    m.insert("w.npz".into(), npz(&good_weights()));
    let x: Vec<f64> = (0..12).map(|i| (i as f64 - 6.0) / 4.0).collect();
    m.insert("x.npy".into(), npy(&[4, 3], OutValues::F64(x.clone())));
    m.insert(
        "data.npz".into(),
        npz(&[arr("x", &[4, 3], x.clone()), NamedArray { name: "labels".into(), shape: vec![4], values: OutValues::I64(vec![0, 1, 1, 0]) }]),
    );
    for split in ["train", "test"] {
        m.insert(format!("d/x_{split}.npy"), npy(&[4, 3], OutValues::F64(x.clone())));
        m.insert(format!("d/y_{split}.npy"), npy(&[4], OutValues::I64(vec![0, 1, 1, 0])));
    }
    m.insert("user.txt".into(), b"the user's own file\n".to_vec());
    m.insert("m.onnx".into(), onnx::encode(&onnx_model()));
    m.extend(int8_files());
    m
}

/// Replaces the value after `key:` on line `line` (1-based) of MODEL.
fn with_value(line: usize, value: &str) -> Vec<u8> {
    let lines: Vec<&str> = MODEL.lines().collect();
    let l = lines[line - 1];
    let colon = l.find(": ").unwrap_or_else(|| panic!("line {line} has no value: {l}"));
    let mut out: Vec<String> = lines.iter().map(|s| s.to_string()).collect();
    out[line - 1] = format!("{}: {value}", &l[..colon]);
    (out.join("\n") + "\n").into_bytes()
}

fn without_line(line: usize) -> Vec<u8> {
    let out: Vec<&str> = MODEL.lines().enumerate().filter(|(i, _)| *i + 1 != line).map(|(_, l)| l).collect();
    (out.join("\n") + "\n").into_bytes()
}

fn model_is(bytes: Vec<u8>) -> Vec<(&'static str, Option<Vec<u8>>)> {
    vec![("model.yaml", Some(bytes))]
}

const CHECK: &[&str] = &["check", "model.yaml"];

/// One bad value per field of the model file, reported at the field's line.
fn model_field_cases() -> Vec<Case> {
    let formats = &[
        "ap_fixed<0,0>",
        "ap_fixed<65,3>",
        "ap_fixed<8,3,AP_FOO>",
        "ap_fixed<8,3,AP_TRN,AP_FOO>",
        "ap_fixed<8",
        "ap_fixed<8,3,AP_TRN,AP_WRAP,9>",
        "ap_float<8,3>",
        "quantized_bits(0,0)",
        "quantized_relu(65,0)",
        "'ap_fixed<a,b>'",
        "''",
        "[ap_fixed<8,3>]",
    ][..];
    let long = "x".repeat(65);
    let names = ["1net", "a-b", "module", "fptgen_x", "''", "[a]", "{a: 1}", long.as_str(), "caf\u{e9}"];
    let fields: Vec<(usize, &[&str])> = vec![
        (1, &names[..]),
        (2, &["''", "'a b'", "[x]"][..]),
        (3, &["-1", "0", "abc", ".nan", ".inf", "[1]"][..]),
        (5, &["[0]", "[-1]", "[a]", "[]", "[1048577]"][..]),
        (6, formats),
        (7, &["[a]", "{a: 1}"][..]),
        (9, &["net", "9x", "'a b'", "wire", "''"][..]),
        (10, &["lstm", "conv", "3", "[dense]"][..]),
        (11, &["4", "0", "-1", "x", "1048577", "2.5"][..]),
        (12, &["0", "-1", "x", "1048577"][..]),
        (13, &["tanh", "3", "[relu]", "''"][..]),
        (15, formats),
        (16, formats),
        (17, formats),
        (18, formats),
        (19, &["0", "3", "-1", "x"][..]),
        (20, &["0", "4", "-1"][..]),
        (21, &["[weight]", "[weights, weights]", "3", "[everything]"][..]),
        (33, &["0", "3", "-4", "x", "1048577"][..]),
        (34, &["0", "-1", "4294967296", "x"][..]),
        (35, &["0", "-1", "1048577"][..]),
        (36, &["0", "-2"][..]),
        (37, &["{width: 7, distribution: rademacher}", "{width: 8, distribution: gauss}", "3", "{width: 8, distribution: uniform, bits: 9}"][..]),
        (39, &["32", "-32", "x"][..]),
        (40, &["best", "3"][..]),
        (41, &["po3", "''"][..]),
        (42, &["-1", "x", "1.5"][..]),
    ];
    // A name used twice is reported where it is used again.
    let mut v = vec![case("line 9 = fc2", model_is(with_value(9, "fc2")), CHECK, Loc::Line(22))];
    for (line, values) in fields {
        for value in values {
            v.push(case(format!("line {line} = {value}"), model_is(with_value(line, value)), CHECK, Loc::Line(line)));
        }
    }
    v
}

/// Whole-file and structural damage to the model file.
fn model_structure_cases() -> Vec<Case> {
    let mut v = Vec::new();
    let m = |name: &str, text: Vec<u8>, loc: Loc| case(name, model_is(text), CHECK, loc);
    // Required fields removed: the enclosing mapping is reported.
    for line in [1, 4, 7, 8, 10, 11, 12, 14, 15, 16, 17, 18] {
        v.push(m(&format!("line {line} removed"), without_line(line), Loc::Model));
    }
    // Unknown fields, at every level.
    for (after, indent) in [(3, ""), (6, "  "), (13, "    "), (18, "      "), (42, "  ")] {
        let mut lines: Vec<String> = MODEL.lines().map(str::to_string).collect();
        lines.insert(after, format!("{indent}reuse_factor: 4"));
        v.push(m(&format!("unknown field after line {after}"), (lines.join("\n") + "\n").into_bytes(), Loc::Line(after + 1)));
    }
    v.push(m("duplicate key", format!("{MODEL}name: other\n").into_bytes(), Loc::Model));
    v.push(m("empty file", Vec::new(), Loc::Model));
    v.push(m("only a comment", b"# nothing\n".to_vec(), Loc::Model));
    v.push(m("a list", b"- 1\n- 2\n".to_vec(), Loc::Model));
    v.push(m("a scalar", b"42\n".to_vec(), Loc::Model));
    v.push(m("null", b"~\n".to_vec(), Loc::Model));
    v.push(m("not UTF-8", [MODEL.as_bytes(), b"# \xff\xfe\n"].concat(), Loc::Model));
    v.push(m("binary", (0..=255u8).cycle().take(4096).collect(), Loc::Model));
    v.push(m("tab indentation", MODEL.replace("  shape", "\tshape").into_bytes(), Loc::Model));
    v.push(m("no layers", format!("{}layers: []\n", &MODEL[..MODEL.find("layers:").expect("layers")]).into_bytes(), Loc::Model));
    v.push(m("unclosed list", MODEL.replace("[3]", "[3").into_bytes(), Loc::Model));
    v.push(m("unclosed quote", MODEL.replace("name: net", "name: \"net").into_bytes(), Loc::Model));
    v.push(m("deep nesting", format!("{MODEL}extra: {}{}\n", "[".repeat(20_000), "]".repeat(20_000)).into_bytes(), Loc::Model));
    // A billion laughs: nested aliases that would expand to 10^9 values.
    let mut laughs = String::from("a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n");
    for (i, c) in "bcdefghi".chars().enumerate() {
        let prev = (b'a' + i as u8) as char;
        laughs += &format!("{c}: &{c} [*{prev},*{prev},*{prev},*{prev},*{prev},*{prev},*{prev},*{prev},*{prev},*{prev}]\n");
    }
    v.push(m("billion laughs", format!("{MODEL}{laughs}").into_bytes(), Loc::Model));
    v.push(m("a very long line", format!("{MODEL}# {}\nbad: 1\n", "x".repeat(1 << 20)).into_bytes(), Loc::Model));
    // Truncated inside a token on each of these lines: the partial value
    // is invalid, or a required field is missing.
    for line in [5, 6, 15, 18, 37] {
        let start: usize = MODEL.lines().take(line - 1).map(|l| l.len() + 1).sum();
        let l = MODEL.lines().nth(line - 1).expect("line");
        let cut = start + l.find(": ").expect("value") + 3;
        v.push(m(&format!("truncated in line {line}"), MODEL.as_bytes()[..cut].to_vec(), Loc::Model));
    }
    v.push(case("model is a directory", vec![("model.yaml", None), ("model.yaml/x", Some(vec![]))], CHECK, Loc::File("model.yaml".into())));
    v.push(case("model missing", vec![("model.yaml", None)], CHECK, Loc::File("model.yaml".into())));
    v.push(m("weights archive missing", with_value(7, "none.npz"), Loc::File("none.npz".into())));
    v
}

/// Bad weights archives.
fn weights_cases() -> Vec<Case> {
    let mut v = Vec::new();
    let w = |name: &str, bytes: Vec<u8>, loc: Loc| case(name, vec![("w.npz", Some(bytes))], CHECK, loc);
    let t = |tensor: &str| Loc::Tensor("w.npz".into(), tensor.into());
    let good = good_weights();
    for (i, a) in good.iter().enumerate() {
        let mut missing = good.clone();
        missing.remove(i);
        v.push(w(&format!("{} missing", a.name), npz(&missing), t(&a.name)));
        let mut reshaped = good.clone();
        reshaped[i] = arr(&a.name, &[a.shape.iter().product::<usize>()], vec![0.0; a.shape.iter().product()]);
        if reshaped[i].shape != a.shape {
            v.push(w(&format!("{} flattened", a.name), npz(&reshaped), t(&a.name)));
        }
        let mut wider = good.clone();
        let mut shape = a.shape.clone();
        shape[0] += 1;
        wider[i] = arr(&a.name, &shape, vec![0.0; shape.iter().product()]);
        v.push(w(&format!("{} too large", a.name), npz(&wider), t(&a.name)));
        for (what, x) in [("NaN", f64::NAN), ("infinite", f64::INFINITY), ("unrepresentable", 0.3), ("out of range", 1e6)] {
            let mut bad = good.clone();
            let OutValues::F64(vals) = &mut bad[i].values else { unreachable!() };
            vals[0] = x;
            v.push(w(&format!("{} {what}", a.name), npz(&bad), t(&a.name)));
        }
        let mut ints = good.clone();
        ints[i] = NamedArray { name: a.name.clone(), shape: a.shape.clone(), values: OutValues::I64(vec![0; a.shape.iter().product()]) };
        v.push(w(&format!("{} integer", a.name), npz(&ints), t(&a.name)));
    }
    let mut extra = good.clone();
    extra.push(arr("fc3/w", &[1], vec![0.0]));
    v.push(w("extra tensor", npz(&extra), t("fc3/w")));
    let full = npz(&good);
    for cut in [0, 1, 4, 22, 30, 100, full.len() / 2, full.len() - 22, full.len() - 1] {
        v.push(w(&format!("truncated at {cut}"), full[..cut].to_vec(), Loc::File("w.npz".into())));
    }
    v.push(w("garbage", b"PK\x03\x04 this is not really a zip file".to_vec(), Loc::File("w.npz".into())));
    v.push(w("a text file", b"fc1/w = [1, 2]\n".to_vec(), Loc::File("w.npz".into())));
    v.push(case("archive is a directory", vec![("w.npz", None), ("w.npz/fc1", Some(vec![]))], CHECK, Loc::File("w.npz".into())));
    // Stored members, so that single bytes can be corrupted in place.
    let members: Vec<(String, Vec<u8>)> =
        good.iter().map(|a| (format!("{}.npy", a.name), npy(&a.shape, a.values.clone()))).collect();
    fn refs(m: &[(String, Vec<u8>)]) -> Vec<(&str, Vec<u8>)> {
        m.iter().map(|(n, b)| (n.as_str(), b.clone())).collect()
    }
    let stored = zip_of(&refs(&members));
    for (name, bytes) in &members {
        let at = stored.windows(bytes.len()).position(|x| x == bytes.as_slice()).expect("stored member");
        let tensor = name.trim_end_matches(".npy");
        // A flipped bit in the last value, and in the header's shape.
        for (what, off) in [("data", bytes.len() - 3), ("header", 30)] {
            let mut b = stored.clone();
            b[at + off] ^= 0x10;
            v.push(w(&format!("{tensor} {what} byte flipped"), b, t(tensor)));
        }
    }
    let mut dup = refs(&members);
    dup.push(dup[0].clone());
    v.push(w("duplicate member", zip_of(&dup), t("fc1/w")));
    let mut foreign = refs(&members);
    foreign.push(("notes.txt", b"hello".to_vec()));
    v.push(w("a member that is not an array", zip_of(&foreign), Loc::File("w.npz".into())));
    let mut bad_header = refs(&members);
    bad_header[0].1 = b"\x93NUMPY\x01\x00\x10\x00{'descr': 'xx'}\n".to_vec();
    v.push(w("a member with a bad header", zip_of(&bad_header), t("fc1/w")));
    let mut strings = refs(&members);
    strings[0].1 = b"\x93NUMPY\x01\x00\x36\x00{'descr': '<U3', 'fortran_order': False, 'shape': (2, 3), }\n".to_vec();
    strings[0].1.extend(std::iter::repeat_n(b'a', 72));
    v.push(w("a string array", zip_of(&strings), t("fc1/w")));
    v
}

/// Bad data files for `simulate`, `train-es` and `train`.
fn data_cases() -> Vec<Case> {
    let mut v = Vec::new();
    let sim = &["simulate", "model.yaml", "--inputs", "x.npy"][..];
    let x_file = || Loc::File("x.npy".into());
    let x = |name: &str, bytes: Vec<u8>| case(name, vec![("x.npy", Some(bytes))], sim, x_file());
    v.push(x("inputs of the wrong width", npy(&[4, 4], OutValues::F64(vec![0.0; 16]))));
    v.push(x("inputs of the wrong rank", npy(&[2, 2, 3], OutValues::F64(vec![0.0; 12]))));
    v.push(x("a NaN input", npy(&[1, 3], OutValues::F64(vec![0.0, f64::NAN, 0.0]))));
    v.push(x("an infinite input", npy(&[1, 3], OutValues::F64(vec![0.0, f64::INFINITY, 0.0]))));
    v.push(x("integer inputs read as real", npy(&[1, 3], OutValues::I64(vec![1, 2, 3]))));
    let good_x = npy(&[4, 3], OutValues::F64(vec![0.0; 12]));
    for cut in [0, 5, 60, good_x.len() - 1] {
        v.push(x(&format!("inputs truncated at {cut}"), good_x[..cut].to_vec()));
    }
    v.push(x("inputs not numpy", b"1,2,3\n".to_vec()));
    v.push(case("inputs a directory", vec![("x.npy", None), ("x.npy/a", Some(vec![]))], sim, x_file()));
    v.push(case("inputs missing", vec![("x.npy", None)], sim, x_file()));
    v.push(case(
        "raw inputs out of range",
        vec![("x.npy", Some(npy(&[1, 3], OutValues::I64(vec![0, 1000, 0]))))],
        &["simulate", "model.yaml", "--inputs", "x.npy", "--input-kind", "raw"],
        x_file(),
    ));
    v.push(case(
        "output exists",
        vec![],
        &["simulate", "model.yaml", "--inputs", "x.npy", "--output", "user.txt"],
        Loc::File("user.txt".into()),
    ));

    let es = &["train-es", "model.yaml", "--data", "data.npz", "-o", "new.npz"][..];
    let d = |name: &str, arrays: Vec<NamedArray>, tensor: &str| {
        case(name, vec![("data.npz", Some(npz(&arrays)))], es, Loc::Tensor("data.npz".into(), tensor.into()))
    };
    let labels = |v: Vec<i64>| NamedArray { name: "labels".into(), shape: vec![v.len()], values: OutValues::I64(v) };
    let xs = |n: usize| arr("x", &[n, 3], vec![0.0; n * 3]);
    v.push(d("no x", vec![labels(vec![0, 1, 1, 0])], "x"));
    v.push(d("x of the wrong width", vec![arr("x", &[4, 2], vec![0.0; 8]), labels(vec![0, 1, 1, 0])], "x"));
    v.push(d("fewer samples than the buffer", vec![xs(3), labels(vec![0, 1, 1])], "x"));
    v.push(d("a label out of range", vec![xs(4), labels(vec![0, 1, 2, 0])], "labels"));
    v.push(d("a negative label", vec![xs(4), labels(vec![0, -1, 1, 0])], "labels"));
    v.push(d("labels of the wrong count", vec![xs(4), labels(vec![0, 1])], "labels"));
    v.push(d("targets of the wrong shape", vec![xs(4), arr("t", &[4, 3], vec![0.0; 12])], "t"));
    v.push(d("a target out of range", vec![xs(4), arr("t", &[4, 2], [vec![100.0], vec![0.0; 7]].concat())], "t"));
    v.push(case("neither targets nor labels", vec![("data.npz", Some(npz(&[xs(4)])))], es, Loc::File("data.npz".into())));
    v.push(case("ES output exists", vec![], &["train-es", "model.yaml", "--data", "data.npz", "-o", "user.txt"], Loc::File("user.txt".into())));
    v.push(case("ES log exists", vec![], &["train-es", "model.yaml", "--data", "data.npz", "-o", "new.npz", "--log", "user.txt"], Loc::File("user.txt".into())));

    let tr = &["train", "model.yaml", "--data", "d", "--validation", "1", "-o", "new.npz"][..];
    let dfile = |f: &str| Loc::File(format!("d/{f}"));
    v.push(case("host labels out of range", vec![("d/y_train.npy", Some(npy(&[4], OutValues::I64(vec![0, 5, 1, 0]))))], tr, dfile("y_train.npy")));
    v.push(case("host labels of the wrong count", vec![("d/y_test.npy", Some(npy(&[3], OutValues::I64(vec![0, 1, 1]))))], tr, dfile("y_test.npy")));
    v.push(case("host labels as floats", vec![("d/y_train.npy", Some(npy(&[4], OutValues::F64(vec![0.0; 4]))))], tr, dfile("y_train.npy")));
    v.push(case("host inputs of the wrong width", vec![("d/x_train.npy", Some(npy(&[4, 5], OutValues::F64(vec![0.0; 20]))))], tr, dfile("x_train.npy")));
    v.push(case("host test inputs missing", vec![("d/x_test.npy", None)], tr, dfile("x_test.npy")));
    v.push(case("host data directory empty", vec![("d/x_train.npy", None), ("d/y_train.npy", None), ("d/x_test.npy", None), ("d/y_test.npy", None), ("d/README", Some(vec![]))], tr, Loc::File("d".into())));
    v.push(case("host IDX images truncated", vec![("d/train-images-idx3-ubyte", Some(vec![0, 0, 8, 3, 0, 0, 0, 4]))], tr, dfile("train-images-idx3-ubyte")));
    v.push(case("host IDX bad magic", vec![("d/train-images-idx3-ubyte", Some(vec![1, 2, 3, 4, 0, 0, 0, 4]))], tr, dfile("train-images-idx3-ubyte")));
    v
}

/// The ONNX model of the import cases (`m.onnx` in the case directory): a
/// dense network with a Quant per tensor (tests/fixtures/qonnx/mlp_relu).
fn onnx_model() -> ModelProto {
    let bytes = std::fs::read(common::root().join("tests/fixtures/qonnx/mlp_relu.onnx")).expect("fixture");
    onnx::decode(&bytes).expect("fixture decodes")
}

/// `m` with scalar initializer `name` set to `x` (float32).
fn with_scalar(m: &ModelProto, name: &str, x: f32) -> Vec<u8> {
    let mut m = m.clone();
    let t = m.graph.as_mut().expect("graph").initializer.iter_mut().find(|t| t.name == name).unwrap_or_else(|| panic!("no initializer {name}"));
    t.raw_data = x.to_le_bytes().to_vec();
    t.float_data.clear();
    onnx::encode(&m)
}

/// `m` after `edit` of its graph.
fn edited(m: &ModelProto, edit: impl FnOnce(&mut GraphProto)) -> Vec<u8> {
    let mut m = m.clone();
    edit(m.graph.as_mut().expect("graph"));
    onnx::encode(&m)
}

/// One bad value per field of the import's graph: every `Quant`'s scale,
/// zero point, bit width and attributes, the weights' shapes, the input's
/// dimensions, the names that connect nodes, the file's bytes; and the
/// command's options and output.
fn import_cases() -> Vec<Case> {
    let mut v = Vec::new();
    let m = onnx_model();
    let args = &["import", "m.onnx", "-o", "out"][..];
    let node = |n: &str| Loc::Node("m.onnx".into(), n.into());
    let file = || Loc::File("m.onnx".into());
    let imp = |name: String, bytes: Vec<u8>, loc: Loc| case(name, vec![("m.onnx", Some(bytes))], args, loc);
    for q in ["q_in", "q_w1", "q_b1", "q_a1", "q_w2", "q_out"] {
        for (what, x) in [("0", 0.0f32), ("negative", -0.25), ("NaN", f32::NAN), ("infinite", f32::INFINITY)] {
            v.push(imp(format!("{q} scale {what}"), with_scalar(&m, &format!("{q}_scale"), x), node(q)));
        }
        for (what, x) in [("0", 0.0f32), ("65", 65.0), ("2.5", 2.5), ("NaN", f32::NAN), ("negative", -8.0)] {
            v.push(imp(format!("{q} bit width {what}"), with_scalar(&m, &format!("{q}_bitwidth"), x), node(q)));
        }
        v.push(imp(format!("{q} zero point NaN"), with_scalar(&m, &format!("{q}_zeropt"), f32::NAN), node(q)));
        // A valid zero point fptgen's formats have not: the int8 domain,
        // which refuses the graph at its first node it cannot take.
        v.push(imp(format!("{q} zero point 0.5"), with_scalar(&m, &format!("{q}_zeropt"), 0.5), file()));
        let attr = |name: &'static str, set: fn(&mut AttributeProto)| {
            edited(&m, |g| {
                let n = g.node.iter_mut().find(|n| n.name == q).expect("node");
                set(n.attribute.iter_mut().find(|a| a.name == name).expect("attribute"));
            })
        };
        v.push(imp(format!("{q} rounding mode unknown"), attr("rounding_mode", |a| a.s = b"SIDEWAYS".to_vec()), node(q)));
        v.push(imp(format!("{q} signed 7"), attr("signed", |a| a.i = 7), node(q)));
        v.push(imp(format!("{q} narrow -1"), attr("narrow", |a| a.i = -1), node(q)));
        // Not QONNX's Quant: the node that reads it cannot take its output.
        let reader = match q {
            "q_w1" => "fc1_matmul",
            "q_b1" => "fc1_bias",
            "q_w2" => "fc2_matmul",
            _ => q,
        };
        v.push(imp(format!("{q} in the standard domain"), edited(&m, |g| g.node.iter_mut().find(|n| n.name == q).expect("node").domain.clear()), node(reader)));
        v.push(imp(format!("{q} without its scale"), edited(&m, |g| g.node.iter_mut().find(|n| n.name == q).expect("node").input.truncate(1)), node(q)));
    }
    for (w, reader) in [("w1", "q_w1"), ("w2", "q_w2")] {
        v.push(imp(
            format!("{w} transposed"),
            edited(&m, |g| g.initializer.iter_mut().find(|t| t.name == w).expect("w").dims.reverse()),
            file(),
        ));
        v.push(imp(
            format!("{w} shorter than its shape"),
            edited(&m, |g| {
                let t = g.initializer.iter_mut().find(|t| t.name == w).expect("w");
                t.raw_data.truncate(t.raw_data.len() - 4);
            }),
            file(),
        ));
        let _ = reader;
        v.push(imp(format!("{w} of another type"), edited(&m, |g| g.initializer.iter_mut().find(|t| t.name == w).expect("w").data_type = 8), Loc::Tensor("m.onnx".into(), w.into())));
    }
    let dim = |d: Option<i64>| {
        edited(&m, |g| {
            let t = g.input[0].r#type.as_mut().and_then(|t| t.tensor_type.as_mut()).and_then(|t| t.shape.as_mut()).expect("shape");
            t.dim[1].dim_value = d;
        })
    };
    for (what, d) in [("0", Some(0)), ("negative", Some(-3)), ("missing", None), ("2^40", Some(1 << 40))] {
        v.push(imp(format!("input width {what}"), dim(d), file()));
    }
    v.push(imp("a node reads a tensor nothing writes".into(), edited(&m, |g| g.node.iter_mut().find(|n| n.name == "fc1_relu").expect("relu").input[0] = "nowhere".into()), node("fc1_relu")));
    v.push(imp("an operator without a type".into(), edited(&m, |g| g.node.iter_mut().find(|n| n.name == "fc1_relu").expect("relu").op_type.clear()), node("fc1_relu")));
    v.push(imp("no graph output".into(), edited(&m, |g| g.output.clear()), file()));
    v.push(imp("two graph outputs".into(), edited(&m, |g| g.output.push(g.output[0].clone())), file()));
    v.push(imp("no graph input".into(), edited(&m, |g| g.input.clear()), file()));
    v.push(imp("no nodes".into(), edited(&m, |g| g.node.clear()), file()));
    v.push(imp("no initializers".into(), edited(&m, |g| g.initializer.clear()), file()));
    let full = onnx::encode(&m);
    for cut in [0, 1, 10, full.len() / 4, full.len() / 2, 3 * full.len() / 4] {
        v.push(imp(format!("truncated at {cut}"), full[..cut].to_vec(), file()));
    }
    v.push(imp("a YAML file".into(), MODEL.as_bytes().to_vec(), file()));
    v.push(case("import a directory", vec![("m.onnx", None), ("m.onnx/a", Some(vec![]))], args, file()));
    v.push(case("import a missing file", vec![("m.onnx", None)], args, file()));
    v.push(case("import over the user's file", vec![("m.onnx", Some(full.clone()))], &["import", "m.onnx", "-o", "user.txt"], Loc::File("user.txt".into())));
    v.push(case("import into the user's directory", vec![("m.onnx", Some(full.clone()))], &["import", "m.onnx", "-o", "."], Loc::File(".".into())));
    v.push(case("import --lower sideways", vec![("m.onnx", Some(full))], &["import", "m.onnx", "-o", "out", "--lower", "sideways"], Loc::Option("--lower".into())));
    v
}

/// The int8 example (`i8/`: its model file, weights and the .tflite its
/// layer was read from) for the export cases.
fn int8_files() -> Vec<(String, Vec<u8>)> {
    ["model.yaml", "weights.npz", "prefix.tflite"]
        .iter()
        .map(|f| (format!("i8/{f}"), std::fs::read(common::root().join("examples/int8_head").join(f)).expect("int8_head")))
        .collect()
}

/// One bad value per input and option of `fptgen export`.
fn export_cases() -> Vec<Case> {
    let mut v = Vec::new();
    let files = int8_files();
    let with = |extra: Vec<(&str, Option<Vec<u8>>)>| -> Vec<(String, Option<Vec<u8>>)> {
        let mut all: Vec<(String, Option<Vec<u8>>)> = files.iter().map(|(p, b)| (p.clone(), Some(b.clone()))).collect();
        all.extend(extra.into_iter().map(|(p, b)| (p.to_string(), b)));
        all
    };
    let cmsis = ["export", "i8/model.yaml", "--format", "cmsis-nn", "-o", "c"];
    let tfl = ["export", "i8/model.yaml", "--format", "tflite", "-o", "new.tflite"];
    let mk = |name: &str, files: Vec<(String, Option<Vec<u8>>)>, args: &[&str], loc: Loc| Case { name: name.into(), files, args: args.iter().map(|s| s.to_string()).collect(), loc };
    // The valid int8 setup exports; each case breaks one thing.
    let tflite = &files.iter().find(|(p, _)| p.ends_with(".tflite")).expect("tflite").1;
    // The model file's line that names the .tflite (`interface: tflite:`),
    // and the message names the .tflite after it.
    let tfl_loc = || Loc::Both("i8/model.yaml:13:".into(), "i8/prefix.tflite".into());
    for cut in [0, 8, tflite.len() / 3, tflite.len() / 2, tflite.len() - 1] {
        v.push(mk(&format!("tflite truncated at {cut}"), with(vec![("i8/prefix.tflite", Some(tflite[..cut].to_vec()))]), &tfl, tfl_loc()));
    }
    v.push(mk("tflite missing", with(vec![("i8/prefix.tflite", None)]), &tfl, tfl_loc()));
    v.push(mk("tflite a directory", with(vec![("i8/prefix.tflite", None), ("i8/prefix.tflite/x", Some(vec![]))]), &cmsis, tfl_loc()));
    let weights = &files.iter().find(|(p, _)| p.ends_with(".npz")).expect("npz").1;
    for cut in [0, 30, weights.len() / 2, weights.len() - 1] {
        v.push(mk(&format!("weights truncated at {cut}"), with(vec![("i8/weights.npz", Some(weights[..cut].to_vec()))]), &cmsis, Loc::File("i8/weights.npz".into())));
    }
    let w = |arrays: Vec<NamedArray>| Some(npz(&arrays));
    v.push(mk("weights of another model", with(vec![("other.npz", w(good_weights()))]), &["export", "i8/model.yaml", "--weights", "other.npz", "--format", "cmsis-nn", "-o", "c"], Loc::Tensor("other.npz".into(), "head/w".into())));
    v.push(mk("int8 weights out of range", with(vec![("big.npz", w(vec![arr("head/w", &[10, 32], vec![300.0; 320]), arr("head/b", &[10], vec![0.0; 10])]))]), &["export", "i8/model.yaml", "--weights", "big.npz", "--format", "tflite", "-o", "new.tflite"], Loc::Tensor("big.npz".into(), "head/w".into())));
    v.push(mk("weights missing", with(vec![]), &["export", "i8/model.yaml", "--weights", "none.npz", "--format", "cmsis-nn", "-o", "c"], Loc::File("none.npz".into())));
    v.push(mk("a model without int8 layers", with(vec![]), &["export", "model.yaml", "--format", "cmsis-nn", "-o", "c"], Loc::File("model.yaml".into())));
    v.push(mk("tflite over the user's file", with(vec![]), &["export", "i8/model.yaml", "--format", "tflite", "-o", "user.txt"], Loc::File("user.txt".into())));
    v.push(mk("tflite over its source", with(vec![]), &["export", "i8/model.yaml", "--format", "tflite", "-o", "i8/prefix.tflite"], Loc::File("i8/prefix.tflite".into())));
    v.push(mk("cmsis-nn into the user's directory", with(vec![("c/mine.c", Some(b"int x;".to_vec()))]), &cmsis, Loc::File("c".into())));
    v.push(mk("cmsis-nn over the user's file", with(vec![]), &["export", "i8/model.yaml", "--format", "cmsis-nn", "-o", "user.txt"], Loc::File("user.txt".into())));
    v.push(mk("export --format", with(vec![]), &["export", "i8/model.yaml", "--format", "onnx", "-o", "c"], Loc::Option("--format".into())));
    v
}

/// One bad value per count, rate and seed option of every command.
fn option_cases() -> Vec<Case> {
    let mut v = Vec::new();
    let m = "model.yaml";
    let cmds: Vec<(Vec<&str>, &str, &[&str])> = vec![
        (vec!["cosim", m], "--vectors", &["0", "-5", "1000001", "abc", "1e3", "", "1000000000000000"][..]),
        (vec!["cosim", m], "--seed", &["-1", "18446744073709551616", "abc", "1.5"][..]),
        (vec!["cosim", m, "--train"], "--iterations", &["0", "-1", "4294967296", "x"][..]),
        (vec!["cosim", m, "--train"], "--interrupt-rate", &["-1", "1.5", "0.0004", "0.0015", "nan", "inf", "x"][..]),
        (vec!["train", m, "--data", "d"], "--epochs", &["0", "-1", "100001", "x"][..]),
        (vec!["train", m, "--data", "d"], "--batch", &["0", "-64", "x"][..]),
        (vec!["train", m, "--data", "d"], "--lr", &["0", "-1", "nan", "inf", "11", "x"][..]),
        (vec!["train", m, "--data", "d"], "--seed", &["-1", "x"][..]),
        (vec!["train", m, "--data", "d"], "--validation", &["-1", "x", "4294967297"][..]),
        (vec!["train", m, "--data", "d"], "--limit", &["0", "-1", "x"][..]),
        (vec!["train-es", m, "--data", "data.npz"], "--iterations", &["0", "-1", "4294967296"][..]),
        (vec!["init-weights", m], "--seed", &["-1", "x", ""][..]),
        (vec!["generate", m, "-o", "out"], "--blocks", &["0", "-2", "1048577", "x"][..]),
        (vec!["generate", m, "-o", "out"], "--population", &["0", "-4", "x"][..]),
        (vec!["sweep", m, "--blocks", "2", "-o", "out"], "--population", &["0", "-4,4", "4,x", "4,,4"][..]),
        (vec!["sweep", m, "--population", "4", "-o", "out"], "--blocks", &["0", "-1", "2,0"][..]),
        (vec!["sweep", m, "--population", "4", "--blocks", "2", "-o", "out"], "--jobs", &["0", "-1", "1025"][..]),
    ];
    for (base, opt, values) in cmds {
        for value in values {
            let mut args = base.clone();
            args.extend([opt, value]);
            v.push(case(format!("{} {opt} {value:?}", base[0]), vec![], &args, Loc::Option(opt.to_string())));
        }
    }
    // Values that parse but do not fit the model.
    v.push(case("odd population override", vec![], &["generate", m, "-o", "out", "--population", "3"], Loc::File("model.yaml".into())));
    v.push(case("limit past the hold-out", vec![], &["train", m, "--data", "d", "--validation", "4", "-o", "new.npz"], Loc::Option("--validation".into())));
    // Output paths that are the user's.
    v.push(case("init-weights over a file", vec![], &["init-weights", m, "-o", "user.txt"], Loc::File("user.txt".into())));
    v.push(case("init-weights over the weights", vec![], &["init-weights", m], Loc::File("w.npz".into())));
    v.push(case("generate over a file", vec![], &["generate", m, "-o", "user.txt"], Loc::File("user.txt".into())));
    v.push(case("generate into the user's directory", vec![], &["generate", m, "-o", "."], Loc::File(".".into())));
    v.push(case("generate into a directory with a user file", vec![("o/rtl/net.v", Some(b"mine".to_vec())), ("o/.fptgen-manifest", Some(b"# fptgen\n[design]\nreport.md\n".to_vec()))], &["generate", m, "-o", "o"], Loc::File("o/rtl/net.v".into())));
    v.push(case("cosim trace over a file", vec![], &["cosim", m, "--trace", "user.txt"], Loc::File("user.txt".into())));
    v.push(case("cosim trace over the model", vec![], &["cosim", m, "--trace", "model.yaml"], Loc::File("model.yaml".into())));
    v.push(case("cosim trace into a directory", vec![("traces/a", Some(vec![]))], &["cosim", m, "--trace", "traces"], Loc::File("traces".into())));
    v
}

/// Runs one case; returns a description of what went wrong, if anything.
fn run(c: &Case, base: &BTreeMap<String, Vec<u8>>) -> Option<String> {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut files = base.clone();
    for (p, b) in &c.files {
        match b {
            Some(b) => {
                files.insert(p.clone(), b.clone());
            }
            None => {
                files.remove(p);
            }
        }
    }
    for (p, b) in &files {
        let path = dir.path().join(p);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(&path, b).expect("write");
    }
    let before = common::snapshot(dir.path());
    let args: Vec<&str> = c.args.iter().map(String::as_str).collect();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_fptgen"))
        .args(&args)
        .current_dir(dir.path())
        .env("RUST_BACKTRACE", "0")
        .output()
        .expect("run fptgen");
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    let after = common::snapshot(dir.path());
    let mut problems = Vec::new();
    if out.status.code() != Some(1) {
        problems.push(format!("exit {:?}", out.status.code()));
    }
    if err.contains("panicked") {
        problems.push("panicked".to_string());
    }
    let first = err.lines().next().unwrap_or("");
    let located = match &c.loc {
        Loc::Line(l) => first.starts_with(&format!("error: model.yaml:{l}:")),
        Loc::Model => first.starts_with("error: model.yaml:"),
        Loc::File(f) => first.starts_with(&format!("error: {f}")),
        Loc::Tensor(f, t) => first.starts_with(&format!("error: {f}: tensor '{t}'")),
        Loc::Node(f, n) => first.starts_with(&format!("error: {f}: node '{n}'")),
        Loc::Both(at, f) => first.starts_with(&format!("error: {at}")) && first.contains(f.as_str()),
        Loc::Option(o) => first.starts_with("error: ") && first.contains(o.as_str()),
    };
    if !located {
        problems.push(format!("not located as {:?}", c.loc));
    }
    if before != after {
        let changed: Vec<&String> = before
            .keys()
            .chain(after.keys())
            .filter(|k| before.get(*k) != after.get(*k))
            .collect();
        problems.push(format!("files changed: {changed:?}"));
    }
    (!problems.is_empty()).then(|| format!("{}: {} ({:?})\n  stderr: {}", c.name, problems.join(", "), c.args, err.trim_end()))
}

#[test]
fn every_bad_input_is_refused_with_a_located_message_and_no_file_changed() {
    // The valid setup really is valid, so each case fails for its own fault.
    let base = base_files();
    let ok = |args: &[&str]| {
        let c = case("valid", vec![], args, Loc::Model);
        let dir = tempfile::tempdir().expect("tempdir");
        for (p, b) in &base {
            let path = dir.path().join(p);
            std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
            std::fs::write(&path, b).expect("write");
        }
        let (code, _, err) = common::fptgen(&c.args.iter().map(String::as_str).collect::<Vec<_>>(), dir.path());
        assert_eq!(code, 0, "the valid setup fails {args:?}: {err}");
    };
    ok(&["check", "model.yaml"]);
    ok(&["simulate", "model.yaml", "--inputs", "x.npy"]);
    ok(&["train-es", "model.yaml", "--data", "data.npz", "--iterations", "1", "-o", "new.npz"]);
    ok(&["train", "model.yaml", "--data", "d", "--validation", "1", "--epochs", "1", "-o", "new.npz"]);
    ok(&["import", "m.onnx", "-o", "imported"]);
    ok(&["export", "i8/model.yaml", "--format", "cmsis-nn", "-o", "c"]);
    ok(&["export", "i8/model.yaml", "--format", "tflite", "-o", "new.tflite"]);

    let groups = [
        ("model fields", model_field_cases()),
        ("model structure", model_structure_cases()),
        ("weights", weights_cases()),
        ("data", data_cases()),
        ("options and outputs", option_cases()),
        ("import", import_cases()),
        ("export", export_cases()),
    ];
    let total: usize = groups.iter().map(|(_, c)| c.len()).sum();
    assert!(total >= 300, "{total} cases");
    let cases: Vec<&Case> = groups.iter().flat_map(|(_, c)| c).collect();
    let failures: Vec<String> = {
        use rayon::prelude::*;
        cases.par_iter().filter_map(|c| run(c, &base)).collect()
    };
    let counts: Vec<String> = groups.iter().map(|(g, c)| format!("{g} {}", c.len())).collect();
    println!("{total} cases: {}", counts.join(", "));
    assert!(failures.is_empty(), "{} of {total} cases failed:\n{}", failures.len(), failures.join("\n"));
}
