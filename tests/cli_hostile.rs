//! The findings of a hostile user's session (issue 12), one test each: no
//! file of the user's is overwritten, no broken design is written with exit
//! 0, every count option has bounds and every message says what is wrong.
//! tests/robustness.rs tries hundreds of generated bad inputs on top.

mod common;
use common::{files_under, fptgen, root};

use std::path::Path;

use fptgen_sim::tensor::{write_npz, NamedArray, OutValues};

fn example(name: &str) -> String {
    root().join("examples").join(name).join("model.yaml").display().to_string()
}

/// A copy of `examples/<name>` in `dir/<name>/`; returns the model's path.
fn copy_example(dir: &Path, name: &str) -> std::path::PathBuf {
    let src = root().join("examples").join(name);
    let out = dir.join(name);
    std::fs::create_dir_all(&out).expect("mkdir");
    for f in ["model.yaml", "weights.npz"] {
        std::fs::copy(src.join(f), out.join(f)).expect("copy");
    }
    out.join("model.yaml")
}

// Finding 1: `cosim --trace FILE` replaced any existing FILE (even the model
// file) and `--trace DIR` built for a minute, wrote nothing and exited 0.
#[test]
fn finding_1_trace_never_replaces_a_file_and_refuses_a_directory() {
    let d = tempfile::tempdir().expect("tempdir");
    let model = copy_example(d.path(), "tiny");
    let before = std::fs::read(&model).expect("model");
    let m = model.to_str().expect("utf8");
    let (code, _, err) = fptgen(&["cosim", m, "--vectors", "4", "--trace", m], d.path());
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("already exists") && err.contains("model.yaml"), "{err}");
    assert_eq!(std::fs::read(&model).expect("model"), before, "the model file is unchanged");

    std::fs::create_dir(d.path().join("traces")).expect("mkdir");
    let start = std::time::Instant::now();
    let (code, _, err) = fptgen(&["cosim", m, "--vectors", "4", "--trace", "traces"], d.path());
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("traces") && err.contains("is a directory"), "{err}");
    assert!(start.elapsed().as_secs() < 10, "refused before building");
    let (code, _, err) = fptgen(&["cosim", m, "--vectors", "4", "--trace", "no/such/dir/t.vcd"], d.path());
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("no/such/dir"), "{err}");
    assert!(files_under(&d.path().join("traces")).is_empty());
}

// Finding 2: names that collide with generated module names gave a broken
// design with exit 0.
#[test]
fn finding_2_names_that_collide_with_generated_modules_are_refused() {
    let d = tempfile::tempdir().expect("tempdir");
    let model = copy_example(d.path(), "tiny");
    let text = std::fs::read_to_string(&model).expect("model");
    for (from, to, line, what) in [
        ("name: tiny", "name: fptgen_dense", 3, "network name 'fptgen_dense' is reserved"),
        ("name: tiny", "name: fptgen", 3, "network name 'fptgen' is reserved"),
        ("  - name: fc1", "  - name: net", 11, "layer name 'net' is reserved"),
    ] {
        std::fs::write(&model, text.replacen(from, to, 1)).expect("write");
        let (code, _, err) = fptgen(&["generate", "tiny/model.yaml", "-o", "out"], d.path());
        assert_eq!(code, 1, "{to}: {err}");
        assert!(err.starts_with(&format!("error: tiny/model.yaml:{line}:")) && err.contains(what), "{to}: {err}");
        assert!(!d.path().join("out").exists(), "{to}: nothing written");
    }
    // A network may still be called `net`, and a layer `fptgen`.
    std::fs::write(&model, text.replacen("name: tiny", "name: net", 1).replacen("- name: fc1", "- name: fptgen", 1))
        .expect("write");
    let (code, _, err) = fptgen(&["check", "tiny/model.yaml", "--quantize"], d.path());
    assert!(code == 1 && err.contains("fptgen/w"), "only the tensor names differ now: {err}");
}

// Finding 3: generating A, then B, then A into one directory failed, since
// each run replaced the manifest; likewise `generate` then `sweep -o`.
#[test]
fn finding_3_one_directory_takes_designs_and_sweeps_in_turn() {
    common::require("yosys");
    let d = tempfile::tempdir().expect("tempdir");
    let (tiny, jet) = (example("tiny"), example("jet_tagging"));
    for m in [&tiny, &jet, &tiny] {
        let (code, _, err) = fptgen(&["generate", m, "-o", "g"], d.path());
        assert_eq!(code, 0, "{m}: {err}");
    }
    // Only tiny's design is left: jet_tagging's files were fptgen's and stale.
    let rtl = files_under(&d.path().join("g/rtl"));
    assert!(rtl.contains(&"tiny_fc1.v".to_string()) && !rtl.iter().any(|f| f.starts_with("jet_tagging")), "{rtl:?}");
    let (code, out, err) = fptgen(&["sweep", &tiny, "--population", "4", "--blocks", "2", "-o", "g"], d.path());
    assert_eq!(code, 0, "{out}\n{err}");
    let (code, _, err) = fptgen(&["generate", &tiny, "-o", "g"], d.path());
    assert_eq!(code, 0, "{err}");
    // The sweep's results are still there and still owned.
    assert!(d.path().join("g/sweep.csv").exists());
    let g = d.path().join("g");
    assert!(common::manifest_lists(&g, "sweep.csv") && common::manifest_lists(&g, "rtl/tiny_fc1.v"));
}

// Finding 4: `cosim --vectors 1000000000000000` aborted on a failed allocation.
#[test]
fn finding_4_vector_counts_are_bounded() {
    let d = tempfile::tempdir().expect("tempdir");
    let (code, _, err) = fptgen(&["cosim", &example("tiny"), "--vectors", "1000000000000000"], d.path());
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("--vectors") && err.contains("from 1 to 1000000"), "{err}");
    // The bound also counts input values: MNIST has 784 inputs per vector.
    common::require("verilator");
    let (code, _, err) = fptgen(&["cosim", &example("mnist"), "--vectors", "1000000"], d.path());
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("at most 25510 vectors"), "{err}");
}

// Finding 5: negative values got clap's "unexpected argument '-1'" with a
// tip that failed again.
#[test]
fn finding_5_negative_numbers_get_the_options_own_message() {
    let d = tempfile::tempdir().expect("tempdir");
    let tiny = example("tiny");
    for (args, option, takes) in [
        (vec!["train", &tiny, "--data", ".", "--lr", "-1"], "--lr", "above 0"),
        (vec!["cosim", &tiny, "--vectors", "-5"], "--vectors", "from 1 to"),
        (vec!["cosim", &tiny, "--train", "--interrupt-rate", "-1"], "--interrupt-rate", "from 0 to 1"),
        (vec!["cosim", &tiny, "--seed", "-1"], "--seed", "from 0 to"),
        (vec!["init-weights", &tiny, "--seed", "-1"], "--seed", "from 0 to"),
        (vec!["generate", &tiny, "-o", "x", "--blocks", "-2"], "--blocks", "from 1 to"),
        (vec!["sweep", &tiny, "--population", "-4,4", "--blocks", "2", "-o", "x"], "--population", "from 1 to"),
    ] {
        let (code, _, err) = fptgen(&args, d.path());
        assert_eq!(code, 1, "{args:?}: {err}");
        assert!(err.contains(option) && err.contains(takes) && !err.contains("unexpected argument"), "{args:?}: {err}");
    }
    assert!(files_under(d.path()).is_empty());
}

// Finding 6: unclear messages (os errors 20 and 22, "Invalid argument",
// the wrong option blamed, "ZipWriter drop failed").
#[test]
fn finding_6_outputs_into_dot_and_links_and_clear_messages() {
    let d = tempfile::tempdir().expect("tempdir");
    let tiny = example("tiny");
    // `-o .` in an empty directory, and `-o` a link to an empty directory.
    let here = d.path().join("here");
    std::fs::create_dir(&here).expect("mkdir");
    let (code, _, err) = fptgen(&["generate", &tiny, "-o", "."], &here);
    assert_eq!(code, 0, "{err}");
    assert!(here.join("rtl/tiny.v").exists() && here.join(".fptgen-manifest").exists());
    std::fs::create_dir(d.path().join("target")).expect("mkdir");
    std::os::unix::fs::symlink("target", d.path().join("link")).expect("symlink");
    let (code, _, err) = fptgen(&["generate", &tiny, "-o", "link"], d.path());
    assert_eq!(code, 0, "{err}");
    assert!(d.path().join("link").is_symlink() && d.path().join("target/rtl/tiny.v").exists());
    // A link to nothing is named as such.
    std::os::unix::fs::symlink("nowhere", d.path().join("dangling")).expect("symlink");
    let (code, _, err) = fptgen(&["generate", &tiny, "-o", "dangling"], d.path());
    assert!(code == 1 && err.contains("symbolic link to nowhere, which does not exist"), "{err}");

    // `weights: .` names the directory.
    let model = copy_example(d.path(), "tiny");
    let text = std::fs::read_to_string(&model).expect("model");
    std::fs::write(&model, text.replace("weights: weights.npz", "weights: .")).expect("write");
    let (code, _, err) = fptgen(&["check", "tiny/model.yaml"], d.path());
    assert!(code == 1 && err.contains("is a directory, not a numpy file") && !err.contains("Invalid argument"), "{err}");

    // `--limit 0` blames --limit.
    let (code, _, err) = fptgen(&["train", &tiny, "--data", ".", "--validation", "2", "--limit", "0"], d.path());
    assert!(code == 1 && err.contains("'--limit <S>'") && !err.contains("--validation"), "{err}");

    // A write that runs out of room (here a file-size limit) says so plainly
    // and leaves nothing behind.
    let out = std::process::Command::new("bash")
        .args(["-c", "trap '' XFSZ; ulimit -f 1; exec \"$0\" init-weights \"$1\" -o big.npz", env!("CARGO_BIN_EXE_fptgen"), &example("jet_tagging")])
        .current_dir(d.path())
        .output()
        .expect("bash");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.starts_with("error: big.npz: File too large") && !err.contains("ZipWriter"), "{err}");
    assert!(!files_under(d.path()).iter().any(|f| f.contains("big.npz")), "no partial file");
}

fn tiny_arrays() -> Vec<NamedArray> {
    let a = |name: &str, shape: &[usize], v: Vec<f64>| NamedArray { name: name.into(), shape: shape.to_vec(), values: OutValues::F64(v) };
    vec![a("fc1/w", &[2, 2], vec![0.5, -0.25, 0.125, 1.0]), a("fc1/b", &[2], vec![0.25, -0.5])]
}

/// The bytes of a zip archive of `members` (name, bytes), stored uncompressed.
fn stored_zip(members: &[(&str, Vec<u8>)]) -> Vec<u8> {
    let mut z = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let opts = zip::write::FileOptions::default().compression_method(zip::CompressionMethod::Stored);
    for (name, bytes) in members {
        z.start_file(*name, opts).expect("start");
        std::io::Write::write_all(&mut z, bytes).expect("write");
    }
    z.finish().expect("finish").into_inner()
}

// Finding 7: a corrupted data byte (bad CRC) passed `check --quantize`, and
// a duplicate member name was accepted silently.
#[test]
fn finding_7_corrupt_and_duplicate_archive_members_are_errors() {
    let d = tempfile::tempdir().expect("tempdir");
    let model = copy_example(d.path(), "tiny");
    let npy = |a: &NamedArray| {
        let p = d.path().join("one.npz");
        let _ = std::fs::remove_file(&p);
        write_npz(&p, std::slice::from_ref(a)).expect("npz");
        let mut zip = zip::ZipArchive::new(std::fs::File::open(&p).expect("open")).expect("zip");
        let mut bytes = Vec::new();
        std::io::Read::read_to_end(&mut zip.by_index(0).expect("member"), &mut bytes).expect("read");
        bytes
    };
    let arrays = tiny_arrays();
    let (w, b) = (npy(&arrays[0]), npy(&arrays[1]));
    let weights = model.with_file_name("weights.npz");
    // Valid as stored: passes.
    std::fs::write(&weights, stored_zip(&[("fc1/w.npy", w.clone()), ("fc1/b.npy", b.clone())])).expect("write");
    let (code, _, err) = fptgen(&["check", "tiny/model.yaml", "--quantize"], d.path());
    assert_eq!(code, 0, "{err}");
    // One data byte of fc1/w flipped (the last value's lowest mantissa byte):
    // the npy still parses, only the CRC tells.
    let mut bytes = stored_zip(&[("fc1/w.npy", w.clone()), ("fc1/b.npy", b.clone())]);
    let at = bytes.windows(w.len()).position(|x| x == w.as_slice()).expect("stored data") + w.len() - 8;
    bytes[at] ^= 1;
    std::fs::write(&weights, &bytes).expect("write");
    let (code, _, err) = fptgen(&["check", "tiny/model.yaml", "--quantize"], d.path());
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("tensor 'fc1/w'") && err.contains("corrupt"), "{err}");
    // The same member twice.
    std::fs::write(&weights, stored_zip(&[("fc1/w.npy", w.clone()), ("fc1/b.npy", b), ("fc1/w.npy", w)])).expect("write");
    let (code, _, err) = fptgen(&["check", "tiny/model.yaml", "--quantize"], d.path());
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("tensor 'fc1/w'") && err.contains("appears twice"), "{err}");
}

// Finding 8: an `--interrupt-rate` below the harness's resolution silently
// became 0.
#[test]
fn finding_8_interrupt_rates_off_the_harness_grid_are_refused() {
    let d = tempfile::tempdir().expect("tempdir");
    for r in ["0.0004", "0.0015", "1.001"] {
        let (code, _, err) = fptgen(&["cosim", &example("tiny"), "--train", "--interrupt-rate", r], d.path());
        assert_eq!(code, 1, "{r}: {err}");
        assert!(err.contains("--interrupt-rate") && err.contains("steps of 0.001"), "{r}: {err}");
    }
}

/// A reader that goes away (`fptgen ... | head -1`) ends fptgen quietly,
/// killed by SIGPIPE as Unix tools are, instead of a panic on a failed
/// print.
#[test]
fn a_closed_pipe_ends_fptgen_without_a_panic() {
    use std::io::Read;
    use std::process::{Command, Stdio};
    let tiny = root().join("examples/tiny/model.yaml");
    // Checked 2,000 times: about a megabyte of output, more than a pipe
    // holds, so fptgen writes after the reader is gone however the two
    // processes are scheduled.
    let models = vec![tiny.to_str().expect("utf8"); 2000];
    let mut child = Command::new(env!("CARGO_BIN_EXE_fptgen"))
        .arg("check")
        .args(&models)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("fptgen");
    // Close the pipe: a print after that meets no reader.
    drop(child.stdout.take());
    let mut err = String::new();
    child.stderr.take().expect("stderr").read_to_string(&mut err).expect("read");
    let status = child.wait().expect("wait");
    assert!(!err.contains("panicked") && !err.contains("Broken pipe"), "{err}");
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(status.signal(), Some(13), "killed by SIGPIPE: {status:?}");
}
