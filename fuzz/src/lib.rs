//! fptgen's fuzz targets (docs/fuzzing.md): the bodies are in
//! [`targets`], shared with the stable replay test `tests/fuzz_corpus.rs`.

pub mod targets;
