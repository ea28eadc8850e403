//! # fptgen-sim
//!
//! The model, its exact numerics and the bit-accurate simulator of fptgen.
//! Data flows one way: a model file is parsed and validated here
//! ([`model::load`]), its parameters loaded and checked ([`weights::load`]),
//! and [`network::Network`] computes exactly what the generated hardware
//! computes. [`train`] is the reference of the on-device evolution-strategies
//! training (`docs/training.md`), on the same arithmetic. The
//! `fptgen-generator` crate lowers the same validated model to Verilog.

pub mod data;
pub mod error;
pub mod fast;
pub mod files;
pub mod fixed;
pub mod int8;
pub mod layers;
pub mod model;
pub mod network;
pub mod qat;
pub mod reference;
pub mod tensor;
pub mod train;
pub mod weights;

pub use error::{Error, ModelError, Pos, TensorError};
