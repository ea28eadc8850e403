//! TFLite's integer (int8) arithmetic: affine int8 tensors
//! (`real = (q - z) * s`), the requantization of an int32 accumulator by a
//! 32-bit multiplier and a shift, and the reference int8 fully-connected
//! kernel, bit for bit as TFLite's reference kernels compute them.
//!
//! * [`quantize_multiplier`] turns a real multiplier (an effective scale
//!   `s_in * s_w / s_out`, computed in double) into TFLite's
//!   `(multiplier, shift)`, edge cases included.
//! * [`QuantizedMultiplier::apply`] is `MultiplyByQuantizedMultiplier` in
//!   either [`Rounding`] (single, the default, or gemmlowp's double).
//! * [`FullyConnected`] is `FullyConnected` / `FullyConnectedPerChannel`.
//!
//! `docs/numerics.md` ("Int8 requantization") specifies all of it and says
//! where the two roundings differ. Nothing here panics: out-of-domain
//! parameters are [`Int8Error`] values.

mod error;
mod fully_connected;
mod gemmlowp;
mod multiplier;
pub mod tflite;

pub use error::Int8Error;
pub use fully_connected::{activation_range, FullyConnected, FullyConnectedParams, Requant};
pub use gemmlowp::{rounding_divide_by_pot, saturating_rounding_doubling_high_mul};
pub use multiplier::{quantize_multiplier, quantize_multiplier_with, QuantizedMultiplier, Rounding};
