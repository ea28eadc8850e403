//! The evolution-strategies loop (`docs/training.md`, "One group" and
//! "Update"), on raw codes with integer arithmetic only.
//!
//! For each group of up to P trainable parameters (one per block), the N
//! members are run in order: draw noise, perturb (clamped to the
//! parameter's range), evaluate the buffer loss, restore. (The noise draws
//! do not depend on the losses, so the simulator draws every member's
//! noise first and evaluates all members at once,
//! [`Evaluator::evaluate_members`]; the results are the same.) The fitness
//! signal of a member (or of a mirrored pair, [`super::fitness`]) is quantized and scales
//! each block's noise value into the block's saturating 32-bit gradient
//! accumulator. After the last member each block subtracts its accumulator
//! divided by `2^lr_shift`, rounded to nearest with ties to even, and
//! clamps. The next group starts from the updated parameters.
//!
//! Every group's member losses, noise values and final accumulators are
//! handed to an observer as a [`GroupRecord`], so co-simulation can compare
//! the hardware with this model at every update.

use rayon::prelude::*;

use crate::model::{Fitness, Model, Training};
use crate::network::Network;
use crate::weights::Params;

use super::eval::{Buffer, EvalMode, Evaluator};
use super::noise::NoiseSource;
use super::order::{trainable_params, ParamRef};
use super::TrainError;

/// What one group did: enough to check the hardware at every update.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupRecord {
    /// Iteration number, from 0.
    pub iteration: u64,
    /// Group number `g`, from 0.
    pub group: usize,
    /// The group's parameters, one per active block (block `j` owns entry `j`).
    pub params: Vec<ParamRef>,
    /// `[member][block]`: the noise value `e_j` member `m` applied (for odd
    /// members of a mirrored fitness, the negated value of the member
    /// before).
    pub noise: Vec<Vec<i64>>,
    /// `L_base`, the loss of the unperturbed parameters (`baseline` only).
    pub baseline: Option<u32>,
    /// `L_m` for every member, in order.
    pub losses: Vec<u32>,
    /// `G_j` after the last member, before the update.
    pub accumulators: Vec<i32>,
    /// The parameters' raw codes before the group.
    pub before: Vec<i128>,
    /// Their raw codes after the update.
    pub after: Vec<i128>,
}

/// `R(g / 2^shift)`: the accumulator divided by a power of two, rounded to
/// the nearest integer with ties to even (AP_RND_CONV). A negative `shift`
/// multiplies instead: `g * 2^-shift`, exact (`|g| * 2^31 < 2^63`).
///
/// In bits: `q = g >>> shift` (arithmetic shift, the floor); `q` is
/// incremented when the first dropped bit is 1 and either another dropped
/// bit is 1 or `q` is odd.
pub fn rounded_step(g: i32, shift: i32) -> i64 {
    if shift < 0 {
        return i64::from(g) << shift.unsigned_abs().min(31);
    }
    // Beyond 32 every result is 0 (|g| <= 2^31); the cap keeps shifts in range.
    let k = shift.unsigned_abs().min(40);
    let g = i128::from(g);
    if k == 0 {
        return g as i64;
    }
    let q = g >> k;
    let dropped = g - (q << k);
    let half = 1i128 << (k - 1);
    let up = dropped > half || (dropped == half && q & 1 == 1);
    (q + i128::from(up)) as i64
}

/// `acc + term`, saturating at `-2^31` and `2^31 - 1`.
pub fn saturating_accumulate(acc: i32, term: i128) -> i32 {
    i128::from(acc).saturating_add(term).clamp(i128::from(i32::MIN), i128::from(i32::MAX)) as i32
}

/// Where noise values come from: the blocks' LFSRs, or a test override.
type NoiseOverride = Box<dyn FnMut(usize) -> i64 + Send>;

/// Trains a network's trainable parameters on a buffer, exactly as the
/// hardware does.
pub struct Trainer {
    model: Model,
    training: Training,
    params: Params,
    order: Vec<ParamRef>,
    noise: Vec<NoiseSource>,
    noise_override: Option<NoiseOverride>,
    evaluator: Evaluator,
    iteration: u64,
    /// Per layer and tensor, the clamp range of its format.
    ranges: Vec<Vec<(i128, i128)>>,
    /// Vectors reused from group to group: the last record's noise, and
    /// the members' parameter values.
    spare_noise: Vec<Vec<i64>>,
    members: Vec<Vec<i128>>,
}

impl std::fmt::Debug for Trainer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Trainer")
            .field("model", &self.model.name)
            .field("training", &self.training)
            .field("trainable", &self.order.len())
            .field("iteration", &self.iteration)
            .field("loss", &self.evaluator.loss())
            .field("noise_override", &self.noise_override.is_some())
            .finish()
    }
}

impl Trainer {
    /// A trainer for `net` with the model's own `training:` section.
    pub fn new(net: Network, buffer: Buffer, mode: EvalMode) -> Result<Trainer, TrainError> {
        let training = net.model().training.ok_or(TrainError::NoTraining)?;
        Trainer::with_training(net, training, buffer, mode)
    }

    /// A trainer for `net` with `training` instead of the model's section.
    ///
    /// Errors: an invalid `training` (see [`Training::check`]), no trainable
    /// parameter, or a buffer whose size is not `training.buffer`.
    pub fn with_training(net: Network, training: Training, buffer: Buffer, mode: EvalMode) -> Result<Trainer, TrainError> {
        training.check().map_err(TrainError::Config)?;
        if buffer.len() != training.buffer {
            return Err(TrainError::BufferSize { got: buffer.len(), want: training.buffer });
        }
        let order = trainable_params(net.model());
        if order.is_empty() {
            return Err(TrainError::NoTrainable);
        }
        let evaluator = Evaluator::new(mode, &net, buffer);
        let (model, params) = net.into_parts();
        let noise = (0..training.blocks).map(|j| NoiseSource::seeded(&training.noise, training.seed, j)).collect();
        let ranges = model.layers.iter().map(|l| l.kind().tensors().iter().map(|t| t.range).collect()).collect();
        Ok(Trainer { model, training, params, order, noise, noise_override: None, evaluator, iteration: 0, ranges, spare_noise: Vec::new(), members: Vec::new() })
    }

    /// Replaces the LFSR noise by `f(block)`, called once per value a block
    /// draws. For tests and experiments (e.g. zero noise); the hardware has
    /// no such input.
    pub fn override_noise(&mut self, f: impl FnMut(usize) -> i64 + Send + 'static) {
        self.noise_override = Some(Box::new(f));
    }

    /// The model.
    pub fn model(&self) -> &Model {
        &self.model
    }

    /// The training configuration.
    pub fn training(&self) -> &Training {
        &self.training
    }

    /// The trainable parameters in training order (T of them).
    pub fn order(&self) -> &[ParamRef] {
        &self.order
    }

    /// G, the number of groups: `ceil(T / P)`.
    pub fn groups(&self) -> usize {
        self.order.len().div_ceil(self.training.blocks)
    }

    /// The current parameters.
    pub fn params(&self) -> &Params {
        &self.params
    }

    /// The blocks' noise sources (their LFSR states), block by block.
    pub fn noise_sources(&self) -> &[NoiseSource] {
        &self.noise
    }

    /// The evaluator (its mode, and how many groups took the batched path).
    pub fn evaluator(&self) -> &Evaluator {
        &self.evaluator
    }

    /// The buffer loss of the current parameters.
    pub fn loss(&self) -> u32 {
        self.evaluator.loss()
    }

    /// Iterations completed.
    pub fn iteration(&self) -> u64 {
        self.iteration
    }

    /// The current network.
    pub fn network(&self) -> Result<Network, TrainError> {
        Network::new(self.model.clone(), self.params.clone()).map_err(|e| TrainError::Params(e.to_string()))
    }

    /// Runs one iteration (every group once, in order), handing each group's
    /// record to `observer`. Returns the buffer loss afterwards.
    pub fn run_iteration(&mut self, observer: &mut dyn FnMut(&GroupRecord)) -> Result<u32, TrainError> {
        for g in 0..self.groups() {
            let record = self.run_group(g)?;
            observer(&record);
            // Its noise vectors serve the next group (large groups would
            // otherwise allocate, and page-fault, megabytes per group).
            self.spare_noise = record.noise;
        }
        self.iteration += 1;
        Ok(self.loss())
    }

    /// Runs `iterations` iterations; returns the buffer loss afterwards.
    pub fn run(&mut self, iterations: u64, observer: &mut dyn FnMut(&GroupRecord)) -> Result<u32, TrainError> {
        for _ in 0..iterations {
            self.run_iteration(observer)?;
        }
        Ok(self.loss())
    }

    fn draw(&mut self, block: usize) -> i64 {
        match &mut self.noise_override {
            Some(f) => f(block),
            None => self.noise[block].draw(),
        }
    }

    /// The noise of every member of a group of `active` blocks (`[member][block]`),
    /// drawn in the hardware's order: member by member, block by block;
    /// with `antithetic`, odd members mirror the member before.
    ///
    /// Each block draws from its own LFSR, so the blocks' sequences are
    /// independent: without a test override, chunks of blocks draw in
    /// parallel, each block its members' values in member order (the same
    /// values as the member-by-member order).
    fn draw_group(&mut self, active: usize) -> Vec<Vec<i64>> {
        let t = self.training;
        let mirrored = |m: usize| t.fitness.mirrored() && m % 2 == 1;
        let mut noise = std::mem::take(&mut self.spare_noise);
        noise.resize_with(t.population, Vec::new);
        // Without a test override, per chunk of blocks, the drawing
        // (non-mirrored) members' values, `[drawing member][block in chunk]`.
        let parallel = self.noise_override.is_none() && active <= self.noise.len();
        let nd = (0..t.population).filter(|&m| !mirrored(m)).count();
        const CHUNK: usize = 128;
        let chunks: Vec<Vec<i64>> = if parallel {
            self.noise[..active]
                .par_chunks_mut(CHUNK)
                .map(|sources| {
                    let w = sources.len();
                    let mut v = vec![0i64; nd * w];
                    for (j, src) in sources.iter_mut().enumerate() {
                        for d in 0..nd {
                            v[d * w + j] = src.draw();
                        }
                    }
                    v
                })
                .collect()
        } else {
            Vec::new()
        };
        let mut d = 0;
        for m in 0..t.population {
            let mut e = std::mem::take(&mut noise[m]);
            e.clear();
            if mirrored(m) {
                e.extend(noise[m - 1].iter().map(|&x| x.saturating_neg()));
            } else if parallel {
                for c in &chunks {
                    let w = c.len() / nd;
                    e.extend_from_slice(&c[d * w..(d + 1) * w]);
                }
                d += 1;
            } else {
                e.extend((0..active).map(|j| self.draw(j)));
            }
            noise[m] = e;
        }
        noise
    }

    /// One group: members, accumulators, update.
    fn run_group(&mut self, g: usize) -> Result<GroupRecord, TrainError> {
        let t = self.training;
        let start = g * t.blocks;
        let end = (start + t.blocks).min(self.order.len());
        let refs: Vec<ParamRef> = self.order[start..end].to_vec();
        let before: Vec<i128> = refs.iter().map(|r| r.get(&self.params)).collect();
        let ranges: Vec<(i128, i128)> = refs.iter().map(|r| self.ranges[r.layer][r.tensor]).collect();
        let mut acc = vec![0i32; refs.len()];
        let baseline = match t.fitness {
            Fitness::Baseline => Some(self.evaluator.evaluate(&self.params, &[])?),
            _ => None,
        };
        // The noise of every member, drawn in the hardware's order (member
        // by member, block by block); the draws do not depend on losses, so
        // all members can be evaluated before any accumulation.
        let noise = self.draw_group(refs.len());
        let mut members = std::mem::take(&mut self.members);
        members.resize_with(t.population, Vec::new);
        members.par_iter_mut().zip(&noise).for_each(|(v, e)| {
            v.clear();
            v.extend((0..refs.len()).map(|j| {
                let (lo, hi) = ranges[j];
                before[j].saturating_add(i128::from(e[j]) << t.perturb_shift).clamp(lo, hi)
            }));
        });
        let member_losses = self.evaluator.evaluate_members(&mut self.params, &refs, &members);
        self.members = members;
        let losses = member_losses?;
        // Per signal, in order, its quantized value and the member whose
        // noise it scales (super::fitness); then every block's accumulator
        // over them in order (blocks are independent: chunks run in
        // parallel).
        let terms = super::fitness::terms(t.fitness, t.loss_quantization, &losses, baseline);
        const ACC_CHUNK: usize = 256;
        acc.par_chunks_mut(ACC_CHUNK).enumerate().for_each(|(c, acc)| {
            let base = c * ACC_CHUNK;
            for &(q, m) in &terms {
                for (a, &ej) in acc.iter_mut().zip(&noise[m][base..]) {
                    *a = saturating_accumulate(*a, q * i128::from(ej));
                }
            }
        });
        let mut changed = Vec::with_capacity(refs.len());
        let mut after = Vec::with_capacity(refs.len());
        for (j, r) in refs.iter().enumerate() {
            let (lo, hi) = ranges[j];
            let w = (before[j] - i128::from(rounded_step(acc[j], t.lr_shift))).clamp(lo, hi);
            if w != before[j] {
                r.set(&mut self.params, w);
                changed.push(*r);
            }
            after.push(w);
        }
        self.evaluator.commit(&self.params, &changed)?;
        Ok(GroupRecord {
            iteration: self.iteration,
            group: g,
            params: refs,
            noise,
            baseline,
            losses,
            accumulators: acc,
            before,
            after,
        })
    }
}

