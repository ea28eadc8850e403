//! Fuzz target `weights_archive`: see `fptgen_fuzz::targets::weights_archive` and docs/fuzzing.md.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| fptgen_fuzz::targets::weights_archive(data));
