//! `rtl/fptgen_fb_fprime.v` in Verilator against a model written here from
//! its header: `fp[o]` = 1 (FP_MODE 0, linear), `a[o] > A_MIN` (FP_MODE 1,
//! relu) or `A_MIN < a[o] < A_MAX` (FP_MODE 2, relu6), `a[o]` read as an
//! A_S-signed A_W-bit code and compared with the signed integers A_MIN and
//! A_MAX. Several parameter sets in one build, as the generator
//! instantiates the module (`fptgen_fb_layer`: a dense layer's whole output
//! vector; `fptgen_fb_conv`: a pixel's filters) and at its edges: signed
//! and unsigned codes of 1, 4, 8, 16, 32 and 40 bits; one code and ten;
//! bounds at the codes' extremes, outside the codes' range (always or
//! never true), the most negative and most positive 32-bit integers, and a
//! mode-1 A_MAX that must be ignored. Every code of the narrow sets, bounds
//! +-1, extremes and random codes of the wide ones, in random lanes; every
//! bit of `fp` compared in every row. Fails (does not skip) without
//! Verilator.

use std::fmt::Write as _;
use std::fs;

use crate::common::{mask, require_tool, scratch, Rng, Top};

/// One instance's parameters.
#[derive(Debug, Clone, Copy)]
struct Set {
    n: usize,
    a_w: u32,
    a_s: bool,
    mode: u32,
    a_min: i32,
    a_max: i32,
}

const fn set(n: usize, a_w: u32, a_s: bool, mode: u32, a_min: i32, a_max: i32) -> Set {
    Set { n, a_w, a_s, mode, a_min, a_max }
}

const SETS: [Set; 14] = [
    // MNIST-like hidden dense layer: relu on signed 8-bit codes, 10 outputs
    set(10, 8, true, 1, 0, 0),
    // relu on unsigned codes (fp = a > 0)
    set(4, 8, false, 1, 0, 0),
    // dense_int8 relu: act_min, the output zero point
    set(3, 8, true, 1, -128, 0),
    // dense_int8 relu6 at a typical zero point and six
    set(5, 8, true, 2, -5, 40),
    // relu6 with bounds at the codes' extremes: only they are excluded
    set(3, 8, true, 2, -128, 127),
    // linear (mode 0): always 1; A_MIN and A_MAX are noise
    set(6, 16, true, 0, 77, -3),
    // One code of one unsigned bit
    set(1, 1, false, 1, 0, 0),
    // One signed bit (codes -1, 0), a mode-1 A_MAX that must not matter
    set(2, 1, true, 1, -1, -9),
    // A_MIN above every code (never) and a window around all codes (always)
    set(2, 4, false, 1, 20, 0),
    set(2, 4, true, 2, -100, 100),
    // The most negative and most positive 32-bit bounds on 32-bit codes
    set(3, 32, true, 2, i32::MIN, i32::MAX),
    // Unsigned 32-bit codes above i32::MAX against A_MIN = i32::MAX
    set(3, 32, false, 1, i32::MAX, 0),
    // Unsigned 32-bit codes against a negative A_MIN (always above)
    set(2, 32, false, 2, -1, 1000),
    // Wider than 32 bits: the comparison is wider than the bounds
    set(2, 40, true, 1, -7, 0),
];

const ROWS: usize = 2048;

/// The value of a `w`-bit code, two's complement if `signed`.
fn value(bits: u64, w: u32, signed: bool) -> i128 {
    let v = i128::from(bits & mask(w));
    if signed && (v >> (w - 1)) & 1 == 1 { v - (1i128 << w) } else { v }
}

/// The code (bits) of `v` in `w` bits.
fn code(v: i128, w: u32) -> u64 {
    (v as u64) & mask(w)
}

/// f'(o) of code `bits`, from the header.
fn fprime(s: &Set, bits: u64) -> bool {
    let a = value(bits, s.a_w, s.a_s);
    match s.mode {
        0 => true,
        1 => a > i128::from(s.a_min),
        _ => i128::from(s.a_min) < a && a < i128::from(s.a_max),
    }
}

/// A code for row `r`: every code in turn for narrow sets; for wide ones
/// the bounds and their neighbours, the extremes, and random codes.
fn pick(s: &Set, r: usize, rng: &mut Rng) -> u64 {
    if s.a_w <= 10 {
        // Every code, in a different order per lane
        return (r as u64).wrapping_add(rng.next() % 7) & mask(s.a_w);
    }
    let (lo, hi) = if s.a_s { (-(1i128 << (s.a_w - 1)), (1i128 << (s.a_w - 1)) - 1) } else { (0, (1i128 << s.a_w) - 1) };
    let near = |b: i32, rng: &mut Rng| i128::from(b) + i128::from(rng.range(-1, 1));
    let v = match rng.next() % 10 {
        0 | 1 => near(s.a_min, rng),
        2 | 3 => near(s.a_max, rng),
        4 => lo,
        5 => hi,
        6 => 0,
        _ => return rng.next() & mask(s.a_w),
    };
    // Outside the code's range: the nearest extreme instead.
    code(v.clamp(lo, hi), s.a_w)
}

#[test]
fn fb_fprime_matches_the_header() {
    require_tool("verilator", "--version");
    let dir = scratch("rtl_fb_fprime");
    let mut top = Top::default();
    for (i, s) in SETS.iter().enumerate() {
        (0..s.n).for_each(|o| top.input(format!("a{i}_{o}"), s.a_w));
        top.output(format!("fp{i}"), s.n as u32);
        let a: Vec<String> = (0..s.n).rev().map(|o| format!("a{i}_{o}")).collect();
        writeln!(
            top.body,
            "fptgen_fb_fprime #(.N({}), .A_W({}), .A_S({}), .FP_MODE({}), .A_MIN(32'sh{:08x}), .A_MAX(32'sh{:08x})) u{i} (.a_data({{{}}}), .fp(fp{i}));",
            s.n,
            s.a_w,
            u8::from(s.a_s),
            s.mode,
            s.a_min as u32,
            s.a_max as u32,
            a.join(", ")
        )
        .unwrap();
    }

    let mut rng = Rng(0xf9_1e);
    let rows: Vec<Vec<Vec<u64>>> =
        (0..ROWS).map(|r| SETS.iter().map(|s| (0..s.n).map(|_| pick(s, r, &mut rng)).collect()).collect()).collect();
    let stim: Vec<Vec<u128>> = rows.iter().map(|row| row.iter().flatten().map(|&a| u128::from(a)).collect()).collect();
    let out = top.run("fprime_top", false, &dir, &["fptgen_fb_fprime.v"], &stim);

    // ones[i], zeros[i]: f' = 1 and f' = 0 seen for set i
    let mut ones = vec![0usize; SETS.len()];
    let mut zeros = vec![0usize; SETS.len()];
    for (r, got) in out.iter().enumerate() {
        for (i, s) in SETS.iter().enumerate() {
            for (o, &a) in rows[r][i].iter().enumerate() {
                let want = fprime(s, a);
                let bit = (got[i] >> o) & 1 == 1;
                assert_eq!(
                    bit,
                    want,
                    "cycle {r}, set {i} ({s:?}): fp[{o}] is {}, expected {} for a[{o}] = {:#x} ({})",
                    u8::from(bit),
                    u8::from(want),
                    a,
                    value(a, s.a_w, s.a_s)
                );
                if want { ones[i] += 1 } else { zeros[i] += 1 }
            }
            assert_eq!(got[i] >> s.n, 0, "cycle {r}, set {i} ({s:?}): fp {:#x} has bits above N", got[i]);
        }
    }
    // Both outcomes drawn where both exist: f' is constant over a set's
    // codes only if it is at the codes' extremes and around the bounds.
    for (i, s) in SETS.iter().enumerate() {
        let probes = [0, mask(s.a_w), mask(s.a_w) >> 1, (mask(s.a_w) >> 1) + 1]
            .into_iter()
            .chain([s.a_min, s.a_max].into_iter().flat_map(|b| (-1..=1).map(move |d| code(i128::from(b) + d, s.a_w))));
        let outcomes: Vec<bool> = probes.map(|a| fprime(s, a)).collect();
        let constant = outcomes.iter().all(|&f| f == outcomes[0]);
        assert!(constant || (ones[i] >= 8 && zeros[i] >= 8), "set {i} ({s:?}): f' = 1 {} times, 0 {} times", ones[i], zeros[i]);
    }
    // The constant sets the stimulus meant: linear (always), A_MIN above
    // every code (never), a window around every code (always).
    assert_eq!((zeros[5], ones[8], zeros[9]), (0, 0, 0), "the constant sets");
    let _ = fs::remove_dir_all(&dir);
}
