//! `rtl/fptgen_lfsr.v` in Verilator against the LFSR of docs/training.md:
//! every value of every instance (widths 8, 16, 32; 1 to WIDTH bits per
//! value; several seeds) over a few thousand cycles with `next` toggled
//! irregularly, compared bit for bit. Fails (does not skip) without Verilator.

use std::fmt::Write as _;
use std::fs;

use crate::common::{require_tool, scratch, verilate_and_run};

/// The reference: a Galois LFSR that shifts right (docs/training.md).
struct Lfsr {
    state: u64,
    taps: u64,
}

impl Lfsr {
    fn new(width: u32, seed: u64) -> Lfsr {
        let taps = match width {
            8 => 0xB8,
            16 => 0xB400,
            _ => 0xA300_0000,
        };
        Lfsr { state: seed, taps }
    }

    fn step(&mut self) -> u64 {
        let o = self.state & 1;
        self.state >>= 1;
        if o == 1 {
            self.state ^= self.taps;
        }
        o
    }

    /// The next `bits` output bits, first in the least significant position.
    fn value(&mut self, bits: u32) -> u64 {
        (0..bits).fold(0, |v, k| v | (self.step() << k))
    }
}

const CYCLES: usize = 3000;

#[test]
fn lfsr_matches_the_reference() {
    require_tool("verilator", "--version");
    let sets: Vec<(u32, u64, u32)> = vec![
        (8, 1, 1),
        (8, 0xA5, 3),
        (8, 0x80, 8),
        (16, 0xACE1, 1),
        (16, 1, 4),
        (16, 0xFFFF, 16),
        (32, 1, 1),
        (32, 0xDEAD_BEEF, 5),
        (32, 0x8000_0000, 32),
    ];
    let dir = scratch("rtl_lfsr");
    let mut v = String::from("`timescale 1ns / 1ps\n`default_nettype none\nmodule lfsr_top (\n    input wire clk,\n    input wire rst,\n    input wire next");
    for (i, (_, _, bits)) in sets.iter().enumerate() {
        write!(v, ",\n    output wire [{}:0] v{i}", bits - 1).unwrap();
    }
    v += "\n);\n";
    for (i, (w, seed, bits)) in sets.iter().enumerate() {
        writeln!(v, "fptgen_lfsr #(.WIDTH({w}), .SEED({w}'h{seed:x}), .BITS({bits})) u{i} (.clk(clk), .rst(rst), .next(next), .value(v{i}));").unwrap();
    }
    v += "endmodule\n`default_nettype wire\n";
    fs::write(dir.join("lfsr_top.v"), v).unwrap();
    let mut c = String::from("#include \"Vlfsr_top.h\"\n#include \"verilated.h\"\n#include <cstdio>\nint main(int argc, char** argv) {\n    VerilatedContext ctx; ctx.commandArgs(argc, argv);\n    Vlfsr_top top(&ctx);\n    top.clk = 0; top.rst = 1; top.next = 0; top.eval(); top.clk = 1; top.eval(); top.clk = 0; top.rst = 0; top.eval();\n");
    write!(c, "    for (int t = 0; t < {CYCLES}; ++t) {{\n        top.next = ((t * 7) % 5) < 3;\n        top.eval();\n        std::printf(\"%d").unwrap();
    for _ in &sets {
        c += " %llx";
    }
    c += "\\n\", (int)top.next";
    for i in 0..sets.len() {
        write!(c, ", (unsigned long long)top.v{i}").unwrap();
    }
    c += ");\n        top.clk = 1; top.eval(); top.clk = 0; top.eval();\n    }\n    return 0;\n}\n";
    fs::write(dir.join("main.cpp"), c).unwrap();
    let out = verilate_and_run(&dir, "lfsr_top", &["fptgen_lfsr.v"]);
    let mut refs: Vec<Lfsr> = sets.iter().map(|&(w, s, _)| Lfsr::new(w, s)).collect();
    let mut lines = 0;
    for (t, line) in out.lines().enumerate() {
        let f: Vec<&str> = line.split_whitespace().collect();
        let next = f[0] == "1";
        for (i, (w, seed, bits)) in sets.iter().enumerate() {
            // `value` shows the bits of the next BITS steps without taking them.
            let mut peek = Lfsr { state: refs[i].state, taps: refs[i].taps };
            let want = peek.value(*bits);
            let got = u64::from_str_radix(f[i + 1], 16).unwrap();
            assert_eq!(got, want, "cycle {t}: WIDTH {w} SEED {seed:#x} BITS {bits}: value {got:#x}, reference {want:#x}");
            if next {
                refs[i].value(*bits);
            }
        }
        lines += 1;
    }
    assert_eq!(lines, CYCLES);
    let _ = fs::remove_dir_all(&dir);
}
