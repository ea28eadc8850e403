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
pub use run::{Spec, Sweep, TrainDataError};
pub use training::{Baseline, TrainInput};

use crate::output::OutputError;
use crate::synth::SynthError;

/// The files a sweep writes into OUT (besides `cache/`): always all four,
/// so that a later sweep into the same OUT replaces every one of them.
pub const RESULTS: [&str; 4] = ["sweep.csv", "sweep.json", "area_time.svg", "quality_time.svg"];

/// Why a sweep could not start or write its results (a failing point is
/// not an error: it is reported in its result).
#[derive(Debug, thiserror::Error)]
pub enum SweepError {
    /// The output directory is foreign or could not be written.
    #[error(transparent)]
    Output(#[from] OutputError),
    /// yosys is missing.
    #[error(transparent)]
    Synth(#[from] SynthError),
    /// The worker threads could not be started.
    #[error("starting the worker threads")]
    Threads(#[source] rayon::ThreadPoolBuildError),
    /// `sweep.json` could not be serialized.
    #[error(transparent)]
    Json(#[from] serde_json::Error),
    /// A chart could not be drawn.
    #[error(transparent)]
    Plot(#[from] plot::PlotError),
}
