//! Member evaluation by difference (docs/training.md, "Evaluation by
//! difference in hardware"): whether an ES design evaluates by difference,
//! the parameters of its difference unit (`rtl/fptgen_diff_eval.v`), and
//! the cycles of its schedule, which depend on how many buffered samples
//! each member changes.
//!
//! The model decides where it may (`fptgen_sim::train::difference::
//! eligibility`); `training: evaluation: auto` (the default) takes it where
//! the schedule with half the samples changed by every member is shorter
//! than full evaluation, `difference` wherever it may, `full` never.

use fptgen_sim::layers::dense::{dot_product_bits, exact_accumulation};
use fptgen_sim::model::{Evaluation, LayerOp, Model};
use fptgen_sim::train::hardware::eligibility;
use serde::Serialize;

use crate::plan::HwFormat;

/// The difference unit of a design that evaluates by difference: its
/// parameters (`rtl/fptgen_diff_eval.v`) and what the schedule needs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DiffPlan {
    /// L's inputs (the network's) and outputs.
    pub inputs: usize,
    /// L's outputs.
    pub rows: usize,
    /// Inputs per load word (the sample buffer's `word_w / x_w`).
    pub vpw: usize,
    /// Row slots: the most rows one group's weights touch.
    pub slots: usize,
    /// Width of the exact dot products.
    pub s_w: u32,
    /// Their shift into the accumulator.
    pub shift: u32,
    /// L's bias, accumulator and output formats.
    pub b: HwFormat,
    /// Accumulator.
    pub a: HwFormat,
    /// Output.
    pub y: HwFormat,
    /// 1: relu.
    pub relu: u32,
    /// ram_style of each sample's input memory.
    pub x_style: &'static str,
    /// ram_style of the committed sums.
    pub s_style: &'static str,
    /// R of every group: the rows its weights touch (the unit's finishing
    /// loops over at least one).
    pub group_rows: Vec<usize>,
}

/// What the generator chose, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EvalChoice {
    /// `full` or `difference`.
    pub mode: &'static str,
    /// Why (the model's setting, the eligibility, or the cycle comparison).
    pub reason: String,
}

/// Chooses the evaluation of the ES trainer for `model`; `p` blocks, `m`
/// buffered samples, `vpw` inputs per load word. `cycles(diff)` gives an
/// iteration's cycles with every member changing half the samples (full
/// evaluation with `None`), for `auto`.
pub fn choose(model: &Model, p: usize, m: usize, vpw: usize, cycles: &dyn Fn(Option<&DiffPlan>) -> u64) -> (EvalChoice, Option<DiffPlan>) {
    let Some(t) = model.training.as_ref() else {
        return (EvalChoice { mode: "full", reason: "no training".into() }, None);
    };
    if t.evaluation == Evaluation::Full {
        return (EvalChoice { mode: "full", reason: "evaluation: full in the model".into() }, None);
    }
    let plan = match eligibility(model) {
        Ok(layer) => unit(model, layer, p, m, vpw),
        Err(why) => return (EvalChoice { mode: "full", reason: format!("evaluation by difference does not apply: {why}") }, None),
    };
    if t.evaluation == Evaluation::Difference {
        return (EvalChoice { mode: "difference", reason: "evaluation: difference in the model".into() }, Some(plan));
    }
    let (full, diff) = (cycles(None), cycles(Some(&plan)));
    if diff < full {
        let reason = format!("evaluation: auto; with every member changing half the samples an iteration takes {diff} cycles, against {full} with full evaluation");
        (EvalChoice { mode: "difference", reason }, Some(plan))
    } else {
        let reason = format!(
            "evaluation: auto; with every member changing half the samples an iteration would take {diff} cycles by difference, against {full} with full evaluation"
        );
        (EvalChoice { mode: "full", reason }, None)
    }
}

/// The unit for the eligible model (its layer `layer` is dense, exact).
fn unit(model: &Model, layer: usize, p: usize, m: usize, vpw: usize) -> DiffPlan {
    let LayerOp::Dense(d) = &model.layers[layer].op else { unreachable!("eligibility checked a dense layer") };
    let shift = exact_accumulation(d, model.input_format).expect("eligibility checked exact accumulation");
    let s_w = dot_product_bits(d.precision.weight, model.input_format, d.inputs).expect("eligibility checked the width").max(2);
    let slots = (p.saturating_sub(1).div_ceil(d.inputs) + 1).min(d.outputs);
    // The training order: the weights row-major, then the biases; group g
    // is parameters g*P .. g*P + P - 1.
    let weights = d.inputs * d.outputs;
    let t = weights + d.outputs;
    let group_rows = (0..t.div_ceil(p))
        .map(|g| {
            let (lo, hi) = (g * p, ((g + 1) * p).min(t).min(weights));
            if lo >= hi { 0 } else { (hi - 1) / d.inputs - lo / d.inputs + 1 }
        })
        .collect();
    let x_bits = d.inputs as u64 * u64::from(model.input_format.width());
    DiffPlan {
        inputs: d.inputs,
        rows: d.outputs,
        vpw,
        slots,
        s_w,
        shift,
        b: d.precision.bias.into(),
        a: d.precision.accum.into(),
        y: d.precision.output.into(),
        relu: u32::from(d.activation == fptgen_sim::layers::Activation::Relu),
        // A sample's inputs: block RAM beyond 64 words (LUTRAM's depth).
        x_style: if d.inputs > 64 && x_bits > 1024 { "block" } else { "distributed" },
        s_style: if (m * d.outputs) as u64 * u64::from(s_w) > 4096 { "block" } else { "distributed" },
        group_rows,
    }
}

impl DiffPlan {
    /// The finishing loop's rows for group `g` (at least one).
    pub fn rows_of(&self, g: usize) -> u64 {
        self.group_rows[g].max(1) as u64
    }
}
