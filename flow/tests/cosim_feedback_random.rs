//! Co-simulation of the feedback-rule trainers (`training: rule: dfa`,
//! `drtp` and `sgm`) on random networks: dense networks (random formats,
//! folding, activations and trainable tensors; under `sgm` every dense
//! layer trains, with seeded random synthetic-gradient modules) and image
//! networks whose convolutions train too, each with a random buffer size,
//! lr_shift and seed. Every delta, every parameter
//! written, every answer to an injected inference request, every
//! iteration's cycle count and the final memories must equal the
//! simulator's `FeedbackTrainer` (`cosim_train::run_train`). Needs
//! Verilator: fails (does not skip) without it.

use fptgen_flow::cosim;
use fptgen_flow::cosim_train::{run_train, TrainCosimOptions};
use fptgen_generator::output::write_dir;
use fptgen_generator::plan::plan;
use fptgen_generator::render::{render, GenInfo};
use fptgen_sim::model;
use fptgen_sim::network::Network;
use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::{Config, RngAlgorithm, TestCaseError, TestRng, TestRunner};

// The RTL tests' helpers (random networks, Verilator), shared with fptgen-generator.
#[path = "../../generator/tests/common/mod.rs"]
mod common;
use common::random_net::{cnn, network};

/// The `training:` section of `rule` with random choices.
fn training(rule: &'static str) -> impl Strategy<Value = String> {
    (1usize..=5, -2i32..=8, any::<u64>(), 0usize..3).prop_map(move |(buffer, lr, seed, r)| {
        let sgm = if rule == "sgm" { "  sgm: sgm.npz\n" } else { "" };
        // The step rounding too (docs/training.md, "Stochastic rounding").
        let rounding = ["auto", "nearest", "stochastic"][r];
        format!("training:\n  rule: {rule}\n{sgm}  buffer: {buffer}\n  lr_shift: {lr}\n  seed: {seed}\n  step_rounding: {rounding}\n")
    })
}

/// `yaml` with only its dense layers trainable (the feedback rules train
/// dense layers): other layers' `trainable:` emptied, and the last layer's
/// weights and biases trainable when no dense tensor was.
fn dense_trainables_only(yaml: &str) -> String {
    let mut kind = "";
    let mut lines: Vec<String> = Vec::new();
    let mut any = false;
    for line in yaml.lines() {
        if let Some(k) = line.trim().strip_prefix("type: ") {
            kind = if k == "dense" { "dense" } else { "other" };
        }
        if line.starts_with("    trainable:") {
            if kind != "dense" {
                lines.push("    trainable: []".into());
                continue;
            }
            any |= line.trim() != "trainable: []";
        }
        lines.push(line.to_string());
    }
    if !any {
        if let Some(last) = lines.iter_mut().rev().find(|l| l.starts_with("    trainable:")) {
            *last = "    trainable: [weights, biases]".into();
        }
    }
    lines.join("\n") + "\n"
}

/// `yaml` with every dense layer's weights and biases trainable and no
/// other layer's (so that `sgm` has hidden layers with modules), and the
/// hidden layers linear (random formats often leave a relu layer dead, and
/// then no module's output would reach a delta).
fn all_dense_trainable(yaml: &str) -> String {
    let mut kind = "";
    let mut lines: Vec<String> = Vec::new();
    let last_act = yaml.rfind("activation: ").unwrap_or(yaml.len());
    let mut at = 0;
    for line in yaml.lines() {
        let here = at;
        at += line.len() + 1;
        if let Some(k) = line.trim().strip_prefix("type: ") {
            kind = if k == "dense" { "dense" } else { "other" };
        }
        if here < last_act && line.trim() == "activation: relu" {
            lines.push(line.replace("relu", "linear"));
            continue;
        }
        if line.starts_with("    trainable:") {
            lines.push(if kind == "dense" { "    trainable: [weights, biases]".into() } else { "    trainable: []".into() });
            continue;
        }
        lines.push(line.to_string());
    }
    lines.join("\n") + "\n"
}

fn check(yaml: &str, seed: u64) -> Result<(), TestCaseError> {
    let fail = |e: String| TestCaseError::fail(format!("{e}\n{yaml}"));
    let dir = tempfile::tempdir().map_err(|e| fail(e.to_string()))?;
    let path = dir.path().join("model.yaml");
    let m = model::parse(yaml, &path).map_err(|e| fail(e.to_string()))?;
    let params = fptgen_sim::weights::random(&m, seed);
    let mut n = plan(&m);
    prop_assert!(n.feedback.is_some() && n.trainer.is_none(), "no feedback trainer planned\n{yaml}");
    let has_modules = !fptgen_sim::train::sgm::module_shapes(&m).is_empty();
    if let (Some(p), true) = (&m.sgm_path, has_modules) {
        // Seeded random modules, written where the model names them (the
        // simulator's trainer reads them there).
        let modules = fptgen_sim::train::sgm::random(&m, seed ^ 0x5a);
        fptgen_sim::train::sgm::save(&m, &modules, p, &[]).map_err(|e| fail(e.to_string()))?;
        fptgen_generator::design::load_sgm(&m, &mut n).map_err(|e| fail(e.to_string()))?;
    }
    let gen = GenInfo { version: fptgen_generator::VERSION, source: "random".into() };
    let files = render(&params, &n, &gen).map_err(|e| fail(e.to_string()))?;
    let out = dir.path().join("out");
    write_dir(&out, fptgen_generator::output::DESIGN, &files).map_err(|e| fail(e.to_string()))?;
    let m_sgm = m.sgm_path.is_some() && has_modules;
    let net = Network::new(m, params).map_err(|e| fail(e.to_string()))?;
    let opts = TrainCosimOptions { iterations: 2, interrupt_permille: 20, seed };
    let r = run_train(&out, &n, &net, opts).map_err(|e| fail(e.to_string()))?;
    prop_assert!(r.answers > 0 && r.losses > 0, "nothing was checked: {}\n{yaml}", r.summary());
    if m_sgm {
        prop_assert!(r.synthetic > 0, "no nonzero delta came from a synthetic-gradient module: {}\n{yaml}", r.summary());
    }
    Ok(())
}

fn run(name: &str, rng_seed: u8, case: impl Strategy<Value = (String, u64)>) {
    let mut runner = TestRunner::new_with_rng(
        Config { cases: 1, max_shrink_iters: 4, failure_persistence: None, ..Config::default() },
        TestRng::from_seed(RngAlgorithm::ChaCha, &[rng_seed; 32]),
    );
    runner.run(&case, |(yaml, seed)| check(&yaml, seed)).unwrap_or_else(|e| panic!("{name}: {e}"));
}

/// A random dense network under a rule the strategy draws (dfa, drtp or
/// sgm; sgm with every dense layer trainable when it has a hidden layer).
fn any_rule_case() -> impl Strategy<Value = (String, u64)> {
    (network(true), prop_oneof![Just("dfa"), Just("drtp"), Just("sgm")]).prop_flat_map(|((net, seed), rule)| {
        training(rule).prop_map(move |tr| {
            let yaml = format!("{net}{tr}");
            let hidden = net.matches("type: dense").count() >= 2;
            let yaml = if rule == "sgm" && hidden { all_dense_trainable(&yaml) } else { dense_trainables_only(&yaml) };
            (yaml, seed)
        })
    })
}

/// Dense networks with the rule drawn too. The runner seeds are fixed, and
/// these draw every rule (the test checks that they still do).
#[test]
fn random_dense_networks_train_bit_exact_with_a_drawn_rule() {
    cosim::require_tool("verilator").unwrap_or_else(|e| panic!("{e}"));
    let mut rules = std::collections::BTreeSet::new();
    // Seeds picked so that the draws hold dfa and drtp with hidden layers
    // and sgm with modules (two networks).
    for (k, seed) in [1u8, 3, 4, 6, 15].into_iter().enumerate() {
        let mut runner = TestRunner::new_with_rng(Config::default(), TestRng::from_seed(RngAlgorithm::ChaCha, &[seed; 32]));
        let (yaml, _) = any_rule_case().new_tree(&mut runner).expect("a case").current();
        let rule = yaml.lines().find_map(|l| l.trim().strip_prefix("rule: ")).unwrap_or("").to_string();
        // sgm with a hidden layer: the modules are exercised (check
        // requires nonzero deltas from them).
        if rule == "sgm" && yaml.matches("type: dense").count() >= 2 {
            rules.insert("sgm with modules".to_string());
        }
        rules.insert(rule);
        run(&format!("dense network {k} (seed {seed})"), seed, any_rule_case());
    }
    assert_eq!(rules.into_iter().collect::<Vec<_>>(), ["dfa", "drtp", "sgm", "sgm with modules"], "the seeds no longer draw every rule");
}

/// `yaml` with its dense and conv2d layers' trainable tensors as drawn
/// (the feedback rules train both), other layers' emptied, and the first
/// convolution's weights and biases trainable.
fn conv_and_dense_trainable(yaml: &str) -> String {
    let mut kind = "";
    let mut first_conv = true;
    let mut lines: Vec<String> = Vec::new();
    for line in yaml.lines() {
        if let Some(k) = line.trim().strip_prefix("type: ") {
            kind = if k == "dense" || k == "conv2d" { k } else { "other" };
        }
        if line.starts_with("    trainable:") {
            if kind == "conv2d" && first_conv {
                first_conv = false;
                lines.push("    trainable: [weights, biases]".into());
                continue;
            }
            if kind == "other" {
                lines.push("    trainable: []".into());
                continue;
            }
        }
        lines.push(line.to_string());
    }
    lines.join("\n") + "\n"
}

/// Image networks whose convolutions train too (the first one's weights
/// and biases always, `rtl/fptgen_fb_conv.v`), with the dense layers as
/// drawn: one under each rule (under sgm the hidden convolution's module
/// is seeded random, and its output image reaches it through a collector).
#[test]
fn random_image_networks_train_their_conv_and_dense_layers_bit_exact() {
    cosim::require_tool("verilator").unwrap_or_else(|e| panic!("{e}"));
    for (rule, seed) in [("drtp", 77u8), ("dfa", 78), ("sgm", 85)] {
        let case = || (cnn(true), training(rule)).prop_map(|((net, seed), tr)| (conv_and_dense_trainable(&format!("{net}{tr}")), seed));
        // The seeds draw a convolution (so one trains, hidden: the dense
        // layer ends every such network).
        let mut runner = TestRunner::new_with_rng(Config::default(), TestRng::from_seed(RngAlgorithm::ChaCha, &[seed; 32]));
        let (yaml, _) = case().new_tree(&mut runner).expect("a case").current();
        assert!(yaml.contains("type: conv2d"), "seed {seed} draws no convolution:\n{yaml}");
        run(&format!("image network ({rule})"), seed, case());
    }
}
