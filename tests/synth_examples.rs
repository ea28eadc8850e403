//! `fptgen synth` on every design with a golden baseline
//! (tests/common/baseline.rs): yosys (`synth_xilinx -family xcu`, the
//! UltraScale family of seed 003's part) synthesizes the generated design,
//! and the reports are consistent with yosys's own output: the top
//! module's count with its submodules equals the design total (two
//! different sections of yosys's statistics), every share is the count over
//! the part's published capacity, the printed summary matches the JSON,
//! the timing estimate is there with plausible values and within the
//! model's clock (the timing budget: the test fails when a design's worst
//! path misses it), and the figures equal the baseline's `synth` section
//! (`trainer_only` for `--trainer-only`). The fast tier synthesizes tiny
//! (with its ES and dfa trainers and by difference), int8_head and
//! all_operators (the two closest to the clock); the full tier (`bash
//! tests/run.sh --full`) also jet_tagging, residual, mnist_cnn, MNIST,
//! model_ii56 (an hour) and the MNIST trainer alone at four block counts.
//! Needs yosys: the test fails (it does not skip) without it.

use std::path::Path;

mod common;
use common::{baseline, fptgen, require, root, untrained_copy};

/// xcku035 (DS890): LUTs, FFs, DSP slices, 36 Kb block RAMs.
const CAPACITY: [(&str, f64); 4] = [("luts", 203_128.0), ("ffs", 406_256.0), ("dsps", 1_700.0), ("bram36", 540.0)];

/// `fptgen synth` on the design of baseline `name` (tests/common/baseline.rs)
/// in `dir`, with `extra` options; its stdout and reports/<report>.json.
fn synth(name: &str, dir: &Path, extra: &[&str], report: &str) -> (String, serde_json::Value) {
    require("yosys");
    let d = baseline::design(name);
    let model = baseline::model_file(d, dir);
    let mut args = vec!["synth", model.to_str().expect("utf8"), "-o", "out"];
    args.extend(d.args);
    args.extend(extra);
    let (code, out, err) = fptgen(&args, dir);
    assert_eq!(code, 0, "synth {name}:\n{out}\n{err}");
    (out, baseline::read_json(&dir.join(format!("out/reports/{report}.json"))))
}

/// `fptgen synth` on the design of baseline `name`: its reports consistent
/// with yosys's output, within its clock by the estimate, and its figures
/// equal to the baseline's `synth` section.
fn check(name: &str, trainer: bool) {
    let dir = tempfile::tempdir().expect("tempdir");
    let (stdout, r) = synth(name, dir.path(), &[], "synth");
    let example = r["top"].as_str().expect("top").to_string();
    let example = example.as_str();
    let total = &r["total"];
    let u = |v: &serde_json::Value, k: &str| v[k].as_u64().unwrap_or_else(|| panic!("{k} in {v}"));
    assert!(u(total, "luts") > 0 && u(total, "ffs") > 0, "{r}");
    // The top module with its submodules is the design total.
    let top = r["modules"].as_array().expect("modules").iter().find(|m| m["name"] == example).expect("top module");
    assert_eq!(top["inclusive"], *total, "top module vs design hierarchy totals");
    // The trainer's blocks are there when the model has a training section.
    let names: Vec<&str> = r["modules"].as_array().expect("modules").iter().map(|m| m["name"].as_str().expect("name")).collect();
    for m in ["fptgen_es_ctrl", "fptgen_itb_ring", "fptgen_itb", "fptgen_lfsr_advance", "fptgen_loss_acc", "fptgen_po2"] {
        assert_eq!(names.contains(&m), trainer, "{m} in {names:?}");
    }
    // Shares against the part's capacity.
    let used = |k: &str| -> f64 {
        match k {
            "luts" => (u(total, "luts") + u(total, "lutram")) as f64,
            "bram36" => u(total, "ramb36") as f64 + u(total, "ramb18") as f64 / 2.0,
            _ => u(total, k) as f64,
        }
    };
    for (k, cap) in CAPACITY {
        let share = r["shares"][k].as_f64().unwrap_or_else(|| panic!("share {k}"));
        assert!((share - 100.0 * used(k) / cap).abs() < 1e-9, "{k}: {share}");
    }
    assert!(r["logic_levels"].as_u64().expect("logic_levels") > 0);
    // The timing estimate of the worst register-to-register path
    // (flow/src/sta.rs): plausible values, reported.
    let t = &r["timing"];
    assert!(u(t, "lut_levels") >= 1, "{t}");
    let (delay, fmax) = (t["delay_ns"].as_f64().expect("delay_ns"), t["fmax_mhz"].as_f64().expect("fmax_mhz"));
    assert!(delay > 0.0 && fmax > 0.0 && (fmax * delay - 1000.0).abs() < 1e-6, "{t}");
    assert!(!t["start"].as_str().expect("start").is_empty() && !t["end"].as_str().expect("end").is_empty(), "{t}");
    let clock = r["clock_period_ns"].as_f64().expect("clock_period_ns");
    assert_eq!(r["meets_clock"].as_bool(), Some(delay <= clock), "{r}");
    // The timing budget: by the estimate, the example's worst path, trainer
    // included, fits its clock (docs/hardware.md, "Timing estimate").
    within_clock(example, &r);
    // The summary printed is the JSON's.
    assert!(stdout.contains(&format!("LUTs     {:>9}", used("luts") as u64)), "{stdout}");
    assert!(stdout.contains(&format!("longest combinational path: {} cells", r["logic_levels"])), "{stdout}");
    // The reports belong to the design directory: listed in its manifest.
    let out = dir.path().join("out");
    assert!(common::manifest_lists(&out, "reports/synth.md") && common::manifest_lists(&out, "reports/synth.json"));
    let md = std::fs::read_to_string(dir.path().join("out/reports/synth.md")).expect("synth.md");
    assert!(md.contains(&format!("| {example} | 1 | {} |", used("luts") as u64)), "{md}");
    assert!(md.contains("Timing estimate") && md.contains(&format!("| LUT levels | {} |", u(t, "lut_levels"))), "{md}");
    assert!(md.contains(&format!("| estimated fmax | {fmax:.0} MHz |")), "{md}");
    assert!(stdout.contains(&format!("timing estimate: {delay:.2} ns, fmax {fmax:.0} MHz")), "{stdout}");
    baseline::check(name, "synth", baseline::synth_figures(&r));
}

#[test]
fn tiny_synthesizes_with_its_trainer() {
    check("tiny", true);
}

#[test]
#[ignore = "full tier: about 50 s of yosys"]
fn jet_tagging_synthesizes_with_its_trainer() {
    check("jet_tagging", true);
}

/// int8_head's ES trainer perturbs int32 biases: its worst path (the
/// perturbation's 32-bit add and clamp into the bias memory's trainer port)
/// is the closest of the examples to the 5 ns clock (docs/results/kintex.md).
#[test]
fn int8_head_synthesizes_with_its_trainer() {
    check("int8_head", true);
}

/// residual: a convolution's skip branch through concat, and its trained
/// fully connected layer's weights in banks of distributed RAM.
#[test]
#[ignore = "full tier: about 30 s of yosys"]
fn residual_synthesizes_with_its_trainer() {
    check("residual", true);
}

/// all_operators: every core operator in one pipeline; its worst path (a
/// dense layer's synapse-fold counter into a fork's occupancy) is within
/// about 1% of the 5 ns clock (docs/results/kintex.md).
#[test]
fn all_operators_synthesizes_with_its_trainer() {
    check("all_operators", true);
}

/// The timing budget also holds for a feedback-rule trainer: tiny with
/// `--rule dfa` (its step unit with stochastic rounding, the delta and
/// walk logic) fits the 5 ns clock by the estimate.
#[test]
fn tiny_with_the_dfa_trainer_meets_its_clock() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (_, r) = synth("tiny_dfa", dir.path(), &[], "synth");
    let names: Vec<&str> = r["modules"].as_array().expect("modules").iter().map(|m| m["name"].as_str().expect("name")).collect();
    assert!(names.contains(&"fptgen_fb_step") && !names.contains(&"fptgen_itb"), "the dfa trainer, not ES: {names:?}");
    within_clock("tiny --rule dfa", &r);
    baseline::check("tiny_dfa", "synth", baseline::synth_figures(&r));
}

/// The timing budget also holds for a design that evaluates members by
/// difference: examples/tiny/model_difference.yaml (the difference unit,
/// its delta lanes and finishing, the subset play) fits the 5 ns clock by
/// the estimate, with the unit in the netlist.
#[test]
fn tiny_by_difference_meets_its_clock() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (_, r) = synth("tiny_difference", dir.path(), &[], "synth");
    let names: Vec<&str> = r["modules"].as_array().expect("modules").iter().map(|m| m["name"].as_str().expect("name")).collect();
    for m in ["fptgen_diff_eval", "fptgen_delta_lanes", "fptgen_delta_finish", "fptgen_es_ctrl"] {
        assert!(names.contains(&m), "{m} in {names:?}");
    }
    within_clock("tiny by difference", &r);
    baseline::check("tiny_difference", "synth", baseline::synth_figures(&r));
}

/// The worst path of synth.json `r` is within its clock by the estimate.
fn within_clock(what: &str, r: &serde_json::Value) {
    let t = &r["timing"];
    let (delay, clock) = (t["delay_ns"].as_f64().expect("delay_ns"), r["clock_period_ns"].as_f64().expect("clock_period_ns"));
    assert!(delay > 0.0 && delay <= clock, "{what}: the worst path takes {delay:.2} ns, over the {clock} ns clock: {t}");
}

// The full tier (`bash tests/run.sh --full`): the designs that take
// minutes to an hour to synthesize on 2 cores.

/// The imported Brevitas MNIST network (no trainer: its model file has no
/// `training:` section).
#[test]
#[ignore = "full tier: a few minutes of yosys"]
fn brevitas_mnist_synthesizes() {
    check("brevitas_mnist", false);
}

/// mnist_cnn with its ES trainer (about 4 minutes).
#[test]
#[ignore = "full tier: about 4 minutes of yosys"]
fn mnist_cnn_synthesizes_with_its_trainer() {
    check("mnist_cnn", true);
}

/// The MNIST network (II 560) with its ES trainer, P = 100, evaluated by
/// difference (about 6 minutes).
#[test]
#[ignore = "full tier: about 6 minutes of yosys"]
fn mnist_synthesizes_with_its_trainer() {
    check("mnist", true);
}

/// model_ii56: the MNIST network at II 56 with P = 1000 and its
/// difference unit (about an hour and 5.4 GB).
#[test]
#[ignore = "full tier: about an hour of yosys and 5.4 GB"]
fn mnist_ii56_synthesizes_with_its_trainer() {
    check("mnist_ii56", true);
}

/// The MNIST trainer alone (`--trainer-only`) at P = 1, 10, 100 and 1000:
/// docs/results/kintex.md's Tables I and II (30 s to 6 minutes each).
#[test]
#[ignore = "full tier: about 10 minutes of yosys"]
fn mnist_trainer_alone_at_four_block_counts() {
    for name in ["mnist_p1", "mnist_p10", "mnist", "mnist_p1000"] {
        let dir = tempfile::tempdir().expect("tempdir");
        let (_, r) = synth(name, dir.path(), &["--trainer-only"], "synth_trainer");
        assert_eq!(r["trainer_only"], true, "{name}");
        baseline::check(name, "trainer_only", baseline::synth_figures(&r));
    }
}

#[test]
fn synth_refuses_bad_overrides() {
    let dir = tempfile::tempdir().expect("tempdir");
    let untrained = untrained_copy(dir.path(), "tiny");
    let (code, _, err) = fptgen(&["synth", untrained.to_str().expect("utf8"), "--blocks", "4"], dir.path());
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("model.yaml") && err.contains("training:"), "{err}");
    let tiny = root().join("examples/tiny/model.yaml");
    let (code, _, err) = fptgen(&["synth", tiny.to_str().expect("utf8"), "--population", "3"], dir.path());
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("population is 3") && err.contains("even"), "{err}");
}
