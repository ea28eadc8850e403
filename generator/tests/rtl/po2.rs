//! `rtl/fptgen_po2.v` (the ES trainer's power-of-two quantization of the
//! fitness signal) in Verilator against Q of docs/training.md ("One
//! group"), written here: for a signed S_W-bit s, zero = (s == 0),
//! neg = (s < 0), exp = floor(log2 |s|) (0 for s = 0) in clog2(S_W) bits,
//! onehot = 2^exp (0 for s = 0), |s| = 2^(S_W-1) for the most negative s.
//! Widths 2, 3, 5 and 12 (every value of s), 33 (the trainer's), 64 and 65
//! (Verilator's wide words): corners (0, +-1, the extremes, every +-2^k and
//! +-(2^k - 1), +-(2^k + 1)) and random values of every magnitude, every
//! output compared on every input; the full tier adds every width from 2
//! to 65, every value up to 16 bits. Fails (does not skip) without
//! Verilator.

use std::fmt::Write as _;

use crate::common::{bits_for, code, require_tool, scratch, signed, Bench, Rng};

/// Signal widths: the smallest legal, odd ones, the trainer's 33 and wide.
const WIDTHS: [u32; 7] = [2, 3, 5, 12, 33, 64, 65];

/// The reference: [zero, neg, exp, onehot] of the S_W-bit code `x`.
fn q(x: u128, w: u32) -> [u128; 4] {
    let s = signed(x, w);
    if s == 0 {
        return [1, 0, 0, 0];
    }
    let exp = 127 - s.unsigned_abs().leading_zeros();
    [0, u128::from(s < 0), u128::from(exp), 1u128 << exp]
}

/// `rows` inputs of width `w`: every value when they fit, else the
/// corners, then random values of random magnitude.
fn inputs(w: u32, rows: usize, rng: &mut Rng) -> Vec<u128> {
    if w < 32 && 1usize << w <= rows {
        return (0..rows as u128).map(|x| x % (1u128 << w)).collect();
    }
    let mut v: Vec<u128> = vec![0, 1, code(-1, w), 1u128 << (w - 1), (1u128 << (w - 1)) - 1, (1u128 << (w - 1)) + 1];
    for k in 0..w - 1 {
        for d in [-1i128, 0, 1] {
            let m = (1i128 << k) + d;
            v.push(code(m, w));
            v.push(code(-m, w));
        }
    }
    while v.len() < rows {
        let k = (rng.next() % u64::from(w)) as u32;
        let x = rng.u128() >> (128 - w) >> (w - 1 - k.min(w - 1));
        v.push(code(if rng.coin() { -(x as i128) } else { x as i128 }, w));
    }
    v
}

#[test]
fn po2_matches_the_quantization() {
    check("rtl_po2", &WIDTHS, 4096);
}

#[test]
#[ignore = "full tier: every width from 2 to 65, 65536 inputs each"]
fn po2_matches_the_quantization_at_every_width() {
    let widths: Vec<u32> = (2..=65).collect();
    check("rtl_po2_all", &widths, 1 << 16);
}

/// `rows` inputs for each width of `widths`.
fn check(name: &str, widths: &[u32], rows: usize) {
    require_tool("verilator", "--version");
    let dir = scratch(name);
    let names: Vec<[String; 5]> = (0..widths.len()).map(|i| ["s", "zero", "neg", "exp", "onehot"].map(|n| format!("{n}{i}"))).collect();
    let ins: Vec<(&str, u32)> = names.iter().zip(widths.iter().copied()).map(|(n, w)| (n[0].as_str(), w)).collect();
    let outs: Vec<(&str, u32)> = names
        .iter()
        .zip(widths.iter().copied())
        .flat_map(|(n, w)| [(n[1].as_str(), 1), (n[2].as_str(), 1), (n[3].as_str(), bits_for(w as usize)), (n[4].as_str(), w)])
        .collect();
    let mut body = String::new();
    for (i, w) in widths.iter().enumerate() {
        writeln!(body, "fptgen_po2 #(.S_W({w})) u{i} (.s(s{i}), .zero(zero{i}), .neg(neg{i}), .exp(exp{i}), .onehot(onehot{i}));").unwrap();
    }
    let mut rng = Rng(0x9020_5eed);
    let cols: Vec<Vec<u128>> = widths.iter().map(|&w| inputs(w, rows, &mut rng)).collect();
    let stim: Vec<Vec<u128>> = (0..rows).map(|t| cols.iter().map(|c| c[t]).collect()).collect();
    let bench = Bench { name: "po2_top", inputs: &ins, outputs: &outs, clocked: false };
    let rows = bench.run(&dir, &body, &["fptgen_po2.v"], &stim);
    for (t, (row, x)) in rows.iter().zip(&stim).enumerate() {
        for (i, &w) in widths.iter().enumerate() {
            let s = signed(x[i], w);
            for (k, (name, want)) in ["zero", "neg", "exp", "onehot"].iter().zip(q(x[i], w)).enumerate() {
                let got = row[4 * i + k];
                assert_eq!(got, want, "input {t}: S_W {w}, s = {s}: {name} {got:#x}, expected {want:#x}");
            }
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}
