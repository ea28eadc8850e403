//! The batched evaluator ([`super::EvalMode::Batched`]): all the members of
//! a group on the whole buffer in one pass, as exact integer matrix
//! products over the committed activations (`docs/training.md`, "The
//! batched evaluator").
//!
//! It keeps what the cached evaluator keeps (every layer's output for every
//! buffered sample under the committed parameters) and, for every dense
//! layer whose accumulation is exact ([`exact_accumulation`]) with dot
//! products below `2^62`, each output's exact dot product `S = sum_i w[o][i] * x[i]`
//! of the codes, and its weights by input (column-major).
//!
//! A group whose parameters all lie in one such layer `L` (weights and
//! biases, no repeats) is evaluated for all its members at once:
//!
//! 1. For each output `o` of `L` that a group weight enters, the members'
//!    weight changes `D[m][t] = w'[m][t] - w[t]` (the group's weights of
//!    row `o`, columns `i_t`) times the buffer's inputs at those columns is
//!    one integer matrix product `X[s][i_t] * D[m][t]` (`crate::fast::kernel`;
//!    each member's row is divided by the largest power of two dividing it
//!    first, so `+-2^sigma` perturbations become `+-1` and take the 8-bit
//!    kernel, and the product is multiplied back). `S + delta` is the
//!    member's exact dot product: the accumulation is exact, so the member's
//!    output is `finish(bias', S + delta)` ([`Finisher`]), the same bits as
//!    the definition's in-order sum.
//! 2. A sample whose outputs of `L` all equal the committed ones keeps its
//!    committed loss. Otherwise the changed outputs go forward: a later
//!    dense layer with exact accumulation adds `w[o][i] * (x'_i - x_i)`
//!    for each changed input `i` to its committed `S` (every partial sum is
//!    a dot product of codes, so within the bound) and finishes every
//!    output; any other layer runs its kind's forward pass on the changed
//!    input vector. Once a layer's output equals the committed one the
//!    sample keeps its committed loss; otherwise the loss is the sum of
//!    `|y_o - t_o|` of the new output.
//! 3. The members are spread over rayon's threads; each member's loss is
//!    the exact sum over the samples, saturated to 32 bits, as in
//!    [`super::eval`].
//!
//! Committing an update is the same computation for one member, whose
//! results replace the cached outputs and sums. Groups that do not fit (a
//! group across layers, or in a layer without exact accumulation) take the
//! cached evaluator's path member by member. `sim/tests/training.rs`
//! checks every member loss and whole training runs against
//! [`super::EvalMode::Naive`] and [`super::EvalMode::Cached`].

use std::borrow::Cow;
use std::collections::BTreeMap;

use rayon::prelude::*;

use crate::fast::finish::Finisher;
use crate::fast::i64_range;
use crate::fast::kernel::{axpy, dot, Left, Rows};
use crate::layers::dense::{dot_product_bits, exact_accumulation, B, W};
use crate::model::{LayerOp, Model, Source};
use crate::weights::Params;

use super::eval::{saturate_u32, Buffer};
use super::order::ParamRef;

/// A dense layer's committed state for the batched evaluator.
#[derive(Debug, Clone)]
pub(super) struct DenseState {
    finisher: Finisher,
    inputs: usize,
    outputs: usize,
    /// The input format's code range.
    x_range: (i64, i64),
    /// Committed bias codes, and cast to the accumulator.
    bias_raw: Vec<i128>,
    bias: Vec<i128>,
    /// Committed weights by input: `wt[i * outputs + o] = w[o][i]`.
    wt: Vec<i64>,
    /// The same, by output (`w[o * inputs + i]`).
    w: Vec<i64>,
    /// `sums[s * outputs + o]`: the exact dot product of output `o` on sample `s`.
    sums: Vec<i64>,
    /// `outs[s * outputs + o]`: output `o` on sample `s` (the trace, in `i64`).
    outs: Vec<i64>,
}

/// The batched evaluator's state beside the cached one: per layer, a
/// [`DenseState`] where the layer qualifies.
#[derive(Debug, Clone)]
pub(super) struct BatchState {
    layers: Vec<Option<DenseState>>,
    /// Per layer, the last layer that reads its output ([`Model::last_use`]).
    last_use: Vec<usize>,
}

/// Where a group's parameters sit in its layer.
struct Group {
    layer: usize,
    /// The outputs the group enters, increasing.
    affected: Vec<usize>,
    /// Per affected output: its weights' columns and group indices.
    cols: Vec<Vec<(usize, usize)>>,
    /// Per affected output: the group index of its bias, if in the group.
    bias: Vec<Option<usize>>,
}

/// What one sample's pass changed, layer by layer (for a commit): the
/// layer, its new sums row (layers with a state) and its changed outputs.
type Record = Vec<(usize, Option<Vec<i64>>, Vec<(usize, i128)>)>;

/// A commit computed by [`BatchState::plan_commit`], to apply.
pub(super) struct Commit {
    layer: usize,
    records: Vec<Record>,
    losses: Vec<u128>,
}

/// The input codes of layer `l` for sample `s` under the committed
/// parameters (the gather of its inputs).
fn layer_input<'a>(model: &Model, buffer: &'a Buffer, traces: &'a [Vec<Vec<i128>>], s: usize, l: usize) -> Cow<'a, [i128]> {
    model.layer_input(l, |src| match src {
        Source::Input => &buffer.inputs()[s],
        Source::Layer(j) => &traces[s][j],
    })
}

impl DenseState {
    /// `Some` for a dense layer with exact accumulation, dot products below
    /// `2^62` and codes that fit `i64`; the sums from the traces.
    fn new(model: &Model, params: &Params, buffer: &Buffer, traces: &[Vec<Vec<i128>>], l: usize) -> Option<DenseState> {
        let layer = &model.layers[l];
        let LayerOp::Dense(d) = &layer.op else { return None };
        let shift = exact_accumulation(d, layer.input_format)?;
        if dot_product_bits(d.precision.weight, layer.input_format, d.inputs)? > 62 {
            return None;
        }
        i64_range(d.precision.output)?;
        let x_range = i64_range(layer.input_format)?;
        let p = &params.layers[l];
        let (inputs, outputs) = (d.inputs, d.outputs);
        let mut wt = vec![0i64; inputs * outputs];
        for (k, &w) in p.tensors[W].iter().enumerate() {
            wt[(k % inputs) * outputs + k / inputs] = i64::try_from(w).ok()?;
        }
        let finisher = Finisher::new(d, shift);
        let bias_raw = p.tensors[B].clone();
        let bias = bias_raw.iter().map(|&b| finisher.bias(b)).collect();
        let outs = traces.iter().flat_map(|t| t[l].iter().map(|&v| v as i64)).collect();
        let w = p.tensors[W].iter().map(|&v| v as i64).collect();
        let mut st = DenseState { finisher, inputs, outputs, x_range, bias_raw, bias, wt, w, sums: vec![0; buffer.len() * outputs], outs };
        for s in 0..buffer.len() {
            let x = layer_input(model, buffer, traces, s, l);
            for o in 0..outputs {
                st.sums[s * outputs + o] = st.dot(&x, o);
            }
        }
        Some(st)
    }

    /// The exact dot product of output `o` with the committed weights.
    fn dot(&self, x: &[i128], o: usize) -> i64 {
        x.iter().enumerate().map(|(i, &v)| self.wt[i * self.outputs + o] * v as i64).sum()
    }

    /// The committed weight `w[o][i]`.
    fn weight(&self, o: usize, i: usize) -> i64 {
        self.wt[i * self.outputs + o]
    }
}

impl BatchState {
    /// The state for committed `params` and the cached evaluator's traces.
    pub(super) fn new(model: &Model, params: &Params, buffer: &Buffer, traces: &[Vec<Vec<i128>>]) -> BatchState {
        BatchState {
            layers: (0..model.layers.len()).map(|l| DenseState::new(model, params, buffer, traces, l)).collect(),
            last_use: model.last_use(),
        }
    }

    /// Rebuilds the state of layers `first..` from committed `params` and
    /// traces (after a commit the batched path did not handle).
    pub(super) fn rebuild(&mut self, model: &Model, params: &Params, buffer: &Buffer, traces: &[Vec<Vec<i128>>], first: usize) {
        for l in first..model.layers.len() {
            self.layers[l] = DenseState::new(model, params, buffer, traces, l);
        }
    }

    /// How a group of parameters sits in one qualifying layer, or `None`
    /// (several layers, a layer without state, another tensor, repeats).
    fn group(&self, refs: &[ParamRef]) -> Option<Group> {
        let layer = refs.first()?.layer;
        let ds = self.layers[layer].as_ref()?;
        // Per affected output: its weights' (column, group index), its bias's group index.
        type Row = (Vec<(usize, usize)>, Option<usize>);
        let mut rows: BTreeMap<usize, Row> = BTreeMap::new();
        let mut seen = std::collections::HashSet::with_capacity(refs.len());
        for (j, r) in refs.iter().enumerate() {
            if r.layer != layer || !seen.insert((r.tensor, r.index)) {
                return None;
            }
            match r.tensor {
                W => rows.entry(r.index / ds.inputs).or_default().0.push((r.index % ds.inputs, j)),
                B => rows.entry(r.index).or_default().1 = Some(j),
                _ => return None,
            }
        }
        let affected = rows.keys().copied().collect();
        let (cols, bias) = rows.into_values().unzip();
        Some(Group { layer, affected, cols, bias })
    }

    /// The buffer losses of the members (`values[m][j]` is member `m`'s
    /// code for `refs[j]`; the other parameters are the committed ones), or
    /// `None` when the group does not fit the batched path.
    pub(super) fn members(
        &self,
        ctx: &Ctx<'_>,
        refs: &[ParamRef],
        values: &[Vec<i128>],
    ) -> Option<Vec<u32>> {
        let g = self.group(refs)?;
        let lefts = self.lefts(ctx, &g);
        let ds = self.layers[g.layer].as_ref()?;
        let ns = ctx.buffer.len();
        // Per affected output, its committed sums and outputs by sample.
        let column = |v: &[i64], o: usize| -> Vec<i64> { (0..ns).map(|s| v[s * ds.outputs + o]).collect() };
        let sums: Vec<Vec<i64>> = g.affected.iter().map(|&o| column(&ds.sums, o)).collect();
        let outs: Vec<Vec<i64>> = g.affected.iter().map(|&o| column(&ds.outs, o)).collect();
        // Chunks of at most 16 members (one 16-lane panel of the 8-bit
        // kernel), as many as a multiple of the threads, of equal size.
        let threads = rayon::current_num_threads().max(1);
        let n_chunks = values.len().div_ceil(16).div_ceil(threads) * threads;
        let chunk = values.len().div_ceil(n_chunks.max(1)).max(1);
        let parts: Option<Vec<Vec<u32>>> = values
            .par_chunks(chunk)
            .map(|vals| {
                let nm = vals.len();
                let delta = self.deltas(ctx, &g, &lefts, vals)?;
                let mut scratch = Scratch::default();
                let (mut ys, mut bias) = (vec![0i64; g.affected.len() * ns], vec![0i128; ns]);
                Some(
                    (0..nm)
                        .map(|mi| {
                            // The affected outputs on every sample: vectorized rows.
                            for (a, &b) in self.member_biases(&g, &vals[mi]).iter().enumerate() {
                                let y = &mut ys[a * ns..(a + 1) * ns];
                                let d = &delta[(a * nm + mi) * ns..(a * nm + mi + 1) * ns];
                                for ((y, &s0), &dv) in y.iter_mut().zip(&sums[a]).zip(d) {
                                    *y = s0 + dv;
                                }
                                bias.fill(b);
                                ds.finisher.finish_row(&bias, y);
                            }
                            let mut total: u128 = 0;
                            for s in 0..ns {
                                let changes = &mut scratch.changes;
                                changes.clear();
                                for (a, &o) in g.affected.iter().enumerate() {
                                    let y = ys[a * ns + s];
                                    if y != outs[a][s] {
                                        changes.push((o, i128::from(y)));
                                    }
                                }
                                let l = if changes.is_empty() {
                                    ctx.losses[s]
                                } else {
                                    self.propagate(ctx, g.layer, s, &mut scratch, None)
                                };
                                total = total.saturating_add(l);
                            }
                            saturate_u32(total)
                        })
                        .collect(),
                )
            })
            .collect();
        Some(parts?.concat())
    }

    /// Per affected output of the group, the buffer's inputs at its
    /// weights' columns (`[sample][t]`), ready for the kernels.
    fn lefts(&self, ctx: &Ctx<'_>, g: &Group) -> Vec<Left> {
        let ns = ctx.buffer.len();
        g.cols
            .par_iter()
            .map(|cols| {
                let k = cols.len();
                let mut xs = vec![0i64; ns * k];
                for s in 0..ns {
                    let x = layer_input(ctx.model, ctx.buffer, ctx.traces, s, g.layer);
                    for (dst, &(i, _)) in xs[s * k..(s + 1) * k].iter_mut().zip(cols) {
                        *dst = x[i] as i64;
                    }
                }
                Left::new(xs, ns, k)
            })
            .collect()
    }

    /// What committing `values` (one code per ref) as the new committed
    /// values of `refs` changes: per sample, its pass's [`Record`] and its
    /// new loss. `None` when the group does not fit.
    pub(super) fn plan_commit(&self, ctx: &Ctx<'_>, refs: &[ParamRef], values: &[i128]) -> Option<Commit> {
        let g = self.group(refs)?;
        let vals = [values.to_vec()];
        let delta = self.deltas(ctx, &g, &self.lefts(ctx, &g), &vals)?;
        let biases = self.member_biases(&g, values);
        let (records, losses) = (0..ctx.buffer.len())
            .into_par_iter()
            .map_init(Scratch::default, |scratch, s| {
                let mut rec = Record::new();
                let loss = self.sample(ctx, &g, &delta, 1, 0, &biases, s, scratch, Some(&mut rec));
                (rec, loss)
            })
            .unzip();
        Some(Commit { layer: g.layer, records, losses })
    }

    /// Applies a [`BatchState::plan_commit`] of the same `refs` and
    /// `values`: the traces, the per-sample losses, the sums and weights.
    pub(super) fn apply_commit(&mut self, c: Commit, refs: &[ParamRef], values: &[i128], traces: &mut [Vec<Vec<i128>>], losses: &mut [u128]) {
        for (s, rec) in c.records.into_iter().enumerate() {
            for (l, sums, changes) in rec {
                let ds = self.layers[l].as_mut();
                if let (Some(row), Some(ds)) = (sums, ds) {
                    ds.sums[s * ds.outputs..(s + 1) * ds.outputs].copy_from_slice(&row);
                    for &(o, v) in &changes {
                        ds.outs[s * ds.outputs + o] = v as i64;
                    }
                }
                for (o, v) in changes {
                    traces[s][l][o] = v;
                }
            }
        }
        losses.copy_from_slice(&c.losses);
        let ds = self.layers[c.layer].as_mut().expect("the group's layer has a state");
        for (r, &v) in refs.iter().zip(values) {
            if r.tensor == W {
                let (o, i) = (r.index / ds.inputs, r.index % ds.inputs);
                ds.wt[i * ds.outputs + o] = v as i64;
                ds.w[r.index] = v as i64;
            } else {
                ds.bias_raw[r.index] = v;
                ds.bias[r.index] = ds.finisher.bias(v);
            }
        }
    }

    /// Per affected output, the member's bias cast to the accumulator.
    fn member_biases(&self, g: &Group, vals: &[i128]) -> Vec<i128> {
        let ds = self.layers[g.layer].as_ref().expect("the group's layer has a state");
        g.affected.iter().zip(&g.bias).map(|(&o, b)| b.map_or(ds.bias[o], |j| ds.finisher.bias(vals[j]))).collect()
    }

    /// `delta[(a * members + m) * samples + s]`: the change of affected
    /// output `a`'s dot product on sample `s` for member `m` of `vals`.
    fn deltas(&self, ctx: &Ctx<'_>, g: &Group, lefts: &[Left], vals: &[Vec<i128>]) -> Option<Vec<i64>> {
        let ds = self.layers[g.layer].as_ref()?;
        let (nm, ns) = (vals.len(), ctx.buffer.len());
        let mut delta = vec![0i64; g.affected.len() * nm * ns];
        for (a, (&o, cols)) in g.affected.iter().zip(&g.cols).enumerate() {
            let k = cols.len();
            if k == 0 {
                continue;
            }
            // Member rows, each divided by its largest power-of-two factor.
            let mut d = vec![0i64; nm * k];
            let mut scale = vec![0u32; nm];
            for (mi, v) in vals.iter().enumerate() {
                let row = &mut d[mi * k..(mi + 1) * k];
                for (x, &(i, j)) in row.iter_mut().zip(cols) {
                    *x = i64::try_from(v[j] - i128::from(ds.weight(o, i))).ok()?;
                }
                let tz = row.iter().fold(0i64, |acc, &x| acc | x).trailing_zeros().min(62);
                row.iter_mut().for_each(|x| *x >>= tz);
                scale[mi] = tz;
            }
            let rows = Rows::new(&d, nm, k, ds.x_range, true)?;
            let mut out = vec![0i64; ns * nm];
            rows.mul_left(&lefts[a], &mut out);
            for s in 0..ns {
                for mi in 0..nm {
                    // The scaled-back sum is a difference of two dot products
                    // below 2^62: it fits.
                    delta[(a * nm + mi) * ns + s] = out[s * nm + mi] << scale[mi];
                }
            }
        }
        Some(delta)
    }

    /// Member `mi`'s loss on sample `s` (exact); with `rec`, what changed.
    #[allow(clippy::too_many_arguments)]
    fn sample(
        &self,
        ctx: &Ctx<'_>,
        g: &Group,
        delta: &[i64],
        nm: usize,
        mi: usize,
        biases: &[i128],
        s: usize,
        scratch: &mut Scratch,
        mut rec: Option<&mut Record>,
    ) -> u128 {
        let ns = ctx.buffer.len();
        let ds = self.layers[g.layer].as_ref().expect("the group's layer has a state");
        let trace = &ctx.traces[s];
        let changes = &mut scratch.changes;
        changes.clear();
        let mut row = rec.as_ref().map(|_| ds.sums[s * ds.outputs..(s + 1) * ds.outputs].to_vec());
        for (a, &o) in g.affected.iter().enumerate() {
            let sum = ds.sums[s * ds.outputs + o] + delta[(a * nm + mi) * ns + s];
            if let Some(r) = row.as_mut() {
                r[o] = sum;
            }
            let y = ds.finisher.finish(biases[a], sum);
            if y != trace[g.layer][o] {
                changes.push((o, y));
            }
        }
        if let Some(r) = rec.as_deref_mut() {
            r.push((g.layer, row, changes.clone()));
        }
        self.propagate(ctx, g.layer, s, scratch, rec)
    }

    /// Sample `s`'s loss when the outputs of layer `from` differ from the
    /// committed ones by `scratch.changes`, the later layers having their
    /// committed parameters; with `rec`, what changed.
    ///
    /// Each later layer gathers the changes of its inputs (their indices
    /// mapped into its gathered input, [`crate::model::Gather::index`]);
    /// a layer none of whose inputs changed is skipped, and the pass stops
    /// once no changed output is read by a later layer.
    fn propagate(&self, ctx: &Ctx<'_>, from: usize, s: usize, scratch: &mut Scratch, mut rec: Option<&mut Record>) -> u128 {
        let trace = &ctx.traces[s];
        let Scratch { changes, next, srow, x, dx, per } = scratch;
        let n = ctx.model.layers.len();
        per.resize_with(n, Vec::new);
        per[from].clear();
        per[from].append(changes);
        for l in from + 1..n {
            if !(from..l).any(|j| !per[j].is_empty() && self.last_use[j] >= l) {
                return ctx.losses[s];
            }
            per[l].clear();
            let layer = &ctx.model.layers[l];
            changes.clear();
            for (k, src) in layer.inputs.iter().enumerate() {
                if let Source::Layer(j) = *src {
                    if j >= from {
                        if let [_] = layer.inputs.as_slice() {
                            changes.extend_from_slice(&per[j]);
                        } else {
                            changes.extend(per[j].iter().map(|&(i, v)| (layer.gather.index(k, i), v)));
                        }
                    }
                }
            }
            if changes.is_empty() {
                continue;
            }
            let prev = layer_input(ctx.model, ctx.buffer, ctx.traces, s, l);
            let cur = &trace[l];
            next.clear();
            let mut recorded = false;
            match &self.layers[l] {
                Some(d2) => {
                    let (lo, hi) = (s * d2.outputs, (s + 1) * d2.outputs);
                    srow.clear();
                    srow.extend_from_slice(&d2.sums[lo..hi]);
                    if changes.len() * 4 > d2.inputs {
                        // Many changed inputs: one dot product per output
                        // with the dense vector of input changes.
                        dx.clear();
                        dx.resize(d2.inputs, 0);
                        for &(i, v) in changes.iter() {
                            dx[i] = (v - prev[i]) as i64;
                        }
                        for (o, acc) in srow.iter_mut().enumerate() {
                            *acc += dot(&d2.w[o * d2.inputs..(o + 1) * d2.inputs], dx);
                        }
                    } else {
                        for &(i, v) in changes.iter() {
                            axpy(srow, &d2.wt[i * d2.outputs..(i + 1) * d2.outputs], (v - prev[i]) as i64);
                        }
                    }
                    // The sums are kept for a commit's record; otherwise
                    // they are finished in place.
                    let sums = rec.as_ref().map(|_| srow.clone());
                    d2.finisher.finish_row(&d2.bias, srow);
                    next.extend(
                        srow.iter().zip(&d2.outs[lo..hi]).enumerate().filter(|(_, (y, c))| y != c).map(|(o, (&y, _))| (o, i128::from(y))),
                    );
                    if let Some(r) = rec.as_deref_mut() {
                        r.push((l, sums, next.clone()));
                        recorded = true;
                    }
                }
                None => {
                    x.clear();
                    x.extend_from_slice(&prev);
                    for &(i, v) in changes.iter() {
                        x[i] = v;
                    }
                    let y = layer.kind().forward(layer.input_format, &ctx.params.layers[l], x);
                    next.extend(y.iter().zip(cur).enumerate().filter(|(_, (a, b))| a != b).map(|(o, (&a, _))| (o, a)));
                }
            }
            if let (Some(r), false) = (rec.as_deref_mut(), recorded) {
                r.push((l, None, next.clone()));
            }
            std::mem::swap(&mut per[l], next);
        }
        let changes = &per[n - 1];
        if changes.is_empty() {
            return ctx.losses[s];
        }
        let t = &ctx.buffer.targets()[s];
        let out = &trace[n - 1];
        let mut loss = ctx.losses[s];
        for &(o, v) in changes.iter() {
            loss = loss + v.abs_diff(t[o]) - out[o].abs_diff(t[o]);
        }
        loss
    }
}

/// Reused vectors of [`BatchState::sample`].
#[derive(Default)]
struct Scratch {
    changes: Vec<(usize, i128)>,
    next: Vec<(usize, i128)>,
    srow: Vec<i64>,
    x: Vec<i128>,
    dx: Vec<i64>,
    /// Per layer, its changed outputs in this pass.
    per: Vec<Vec<(usize, i128)>>,
}

/// The committed state the batched evaluator reads.
pub(super) struct Ctx<'a> {
    pub(super) model: &'a Model,
    /// The committed parameters (of the layers without a state).
    pub(super) params: &'a Params,
    pub(super) buffer: &'a Buffer,
    pub(super) traces: &'a [Vec<Vec<i128>>],
    /// Each sample's exact committed loss.
    pub(super) losses: &'a [u128],
}

