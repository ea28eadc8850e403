//! Exact fixed-point numerics with the semantics of Vivado HLS / hls4ml
//! `ap_fixed<W,I,Q,O>` and `ap_ufixed<W,I,Q,O>`.
//!
//! This module is the executable specification that the generated Verilog
//! must match bit for bit; `docs/numerics.md` states every rule and names
//! the test covering it. In short:
//!
//! * A [`Format`] has `W` bits (`1..=64`), `I` integer bits (`-1024..=1024`,
//!   including the sign bit when signed) and `F = W - I` fractional bits. A
//!   raw code `r` (an `i128`) stands for `r * 2^-F`.
//! * Every conversion into a format (from a double, from another format,
//!   of an exact product or sum) takes the *exact* input value, quantizes
//!   it per the format's [`Quant`] mode, then applies its [`Overflow`] mode
//!   to the quantized value.
//! * Nothing panics: invalid input is an error value, and the arithmetic is
//!   exact for all inputs (products use 256-bit magnitudes).
//!
//! Format strings ([`std::str::FromStr`] for [`Format`]; keywords are
//! case-sensitive, whitespace is allowed between tokens):
//!
//! | syntax | format |
//! |---|---|
//! | `ap_fixed<W,I>` | `ap_fixed<W,I,AP_TRN,AP_WRAP>` |
//! | `ap_fixed<W,I,Q>` | `ap_fixed<W,I,Q,AP_WRAP>` |
//! | `ap_fixed<W,I,Q,O>` | itself |
//! | `ap_ufixed<...>` | the same, unsigned |
//! | `ap_int<W>` | `ap_fixed<W,W,AP_TRN,AP_WRAP>` |
//! | `ap_uint<W>` | `ap_ufixed<W,W,AP_TRN,AP_WRAP>` |
//! | `quantized_bits(b,i)` | `ap_fixed<b,i+1,AP_RND_CONV,AP_SAT>` |
//! | `quantized_bits(b)` | `quantized_bits(b,0)` |
//! | `quantized_relu(b,i)` | `ap_ufixed<b,i,AP_RND_CONV,AP_SAT>` |
//! | `quantized_relu(b)` | `quantized_relu(b,0)` |
//!
//! The QKeras forms accept the keyword argument `alpha=1` after the
//! positional ones and reject any other `alpha` and any other keyword. The
//! fifth `ap_fixed` argument (`N` saturation bits) and `AP_WRAP_SM` are
//! rejected as not supported.
//!
//! ```
//! use fptgen_sim::fixed::{Fixed, Format};
//! let f: Format = "ap_fixed<10,4>".parse().unwrap();
//! // 8.99 truncates to 8.984375, which is outside [-8, 8) and wraps.
//! let x = Fixed::from_f64(8.99, f).unwrap();
//! assert_eq!(x.to_string(), "-7.015625");
//! ```

mod decimal;
mod error;
mod exact;
mod format;
mod modes;
mod overflow;
mod parse;
mod quantize;
mod to_float;
mod value;
mod wide;

pub use error::{FixedError, FormatError, NonFiniteError, NotRepresentable};
pub use format::Format;
pub use modes::{Overflow, Quant};
pub use quantize::Conversion;
pub use value::Fixed;
