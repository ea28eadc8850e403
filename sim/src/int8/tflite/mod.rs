//! fptgen's own reader of TFLite model files (`.tflite`, a FlatBuffer with
//! TFLite's schema), for the int8 interface of issue 15: the tensors of the
//! main subgraph with their types, shapes, scales and zero points, the data
//! of constant int8 and int32 tensors, and the `FULLY_CONNECTED` operators
//! as [`crate::int8::FullyConnected`] kernels.
//!
//! ```no_run
//! use std::path::Path;
//! use fptgen_sim::int8::tflite::TfliteModel;
//! use fptgen_sim::int8::Rounding;
//!
//! let model = TfliteModel::open(Path::new("model.tflite"))?;
//! for t in model.tensors() {
//!     println!("{} {} {:?} scales {:?} zero points {:?}", t.name, t.dtype, t.shape, t.scales, t.zero_points);
//! }
//! let head = model.fully_connected().last().expect("a FULLY_CONNECTED operator");
//! let kernel = model.fully_connected_kernel(head, Rounding::Single)?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! The file is verified by the `flatbuffers` crate before anything is read;
//! every problem is a [`crate::TensorError`] naming the file and, where
//! one is at fault, the tensor. Nothing panics on any input.

mod fb;
mod fc;
mod model;
mod types;

pub use model::TfliteModel;
pub use types::{Activation, FullyConnectedOp, TensorInfo, TensorType};
