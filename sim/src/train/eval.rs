//! Evaluating a member: the loss of the current (perhaps perturbed)
//! parameters on the training buffer.
//!
//! The loss is `mae`: the sum over every output `o` of every buffered sample
//! of `|y_o - t_o|`, in raw codes of the output format, in an unsigned
//! 32-bit accumulator that saturates at `2^32 - 1`. All terms are
//! non-negative, so saturating on every addition gives `min(exact sum,
//! 2^32 - 1)` whatever the order; that is how it is computed here.
//!
//! Three evaluators compute the same numbers ([`EvalMode`]):
//!
//! * `Naive` runs every sample through every layer with its kind's
//!   forward pass for every evaluation: the reference.
//! * `Cached` keeps every layer's output for every sample under the
//!   unperturbed parameters. A member changes a few parameters; layers
//!   before the first changed one are taken from the cache, and in that
//!   layer only the outputs that a changed parameter enters are recomputed
//!   (`LayerKind::affected` and `LayerKind::recompute`: a dense layer
//!   recomputes each such output's whole sum in input order, so saturating
//!   accumulators give exactly the reference's result). Later
//!   layers are recomputed in full while their input differs from the
//!   cached one; once a layer's output equals the cached output and no
//!   later layer has a changed parameter, the sample's cached loss is used.
//!   On a graph, "its input" is the gather of its inputs: a layer is
//!   recomputed in full when any of them changed, and the pass stops once
//!   no changed output is read later.
//! * `Batched` is `Cached` plus, for a whole group of members at once
//!   ([`Evaluator::evaluate_members`]), exact matrix products over the
//!   committed activations on every core ([`super::batched`]).
//!
//! The property test `training::fast_path_equals_naive_path` checks that the
//! two agree bit for bit.

use crate::model::{Model, Source};
use crate::network::Network;
use crate::weights::Params;

use super::batched::{BatchState, Ctx};
use super::order::ParamRef;
use super::TrainError;

/// The M training samples held on chip: raw input codes and raw target
/// codes of the output format.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Buffer {
    inputs: Vec<Vec<i128>>,
    targets: Vec<Vec<i128>>,
}

impl Buffer {
    /// Checks that `inputs` and `targets` pair up, that every input is one
    /// sample of codes of the model's input format, and that every target
    /// has one code of the output format per output.
    pub fn new(model: &Model, inputs: Vec<Vec<i128>>, targets: Vec<Vec<i128>>) -> Result<Buffer, TrainError> {
        if inputs.len() != targets.len() {
            return Err(TrainError::Buffer(format!(
                "{} input samples but {} target samples",
                inputs.len(),
                targets.len()
            )));
        }
        let (n_in, f_in) = (model.input_len(), model.input_format);
        let (n_out, f_out) = (model.output_len(), model.output_format());
        for (s, (x, t)) in inputs.iter().zip(&targets).enumerate() {
            if x.len() != n_in {
                return Err(TrainError::Buffer(format!("sample {s} has {} input values; the network takes {n_in}", x.len())));
            }
            if let Some((i, r)) = x.iter().enumerate().find(|(_, r)| !f_in.contains_raw(**r)) {
                return Err(TrainError::Buffer(format!("sample {s}, input {i}: raw code {r} is not a code of {f_in}")));
            }
            if t.len() != n_out {
                return Err(TrainError::Buffer(format!("sample {s} has {} targets; the network has {n_out} outputs", t.len())));
            }
            if let Some((o, r)) = t.iter().enumerate().find(|(_, r)| !f_out.contains_raw(**r)) {
                return Err(TrainError::Buffer(format!("sample {s}, target {o}: raw code {r} is not a code of {f_out}")));
            }
        }
        Ok(Buffer { inputs, targets })
    }

    /// Number of samples, M.
    pub fn len(&self) -> usize {
        self.inputs.len()
    }

    /// True if the buffer holds no sample.
    pub fn is_empty(&self) -> bool {
        self.inputs.is_empty()
    }

    /// The raw input codes, one vector per sample.
    pub fn inputs(&self) -> &[Vec<i128>] {
        &self.inputs
    }

    /// The raw target codes, one vector per sample.
    pub fn targets(&self) -> &[Vec<i128>] {
        &self.targets
    }
}

/// The exact sum of `|y_o - t_o|` over one sample's outputs.
pub fn sample_loss(outputs: &[i128], targets: &[i128]) -> u128 {
    outputs.iter().zip(targets).map(|(&y, &t)| y.abs_diff(t)).sum()
}

/// An exact loss saturated to the 32-bit accumulator.
pub fn saturate_u32(total: u128) -> u32 {
    u32::try_from(total).unwrap_or(u32::MAX)
}

/// The `mae` loss of `params` on `buffer`, computed the plain way: every
/// sample through every layer.
pub fn naive_loss(model: &Model, params: &Params, buffer: &Buffer) -> u32 {
    let mut total: u128 = 0;
    for (x, t) in buffer.inputs.iter().zip(&buffer.targets) {
        let outs = model.forward_all(params, x);
        let y = outs.last().map(Vec::as_slice).unwrap_or(x);
        total = total.saturating_add(sample_loss(y, t));
    }
    saturate_u32(total)
}

/// Which evaluator computes member losses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum EvalMode {
    /// Reuse the unperturbed layer outputs.
    Cached,
    /// Recompute everything for every evaluation (the reference).
    Naive,
    /// `Cached`, and a group's members all at once as exact matrix
    /// products on every core ([`Evaluator::evaluate_members`]; the
    /// fastest, and the default).
    #[default]
    Batched,
}

/// Computes the buffer loss of parameters that differ from the committed
/// ones in a few places.
///
/// Protocol: [`Evaluator::new`] takes the starting parameters. Before
/// [`Evaluator::evaluate`], the caller changes some parameters in place and
/// passes the list; afterwards it restores them. To make changes permanent
/// it calls [`Evaluator::commit`] with the updated parameters and the list
/// of what changed.
#[derive(Debug, Clone)]
pub struct Evaluator {
    model: Model,
    buffer: Buffer,
    mode: EvalMode,
    /// Buffer loss of the committed parameters.
    loss: u32,
    /// `[sample][layer]`: outputs under the committed parameters (Cached).
    traces: Vec<Vec<Vec<i128>>>,
    /// Exact loss of each sample under the committed parameters (Cached).
    sample_losses: Vec<u128>,
    /// One output vector per layer, reused across samples.
    scratch: Vec<Vec<i128>>,
    /// Which scratch layers hold values of the current sample.
    fresh: Vec<bool>,
    /// The batched evaluator's sums (Batched).
    batch: Option<BatchState>,
    /// Member groups the batched path evaluated.
    batched_groups: u64,
    /// Per layer, the length of each tensor (for the checks).
    shapes: Vec<Vec<usize>>,
    /// Per layer, the last layer that reads its output ([`Model::last_use`]).
    last_use: Vec<usize>,
    /// Per layer: its output under the parameters being evaluated differs
    /// from the cached one (it is then in `scratch`).
    changed: Vec<bool>,
}

/// What a set of changed parameters touches, layer by layer.
struct Plan {
    /// First layer with a changed parameter.
    first: usize,
    /// Last layer with a changed parameter.
    last: usize,
    /// Per layer: the outputs that a changed parameter enters (sorted, unique).
    neurons: Vec<Vec<usize>>,
}

impl Plan {
    fn new(model: &Model, changed: &[ParamRef]) -> Option<Plan> {
        let first = changed.iter().map(|p| p.layer).min()?;
        let last = changed.iter().map(|p| p.layer).max()?;
        let mut neurons = vec![Vec::new(); model.layers.len()];
        for p in changed {
            p.affected(model, &mut neurons[p.layer]);
        }
        for n in &mut neurons {
            n.sort_unstable();
            n.dedup();
        }
        Some(Plan { first, last, neurons })
    }
}

impl Evaluator {
    /// An evaluator of `buffer` for `net`'s model, starting from its parameters.
    pub fn new(mode: EvalMode, net: &Network, buffer: Buffer) -> Evaluator {
        let (model, params) = (net.model().clone(), net.params());
        let n = model.layers.len();
        let mut e = Evaluator {
            model,
            buffer,
            mode,
            loss: 0,
            traces: Vec::new(),
            sample_losses: Vec::new(),
            scratch: vec![Vec::new(); n],
            fresh: vec![false; n],
            batch: None,
            batched_groups: 0,
            shapes: Vec::new(),
            last_use: Vec::new(),
            changed: vec![false; n],
        };
        e.last_use = e.model.last_use();
        e.shapes = e.model.layers.iter().map(|l| l.kind().tensors().iter().map(|t| t.len()).collect()).collect();
        match mode {
            EvalMode::Naive => e.loss = naive_loss(&e.model, params, &e.buffer),
            EvalMode::Cached | EvalMode::Batched => {
                let mut total: u128 = 0;
                for (x, t) in e.buffer.inputs.iter().zip(&e.buffer.targets) {
                    let outs = e.model.forward_all(params, x);
                    let l = outs.last().map(|y| sample_loss(y, t)).unwrap_or(0);
                    total = total.saturating_add(l);
                    e.sample_losses.push(l);
                    e.traces.push(outs);
                }
                e.loss = saturate_u32(total);
                if mode == EvalMode::Batched {
                    e.batch = Some(BatchState::new(&e.model, params, &e.buffer, &e.traces));
                }
            }
        }
        e
    }

    /// The loss of each member of a group: member `m` has the committed
    /// parameters `params` except `refs[j]`, which is `members[m][j]`. The
    /// same numbers as setting each member's values in `params`, calling
    /// [`Evaluator::evaluate`] and restoring them, which is what `Naive` and
    /// `Cached` do (so `params` is `&mut`; it is unchanged on return).
    /// `Batched` evaluates a group within one layer all at once
    /// ([`super::batched`]). Errors as [`Evaluator::evaluate`] does, or if
    /// a member does not have one value per reference.
    pub fn evaluate_members(&mut self, params: &mut Params, refs: &[ParamRef], members: &[Vec<i128>]) -> Result<Vec<u32>, TrainError> {
        self.check(params, refs)?;
        if let Some(m) = members.iter().position(|v| v.len() != refs.len()) {
            return Err(TrainError::Params(format!("member {m} has {} values for {} parameters", members[m].len(), refs.len())));
        }
        if let Some(b) = &self.batch {
            let ctx = Ctx { model: &self.model, params, buffer: &self.buffer, traces: &self.traces, losses: &self.sample_losses };
            if let Some(losses) = b.members(&ctx, refs, members) {
                self.batched_groups += 1;
                return Ok(losses);
            }
        }
        let before: Vec<i128> = refs.iter().map(|r| r.get(params)).collect();
        let mut losses = Vec::with_capacity(members.len());
        for v in members {
            for (r, &x) in refs.iter().zip(v) {
                r.set(params, x);
            }
            let loss = self.evaluate(params, refs);
            for (r, &x) in refs.iter().zip(&before) {
                r.set(params, x);
            }
            losses.push(loss?);
        }
        Ok(losses)
    }

    /// How many [`Evaluator::evaluate_members`] calls the batched path
    /// took (the others took the cached or naive path member by member).
    pub fn batched_groups(&self) -> u64 {
        self.batched_groups
    }

    /// The mode.
    pub fn mode(&self) -> EvalMode {
        self.mode
    }

    /// The model.
    pub fn model(&self) -> &Model {
        &self.model
    }

    /// The training buffer.
    pub fn buffer(&self) -> &Buffer {
        &self.buffer
    }

    /// The buffer loss of the committed parameters.
    pub fn loss(&self) -> u32 {
        self.loss
    }

    /// The buffer loss of `params`, which equal the committed parameters
    /// except at `changed` (a list that may repeat a parameter or name one
    /// whose value did not change). Errors if `params` do not have the
    /// model's shapes, or `changed` names a parameter the model
    /// does not have.
    pub fn evaluate(&mut self, params: &Params, changed: &[ParamRef]) -> Result<u32, TrainError> {
        self.check(params, changed)?;
        Ok(match self.mode {
            EvalMode::Naive => naive_loss(&self.model, params, &self.buffer),
            EvalMode::Cached | EvalMode::Batched => {
                let Some(plan) = Plan::new(&self.model, changed) else {
                    return Ok(self.loss);
                };
                let mut total: u128 = 0;
                for s in 0..self.buffer.len() {
                    let l = if self.forward_sample(params, &plan, s) {
                        let last = self.scratch.len() - 1;
                        sample_loss(&self.scratch[last], &self.buffer.targets[s])
                    } else {
                        self.sample_losses[s]
                    };
                    total = total.saturating_add(l);
                }
                saturate_u32(total)
            }
        })
    }

    /// Makes `params` the committed parameters; they differ from the
    /// previously committed ones only at `changed`. Returns the new loss.
    /// Errors as [`Evaluator::evaluate`] does, and then changes nothing.
    pub fn commit(&mut self, params: &Params, changed: &[ParamRef]) -> Result<u32, TrainError> {
        self.check(params, changed)?;
        match self.mode {
            EvalMode::Naive => self.loss = naive_loss(&self.model, params, &self.buffer),
            EvalMode::Cached | EvalMode::Batched => {
                let Some(plan) = Plan::new(&self.model, changed) else {
                    return Ok(self.loss);
                };
                let values: Vec<i128> = changed.iter().map(|r| r.get(params)).collect();
                if let Some(b) = &self.batch {
                    let ctx = Ctx { model: &self.model, params, buffer: &self.buffer, traces: &self.traces, losses: &self.sample_losses };
                    if let Some(c) = b.plan_commit(&ctx, changed, &values) {
                        let b = self.batch.as_mut().expect("checked");
                        b.apply_commit(c, changed, &values, &mut self.traces, &mut self.sample_losses);
                        self.loss = saturate_u32(self.sample_losses.iter().fold(0u128, |t, &l| t.saturating_add(l)));
                        return Ok(self.loss);
                    }
                }
                let mut total: u128 = 0;
                for s in 0..self.buffer.len() {
                    let out_changed = self.forward_sample(params, &plan, s);
                    for l in plan.first..self.scratch.len() {
                        if self.fresh[l] {
                            std::mem::swap(&mut self.traces[s][l], &mut self.scratch[l]);
                        }
                    }
                    if out_changed {
                        let last = self.traces[s].len() - 1;
                        self.sample_losses[s] = sample_loss(&self.traces[s][last], &self.buffer.targets[s]);
                    }
                    total = total.saturating_add(self.sample_losses[s]);
                }
                self.loss = saturate_u32(total);
                if let Some(b) = self.batch.as_mut() {
                    b.rebuild(&self.model, params, &self.buffer, &self.traces, plan.first);
                }
            }
        }
        Ok(self.loss)
    }

    /// Refuses parameters the cache cannot be used with.
    fn check(&self, params: &Params, changed: &[ParamRef]) -> Result<(), TrainError> {
        // Only shapes matter for safety: the fixed-point operations are
        // total on any i128 code.
        if params.layers.len() != self.shapes.len()
            || self.shapes.iter().zip(&params.layers).any(|(lens, p)| {
                lens.len() != p.tensors.len() || lens.iter().zip(&p.tensors).any(|(&n, v)| n != v.len())
            })
        {
            return Err(TrainError::Params("the parameters do not have the model's shapes".into()));
        }
        let fits = |p: &ParamRef| self.shapes.get(p.layer).and_then(|l| l.get(p.tensor)).is_some_and(|&n| p.index < n);
        if let Some(p) = changed.iter().find(|p| !fits(p)) {
            return Err(TrainError::Params(format!("{p:?} is not a parameter of the model")));
        }
        Ok(())
    }

    /// Runs sample `s` under `params` from the plan's first layer on, into
    /// the scratch vectors (`fresh[l]` tells which were written). Returns
    /// true if the network output differs from the cached one (it is then in
    /// the last scratch vector).
    ///
    /// A layer is recomputed in full when one of its inputs differs from
    /// the cached one (its input is gathered from the scratch vectors of
    /// changed inputs and the cached outputs of the others); only the
    /// affected outputs when just its parameters changed; not at all
    /// otherwise. The pass stops early once no changed parameter is left
    /// and no changed output is read by a later layer.
    fn forward_sample(&mut self, params: &Params, plan: &Plan, s: usize) -> bool {
        let n = self.model.layers.len();
        self.fresh.iter_mut().for_each(|f| *f = false);
        self.changed.iter_mut().for_each(|f| *f = false);
        let trace = &self.traces[s];
        let input = &self.buffer.inputs[s];
        for l in plan.first..n {
            let layer = &self.model.layers[l];
            let kind = layer.kind();
            let p = &params.layers[l];
            let input_changed = layer.inputs.iter().any(|src| matches!(*src, Source::Layer(j) if self.changed[j]));
            let (before, rest) = self.scratch.split_at_mut(l);
            let out = &mut rest[0];
            if input_changed {
                // An input differs from the cached one: the whole layer.
                let changed = &self.changed;
                let x = self.model.layer_input(l, |src| match src {
                    Source::Input => input.as_slice(),
                    Source::Layer(j) if changed[j] => before[j].as_slice(),
                    Source::Layer(j) => trace[j].as_slice(),
                });
                *out = kind.forward(layer.input_format, p, &x);
            } else if plan.neurons[l].is_empty() {
                // Same input, same parameters: the cached output.
                if l >= plan.last && !self.pending(l) {
                    return false;
                }
                continue;
            } else {
                let x = self.model.layer_input(l, |src| match src {
                    Source::Input => input.as_slice(),
                    Source::Layer(j) => trace[j].as_slice(),
                });
                out.clear();
                out.extend_from_slice(&trace[l]);
                kind.recompute(layer.input_format, p, &x, &plan.neurons[l], out);
            }
            self.fresh[l] = true;
            self.changed[l] = *out != trace[l];
            if l >= plan.last && !self.pending(l) {
                return false;
            }
        }
        self.changed[n - 1]
    }

    /// True if a changed output of layers `..=l` is read after layer `l`
    /// (or is the network's output).
    fn pending(&self, l: usize) -> bool {
        (0..=l).any(|j| self.changed[j] && self.last_use[j] > l)
    }
}
