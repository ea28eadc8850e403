//! `rtl/fptgen_select.v` (one of N words by index) in Verilator against its
//! definition, written here: out = word sel of in (word i at bits
//! [i*W +: W]) for sel < N, and 0 for every other sel. N = 1, 3, 4 and 7
//! with selects wider than needed (so that sel >= N occurs), W = 1, 5, 16
//! and 65 (Verilator's wide words); every sel value with random words,
//! every output compared on every input. Fails (does not skip) without
//! Verilator.

use std::fmt::Write as _;

use crate::common::{require_tool, scratch, Bench, Rng};

/// (N, W, SEL_W)
const SETS: [(u32, u32, u32); 5] = [(1, 5, 1), (3, 16, 2), (4, 1, 3), (7, 65, 3), (2, 8, 4)];
const ROWS: usize = 1000;

#[test]
fn select_picks_the_word_or_zero() {
    require_tool("verilator", "--version");
    let dir = scratch("rtl_select");
    // Words wider than 128 bits in all are driven as one input per word.
    let names: Vec<(Vec<String>, String, String)> = SETS
        .iter()
        .enumerate()
        .map(|(i, &(n, _, _))| ((0..n).map(|k| format!("w{i}_{k}")).collect(), format!("sel{i}"), format!("out{i}")))
        .collect();
    let mut ins: Vec<(&str, u32)> = Vec::new();
    let mut outs: Vec<(&str, u32)> = Vec::new();
    let mut body = String::new();
    for (i, (&(n, w, sel_w), (words, sel, out))) in SETS.iter().zip(&names).enumerate() {
        ins.extend(words.iter().map(|s| (s.as_str(), w)));
        ins.push((sel.as_str(), sel_w));
        outs.push((out.as_str(), w));
        let cat: Vec<&str> = words.iter().rev().map(String::as_str).collect();
        writeln!(
            body,
            "fptgen_select #(.N({n}), .W({w}), .SEL_W({sel_w})) u{i} (.sel({sel}), .in({{{}}}), .out({out}));",
            cat.join(", ")
        )
        .unwrap();
    }
    let mut rng = Rng(0x5e1_ec7);
    let mut stim: Vec<Vec<u128>> = Vec::new();
    for t in 0..ROWS {
        let mut row = Vec::new();
        for &(n, w, sel_w) in &SETS {
            let mask = if w == 128 { u128::MAX } else { (1u128 << w) - 1 };
            row.extend((0..n).map(|_| rng.u128() & mask));
            // Every select value in turn, then random ones.
            let sel = if t < 1 << sel_w { t as u128 } else { u128::from(rng.next()) % (1u128 << sel_w) };
            row.push(sel);
        }
        stim.push(row);
    }
    let bench = Bench { name: "select_top", inputs: &ins, outputs: &outs, clocked: false };
    let rows = bench.run(&dir, &body, &["fptgen_select.v"], &stim);
    assert_eq!(rows.len(), ROWS, "one row of outputs per input");
    let mut beyond = 0usize;
    for (t, (row, x)) in rows.iter().zip(&stim).enumerate() {
        let mut at = 0;
        for (i, &(n, w, _)) in SETS.iter().enumerate() {
            let words = &x[at..at + n as usize];
            let sel = x[at + n as usize];
            at += n as usize + 1;
            let want = if sel < u128::from(n) { words[sel as usize] } else { 0 };
            beyond += usize::from(sel >= u128::from(n));
            let got = row[i];
            assert_eq!(got, want, "input {t}: N {n}, W {w}, sel {sel}: out {got:#x}, expected {want:#x}");
        }
    }
    assert!(beyond >= 100, "only {beyond} selects beyond N");
    let _ = std::fs::remove_dir_all(&dir);
}
