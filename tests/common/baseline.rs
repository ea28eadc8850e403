//! Golden baselines (`tests/baselines/<design>.json`): the figures a design
//! gives, checked on every run and rewritten only on request, as trybuild's
//! `TRYBUILD=overwrite` and insta's `INSTA_UPDATE` do.
//!
//! A baseline holds one JSON object per design with a section per source:
//! `exact` (the exact cycle models of `fptgen generate`'s report.json:
//! initiation interval, latency, every layer's cycles and latency, the
//! trainer's schedule), `synth` (`fptgen synth`'s yosys resources and timing
//! estimate, with yosys's version), `trainer_only` (the same with
//! `--trainer-only`) and `routed` (`fptgen implement`'s routed fmax and
//! utilization for an ECP5 part). Each section is compared as a whole; a difference
//! fails the test with every differing figure named. With
//! `FPTGEN_BLESS=1` in the environment the test writes the section instead
//! (`bash tests/run.sh --bless`), so a change that moves a figure commits its
//! baseline with it and the diff shows every hardware consequence.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde_json::{Map, Value};

use super::root;

/// A design with a baseline: an example's model file, with the options
/// `fptgen generate` (and `synth`) get.
pub struct Design {
    /// The baseline's name: `tests/baselines/<name>.json`.
    pub name: &'static str,
    /// The model file, relative to the repository root.
    pub model: &'static str,
    /// Extra options of `fptgen generate` and `fptgen synth`.
    pub args: &'static [&'static str],
    /// What the row stands for in the docs' tables.
    pub title: &'static str,
}

/// Every design with a baseline: every example's model file (the imported
/// one's after `fptgen import`; an example's ECP5 variant, `model_ecp5.yaml`,
/// is routed by `fptgen implement`), tiny's dfa trainer, and the MNIST
/// trainer alone at the block counts of docs/results/kintex.md's Table II.
pub const DESIGNS: &[Design] = &[
    Design { name: "tiny", model: "examples/tiny/model.yaml", args: &[], title: "tiny" },
    Design { name: "tiny_difference", model: "examples/tiny/model_difference.yaml", args: &[], title: "tiny by difference" },
    Design { name: "tiny_dfa", model: "examples/tiny/model.yaml", args: &["--rule", "dfa"], title: "tiny, dfa trainer" },
    Design { name: "tiny_ecp5", model: "examples/tiny/model_ecp5.yaml", args: &[], title: "tiny for ECP5 (LFE5U-85F, 125 MHz)" },
    Design { name: "jet_tagging", model: "examples/jet_tagging/model.yaml", args: &[], title: "jet_tagging" },
    Design { name: "jet_tagging_ecp5", model: "examples/jet_tagging/model_ecp5.yaml", args: &[], title: "jet_tagging for ECP5 (II 32, LFE5U-85F, 125 MHz)" },
    Design { name: "int8_head", model: "examples/int8_head/model.yaml", args: &[], title: "int8_head" },
    Design { name: "int8_head_ecp5", model: "examples/int8_head/model_ecp5.yaml", args: &[], title: "int8_head for ECP5 (LFE5U-85F, 125 MHz)" },
    Design { name: "residual", model: "examples/residual/model.yaml", args: &[], title: "residual" },
    Design { name: "residual_ecp5", model: "examples/residual/model_ecp5.yaml", args: &[], title: "residual for ECP5 (half SIMD, LFE5U-85F, 125 MHz)" },
    Design { name: "all_operators", model: "examples/all_operators/model.yaml", args: &[], title: "all_operators" },
    Design { name: "all_operators_ecp5", model: "examples/all_operators/model_ecp5.yaml", args: &[], title: "all_operators for ECP5 (LFE5U-85F, 125 MHz)" },
    Design { name: "mnist_cnn", model: "examples/mnist_cnn/model.yaml", args: &[], title: "mnist_cnn" },
    Design { name: "mnist_cnn_ecp5", model: "examples/mnist_cnn/model_ecp5.yaml", args: &[], title: "mnist_cnn for ECP5 (LFE5U-85F, 125 MHz)" },
    Design { name: "brevitas_mnist", model: "examples/brevitas_mnist/mnist_dense.onnx", args: &[], title: "brevitas_mnist (imported)" },
    Design { name: "mnist", model: "examples/mnist/model.yaml", args: &[], title: "mnist (P = 100)" },
    Design { name: "mnist_ecp5", model: "examples/mnist/model_ecp5.yaml", args: &[], title: "mnist for ECP5 (P = 100, LFE5U-85F, 125 MHz)" },
    Design { name: "mnist_ii56", model: "examples/mnist/model_ii56.yaml", args: &[], title: "mnist_ii56 (II 56, P = 1000)" },
    Design { name: "mnist_p1", model: "examples/mnist/model.yaml", args: &["--blocks", "1"], title: "mnist, P = 1" },
    Design { name: "mnist_p10", model: "examples/mnist/model.yaml", args: &["--blocks", "10"], title: "mnist, P = 10" },
    Design { name: "mnist_p1000", model: "examples/mnist/model.yaml", args: &["--blocks", "1000"], title: "mnist, P = 1000" },
];

/// The model file of design `d`, in `dir` if it has to be made: an
/// example that is an ONNX graph (brevitas_mnist) is imported first
/// (`fptgen import`), as a user would.
pub fn model_file(d: &Design, dir: &Path) -> PathBuf {
    let model = root().join(d.model);
    if model.extension().is_none_or(|e| e != "onnx") {
        return model;
    }
    let out = dir.join("imported");
    let (code, stdout, err) = super::fptgen(&["import", model.to_str().expect("utf8"), "-o", out.to_str().expect("utf8")], dir);
    assert_eq!(code, 0, "import {}:\n{stdout}\n{err}", d.model);
    out.join("model.yaml")
}

/// The design named `name`.
pub fn design(name: &str) -> &'static Design {
    DESIGNS.iter().find(|d| d.name == name).unwrap_or_else(|| panic!("no baseline design {name}"))
}

/// Whether this run writes baselines instead of checking them.
pub fn blessing() -> bool {
    std::env::var("FPTGEN_BLESS").is_ok_and(|v| v == "1")
}

/// `tests/baselines/<name>.json`.
pub fn path(name: &str) -> PathBuf {
    root().join("tests/baselines").join(format!("{name}.json"))
}

/// The baseline of `name` (an empty object when there is none yet).
pub fn load(name: &str) -> Map<String, Value> {
    let p = path(name);
    match std::fs::read_to_string(&p) {
        Ok(text) => match serde_json::from_str(&text) {
            Ok(Value::Object(m)) => m,
            Ok(_) | Err(_) => panic!("{}: not a JSON object", p.display()),
        },
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Map::new(),
        Err(e) => panic!("{}: {e}", p.display()),
    }
}

/// Serializes read-modify-write of baseline files by the tests of one
/// binary (cargo runs test binaries one after another).
static LOCK: Mutex<()> = Mutex::new(());

/// Checks section `section` of `name`'s baseline against `now` (or, when
/// blessing, writes it). Fails naming every figure that differs.
pub fn check(name: &str, section: &str, now: Value) {
    let _guard = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let mut base = load(name);
    let p = path(name);
    if blessing() {
        base.insert(section.to_string(), now);
        let mut text = serde_json::to_string_pretty(&Value::Object(base)).expect("json");
        text.push('\n');
        std::fs::create_dir_all(p.parent().expect("dir")).expect("mkdir");
        std::fs::write(&p, text).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
        return;
    }
    let Some(was) = base.get(section) else {
        panic!(
            "{}: no `{section}` section; write it with `bash tests/run.sh --bless` (FPTGEN_BLESS=1) and commit it",
            p.display()
        );
    };
    let mut diffs = Vec::new();
    diff(section, was, &now, &mut diffs);
    assert!(
        diffs.is_empty(),
        "{} differs from what the design gives now:\n  {}\nIf the change is meant, bless it (`bash tests/run.sh --bless`, or FPTGEN_BLESS=1 on this test) and commit the baseline with the change, saying why the figures moved.",
        p.display(),
        diffs.join("\n  ")
    );
}

/// Appends `path: baseline X, now Y` for every leaf where `a` and `b` differ.
pub fn diff(at: &str, a: &Value, b: &Value, out: &mut Vec<String>) {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            let keys: std::collections::BTreeSet<&String> = x.keys().chain(y.keys()).collect();
            for k in keys {
                let here = format!("{at}.{k}");
                match (x.get(k), y.get(k)) {
                    (Some(u), Some(v)) => diff(&here, u, v, out),
                    (Some(u), None) => out.push(format!("{here}: baseline {u}, now absent")),
                    (None, Some(v)) => out.push(format!("{here}: not in the baseline, now {v}")),
                    (None, None) => {}
                }
            }
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => {
            for (i, (u, v)) in x.iter().zip(y).enumerate() {
                diff(&format!("{at}[{i}]"), u, v, out);
            }
        }
        _ if a != b => out.push(format!("{at}: baseline {a}, now {b}")),
        _ => {}
    }
}

/// The exact figures of a generated design, from its report.json: what
/// the block models and the trainer's schedule give, which co-simulation
/// measures in the hardware.
pub fn exact_figures(report: &Value) -> Value {
    let n = &report["network"];
    let pick = |v: &Value, keys: &[&str]| -> Value {
        let mut m = Map::new();
        for k in keys {
            if let Some(x) = v.get(*k) {
                m.insert((*k).to_string(), x.clone());
            }
        }
        Value::Object(m)
    };
    let layers: Vec<Value> = n["layers"]
        .as_array()
        .expect("layers")
        .iter()
        .map(|l| pick(l, &["name", "kind", "cycles", "latency", "pe", "simd"]))
        .collect();
    let mut out = pick(n, &["ii", "latency", "in_beats", "out_beats", "clock_period_ns"]);
    let o = out.as_object_mut().expect("object");
    o.insert("layers".into(), Value::Array(layers));
    if !n["training"].is_null() {
        o.insert("training".into(), n["training"].clone());
    }
    if let Some(t) = n["trainer"].as_object() {
        let mut t = pick(
            &Value::Object(t.clone()),
            &["m", "eval_cycles", "first_sample", "loss_wait", "words", "word_w", "cycles_per_group", "cycles_per_iteration", "cycles_per_iteration_half", "fill_cycles"],
        );
        t.as_object_mut().expect("object").insert("evaluation".into(), n["trainer"]["evaluation"]["mode"].clone());
        o.insert("es".into(), t);
    }
    if n["feedback"].is_object() {
        o.insert(
            "feedback".into(),
            pick(&n["feedback"], &["rule", "m", "t", "first_sample", "eval1", "sgm_cycles", "sample_fixed", "walk_max", "cycles_per_iteration_min", "cycles_per_iteration_max"]),
        );
    }
    out
}

/// The figures of `fptgen synth`'s reports/synth.json (or
/// synth_trainer.json) that a baseline keeps: the totals, the longest
/// path, the timing estimate and its path, and yosys's version.
pub fn synth_figures(r: &Value) -> Value {
    let t = &r["timing"];
    // Every module's count with its submodules: the diff of a baseline
    // shows where a change moved the area.
    let modules: Map<String, Value> = r["modules"]
        .as_array()
        .expect("modules")
        .iter()
        .map(|m| (m["name"].as_str().expect("name").to_string(), m["inclusive"].clone()))
        .collect();
    serde_json::json!({
        "yosys": r["yosys"],
        "part": r["part"],
        "clock_period_ns": r["clock_period_ns"],
        "total": r["total"],
        "modules": modules,
        "logic_levels": r["logic_levels"],
        "timing": {
            "delay_ns": t["delay_ns"],
            "lut_levels": t["lut_levels"],
            "carry_cells": t["carry_cells"],
            "muxf_cells": t["muxf_cells"],
            "start": t["start"],
            "end": t["end"],
        },
    })
}

/// The figures of `fptgen implement`'s reports/implement.json that a
/// baseline keeps (section `routed`): the routed fmax, the cells used, the
/// worst path's delay, its split and end points, and the tools' versions.
pub fn routed_figures(r: &Value) -> Value {
    let used: Map<String, Value> = r["utilization"]
        .as_object()
        .expect("utilization")
        .iter()
        .filter(|(_, u)| u[0].as_u64().unwrap_or(0) > 0)
        .map(|(k, u)| (k.clone(), u.clone()))
        .collect();
    let p = &r["worst_path"];
    serde_json::json!({
        "tools": { "yosys": r["tools"]["yosys_version"], "nextpnr": r["tools"]["nextpnr_version"] },
        "part": r["part"],
        "clock_mhz": r["clock_mhz"],
        "fmax_mhz": r["fmax_mhz"],
        "utilization": used,
        "worst_path": { "delay_ns": p["delay_ns"], "logic_ns": p["logic_ns"], "routing_ns": p["routing_ns"], "hops": p["hops"].as_array().map(Vec::len), "from": p["from"], "to": p["to"] },
        "shell_bits": r["shell_bits"],
    })
}

/// Reads a JSON file.
pub fn read_json(p: &Path) -> Value {
    let text = std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}
