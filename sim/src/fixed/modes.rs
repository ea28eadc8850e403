//! The quantization (`Q`) and overflow (`O`) modes of `ap_fixed<W,I,Q,O>`.
//!
//! Only the names and their spelling live here; what each mode does to a
//! value is implemented in [`super::quantize`] and [`super::overflow`] and
//! specified in `docs/numerics.md`.

use std::fmt;

/// How an exact value is brought onto the grid of a format's least
/// significant bit (the `Q` template argument of `ap_fixed`).
///
/// Write `v` for the exact value measured in units of the target's least
/// significant bit (`v = value * 2^F`). Every mode returns an integer `q`:
///
/// | mode | `q` | ties (`v = k + 1/2`) go |
/// |---|---|---|
/// | [`Quant::Trn`] | `floor(v)` | (no special case) toward -inf |
/// | [`Quant::TrnZero`] | `trunc(v)` | (no special case) toward zero |
/// | [`Quant::Rnd`] | nearest | toward +inf |
/// | [`Quant::RndZero`] | nearest | toward zero |
/// | [`Quant::RndMinInf`] | nearest | toward -inf |
/// | [`Quant::RndInf`] | nearest | away from zero |
/// | [`Quant::RndConv`] | nearest | to the even integer |
///
/// The default of `ap_fixed` is [`Quant::Trn`]. [`fmt::Display`] prints the
/// Xilinx spelling (`AP_RND`, ...).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Quant {
    /// `AP_RND`: round to nearest, ties toward plus infinity.
    Rnd,
    /// `AP_RND_ZERO`: round to nearest, ties toward zero.
    RndZero,
    /// `AP_RND_MIN_INF`: round to nearest, ties toward minus infinity.
    RndMinInf,
    /// `AP_RND_INF`: round to nearest, ties away from zero.
    RndInf,
    /// `AP_RND_CONV`: round to nearest, ties to even (convergent rounding).
    RndConv,
    /// `AP_TRN`: truncate toward minus infinity (floor). The default.
    Trn,
    /// `AP_TRN_ZERO`: truncate toward zero.
    TrnZero,
}

/// What happens when the quantized value does not fit the format (the `O`
/// template argument of `ap_fixed`).
///
/// The default of `ap_fixed` is [`Overflow::Wrap`]. [`fmt::Display`] prints
/// the Xilinx spelling (`AP_SAT`, ...). `AP_WRAP_SM` and the fifth template
/// argument (`N` saturation bits) are not supported.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Overflow {
    /// `AP_SAT`: clamp to `[min, max]` of the format.
    Sat,
    /// `AP_SAT_ZERO`: any value outside `[min, max]` becomes 0.
    SatZero,
    /// `AP_SAT_SYM`: signed formats clamp to the symmetric range
    /// `[-max, max]` (the most negative code `-2^(W-1)` is never produced);
    /// unsigned formats behave exactly like [`Overflow::Sat`].
    SatSym,
    /// `AP_WRAP`: keep the low `W` bits (two's complement reinterpretation
    /// for signed formats). The default.
    Wrap,
}

impl Quant {
    /// Every quantization mode, in the order of the enum.
    pub const ALL: [Quant; 7] = [
        Quant::Rnd,
        Quant::RndZero,
        Quant::RndMinInf,
        Quant::RndInf,
        Quant::RndConv,
        Quant::Trn,
        Quant::TrnZero,
    ];

    /// The Xilinx spelling of the mode, e.g. `"AP_RND_CONV"`.
    pub fn name(self) -> &'static str {
        match self {
            Quant::Rnd => "AP_RND",
            Quant::RndZero => "AP_RND_ZERO",
            Quant::RndMinInf => "AP_RND_MIN_INF",
            Quant::RndInf => "AP_RND_INF",
            Quant::RndConv => "AP_RND_CONV",
            Quant::Trn => "AP_TRN",
            Quant::TrnZero => "AP_TRN_ZERO",
        }
    }

    /// The mode spelled exactly `name` (case-sensitive), if any.
    pub fn from_name(name: &str) -> Option<Quant> {
        Quant::ALL.into_iter().find(|q| q.name() == name)
    }
}

impl Overflow {
    /// Every supported overflow mode, in the order of the enum.
    pub const ALL: [Overflow; 4] = [
        Overflow::Sat,
        Overflow::SatZero,
        Overflow::SatSym,
        Overflow::Wrap,
    ];

    /// The Xilinx spelling of the mode, e.g. `"AP_SAT"`.
    pub fn name(self) -> &'static str {
        match self {
            Overflow::Sat => "AP_SAT",
            Overflow::SatZero => "AP_SAT_ZERO",
            Overflow::SatSym => "AP_SAT_SYM",
            Overflow::Wrap => "AP_WRAP",
        }
    }

    /// The mode spelled exactly `name` (case-sensitive), if any.
    /// `AP_WRAP_SM` is not supported and gives `None`.
    pub fn from_name(name: &str) -> Option<Overflow> {
        Overflow::ALL.into_iter().find(|o| o.name() == name)
    }
}

impl fmt::Display for Quant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl fmt::Display for Overflow {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
