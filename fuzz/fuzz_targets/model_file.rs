//! Fuzz target `model_file`: see `fptgen_fuzz::targets::model_file` and docs/fuzzing.md.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| fptgen_fuzz::targets::model_file(data));
