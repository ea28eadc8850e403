//! One interface over the two device trainers, ES ([`Trainer`]) and the
//! feedback rules ([`FeedbackTrainer`]), for callers that run either the
//! same way (the CLI's `train-es`: a progress bar over an iteration's steps,
//! the loss after each iteration, the trained parameters at the end).

use crate::model::{Rule, Training};
use crate::network::Network;
use crate::weights::Params;

use super::{Buffer, EvalMode, FeedbackTrainer, TrainError, Trainer};

/// A device trainer, as a caller that runs iterations sees it.
pub trait DeviceTrainer {
    /// What trains, in one line (rule, trainable parameters, schedule).
    fn header(&self) -> String;
    /// Steps per iteration and their name (ES: groups; feedback: samples).
    fn steps(&self) -> (u64, &'static str);
    /// One iteration, `tick` after every step; the buffer loss after it.
    fn run_steps(&mut self, tick: &mut dyn FnMut()) -> Result<u32, TrainError>;
    /// The buffer loss.
    fn buffer_loss(&self) -> u32;
    /// The parameters.
    fn current_params(&self) -> &Params;
    /// The network with the current parameters.
    fn current_network(&self) -> Result<Network, TrainError>;
}

/// The device trainer of `training`'s rule over `net` and `buffer`: ES
/// ([`Trainer`], the batched evaluation the hardware does) or a feedback
/// rule ([`FeedbackTrainer`]).
pub fn device_trainer(net: Network, training: Training, buffer: Buffer) -> Result<Box<dyn DeviceTrainer>, TrainError> {
    Ok(match training.rule {
        Rule::Es => Box::new(Trainer::with_training(net, training, buffer, EvalMode::Batched)?),
        Rule::Drtp | Rule::Dfa | Rule::Sgm => Box::new(FeedbackTrainer::new(net, training, buffer)?),
    })
}

impl DeviceTrainer for Trainer {
    fn header(&self) -> String {
        let t = self.training();
        format!(
            "rule es, {} of {} parameters, {} groups of {} blocks, {} members",
            self.order().len(),
            self.model().params(),
            self.groups(),
            t.blocks,
            t.population
        )
    }
    fn steps(&self) -> (u64, &'static str) {
        (self.groups() as u64, "groups")
    }
    fn run_steps(&mut self, tick: &mut dyn FnMut()) -> Result<u32, TrainError> {
        self.run_iteration(&mut |_| tick())
    }
    fn buffer_loss(&self) -> u32 {
        self.loss()
    }
    fn current_params(&self) -> &Params {
        self.params()
    }
    fn current_network(&self) -> Result<Network, TrainError> {
        self.network()
    }
}

impl DeviceTrainer for FeedbackTrainer {
    fn header(&self) -> String {
        let trainable: usize = self.model().layers.iter().flat_map(|l| l.kind().tensors()).filter(|t| t.trainable).map(|t| t.len()).sum();
        format!("rule {}, {trainable} of {} parameters, one update per sample", self.rule().name(), self.model().params())
    }
    fn steps(&self) -> (u64, &'static str) {
        (self.buffer_len() as u64, "samples")
    }
    fn run_steps(&mut self, tick: &mut dyn FnMut()) -> Result<u32, TrainError> {
        Ok(self.run_iteration(&mut |_| tick()))
    }
    fn buffer_loss(&self) -> u32 {
        self.loss()
    }
    fn current_params(&self) -> &Params {
        self.params()
    }
    fn current_network(&self) -> Result<Network, TrainError> {
        Network::new(self.model().clone(), self.params().clone()).map_err(|e| TrainError::Params(e.to_string()))
    }
}
