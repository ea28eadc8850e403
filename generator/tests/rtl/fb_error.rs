//! `rtl/fptgen_fb_error.v` in Verilator against a model written here from
//! its header: `cap` loads the rings `y` and `t` (C codes of Y_W bits,
//! Y_S-signed), `rot` moves every element down by one (the head to the
//! top), `e` shows the head's `y - t` exactly in E_W = Y_W + 2 bits, and
//! after a pass of C cycles with `scan` high and `k = 0 .. C - 1` (the
//! rings rotating with it, as `fptgen_fb_ctrl` drives `e_rot` in its ERR
//! state, so that the head is `t[k]` at step k) `kstar` is high exactly
//! when `k` equals k*, the first index of the largest target (compared
//! with the codes' signedness). Several parameter sets in one build: the
//! generator's shapes (10 signed 16-bit outputs, 2 outputs of 8 bits) and
//! edges (one output, 1-bit codes signed and unsigned, 16 outputs filling
//! the index, 32-bit unsigned codes, 62-bit codes with a 64-bit error).
//! Random traffic per set: captures of random targets (one-hot, all equal,
//! a largest value repeated, extreme codes), rotations and idle cycles in
//! between, passes whenever the rings are back in place, then the deltas'
//! walks (k = 0 .. C - 1 with rotation) and random k (also out of range)
//! in idle cycles; the inputs of cycles without `cap` are noise. `e` is
//! compared in every cycle after the first capture and `kstar` in every
//! cycle outside a pass once a pass has been completed. Fails (does not
//! skip) without Verilator.

use std::fmt::Write as _;
use std::fs;

use crate::common::{bits_for, mask, require_tool, scratch, Rng, Top};

/// One instance's parameters (E_W = Y_W + 2).
#[derive(Debug, Clone, Copy)]
struct Set {
    c: usize,
    y_w: u32,
    y_s: bool,
}

const fn set(c: usize, y_w: u32, y_s: bool) -> Set {
    Set { c, y_w, y_s }
}

const SETS: [Set; 9] = [
    // MNIST-like: 10 classes, signed 16-bit outputs
    set(10, 16, true),
    // examples/tiny-like: two signed 8-bit outputs
    set(2, 8, true),
    // One output (k is one bit, k* always 0)
    set(1, 8, false),
    // 1-bit codes, signed (-1, 0) and unsigned (0, 1)
    set(3, 1, true),
    set(5, 1, false),
    // 32-bit unsigned codes (E_W 34): codes above i32::MAX are large
    set(4, 32, false),
    // 16 classes: every k code is a class
    set(16, 6, false),
    // Wide signed codes, an odd C
    set(7, 30, true),
    // The widest the driver carries: E_W = 64
    set(3, 62, true),
];

const CYCLES: usize = 3000;

impl Set {
    fn e_w(&self) -> u32 {
        self.y_w + 2
    }
    fn k_w(&self) -> u32 {
        bits_for(self.c)
    }
    fn min_code(&self) -> u64 {
        if self.y_s { 1u64 << (self.y_w - 1) } else { 0 }
    }
    fn max_code(&self) -> u64 {
        if self.y_s { mask(self.y_w) >> 1 } else { mask(self.y_w) }
    }
}

/// The value of a `w`-bit code, two's complement if `signed`.
fn value(bits: u64, w: u32, signed: bool) -> i128 {
    let v = i128::from(bits & mask(w));
    if signed && (v >> (w - 1)) & 1 == 1 { v - (1i128 << w) } else { v }
}

/// One set's inputs in one cycle.
#[derive(Debug, Clone)]
struct In {
    cap: bool,
    rot: bool,
    scan: bool,
    k: u64,
    y: Vec<u64>,
    t: Vec<u64>,
}

/// A code drawn with the extremes often.
fn any_code(s: &Set, rng: &mut Rng) -> u64 {
    match rng.next() % 8 {
        0 => s.min_code(),
        1 => s.max_code(),
        2 => 0,
        3 => mask(s.y_w),
        _ => rng.next() & mask(s.y_w),
    }
}

/// A target vector: random, one-hot, all equal, its largest value at
/// several indices, or extremes.
fn targets(s: &Set, rng: &mut Rng) -> Vec<u64> {
    let c = s.c;
    match rng.next() % 6 {
        0 => {
            let hot = (rng.next() % c as u64) as usize;
            let (lo, hi) = if rng.coin() { (0, 1) } else { (s.min_code(), s.max_code()) };
            (0..c).map(|k| if k == hot { hi } else { lo }).collect()
        }
        1 => vec![any_code(s, rng); c],
        2 => {
            // A largest value repeated: the first index must win.
            let mut v: Vec<u64> = (0..c).map(|_| any_code(s, rng)).collect();
            let big = s.max_code();
            for _ in 0..2 {
                let at = (rng.next() % c as u64) as usize;
                v[at] = big;
            }
            v
        }
        3 => (0..c).map(|_| if rng.coin() { s.min_code() } else { s.max_code() }).collect(),
        _ => (0..c).map(|_| any_code(s, rng)).collect(),
    }
}

/// One set's stimulus: a capture, rotations and idle cycles, rotations
/// until the rings are back in place, usually a pass (scan with k = 0 ..
/// C - 1 and rot), then walks of k = 0 .. C - 1 with rotation and idle
/// cycles with random k, and again. Noise on y and t outside captures.
fn stimulus(s: &Set, cycles: usize, rng: &mut Rng) -> Vec<In> {
    let c = s.c as u64;
    let mut out: Vec<In> = Vec::with_capacity(cycles + 64);
    let full_k = 1u64 << s.k_w();
    let noise = |rng: &mut Rng| -> (Vec<u64>, Vec<u64>) {
        ((0..s.c).map(|_| rng.next() & mask(s.y_w)).collect(), (0..s.c).map(|_| rng.next() & mask(s.y_w)).collect())
    };
    let push = |out: &mut Vec<In>, rng: &mut Rng, rot: bool, scan: bool, k: u64| {
        let (y, t) = noise(rng);
        out.push(In { cap: false, rot, scan, k, y, t });
    };
    while out.len() < cycles {
        // Capture
        let y = (0..s.c).map(|_| any_code(s, rng)).collect();
        let t = targets(s, rng);
        out.push(In { cap: true, rot: false, scan: false, k: rng.next() % full_k, y, t });
        let mut phase = 0u64;
        // Rotations and idle cycles
        for _ in 0..rng.range(0, 2 * c as i64) {
            let rot = rng.coin();
            let k = rng.next() % full_k;
            push(&mut out, rng, rot, false, k);
            phase = (phase + u64::from(rot)) % c;
        }
        // Back in place
        while phase != 0 {
            let rot = rng.chance(80);
            let k = rng.next() % full_k;
            push(&mut out, rng, rot, false, k);
            phase = (phase + u64::from(rot)) % c;
        }
        // A pass (sometimes none: the last pass's k* stays)
        if rng.chance(85) {
            for k in 0..c {
                push(&mut out, rng, true, true, k);
            }
        }
        // The deltas' walks over k with rotation, idle cycles between
        for _ in 0..rng.range(1, 3) {
            for k in 0..c {
                push(&mut out, rng, true, false, k);
            }
            for _ in 0..rng.range(0, 3) {
                let k = rng.next() % full_k;
                push(&mut out, rng, false, false, k);
            }
        }
    }
    out.truncate(cycles);
    out
}

/// What the stimulus exercised, per set.
#[derive(Debug, Default, Clone)]
struct Stats {
    e_compared: usize,
    kstar_compared: usize,
    kstar_high: usize,
    passes: usize,
    /// passes whose largest target also appears after its first index
    repeated_max: usize,
    /// e at the most negative or most positive difference
    e_extreme: usize,
}

/// Compares the simulation's output with the model, cycle by cycle.
fn check(sets: &[Set], stim: &[Vec<In>], rows: &[Vec<u128>]) -> Result<Vec<Stats>, String> {
    let mut stats = vec![Stats::default(); sets.len()];
    for (i, s) in sets.iter().enumerate() {
        let st = &mut stats[i];
        // The rings (None before the first capture), the rotation since
        // the capture, the targets as captured, the pass in progress and
        // the last pass's k*.
        let mut ring: Option<(Vec<u64>, Vec<u64>)> = None;
        let mut phase = 0usize;
        let mut captured_t: Vec<u64> = Vec::new();
        let mut pass_pos: Option<usize> = None;
        let mut kstar: Option<u64> = None;
        for (cy, (got, x)) in rows.iter().zip(&stim[i]).enumerate() {
            let (e, ks) = (got[2 * i] as u64, got[2 * i + 1] as u64);
            let ctx = || format!("cycle {cy}, set {i} ({s:?}, E_W {}), inputs cap {} rot {} scan {} k {}", s.e_w(), x.cap, x.rot, x.scan, x.k);
            if let Some((y, t)) = &ring {
                let exact = value(y[0], s.y_w, s.y_s) - value(t[0], s.y_w, s.y_s);
                let want = (exact as u64) & mask(s.e_w());
                if e != want {
                    return Err(format!("{}: e {e:#x}, expected {want:#x} (y {:#x} - t {:#x} = {exact})", ctx(), y[0], t[0]));
                }
                st.e_compared += 1;
                // The differences' extremes: +-(2^Y_W - 1) either way.
                if exact.abs() == (1i128 << s.y_w) - 1 {
                    st.e_extreme += 1;
                }
            }
            if !x.scan {
                if let Some(k_star) = kstar {
                    let want = u64::from(x.k == k_star);
                    if ks != want {
                        return Err(format!("{}: kstar {ks}, expected {want} (k* = {k_star}, targets as captured {captured_t:x?})", ctx()));
                    }
                    st.kstar_compared += 1;
                    st.kstar_high += want as usize;
                }
            }
            // The edge
            if x.scan {
                let pos = if x.k == 0 { 0 } else { pass_pos.ok_or_else(|| format!("{}: the stimulus scans outside a pass", ctx()))? };
                if x.k != pos as u64 || !x.rot || x.cap || (pos == 0 && phase != 0) {
                    return Err(format!("{}: the stimulus breaks a pass (step {pos}, rotation {phase})", ctx()));
                }
                if pos + 1 == s.c {
                    // k*: the first index of the largest target.
                    let vals: Vec<i128> = captured_t.iter().map(|&b| value(b, s.y_w, s.y_s)).collect();
                    let max = *vals.iter().max().unwrap();
                    let first = vals.iter().position(|&v| v == max).unwrap();
                    if vals[first + 1..].contains(&max) {
                        st.repeated_max += 1;
                    }
                    kstar = Some(first as u64);
                    st.passes += 1;
                    pass_pos = None;
                } else {
                    pass_pos = Some(pos + 1);
                }
            } else {
                pass_pos = None;
            }
            if x.cap {
                ring = Some((x.y.clone(), x.t.clone()));
                captured_t.clone_from(&x.t);
                phase = 0;
            } else if x.rot {
                if let Some((y, t)) = &mut ring {
                    y.rotate_left(1);
                    t.rotate_left(1);
                }
                phase = (phase + 1) % s.c;
            }
        }
    }
    Ok(stats)
}

/// The top: an instance per set, its ports suffixed by the set's index;
/// per set the inputs cap, rot, scan, k, then y and t per class, the
/// outputs e and kstar.
fn top(sets: &[Set]) -> Top {
    let mut top = Top::default();
    for (i, s) in sets.iter().enumerate() {
        ["cap", "rot", "scan"].iter().for_each(|n| top.input(format!("{n}{i}"), 1));
        top.input(format!("k{i}"), s.k_w());
        for k in 0..s.c {
            top.input(format!("y{i}_{k}"), s.y_w);
            top.input(format!("t{i}_{k}"), s.y_w);
        }
        top.output(format!("e{i}"), s.e_w());
        top.output(format!("kstar{i}"), 1);
        let y: Vec<String> = (0..s.c).rev().map(|k| format!("y{i}_{k}")).collect();
        let t: Vec<String> = (0..s.c).rev().map(|k| format!("t{i}_{k}")).collect();
        writeln!(
            top.body,
            "fptgen_fb_error #(.C({}), .Y_W({}), .Y_S({}), .E_W({})) u{i} (.clk(clk), .cap(cap{i}), .y({{{}}}), .t({{{}}}), .rot(rot{i}), .scan(scan{i}), .k(k{i}), .e(e{i}), .kstar(kstar{i}));",
            s.c,
            s.y_w,
            u8::from(s.y_s),
            s.e_w(),
            y.join(", "),
            t.join(", ")
        )
        .unwrap();
    }
    top
}

#[test]
fn fb_error_matches_the_header() {
    require_tool("verilator", "--version");
    let dir = scratch("rtl_fb_error");
    let mut rng = Rng(0xe4_40_12);
    let stim: Vec<Vec<In>> = SETS.iter().map(|s| stimulus(s, CYCLES, &mut rng)).collect();
    let rows: Vec<Vec<u128>> = (0..CYCLES)
        .map(|cy| {
            let mut row = Vec::new();
            for x in stim.iter().map(|v| &v[cy]) {
                row.extend([u64::from(x.cap), u64::from(x.rot), u64::from(x.scan), x.k].map(u128::from));
                row.extend(x.y.iter().zip(&x.t).flat_map(|(&y, &t)| [u128::from(y), u128::from(t)]));
            }
            row
        })
        .collect();
    let out = top(&SETS).run("error_top", true, &dir, &["fptgen_fb_error.v"], &rows);
    let stats = check(&SETS, &stim, &out).unwrap_or_else(|e| panic!("{e} (files in {})", dir.display()));
    for (i, (s, st)) in SETS.iter().zip(&stats).enumerate() {
        assert!(st.e_compared == CYCLES - 1, "set {i} ({s:?}): {st:?}");
        assert!(st.passes > 20 && st.kstar_compared > CYCLES / 2, "set {i} ({s:?}): too few passes: {st:?}");
        assert!(st.kstar_high > 20 && st.kstar_high < st.kstar_compared, "set {i} ({s:?}): kstar constant: {st:?}");
        if s.c > 1 {
            assert!(st.repeated_max > 5, "set {i} ({s:?}): no repeated largest target: {st:?}");
        }
        assert!(st.e_extreme > 0, "set {i} ({s:?}): e never at an extreme: {st:?}");
    }
    let _ = fs::remove_dir_all(&dir);
}
