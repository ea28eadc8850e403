//! The feedback rules: what the simulator's
//! [`FeedbackTrainer`] predicts the generated trainer (`templates/fb_top.v`)
//! does, event by event and cycle by cycle.
//!
//! Per sample, in order: every delta of every trainable layer (its index
//! among the layers' outputs), then every parameter written, in training
//! order: those whose row's delta is nonzero (a conv2d's row: any of its
//! pixels' deltas; the others keep their value and are not written). The
//! cycles of a sample follow [`crate::fb_plan`]: per parameter written
//! [`crate::fb_plan::FbLayer::written_cycles`], 1 per other parameter,
//! plus the fixed part.

use std::collections::HashMap;

use fptgen_sim::layers::dense::W;
use fptgen_sim::model::Training;
use fptgen_sim::network::Network;
use fptgen_sim::train::eval::Buffer;
use fptgen_sim::train::feedback::FeedbackTrainer;
use fptgen_sim::train::order::trainable_params;

use super::{Event, Expectation};
use crate::fb_plan::FbHwPlan;

/// Runs the simulator for `iterations` iterations over `buffer` and
/// returns what the hardware must show.
pub fn expectation(
    net: &Network,
    training: Training,
    buffer: Buffer,
    f: &FbHwPlan,
    iterations: u64,
) -> Result<Expectation, String> {
    let model = net.model().clone();
    let refs = trainable_params(&model);
    let mut trainer = FeedbackTrainer::new(net.clone(), training, buffer).map_err(|e| e.to_string())?;
    // Per trainable layer: its row length, rows, pixels, and the cycles of
    // a written parameter.
    let mut shape: HashMap<usize, (usize, usize, usize, u64)> = HashMap::new();
    for l in trainer.layers() {
        let name = &model.layers[l.layer].name;
        let cycles = f.layers.iter().find(|p| &p.name == name).map(|p| p.written_cycles()).ok_or_else(|| {
            format!("layer '{name}' trains in the simulator but has no feedback hardware")
        })?;
        shape.insert(l.layer, (l.inputs, l.rows, l.pixels, cycles));
    }
    let mask = if f.value_w >= 128 { u128::MAX } else { (1u128 << f.value_w) - 1 };
    let mut exp = Expectation {
        events: Vec::new(),
        changes: Vec::new(),
        final_params: net.params().clone(),
        cycles: vec![0; iterations as usize],
        counts: (0, 0, 0),
        synthetic: 0,
        trained_layers: Vec::new(),
    };
    let mut nonzero: HashMap<usize, usize> = HashMap::new();
    let synthetic: Vec<usize> = f.layers.iter().filter(|l| l.sgm.is_some()).filter_map(|l| model.layers.iter().position(|m| m.name == l.name)).collect();
    for it in 0..iterations {
        for s in 0..f.m as u64 {
            let rec = trainer.step();
            debug_assert_eq!((rec.iteration, rec.sample as u64), (it, s));
            let mut index = 0;
            let mut deltas: HashMap<usize, &[i128]> = HashMap::new();
            for (l, d) in &rec.deltas {
                *nonzero.entry(*l).or_default() += d.iter().filter(|&&v| v != 0).count();
                if synthetic.contains(l) {
                    exp.synthetic += d.iter().filter(|&&v| v != 0).count();
                }
                for &v in d {
                    exp.events.push(Event::Delta { it, sample: s, index, value: (v as u128) & mask });
                    index += 1;
                }
                deltas.insert(*l, d);
            }
            exp.counts.1 += index as usize;
            let params = trainer.params();
            let mut written = Vec::new();
            let mut walk = 0;
            for (k, p) in refs.iter().enumerate() {
                let (inputs, rows, pixels, cycles) = shape[&p.layer];
                let row = if p.tensor == W { p.index / inputs } else { p.index };
                if (0..pixels).any(|px| deltas[&p.layer][px * rows + row] != 0) {
                    let v = p.get(params);
                    exp.events.push(Event::Write { it, sample: s, index: k as u64, value: (v as u128) & mask });
                    written.push((*p, v));
                    walk += cycles;
                } else {
                    walk += 1;
                }
            }
            exp.counts.2 += written.len();
            exp.changes.push(((it, s), written));
            exp.cycles[it as usize] += f.sample_cycles(s == 0, walk);
        }
    }
    if let Some(c) = exp.cycles.first_mut() {
        *c += FbHwPlan::START_CYCLES;
    }
    exp.counts.0 = (iterations as usize) * f.m;
    exp.final_params = trainer.params().clone();
    exp.trained_layers = trainer
        .layers()
        .map(|l| {
            let (before, after) = (&net.params().layers[l.layer], &exp.final_params.layers[l.layer]);
            let changed = before.tensors.iter().zip(&after.tensors).map(|(a, b)| a.iter().zip(b).filter(|(x, y)| x != y).count()).sum();
            (model.layers[l.layer].name.clone(), nonzero.get(&l.layer).copied().unwrap_or(0), changed)
        })
        .collect();
    Ok(exp)
}
