//! `fptgen sweep`: one row per point (N, P) with its yosys estimate, its
//! training schedule and its training result; one yosys run per distinct
//! design, cached in OUT for later sweeps; a failing point is reported and
//! the others finish (exit 1 after writing everything); bad options are
//! refused before any work. Needs yosys: the test fails (it does not skip)
//! without it.

use std::path::{Path, PathBuf};

mod common;
use common::{fptgen, require, root, untrained_copy};

use fptgen_sim::network::Network;
use fptgen_sim::tensor::{write_npz, NamedArray, OutValues};
use fptgen_sim::train::{Buffer, EvalMode, Trainer};
use fptgen_sim::weights::{self, Conversion};

const COLUMNS: &str = "population,blocks,status,error,design,cached,luts,luts_pct,ffs,ffs_pct,carry,dsps,dsps_pct,\
bram36,bram36_pct,logic_levels,groups,blocks_built,passes_per_image,cycles_per_iteration,iteration_us,us_per_image,loss,accuracy";

/// A directory with a copy of the tiny example (T = 6 trainable
/// parameters, M = 4, k = 2, antithetic fitness) and `data.npz`, 10
/// samples with targets and labels.
struct Case {
    dir: tempfile::TempDir,
    x: Vec<Vec<f64>>,
    t: Vec<Vec<f64>>,
    labels: Vec<usize>,
}

fn case() -> Case {
    let dir = tempfile::tempdir().expect("tempdir");
    for f in ["model.yaml", "weights.npz"] {
        std::fs::copy(root().join("examples/tiny").join(f), dir.path().join(f)).expect("copy example");
    }
    let (mut x, mut t, mut labels) = (Vec::new(), Vec::new(), Vec::new());
    for i in 0..10usize {
        // Inputs on the grid of ap_fixed<8,3> (steps of 1/32), targets on
        // the output grid.
        let a = ((i * 37 % 97) as f64 - 48.0) / 32.0;
        let b = ((i * 53 % 89) as f64 - 44.0) / 32.0;
        let t0 = ((0.5 * a - 0.25 * b).max(0.0) * 32.0).round() / 32.0;
        let t1 = ((0.75 * b + 0.125).max(0.0) * 32.0).round() / 32.0;
        x.push(vec![a, b]);
        t.push(vec![t0, t1]);
        labels.push(usize::from(t1 > t0));
    }
    let arr = |name: &str, v: &[Vec<f64>]| NamedArray {
        name: name.into(),
        shape: vec![v.len(), 2],
        values: OutValues::F64(v.concat()),
    };
    let l = NamedArray { name: "labels".into(), shape: vec![10], values: OutValues::I64(labels.iter().map(|&l| l as i64).collect()) };
    write_npz(&dir.path().join("data.npz"), &[arr("x", &x), arr("t", &t), l]).expect("write data");
    Case { dir, x, t, labels }
}

/// sweep.csv as rows of named cells.
fn read_csv(path: &Path) -> Vec<std::collections::BTreeMap<String, String>> {
    let text = std::fs::read_to_string(path).expect("sweep.csv");
    let mut lines = text.lines();
    let head: Vec<&str> = lines.next().expect("header").split(',').collect();
    assert_eq!(head.join(","), COLUMNS);
    lines
        .map(|l| {
            // No test cell is quoted: split on commas.
            let cells: Vec<&str> = l.split(',').collect();
            assert_eq!(cells.len(), head.len(), "{l}");
            head.iter().zip(cells).map(|(h, c)| (h.to_string(), c.to_string())).collect()
        })
        .collect()
}

fn json(path: PathBuf) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).expect("sweep.json")).expect("json")
}

/// The trainer's schedule recomputed from docs/training.md: with P blocks
/// (min(P, T)), a group of tg parameters takes N * (P + E + 5) + 2 * P + tg
/// + 5 cycles (tiny's antithetic fitness, no baseline, nothing paused or
/// served), E = D + (M - 1) * II + latency + 1 + W, groups of P parameters,
/// the last partial.
fn cycles(n: u64, p: u64, t: u64, m: u64, ii: u64, latency: u64, d: u64) -> (u64, u64) {
    // W = 1 + ceil(clog2(outputs) / 2) cycles of loss pipeline: tiny has 2
    // outputs, so W = 2.
    let w = 2;
    let e = d + (m - 1) * ii + latency + 1 + w;
    let p = p.min(t);
    let g = t.div_ceil(p);
    let group = |tg: u64| n * (p + e + 5) + 2 * p + tg + 5;
    (g, (g - 1) * group(p) + group(t - (g - 1) * p))
}

/// The library's ES training of tiny with N and P on the first 4 samples
/// for 2 iterations: the buffer loss and the accuracy on all 10 samples.
fn library_training(dir: &Path, x: &[Vec<f64>], t: &[Vec<f64>], labels: &[usize], n: usize, p: usize) -> (u32, f64) {
    let model = fptgen_sim::model::load(&dir.join("model.yaml")).expect("model");
    let params = weights::load(&model, Conversion::Exact).expect("weights");
    let q = |v: &[f64], f: fptgen_sim::fixed::Format| v.iter().map(|&a| f.exact_f64(a).expect("on the grid")).collect::<Vec<i128>>();
    let inputs: Vec<Vec<i128>> = x.iter().map(|c| q(c, model.input_format)).collect();
    let targets: Vec<Vec<i128>> = t.iter().take(4).map(|c| q(c, model.output_format())).collect();
    let buffer = Buffer::new(&model, inputs[..4].to_vec(), targets).expect("buffer");
    let mut training = model.training.expect("training section");
    (training.population, training.blocks) = (n, p);
    let net = Network::new(model.clone(), params).expect("net");
    let mut trainer = Trainer::with_training(net, training, buffer, EvalMode::Naive).expect("trainer");
    let loss = trainer.run(training.iterations, &mut |_| {}).expect("trains");
    let outs = trainer.network().expect("net").infer_batch(&inputs).expect("infer");
    let argmax = |y: &Vec<i128>| (0..y.len()).fold(0, |b, i| if y[i] > y[b] { i } else { b });
    let right = outs.iter().zip(labels).filter(|(y, &l)| argmax(y) == l).count();
    (loss, right as f64 / labels.len() as f64)
}

#[test]
fn sweep_reports_every_point_runs_yosys_once_per_design_and_caches() {
    require("yosys");
    let Case { dir, x, t, labels } = case();
    let d = dir.path();
    // P 6 and 8 are both at least T = 6: the same 6-block design. N 3 is
    // odd, which antithetic fitness refuses.
    let (code, out, err) = fptgen(
        &["sweep", "model.yaml", "--population", "2,3,4", "--blocks", "6,8", "-o", "out", "--data", "data.npz", "--jobs", "2"],
        d,
    );
    assert_eq!(code, 1, "a failing point makes the exit status 1:\n{out}\n{err}");
    assert!(err.contains("2 of 6 points failed"), "{err}");
    let rows = read_csv(&d.join("out/sweep.csv"));
    let grid: Vec<(usize, usize)> = rows.iter().map(|r| (r["population"].parse().unwrap(), r["blocks"].parse().unwrap())).collect();
    assert_eq!(grid, [(2, 6), (2, 8), (3, 6), (3, 8), (4, 6), (4, 8)]);
    let row = |n: usize, p: usize| &rows[grid.iter().position(|&g| g == (n, p)).expect("point")];
    for p in [6, 8] {
        let r = row(3, p);
        assert_eq!(r["status"], "failed");
        assert!(r["error"].contains("population is 3") && r["error"].contains("even"), "{r:?}");
        assert!(r["luts"].is_empty() && r["loss"].is_empty(), "{r:?}");
        assert!(out.contains("failed: configuration: population is 3"), "{out}");
    }
    // Shared designs: same hash, same estimate; N changes the design.
    let area = ["design", "luts", "ffs", "carry", "dsps", "bram36", "luts_pct", "logic_levels"];
    for n in [2, 4] {
        let (a, b) = (row(n, 6), row(n, 8));
        assert_eq!((a["status"].as_str(), b["status"].as_str()), ("ok", "ok"), "{a:?} {b:?}");
        for k in area {
            assert_eq!(a[k], b[k], "{k} of N {n}: P 6 and 8 share a design");
        }
        assert!(a["luts"].parse::<u64>().expect("LUTs") > 0);
        assert_eq!(a["cached"], "false");
    }
    assert_ne!(row(2, 6)["design"], row(4, 6)["design"]);
    let j = json(d.join("out/sweep.json"));
    assert_eq!((j["designs"].as_u64(), j["yosys_runs"].as_u64(), j["cache_hits"].as_u64()), (Some(2), Some(2), Some(0)), "{j}");
    assert_eq!(j["failed"].as_u64(), Some(2));
    assert_eq!(j["points"].as_array().expect("points").len(), 6);
    assert!(j["points"][2]["error"].as_str().expect("error").contains("even"), "{j}");
    assert!(out.contains("2 distinct designs: yosys ran 2 times"), "{out}");
    // The estimate is `fptgen synth`'s: the cached design's reports/synth.json.
    let h = &row(4, 6)["design"];
    let synth = json(d.join(format!("out/cache/{h}/reports/synth.json")));
    let total = &synth["total"];
    let luts = total["luts"].as_u64().unwrap() + total["lutram"].as_u64().unwrap();
    assert_eq!(row(4, 6)["luts"], luts.to_string());
    assert_eq!(row(4, 6)["ffs"], total["ffs"].to_string());

    // Time: docs/training.md's formula, with II and latency from `fptgen
    // generate`'s report (one buffer word per input, D = 1), and the
    // report's own schedule for the same N and P.
    for n in [2u64, 4] {
        for p in [6u64, 8] {
            let gen = format!("gen-{n}-{p}");
            let (code, _, err) =
                fptgen(&["generate", "model.yaml", "-o", &gen, "--population", &n.to_string(), "--blocks", &p.to_string()], d);
            assert_eq!(code, 0, "{err}");
            let rep = json(d.join(&gen).join("report.json"));
            let net = &rep["network"];
            assert_eq!(net["trainer"]["words"].as_u64(), Some(1));
            let (ii, latency) = (net["ii"].as_u64().unwrap(), net["latency"].as_u64().unwrap());
            let (g, c) = cycles(n, p, 6, 4, ii, latency, 1);
            let r = row(n as usize, p as usize);
            assert_eq!(r["groups"], g.to_string());
            assert_eq!(r["passes_per_image"], (g * n).to_string(), "G * N");
            assert_eq!(r["cycles_per_iteration"], c.to_string());
            assert_eq!(r["blocks_built"], "6");
            let us: f64 = r["iteration_us"].parse().unwrap();
            assert!((us - c as f64 * 5.0 / 1000.0).abs() < 1e-9, "{us} at 5 ns");
            let per_image: f64 = r["us_per_image"].parse().unwrap();
            assert!((per_image - us / 4.0).abs() < 1e-9);
            assert_eq!(net["training"]["cycles_per_iteration"].as_u64(), Some(c), "report.json");
        }
    }
    // A design whose groups are not all full: P 4 over T 6 (groups of 4 and
    // 2); II 1, latency 5, so E = 1 + 3 + 5 + 1 + 2 = 12.
    // Each group: N = 4 members of P + E + 5 (a perturbation pass, which
    // also accumulates the member before, and the evaluation), the last
    // member's accumulation pass and the update pass (2 * P), and tg + 5.
    assert_eq!(cycles(4, 4, 6, 4, 1, 5, 1), (2, 4 * (4 + 12 + 5) + 2 * 4 + 4 + 5 + 4 * (4 + 12 + 5) + 2 * 4 + 2 + 5));

    // Training: the library's ES trainer with the same N and P.
    for n in [2, 4] {
        let (loss, acc) = library_training(d, &x, &t, &labels, n, 6);
        for p in [6, 8] {
            assert_eq!(row(n, p)["loss"], loss.to_string(), "N {n} P {p}");
            let got: f64 = row(n, p)["accuracy"].parse().unwrap();
            assert!((got - acc).abs() < 1e-12, "accuracy {got} vs {acc}");
        }
    }

    // The plots: SVG documents with one series per N and points labeled by P.
    for (f, words) in [
        ("area_time.svg", &["LUTs", "N = 2", "N = 4", "P=6,8"][..]),
        ("quality_time.svg", &["accuracy", "N = 2", "N = 4", "P=6,8", "before training"][..]),
    ] {
        let svg = std::fs::read_to_string(d.join("out").join(f)).expect("svg");
        assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"), "{f}");
        assert_eq!(svg.matches("<text").count(), svg.matches("</text>").count(), "{f}");
        for w in words {
            assert!(svg.contains(w), "{w:?} in {f}");
        }
        assert!(!svg.contains("N = 3"), "the failed N has no series in {f}");
    }
    for f in ["sweep.csv", "sweep.json", "area_time.svg", "quality_time.svg"] {
        assert!(common::manifest_lists(&d.join("out"), f), "{f} in the manifest");
    }

    // Again into the same OUT, without data: the estimates come from the
    // cache (P 7 is again the 6-block design), nothing fails, the accuracy
    // columns are empty, and every result file is replaced.
    let (code, out, err) = fptgen(&["sweep", "model.yaml", "--population", "4", "--blocks", "6,7", "-o", "out"], d);
    assert_eq!(code, 0, "{out}\n{err}");
    let j = json(d.join("out/sweep.json"));
    assert_eq!((j["designs"].as_u64(), j["yosys_runs"].as_u64(), j["cache_hits"].as_u64()), (Some(1), Some(0), Some(1)), "{j}");
    let again = read_csv(&d.join("out/sweep.csv"));
    assert_eq!(again.len(), 2);
    for r in &again {
        assert_eq!((r["status"].as_str(), r["cached"].as_str()), ("ok", "true"));
        assert_eq!(r["luts"], row(4, 6)["luts"]);
        assert_eq!(r["design"], row(4, 6)["design"]);
        assert!(r["loss"].is_empty() && r["accuracy"].is_empty(), "{r:?}");
    }
    let svg = std::fs::read_to_string(d.join("out/quality_time.svg")).expect("svg");
    assert!(svg.contains("no --data"), "{svg}");
}

#[test]
fn sweep_refuses_bad_options_before_any_work() {
    let dir = case().dir;
    let d = dir.path();
    let run = |args: &[&str]| {
        let mut all = vec!["sweep", "model.yaml", "-o", "out"];
        all.extend_from_slice(args);
        fptgen(&all, d)
    };
    // clap: empty, zero, not a number, missing (exit 1 like every bad
    // input, the option named).
    for (args, words) in [
        (&["--population", "", "--blocks", "1"][..], &["--population", "''"][..]),
        (&["--population", "2,,4", "--blocks", "1"][..], &["--population"][..]),
        (&["--population", "0", "--blocks", "1"][..], &["--population", "0"][..]),
        (&["--population", "2", "--blocks", "1,0"][..], &["--blocks", "0"][..]),
        (&["--population", "2,x", "--blocks", "1"][..], &["--population", "'x'"][..]),
        (&["--population", "2"][..], &["--blocks"][..]),
        (&["--population", "2", "--blocks", "1", "--jobs", "0"][..], &["--jobs"][..]),
        (&["--population", "2", "--blocks", "1", "--iterations", "3"][..], &["--data"][..]),
    ] {
        let (code, _, err) = run(args);
        assert_eq!(code, 1, "{args:?}: {err}");
        for w in words {
            assert!(err.contains(w), "{w:?} for {args:?} in {err}");
        }
    }
    // fptgen: duplicates, a bad iteration count, no training section, a
    // foreign output directory (exit 1, "error: ").
    std::fs::create_dir(d.join("foreign")).expect("mkdir");
    std::fs::write(d.join("foreign/notes.txt"), "mine").expect("write");
    let untrained = untrained_copy(d, "tiny");
    let untrained = untrained.to_str().expect("utf8");
    for (args, words) in [
        (vec!["sweep", "model.yaml", "-o", "out", "--population", "2,4,2", "--blocks", "1"], &["--population", "2 more than once"][..]),
        (vec!["sweep", "model.yaml", "-o", "out", "--population", "2", "--blocks", "3,3"], &["--blocks", "3 more than once"][..]),
        (
            vec!["sweep", "model.yaml", "-o", "out", "--population", "2", "--blocks", "1", "--data", "data.npz", "--iterations", "0"],
            &["'0' for '--iterations <K>'", "from 1 to"][..],
        ),
        (vec!["sweep", untrained, "-o", "out", "--population", "2", "--blocks", "1"], &["model.yaml", "no `training:` section"][..]),
        (vec!["sweep", "model.yaml", "-o", "foreign", "--population", "2", "--blocks", "1"], &["foreign", "not created by fptgen"][..]),
        (vec!["sweep", "model.yaml", "-o", "out", "--population", "2", "--blocks", "1", "--data", "missing.npz"], &["missing.npz"][..]),
    ] {
        let (code, _, err) = fptgen(&args, d);
        assert_eq!(code, 1, "{args:?}: {err}");
        assert!(err.starts_with("error: "), "{err}");
        for w in words {
            assert!(err.contains(w), "{w:?} for {args:?} in {err}");
        }
    }
    assert!(!d.join("out").exists(), "nothing written on a refused run");
    assert_eq!(std::fs::read_dir(d.join("foreign")).expect("dir").count(), 1, "the foreign directory is untouched");
}
