//! What the simulator predicts a generated trainer does: the executable
//! specification of on-chip training, as events, parameter changes, final
//! parameters and cycles ([`Expectation`]), for either kind of trainer
//! ([`expectation`]: ES in [`es`], the feedback rules in [`feedback`]),
//! and the random stimulus both sides are given ([`stimulus`],
//! [`buffer_stimulus`]).
//!
//! The co-simulations (`crate::cosim_train`, `crate::cosim_axi`) compare a
//! Verilator run with it, and the generated cocotb bench (`crate::cocotb`)
//! carries it as the bench's expected values; this module runs nothing but
//! the simulator.

pub mod es;
pub mod feedback;

use fptgen_sim::model::Training;
use fptgen_sim::network::Network;
use fptgen_sim::train::eval::Buffer;
use fptgen_sim::train::order::ParamRef;
use fptgen_sim::weights::Params;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::plan::NetworkPlan;

/// One event of the harness's log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    /// ES: a member's loss.
    Loss { it: u64, group: u64, member: u64, loss: u32 },
    /// ES: the baseline loss.
    Base { it: u64, group: u64, loss: u32 },
    /// ES: a block's update.
    Update { it: u64, group: u64, block: u64, param: u128, grad: u32 },
    /// Feedback rules: a delta (its index among the trainable layers'
    /// outputs; the value as `value_w` bits).
    Delta { it: u64, sample: u64, index: u64, value: u128 },
    /// Feedback rules: a parameter written (its training-order index).
    Write { it: u64, sample: u64, index: u64, value: u128 },
}

/// The event as the co-simulation's messages name it: the harness's
/// signals and values.
pub fn describe(e: &Event) -> String {
    match e {
        Event::Loss { it, group, member, loss } => {
            format!("iteration {it} group {group} member {member}: st_last_loss = {loss}")
        }
        Event::Base { it, group, loss } => format!("iteration {it} group {group} baseline: st_last_loss = {loss}"),
        Event::Update { it, group, block, param, grad } => format!(
            "iteration {it} group {group} block {block} update: mon_param = 0x{param:x}, mon_grad = 0x{grad:08x}"
        ),
        Event::Delta { it, sample, index, value } => {
            format!("iteration {it} sample {sample} delta {index}: mon_kind = 0, mon_value = 0x{value:x}")
        }
        Event::Write { it, sample, index, value } => {
            format!("iteration {it} sample {sample} parameter {index} written: mon_kind = 1, mon_value = 0x{value:x}")
        }
    }
}

/// What the simulator predicts for a training run, whichever the rule.
pub struct Expectation {
    /// Every event, in order.
    pub events: Vec<Event>,
    /// The parameter changes in order, each after the state `(iteration,
    /// group or sample)` in which requests see the parameters before it.
    pub changes: Vec<((u64, u64), Vec<(ParamRef, i128)>)>,
    /// The trained parameters.
    pub final_params: Params,
    /// Every iteration's cycles.
    pub cycles: Vec<u64>,
    /// What the summary counts: groups (or samples), member losses (or
    /// deltas), updates (or writes).
    pub counts: (usize, usize, usize),
    /// Nonzero deltas of layers with a synthetic-gradient module.
    pub synthetic: usize,
    /// Per trainable layer: name, nonzero deltas, parameters changed.
    pub trained_layers: Vec<(String, usize, usize)>,
}

/// What the simulator predicts when the trainer of `plan` trains `net` for
/// `iterations` iterations over `buffer` with `training`; an error (the
/// simulator's, or a design without a trainer) as its message.
pub fn expectation(net: &Network, training: Training, buffer: Buffer, plan: &NetworkPlan, iterations: u64) -> Result<Expectation, String> {
    match (&plan.trainer, &plan.feedback) {
        (Some(t), _) => es::expectation(net, training, buffer, t, iterations),
        (None, Some(f)) => feedback::expectation(net, training, buffer, f, iterations),
        _ => Err("the design has no trainer".into()),
    }
}

/// Input vectors for a run: all-maximum, all-minimum and zero codes, then
/// uniformly random codes of the input format (ChaCha8 seeded with `seed`).
pub fn stimulus(net: &Network, vectors: usize, seed: u64) -> Vec<Vec<i128>> {
    let m = net.model();
    let f = m.input_format;
    let n = m.input_len();
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut v: Vec<Vec<i128>> = vec![vec![f.max_raw(); n], vec![f.min_raw(); n], vec![0; n]];
    while v.len() < vectors {
        v.push((0..n).map(|_| rng.random_range(f.min_raw()..=f.max_raw())).collect());
    }
    v.truncate(vectors.max(1));
    v
}

/// A training run's stimulus: `m` random samples (inputs, and targets in
/// the output format) and 64 inference requests.
pub type Stimulus = (Vec<Vec<i128>>, Vec<Vec<i128>>, Vec<Vec<i128>>);

/// The [`Stimulus`] seeded by `seed`: `m` random samples (random inputs,
/// random targets in the output format) and 64 requests, seeded by `seed`.
pub fn buffer_stimulus(net: &Network, m: usize, seed: u64) -> Stimulus {
    let model = net.model();
    let inputs = stimulus(net, m, seed);
    let yf = model.output_format();
    let mut rng = ChaCha8Rng::seed_from_u64(seed.wrapping_add(1));
    let targets: Vec<Vec<i128>> = (0..m)
        .map(|_| (0..model.output_len()).map(|_| rng.random_range(yf.min_raw()..=yf.max_raw())).collect())
        .collect();
    let requests = stimulus(net, 64, seed ^ 0x5eed_5eed);
    (inputs, targets, requests)
}
