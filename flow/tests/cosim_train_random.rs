//! Co-simulation of on-chip ES training on random networks (the strategy of
//! `cosim_random`, with at least one trainable tensor, so tensors of
//! different formats share the blocks), one case for every combination of
//! fitness (antithetic, baseline, plain), loss quantization (po2, exact) and
//! noise distribution (rademacher, uniform), with random N, P, M, LFSR
//! width, noise bits, shifts and seed. Every member loss, accumulator,
//! update, answer to an injected inference request, iteration's cycle count
//! and final memory must equal the simulator's (`cosim_train::run_train`).
//! A second test does the same for random image networks, a third for
//! random networks whose first dense layer alone is trained and whose
//! members are evaluated by difference (`evaluation: difference`: every
//! member loss as with full evaluation, every iteration's cycles from the
//! samples each member changes). Needs Verilator: fails (does not skip)
//! without it.

use fptgen_flow::cosim;
use fptgen_flow::cosim_train::{run_train, TrainCosimOptions};
use fptgen_generator::output::write_dir;
use fptgen_generator::plan::plan;
use fptgen_generator::render::{render, GenInfo};
use fptgen_sim::model;
use fptgen_sim::network::Network;
use proptest::prelude::*;
use std::sync::atomic::{AtomicUsize, Ordering};
use proptest::test_runner::TestCaseError;

// The RTL tests' helpers (random networks, Verilator), shared with fptgen-generator.
#[path = "../../generator/tests/common/mod.rs"]
mod common;
use common::random_net::{cnn, graph, network};

const FITNESS: [&str; 3] = ["antithetic", "baseline", "plain"];
const QUANTIZATION: [&str; 2] = ["po2", "exact"];
const DISTRIBUTION: [&str; 2] = ["rademacher", "uniform"];

/// The `training:` section for combination `combo` (0..12) and random choices.
fn training(combo: usize) -> impl Strategy<Value = String> {
    (1usize..=3, 1usize..=4, 1usize..=5, 0usize..3, 1u32..=8, 0u32..=3, -3i32..=6, any::<u64>()).prop_map(
        move |(pairs, blocks, buffer, width, bits, sigma, lr, seed)| {
            let fitness = FITNESS[combo % 3];
            let quant = QUANTIZATION[(combo / 3) % 2];
            let dist = DISTRIBUTION[combo / 6];
            let width = [8, 16, 32][width];
            format!(
                "training:\n  population: {}\n  blocks: {blocks}\n  buffer: {buffer}\n  noise: {{width: {width}, distribution: {dist}, bits: {bits}}}\n  perturb_shift: {sigma}\n  lr_shift: {lr}\n  fitness: {fitness}\n  loss_quantization: {quant}\n  seed: {seed}\n",
                2 * pairs
            )
        },
    )
}

/// Co-simulates the training of `yaml`'s network; `ecp5` counts the
/// networks generated for ECP5.
fn check(yaml: &str, seed: u64, ecp5: &AtomicUsize) -> Result<(), TestCaseError> {
    let fail = |e: String| TestCaseError::fail(format!("{e}\n{yaml}"));
    let dir = tempfile::tempdir().map_err(|e| fail(e.to_string()))?;
    let path = dir.path().join("model.yaml");
    let mut m = model::parse(yaml, &path).map_err(|e| fail(e.to_string()))?;
    // Every other network (by a bit of the seed) for a Lattice ECP5 part,
    // as if its model file said so: its matrix-vector units register their
    // memories' read data once more and rotate their input vectors
    // (rtl/fptgen_dense.v's MEM_REG, X_ROTATE), under the trainer's writes.
    if (seed >> 7) & 1 == 1 {
        m.part = "LFE5U-85F-8BG381C".into();
        ecp5.fetch_add(1, Ordering::Relaxed);
    }
    let params = fptgen_sim::weights::random(&m, seed);
    let n = plan(&m);
    prop_assert!(n.trainer.is_some(), "no trainer planned\n{yaml}");
    let gen = GenInfo { version: fptgen_generator::VERSION, source: "random".into() };
    let files = render(&params, &n, &gen).map_err(|e| fail(e.to_string()))?;
    let out = dir.path().join("out");
    write_dir(&out, fptgen_generator::output::DESIGN, &files).map_err(|e| fail(e.to_string()))?;
    let net = Network::new(m, params).map_err(|e| fail(e.to_string()))?;
    let opts = TrainCosimOptions { iterations: 2, interrupt_permille: 20, seed };
    let r = run_train(&out, &n, &net, opts).map_err(|e| fail(e.to_string()))?;
    prop_assert!(r.answers > 0 && r.losses > 0 && r.updates > 0, "nothing was checked: {}\n{yaml}", r.summary());
    Ok(())
}

#[test]
fn random_training_is_bit_exact_for_every_mode() {
    cosim::require_tool("verilator").unwrap_or_else(|e| panic!("{e}"));
    // Every mode in the full tier; every other one in the fast tier.
    let ecp5 = AtomicUsize::new(0);
    for combo in (0..12).step_by(if common::full_tier() { 1 } else { 2 }) {
        let seed = common::seed_byte(combo as u8 + 7);
        let case = (network(true), training(combo)).prop_map(|((net, seed), tr)| (format!("{net}{tr}"), seed));
        common::runner(seed, 1, 4)
            .run(&case, |(yaml, seed)| check(&yaml, seed, &ecp5))
            .unwrap_or_else(|e| panic!("combination {combo}, {}: {e}", common::replay("cosim_train_random", "random_training_is_bit_exact_for_every_mode", seed)));
    }
    let ecp5 = ecp5.into_inner();
    eprintln!("cosim_train_random: {ecp5} of the trained dense networks generated for ECP5");
    assert!(ecp5 >= 2, "only {ecp5} trained dense networks were generated for ECP5");
}

/// Image networks (convolutions, pools, batch norms, then flatten and
/// dense; every other one a graph whose branch is rejoined by add or
/// concat) with trainable conv weights and biases, batch-norm scales and
/// shifts and dense tensors, fed through the trainer's serializer: six
/// networks, each with its own training mode, in the full tier; three in
/// the fast tier.
#[test]
fn random_image_network_training_is_bit_exact() {
    cosim::require_tool("verilator").unwrap_or_else(|e| panic!("{e}"));
    // Six networks in the full tier, the first three (a CNN, a graph, a
    // CNN) in the fast tier.
    let ecp5 = AtomicUsize::new(0);
    for combo in 0..common::draws(3, 6) as usize {
        let seed = common::seed_byte(combo as u8 + 101);
        let mut runner = common::runner(seed, 1, 4);
        let mode = (combo * 5) % 12;
        // Every other one a graph (a branch rejoined by add or concat).
        let case = (if combo % 2 == 0 { cnn(true).boxed() } else { graph(true).boxed() }, training(mode))
            .prop_map(|((net, seed), tr)| (format!("{net}{tr}"), seed));
        runner
            .run(&case, |(yaml, seed)| check(&yaml, seed, &ecp5))
            .unwrap_or_else(|e| panic!("image network {combo}, {}: {e}", common::replay("cosim_train_random", "random_image_network_training_is_bit_exact", seed)));
    }
}

/// `yaml` with only its first layer trainable (weights and biases), that
/// layer's accumulator wrapping (so its sums are exact whenever its
/// products keep their fraction bits), and `evaluation: difference`.
fn difference_variant(yaml: &str) -> String {
    let mut out = String::new();
    let mut first = true;
    for line in yaml.lines() {
        let mut l = line.to_string();
        if l.trim_start().starts_with("trainable:") {
            l = format!("    trainable: [{}]", if first { "weights, biases" } else { "" });
        }
        if first && l.contains("accum: '") {
            // The accumulator's overflow mode (its last field) becomes AP_WRAP.
            let a = l.find("accum: '").expect("accum") + 8;
            let end = a + l[a..].find('\'').expect("quote");
            let fmt = &l[a..end];
            let fields: Vec<&str> = fmt.trim_end_matches('>').split(',').collect();
            let wrapped = if fields.len() == 4 { format!("{},{},{},AP_WRAP>", fields[0], fields[1], fields[2]) } else { format!("{},AP_TRN,AP_WRAP>", fields[..2].join(",")) };
            l = format!("{}{}{}", &l[..a], wrapped, &l[end..]);
        }
        if l.starts_with("  - name: l1") {
            first = false;
        }
        out += &l;
        out.push('\n');
    }
    out + "  evaluation: difference\n"
}

/// Random dense networks whose first layer alone is trained, evaluated by
/// difference: four networks, each with its own training mode; a draw
/// the difference unit cannot take (its sums not exact) is drawn again.
#[test]
fn random_difference_training_is_bit_exact() {
    cosim::require_tool("verilator").unwrap_or_else(|e| panic!("{e}"));
    let ecp5 = AtomicUsize::new(0);
    for combo in 0..4 {
        let seed = common::seed_byte(combo as u8 + 201);
        let mut runner = common::runner(seed, 1, 4);
        let mode = [0, 4, 8, 11][combo];
        let case = (network(true), training(mode)).prop_map(|((net, seed), tr)| (difference_variant(&format!("{net}{tr}")), seed));
        runner
            .run(&case, |(yaml, seed)| {
                let Ok(m) = model::parse(&yaml, std::path::Path::new("model.yaml")) else {
                    return Err(TestCaseError::reject("the difference unit does not apply"));
                };
                prop_assert!(plan(&m).trainer.is_some_and(|t| t.diff.is_some()), "not evaluated by difference\n{yaml}");
                check(&yaml, seed, &ecp5)
            })
            .unwrap_or_else(|e| panic!("difference network {combo}, {}: {e}", common::replay("cosim_train_random", "random_difference_training_is_bit_exact", seed)));
    }
}
