//! A sweep from start to finish: what to sweep ([`Spec`]), and the sweep
//! itself ([`Sweep`]): its output directory, yosys and worker threads, the
//! evaluation of the grid, and the result files.

use std::path::{Path, PathBuf};

use fptgen_sim::data::es::{self, training_section};
use fptgen_sim::model::{Model, Training};
use fptgen_sim::network::SimError;
use fptgen_sim::weights::Params;
use fptgen_sim::ModelError;
use rayon::ThreadPool;

use super::cache::Cache;
use super::evaluate::{evaluate, Evaluation};
use super::grid::Grid;
use super::plot::{plot_area, plot_quality};
use super::report::{csv, json};
use super::training::{Baseline, TrainInput};
use super::{SweepError, RESULTS};
use crate::design::gen_info;
use crate::output;
use crate::render::{GenInfo, GeneratedFile, SynthScope};
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

/// A sweep with its output directory created, yosys found, and its worker
/// threads started.
#[derive(Debug)]
pub struct Sweep {
    spec: Spec,
    out: PathBuf,
    yosys: String,
    gen: GenInfo,
    pool: ThreadPool,
}

impl Sweep {
    /// Starts the sweep `spec` into `out` with `jobs` worker threads
    /// (default: one per core): refuses a foreign `out` before any work,
    /// finds yosys, then creates `out` (with its manifest) so that the
    /// cache can go inside.
    pub fn start(spec: Spec, out: &Path, jobs: Option<usize>) -> Result<Sweep, SweepError> {
        let manifest = output::check_dir(out, RESULTS.iter().map(Path::new))?;
        let yosys = synth::yosys_version()?;
        if manifest.is_none() {
            output::add_files(out, output::SWEEP, &[])?;
        }
        let jobs = jobs.unwrap_or_else(|| std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1));
        let pool = rayon::ThreadPoolBuilder::new().num_threads(jobs).build().map_err(SweepError::Threads)?;
        let gen = gen_info(&spec.model);
        Ok(Sweep { spec, out: out.to_path_buf(), yosys, gen, pool })
    }

    /// What is swept.
    pub fn spec(&self) -> &Spec {
        &self.spec
    }

    /// yosys's version line.
    pub fn yosys(&self) -> &str {
        &self.yosys
    }

    /// The output directory.
    pub fn out(&self) -> &Path {
        &self.out
    }

    /// The estimate cache.
    pub fn cache(&self) -> Cache<'_> {
        Cache::new(&self.out, self.spec.scope, &self.yosys)
    }

    /// Evaluates every point; calls `on_point` as each is done.
    pub fn evaluate(&self, on_point: &(dyn Fn() + Sync)) -> Evaluation {
        evaluate(&self.spec, &self.cache(), &self.yosys, &self.gen, &self.pool, on_point)
    }

    /// The result files ([`RESULTS`]): the CSV, the JSON and the two charts
    /// of `ev`, with the values `before` training.
    pub fn result_files(&self, ev: &Evaluation, before: Option<Baseline>) -> Result<Vec<GeneratedFile>, SweepError> {
        let spec = &self.spec;
        let name = &spec.model.name;
        let trained = spec.train.is_some();
        let json = json(spec, &self.yosys, ev, before);
        Ok(vec![
            GeneratedFile::text(RESULTS[0], csv(&ev.results)),
            GeneratedFile::text(RESULTS[1], serde_json::to_string_pretty(&json)?),
            GeneratedFile::text(RESULTS[2], plot_area(name, &ev.results)?),
            GeneratedFile::text(RESULTS[3], plot_quality(name, &ev.results, trained, spec.labels(), before)?),
        ])
    }

    /// Writes the result files into the output directory, replacing those
    /// of an earlier sweep.
    pub fn write_results(&self, ev: &Evaluation, before: Option<Baseline>) -> Result<(), SweepError> {
        output::write_dir(&self.out, output::SWEEP, &self.result_files(ev, before)?)?;
        Ok(())
    }
}
