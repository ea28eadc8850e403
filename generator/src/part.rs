//! FPGA parts fptgen knows the capacity of, for resource shares, and the
//! count of Xilinx primitives that synthesis reports ([`Resources`]).

use serde::Serialize;

/// Xilinx primitives counted, grouped as the reports show them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct Resources {
    /// LUT1..LUT6, and INV (a LUT1 unless absorbed).
    pub luts: u64,
    /// LUTs used as distributed RAM or shift registers (RAM32M16, RAM64X1D,
    /// SRL16E, ...), counted in the LUTs each primitive occupies.
    pub lutram: u64,
    /// Flip-flops (FDRE, FDSE, FDCE, FDPE).
    pub ffs: u64,
    /// Carry chains as yosys maps them (CARRY4 or CARRY8).
    pub carry: u64,
    /// DSP48E2 slices.
    pub dsps: u64,
    /// RAMB36E2 blocks.
    pub ramb36: u64,
    /// RAMB18E2 blocks.
    pub ramb18: u64,
    /// MUXF7/8/9.
    pub muxf: u64,
}

impl Resources {
    /// Block RAM in 36 Kb units (an 18 Kb block is half).
    pub fn bram36(&self) -> f64 {
        self.ramb36 as f64 + self.ramb18 as f64 / 2.0
    }

    /// Counts `n` cells of the primitive `cell` (yosys's name); false for
    /// a primitive not counted.
    pub fn add_cell(&mut self, cell: &str, n: u64) -> bool {
        if let Some(luts) = lutram_luts(cell) {
            self.lutram += luts * n;
            return true;
        }
        let slot = match cell {
            c if (c.starts_with("LUT") && c.len() == 4) || c == "INV" => &mut self.luts,
            "FDRE" | "FDSE" | "FDCE" | "FDPE" => &mut self.ffs,
            "CARRY4" | "CARRY8" => &mut self.carry,
            "DSP48E2" | "DSP48E1" => &mut self.dsps,
            "RAMB36E2" | "RAMB36E1" => &mut self.ramb36,
            "RAMB18E2" | "RAMB18E1" => &mut self.ramb18,
            "MUXF7" | "MUXF8" | "MUXF9" => &mut self.muxf,
            _ => return false,
        };
        *slot += n;
        true
    }

    /// Every count times `k`.
    pub fn scaled(&self, k: u64) -> Resources {
        Resources {
            luts: self.luts * k,
            lutram: self.lutram * k,
            ffs: self.ffs * k,
            carry: self.carry * k,
            dsps: self.dsps * k,
            ramb36: self.ramb36 * k,
            ramb18: self.ramb18 * k,
            muxf: self.muxf * k,
        }
    }

    /// The counts of both.
    pub fn plus(&self, o: &Resources) -> Resources {
        Resources {
            luts: self.luts + o.luts,
            lutram: self.lutram + o.lutram,
            ffs: self.ffs + o.ffs,
            carry: self.carry + o.carry,
            dsps: self.dsps + o.dsps,
            ramb36: self.ramb36 + o.ramb36,
            ramb18: self.ramb18 + o.ramb18,
            muxf: self.muxf + o.muxf,
        }
    }
}

/// LUTs a distributed-RAM or shift-register primitive occupies (UG574).
fn lutram_luts(cell: &str) -> Option<u64> {
    Some(match cell {
        "RAM32M16" | "RAM64M8" | "RAM256X1D" => 8,
        "RAM32M" | "RAM64M" | "RAM128X1D" | "RAM256X1S" => 4,
        "RAM32X1D" | "RAM64X1D" | "RAM128X1S" => 2,
        "RAM32X1S" | "RAM64X1S" => 1,
        c if c.starts_with("SRL") => 1,
        _ => return None,
    })
}

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

/// A Lattice ECP5 part that `fptgen implement` places and routes for, with
/// nextpnr-ecp5 and Project Trellis's timing (speed grades 6, 7, 8).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Ecp5Part {
    /// Device (`LFE5U-85F`).
    pub device: &'static str,
    /// nextpnr-ecp5's device option without its dashes (`85k`).
    pub size: &'static str,
    /// LUT4s (each logic cell's LUT), DS1044 Table 1.1.
    pub luts: u64,
    /// sysMEM block RAMs (EBR, 18 Kbit each).
    pub ebr: u64,
    /// 18 x 18 multipliers (MULT18X18D).
    pub mults: u64,
    /// Speed grade: 6, 7 or 8 (8 is the fastest).
    pub speed: u8,
    /// nextpnr-ecp5's package name (`CABGA381`).
    pub package: &'static str,
    /// The shell's pins in this package (`fptgen_io_shell`): the clock on a
    /// primary clock input, then `sin`, `sload`, `sout` (bank 0).
    pub pins: [&'static str; 4],
}

/// The ECP5 devices: (device, nextpnr size, LUT4s, EBR, MULT18X18D), from
/// Lattice DS1044 Table 1.1.
const ECP5_DEVICES: [(&str, &str, u64, u64, u64); 3] =
    [("LFE5U-25F", "25k", 24_288, 56, 28), ("LFE5U-45F", "45k", 43_848, 108, 72), ("LFE5U-85F", "85k", 83_640, 208, 156)];

/// Packages `fptgen implement` knows the pins of: (Lattice's code in the
/// part number, nextpnr's name, pins for clk, sin, sload, sout). The pins
/// are bonded in this package on all three devices, A10 is PCLKT0_1 (a
/// primary clock input) and the others are bank 0 user I/O without a
/// special function (Project Trellis's `iodb.json` of each device).
const ECP5_PACKAGES: [(&str, &str, [&str; 4]); 1] = [("BG381", "CABGA381", ["A10", "A7", "A8", "B8"])];

/// The ECP5 part named `part` (`LFE5U-85F-8BG381C`: device, speed grade,
/// package, temperature grade C or I); `Ok(None)` for a part of another
/// family, an error naming what is wrong for an ECP5 part fptgen cannot
/// target.
pub fn ecp5(part: &str) -> Result<Option<Ecp5Part>, String> {
    let upper = part.to_ascii_uppercase();
    if !upper.starts_with("LFE5") {
        return Ok(None);
    }
    let known = || ECP5_DEVICES.iter().map(|d| d.0).collect::<Vec<_>>().join(", ");
    let Some(&(device, size, luts, ebr, mults)) = ECP5_DEVICES.iter().find(|d| upper.starts_with(&format!("{}-", d.0))) else {
        return Err(format!("part {part}: fptgen knows the ECP5 devices {} (for example LFE5U-85F-8BG381C)", known()));
    };
    let rest = &upper[device.len() + 1..];
    let speed = match rest.chars().next() {
        Some(c @ '6'..='8') => c as u8 - b'0',
        _ => return Err(format!("part {part}: the speed grade after {device}- must be 6, 7 or 8 (for example {device}-8BG381C)")),
    };
    let code = rest[1..].trim_end_matches(['C', 'I']);
    let Some(&(_, package, pins)) = ECP5_PACKAGES.iter().find(|p| p.0 == code) else {
        let codes = ECP5_PACKAGES.iter().map(|p| p.0).collect::<Vec<_>>().join(", ");
        return Err(format!("part {part}: package {code} is not one fptgen knows the pins of ({codes}; for example {device}-{speed}BG381C)"));
    };
    Ok(Some(Ecp5Part { device, size, luts, ebr, mults, speed, package, pins }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ecp5_part_numbers_are_read() {
        let p = ecp5("LFE5U-85F-8BG381C").unwrap().unwrap();
        assert_eq!((p.device, p.size, p.speed, p.package, p.mults, p.ebr), ("LFE5U-85F", "85k", 8, "CABGA381", 156, 208));
        let p = ecp5("lfe5u-25f-6bg381i").unwrap().unwrap();
        assert_eq!((p.device, p.speed, p.luts), ("LFE5U-25F", 6, 24_288));
        assert_eq!(ecp5("xcku035-fbva676-3-e"), Ok(None));
        assert!(ecp5("LFE5U-65F-8BG381C").unwrap_err().contains("LFE5U-25F, LFE5U-45F, LFE5U-85F"));
        assert!(ecp5("LFE5U-85F-9BG381C").unwrap_err().contains("speed grade"));
        assert!(ecp5("LFE5U-85F-8BG756C").unwrap_err().contains("package BG756"));
    }
}
