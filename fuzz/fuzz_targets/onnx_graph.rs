//! Fuzz target `onnx_graph`: see `fptgen_fuzz::targets::onnx_graph` and docs/fuzzing.md.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| fptgen_fuzz::targets::onnx_graph(data));
