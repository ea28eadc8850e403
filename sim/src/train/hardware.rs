//! What the hardware planning of `fptgen-generator` needs from the
//! trainers, in one place: the generated trainers must agree with the
//! simulator on these, and the generator's plans (its `train_plan`,
//! `diff_plan`, `fb_plan` and `design`) read them here rather than reach
//! into the trainers' modules.
//!
//! * ES: each block's LFSR seed ([`block_seed`]), and where the evaluation
//!   by difference applies ([`eligibility`]);
//! * the feedback rules: which layers train and how
//!   ([`feedback_layers`], [`Feedback`], [`Derivative`]), and SGM's
//!   synthetic-gradient modules ([`load_sgm`], [`module_shapes`], [`Sgm`],
//!   [`SgmModule`]).

pub use super::difference::eligibility;
pub use super::feedback::{feedback_layers, Derivative, Feedback};
pub use super::lfsr::block_seed;
pub use super::sgm::{load as load_sgm, module_shapes, Sgm, SgmModule};
