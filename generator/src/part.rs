//! FPGA parts fptgen knows the capacity of, for resource shares.

use serde::Serialize;

/// The resources of one FPGA part.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Part {
    /// Device name (any package and speed grade of it matches).
    pub device: &'static str,
    /// 6-input LUTs.
    pub luts: u64,
    /// Flip-flops.
    pub ffs: u64,
    /// DSP48E2 slices.
    pub dsps: u64,
    /// 36 Kb block RAMs (each is two 18 Kb halves).
    pub bram36: u64,
    /// CARRY8 primitives (one per eight LUTs).
    pub carry8: u64,
}

/// Kintex UltraScale KU035 (seed 003's xcku035-fbva676-3-e): DS890 Table 1.
pub const XCKU035: Part =
    Part { device: "xcku035", luts: 203_128, ffs: 406_256, dsps: 1_700, bram36: 540, carry8: 203_128 / 8 };

/// The capacity of `part` (e.g. "xcku035-fbva676-3-e"), if fptgen knows it.
pub fn lookup(part: &str) -> Option<Part> {
    let device = part.split('-').next().unwrap_or(part).to_ascii_lowercase();
    [XCKU035].into_iter().find(|p| p.device == device)
}
