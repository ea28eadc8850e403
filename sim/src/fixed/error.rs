//! Error types of the `fixed` module. None of the operations of the module
//! panics; everything that can go wrong is one of these.

use std::fmt;

use super::format::Format;

/// A format that is not valid or a string that does not parse as a format.
///
/// [`FormatError::message`] names what is wrong and what is accepted;
/// [`FormatError::offset`] is the byte offset, into the parsed string, of
/// the token where the problem is (0 for errors of [`Format::new`], which
/// has no string). `Display` prints the message alone, e.g.
/// `width 0 is out of range 1..=64`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FormatError {
    message: String,
    offset: usize,
    input: Option<String>,
}

impl FormatError {
    /// An error of [`Format::new`] (no input string).
    pub(crate) fn invalid(message: String) -> FormatError {
        FormatError {
            message,
            offset: 0,
            input: None,
        }
    }

    /// An error found at byte `offset` of `input`.
    pub(crate) fn at(input: &str, offset: usize, message: String) -> FormatError {
        FormatError {
            message,
            offset,
            input: Some(input.to_string()),
        }
    }

    /// What is wrong, without the position.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// Byte offset into the parsed string of the offending token (0 when the
    /// error did not come from parsing).
    pub fn offset(&self) -> usize {
        self.offset
    }

    /// The string that failed to parse, if the error came from parsing.
    pub fn input(&self) -> Option<&str> {
        self.input.as_deref()
    }
}

impl fmt::Display for FormatError {
    /// The message only; callers that show the input add the position from
    /// [`FormatError::offset`] in their own terms (e.g. line and column).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for FormatError {}

/// A double that is NaN or infinite was given where a number is needed.
/// Fixed-point formats have no code for these, so the conversion is refused.
#[derive(Clone, Copy, Debug, PartialEq, thiserror::Error)]
#[error("cannot convert {value} to fixed point: it is not a finite number")]
pub struct NonFiniteError {
    /// The offending double.
    pub value: f64,
}

/// Why [`Format::exact_f64`] refused a double: it is not exactly one of the
/// values a lossless conversion to the format can produce.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum NotRepresentable {
    /// NaN or an infinity.
    #[error("{value} is not a finite number")]
    NonFinite {
        /// The offending double.
        value: f64,
    },
    /// The double lies outside the range of values that converting to the
    /// format leaves unchanged, `[min, max]`. `min` and `max` are exact
    /// decimals; for a signed `AP_SAT_SYM` format `min` is `-max`.
    #[error("{value} is outside the range [{min}, {max}] of {format}")]
    OutOfRange {
        /// The offending double.
        value: f64,
        /// The target format.
        format: Format,
        /// Smallest value, as an exact decimal.
        min: String,
        /// Largest value, as an exact decimal.
        max: String,
    },
    /// The double is in range but not a multiple of the format's step
    /// `2^-F`, so converting it would round.
    #[error("{value} is not a multiple of 2^{neg_frac} (the step of {format}); it would need rounding", neg_frac = -format.frac_bits())]
    NeedsRounding {
        /// The offending double.
        value: f64,
        /// The target format.
        format: Format,
    },
}

/// Why a [`super::Fixed`] could not be made or combined.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum FixedError {
    /// A raw code outside `[min_raw, max_raw]` of its format.
    #[error("raw code {raw} is outside [{min}, {max}], the codes of {format}", min = format.min_raw(), max = format.max_raw())]
    RawOutOfRange {
        /// The offending raw code.
        raw: i128,
        /// Its format.
        format: Format,
    },
    /// [`super::Fixed::add`] of two values of different formats.
    #[error("cannot add a {left} to a {right}: a sum needs both operands in the same format (cast one first)")]
    FormatMismatch {
        /// Format of the left operand.
        left: Format,
        /// Format of the right operand.
        right: Format,
    },
}
