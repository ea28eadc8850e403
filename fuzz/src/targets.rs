//! The bodies of fptgen's fuzz targets, shared by the cargo-fuzz crate
//! (`fuzz/fuzz_targets/*.rs`, one line each) and the stable replay test
//! (`tests/fuzz_corpus.rs`, which runs every committed corpus and
//! regression input through them).
//!
//! A body hands the input to one parser and accepts any error value it
//! returns; a panic, an abort or an allocation over libFuzzer's
//! `-malloc_limit_mb` is a finding. Paths only name the input in errors:
//! nothing is read from or written to the file system.

use std::io::Cursor;
use std::path::Path;
use std::sync::OnceLock;

use arbitrary::Unstructured;
use fptgen_import::{self as import, Lower};
use fptgen_sim::data::idx;
use fptgen_sim::int8::tflite::TfliteModel;
use fptgen_sim::int8::Rounding;
use fptgen_sim::model::Model;
use fptgen_sim::{model, tensor, weights};

#[path = "onnx_graph.rs"]
pub mod onnx_graph;

/// A fuzz target: its name (the directory of its corpus) and its body.
pub type Target = (&'static str, fn(&[u8]));

/// Every target, in the order `docs/fuzzing.md` lists them.
pub const TARGETS: &[Target] = &[
    ("idx", idx_file),
    ("weights_archive", weights_archive),
    ("tflite", tflite),
    ("model_file", model_file),
    ("onnx_bytes", onnx_bytes),
    ("onnx_graph", onnx_graph),
];

/// An IDX file, raw or gzip-compressed ([`idx::decode`]).
pub fn idx_file(data: &[u8]) {
    let _ = idx::decode(Path::new("fuzz.idx"), data);
}

/// The tiny example's model (examples/tiny/model.yaml), which the weights
/// archive target checks archives against.
fn tiny_model() -> Option<&'static Model> {
    static MODEL: OnceLock<Option<Model>> = OnceLock::new();
    MODEL
        .get_or_init(|| model::parse(include_str!("../../examples/tiny/model.yaml"), Path::new("examples/tiny/model.yaml")).ok())
        .as_ref()
}

/// A weights archive: the bytes as one `.npy` array and as an `.npz`
/// archive; an archive that reads is checked against the tiny example's
/// model, exactly and quantized ([`weights::from_arrays`]).
pub fn weights_archive(data: &[u8]) {
    let path = Path::new("fuzz.npz");
    let _ = tensor::read_npy_from(path, data);
    let Ok(arrays) = tensor::read_npz_from(path, Cursor::new(data)) else { return };
    let Some(m) = tiny_model() else { return };
    let _ = weights::from_arrays(m, path, arrays.clone(), weights::Conversion::Exact);
    let _ = weights::from_arrays(m, path, arrays, weights::Conversion::Quantize);
}

/// A TFLite model file: every tensor's data and quantization, and every
/// `FULLY_CONNECTED` operator as a kernel in both roundings.
pub fn tflite(data: &[u8]) {
    let Ok(m) = TfliteModel::from_bytes(Path::new("fuzz.tflite"), data.to_vec()) else { return };
    for t in m.tensors() {
        let _ = m.data(t);
        let _ = m.int8_quantization(&t.name);
    }
    for op in m.fully_connected() {
        for rounding in [Rounding::Single, Rounding::Double] {
            let _ = m.fully_connected_kernel(op, rounding);
        }
    }
}

/// A model file's text ([`model::parse`]); bytes that are not UTF-8 are
/// refused before the parser, as `fptgen` does on reading the file.
pub fn model_file(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let _ = model::parse(text, Path::new("fuzz/model.yaml"));
}

/// An ONNX file's bytes, imported with the exact rewrites
/// ([`import::import_bytes`]).
pub fn onnx_bytes(data: &[u8]) {
    let _ = import::import_bytes(Path::new("fuzz.onnx"), data, Lower::Exact);
}

/// A small graph drawn by [`onnx_graph::GraphSpec`] from the bytes, encoded
/// as an ONNX file and imported, so that most inputs pass the protobuf
/// decoder and reach the walk, the lowering and the proof.
pub fn onnx_graph(data: &[u8]) {
    let Ok(spec) = onnx_graph::GraphSpec::draw(&mut Unstructured::new(data)) else { return };
    let bytes = spec.onnx();
    let lower = if spec.approximate { Lower::Approximate } else { Lower::Exact };
    let _ = import::import_bytes(Path::new("fuzz_graph.onnx"), &bytes, lower);
}
