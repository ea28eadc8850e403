//! The LiteRT interpreter as an oracle, for the tests of both crates that
//! compare with it (`sim/tests/litert_int8.rs`, `tests/litert_rtl.rs`):
//! `tests/fixtures/int8_head/run_litert.py` on `.npy` files of int8 codes.
#![allow(dead_code)]

use std::fs::File;
use std::io::BufReader;
use std::path::{Path, PathBuf};
use std::process::Command;

use npyz::WriterBuilder;

/// How to install the interpreter.
pub const INSTALL: &str = "python3 -m pip install ai-edge-litert==2.3.0";

/// `tests/fixtures/int8_head`.
pub fn fixture_dir() -> PathBuf {
    // The workspace root: this file is compiled into the sim crate's tests
    // and the root package's.
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    let root = if here.join("sim").is_dir() { here.to_path_buf() } else { here.join("..") };
    root.join("tests/fixtures/int8_head")
}

/// Writes `rows x cols` int8 codes as a `.npy` file.
pub fn write_i8(path: &Path, rows: usize, cols: usize, data: &[i8]) {
    let f = File::create(path).unwrap();
    let mut w = npyz::WriteOptions::<i8>::new()
        .default_dtype()
        .shape(&[rows as u64, cols as u64])
        .writer(f)
        .begin_nd()
        .unwrap();
    w.extend(data.iter().copied()).unwrap();
    w.finish().unwrap();
}

/// Reads a `.npy` file of int8 codes: its shape and values.
pub fn read_i8(path: &Path) -> (Vec<u64>, Vec<i8>) {
    let npy = npyz::NpyFile::new(BufReader::new(File::open(path).unwrap())).unwrap();
    let shape = npy.shape().to_vec();
    (shape, npy.into_vec::<i8>().unwrap())
}

/// Runs `run_litert.py`; panics with the install command when python3 or
/// ai-edge-litert is missing.
pub fn run_litert(model: &Path, inputs: &Path, head_in: usize, head_out: usize, out: &Path) {
    let script = fixture_dir().join("run_litert.py");
    let result = Command::new("python3")
        .arg(&script)
        .arg(model)
        .arg(inputs)
        .arg(head_in.to_string())
        .arg(head_out.to_string())
        .arg(out)
        .output();
    let output = match result {
        Ok(o) => o,
        Err(e) => panic!(
            "cannot run python3 ({e}): this test needs Python 3 with the LiteRT interpreter; \
             install Python 3, then: {INSTALL}"
        ),
    };
    let stderr = String::from_utf8_lossy(&output.stderr);
    if output.status.code() == Some(3) {
        panic!("python3 cannot import the LiteRT interpreter:\n{stderr}");
    }
    assert!(output.status.success(), "run_litert.py failed ({}):\n{stderr}", output.status);
}

