//! Fuzz target `idx`: see `fptgen_fuzz::targets::idx_file` and docs/fuzzing.md.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| fptgen_fuzz::targets::idx_file(data));
