//! Fuzz target `onnx_bytes`: see `fptgen_fuzz::targets::onnx_bytes` and docs/fuzzing.md.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| fptgen_fuzz::targets::onnx_bytes(data));
