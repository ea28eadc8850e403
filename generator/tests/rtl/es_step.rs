//! `rtl/fptgen_es_step.v` (the ES update's step) in Verilator against the
//! step of docs/training.md ("Update"), written here: for a signed 32-bit
//! gradient G, R(G / 2^LR_SHIFT) rounded to nearest with ties to even
//! (q = floor(G / 2^LR_SHIFT), plus one when the dropped part exceeds one
//! half, or equals it and q is odd), and G * 2^-LR_SHIFT exactly for a
//! negative shift, as a 33-bit code (33 - LR_SHIFT bits for a negative
//! shift; the port widths of the top are written from that, so a wrong
//! width fails the build). Every shift from -31 (the widest step, 64 bits)
//! to 31, one instance each, on the same gradients: the corners (0, +-1,
//! the extremes, +-2^k and its neighbours), exact ties (odd and even
//! quotients) and their neighbours of random shifts, and random values.
//! Every output compared on every input. Fails (does not skip) without
//! Verilator.

use std::fmt::Write as _;

use crate::common::{code, require_tool, scratch, signed, Bench, Rng};

const ROWS: usize = 4096;

/// The step's width for `lr_shift`.
fn step_w(lr_shift: i32) -> u32 {
    33 + lr_shift.min(0).unsigned_abs()
}

/// The reference: R(g / 2^lr_shift), ties to even (g * 2^-lr_shift for a
/// negative shift).
fn step(g: i32, lr_shift: i32) -> i128 {
    let g = i128::from(g);
    if lr_shift <= 0 {
        return g << -lr_shift;
    }
    let d = 1i128 << lr_shift;
    let q = g.div_euclid(d);
    let r = g.rem_euclid(d);
    if 2 * r > d || (2 * r == d && q % 2 != 0) {
        q + 1
    } else {
        q
    }
}

fn gradients(rng: &mut Rng) -> Vec<i32> {
    let mut v = vec![0, 1, -1, i32::MIN, i32::MAX, i32::MIN + 1, i32::MAX - 1];
    for k in 0..31 {
        for d in [-1, 0, 1] {
            v.push((1i32 << k) + d);
            v.push(-(1i32 << k) - d);
        }
    }
    while v.len() < ROWS {
        let g = match rng.next() % 4 {
            // An exact tie of a random shift, or a neighbour of one.
            0 | 1 => {
                let l = rng.range(1, 31) as u32;
                let k = rng.signed_bits(32 - l) as i64;
                ((k << l) + (1i64 << (l - 1)) + rng.range(-1, 1)) as i32
            }
            2 => rng.range(-1000, 1000) as i32,
            _ => rng.next() as i32,
        };
        v.push(g);
    }
    v
}

#[test]
fn es_step_rounds_to_nearest_even() {
    require_tool("verilator", "--version");
    let dir = scratch("rtl_es_step");
    let shifts: Vec<i32> = (-31..=31).collect();
    let names: Vec<String> = (0..shifts.len()).map(|i| format!("step{i}")).collect();
    let outs: Vec<(&str, u32)> = names.iter().zip(shifts.iter().copied()).map(|(n, l)| (n.as_str(), step_w(l))).collect();
    let mut body = String::new();
    for (i, l) in shifts.iter().enumerate() {
        writeln!(body, "fptgen_es_step #(.LR_SHIFT({l})) u{i} (.grad(grad), .step(step{i}));").unwrap();
    }
    let mut rng = Rng(0xe5_57e9);
    let grads = gradients(&mut rng);
    let stim: Vec<Vec<u128>> = grads.iter().map(|&g| vec![u128::from(g as u32)]).collect();
    let bench = Bench { name: "step_top", inputs: &[("grad", 32)], outputs: &outs, clocked: false };
    let rows = bench.run(&dir, &body, &["fptgen_es_step.v", "fptgen_cast.v"], &stim);
    let mut ties = vec![0; shifts.len()];
    for (t, (row, &g)) in rows.iter().zip(&grads).enumerate() {
        for (i, &l) in shifts.iter().enumerate() {
            let w = step_w(l);
            let want = step(g, l);
            assert_eq!(signed(code(want, w), w), want, "the step of {g} for LR_SHIFT {l} does not fit {w} bits");
            assert_eq!(
                row[i],
                code(want, w),
                "input {t}: LR_SHIFT {l}, grad {g}: step {} ({:#x}), expected {want}",
                signed(row[i], w),
                row[i]
            );
            if l > 0 && i64::from(g).rem_euclid(1 << l) == 1 << (l - 1) {
                ties[i] += 1;
            }
        }
    }
    // Every positive shift saw ties.
    assert!(shifts.iter().zip(&ties).all(|(&l, &n)| l <= 0 || n >= 10), "ties per shift: {ties:?}");
    let _ = std::fs::remove_dir_all(&dir);
}
