//! `rtl/fptgen_io_shell.v`, the shell `fptgen implement` places a design in
//! for a real package, in Verilator against a model written here from its
//! definition: the inputs are a serial shift register (`sin` enters at bit
//! 0), the outputs a parallel-load shift register (`sload` loads the
//! design's outputs, otherwise they shift towards bit 0, which is `sout`),
//! both starting at zero. Three instances (1 x 1, 5 x 3 and 33 x 64 bits),
//! 2,000 cycles of random `sin`, `sload` and design outputs; every
//! `core_in` bit and `sout` compared on every cycle. Fails (does not skip)
//! without Verilator.

use std::fmt::Write as _;
use std::fs;

use crate::common::{mask, require_tool, scratch, verilate_and_run, Rng};

const CYCLES: usize = 2000;
const SHAPES: [(u32, u32); 3] = [(1, 1), (5, 3), (33, 64)];

/// The shell's state: (inputs, capture register).
#[derive(Clone, Copy, Default)]
struct Shell {
    core_in: u64,
    cap: u64,
}

impl Shell {
    /// One rising edge with `sin`, `sload` and the design's outputs `out`.
    fn edge(&mut self, in_w: u32, out_w: u32, sin: bool, sload: bool, out: u64) {
        self.core_in = ((self.core_in << 1) | u64::from(sin)) & mask(in_w);
        self.cap = if sload { out & mask(out_w) } else { self.cap >> 1 };
    }
}

#[test]
fn io_shell_shifts_inputs_in_and_outputs_out() {
    require_tool("verilator", "--version");
    let dir = scratch("rtl_io_shell");
    let mut v = String::from("`timescale 1ns / 1ps\n`default_nettype none\nmodule shell_top (\n    input wire clk");
    for (i, (iw, ow)) in SHAPES.iter().enumerate() {
        write!(v, ",\n    input wire sin{i},\n    input wire sload{i},\n    output wire sout{i},\n    output wire [{}:0] core_in{i},\n    input wire [{}:0] core_out{i}", iw - 1, ow - 1).unwrap();
    }
    v += "\n);\n";
    for (i, (iw, ow)) in SHAPES.iter().enumerate() {
        writeln!(
            v,
            "fptgen_io_shell #(.IN_W({iw}), .OUT_W({ow})) u{i} (.clk(clk), .sin(sin{i}), .sload(sload{i}), .sout(sout{i}), .core_in(core_in{i}), .core_out(core_out{i}));"
        )
        .unwrap();
    }
    v += "endmodule\n`default_nettype wire\n";
    fs::write(dir.join("shell_top.v"), v).unwrap();

    // The stimulus, drawn here and written into the C++ bench as tables.
    let mut rng = Rng(0x696f_7368_656c_6c01);
    let stim: Vec<Vec<(bool, bool, u64)>> = SHAPES
        .iter()
        .map(|&(_, ow)| (0..CYCLES).map(|_| (rng.coin(), rng.chance(20), rng.next() & mask(ow))).collect())
        .collect();
    let mut c = String::from("#include \"Vshell_top.h\"\n#include \"verilated.h\"\n#include <cstdio>\n#include <cstdint>\n");
    for (i, s) in stim.iter().enumerate() {
        write!(c, "static const uint8_t sin{i}[] = {{").unwrap();
        c += &s.iter().map(|x| u8::from(x.0).to_string()).collect::<Vec<_>>().join(",");
        write!(c, "}};\nstatic const uint8_t sload{i}[] = {{").unwrap();
        c += &s.iter().map(|x| u8::from(x.1).to_string()).collect::<Vec<_>>().join(",");
        write!(c, "}};\nstatic const uint64_t out{i}[] = {{").unwrap();
        c += &s.iter().map(|x| format!("0x{:x}ULL", x.2)).collect::<Vec<_>>().join(",");
        c += "};\n";
    }
    write!(c, "int main(int argc, char** argv) {{\n    VerilatedContext ctx; ctx.commandArgs(argc, argv);\n    Vshell_top top(&ctx);\n    top.clk = 0;\n    for (int t = 0; t < {CYCLES}; ++t) {{\n").unwrap();
    for i in 0..SHAPES.len() {
        writeln!(c, "        top.sin{i} = sin{i}[t]; top.sload{i} = sload{i}[t]; top.core_out{i} = out{i}[t];").unwrap();
    }
    c += "        top.eval();\n        std::printf(\"%d";
    for _ in SHAPES {
        c += " %llx %d";
    }
    c += "\\n\", t";
    for i in 0..SHAPES.len() {
        write!(c, ", (unsigned long long)top.core_in{i}, (int)top.sout{i}").unwrap();
    }
    c += ");\n        top.clk = 1; top.eval(); top.clk = 0; top.eval();\n    }\n    return 0;\n}\n";
    fs::write(dir.join("main.cpp"), c).unwrap();
    let out = verilate_and_run(&dir, "shell_top", &["fptgen_io_shell.v"]);

    let mut model = [Shell::default(); SHAPES.len()];
    let mut lines = 0;
    for (t, line) in out.lines().enumerate() {
        let f: Vec<&str> = line.split_whitespace().collect();
        assert_eq!(f.len(), 1 + 2 * SHAPES.len(), "line {t}: {line}");
        for (i, &(iw, ow)) in SHAPES.iter().enumerate() {
            let core_in = u64::from_str_radix(f[1 + 2 * i], 16).unwrap();
            let sout = f[2 + 2 * i] == "1";
            let m = &mut model[i];
            if let Some(b) = (0..iw).find(|&b| (core_in >> b) & 1 != (m.core_in >> b) & 1) {
                panic!("cycle {t}, IN_W {iw}: core_in bit {b} is {}, the model says {}", (core_in >> b) & 1, (m.core_in >> b) & 1);
            }
            assert_eq!(sout, m.cap & 1 == 1, "cycle {t}, OUT_W {ow}: sout");
            let (sin, sload, o) = stim[i][t];
            m.edge(iw, ow, sin, sload, o);
        }
        lines += 1;
    }
    assert_eq!(lines, CYCLES, "cycles simulated");
    fs::remove_dir_all(&dir).ok();
}
