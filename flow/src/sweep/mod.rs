//! `fptgen sweep`: area, training time and accuracy (or loss) of the ES
//! trainer over a grid of populations N and block counts P.
//!
//! Each point (N, P) is the model with its `training:` section's
//! `population` and `blocks` replaced, as `fptgen synth --population N
//! --blocks P` does ([`point`]). Its area is a yosys estimate of its
//! generated design; points whose design files (`rtl/`, `mem/`, `synth/`,
//! all yosys reads) are identical share one estimate ([`designs`]), and
//! every estimate is kept under `OUT/cache/<design>/`, keyed by a SHA-256
//! of those files, the scope and the fptgen and yosys versions, so a later
//! sweep into the same OUT reuses it ([`cache`]). Its training time is the
//! generator's exact schedule; its accuracy or loss comes from the
//! simulator's ES trainer, bit-exact with the hardware ([`training`]).
//!
//! A sweep is a plan, tasks and a merge, on one machine or on a cluster:
//! [`plan`] writes the grid as numbered tasks into OUT (`plan.json`, and
//! the Slurm job-array script of [`sbatch`]); [`task`] runs one point and
//! writes its result file ([`result_file`]); [`merge`] gathers the result
//! files into the outputs, which [`report`] and [`plot`] make. [`run`]
//! does all of it here, the tasks on worker threads.

pub mod cache;
pub mod designs;
pub mod evaluate;
pub mod grid;
pub mod merge;
pub mod plan;
pub mod plot;
pub mod point;
pub mod report;
pub mod result_file;
pub mod results;
pub mod run;
pub mod sbatch;
pub mod task;
pub mod training;

pub use evaluate::Evaluation;
pub use grid::{Grid, GridError};
pub use merge::Merged;
pub use plan::Plan;
pub use results::{Area, AreaShares, PointResult, Quality, Time};
pub use run::{plan_here, run_all, Spec};
pub use task::Runner;
pub use training::{Baseline, TrainInput};

use std::path::PathBuf;

use fptgen_sim::data::es::BufferError;
use fptgen_sim::network::SimError;
use fptgen_sim::train::TrainError;
use fptgen_sim::ModelError;
use plotters::drawing::DrawingAreaErrorKind;

use fptgen_generator::output::OutputError;
use crate::synth::SynthError;

/// The files a sweep's merge writes into OUT (besides the plan's, the
/// result files of its tasks and `cache/`): always all four, so that a
/// later merge replaces every one of them.
pub const RESULTS: [&str; 4] = ["sweep.csv", "sweep.json", "area_time.svg", "quality_time.svg"];

/// Why a sweep, or one of its points, failed. A failing point does not
/// stop the sweep: its error is reported in its result.
#[derive(Debug, thiserror::Error)]
pub enum SweepError {
    /// The training data archive is unreadable or malformed.
    #[error(transparent)]
    Data(#[from] fptgen_sim::Error),
    /// The training data does not make a training buffer.
    #[error(transparent)]
    Buffer(#[from] BufferError),
    /// yosys is missing, failed, or its output could not be read.
    #[error(transparent)]
    Synth(#[from] SynthError),
    /// The output directory (or a cached design's) is foreign or could not
    /// be written.
    #[error(transparent)]
    Output(#[from] OutputError),
    /// The worker threads could not be started.
    #[error("starting the worker threads")]
    Threads(#[source] rayon::ThreadPoolBuildError),
    /// A point's model has no `training:` section.
    #[error("no training section")]
    NoTraining,
    /// A point's N and P make an invalid `training:` section.
    #[error("{0}")]
    Config(String),
    /// A point's plan has no trainer.
    #[error("no training plan")]
    NoPlan,
    /// A template (a design file or a report) failed to render.
    #[error(transparent)]
    Render(#[from] askama::Error),
    /// `sweep.json` or a cache record could not be serialized.
    #[error(transparent)]
    Json(#[from] serde_json::Error),
    /// A chart could not be drawn.
    #[error(transparent)]
    Plot(#[from] DrawingAreaErrorKind<std::io::Error>),
    /// The model has no `training:` section to train a point with.
    #[error(transparent)]
    Model(#[from] ModelError),
    /// The simulator refused the parameters or the samples.
    #[error(transparent)]
    Sim(#[from] SimError),
    /// The trainer refused to train.
    #[error(transparent)]
    Train(#[from] TrainError),
    /// The grid is not valid.
    #[error(transparent)]
    Grid(#[from] GridError),
    /// A file could not be read or written.
    #[error("{}: {err}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The error.
        err: std::io::Error,
    },
    /// The directory holds no plan fptgen wrote.
    #[error("{}: is not a sweep plan (it has no plan.json written by fptgen); make one with `fptgen sweep MODEL --population N,... --blocks P,... --plan-only -o {}`", .0.display(), .0.display())]
    NotAPlan(PathBuf),
    /// `plan.json` is unreadable or malformed.
    #[error("{}: is not a valid sweep plan: {}", .0.display(), .1)]
    BadPlan(PathBuf, String),
    /// An input of the plan changed after the plan was made.
    #[error("{}: changed since the plan {} was made (SHA-256 {expected}, now {found}); make a new plan", path.display(), plan.display())]
    Changed {
        /// The input file.
        path: PathBuf,
        /// The plan.
        plan: PathBuf,
        /// Its hash in the plan.
        expected: String,
        /// Its hash now.
        found: String,
    },
    /// A task index outside the plan.
    #[error("--index {index}: the plan {} has {tasks} tasks, numbered 0 to {}", plan.display(), tasks.saturating_sub(1))]
    Index {
        /// The index asked for.
        index: usize,
        /// How many tasks there are.
        tasks: usize,
        /// The plan.
        plan: PathBuf,
    },
    /// A task's result file is truncated, corrupt, or not this task's.
    #[error("{}: {msg}; run task {index} again to replace it (fptgen sweep-run OUT --index {index})", path.display())]
    BadResult {
        /// The result file.
        path: PathBuf,
        /// What is wrong with it.
        msg: String,
        /// Its task.
        index: usize,
    },
    /// A path the job script cannot hold.
    #[error("{}: the Slurm job script cannot name this path (it has white space, a quote, a backslash, %, $ or `); use another directory", .0.display())]
    ScriptPath(PathBuf),
}
