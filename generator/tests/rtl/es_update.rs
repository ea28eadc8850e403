//! `rtl/fptgen_es_update.v` (the ES trainer's perturb/update unit) in
//! Verilator against docs/training.md ("One group", "Update"), written
//! here: with the P_W-bit codes p, lo, hi (signed), the E_W-bit noise e
//! (signed) and the step s (signed, 33 bits, 33 - LR_SHIFT for a negative
//! shift), perturbed = clamp(p + (+-e << SIGMA)) (-e when negate is high)
//! and updated = clamp(p - s), clamp(v) = min(max(v, lo), hi), computed
//! exactly in i128. Configurations from P_W = 1 to 65 (the widest a
//! parameter format gives), E_W 2 to 34, SIGMA 0 to 31 and LR_SHIFT -31 to
//! 31, among them each side of the unit's internal choices (a step wider
//! than P_W + 2 bits, where a step beyond [-2^P_W, 2^P_W - 1] gives a bound
//! directly, exactly P_W + 3 bits, narrower; a step narrower than the
//! parameter; a perturbation wider than the parameter). Bounds: full
//! ranges, the ranges of narrower signed, symmetric and unsigned formats,
//! and random pairs (lo <= hi, as every format has them; lo == hi
//! included); parameters inside the bounds, at them and anywhere; steps
//! around 0, +-2^(P_W-1), +-2^P_W, the step's extremes, ones that land
//! p - s next to a bound, and random ones; noise values at their extremes
//! and random, either sign. Every output compared on every input; the
//! full tier adds 32 random configurations. Fails (does not skip) without
//! Verilator.

use std::fmt::Write as _;

use crate::common::{code, require_tool, scratch, signed, Bench, Rng};

/// One unit: P_W, E_W, SIGMA, LR_SHIFT.
#[derive(Debug, Clone, Copy)]
struct Unit {
    pw: u32,
    ew: u32,
    sigma: u32,
    lr_shift: i32,
}

impl Unit {
    fn step_w(&self) -> u32 {
        33 + self.lr_shift.min(0).unsigned_abs()
    }
}

const fn u(pw: u32, ew: u32, sigma: u32, lr_shift: i32) -> Unit {
    Unit { pw, ew, sigma, lr_shift }
}

const UNITS: [Unit; 13] = [
    // the smallest parameter; a 33-bit step, far wider
    u(1, 2, 0, 4),
    // the defaults (rademacher noise, an 8-bit signed format)
    u(9, 3, 0, 4),
    // a perturbation far wider than the parameter
    u(2, 34, 31, 31),
    u(8, 2, 31, 0),
    u(17, 10, 5, -3),
    // a step of exactly P_W + 3 bits (the narrowest that saturates)
    u(30, 3, 2, 2),
    u(61, 18, 20, -31),
    // steps of P_W + 2 and P_W + 1 bits
    u(31, 34, 31, 0),
    u(32, 5, 0, 1),
    u(33, 3, 7, -1),
    // the widest step (64 bits) with a 64-bit parameter
    u(64, 34, 31, -31),
    // the widest parameter, the step narrower than it
    u(65, 7, 13, -31),
    u(65, 34, 31, 5),
];


/// One input of one unit.
#[derive(Debug, Clone, Copy)]
struct In {
    p: i128,
    lo: i128,
    hi: i128,
    e: i128,
    negate: bool,
    s: i128,
}

/// The reference: (perturbed, updated).
fn reference(c: &Unit, x: &In) -> (i128, i128) {
    let e = if x.negate { -x.e } else { x.e };
    ((x.p + (e << c.sigma)).clamp(x.lo, x.hi), (x.p - x.s).clamp(x.lo, x.hi))
}

/// Bounds (lo <= hi) for a `pw`-bit unit.
fn bounds(pw: u32, rng: &mut Rng) -> (i128, i128) {
    let (min, max) = (-(1i128 << (pw - 1)), (1i128 << (pw - 1)) - 1);
    let w = rng.range(1, i64::from(pw)) as u32;
    match rng.next() % 6 {
        0 => (min, max),
        // a narrower signed format, or a symmetric one (lo = -max_raw)
        1 => (-(1i128 << (w - 1)), (1i128 << (w - 1)) - 1),
        2 => (-(1i128 << (w - 1)) + 1, (1i128 << (w - 1)) - 1),
        // an unsigned format, zero-extended by one bit
        3 if pw > 1 => (0, (1i128 << w.min(pw - 1)) - 1),
        4 => {
            let a = rng.range_i128(min, max);
            (a, a)
        }
        _ => {
            let (a, b) = (rng.range_i128(min, max), rng.range_i128(min, max));
            (a.min(b), a.max(b))
        }
    }
}

fn draw(c: &Unit, rng: &mut Rng) -> In {
    let (pw, sw) = (c.pw, c.step_w());
    let (lo, hi) = bounds(pw, rng);
    let p = match rng.next() % 10 {
        0 => lo,
        1 => hi,
        2 | 3 => rng.signed_bits(pw),
        _ => rng.range_i128(lo, hi),
    };
    let e = match rng.next() % 6 {
        0 => -(1i128 << (c.ew - 1)),
        1 => (1i128 << (c.ew - 1)) - 1,
        2 => rng.range_i128(-1, 1),
        _ => rng.signed_bits(c.ew),
    };
    let (smin, smax) = (-(1i128 << (sw - 1)), (1i128 << (sw - 1)) - 1);
    let d = rng.range_i128(-2, 2);
    let s = match rng.next() % 10 {
        0 => rng.range_i128(-3, 3),
        1 => (1i128 << pw) + d,
        2 => -(1i128 << pw) + d,
        3 => (if rng.coin() { 1i128 } else { -1 } << (pw - 1)) + d,
        4 => [smin, smax, smin + 1, smax - 1][(rng.next() % 4) as usize],
        // p - s next to a bound
        5 => p - lo - d,
        6 => p - hi - d,
        7 => rng.range_i128(-(1i128 << (pw + 1)), 1i128 << (pw + 1)),
        _ => rng.signed_bits(sw),
    }
    .clamp(smin, smax);
    In { p, lo, hi, e, negate: rng.coin(), s }
}

#[test]
fn es_update_perturbs_and_updates_with_the_clamp() {
    check("rtl_es_update", &UNITS, 3000, 0xe5_0bda7e);
}

#[test]
#[ignore = "full tier: 32 random configurations"]
fn es_update_perturbs_and_updates_with_the_clamp_in_random_configurations() {
    let mut rng = Rng(0xe5_7a2d);
    let units: Vec<Unit> =
        (0..32).map(|_| u(rng.range(1, 65) as u32, rng.range(2, 34) as u32, rng.range(0, 31) as u32, rng.range(-31, 31) as i32)).collect();
    check("rtl_es_update_random", &units, 20_000, 0xe5_0bda7f);
}

/// `rows` inputs from `seed` for each unit of `units`.
fn check(name: &str, units: &[Unit], rows: usize, seed: u64) {
    require_tool("verilator", "--version");
    let dir = scratch(name);
    let fields = ["param", "lo", "hi", "noise", "negate", "step", "perturbed", "updated"];
    let names: Vec<Vec<String>> = (0..units.len()).map(|i| fields.iter().map(|n| format!("{n}{i}")).collect()).collect();
    let ins: Vec<(&str, u32)> = names
        .iter()
        .zip(units.iter().copied())
        .flat_map(|(n, c)| [(n[0].as_str(), c.pw), (n[1].as_str(), c.pw), (n[2].as_str(), c.pw), (n[3].as_str(), c.ew), (n[4].as_str(), 1), (n[5].as_str(), c.step_w())])
        .collect();
    let outs: Vec<(&str, u32)> = names.iter().zip(units.iter().copied()).flat_map(|(n, c)| [(n[6].as_str(), c.pw), (n[7].as_str(), c.pw)]).collect();
    let mut body = String::new();
    for (i, c) in units.iter().enumerate() {
        writeln!(
            body,
            "fptgen_es_update #(.P_W({}), .E_W({}), .SIGMA({}), .LR_SHIFT({})) u{i} (.param(param{i}), .lo(lo{i}), .hi(hi{i}), .noise(noise{i}), \
             .negate(negate{i}), .step(step{i}), .perturbed(perturbed{i}), .updated(updated{i}));",
            c.pw, c.ew, c.sigma, c.lr_shift
        )
        .unwrap();
    }
    let mut rng = Rng(seed);
    let cols: Vec<Vec<In>> = units.iter().map(|c| (0..rows).map(|_| draw(c, &mut rng)).collect()).collect();
    let stim: Vec<Vec<u128>> = (0..rows)
        .map(|t| {
            units
                .iter()
                .zip(&cols)
                .flat_map(|(c, col)| {
                    let x = col[t];
                    [code(x.p, c.pw), code(x.lo, c.pw), code(x.hi, c.pw), code(x.e, c.ew), u128::from(x.negate), code(x.s, c.step_w())]
                })
                .collect()
        })
        .collect();
    let bench = Bench { name: "update_top", inputs: &ins, outputs: &outs, clocked: false };
    let rows = bench.run(&dir, &body, &["fptgen_es_update.v"], &stim);
    // Per unit: perturbed below lo, inside, above hi; updated likewise.
    let mut seen = vec![[0usize; 6]; units.len()];
    for (t, row) in rows.iter().enumerate() {
        for (i, c) in units.iter().enumerate() {
            let x = &cols[i][t];
            let (pert, upd) = reference(c, x);
            let ctx = format!("input {t}: {c:?}, {x:?}");
            let got = (signed(row[2 * i], c.pw), signed(row[2 * i + 1], c.pw));
            assert_eq!(got.0, pert, "{ctx}: perturbed {} ({:#x}), expected {pert}", got.0, row[2 * i]);
            assert_eq!(got.1, upd, "{ctx}: updated {} ({:#x}), expected {upd}", got.1, row[2 * i + 1]);
            let e = if x.negate { -x.e } else { x.e };
            let side = |v: i128| if v < x.lo { 0 } else if v > x.hi { 2 } else { 1 };
            seen[i][side(x.p + (e << c.sigma))] += 1;
            seen[i][3 + side(x.p - x.s)] += 1;
        }
    }
    // The stimulus reaches both bounds and the inside of both results.
    assert!(seen.iter().all(|s| s.iter().all(|&n| n >= 20)), "below, inside and above the bounds, per unit: {seen:?}");
    let _ = std::fs::remove_dir_all(&dir);
}
