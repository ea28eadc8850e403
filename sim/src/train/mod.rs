//! On-device training with evolution strategies: the reference algorithm
//! that the training hardware implements bit for bit (`docs/training.md`).
//!
//! Everything is integer arithmetic on raw codes:
//!
//! * [`lfsr`]: each block's Galois LFSR, [`splitmix64`] and the seeding;
//! * [`noise`]: `rademacher` and `uniform` values from fresh LFSR bits;
//! * [`po2`](mod@po2): the loss quantization `Q(s)` (leading-one exponent);
//! * [`order`]: the numbering of the trainable parameters;
//! * [`eval`]: the training buffer, the `mae` loss, and the cached
//!   evaluator that makes the simulation fast without changing a bit;
//! * [`steps`]: ES's automatic step sizes (`lr_shift: auto`);
//! * [`difference`]: which samples a member changes, as the hardware's
//!   evaluation by difference decides it;
//! * [`fitness`]: the fitness signal (antithetic pairs, baseline, plain,
//!   centered ranks);
//! * [`es`]: the loop (groups, members, perturb/restore, fitness,
//!   accumulators, update) in [`Trainer`], which reports every group as a
//!   [`GroupRecord`];
//! * [`hardware`]: what the generator's hardware planning reads of the
//!   trainers (seeds, eligibility, the feedback rules' layers and modules).
//!
//! ```
//! use std::path::Path;
//! use fptgen_sim::network::Network;
//! use fptgen_sim::train::{Buffer, EvalMode, Trainer};
//! use fptgen_sim::weights::{LayerParams, Params};
//!
//! let yaml = "name: t\ninput: {shape: [2], format: 'ap_fixed<8,4>'}\nweights: w.npz\n\
//!     layers:\n  - {name: l, type: dense, inputs: 2, outputs: 1, activation: linear,\n\
//!     precision: {weight: 'ap_fixed<8,4>', bias: 'ap_fixed<8,4>', accum: 'ap_fixed<24,12>',\n\
//!     output: 'ap_fixed<16,8>'}, trainable: [weights]}\n\
//!     training: {population: 4, iterations: 3, buffer: 2, lr_shift: 2}\n";
//! let model = fptgen_sim::model::parse(yaml, Path::new("t.yaml")).unwrap();
//! // One tensor per kind tensor: a dense layer's weights, then its biases.
//! let params = Params { layers: vec![LayerParams { tensors: vec![vec![0, 0], vec![0]] }] };
//! let net = Network::new(model.clone(), params).unwrap();
//! // Targets: y = x0 + x1 (raw codes of the output format, F = 8 vs input F = 4).
//! let buffer = Buffer::new(&model, vec![vec![16, 0], vec![0, 16]], vec![vec![256], vec![256]]).unwrap();
//! let mut trainer = Trainer::new(net, buffer, EvalMode::Cached).unwrap();
//! let before = trainer.loss();
//! // Each weight's pairs see L(w+1) - L(w-1) = -32: G = 2 * -32 = -64, and
//! // -64 / 2^2 = -16 moves it from 0 to 16 (1.0), the target.
//! let after = trainer.run(3, &mut |_record| {}).unwrap();
//! assert_eq!((before, after), (512, 0));
//! ```

mod batched;
pub mod device;
pub mod difference;
pub mod es;
pub mod eval;
pub mod feedback;
pub mod feedback_float;
pub mod fitness;
pub mod hardware;
pub mod lfsr;
pub mod noise;
pub mod order;
pub mod overrides;
pub mod po2;
pub mod sgm;
pub mod steps;

pub use es::{rounded_step, saturating_accumulate, GroupRecord, Trainer};
pub use device::{device_trainer, DeviceTrainer};
pub use eval::{naive_loss, sample_loss, Buffer, EvalMode, Evaluator};
pub use feedback::{FeedbackTrainer, SampleRecord};
pub use lfsr::{block_seed, splitmix64, taps, Lfsr};
pub use noise::NoiseSource;
pub use order::{trainable_params, ParamRef};
pub use overrides::TrainingOverride;
pub use po2::{leading_one, po2, quantize_signal};

/// Why training was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TrainError {
    /// The model file has no `training:` section.
    #[error("the model has no training section")]
    NoTraining,
    /// No layer has a trainable parameter.
    #[error("the model has no trainable parameters")]
    NoTrainable,
    /// A training configuration breaks an invariant.
    #[error("bad training configuration: {0}")]
    Config(String),
    /// The buffer does not hold M samples.
    #[error("the training buffer holds {got} samples but the training section's buffer is {want}")]
    BufferSize {
        /// Samples given.
        got: usize,
        /// M.
        want: usize,
    },
    /// A buffer sample does not fit the model.
    #[error("training buffer: {0}")]
    Buffer(String),
    /// Parameters given to an [`Evaluator`] do not fit its model.
    #[error("{0}")]
    Params(String),
}
