//! Replays the fuzz corpora and regression inputs through the fuzz
//! targets' bodies on the stable toolchain (fast tier): every file under
//! `fuzz/corpus/<target>/` and `fuzz/regressions/<target>/` must be
//! refused with an error value or accepted, never panic. The bodies are
//! the cargo-fuzz crate's own (`fuzz/src/targets.rs`); docs/fuzzing.md
//! says how the corpora were made.

#[path = "../fuzz/src/targets.rs"]
mod targets;

use std::path::Path;

/// Runs every corpus and regression input of `target`; returns how many.
fn replay(target: &str) -> usize {
    let (_, body) = targets::TARGETS.iter().find(|(name, _)| *name == target).expect("a known target");
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz");
    let mut count = 0;
    for dir in ["corpus", "regressions"] {
        let Ok(entries) = std::fs::read_dir(root.join(dir).join(target)) else { continue };
        let mut files: Vec<_> = entries.map(|e| e.expect("a directory entry").path()).collect();
        files.sort();
        for f in files {
            let bytes = std::fs::read(&f).expect("a readable corpus file");
            // A panic names the file in the test's output.
            eprintln!("{}", f.display());
            body(&bytes);
            count += 1;
        }
    }
    count
}

fn check(target: &str) {
    assert!(replay(target) > 0, "no corpus for fuzz target '{target}' under fuzz/corpus/{target}");
}

#[test]
fn idx_corpus_replays() {
    check("idx");
}

#[test]
fn weights_archive_corpus_replays() {
    check("weights_archive");
}

#[test]
fn tflite_corpus_replays() {
    check("tflite");
}

#[test]
fn model_file_corpus_replays() {
    check("model_file");
}

#[test]
fn onnx_bytes_corpus_replays() {
    check("onnx_bytes");
}

#[test]
fn onnx_graph_corpus_replays() {
    check("onnx_graph");
}

/// The list of targets above is the fuzz crate's whole list.
#[test]
fn every_target_is_replayed() {
    let names: Vec<&str> = targets::TARGETS.iter().map(|(n, _)| *n).collect();
    assert_eq!(names, ["idx", "weights_archive", "tflite", "model_file", "onnx_bytes", "onnx_graph"]);
}
