//! Evaluation by difference (docs/training.md, "Evaluation by difference in
//! hardware"): which buffered samples an ES member changes, decided as the
//! hardware's difference unit (`rtl/fptgen_diff_eval.v`) decides it. The
//! losses do not depend on it (a member's loss is the same bits either
//! way); the hardware's cycles do, so the generator's cycle model of a
//! design that evaluates by difference takes these counts.

use crate::model::Model;
use crate::network::{Network, SimError};
use crate::weights::Params;

use super::es::GroupRecord;
use super::order::{clamp_range, ParamRef};

/// The parameters member `member` of the group in `record` evaluates:
/// `committed` with each of the group's parameters set to
/// `clamp(before + (e << perturb_shift))`, `e` the member's noise value as
/// the record gives it (negated already for an odd antithetic member).
pub fn member_params(model: &Model, committed: &Params, record: &GroupRecord, member: usize, perturb_shift: u32) -> Params {
    let mut q = committed.clone();
    for (j, r) in record.params.iter().enumerate() {
        let (lo, hi) = clamp_range(&r.format(model));
        let e = record.noise[member][j];
        r.set(&mut q, record.before[j].saturating_add(i128::from(e) << perturb_shift).clamp(lo, hi));
    }
    q
}

/// For every group record of a run that started from `initial`, in order,
/// how many samples each of its members changes ([`changed_samples`] of
/// layer 0, the members in parallel), the committed parameters following
/// each record's update: what the hardware's schedule of evaluation by
/// difference depends on.
pub fn changed_counts(
    model: &Model,
    initial: &Params,
    records: &[GroupRecord],
    perturb_shift: u32,
    inputs: &[Vec<i128>],
) -> Result<Vec<Vec<usize>>, SimError> {
    use rayon::prelude::*;
    let mut committed = initial.clone();
    let mut out = Vec::with_capacity(records.len());
    for r in records {
        let counts = (0..r.noise.len())
            .into_par_iter()
            .map(|k| {
                let q = member_params(model, &committed, r, k, perturb_shift);
                changed_samples(model, &committed, &q, &r.params, 0, inputs).map(|v| v.len())
            })
            .collect::<Result<Vec<usize>, SimError>>()?;
        out.push(counts);
        for (p, &v) in r.params.iter().zip(&r.after) {
            p.set(&mut committed, v);
        }
    }
    Ok(out)
}

/// The buffered samples (indices into `inputs`, increasing) whose output of
/// layer `layer` differs between the `committed` and the `perturbed`
/// parameters, or every sample when `group` holds a bias of that layer
/// (tensor 1: the hardware evaluates such a member on every sample).
pub fn changed_samples(
    model: &Model,
    committed: &Params,
    perturbed: &Params,
    group: &[ParamRef],
    layer: usize,
    inputs: &[Vec<i128>],
) -> Result<Vec<usize>, SimError> {
    if group.iter().any(|r| r.layer == layer && r.tensor == 1) {
        return Ok((0..inputs.len()).collect());
    }
    if let Some(v) = changed_exact(model, committed, perturbed, group, layer, inputs) {
        return Ok(v);
    }
    changed_by_trace(model, committed, perturbed, layer, inputs)
}

/// [`changed_samples`] by running both networks to layer `layer`.
fn changed_by_trace(model: &Model, committed: &Params, perturbed: &Params, layer: usize, inputs: &[Vec<i128>]) -> Result<Vec<usize>, SimError> {
    let a = Network::new(model.clone(), committed.clone())?;
    let b = Network::new(model.clone(), perturbed.clone())?;
    let mut out = Vec::new();
    for (s, x) in inputs.iter().enumerate() {
        let ya = a.trace_to(x, layer + 1)?;
        let yb = b.trace_to(x, layer + 1)?;
        if ya[layer] != yb[layer] {
            out.push(s);
        }
    }
    Ok(out)
}

/// [`changed_samples`] for the network's first layer when it is dense
/// with exact accumulation and the group holds only its weights: each
/// touched row's output from its exact dot product (committed and
/// perturbed) through the layer's [`Finisher`], which gives the
/// definition's bits (`sim/tests/training.rs` checks it against the
/// in-order sum), so that a member costs the touched rows only.
fn changed_exact(model: &Model, committed: &Params, perturbed: &Params, group: &[ParamRef], layer: usize, inputs: &[Vec<i128>]) -> Option<Vec<usize>> {
    use crate::fast::finish::Finisher;
    use crate::layers::dense::{dot_product_bits, exact_accumulation, B, W};
    use crate::model::LayerOp;
    let LayerOp::Dense(d) = &model.layers[layer].op else { return None };
    if layer != 0 || group.iter().any(|r| r.layer != layer || r.tensor != W) {
        return None;
    }
    let shift = exact_accumulation(d, model.input_format)?;
    if dot_product_bits(d.precision.weight, model.input_format, d.inputs)? > 62 {
        return None;
    }
    let fin = Finisher::new(d, shift);
    let (wc, wp) = (&committed.layers[layer].tensors[W], &perturbed.layers[layer].tensors[W]);
    let b = &committed.layers[layer].tensors[B];
    let mut rows: Vec<usize> = group.iter().map(|r| r.index / d.inputs).collect();
    rows.dedup();
    let dot = |w: &[i128], x: &[i128]| -> i64 { w.iter().zip(x).map(|(&a, &c)| (a * c) as i64).sum() };
    Some(
        inputs
            .iter()
            .enumerate()
            .filter(|(_, x)| {
                rows.iter().any(|&r| {
                    let (lo, hi) = (r * d.inputs, (r + 1) * d.inputs);
                    let bias = fin.bias(b[r]);
                    fin.finish(bias, dot(&wc[lo..hi], x)) != fin.finish(bias, dot(&wp[lo..hi], x))
                })
            })
            .map(|(s, _)| s)
            .collect(),
    )
}

/// Whether the model's ES training can evaluate members by difference in
/// hardware: `Ok(layer)` with the trained layer (the first), or why not.
/// The conditions (docs/training.md, "Evaluation by difference in
/// hardware"): the network's input is a vector and its first layer is
/// dense with exact accumulation (so a sum may be formed from a committed
/// part and a change), its weights and biases are the whole trainable set
/// (the difference unit keeps the committed biases from the training
/// order; a group of biases changes every sample anyway), the codes fit the
/// unit (inputs of at most 32 bits, parameters of at most 30, exact sums of
/// at most 62), and no loss of the M buffered samples can reach 2^32, so
/// that a member's loss may be summed in any order from the unchanged
/// samples' committed losses and the changed samples' new ones.
pub fn eligibility(model: &Model) -> Result<usize, String> {
    use crate::layers::dense::{dot_product_bits, exact_accumulation};
    use crate::model::{LayerOp, Rule};
    let t = model.training.as_ref().ok_or("the model has no training: section")?;
    if t.rule != Rule::Es {
        return Err(format!("evaluation by difference is for rule es, not {}", t.rule.name()));
    }
    if model.input_shape.len() != 1 {
        return Err("the network's input is an image; evaluation by difference needs a vector input into a dense first layer".into());
    }
    let first = &model.layers[0];
    let LayerOp::Dense(d) = &first.op else {
        return Err(format!("the first layer '{}' is a {} layer; evaluation by difference needs it dense", first.name, first.kind().type_name()));
    };
    let refs = super::order::trainable_params(model);
    if let Some(r) = refs.iter().find(|r| r.layer != 0) {
        return Err(format!(
            "layer '{}' is trainable; evaluation by difference needs the first layer '{}' to be the only trainable one",
            model.layers[r.layer].name, first.name
        ));
    }
    if !(refs.iter().any(|r| r.tensor == 0) && refs.iter().any(|r| r.tensor == 1)) {
        return Err(format!("evaluation by difference needs both the weights and the biases of '{}' trainable", first.name));
    }
    if exact_accumulation(d, model.input_format).is_none() {
        return Err(format!(
            "layer '{}''s accumulator {} can saturate and does not wrap, so its sums are not exact (docs/numerics.md, \"Exact accumulation\"); evaluation by difference needs exact sums",
            first.name, d.precision.accum
        ));
    }
    match dot_product_bits(d.precision.weight, model.input_format, d.inputs) {
        Some(b) if b <= 62 => {}
        _ => return Err(format!("layer '{}''s exact dot products need more than 62 bits", first.name)),
    }
    if model.input_format.width() > 32 || d.precision.weight.width() > 30 || d.precision.bias.width() > 30 {
        return Err(format!("layer '{}''s input, weight or bias codes are too wide for the difference unit (32, 30, 30 bits)", first.name));
    }
    let y = model.output_format();
    let worst = (t.buffer as u128) * (model.output_len() as u128) * ((y.max_raw() - y.min_raw()) as u128);
    if worst >= 1u128 << 32 {
        return Err(format!(
            "a loss of the {} buffered samples can reach 2^32 ({} outputs, output codes {}..{}), where the loss saturates; evaluation by difference needs it exact",
            t.buffer,
            model.output_len(),
            y.min_raw(),
            y.max_raw()
        ));
    }
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::train::order::trainable_params;

    /// The fast path (touched rows through the finisher) and running both
    /// networks agree, over random weights, inputs and perturbations of
    /// random groups, with rounding, saturation and relu in the formats.
    #[test]
    fn exact_path_equals_the_networks() {
        let yaml = "name: t\ninput: {shape: [7], format: 'ap_fixed<6,2>'}\nweights: w.npz\nlayers:\n  - {name: l, type: dense, inputs: 7, outputs: 5, activation: relu, precision: {weight: 'ap_fixed<5,1>', bias: 'ap_fixed<6,2>', accum: 'ap_fixed<20,8>', output: 'ap_fixed<4,2,AP_RND_CONV,AP_SAT>'}, trainable: [weights, biases]}\n  - {name: o, type: dense, inputs: 5, outputs: 2, activation: linear, precision: {weight: 'ap_fixed<5,1>', bias: 'ap_fixed<6,2>', accum: 'ap_fixed<20,8>', output: 'ap_fixed<8,4>'}}\ntraining: {population: 2, buffer: 9}\n";
        let model = crate::model::parse(yaml, std::path::Path::new("t.yaml")).unwrap();
        let refs = trainable_params(&model);
        let mut seen = (0, 0);
        for seed in 0..40u64 {
            let params = crate::weights::random(&model, seed);
            let mut rng = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
            let mut next = move || {
                rng ^= rng << 13;
                rng ^= rng >> 7;
                rng ^= rng << 17;
                rng
            };
            let inputs: Vec<Vec<i128>> = (0..9).map(|_| (0..7).map(|_| (next() % 64) as i128 - 32).collect()).collect();
            let start = (next() % 30) as usize;
            let group = &refs[start..start + 1 + (next() % 6) as usize];
            let mut q = params.clone();
            for r in group {
                let (lo, hi) = clamp_range(&r.format(&model));
                r.set(&mut q, (r.get(&params) + (next() % 5) as i128 - 2).clamp(lo, hi));
            }
            let a = changed_samples(&model, &params, &q, group, 0, &inputs).unwrap();
            let b = changed_by_trace(&model, &params, &q, 0, &inputs).unwrap();
            assert!(changed_exact(&model, &params, &q, group, 0, &inputs).is_some() || group.iter().any(|r| r.tensor == 1));
            if group.iter().all(|r| r.tensor == 0) {
                assert_eq!(a, b, "seed {seed}, group {group:?}");
                seen = (seen.0 + usize::from(!a.is_empty() && a.len() < 9), seen.1 + 1);
            }
        }
        assert!(seen.0 > 3 && seen.1 > 10, "{seen:?}");
    }
}
