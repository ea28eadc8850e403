//! Fuzz target `tflite`: see `fptgen_fuzz::targets::tflite` and docs/fuzzing.md.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| fptgen_fuzz::targets::tflite(data));
