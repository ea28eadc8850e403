//! ES: the simulator's [`Trainer`] records, group by group, as the events
//! and changes of an [`Expectation`], and every iteration's cycles from the
//! schedule of [`crate::train_plan`].

use fptgen_sim::network::Network;
use fptgen_sim::train::eval::{Buffer, EvalMode};
use fptgen_sim::train::es::{GroupRecord, Trainer};

use super::{Event, Expectation};
use crate::train_plan::TrainHwPlan;

/// The simulator's records of `iterations` iterations, as events and
/// changes.
pub fn expectation(
    net: &Network,
    training: fptgen_sim::model::Training,
    buffer: Buffer,
    t: &TrainHwPlan,
    iterations: u64,
) -> Result<Expectation, String> {
    let inputs = buffer.inputs().to_vec();
    let mut trainer = Trainer::with_training(net.clone(), training, buffer, EvalMode::Cached)
        .map_err(|e| e.to_string())?;
    let mut records = Vec::new();
    trainer.run(iterations, &mut |r| records.push(r.clone())).map_err(|e| e.to_string())?;
    let cycles = match &t.diff {
        None => vec![t.cycles_per_iteration; iterations as usize],
        Some(d) => diff_cycles(net, &records, t, d, &inputs, trainer.training().perturb_shift, iterations)?,
    };
    Ok(Expectation {
        events: expected_events(&records, t),
        changes: records
            .iter()
            .map(|r| ((r.iteration, r.group as u64), r.params.iter().copied().zip(r.after.iter().copied()).collect()))
            .collect(),
        final_params: trainer.params().clone(),
        cycles,
        counts: (records.len(), records.iter().map(|r| r.losses.len()).sum(), records.iter().map(|r| r.after.len()).sum()),
        synthetic: 0,
        trained_layers: Vec::new(),
    })
}

/// Every iteration's cycles of a design that evaluates by difference:
/// the schedule ([`TrainHwPlan::diff_group_cycles`]) with the number of
/// samples each member changes, decided as the difference unit decides
/// it ([`fptgen_sim::train::difference::changed_samples`]) from the
/// simulator's records; the fill after `ctl_start` falls in iteration 0.
fn diff_cycles(
    net: &Network,
    records: &[fptgen_sim::train::GroupRecord],
    t: &TrainHwPlan,
    d: &crate::diff_plan::DiffPlan,
    inputs: &[Vec<i128>],
    perturb_shift: u32,
    iterations: u64,
) -> Result<Vec<u64>, String> {
    let counts = fptgen_sim::train::difference::changed_counts(net.model(), net.params(), records, perturb_shift, inputs).map_err(|e| e.to_string())?;
    let mut cycles = vec![0u64; iterations as usize];
    cycles[0] = t.fill_cycles;
    for (r, changed) in records.iter().zip(&counts) {
        cycles[r.iteration as usize] += t.diff_group_cycles(d, r.group, t.tg(r.group), changed);
    }
    Ok(cycles)
}

/// The events the simulator's records predict, in order.
fn expected_events(records: &[GroupRecord], t: &TrainHwPlan) -> Vec<Event> {
    let mask = if t.param_w >= 128 { u128::MAX } else { (1u128 << t.param_w) - 1 };
    let mut v = Vec::new();
    for r in records {
        let (it, group) = (r.iteration, r.group as u64);
        if let Some(b) = r.baseline {
            v.push(Event::Base { it, group, loss: b });
        }
        for (m, &loss) in r.losses.iter().enumerate() {
            v.push(Event::Loss { it, group, member: m as u64, loss });
        }
        for (j, (&after, &grad)) in r.after.iter().zip(&r.accumulators).enumerate() {
            v.push(Event::Update { it, group, block: j as u64, param: (after as u128) & mask, grad: grad as u32 });
        }
    }
    v
}
