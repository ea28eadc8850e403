//! [`Fixed`]: a raw code together with its format.

use std::fmt;

use super::error::{FixedError, NonFiniteError};
use super::format::Format;

/// A fixed-point value: a raw code and the [`Format`] it belongs to. The
/// value is `raw * 2^-F`.
///
/// Invariant: `format.contains_raw(raw)` (checked by [`Fixed::from_raw`],
/// kept by every operation). Equality compares code *and* format, so the
/// same number in two formats is two different `Fixed`.
///
/// `Display` prints the exact value as a decimal (`-7.015625`), never in
/// exponent notation and never rounded.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Fixed {
    raw: i128,
    format: Format,
}

impl Fixed {
    /// The value with code `raw` in `format`.
    ///
    /// Errors: [`FixedError::RawOutOfRange`] if `raw` is not in
    /// `[format.min_raw(), format.max_raw()]`.
    pub fn from_raw(raw: i128, format: Format) -> Result<Fixed, FixedError> {
        if format.contains_raw(raw) {
            Ok(Fixed { raw, format })
        } else {
            Err(FixedError::RawOutOfRange { raw, format })
        }
    }

    /// `x` converted to `format` (see [`Format::quantize_f64`]).
    ///
    /// Errors: NaN and infinities.
    pub fn from_f64(x: f64, format: Format) -> Result<Fixed, NonFiniteError> {
        let raw = format.quantize_f64(x)?;
        Ok(Fixed { raw, format })
    }

    /// The raw code.
    pub fn raw(&self) -> i128 {
        self.raw
    }

    /// The format.
    pub fn format(&self) -> Format {
        self.format
    }

    /// The nearest double (see [`Format::to_f64`]).
    pub fn to_f64(&self) -> f64 {
        self.format.to_f64(self.raw)
    }

    /// The `W`-bit pattern of the code (see [`Format::bits`]).
    pub fn bits(&self) -> u64 {
        self.format.bits(self.raw)
    }

    /// `ap_fixed` assignment to a variable of format `to` (see
    /// [`Format::cast_from`]).
    pub fn cast(&self, to: Format) -> Fixed {
        Fixed {
            raw: to.cast_from(self.raw, &self.format),
            format: to,
        }
    }

    /// The exact product `self * other`, cast to `to` (see
    /// [`Format::mul_from`]). The operands may have any formats.
    pub fn mul_to(&self, other: &Fixed, to: Format) -> Fixed {
        Fixed {
            raw: to.mul_from(self.raw, &self.format, other.raw, &other.format),
            format: to,
        }
    }

    /// The sum `self + other` in their common format, after that format's
    /// overflow mode (see [`Format::add`]).
    ///
    /// Errors: [`FixedError::FormatMismatch`] if the formats differ (in any
    /// of width, integer bits, signedness or modes): cast first.
    pub fn add(&self, other: &Fixed) -> Result<Fixed, FixedError> {
        if self.format != other.format {
            return Err(FixedError::FormatMismatch {
                left: self.format,
                right: other.format,
            });
        }
        Ok(Fixed {
            raw: self.format.add(self.raw, other.raw),
            format: self.format,
        })
    }
}

impl fmt::Display for Fixed {
    /// The exact decimal value, e.g. `-7.015625`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.format.to_decimal(self.raw))
    }
}
