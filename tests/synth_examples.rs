//! `fptgen synth` on the examples that synthesize in minutes (tiny,
//! jet_tagging, int8_head, residual, all_operators; tiny's dfa trainer and
//! tiny evaluated by difference; MNIST, mnist_cnn and
//! model_ii56 take 4 to 65 minutes and are run by hand, docs/results/kintex.md):
//! yosys (`synth_xilinx -family xcu`,
//! the UltraScale family of seed 003's part) synthesizes the generated
//! design, and the reports are consistent with yosys's own output: the top
//! module's count with its submodules equals the design total (two
//! different sections of yosys's statistics), every share is the count over
//! the part's published capacity, the printed summary matches the JSON,
//! and the timing estimate is there with plausible values and within the
//! model's clock (the timing budget: the test fails when an example's
//! worst path misses it). Needs yosys:
//! the test fails (it does not skip) without it.

use std::path::Path;

mod common;
use common::{fptgen, require, root, untrained_copy};

/// xcku035 (DS890): LUTs, FFs, DSP slices, 36 Kb block RAMs.
const CAPACITY: [(&str, f64); 4] = [("luts", 203_128.0), ("ffs", 406_256.0), ("dsps", 1_700.0), ("bram36", 540.0)];

fn synth(example: &str, dir: &Path) -> (String, serde_json::Value) {
    require("yosys");
    let model = root().join(format!("examples/{example}/model.yaml"));
    let (code, out, err) = fptgen(&["synth", model.to_str().expect("utf8"), "-o", "out"], dir);
    assert_eq!(code, 0, "synth {example}:\n{out}\n{err}");
    let json = std::fs::read_to_string(dir.join("out/reports/synth.json")).expect("synth.json");
    (out, serde_json::from_str(&json).expect("json"))
}

fn check(example: &str, trainer: bool) {
    let dir = tempfile::tempdir().expect("tempdir");
    let (stdout, r) = synth(example, dir.path());
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
    // (generator/src/sta.rs): plausible values, reported.
    let t = &r["timing"];
    assert!(u(t, "lut_levels") >= 1, "{t}");
    let (delay, fmax) = (t["delay_ns"].as_f64().expect("delay_ns"), t["fmax_mhz"].as_f64().expect("fmax_mhz"));
    assert!(delay > 0.0 && fmax > 0.0 && (fmax * delay - 1000.0).abs() < 1e-6, "{t}");
    assert!(!t["start"].as_str().expect("start").is_empty() && !t["end"].as_str().expect("end").is_empty(), "{t}");
    let clock = r["clock_period_ns"].as_f64().expect("clock_period_ns");
    assert_eq!(r["meets_clock"].as_bool(), Some(delay <= clock), "{r}");
    // The timing budget: by the estimate, the example's worst path, trainer
    // included, fits its clock (docs/hardware.md, "Timing estimate").
    assert!(delay <= clock, "{example}: the worst path takes {delay:.2} ns, over the {clock} ns clock: {t}");
    // The summary printed is the JSON's.
    assert!(stdout.contains(&format!("LUTs     {:>9}", used("luts") as u64)), "{stdout}");
    assert!(stdout.contains(&format!("longest combinational path: {} cells", r["logic_levels"])), "{stdout}");
    // The reports belong to the design directory: listed in its manifest.
    let manifest = std::fs::read_to_string(dir.path().join("out/.fptgen-manifest")).expect("manifest");
    assert!(manifest.lines().any(|l| l == "reports/synth.md") && manifest.lines().any(|l| l == "reports/synth.json"));
    let md = std::fs::read_to_string(dir.path().join("out/reports/synth.md")).expect("synth.md");
    assert!(md.contains(&format!("| {example} | 1 | {} |", used("luts") as u64)), "{md}");
    assert!(md.contains("Timing estimate") && md.contains(&format!("| LUT levels | {} |", u(t, "lut_levels"))), "{md}");
    assert!(md.contains(&format!("| estimated fmax | {fmax:.0} MHz |")), "{md}");
    assert!(stdout.contains(&format!("timing estimate: {delay:.2} ns, fmax {fmax:.0} MHz")), "{stdout}");
}

#[test]
fn tiny_synthesizes_with_its_trainer() {
    check("tiny", true);
}

#[test]
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
    require("yosys");
    let dir = tempfile::tempdir().expect("tempdir");
    let model = root().join("examples/tiny/model.yaml");
    let (code, out, err) = fptgen(&["synth", model.to_str().expect("utf8"), "--rule", "dfa", "-o", "out"], dir.path());
    assert_eq!(code, 0, "synth tiny --rule dfa:\n{out}\n{err}");
    let r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("out/reports/synth.json")).expect("synth.json")).expect("json");
    let names: Vec<&str> = r["modules"].as_array().expect("modules").iter().map(|m| m["name"].as_str().expect("name")).collect();
    assert!(names.contains(&"fptgen_fb_step") && !names.contains(&"fptgen_itb"), "the dfa trainer, not ES: {names:?}");
    let t = &r["timing"];
    let (delay, clock) = (t["delay_ns"].as_f64().expect("delay_ns"), r["clock_period_ns"].as_f64().expect("clock_period_ns"));
    assert!(delay > 0.0 && delay <= clock, "tiny --rule dfa: the worst path takes {delay:.2} ns, over the {clock} ns clock: {t}");
}

/// The timing budget also holds for a design that evaluates members by
/// difference: examples/tiny/model_difference.yaml (the difference unit,
/// its delta lanes and finishing, the subset play) fits the 5 ns clock by
/// the estimate, with the unit in the netlist.
#[test]
fn tiny_by_difference_meets_its_clock() {
    require("yosys");
    let dir = tempfile::tempdir().expect("tempdir");
    let model = root().join("examples/tiny/model_difference.yaml");
    let (code, out, err) = fptgen(&["synth", model.to_str().expect("utf8"), "-o", "out"], dir.path());
    assert_eq!(code, 0, "synth tiny by difference:\n{out}\n{err}");
    let r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("out/reports/synth.json")).expect("synth.json")).expect("json");
    let names: Vec<&str> = r["modules"].as_array().expect("modules").iter().map(|m| m["name"].as_str().expect("name")).collect();
    for m in ["fptgen_diff_eval", "fptgen_delta_lanes", "fptgen_delta_finish", "fptgen_es_ctrl"] {
        assert!(names.contains(&m), "{m} in {names:?}");
    }
    let t = &r["timing"];
    let (delay, clock) = (t["delay_ns"].as_f64().expect("delay_ns"), r["clock_period_ns"].as_f64().expect("clock_period_ns"));
    assert!(delay > 0.0 && delay <= clock, "tiny by difference: the worst path takes {delay:.2} ns, over the {clock} ns clock: {t}");
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
