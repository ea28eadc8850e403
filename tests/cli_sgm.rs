//! `rule: sgm` end to end on an example's network: jet_tagging with fc3
//! and fc4 trainable, `fptgen train --sgm` fitting fc3's module on a data
//! directory (random inputs labelled by the network itself), then
//! `fptgen cosim --train` bit-exact against the simulator (every delta,
//! every write, every answer, every iteration's cycles), and lint-clean
//! Verilog. Also the command's refusals. Needs Verilator: fails (does not
//! skip) without it.

use std::path::Path;
use std::process::Command;

use fptgen_sim::network::Network;
use fptgen_sim::qat::argmax;
use fptgen_sim::tensor::{write_npy, OutValues};
use rand::{Rng, SeedableRng};

mod common;
use common::{fptgen, require, root};

/// jet_tagging with fc3 trainable too and a small sgm training section.
fn sgm_model(dir: &Path) -> std::path::PathBuf {
    let src = root().join("examples/jet_tagging");
    let text = std::fs::read_to_string(src.join("model.yaml")).expect("model.yaml");
    let (layers, _) = text.split_at(text.find("\ntraining:").expect("training section"));
    let at = layers.find("  - name: fc3").expect("fc3");
    let end = at + layers[at..].find("    simd: 16\n").expect("fc3's simd") + "    simd: 16\n".len();
    let text = format!(
        "{}    trainable: [weights, biases]\n{}\ntraining:\n  rule: sgm\n  sgm: sgm.npz\n  buffer: 8\n  iterations: 2\n",
        &layers[..end],
        &layers[end..]
    );
    std::fs::write(dir.join("model.yaml"), text).expect("write model");
    std::fs::copy(src.join("weights.npz"), dir.join("weights.npz")).expect("weights");
    dir.join("model.yaml")
}

/// `n` random inputs (codes of ap_fixed<16,6> within +-4.0, as floats)
/// labelled by the network's own argmax, as x_*.npy / y_*.npy.
fn data(dir: &Path, model: &Path, n: usize) {
    let m = fptgen_sim::model::load(model).expect("model");
    let p = fptgen_sim::weights::load(&m, fptgen_sim::weights::Conversion::Exact).expect("weights");
    let net = Network::new(m, p).expect("net");
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(5);
    std::fs::create_dir_all(dir).expect("mkdir");
    for split in ["train", "test"] {
        let mut x = Vec::new();
        let mut y = Vec::new();
        for _ in 0..n {
            let codes: Vec<i128> = (0..16).map(|_| rng.random_range(-4096..4096)).collect();
            let out = net.infer(&codes).expect("forward");
            y.push(argmax(&out).expect("outputs") as i64);
            x.extend(codes.iter().map(|&c| c as f64 / 1024.0));
        }
        write_npy(&dir.join(format!("x_{split}.npy")), &[n, 16], &OutValues::F64(x)).expect("x");
        write_npy(&dir.join(format!("y_{split}.npy")), &[n], &OutValues::I64(y)).expect("y");
    }
}

#[test]
fn train_sgm_then_cosim_on_jet_tagging() {
    require("verilator");
    let dir = tempfile::tempdir().expect("tempdir");
    let model = sgm_model(dir.path());
    let data_dir = dir.path().join("data");
    data(&data_dir, &model, 600);
    let m = model.to_str().expect("utf8");
    let d = data_dir.to_str().expect("utf8");

    // check says the archive is not written yet.
    let (code, out, err) = fptgen(&["check", m], dir.path());
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("synthetic-gradient modules of fc3 from") && out.contains("(not written yet: fptgen train --sgm)"), "{out}");
    // Generating before the modules exist names the missing archive.
    let (code, _, err) = fptgen(&["generate", m, "-o", "early"], dir.path());
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("sgm.npz") && err.contains("fptgen train --sgm"), "{err}");
    assert!(!dir.path().join("early").exists(), "a partial design was left behind");

    let (code, out, err) = fptgen(&["train", m, "--data", d, "--sgm", "--validation", "100", "--noise", "0.5", "--seed", "3"], dir.path());
    assert_eq!(code, 0, "{out}\n{err}");
    // 500 training samples and their noisy copies.
    assert!(out.contains("on 1000 samples: 500 training samples") && out.contains("Gaussian input noise [0.5], seed 3"), "{out}");
    assert!(out.contains("fc3: 32 x 5 module") && out.contains("mean cosine"), "{out}");
    // The fit is worth something: fc3 feeds fc4, a linear output layer, so
    // the true gradient is linear in [a, t] and the module reproduces it.
    let cosine: f64 = out.split("mean cosine with the true gradient ").nth(1).and_then(|s| s.split_whitespace().next()).and_then(|s| s.parse().ok()).expect("cosine");
    assert!(cosine > 0.9, "cosine {cosine}: {out}");
    assert!(dir.path().join("sgm.npz").is_file());
    let (code, out, err) = fptgen(&["check", m], dir.path());
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("sgm.npz") && !out.contains("not written yet"), "{out}");
    // Never over an existing file.
    let (code, _, err) = fptgen(&["train", m, "--data", d, "--sgm"], dir.path());
    assert_eq!(code, 1);
    assert!(err.contains("already exists"), "{err}");

    let (code, out, err) = fptgen(
        &["cosim", m, "--vectors", "10", "--seed", "3", "-o", "out", "--train", "--iterations", "2", "--interrupt-rate", "0.02"],
        dir.path(),
    );
    assert_eq!(code, 0, "{out}\n{err}");
    let line = out.lines().find(|l| l.contains("deltas")).unwrap_or_else(|| panic!("no training line:\n{out}"));
    assert!(line.contains("samples 16 "), "{line}");
    let lists: Vec<&str> = line.split('[').skip(1).map(|s| s.split(']').next().unwrap_or("")).collect();
    assert_eq!(lists.len(), 2, "{line}");
    assert_eq!(lists[0], lists[1], "measured and scheduled cycles differ: {line}");
    let outdir = dir.path().join("out");
    assert!(outdir.join("rtl/fptgen_fb_sgm.v").is_file() && outdir.join("mem/fc3_sgm_v.hex").is_file());
    let rtl: Vec<_> = std::fs::read_dir(outdir.join("rtl")).expect("rtl").map(|e| e.expect("e").path()).filter(|p| p.extension().is_some_and(|x| x == "v")).collect();
    let o = Command::new("verilator").args(["--lint-only", "-Wall", "-Irtl", "--top-module", "jet_tagging"]).args(&rtl).current_dir(&outdir).output().expect("verilator");
    let log = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success() && !log.contains("%Warning"), "lint:\n{log}");
    // yosys synthesizes the trainer with its module (the pipeline a black box).
    require("yosys");
    let (code, out, err) = fptgen(&["synth", m, "--trainer-only", "-o", "synth"], dir.path());
    assert_eq!(code, 0, "{out}\n{err}");
    let report = std::fs::read_to_string(dir.path().join("synth/reports/synth_trainer.md")).expect("report");
    assert!(out.contains("sgm trainer") && report.contains("fptgen_fb_sgm"), "the module is not in the synthesized hierarchy:\n{out}\n{report}");
    // report.md now gives the added area, the same LUT count synth printed.
    let md = std::fs::read_to_string(dir.path().join("synth/report.md")).expect("report.md");
    let luts = out.lines().find_map(|l| l.trim().strip_prefix("LUTs")).and_then(|r| r.split_whitespace().next()).unwrap_or_else(|| panic!("{out}"));
    assert!(md.contains("added area (yosys") && md.contains(&format!(": {luts} LUTs,")), "report.md lacks the area ({luts} LUTs):\n{md}");
}

#[test]
fn train_sgm_under_another_rule_needs_output_and_refuses_models_without_hidden_trainables() {
    let dir = tempfile::tempdir().expect("tempdir");
    let model = sgm_model(dir.path());
    let data_dir = dir.path().join("data");
    data(&data_dir, &model, 50);
    let text = std::fs::read_to_string(&model).expect("model");
    let m = model.to_str().expect("utf8");
    let d = data_dir.to_str().expect("utf8");
    std::fs::write(&model, text.replace("  rule: sgm\n  sgm: sgm.npz\n", "  rule: dfa\n")).expect("write");
    let (code, _, err) = fptgen(&["train", m, "--data", d, "--sgm", "--validation", "0"], dir.path());
    assert_eq!(code, 1);
    assert!(err.contains("rule is dfa") && err.contains("give -o FILE"), "{err}");
    // With -o the modules are fitted for --rule sgm --sgm FILE.
    let (code, out, err) = fptgen(&["train", m, "--data", d, "--sgm", "--validation", "0", "-o", "other.npz"], dir.path());
    assert_eq!(code, 0, "{out}\n{err}");
    // By default the fit also takes four noisy copies, 0.1 to 0.9 of the
    // span of the input values (the data: codes -4096..4095 of 1/1024).
    assert!(out.contains("on 250 samples: 50 training samples") && out.contains("the default spread"), "{out}");
    let levels: Vec<f64> = out.split("Gaussian input noise [").nth(1).and_then(|s| s.split(']').next()).expect("levels").split(", ").map(|v| v.parse().expect("number")).collect();
    // The 800 values are uniform in [-4, 4): their span is nearly 8.
    let span = levels[0] / 0.1;
    assert!(span > 7.9 && span <= 8.0, "{levels:?}");
    for (got, k) in levels.iter().zip([0.1, 0.3, 0.6, 0.9]) {
        assert!((got - k * span).abs() < 1e-9, "{levels:?}");
    }
    std::fs::remove_file(dir.path().join("other.npz")).expect("rm");
    let (code, out, err) = fptgen(&["train", m, "--data", d, "--sgm", "--validation", "0", "-o", "other.npz", "--clean"], dir.path());
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(out.contains("on 50 samples: 50 training samples") && out.contains("clean only"), "{out}");
    let (code, out, err) = fptgen(&["generate", m, "--rule", "sgm", "--sgm", "other.npz", "-o", "gen"], dir.path());
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(dir.path().join("gen/mem/fc3_sgm_u.hex").is_file(), "{out}");
    std::fs::remove_file(dir.path().join("other.npz")).expect("rm");
    // check reads an existing archive: a foreign file is an error naming it.
    std::fs::write(&model, &text).expect("write");
    std::fs::copy(dir.path().join("weights.npz"), dir.path().join("sgm.npz")).expect("copy");
    let (code, _, err) = fptgen(&["check", m], dir.path());
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("sgm.npz") && err.contains("fc3/sgm_v"), "{err}");
    std::fs::remove_file(dir.path().join("sgm.npz")).expect("rm");
    // fc3's trainable line is the first: without it only the output layer trains.
    std::fs::write(&model, text.replacen("    trainable: [weights, biases]\n", "", 1)).expect("write");
    let (code, _, err) = fptgen(&["train", m, "--data", d, "--sgm", "--validation", "0"], dir.path());
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("no hidden trainable layer"), "{err}");
    assert!(!dir.path().join("sgm.npz").exists());
}
