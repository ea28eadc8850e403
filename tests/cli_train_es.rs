//! `fptgen train-es`: trains exactly as the library's `Trainer` does,
//! writes new files only, and names the file, array and index of every bad
//! input (exit 1, never a panic).

use std::path::Path;

mod common;
use common::{fptgen, root};

use fptgen_sim::network::Network;
use fptgen_sim::tensor::{self, write_npz, NamedArray, OutValues, Values};
use fptgen_sim::train::{Buffer, EvalMode, Trainer};
use fptgen_sim::weights::{self, Conversion};

/// A directory with a copy of the tiny example (model and weights), so the
/// default output lands there, and a data archive.
struct Case {
    dir: tempfile::TempDir,
}

fn arr(name: &str, shape: &[usize], v: Vec<f64>) -> NamedArray {
    NamedArray { name: name.into(), shape: shape.to_vec(), values: OutValues::F64(v) }
}

fn ints(name: &str, shape: &[usize], v: Vec<i64>) -> NamedArray {
    NamedArray { name: name.into(), shape: shape.to_vec(), values: OutValues::I64(v) }
}

/// S samples for the tiny network (2 inputs, 2 outputs): inputs on the
/// grid of ap_fixed<8,3> (steps of 1/32), targets a fixed linear map of
/// them, labels the larger target.
fn tiny_data(s: usize) -> (Vec<f64>, Vec<f64>, Vec<i64>) {
    let mut x = Vec::new();
    let mut t = Vec::new();
    let mut labels = Vec::new();
    for i in 0..s {
        let a = ((i * 37 % 97) as f64 - 48.0) / 32.0;
        let b = ((i * 53 % 89) as f64 - 44.0) / 32.0;
        x.extend([a, b]);
        let (t0, t1) = ((0.5 * a - 0.25 * b).max(0.0), (0.75 * b + 0.125).max(0.0));
        // Targets on the output grid (steps of 1/32).
        let (t0, t1) = ((t0 * 32.0).round() / 32.0, (t1 * 32.0).round() / 32.0);
        t.extend([t0, t1]);
        labels.push(i64::from(t1 > t0));
    }
    (x, t, labels)
}

impl Case {
    fn new() -> Case {
        let dir = tempfile::tempdir().expect("tempdir");
        for f in ["model.yaml", "weights.npz"] {
            std::fs::copy(root().join("examples/tiny").join(f), dir.path().join(f)).expect("copy example");
        }
        Case { dir }
    }

    fn path(&self, name: &str) -> std::path::PathBuf {
        self.dir.path().join(name)
    }

    fn data(&self, name: &str, arrays: &[NamedArray]) {
        write_npz(&self.path(name), arrays).expect("write data");
    }

    fn run(&self, args: &[&str]) -> (i32, String, String) {
        fptgen(args, self.dir.path())
    }

    /// Runs train-es on `data.npz`, expects exit 1 and returns stderr.
    fn fails(&self, arrays: &[NamedArray]) -> String {
        let _ = std::fs::remove_file(self.path("data.npz"));
        self.data("data.npz", arrays);
        let (code, _, err) = self.run(&["train-es", "model.yaml", "--data", "data.npz"]);
        assert_eq!(code, 1, "expected exit 1: {err}");
        assert!(err.starts_with("error: "), "{err}");
        assert!(!self.path("weights.es.npz").exists(), "nothing is written on error");
        err
    }
}

#[test]
fn trains_like_the_library_and_writes_weights_and_log() {
    let c = Case::new();
    let (x, t, labels) = tiny_data(10);
    c.data("data.npz", &[arr("x", &[10, 2], x.clone()), arr("t", &[10, 2], t.clone()), ints("labels", &[10], labels.clone())]);
    let (code, out, err) = c.run(&["train-es", "model.yaml", "--data", "data.npz", "--log", "log.csv"]);
    assert_eq!(code, 0, "{err}");
    // The same training through the library: the tiny example's section
    // (N 4, k 2, P 2, M 4) on the first 4 samples.
    let model = fptgen_sim::model::load(&c.path("model.yaml")).expect("model");
    let params = weights::load(&model, Conversion::Exact).expect("weights");
    let q = |v: &[f64], f: fptgen_sim::fixed::Format| v.iter().map(|&a| f.exact_f64(a).expect("on the grid")).collect::<Vec<i128>>();
    let inputs: Vec<Vec<i128>> = x.chunks(2).take(4).map(|c| q(c, model.input_format)).collect();
    let targets: Vec<Vec<i128>> = t.chunks(2).take(4).map(|c| q(c, model.output_format())).collect();
    let buffer = Buffer::new(&model, inputs, targets).expect("buffer");
    let mut trainer = Trainer::new(Network::new(model.clone(), params).expect("net"), buffer, EvalMode::Naive).expect("trainer");
    let mut losses = vec![trainer.loss()];
    for _ in 0..2 {
        losses.push(trainer.run_iteration(&mut |_| {}).expect("runs"));
    }
    for (i, l) in losses.iter().enumerate() {
        assert!(out.contains(&format!("iteration {i}: loss {l} ")), "iteration {i} loss {l} in:\n{out}");
    }
    assert!(out.contains("accuracy"), "{out}");
    // The written weights are the library's, with the seed and iterations.
    let written = tensor::read_npz(&c.path("weights.es.npz")).expect("default output beside the weights");
    assert_eq!(written["meta/es_seed"].values, Values::Int(vec![1]));
    assert_eq!(written["meta/es_iterations"].values, Values::Int(vec![2]));
    let loaded = weights::load_from(&model, &c.path("weights.es.npz"), Conversion::Exact).expect("loads against the model");
    assert_eq!(&loaded, trainer.params());
    // The log: a header and iterations 0..=2 with the same losses.
    let log = std::fs::read_to_string(c.path("log.csv")).expect("log");
    let lines: Vec<&str> = log.lines().collect();
    assert_eq!(lines[0], "iteration,loss,accuracy");
    assert_eq!(lines.len(), 4, "{log}");
    for (i, l) in losses.iter().enumerate() {
        let cells: Vec<&str> = lines[i + 1].split(',').collect();
        assert_eq!(cells[0], i.to_string());
        assert_eq!(cells[1], l.to_string());
        let acc: f64 = cells[2].parse().expect("accuracy is a number");
        assert!((0.0..=1.0).contains(&acc), "{log}");
    }

    // Never overwrites: the default output and the log exist now.
    let before = std::fs::read(c.path("weights.es.npz")).expect("read");
    let (code, _, err) = c.run(&["train-es", "model.yaml", "--data", "data.npz"]);
    assert_eq!(code, 1);
    assert!(err.contains("weights.es.npz") && err.contains("does not overwrite"), "{err}");
    assert_eq!(std::fs::read(c.path("weights.es.npz")).expect("read"), before);
    let (code, _, err) = c.run(&["train-es", "model.yaml", "--data", "data.npz", "-o", "b.npz", "--log", "log.csv"]);
    assert_eq!(code, 1);
    assert!(err.contains("log.csv") && err.contains("does not overwrite"), "{err}");
    assert!(!c.path("b.npz").exists(), "refused before training, nothing written");

    // --iterations overrides k and is recorded; labels alone give one-hot targets.
    c.data("labels.npz", &[arr("x", &[10, 2], x), ints("labels", &[10], labels)]);
    let (code, out, err) = c.run(&["train-es", "model.yaml", "--data", "labels.npz", "--iterations", "1", "-o", "one.npz", "--log", "one.csv"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("iteration 1:") && !out.contains("iteration 2:"), "{out}");
    let one = tensor::read_npz(&c.path("one.npz")).expect("written");
    assert_eq!(one["meta/es_iterations"].values, Values::Int(vec![1]));
    // Without labels the accuracy column is empty.
    c.data("t.npz", &[arr("x", &[4, 2], vec![0.5; 8]), arr("t", &[4, 2], vec![0.25; 8])]);
    let (code, out, err) = c.run(&["train-es", "model.yaml", "--data", "t.npz", "--iterations", "1", "-o", "t.npz.out", "--log", "t.csv"]);
    assert_eq!(code, 0, "{err}");
    assert!(!out.contains("accuracy"), "{out}");
    let log = std::fs::read_to_string(c.path("t.csv")).expect("log");
    assert!(log.lines().skip(1).all(|l| l.ends_with(',')), "{log}");

    // `fitness: ranks` in the model file reaches the trainer: the same
    // losses as the library's with that section.
    let text = std::fs::read_to_string(c.path("model.yaml")).expect("model");
    std::fs::write(c.path("ranks.yaml"), text.replace("  population: 4 ", "  fitness: ranks\n  population: 4 ")).expect("write");
    let (code, out, err) = c.run(&["train-es", "ranks.yaml", "--data", "data.npz", "-o", "ranks.npz"]);
    assert_eq!(code, 0, "{err}");
    let ranks = fptgen_sim::model::load(&c.path("ranks.yaml")).expect("model");
    assert_eq!(ranks.training.expect("section").fitness, fptgen_sim::model::Fitness::Ranks);
    let params = weights::load(&ranks, Conversion::Exact).expect("weights");
    let mut trainer = Trainer::new(Network::new(ranks, params).expect("net"), trainer.evaluator().buffer().clone(), EvalMode::Naive).expect("trainer");
    for i in 1..=2 {
        let l = trainer.run_iteration(&mut |_| {}).expect("runs");
        assert!(out.contains(&format!("iteration {i}: loss {l} ")), "iteration {i} loss {l} in:\n{out}");
    }
}

#[test]
fn bad_data_names_file_array_and_index() {
    let c = Case::new();
    let (x, t, labels) = tiny_data(6);
    let good_x = || arr("x", &[6, 2], x.clone());
    let good_t = || arr("t", &[6, 2], t.clone());

    let err = c.fails(&[good_t()]);
    assert!(err.contains("data.npz: tensor 'x'") && err.contains("missing"), "{err}");
    let err = c.fails(&[arr("x", &[6, 3], vec![0.0; 18]), good_t()]);
    assert!(err.contains("tensor 'x'") && err.contains("[6, 3]"), "{err}");
    let mut bad = x.clone();
    bad[7] = f64::NAN;
    let err = c.fails(&[arr("x", &[6, 2], bad), good_t()]);
    assert!(err.contains("tensor 'x' at index [3, 1]") && err.contains("not finite"), "{err}");
    let err = c.fails(&[ints("x", &[6, 2], vec![0; 12]), good_t()]);
    assert!(err.contains("tensor 'x'") && err.contains("integer type"), "{err}");
    let err = c.fails(&[good_x()]);
    assert!(err.contains("neither 't'") && err.contains("'labels'"), "{err}");
    let err = c.fails(&[good_x(), arr("t", &[6, 3], vec![0.0; 18])]);
    assert!(err.contains("tensor 't'") && err.contains("[6, 3]") && err.contains("[6, 2]"), "{err}");
    let mut bad = t.clone();
    bad[9] = f64::INFINITY;
    let err = c.fails(&[good_x(), arr("t", &[6, 2], bad)]);
    assert!(err.contains("tensor 't' at index [4, 1]") && err.contains("not finite"), "{err}");
    // ap_fixed<8,3> outputs hold [-4, 3.96875]: 5.0 is out of range.
    let mut bad = t.clone();
    bad[2] = 5.0;
    let err = c.fails(&[good_x(), arr("t", &[6, 2], bad)]);
    assert!(err.contains("tensor 't' at index [1, 0]") && err.contains("outside the range"), "{err}");
    let mut bad = labels.clone();
    bad[4] = 2;
    let err = c.fails(&[good_x(), ints("labels", &[6], bad)]);
    assert!(err.contains("tensor 'labels' at index [4]") && err.contains("class 2"), "{err}");
    let mut bad = labels.clone();
    bad[0] = -1;
    let err = c.fails(&[good_x(), ints("labels", &[6], bad)]);
    assert!(err.contains("tensor 'labels' at index [0]"), "{err}");
    let err = c.fails(&[good_x(), arr("labels", &[6], vec![0.0; 6])]);
    assert!(err.contains("tensor 'labels'") && err.contains("float type"), "{err}");
    let err = c.fails(&[good_x(), ints("labels", &[5], vec![0; 5])]);
    assert!(err.contains("tensor 'labels'") && err.contains("[5]"), "{err}");
    let err = c.fails(&[good_x(), good_t(), arr("y", &[6, 2], t.clone())]);
    assert!(err.contains("tensor 'y'") && err.contains("not a training data array"), "{err}");
    // The tiny example's buffer holds 4 samples.
    let err = c.fails(&[arr("x", &[3, 2], x[..6].to_vec()), arr("t", &[3, 2], t[..6].to_vec())]);
    assert!(err.contains("tensor 'x'") && err.contains("3 samples") && err.contains("needs 4"), "{err}");
    let err = c.fails(&[arr("x", &[0, 2], vec![]), arr("t", &[0, 2], vec![])]);
    assert!(err.contains("no samples"), "{err}");
    // Not an archive at all.
    std::fs::write(c.path("junk.npz"), b"not a zip").expect("write");
    let (code, _, err) = c.run(&["train-es", "model.yaml", "--data", "junk.npz"]);
    assert_eq!(code, 1);
    assert!(err.contains("junk.npz") && err.contains("not a valid .npz"), "{err}");
    // meta/ arrays are ignored.
    c.data("meta.npz", &[good_x(), good_t(), ints("meta/seed", &[1], vec![3])]);
    let (code, _, err) = c.run(&["train-es", "model.yaml", "--data", "meta.npz", "--iterations", "1"]);
    assert_eq!(code, 0, "{err}");
}

#[test]
fn bad_model_or_options() {
    let c = Case::new();
    let (x, t, _) = tiny_data(6);
    c.data("data.npz", &[arr("x", &[6, 2], x), arr("t", &[6, 2], t)]);
    let (code, _, err) = c.run(&["train-es", "model.yaml", "--data", "data.npz", "--iterations", "0"]);
    assert_eq!(code, 1);
    assert!(err.contains("'0' for '--iterations <K>'") && err.contains("from 1 to"), "{err}");
    // A model without a training section.
    let text = std::fs::read_to_string(c.path("model.yaml")).expect("read");
    let start = text.find("training:").expect("the tiny example has a training section");
    std::fs::write(c.path("plain.yaml"), &text[..start]).expect("write");
    let (code, _, err) = c.run(&["train-es", "plain.yaml", "--data", "data.npz"]);
    assert_eq!(code, 1);
    assert!(err.contains("plain.yaml") && err.contains("no `training:` section"), "{err}");
    // A missing data file is named.
    let (code, _, err) = c.run(&["train-es", "model.yaml", "--data", "nope.npz"]);
    assert_eq!(code, 1);
    assert!(err.contains("nope.npz"), "{err}");
    // --data is required (a usage error, exit 1 like every bad input).
    let (code, _, _) = c.run(&["train-es", "model.yaml"]);
    assert_eq!(code, 1);
    assert!(!Path::new(&c.path("weights.es.npz")).exists());
}

#[test]
fn help_documents_every_option() {
    let (code, out, err) = fptgen(&["train-es", "--help"], &root());
    assert_eq!(code, 0, "{err}");
    for o in ["--data", "--iterations", "--output", "--log", "--quantize", "MODEL", "labels", "es_seed", "iteration, loss", "train-device", "rule: dfa"] {
        assert!(out.contains(o), "`fptgen train-es --help` does not mention {o}:\n{out}");
    }
    // The same command under the name that fits every rule.
    let (code, alias, err) = fptgen(&["train-device", "--help"], &root());
    assert_eq!((code, alias), (0, out), "{err}");
}

#[test]
fn check_prints_the_examples_training_lines() {
    let (code, out, err) = fptgen(&["check", "examples/tiny/model.yaml", "examples/jet_tagging/model.yaml"], &root());
    assert_eq!(code, 0, "{err}");
    // tiny: T = 6, P = 2: G = 3, 3 * 4 = 12 passes.
    assert!(out.contains("  training: N 4, k 2, P 2, M 4, T 6, G 3; 12 forward passes per sample per iteration;"), "{out}");
    // jet: fc4's 32*5 + 5 = 165 parameters, P = 4: G = 42, 42 * 8 = 336 passes.
    assert!(out.contains("  training: N 8, k 10, P 4, M 64, T 165, G 42; 336 forward passes per sample per iteration;"), "{out}");
}

/// `train-device` (`train-es`) runs the model's feedback rule (`rule: dfa`) exactly as the
/// library's `FeedbackTrainer` does, and `generate` builds the rule's
/// trainer.
#[test]
fn runs_a_feedback_rule_like_the_library_and_generate_refuses_it() {
    let c = Case::new();
    let text = std::fs::read_to_string(c.path("model.yaml")).expect("model");
    std::fs::write(c.path("model.yaml"), text.replace("training:                # on-device ES training (docs/training.md)", "training:\n  rule: dfa")).expect("write");
    let (x, t, _) = tiny_data(10);
    c.data("data.npz", &[arr("x", &[10, 2], x.clone()), arr("t", &[10, 2], t.clone())]);
    let (code, out, err) = c.run(&["train-device", "model.yaml", "--data", "data.npz"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("rule dfa"), "{out}");
    let model = fptgen_sim::model::load(&c.path("model.yaml")).expect("model");
    let params = weights::load(&model, Conversion::Exact).expect("weights");
    let training = model.training.expect("a training section");
    let q = |v: &[f64], f: fptgen_sim::fixed::Format| v.iter().map(|&a| f.exact_f64(a).expect("on the grid")).collect::<Vec<i128>>();
    let inputs: Vec<Vec<i128>> = x.chunks(2).take(4).map(|c| q(c, model.input_format)).collect();
    let targets: Vec<Vec<i128>> = t.chunks(2).take(4).map(|c| q(c, model.output_format())).collect();
    let buffer = Buffer::new(&model, inputs, targets).expect("buffer");
    let mut trainer = fptgen_sim::train::FeedbackTrainer::new(Network::new(model.clone(), params).expect("net"), training, buffer).expect("trainer");
    let mut losses = vec![trainer.loss()];
    for _ in 0..2 {
        losses.push(trainer.run_iteration(&mut |_| {}));
    }
    for (i, l) in losses.iter().enumerate() {
        assert!(out.contains(&format!("iteration {i}: loss {l} ")), "iteration {i} loss {l} in:\n{out}");
    }
    let loaded = weights::load_from(&model, &c.path("weights.es.npz"), Conversion::Exact).expect("loads against the model");
    assert_eq!(&loaded, trainer.params());
    // The device's trainer for the rule (co-simulated in
    // flow/tests/cosim_feedback_random.rs).
    let (code, _, err) = c.run(&["generate", "model.yaml", "-o", "out"]);
    assert_eq!(code, 0, "{err}");
    let report = std::fs::read_to_string(c.path("out/report.md")).expect("report.md");
    assert!(report.contains("Feedback rule dfa"), "{report}");
    assert!(std::fs::read_to_string(c.path("out/rtl/fptgen_fb_ctrl.v")).is_ok());
    // A sweep over N and P means nothing for a feedback rule: refused, nothing written.
    let (code, _, err) = c.run(&["sweep", "model.yaml", "--population", "2", "--blocks", "1", "-o", "sw"]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("model.yaml") && err.contains("rule dfa has neither"), "{err}");
    assert!(!c.path("sw").exists());
}

/// `--rule` replaces the model's rule, checked as the model file's `rule:`
/// line is: a feedback rule on a trainable layer it cannot train (a batch
/// norm) is refused, naming the file, the option and the layer; nothing is
/// written.
#[test]
fn rule_option_is_checked_like_the_rule_line() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("out");
    let model = dir.path().join("bn.yaml");
    std::fs::write(
        &model,
        "name: bn\ninput: {shape: [4], format: 'ap_fixed<8,3>'}\nweights: w.npz\nlayers:\n\
         - {name: n, type: batchnorm, activation: relu, trainable: [scale],\n\
            precision: {scale: 'ap_fixed<6,2>', shift: 'ap_fixed<6,2>', accum: 'ap_fixed<20,8>', output: 'ap_fixed<8,3>'}}\n\
         - {name: d, type: dense, inputs: 4, outputs: 2, activation: linear,\n\
            precision: {weight: 'ap_fixed<6,2>', bias: 'ap_fixed<6,2>', accum: 'ap_fixed<20,8>', output: 'ap_fixed<8,3>'}}\n\
         training: {buffer: 2}\n",
    )
    .expect("write");
    let (code, _, err) = fptgen(&["init-weights", model.to_str().expect("utf8")], dir.path());
    assert_eq!(code, 0, "{err}");
    let (code, _, err) = fptgen(&["generate", model.to_str().expect("utf8"), "--rule", "dfa", "-o", out.to_str().expect("utf8")], &root());
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("bn.yaml") && err.contains("with --rule dfa") && err.contains("'n' is a trainable batchnorm layer"), "{err}");
    assert!(!out.exists());
    let model = root().join("examples/int8_head/model.yaml");
    let (code, _, err) = fptgen(&["generate", model.to_str().expect("utf8"), "--rule", "sgd", "-o", out.to_str().expect("utf8")], &root());
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("expected es, dfa, drtp or sgm"), "{err}");
    assert!(!out.exists());
    // --sgm names the modules of rule sgm only.
    let jet = root().join("examples/jet_tagging/model.yaml");
    let (code, _, err) = fptgen(&["generate", jet.to_str().expect("utf8"), "--sgm", "s.npz", "-o", out.to_str().expect("utf8")], &root());
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("--sgm names the modules of rule sgm, but the rule is es"), "{err}");
    assert!(!out.exists());
}

/// DRTP feeds a hidden layer a projection of the label: data with float
/// targets and no `labels` is refused at the model's `rule:` line (the
/// output layer alone is the delta rule and needs none).
#[test]
fn drtp_on_a_hidden_layer_needs_labels() {
    let dir = tempfile::tempdir().expect("tempdir");
    let fmt = "{weight: 'ap_fixed<8,2>', bias: 'ap_fixed<8,2>', accum: 'ap_fixed<20,8>', output: 'ap_fixed<8,3>'}";
    let yaml = format!(
        "name: two\ninput: {{shape: [2], format: 'ap_fixed<8,3>'}}\nweights: w.npz\nlayers:\n\
         \x20 - {{name: h, type: dense, inputs: 2, outputs: 3, activation: relu, trainable: [weights], precision: {fmt}}}\n\
         \x20 - {{name: o, type: dense, inputs: 3, outputs: 2, activation: linear, trainable: [weights], precision: {fmt}}}\n\
         training:\n  buffer: 4\n  iterations: 1\n  rule: drtp\n"
    );
    std::fs::write(dir.path().join("model.yaml"), yaml).expect("model");
    let (code, _, err) = fptgen(&["init-weights", "model.yaml"], dir.path());
    assert_eq!(code, 0, "{err}");
    let (x, t, labels) = tiny_data(6);
    write_npz(&dir.path().join("t.npz"), &[arr("x", &[6, 2], x.clone()), arr("t", &[6, 2], t)]).expect("data");
    let (code, _, err) = fptgen(&["train-device", "model.yaml", "--data", "t.npz"], dir.path());
    assert_eq!(code, 1, "{err}");
    assert!(err.starts_with("error: model.yaml:10:9:") && err.contains("t.npz has no 'labels'"), "{err}");
    assert!(!dir.path().join("w.es.npz").exists());
    write_npz(&dir.path().join("l.npz"), &[arr("x", &[6, 2], x), ints("labels", &[6], labels)]).expect("data");
    let (code, out, err) = fptgen(&["train-device", "model.yaml", "--data", "l.npz"], dir.path());
    assert_eq!(code, 0, "{out}\n{err}");
}
