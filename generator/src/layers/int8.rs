//! What the two int8 kinds' hardware shares (issue 15; docs/numerics.md,
//! "Int8 requantization"): the requantizer's parameters
//! (`rtl/fptgen_requant_vec.v`: rounding, output zero point, clamp, and per
//! lane a multiplier and a shift, constants of the design) and the input
//! offset `x - z_in`.

use fptgen_sim::fixed::{Format, Overflow, Quant};
use fptgen_sim::int8::{QuantizedMultiplier, Rounding};
use serde::Serialize;

use crate::plan::HwFormat;

/// Pipeline stages of `fptgen_requant_vec`.
pub const REQUANT_STAGES: usize = 6;

/// The parameters of one `fptgen_requant_vec` instance.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RequantPlan {
    /// Lanes: values per beat.
    pub lanes: usize,
    /// 0: single rounding, 1: double rounding (the RTL's `ROUNDING`).
    pub rounding: u32,
    /// The rounding's name, for comments.
    pub rounding_name: &'static str,
    /// The input zero point `z_in`, subtracted from every input code.
    pub z_in: i32,
    /// The output zero point.
    pub out_zp: i32,
    /// The activation clamp, as output codes.
    pub act_min: i32,
    /// See `act_min`.
    pub act_max: i32,
    /// `MULTS`: every lane's 31-bit multiplier, lane 0 lowest, as a Verilog
    /// concatenation.
    pub mults: String,
    /// `SHIFTS`: every lane's 6-bit two's complement shift, likewise.
    pub shifts: String,
    /// Every lane's multiplier and shift, for the header comment
    /// (`M 1234567890 >> 7`), or one line when all lanes share them.
    pub summary: String,
}

impl RequantPlan {
    /// The requantizer of `lanes` values, lane `k` with `multiplier(k)`.
    pub fn new(
        lanes: usize,
        rounding: Rounding,
        z_in: i32,
        (out_zp, act_min, act_max): (i32, i32, i32),
        multiplier: impl Fn(usize) -> QuantizedMultiplier,
    ) -> RequantPlan {
        let ms: Vec<QuantizedMultiplier> = (0..lanes).map(multiplier).collect();
        // Lane N-1 first: the concatenation's most significant part.
        let mults: Vec<String> = ms.iter().rev().map(|m| format!("31'd{}", m.multiplier())).collect();
        let shifts: Vec<String> = ms.iter().rev().map(|m| format!("6'h{:02x}", (m.shift() as u32) & 63)).collect();
        let describe = |m: &QuantizedMultiplier| format!("multiplier {} shift {}", m.multiplier(), m.shift());
        let summary = if ms.windows(2).all(|w| w[0] == w[1]) {
            format!("every lane: {}", ms.first().map(describe).unwrap_or_default())
        } else {
            ms.iter().enumerate().map(|(k, m)| format!("lane {k}: {}", describe(m))).collect::<Vec<_>>().join("; ")
        };
        RequantPlan {
            lanes,
            rounding: u32::from(rounding == Rounding::Double),
            rounding_name: if rounding == Rounding::Double { "double" } else { "single" },
            z_in,
            out_zp,
            act_min,
            act_max,
            mults: format!("{{{}}}", mults.join(", ")),
            shifts: format!("{{{}}}", shifts.join(", ")),
            summary,
        }
    }

    /// `z_in` as a `w`-bit two's complement Verilog constant (`w` 9 to 32:
    /// `x - z_in` of int8 codes is in `-255..=255`, so 9 bits hold it).
    pub fn z_in_bits(&self, w: &usize) -> String {
        let w = (*w).clamp(9, 32);
        format!("{w}'h{:x}", (self.z_in as u32) & (u32::MAX >> (32 - w)))
    }
}

/// `ap_fixed<9,9,AP_TRN,AP_WRAP>`: an int8 code minus a zero point.
pub fn offset_format() -> HwFormat {
    offset_fixed().into()
}

/// [`offset_format`] as the simulator's format.
pub fn offset_fixed() -> Format {
    Format::new(true, 9, 9, Quant::Trn, Overflow::Wrap).expect("a valid format")
}

/// `ap_fixed<32,32,AP_TRN,AP_WRAP>`: TFLite's int32 accumulator.
pub fn int32_format() -> Format {
    Format::new(true, 32, 32, Quant::Trn, Overflow::Wrap).expect("a valid format")
}
