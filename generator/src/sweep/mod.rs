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
//! [`evaluate`] runs all of it on worker threads; [`report`] and [`plot`]
//! make the result files; [`run`] ties it together.

pub mod cache;
pub mod designs;
pub mod evaluate;
pub mod grid;
pub mod plot;
pub mod point;
pub mod report;
pub mod results;
pub mod run;
pub mod training;

pub use evaluate::Evaluation;
pub use grid::{Grid, GridError};
pub use results::{Area, AreaShares, PointResult, Quality, Time};
pub use run::{Spec, Sweep};
pub use training::{Baseline, TrainInput};

use fptgen_sim::data::es::BufferError;
use fptgen_sim::network::SimError;
use fptgen_sim::train::TrainError;
use fptgen_sim::ModelError;
use plotters::drawing::DrawingAreaErrorKind;

use crate::output::OutputError;
use crate::synth::SynthError;

/// The files a sweep writes into OUT (besides `cache/`): always all four,
/// so that a later sweep into the same OUT replaces every one of them.
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
}
