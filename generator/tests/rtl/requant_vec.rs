//! `rtl/fptgen_requant_vec.v` (an int8 layer's output stage: a vector of
//! int32 accumulators requantized per lane, as a valid/ready stream) in
//! Verilator against a model written here from its header comment,
//! fptgen_requant's and docs/numerics.md ("Int8 requantization"):
//!
//! * values: lane k of a vector, x, with MULTS[k] = m and SHIFTS[k] = s:
//!   single rounding r = floor((x * m + 2^(t-1)) / 2^t), t = 31 - s;
//!   double rounding r = RDP(floor((a * m + 2^30) / 2^31), max(-s, 0)) with
//!   a = x << max(s, 0) wrapped to 32 bits and RDP dividing by a power of
//!   two rounding ties away from zero; then y = clamp(r[31:0] + OUT_ZP
//!   (wrapping in 32 bits), ACT_MIN, ACT_MAX) as an OUT_W-bit code (the
//!   model is checked against fptgen_sim::int8::QuantizedMultiplier::apply
//!   on every value too, so a slip in it cannot hide);
//! * handshake: one pipeline of 6 stages that advances when
//!   en = !out_valid || out_ready; in_ready = en; a vector taken on an
//!   enabled edge comes out 6 enabled edges later; rst empties it.
//!
//! Configurations: one lane with 2-bit codes and with 32-bit codes (the
//! whole wrapped result, a zero point that wraps), 3, 2, 5 and 8 lanes of 8,
//! 5 and 13 bits, both roundings, clamps narrower than the code; per lane
//! multipliers and shifts at the extremes (0, 2^31 - 1, 2^30, shifts -31
//! and 30), scales that make exact ties, and random ones; ties of both
//! signs inside the clamp are counted. Stimulus: corner and random accumulators, in_valid
//! and out_ready at random rates that change every few hundred cycles
//! (long stalls, full throughput), a reset in the middle of a run. Every
//! cycle in_ready and out_valid are compared, and every lane of out_data
//! whenever out_valid is high (held through stalls). Fails (does not skip)
//! without Verilator.

use std::collections::VecDeque;
use std::fmt::Write as _;

use fptgen_sim::int8::{QuantizedMultiplier, Rounding};

use crate::common::{require_tool, scratch, signed, Bench, Rng};

const LATENCY: usize = 6;
const CYCLES: usize = 5000;

/// One instance: N, ROUNDING (double), OUT_W, OUT_ZP, ACT_MIN, ACT_MAX.
#[derive(Debug, Clone, Copy)]
struct Cfg {
    n: usize,
    double: bool,
    out_w: u32,
    zp: i32,
    lo: i32,
    hi: i32,
}

const fn cfg(n: usize, double: bool, out_w: u32, zp: i32, lo: i32, hi: i32) -> Cfg {
    Cfg { n, double, out_w, zp, lo, hi }
}

const CFGS: [Cfg; 8] = [
    cfg(1, false, 2, 0, -2, 1),
    cfg(1, true, 32, 0, i32::MIN, i32::MAX),
    cfg(1, false, 32, i32::MAX, i32::MIN, i32::MAX),
    cfg(3, false, 8, -5, -128, 127),
    cfg(3, true, 8, 3, 0, 127),
    cfg(2, true, 5, -1, -16, 15),
    cfg(5, false, 13, 100, -50, 4000),
    cfg(8, true, 8, -128, -128, 100),
];

/// The reference value of one lane: the requantized x, before the output
/// offset and clamp (r[31:0]).
fn multiply(x: i32, m: i32, s: i32, double: bool) -> i32 {
    let (x, m) = (i128::from(x), i128::from(m));
    if !double {
        let t = 31 - s;
        return ((x * m + (1i128 << (t - 1))) >> t) as i32;
    }
    let a = i128::from((x as i32).wrapping_shl(s.max(0) as u32));
    let q = (a * m + (1i128 << 30)) >> 31;
    let right = (-s).max(0);
    let d = 1i128 << right;
    let (fl, rem) = (q.div_euclid(d), q.rem_euclid(d));
    (if 2 * rem > d || (2 * rem == d && q > 0) { fl + 1 } else { fl }) as i32
}

fn output(c: &Cfg, x: i32, m: i32, s: i32) -> i32 {
    multiply(x, m, s, c.double).wrapping_add(c.zp).clamp(c.lo, c.hi)
}

/// Per lane (multiplier, shift): the extremes, scales that make ties
/// (1/8, m / 2^32, m / 4), and random ones (mostly an int8 layer's scales).
fn lanes(c: &Cfg, i: usize, rng: &mut Rng) -> Vec<(i32, i32)> {
    let fixed = [(i32::MAX, 30), (1 << 30, -2), (0, -7), (1 << 30, 0), (i32::MAX, -31), (rng.range(1, i64::from(i32::MAX)) as i32, -1), (1 << 30, -31), (1, 30)];
    (0..c.n)
        .map(|k| {
            if rng.chance(60) {
                fixed[(k + i) % fixed.len()]
            } else {
                let m = if rng.coin() { rng.range(1 << 30, i64::from(i32::MAX)) } else { rng.range(0, i64::from(i32::MAX)) };
                (m as i32, if rng.coin() { rng.range(-12, 0) } else { rng.range(-31, 30) } as i32)
            }
        })
        .collect()
}

/// Whether the last rounding of lane value `x` is an exact tie (of the
/// final division: single rounding's, or double rounding's second).
fn tie(x: i32, m: i32, s: i32, double: bool) -> bool {
    if !double {
        let t = 31 - s;
        return (i128::from(x) * i128::from(m)).rem_euclid(1i128 << t) == 1i128 << (t - 1);
    }
    let a = i128::from(x.wrapping_shl(s.max(0) as u32));
    let q = (a * i128::from(m) + (1i128 << 30)) >> 31;
    s < 0 && q.rem_euclid(1i128 << -s) == 1i128 << (-s - 1)
}

fn accumulator(rng: &mut Rng) -> i32 {
    match rng.next() % 8 {
        0 => [i32::MIN, i32::MAX, 0, 1, -1, i32::MIN + 1][(rng.next() % 6) as usize],
        1 | 2 => rng.range(-300, 300) as i32,
        3 | 4 => rng.range(-200_000, 200_000) as i32,
        _ => rng.next() as i32,
    }
}

/// The model of one instance's pipeline: per stage whether it holds a
/// valid vector, and the vector.
struct Pipe {
    stages: VecDeque<(bool, Vec<i32>)>,
}

impl Pipe {
    fn out_valid(&self) -> bool {
        self.stages[LATENCY - 1].0
    }
}

#[test]
fn requant_vec_matches_the_model() {
    require_tool("verilator", "--version");
    let dir = scratch("rtl_requant_vec");
    let mut rng = Rng(0x7e9_ec7);
    let params: Vec<Vec<(i32, i32)>> = CFGS.iter().enumerate().map(|(i, c)| lanes(c, i, &mut rng)).collect();

    // Ports: per instance in_valid, out_ready, a 32-bit input per lane;
    // in_ready, out_valid, an OUT_W-bit output per lane.
    let mut in_names: Vec<(String, u32)> = vec![("rst".into(), 1)];
    let mut out_names: Vec<(String, u32)> = Vec::new();
    let mut body = String::new();
    for (i, c) in CFGS.iter().enumerate() {
        in_names.push((format!("in_valid{i}"), 1));
        in_names.push((format!("out_ready{i}"), 1));
        in_names.extend((0..c.n).map(|k| (format!("x{i}_{k}"), 32)));
        out_names.push((format!("in_ready{i}"), 1));
        out_names.push((format!("out_valid{i}"), 1));
        out_names.extend((0..c.n).map(|k| (format!("y{i}_{k}"), c.out_w)));
        let mults: Vec<String> = params[i].iter().rev().map(|&(m, _)| format!("31'd{m}")).collect();
        let shifts: Vec<String> = params[i].iter().rev().map(|&(_, s)| format!("6'h{:02x}", (s as u32) & 63)).collect();
        let xs: Vec<String> = (0..c.n).rev().map(|k| format!("x{i}_{k}")).collect();
        let ys: Vec<String> = (0..c.n).rev().map(|k| format!("y{i}_{k}")).collect();
        writeln!(
            body,
            "fptgen_requant_vec #(.N({}), .ROUNDING({}), .OUT_W({}), .OUT_ZP({}), .ACT_MIN({}), .ACT_MAX({}), .MULTS({{{}}}), .SHIFTS({{{}}})) u{i} (\n    \
             .clk(clk), .rst(rst), .in_data({{{}}}), .in_valid(in_valid{i}), .in_ready(in_ready{i}), .out_data({{{}}}), .out_valid(out_valid{i}), .out_ready(out_ready{i}));",
            c.n,
            u8::from(c.double),
            c.out_w,
            c.zp,
            c.lo,
            c.hi,
            mults.join(", "),
            shifts.join(", "),
            xs.join(", "),
            ys.join(", ")
        )
        .unwrap();
    }
    let ins: Vec<(&str, u32)> = in_names.iter().map(|(n, w)| (n.as_str(), *w)).collect();
    let outs: Vec<(&str, u32)> = out_names.iter().map(|(n, w)| (n.as_str(), *w)).collect();

    // Stimulus: per instance (in_valid, out_ready, vector) per cycle, the
    // rates (per cent) changing every 100 to 500 cycles; rst at cycles 0
    // and 2500.
    let resets = [0, CYCLES / 2];
    let mut stim: Vec<Vec<(bool, bool, Vec<i32>)>> = vec![Vec::new(); CFGS.len()];
    for (i, c) in CFGS.iter().enumerate() {
        while stim[i].len() < CYCLES {
            let (vr, rr) = ([0, 30, 70, 100][(rng.next() % 4) as usize], [10, 50, 80, 100][(rng.next() % 4) as usize]);
            for _ in 0..rng.range(100, 500) {
                let x = (0..c.n).map(|_| accumulator(&mut rng)).collect();
                stim[i].push((rng.chance(vr), rng.chance(rr), x));
            }
        }
        stim[i].truncate(CYCLES);
    }
    let rows_in: Vec<Vec<u128>> = (0..CYCLES)
        .map(|t| {
            let mut v = vec![u128::from(resets.contains(&t))];
            for s in &stim {
                let (valid, ready, x) = &s[t];
                v.push(u128::from(*valid));
                v.push(u128::from(*ready));
                v.extend(x.iter().map(|&xk| u128::from(xk as u32)));
            }
            v
        })
        .collect();
    let bench = Bench { name: "vec_top", inputs: &ins, outputs: &outs, clocked: true };
    let rows = bench.run(&dir, &body, &["fptgen_requant_vec.v", "fptgen_requant.v"], &rows_in);

    let mut pipes: Vec<Pipe> = CFGS.iter().map(|c| Pipe { stages: (0..LATENCY).map(|_| (false, vec![0; c.n])).collect() }).collect();
    // Per instance: vectors given, cycles stalled with out_valid, values at
    // ACT_MIN or ACT_MAX, values between.
    let mut counts = vec![[0usize; 4]; CFGS.len()];
    // Exact ties inside the clamp: single rounding, double rounding of a
    // negative and of a positive value.
    let mut ties = [0usize; 3];
    let mut col = 0;
    for (i, c) in CFGS.iter().enumerate() {
        for (t, row) in rows.iter().enumerate() {
            let (valid, ready, x) = &stim[i][t];
            let p = &mut pipes[i];
            let en = !p.out_valid() || *ready;
            // Before the first edge (with rst) the pipeline is unknown.
            if t > 0 {
                let ctx = format!("cycle {t}: instance {i} {c:?}");
                assert_eq!(row[col] == 1, en, "{ctx}: in_ready {}, expected {}", row[col], u8::from(en));
                assert_eq!(row[col + 1] == 1, p.out_valid(), "{ctx}: out_valid {}, expected {}", row[col + 1], u8::from(p.out_valid()));
                if p.out_valid() {
                    let v = &p.stages[LATENCY - 1].1;
                    for (k, (&xk, &(m, s))) in v.iter().zip(&params[i]).enumerate() {
                        let want = output(c, xk, m, s);
                        let sim = QuantizedMultiplier::new(m, s).expect("a multiplier in range");
                        let rounding = if c.double { Rounding::Double } else { Rounding::Single };
                        assert_eq!(multiply(xk, m, s, c.double), sim.apply(xk, rounding), "the test's model against the simulator: x {xk} m {m} s {s} {rounding:?}");
                        let got = signed(row[col + 2 + k], c.out_w);
                        assert_eq!(
                            got,
                            i128::from(want),
                            "{ctx}: out_data lane {k} {got}, expected {want} (x {xk}, multiplier {m}, shift {s})"
                        );
                        let clamped = want == c.lo || want == c.hi;
                        counts[i][if clamped { 2 } else { 3 }] += 1;
                        if !clamped && tie(xk, m, s, c.double) {
                            ties[if !c.double { 0 } else if xk < 0 { 1 } else { 2 }] += 1;
                        }
                    }
                    counts[i][usize::from(!*ready)] += 1;
                }
            }
            // The edge.
            if en {
                p.stages.pop_back();
                p.stages.push_front((*valid, x.clone()));
            }
            if resets.contains(&t) {
                p.stages.iter_mut().for_each(|s| s.0 = false);
            }
        }
        col += 2 + c.n;
    }
    assert!(counts.iter().all(|n| n[0] > 500 && n[1] > 100 && n[3] > 40), "given, stalled, clamped, inside per instance: {counts:?}");
    assert!(ties.iter().all(|&n| n >= 20), "exact ties (single; double, negative and positive): {ties:?}");
    assert!(counts.iter().zip(CFGS).all(|(n, c)| c.out_w == 32 || n[2] > 20), "given, stalled, clamped, inside per instance: {counts:?}");
    let _ = std::fs::remove_dir_all(&dir);
}
