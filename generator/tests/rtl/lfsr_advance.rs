//! `rtl/fptgen_lfsr_advance.v` (BITS steps of the trainers' Galois LFSR,
//! combinational) in Verilator against the LFSR of docs/training.md
//! ("Noise"), written here: one step outputs o = s & 1, then s = s >> 1,
//! xored with TAPS (8: 0xB8, 16: 0xB400, 32: 0xA3000000) when o is 1;
//! value holds the BITS outputs, the first in bit 0, and next the state
//! after them. Every width with 1, an odd count and WIDTH bits per value
//! (and 31 of 32); every state of the 8-bit LFSR, and for 16 and 32 bits
//! the corners (0, 1, all ones, the top bit, the taps) and random states,
//! including chains (each state the previous one's next). Every output
//! compared on every input; the full tier checks every BITS of every width,
//! every 16-bit state. Fails (does not skip) without Verilator.

use std::fmt::Write as _;

use crate::common::{mask, require_tool, scratch, Bench, Rng};

/// (WIDTH, BITS)
const UNITS: [(u32, u32); 10] = [(8, 1), (8, 3), (8, 8), (16, 1), (16, 5), (16, 16), (32, 1), (32, 7), (32, 31), (32, 32)];

fn taps(width: u32) -> u64 {
    match width {
        8 => 0xB8,
        16 => 0xB400,
        32 => 0xA300_0000,
        _ => unreachable!("no LFSR of {width} bits"),
    }
}

/// The reference: BITS steps from `s`, (next state, output bits).
fn advance(s: u64, width: u32, bits: u32) -> (u64, u64) {
    let mut t = s;
    let mut value = 0;
    for k in 0..bits {
        let o = t & 1;
        value |= o << k;
        t >>= 1;
        if o == 1 {
            t ^= taps(width);
        }
    }
    (t, value)
}

/// `rows` states of one unit: every state when they fit, else corners,
/// random states and chains of successive states.
fn states(width: u32, bits: u32, rows: usize, rng: &mut Rng) -> Vec<u64> {
    if 1usize << width <= rows {
        return (0..rows as u64).map(|x| x & mask(width)).collect();
    }
    let m = mask(width);
    let mut v = vec![0, 1, m, 1 << (width - 1), taps(width), taps(width) | 1, m ^ 1, 2];
    while v.len() < rows {
        if rng.chance(50) {
            v.push(rng.next() & m);
        } else {
            let &s = v.last().expect("a state");
            v.push(advance(s, width, bits).0);
        }
    }
    v
}

#[test]
fn lfsr_advance_matches_the_reference() {
    check("rtl_lfsr_advance", &UNITS, 2048);
}

#[test]
#[ignore = "full tier: every BITS of every width, 65536 states"]
fn lfsr_advance_matches_the_reference_for_every_bits() {
    let units: Vec<(u32, u32)> = [8, 16, 32].iter().flat_map(|&w| (1..=w).map(move |b| (w, b))).collect();
    check("rtl_lfsr_advance_all", &units, 1 << 16);
}

/// `rows` states for each (WIDTH, BITS) of `units`.
fn check(name: &str, units: &[(u32, u32)], rows: usize) {
    require_tool("verilator", "--version");
    let dir = scratch(name);
    let names: Vec<[String; 3]> = (0..units.len()).map(|i| ["state", "next", "value"].map(|n| format!("{n}{i}"))).collect();
    let ins: Vec<(&str, u32)> = names.iter().zip(units.iter().copied()).map(|(n, (w, _))| (n[0].as_str(), w)).collect();
    let outs: Vec<(&str, u32)> = names.iter().zip(units.iter().copied()).flat_map(|(n, (w, b))| [(n[1].as_str(), w), (n[2].as_str(), b)]).collect();
    let mut body = String::new();
    for (i, (w, b)) in units.iter().enumerate() {
        writeln!(body, "fptgen_lfsr_advance #(.WIDTH({w}), .BITS({b})) u{i} (.state(state{i}), .next(next{i}), .value(value{i}));").unwrap();
    }
    let mut rng = Rng(0x1f5_adf);
    let cols: Vec<Vec<u64>> = units.iter().map(|&(w, b)| states(w, b, rows, &mut rng)).collect();
    let stim: Vec<Vec<u128>> = (0..rows).map(|t| cols.iter().map(|c| u128::from(c[t])).collect()).collect();
    let bench = Bench { name: "advance_top", inputs: &ins, outputs: &outs, clocked: false };
    let rows = bench.run(&dir, &body, &["fptgen_lfsr_advance.v"], &stim);
    for (t, row) in rows.iter().enumerate() {
        for (i, &(w, b)) in units.iter().enumerate() {
            let s = cols[i][t];
            let (next, value) = advance(s, w, b);
            let ctx = format!("input {t}: WIDTH {w} BITS {b}, state {s:#x}");
            assert_eq!(row[2 * i] as u64, next, "{ctx}: next {:#x}, expected {next:#x}", row[2 * i]);
            assert_eq!(row[2 * i + 1] as u64, value, "{ctx}: value {:#x}, expected {value:#x}", row[2 * i + 1]);
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}
