//! Training each point of a sweep in the simulator: the ES trainer,
//! bit-exact with the hardware, on the training buffer, for the same
//! number of iterations at every point.

use std::path::PathBuf;

use fptgen_sim::data::es::{accuracy, ratio, training_section, Data};
use fptgen_sim::model::Model;
use fptgen_sim::network::{Network, SimError};
use fptgen_sim::train::{naive_loss, Buffer, EvalMode, Trainer};
use fptgen_sim::weights::Params;

use super::results::Quality;
use super::SweepError;

/// The training data and buffer.
#[derive(Debug, Clone)]
pub struct TrainInput {
    /// The data archive, for the reports.
    pub path: PathBuf,
    /// All its samples (the accuracy is over all of them).
    pub data: Data,
    /// The training buffer: its first M samples.
    pub buffer: Buffer,
}

impl TrainInput {
    /// True if the data has labels (the sweep reports accuracy).
    pub fn labels(&self) -> bool {
        self.data.labels.is_some()
    }
}

/// The buffer loss and accuracy before training, the same at every point.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Baseline {
    /// Buffer loss of the model's parameters.
    pub loss: u32,
    /// Their accuracy on all samples (0 to 1), with labels.
    pub accuracy: Option<f64>,
}

impl Baseline {
    /// The baseline of `model` with `params` on `t`.
    pub fn of(model: &Model, params: &Params, t: &TrainInput) -> Result<Baseline, SimError> {
        let loss = naive_loss(model, params, &t.buffer);
        let acc = accuracy(&Network::new(model.clone(), params.clone())?, &t.data)?;
        Ok(Baseline { loss, accuracy: acc.map(ratio) })
    }
}

/// Trains the point's model (`training:` already replaced) from `params`
/// for `k` iterations on the buffer; the buffer loss after them and, with
/// labels, the accuracy on all samples.
pub fn train_point(model: &Model, params: &Params, t: &TrainInput, k: u64) -> Result<Quality, SweepError> {
    let mut training = training_section(model)?;
    training.iterations = k;
    let net = Network::new(model.clone(), params.clone())?;
    let mut trainer = Trainer::with_training(net, training, t.buffer.clone(), EvalMode::Cached)?;
    let loss = trainer.run(k, &mut |_| {})?;
    let acc = accuracy(&trainer.network()?, &t.data)?;
    Ok(Quality { iterations: k, loss, accuracy: acc.map(ratio) })
}
