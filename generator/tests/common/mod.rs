//! Helpers shared by the RTL library's Verilator tests.

#![allow(dead_code)]

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// Fails (never skips) when a required tool is missing.
pub fn require_tool(tool: &str, version_arg: &str) {
    let ok = Command::new(tool)
        .arg(version_arg)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .map(|s| s.success())
        .unwrap_or(false);
    assert!(
        ok,
        "`{tool}` is not installed or does not run; the RTL tests need Verilator and yosys: \
         apt-get install verilator yosys"
    );
}

/// A fresh scratch directory under Cargo's per-target temp dir. It is kept
/// when a test fails (the path is in the message) and removed on success.
pub fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("{name}-{}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).expect("create scratch dir");
    dir
}

/// Runs `cmd` in `dir`; fails the test with its output (and where the
/// files are) if it fails. Returns stdout.
pub fn run(cmd: &mut Command, what: &str, dir: &Path) -> String {
    let out = cmd
        .current_dir(dir)
        .output()
        .unwrap_or_else(|e| panic!("{what}: cannot run: {e}"));
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        out.status.success(),
        "{what} failed ({}), files in {}:\n{stdout}\n{stderr}",
        out.status,
        dir.display()
    );
    stdout
}

