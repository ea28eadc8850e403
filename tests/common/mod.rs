//! Helpers shared by the integration tests of the `fptgen` binary.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

pub mod baseline;

/// The repository root.
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Runs the `fptgen` binary in `dir`; returns exit code, stdout and stderr.
/// Fails the test if fptgen panicked.
pub fn fptgen(args: &[&str], dir: &Path) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_fptgen")).args(args).current_dir(dir).output().expect("run fptgen");
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(!err.contains("panicked"), "fptgen panicked: {err}");
    (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stdout).into_owned(), err)
}

/// Fails (never skips) when an external tool the test needs is missing.
pub fn require(tool: &str) {
    let ok = Command::new(tool).arg("--version").output().map(|o| o.status.success()).unwrap_or(false)
        || Command::new(tool).arg("-V").output().map(|o| o.status.success()).unwrap_or(false);
    assert!(ok, "{tool} is not installed: run `bash tests/run.sh` (it installs it) or `apt-get install {tool}`");
}

/// Runs the generated Tcl `script` under tclsh in `dir` after `stubs`
/// (Tcl that defines stand-ins for the Vivado commands, each recording its
/// call in the file `STUB_LOG` names, and `source`s `argv[0]`); fails the
/// test if tclsh fails. Returns the log and its calls, split into words.
pub fn run_with_stubs(dir: &Path, stubs: &str, script: &Path) -> (String, Vec<Vec<String>>) {
    std::fs::write(dir.join("stubs.tcl"), stubs).expect("stubs");
    let o = Command::new("tclsh")
        .arg(dir.join("stubs.tcl"))
        .arg(script)
        .env("STUB_LOG", dir.join("calls.log"))
        .current_dir(dir)
        .output()
        .expect("tclsh");
    assert!(o.status.success(), "tclsh failed:\n{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    let log = std::fs::read_to_string(dir.join("calls.log")).expect("calls.log");
    let calls = log.lines().map(|l| l.split_whitespace().map(str::to_string).collect()).collect();
    (log, calls)
}

/// Runs `fptgen check model.yaml` in `dir`, expects exit 1 with an
/// `error: ` message, and returns stderr.
pub fn check_fails(dir: &Path) -> String {
    let (code, _, err) = fptgen(&["check", "model.yaml"], dir);
    assert_eq!(code, 1, "expected exit 1, stderr: {err}");
    assert!(err.starts_with("error: "), "stderr: {err}");
    err
}

/// Asserts that `err` reports `model.yaml` at `line` (and `col`, if given)
/// and contains every one of `words`.
pub fn expect_at(err: &str, line: u32, col: Option<u32>, words: &[&str]) {
    let prefix = match col {
        Some(c) => format!("error: model.yaml:{line}:{c}: "),
        None => format!("error: model.yaml:{line}:"),
    };
    assert!(err.starts_with(&prefix), "expected prefix {prefix:?} in {err:?}");
    for w in words {
        assert!(err.contains(w), "expected {w:?} in {err:?}");
    }
}

/// A copy of `examples/<example>` in `dir/<example>-untrained/` whose model
/// file ends before its `training:` section (the example must have one);
/// returns the model file's path.
pub fn untrained_copy(dir: &Path, example: &str) -> PathBuf {
    let src = root().join("examples").join(example);
    let text = std::fs::read_to_string(src.join("model.yaml")).expect("model.yaml");
    let cut = text.find("\ntraining:").unwrap_or_else(|| panic!("{example} has no training section"));
    let out = dir.join(format!("{example}-untrained"));
    std::fs::create_dir_all(&out).expect("mkdir");
    std::fs::write(out.join("model.yaml"), &text[..cut]).expect("write model");
    // The weights and the files the model names (int8_head's prefix.tflite).
    for e in std::fs::read_dir(&src).expect("the example") {
        let p = e.expect("entry").path();
        if p.is_file() && p.file_name().is_some_and(|n| n != "model.yaml") {
            std::fs::copy(&p, out.join(p.file_name().expect("a name"))).expect("copy");
        }
    }
    out.join("model.yaml")
}

/// Every file under `dir` (recursively; a directory as `name/` with no
/// contents, a link as its target's name), with its bytes, by path relative
/// to `dir`: a snapshot to compare before and after a run.
pub fn snapshot(dir: &Path) -> std::collections::BTreeMap<String, Vec<u8>> {
    let mut out = std::collections::BTreeMap::new();
    fn walk(d: &Path, base: &Path, out: &mut std::collections::BTreeMap<String, Vec<u8>>) {
        for e in std::fs::read_dir(d).expect("read_dir") {
            let p = e.expect("entry").path();
            let rel = p.strip_prefix(base).expect("prefix").display().to_string();
            let meta = std::fs::symlink_metadata(&p).expect("meta");
            if meta.is_dir() {
                out.insert(rel + "/", Vec::new());
                walk(&p, base, out);
            } else if meta.file_type().is_symlink() {
                out.insert(rel, std::fs::read_link(&p).expect("link").display().to_string().into_bytes());
            } else {
                out.insert(rel, std::fs::read(&p).expect("read"));
            }
        }
    }
    walk(dir, dir, &mut out);
    out
}

/// The paths of the files (not directories) under `dir`, sorted.
pub fn files_under(dir: &Path) -> Vec<String> {
    snapshot(dir).into_keys().filter(|k| !k.ends_with('/')).collect()
}

/// Whether `dir`'s `.fptgen-manifest` lists `path` with fptgen's record of
/// it (`path<TAB>size sha256`, or `path<TAB>reserved`).
pub fn manifest_lists(dir: &Path, path: &str) -> bool {
    let text = std::fs::read_to_string(dir.join(".fptgen-manifest")).expect("manifest");
    text.lines().any(|l| l.split_once('\t').is_some_and(|(p, _)| p == path))
}
