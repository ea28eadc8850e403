//! `rtl/fptgen_counter.v` (an up counter with a synchronous clear) in
//! Verilator against its definition, written here: after an edge with rst
//! or clear the count is 0; otherwise an edge with inc adds 1 modulo 2^W
//! and one without it holds. Widths 1, 3 (so that it wraps often), 10 and
//! 32; rst, clear and inc random with different rates (runs of inc long
//! enough to wrap the narrow ones), every count compared on every cycle
//! after the first reset. Fails (does not skip) without Verilator.

use std::fmt::Write as _;

use crate::common::{require_tool, scratch, Bench, Rng};

const WIDTHS: [u32; 4] = [1, 3, 10, 32];
const CYCLES: usize = 4000;

#[test]
fn counter_counts_clears_and_wraps() {
    require_tool("verilator", "--version");
    let dir = scratch("rtl_counter");
    let names: Vec<[String; 4]> = (0..WIDTHS.len()).map(|i| ["rst", "clear", "inc", "count"].map(|n| format!("{n}{i}"))).collect();
    let ins: Vec<(&str, u32)> = names.iter().flat_map(|n| [(n[0].as_str(), 1), (n[1].as_str(), 1), (n[2].as_str(), 1)]).collect();
    let outs: Vec<(&str, u32)> = names.iter().zip(WIDTHS).map(|(n, w)| (n[3].as_str(), w)).collect();
    let mut body = String::new();
    for (i, w) in WIDTHS.iter().enumerate() {
        writeln!(body, "fptgen_counter #(.W({w})) u{i} (.clk(clk), .rst(rst{i}), .clear(clear{i}), .inc(inc{i}), .count(count{i}));").unwrap();
    }
    let mut rng = Rng(0xc0_47e5);
    let mut stim: Vec<Vec<u128>> = Vec::new();
    for t in 0..CYCLES {
        let mut row = Vec::new();
        for i in 0..WIDTHS.len() {
            // Reset first; then rare resets, occasional clears, and inc in
            // phases of mostly on and mostly off.
            let rst = t == 0 || rng.next() % 500 == 0;
            let clear = rng.next() % 97 == 0;
            let busy = (t / 300 + i) % 2 == 0;
            let inc = rng.next() % 10 < if busy { 9 } else { 2 };
            row.extend([u128::from(rst), u128::from(clear), u128::from(inc)]);
        }
        stim.push(row);
    }
    let bench = Bench { name: "counter_top", inputs: &ins, outputs: &outs, clocked: true };
    let rows = bench.run(&dir, &body, &["fptgen_counter.v"], &stim);
    assert_eq!(rows.len(), CYCLES, "one row of outputs per cycle");
    for (i, &w) in WIDTHS.iter().enumerate() {
        let modulus = 1u128 << w;
        let (mut count, mut wraps, mut clears) = (0u128, 0usize, 0usize);
        for t in 1..CYCLES {
            // The edge at the end of cycle t - 1.
            let x = &stim[t - 1][3 * i..3 * i + 3];
            if x[0] == 1 || x[1] == 1 {
                clears += usize::from(x[1] == 1 && count != 0);
                count = 0;
            } else if x[2] == 1 {
                count = (count + 1) % modulus;
                wraps += usize::from(count == 0);
            }
            let got = rows[t][i];
            assert_eq!(got, count, "W {w}, cycle {t}: count {got:#x}, expected {count:#x} (rst, clear, inc of cycle {}: {x:?})", t - 1);
        }
        assert!(clears >= 10, "W {w}: only {clears} clears of a nonzero count");
        if w <= 3 {
            assert!(wraps >= 1, "W {w}: the count never wrapped");
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}
