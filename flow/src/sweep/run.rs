//! A sweep on this machine: what to sweep ([`Spec`]), its plan written
//! into OUT ([`plan_here`]), and every task run on worker threads
//! ([`run_all`]); [`super::merge`] then makes the result files, as it does
//! for a sweep whose tasks ran on a cluster.

use std::path::Path;

use fptgen_sim::data::es::{self, training_section};
use fptgen_sim::model::{Model, Training};
use fptgen_sim::network::SimError;
use fptgen_sim::weights::Params;
use fptgen_sim::ModelError;
use rayon::prelude::*;

use super::designs::Designs;
use super::grid::Grid;
use super::plan::{Plan, PLAN, SBATCH};
use super::task::Runner;
use super::training::{Baseline, TrainInput};
use super::{SweepError, RESULTS};
use fptgen_generator::output;
use fptgen_generator::render::SynthScope;
use crate::synth;

/// What to sweep: the model and its parameters, the grid, the scope of
/// the estimates, and, to train every point, the data and the iterations.
#[derive(Debug, Clone)]
pub struct Spec {
    /// The model, with a `training:` section.
    pub model: Model,
    /// Its parameters (every point trains from them).
    pub params: Params,
    /// The points (N, P).
    pub grid: Grid,
    /// What yosys estimates.
    pub scope: SynthScope,
    /// The model's `training:` section.
    pub training: Training,
    /// Iterations to train each point.
    pub iterations: u64,
    /// The training data, to train every point.
    pub train: Option<TrainInput>,
}

impl Spec {
    /// A sweep of `model` over `grid`, estimating `scope`, training
    /// `iterations` iterations (default: the model file's) once data is
    /// read; an error if the model has no `training:` section.
    pub fn new(
        model: Model,
        params: Params,
        grid: Grid,
        scope: SynthScope,
        iterations: Option<u64>,
    ) -> Result<Spec, ModelError> {
        let training = training_section(&model)?;
        let iterations = iterations.unwrap_or(training.iterations);
        Ok(Spec { model, params, grid, scope, training, iterations, train: None })
    }

    /// Reads the training data at `path` (as `fptgen train-es` does): every
    /// point is then trained on its first M samples.
    pub fn read_data(&mut self, path: &Path) -> Result<(), SweepError> {
        let data = es::read_data(&self.model, path)?;
        let buffer = es::buffer(&self.model, self.training.buffer, &data, path)?;
        self.train = Some(TrainInput { path: path.to_path_buf(), data, buffer });
        Ok(())
    }

    /// True if the data has labels (the sweep reports accuracy).
    pub fn labels(&self) -> bool {
        self.train.as_ref().is_some_and(TrainInput::labels)
    }

    /// The loss and accuracy before training, with data.
    pub fn baseline(&self) -> Result<Option<Baseline>, SimError> {
        self.train.as_ref().map(|t| Baseline::of(&self.model, &self.params, t)).transpose()
    }
}

/// Plans the sweep `spec` into `out` for the fptgen executable `exe` (see
/// [`Plan::write`]) and opens it to run here: refuses a foreign `out` and
/// a missing yosys before writing anything.
pub fn plan_here(spec: &Spec, quantize: bool, max_running: usize, out: &Path, exe: &Path) -> Result<Runner, SweepError> {
    output::check_dir(out, [Path::new(PLAN), Path::new(SBATCH)].into_iter().chain(RESULTS.iter().map(Path::new)))?;
    synth::yosys_version()?;
    Plan::new(spec, quantize, max_running)?.write(out, exe)?;
    Runner::open(out)
}

/// Runs every task of `runner`'s plan on `jobs` worker threads (default:
/// one per core), writing each result file; calls `on_point` as each is
/// done. The first point of every design runs first, so that yosys runs
/// on distinct designs at once and the other points find their estimate
/// in the cache. An error if a result could not be written (the other
/// tasks still run).
pub fn run_all(runner: &Runner, jobs: Option<usize>, on_point: &(dyn Fn() + Sync)) -> Result<(), SweepError> {
    let jobs = jobs.unwrap_or_else(|| std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1));
    let pool = rayon::ThreadPoolBuilder::new().num_threads(jobs).build().map_err(SweepError::Threads)?;
    let n = runner.plan().tasks.len();
    let hashes: Vec<Option<String>> = pool.install(|| (0..n).into_par_iter().map(|i| runner.design_of(i)).collect());
    let mut designs = Designs::new();
    let mut unplanned = Vec::new();
    for (i, h) in hashes.into_iter().enumerate() {
        match h {
            Some(h) => {
                designs.add(i, h, Vec::new());
            }
            None => unplanned.push(i),
        }
    }
    let firsts = designs.list().iter().map(|d| d.points[0]);
    let rest = designs.list().iter().flat_map(|d| d.points[1..].iter().copied());
    let order: Vec<usize> = firsts.chain(rest).chain(unplanned).collect();
    let done: Vec<Result<(), SweepError>> = pool.install(|| {
        order
            .into_par_iter()
            .with_max_len(1)
            .map(|i| {
                let r = runner.run(i).map(|_| ());
                on_point();
                r
            })
            .collect()
    });
    done.into_iter().collect()
}
