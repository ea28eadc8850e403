//! `rtl/fptgen_reg.v` (a register stage without reset) in Verilator against
//! its definition, written here: q in cycle t is d of cycle t - 1. Widths
//! 1, 7, 41 (the ES trainer's Q(s) stage), 64 and 65 (Verilator's wide
//! words), random values every cycle; q is compared from cycle 1 on (it
//! holds nothing defined before the first edge). Fails (does not skip)
//! without Verilator.

use std::fmt::Write as _;

use crate::common::{require_tool, scratch, Bench, Rng};

const WIDTHS: [u32; 5] = [1, 7, 41, 64, 65];
const CYCLES: usize = 2000;

#[test]
fn reg_delays_by_one_cycle() {
    require_tool("verilator", "--version");
    let dir = scratch("rtl_reg");
    let names: Vec<[String; 2]> = (0..WIDTHS.len()).map(|i| [format!("d{i}"), format!("q{i}")]).collect();
    let ins: Vec<(&str, u32)> = names.iter().zip(WIDTHS).map(|(n, w)| (n[0].as_str(), w)).collect();
    let outs: Vec<(&str, u32)> = names.iter().zip(WIDTHS).map(|(n, w)| (n[1].as_str(), w)).collect();
    let mut body = String::new();
    for (i, w) in WIDTHS.iter().enumerate() {
        writeln!(body, "fptgen_reg #(.W({w})) u{i} (.clk(clk), .d(d{i}), .q(q{i}));").unwrap();
    }
    let mut rng = Rng(0x4e6_5eed);
    let stim: Vec<Vec<u128>> =
        (0..CYCLES).map(|_| WIDTHS.iter().map(|&w| rng.u128() & ((1u128 << w) - 1)).collect()).collect();
    let bench = Bench { name: "reg_top", inputs: &ins, outputs: &outs, clocked: true };
    let rows = bench.run(&dir, &body, &["fptgen_reg.v"], &stim);
    assert_eq!(rows.len(), CYCLES, "one row of outputs per cycle");
    for t in 1..CYCLES {
        for (i, &w) in WIDTHS.iter().enumerate() {
            let (got, want) = (rows[t][i], stim[t - 1][i]);
            assert_eq!(got, want, "W {w}, cycle {t}: q {got:#x}, expected {want:#x} (d of cycle {})", t - 1);
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}
