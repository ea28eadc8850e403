//! `rtl/fptgen_param_mem.v` in Verilator against a model written here from
//! its definition (the module's header), not from the RTL: `DEPTH` words of
//! `COLS` columns; a read port that shows, after an edge with `rd_en`, the
//! word addressed on that edge; a trainer port that, on an edge with
//! `tr_en`, reads one column as it was before the edge (read-first) and, with
//! `tr_we`, writes it; the contents start as the `$readmemh` image.
//!
//! One memory (`BANK_COLS` 0) and banks (`BANK_COLS` 1, 2, 3 and `COLS`:
//! banks of one column, an uneven last bank, one bank) in one build, with
//! writable and read-only memories, columns of 4, 12 and 32 bits, and the
//! block and distributed styles (which read the trainer's column
//! differently); 600
//! cycles of seeded random reads and writes (often to the word being read,
//! and the same word on both ports). Every output is compared on every
//! cycle, and at the end the simulation-only dump (`copy` of the memory or
//! of every bank, then `write_final`) must write the model's contents.
//! With banks the test writes each bank's image itself
//! (`<INIT_FILE>.bank<bbbb>.hex`, the bank's columns of every word). Fails
//! (never skips) without Verilator.

use std::fmt::Write as _;
use std::fs;
use std::path::Path;
use std::process::Command;

use crate::common::{quick_build, require_tool, rtl_dir, rtl_include, run, scratch, Rng};

/// One instance: DEPTH, COLS, COL_W, BANK_COLS, WRITABLE, STYLE.
#[derive(Clone, Copy, Debug)]
struct Mem {
    depth: usize,
    cols: usize,
    col_w: usize,
    bank_cols: usize,
    writable: bool,
    style: &'static str,
}

const MEMS: [Mem; 13] = [
    Mem { depth: 5, cols: 7, col_w: 4, bank_cols: 0, writable: true, style: "block" },
    Mem { depth: 5, cols: 7, col_w: 4, bank_cols: 3, writable: true, style: "block" },
    Mem { depth: 5, cols: 7, col_w: 4, bank_cols: 1, writable: true, style: "block" },
    Mem { depth: 5, cols: 7, col_w: 4, bank_cols: 7, writable: true, style: "block" },
    Mem { depth: 3, cols: 5, col_w: 12, bank_cols: 2, writable: true, style: "block" },
    Mem { depth: 6, cols: 2, col_w: 32, bank_cols: 1, writable: true, style: "block" },
    Mem { depth: 4, cols: 5, col_w: 12, bank_cols: 2, writable: false, style: "block" },
    Mem { depth: 1, cols: 3, col_w: 4, bank_cols: 2, writable: true, style: "block" },
    // LUTRAM: the trainer read's column is selected before the register
    Mem { depth: 5, cols: 7, col_w: 4, bank_cols: 0, writable: true, style: "distributed" },
    Mem { depth: 5, cols: 7, col_w: 4, bank_cols: 3, writable: true, style: "distributed" },
    Mem { depth: 6, cols: 2, col_w: 32, bank_cols: 1, writable: true, style: "distributed" },
    Mem { depth: 4, cols: 5, col_w: 12, bank_cols: 2, writable: false, style: "distributed" },
    Mem { depth: 1, cols: 3, col_w: 4, bank_cols: 2, writable: true, style: "distributed" },
];
const CYCLES: usize = 600;

fn clog2(n: usize) -> usize {
    (usize::BITS - (n.max(2) - 1).leading_zeros()) as usize
}

impl Mem {
    fn word_w(&self) -> usize {
        self.cols * self.col_w
    }
    fn mask(&self) -> u64 {
        if self.col_w == 64 { u64::MAX } else { (1u64 << self.col_w) - 1 }
    }
    /// The word's bits from its columns, column 0 lowest.
    fn pack(&self, cols: &[u64]) -> u64 {
        cols.iter().enumerate().fold(0, |w, (c, &v)| w | (v << (c * self.col_w)))
    }
    /// Bank b's columns.
    fn bank(&self, b: usize) -> std::ops::Range<usize> {
        if self.bank_cols == 0 { 0..self.cols } else { b * self.bank_cols..((b + 1) * self.bank_cols).min(self.cols) }
    }
    fn banks(&self) -> usize {
        if self.bank_cols == 0 { 1 } else { self.cols.div_ceil(self.bank_cols) }
    }
}

/// Hex lines of the given columns of every word (column 0 lowest).
fn image(m: &Mem, contents: &[Vec<u64>], cols: std::ops::Range<usize>) -> String {
    let digits = ((cols.len() * m.col_w) + 3) / 4;
    contents
        .iter()
        .map(|w| {
            let bits = cols.clone().enumerate().fold(0u128, |a, (k, c)| a | (u128::from(w[c]) << (k * m.col_w)));
            format!("{bits:0digits$x}\n")
        })
        .collect()
}

/// Per cycle and instance: rd_en, rd_addr, tr_en, tr_we, tr_addr, tr_col, tr_wdata.
type Step = (bool, usize, bool, bool, usize, usize, u64);

#[test]
fn param_mem_matches_its_model_with_and_without_banks() {
    require_tool("verilator", "--version");
    let dir = scratch("rtl_param_mem");
    fs::create_dir_all(dir.join("sim/run")).expect("sim/run");
    let mut rng = Rng(0x7061_7261_6d5f_6d65);

    // Initial contents, images, and the stimulus.
    let mut init = Vec::new();
    for (i, m) in MEMS.iter().enumerate() {
        let contents: Vec<Vec<u64>> = (0..m.depth).map(|_| (0..m.cols).map(|_| rng.next() & m.mask()).collect()).collect();
        fs::write(dir.join(format!("m{i}.hex")), image(m, &contents, 0..m.cols)).expect("image");
        if m.bank_cols > 0 {
            for b in 0..m.banks() {
                fs::write(dir.join(format!("m{i}.hex.bank{b:04}.hex")), image(m, &contents, m.bank(b))).expect("bank image");
            }
        }
        init.push(contents);
    }
    let steps: Vec<Vec<Step>> = (0..CYCLES)
        .map(|_| {
            MEMS.iter()
                .map(|m| {
                    let rd_addr = rng.next() as usize % m.depth;
                    // Often the word the read port reads.
                    let tr_addr = if rng.chance(40) { rd_addr } else { rng.next() as usize % m.depth };
                    (rng.chance(70), rd_addr, rng.chance(70), rng.chance(60), tr_addr, rng.next() as usize % m.cols, rng.next() & m.mask())
                })
                .collect()
        })
        .collect();

    // The top: one instance per memory; the dump on `dump`.
    let mut top = String::from("`timescale 1ns / 1ps\n`default_nettype none\nmodule pm_top (\n    input wire clk,\n    input wire dump");
    let mut body = String::new();
    let mut dump = String::new();
    for (i, m) in MEMS.iter().enumerate() {
        let (aw, cw) = (clog2(m.depth), clog2(m.cols));
        write!(
            top,
            ",\n    input wire rd_en{i}, input wire [{}:0] rd_addr{i}, output wire [{}:0] rd_data{i},\n    \
             input wire tr_en{i}, input wire tr_we{i}, input wire [{}:0] tr_addr{i}, input wire [{}:0] tr_col{i},\n    \
             input wire [{}:0] tr_wdata{i}, output wire [{}:0] tr_rdata{i}",
            aw - 1,
            m.word_w() - 1,
            aw - 1,
            cw - 1,
            m.col_w - 1,
            m.col_w - 1
        )
        .unwrap();
        write!(
            body,
            "fptgen_param_mem #(.DEPTH({}), .COLS({}), .COL_W({}), .WRITABLE({}), .STYLE(\"{}\"), .INIT_FILE(\"m{i}.hex\"), .BANK_COLS({})) u{i} (\n    \
             .clk(clk), .rd_en(rd_en{i}), .rd_addr(rd_addr{i}), .rd_data(rd_data{i}),\n    \
             .tr_en(tr_en{i}), .tr_we(tr_we{i}), .tr_addr(tr_addr{i}), .tr_col(tr_col{i}), .tr_wdata(tr_wdata{i}), .tr_rdata(tr_rdata{i})\n);\n",
            m.depth,
            m.cols,
            m.col_w,
            u8::from(m.writable),
            m.style,
            m.bank_cols
        )
        .unwrap();
        for b in 0..m.banks() {
            writeln!(dump, "        u{i}.g_bank[{b}].copy;").unwrap();
        }
        writeln!(dump, "        u{i}.write_final;").unwrap();
    }
    top += "\n);\n";
    top += &body;
    write!(top, "always @(posedge clk) begin\n    if (dump) begin\n{dump}    end\nend\nendmodule\n").unwrap();
    fs::write(dir.join("pm_top.v"), top).expect("top");

    // The driver: inputs before each rising edge, outputs after it.
    let mut cpp = String::from("#include \"Vpm_top.h\"\n#include <cstdio>\nint main() {\n    Vpm_top* t = new Vpm_top;\n    t->clk = 0; t->dump = 0; t->eval();\n");
    for (c, step) in steps.iter().enumerate() {
        for (i, &(rd_en, rd_addr, tr_en, tr_we, tr_addr, tr_col, wdata)) in step.iter().enumerate() {
            write!(
                cpp,
                "    t->rd_en{i} = {}; t->rd_addr{i} = {rd_addr}; t->tr_en{i} = {}; t->tr_we{i} = {}; t->tr_addr{i} = {tr_addr}; t->tr_col{i} = {tr_col}; t->tr_wdata{i} = {wdata}ULL;\n",
                u8::from(rd_en),
                u8::from(tr_en),
                u8::from(tr_we)
            )
            .unwrap();
        }
        write!(cpp, "    t->eval(); t->clk = 1; t->eval();\n    printf(\"{c}").unwrap();
        cpp += &" %llx %llx".repeat(MEMS.len());
        cpp += "\\n\"";
        for i in 0..MEMS.len() {
            write!(cpp, ", (unsigned long long)t->rd_data{i}, (unsigned long long)t->tr_rdata{i}").unwrap();
        }
        cpp += ");\n    t->clk = 0; t->eval();\n";
    }
    cpp += "    t->dump = 1; t->eval(); t->clk = 1; t->eval(); t->clk = 0; t->dump = 0; t->eval();\n    t->final(); delete t;\n    return 0;\n}\n";
    fs::write(dir.join("main.cpp"), cpp).expect("main.cpp");
    let stdout = verilate_with_dump_and_run(&dir);

    // The model, edge by edge.
    let mut mem = init.clone();
    let mut rd_reg = vec![0u64; MEMS.len()];
    let mut tr_reg = vec![0u64; MEMS.len()];
    let mut lines = stdout.lines();
    for (c, step) in steps.iter().enumerate() {
        for (i, (m, &(rd_en, rd_addr, tr_en, tr_we, tr_addr, tr_col, wdata))) in MEMS.iter().zip(step).enumerate() {
            if rd_en {
                rd_reg[i] = m.pack(&mem[i][rd_addr]);
            }
            if m.writable && tr_en {
                tr_reg[i] = mem[i][tr_addr][tr_col];
                if tr_we {
                    mem[i][tr_addr][tr_col] = wdata;
                }
            }
        }
        let line = lines.next().unwrap_or_else(|| panic!("cycle {c}: no output line"));
        let f: Vec<&str> = line.split_whitespace().collect();
        assert_eq!(f[0], c.to_string(), "cycle numbering");
        for (i, m) in MEMS.iter().enumerate() {
            let rd = u64::from_str_radix(f[1 + 2 * i], 16).expect("hex");
            let tr = u64::from_str_radix(f[2 + 2 * i], 16).expect("hex");
            assert_eq!(rd, rd_reg[i], "cycle {c}, instance u{i} {m:?}: rd_data differs");
            assert_eq!(tr, tr_reg[i], "cycle {c}, instance u{i} {m:?}: tr_rdata differs");
        }
    }
    // The dump: the model's contents, whole words.
    for (i, m) in MEMS.iter().enumerate() {
        let got = fs::read_to_string(dir.join(format!("sim/run/m{i}.hex.final"))).expect("final dump");
        let want = image(m, &mem[i], 0..m.cols);
        for (w, (g, e)) in got.lines().zip(want.lines()).enumerate() {
            assert_eq!(g, e, "instance u{i} {m:?}: the final dump's word {w} differs");
        }
        assert_eq!(got.lines().count(), m.depth, "instance u{i}: words in the final dump");
    }
    fs::remove_dir_all(&dir).ok();
}

/// Builds `pm_top.v` with the memory and `main.cpp` (`verilator -Wall`,
/// warnings fatal) with FPTGEN_DUMP_FINAL defined, as the training
/// co-simulation builds, runs it in `dir` and returns its stdout.
fn verilate_with_dump_and_run(dir: &Path) -> String {
    let lib = rtl_dir();
    run(
        Command::new("verilator")
            .args(["--cc", "--exe", "--build", "-Wall", "-Wno-DECLFILENAME", "-DFPTGEN_DUMP_FINAL", "-j", "2", "--top-module", "pm_top", "-Mdir", "obj", "-o", "vsim"])
            .args(quick_build())
            .arg(rtl_include())
            .arg("pm_top.v")
            .arg(lib.join("fptgen_param_mem.v"))
            .arg(dir.join("main.cpp")),
        "verilator build",
        dir,
    );
    run(&mut Command::new(dir.join("obj/vsim")), "simulation", dir)
}
