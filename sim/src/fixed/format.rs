//! [`Format`]: the type `ap_fixed<W,I,Q,O>` / `ap_ufixed<W,I,Q,O>`, its
//! range of raw codes and its bit patterns.
//!
//! A format has `W` bits in total, `I` integer bits (including the sign bit
//! for signed formats) and `F = W - I` fractional bits. A raw code `r` (an
//! `i128` integer) stands for the value `r * 2^-F`. Conversions into a
//! format are in [`super::quantize`]; parsing and the canonical spelling are
//! in [`super::parse`].

use std::fmt;

use super::decimal;
use super::error::FormatError;
use super::modes::{Overflow, Quant};

/// A fixed-point format `ap_fixed<W,I,Q,O>` (signed, two's complement) or
/// `ap_ufixed<W,I,Q,O>` (unsigned).
///
/// Invariants (checked by [`Format::new`], the only constructor besides
/// parsing): `1 <= W <= 64` and `-1024 <= I <= 1024`. `I` may be negative
/// (all bits are fractional and the binary point lies left of the word) or
/// larger than `W` (the least significant bit weighs `2^(I-W) > 1`).
///
/// `Display` prints the canonical spelling with all four template arguments,
/// e.g. `ap_fixed<8,3,AP_RND_CONV,AP_SAT>`, which parses back to the same
/// format ([`std::str::FromStr`]; the syntaxes are listed in the docs of the
/// [`fixed`](crate::fixed) module). Serde (de)serializes
/// a format as that string.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Format {
    signed: bool,
    width: u32,
    int_bits: i32,
    quant: Quant,
    overflow: Overflow,
}

impl Format {
    /// Largest supported total width `W`.
    pub const MAX_WIDTH: u32 = 64;
    /// Smallest supported number of integer bits `I`.
    pub const MIN_INT_BITS: i32 = -1024;
    /// Largest supported number of integer bits `I`.
    pub const MAX_INT_BITS: i32 = 1024;

    /// The format `ap_fixed<width, int_bits, quant, overflow>` if `signed`,
    /// else `ap_ufixed<...>`.
    ///
    /// Errors: `width` outside `1..=64`, `int_bits` outside `-1024..=1024`.
    pub fn new(
        signed: bool,
        width: u32,
        int_bits: i32,
        quant: Quant,
        overflow: Overflow,
    ) -> Result<Format, FormatError> {
        if let Some(msg) = width_problem(i64::from(width)) {
            return Err(FormatError::invalid(msg));
        }
        if let Some(msg) = int_bits_problem(i64::from(int_bits)) {
            return Err(FormatError::invalid(msg));
        }
        Ok(Format {
            signed,
            width,
            int_bits,
            quant,
            overflow,
        })
    }

    /// True for `ap_fixed` (two's complement), false for `ap_ufixed`.
    pub fn signed(&self) -> bool {
        self.signed
    }

    /// Total width `W` in bits, `1..=64`.
    pub fn width(&self) -> u32 {
        self.width
    }

    /// Integer bits `I` (including the sign bit for signed formats).
    pub fn int_bits(&self) -> i32 {
        self.int_bits
    }

    /// Fractional bits `F = W - I` (negative when `I > W`). A raw code `r`
    /// stands for `r * 2^-F`.
    pub fn frac_bits(&self) -> i32 {
        // |W| <= 64 and |I| <= 1024: no overflow.
        self.width as i32 - self.int_bits
    }

    /// The quantization mode `Q`.
    pub fn quant(&self) -> Quant {
        self.quant
    }

    /// The overflow mode `O`.
    pub fn overflow(&self) -> Overflow {
        self.overflow
    }

    /// The same width, integer bits and signedness with other modes.
    pub fn with_modes(&self, quant: Quant, overflow: Overflow) -> Format {
        Format {
            quant,
            overflow,
            ..*self
        }
    }

    /// Smallest raw code: `-2^(W-1)` for signed formats, 0 for unsigned.
    ///
    /// This is the smallest *code* of the `W`-bit word, also for signed
    /// `AP_SAT_SYM` formats, which never produce it by a conversion but can
    /// hold it (e.g. via [`Format::from_bits`]); see
    /// [`Format::lossless_min_raw`] for the smallest value a conversion can
    /// produce.
    pub fn min_raw(&self) -> i128 {
        if self.signed {
            -(1i128 << (self.width - 1))
        } else {
            0
        }
    }

    /// Largest raw code: `2^(W-1) - 1` for signed formats, `2^W - 1` for
    /// unsigned ones.
    pub fn max_raw(&self) -> i128 {
        if self.signed {
            (1i128 << (self.width - 1)) - 1
        } else {
            (1i128 << self.width) - 1
        }
    }

    /// Smallest raw code that converting a value into this format can leave
    /// unchanged: [`Format::min_raw`], except `-max_raw` for a signed
    /// `AP_SAT_SYM` format (where the code `-2^(W-1)` is mapped to
    /// `-(2^(W-1) - 1)`). [`Format::exact_f64`] accepts exactly the values
    /// from this code to [`Format::max_raw`].
    pub fn lossless_min_raw(&self) -> i128 {
        if self.signed && self.overflow == Overflow::SatSym {
            -self.max_raw()
        } else {
            self.min_raw()
        }
    }

    /// True if `min_raw() <= raw <= max_raw()`, i.e. `raw` is one of the
    /// `2^W` codes of the format.
    pub fn contains_raw(&self, raw: i128) -> bool {
        self.min_raw() <= raw && raw <= self.max_raw()
    }

    /// The `W`-bit two's complement pattern of `raw`, in the low `W` bits
    /// of the result (the upper `64 - W` bits are 0). For codes of the
    /// format this is the hardware word; for any other `raw` it is
    /// `raw mod 2^W` (the same as an `AP_WRAP` reinterpretation).
    pub fn bits(&self, raw: i128) -> u64 {
        // Masking the two's complement i128 keeps raw mod 2^W.
        ((raw as u128) & self.mask()) as u64
    }

    /// The raw code whose `W`-bit pattern is the low `W` bits of `bits`
    /// (upper bits are ignored): sign-extended from bit `W-1` for signed
    /// formats, zero-extended for unsigned ones. Inverse of
    /// [`Format::bits`] on the codes of the format.
    pub fn from_bits(&self, bits: u64) -> i128 {
        let low = u128::from(bits) & self.mask();
        if self.signed && (low >> (self.width - 1)) & 1 == 1 {
            // Negative: subtract 2^W. low < 2^64, so this cannot overflow.
            low as i128 - (1i128 << self.width)
        } else {
            low as i128
        }
    }

    /// `2^W - 1`.
    pub(crate) fn mask(&self) -> u128 {
        (1u128 << self.width) - 1
    }

    /// The exact decimal expansion of the value `raw * 2^-F` (any `raw`, not
    /// only codes of the format), e.g. `"-7.015625"`, `"0"`, `"1024"`.
    pub fn to_decimal(&self, raw: i128) -> String {
        decimal::to_decimal(raw, i64::from(self.frac_bits()))
    }
}

/// The message for a width that is not in `1..=64`, if it is not.
pub(crate) fn width_problem(width: i64) -> Option<String> {
    if (1..=i64::from(Format::MAX_WIDTH)).contains(&width) {
        None
    } else {
        Some(format!(
            "width {width} is out of range 1..={}",
            Format::MAX_WIDTH
        ))
    }
}

/// The message for integer bits that are not in `-1024..=1024`, if they are
/// not.
pub(crate) fn int_bits_problem(int_bits: i64) -> Option<String> {
    if (i64::from(Format::MIN_INT_BITS)..=i64::from(Format::MAX_INT_BITS)).contains(&int_bits) {
        None
    } else {
        Some(format!(
            "integer bits {int_bits} is out of range {}..={}",
            Format::MIN_INT_BITS,
            Format::MAX_INT_BITS
        ))
    }
}

impl fmt::Display for Format {
    /// The canonical spelling with all four template arguments, e.g.
    /// `ap_fixed<8,3,AP_RND_CONV,AP_SAT>` or `ap_ufixed<4,0,AP_TRN,AP_WRAP>`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}<{},{},{},{}>",
            if self.signed { "ap_fixed" } else { "ap_ufixed" },
            self.width,
            self.int_bits,
            self.quant,
            self.overflow
        )
    }
}

impl serde::Serialize for Format {
    /// Serializes as the canonical string (see `Display`).
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> serde::Deserialize<'de> for Format {
    /// Deserializes from any string [`std::str::FromStr`] accepts.
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Format, D::Error> {
        let s = <String as serde::Deserialize>::deserialize(deserializer)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}
