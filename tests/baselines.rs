//! The exact figures of every design with a golden baseline
//! (`tests/baselines/<design>.json`, tests/common/baseline.rs): `fptgen
//! generate` on each, and its report.json's initiation interval, latency,
//! per-layer cycles and trainer schedule equal to the baseline's `exact`
//! section. Co-simulation (tests/cosim_examples.rs and the random
//! networks) checks that the hardware takes exactly these cycles; this test
//! makes every change of them visible: it fails until the baseline is
//! blessed (`bash tests/run.sh --bless`) in the same commit. No external
//! tool needed.

mod common;
use common::baseline::{self, DESIGNS};
use common::fptgen;

#[test]
fn exact_figures_equal_the_baselines() {
    let mut failures = Vec::new();
    for d in DESIGNS {
        let dir = tempfile::tempdir().expect("tempdir");
        let model = baseline::model_file(d, dir.path());
        let mut args = vec!["generate", model.to_str().expect("utf8"), "-o", "out"];
        args.extend(d.args);
        let (code, out, err) = fptgen(&args, dir.path());
        assert_eq!(code, 0, "generate {}:\n{out}\n{err}", d.name);
        let report = baseline::read_json(&dir.path().join("out/report.json"));
        let now = baseline::exact_figures(&report);
        // Every design's failure at once: one change usually moves several.
        if let Err(e) = std::panic::catch_unwind(|| baseline::check(d.name, "exact", now)) {
            failures.push(e.downcast_ref::<String>().cloned().unwrap_or_else(|| format!("{}: failed", d.name)));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// The comparison itself: a figure moved by one cycle, a figure added and
/// one removed are each named with the baseline's and the new value.
#[test]
fn a_moved_figure_is_named() {
    let was = serde_json::json!({"ii": 560, "layers": [{"name": "fc1", "cycles": 560}], "es": {"cycles_per_group": 36400}});
    let now = serde_json::json!({"ii": 560, "layers": [{"name": "fc1", "cycles": 561}], "es": {"fill_cycles": 0}});
    let mut d = Vec::new();
    baseline::diff("exact", &was, &now, &mut d);
    assert_eq!(
        d,
        [
            "exact.es.cycles_per_group: baseline 36400, now absent",
            "exact.es.fill_cycles: not in the baseline, now 0",
            "exact.layers[0].cycles: baseline 560, now 561",
        ]
    );
    let mut same = Vec::new();
    baseline::diff("exact", &was, &was, &mut same);
    assert!(same.is_empty());
}
