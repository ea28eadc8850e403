//! `rtl/fptgen_fb_step.v` in Verilator against a model written here from
//! its header (and docs/training.md, "Feedback rules", "Stochastic
//! rounding" and "Noise"): every cycle `u_step` is loaded with `v`'s step,
//! `R(v, SHIFT_W)` for a weight (`u_bias` = 0) or `R(v, SHIFT_B)` for a
//! bias, saturated to S_W bits; `R` is `v / 2^k` rounded to nearest with
//! ties to even for k > 0, `v` for k = 0 and `v * 2^-k` for k < 0, and for
//! a tensor with STOCH = 1 it is `floor((v + r) / 2^k)`, r = (b fresh
//! bits of the tensor's 32-bit Galois LFSR, TAPS 0xA3000000, the first
//! output bit least significant) << (k - b), b = min(k, 32). Each LFSR is
//! reset to its seed by `rst` and moves on to its next b bits at a cycle
//! with `u_wr` whose `u_bias` selects its tensor, so the n-th written
//! parameter of a tensor gets the n-th draw.
//!
//! Several parameter sets in one build: the generator's shapes (a dense
//! layer's 32-bit products into 10-bit steps; 4-bit weights rounded
//! stochastically; int32 biases with left shifts; a conv2d's wide sums)
//! and the edges (2-bit values and steps, shifts of 0, 1, 31, 32, 33+ and
//! +-64, one tensor stochastic and the other not). Random stimulus with
//! ties, values at and around the saturation bounds and the extremes,
//! random writes of either tensor and rare resets; every bit of `u_step`
//! compared in every cycle. The test also checks that the stimulus hit
//! ties, saturation and stochastic rounding in both directions, so it
//! cannot pass vacuously. Fails (does not skip) without Verilator.

use std::fmt::Write as _;
use std::fs;

use crate::common::{mask, require_tool, scratch, Rng, Top};

/// One instance's parameters.
#[derive(Debug, Clone, Copy)]
struct Set {
    in_w: u32,
    shift_w: i32,
    shift_b: i32,
    s_w: u32,
    stoch_w: bool,
    stoch_b: bool,
    seed_w: u32,
    seed_b: u32,
}

#[allow(clippy::too_many_arguments)]
const fn set(in_w: u32, shift_w: i32, shift_b: i32, s_w: u32, stoch_w: bool, stoch_b: bool, seed_w: u32, seed_b: u32) -> Set {
    Set { in_w, shift_w, shift_b, s_w, stoch_w, stoch_b, seed_w, seed_b }
}

const SETS: [Set; 9] = [
    // MNIST-like hidden dense layer: 23-bit deltas times 9-bit inputs,
    // steps of 8-bit weights (S_W = PW + 2 = 10), to nearest
    set(32, 17, 5, 10, false, false, 1, 1),
    // 4-bit weights and biases rounded stochastically (step_rounding: auto)
    set(20, 12, 3, 6, true, true, 0x9e37_79b9, 0x7f4a_7c15),
    // No shift for the weights, a left shift for the biases, saturating
    set(16, 0, -3, 12, false, false, 1, 1),
    // A conv2d's wide sum: weights stochastic beyond 32 bits, int32
    // biases (S_W 34) with a left shift
    set(48, 40, -2, 34, true, false, 0xffff_ffff, 1),
    // The narrowest values and steps
    set(2, 1, 1, 2, true, false, 0x8000_0000, 1),
    // The widest: shifts of +-64 on 64-bit values into 64-bit steps
    set(64, 64, -64, 64, true, false, 0x1234_5678, 1),
    // Weights to nearest, biases stochastic
    set(10, 6, 2, 4, false, true, 1, 0xdead_beef),
    // Shifts of exactly 32 and 31, both stochastic
    set(40, 32, 31, 8, true, true, 0x0000_0001, 0xa300_0000),
    // A shift of IN_W - 1 (ties at +-2^22) and one beyond the value
    set(24, 23, 64, 3, false, false, 1, 1),
];

const CYCLES: usize = 6000;

/// The docs' 32-bit Galois LFSR mask.
const TAPS: u32 = 0xA300_0000;

/// `n` steps of the LFSR from `s`: their output bits (the first least
/// significant) and the state after them.
fn lfsr(mut s: u32, n: u32) -> (u64, u32) {
    let mut bits = 0u64;
    for i in 0..n {
        let o = s & 1;
        bits |= u64::from(o) << i;
        s = (s >> 1) ^ if o == 1 { TAPS } else { 0 };
    }
    (bits, s)
}

/// The value of a `w`-bit code, two's complement.
fn signed(bits: u64, w: u32) -> i128 {
    let v = i128::from(bits & mask(w));
    if (v >> (w - 1)) & 1 == 1 { v - (1i128 << w) } else { v }
}

fn saturate(v: i128, w: u32) -> i128 {
    v.clamp(-(1i128 << (w - 1)), (1i128 << (w - 1)) - 1)
}

/// R(v, k) to nearest, ties to even (exact, before saturation).
fn nearest(v: i128, k: i32) -> i128 {
    if k <= 0 {
        return v << (-k);
    }
    let q = v >> k;
    let rem = v - (q << k);
    let half = 1i128 << (k - 1);
    if rem > half || (rem == half && q & 1 == 1) { q + 1 } else { q }
}

/// What one tensor does: its shift and whether it rounds stochastically.
#[derive(Debug, Clone, Copy)]
struct Tensor {
    shift: i32,
    stoch: bool,
}

impl Set {
    fn tensor(&self, bias: bool) -> Tensor {
        if bias {
            Tensor { shift: self.shift_b, stoch: self.stoch_b }
        } else {
            Tensor { shift: self.shift_w, stoch: self.stoch_w }
        }
    }
}

/// One set's inputs in one cycle.
#[derive(Debug, Clone, Copy)]
struct In {
    v: u64,
    bias: bool,
    wr: bool,
}

/// A value for tensor `t`: ties (nearest), values around the inputs that
/// round to the saturation bounds, the extremes, or random bits.
fn pick(s: &Set, t: Tensor, rng: &mut Rng) -> u64 {
    let lo = -(1i128 << (s.in_w - 1));
    let hi = (1i128 << (s.in_w - 1)) - 1;
    let fits = |v: i128| (lo..=hi).contains(&v);
    let k = t.shift;
    let r = rng.next() % 10;
    let v: i128 = if r < 3 && k > 0 && !t.stoch {
        // A tie: an odd or even quotient plus one half
        let q = signed(rng.next(), s.in_w) >> k.min(127);
        (q << k) + (1i128 << (k - 1))
    } else if r < 5 {
        // Around the value that rounds to a saturation bound
        let bound = if rng.coin() { 1i128 << (s.s_w - 1) } else { -(1i128 << (s.s_w - 1)) };
        // (2^(S_W - 1) << 64 wraps i128: then fits() refuses it below)
        let at = if k >= 0 { bound << k } else { bound >> (-k) };
        at.saturating_add(i128::from(rng.range(-3, 3)))
    } else if r < 7 {
        [lo, hi, 0, -1, 1][(rng.next() % 5) as usize]
    } else {
        signed(rng.next(), s.in_w)
    };
    let v = if fits(v) { v } else { signed(rng.next(), s.in_w) };
    (v as u64) & mask(s.in_w)
}

/// Random stimulus per set; the shared reset per cycle.
fn stimulus(rng: &mut Rng) -> (Vec<bool>, Vec<Vec<In>>) {
    let rst: Vec<bool> = (0..CYCLES).map(|_| rng.chance(1) && rng.coin()).collect();
    let stim = SETS
        .iter()
        .map(|s| {
            (0..CYCLES)
                .map(|_| {
                    let bias = rng.coin();
                    In { v: pick(s, s.tensor(bias), rng), bias, wr: rng.chance(40) }
                })
                .collect()
        })
        .collect();
    (rst, stim)
}

/// What the stimulus exercised, per set.
#[derive(Debug, Default, Clone)]
struct Stats {
    compared: usize,
    ties: usize,
    saturated: usize,
    /// stochastic steps rounded up (above the floor) and not
    rounded_up: usize,
    rounded_down: usize,
    /// LFSR advances of the weights' and the biases' tensors
    draws: [usize; 2],
}

/// Compares the simulation's output with the model, cycle by cycle.
fn check(rst: &[bool], stim: &[Vec<In>], rows: &[Vec<u128>]) -> Result<Vec<Stats>, String> {
    let mut stats = vec![Stats::default(); SETS.len()];
    for (i, s) in SETS.iter().enumerate() {
        let st = &mut stats[i];
        // The driver's reset edge loaded the seeds and a step of v = 0.
        let mut lfsr_state = [s.seed_w, s.seed_b];
        let mut step: u64 = 0;
        for (cy, (got, x)) in rows.iter().zip(&stim[i]).enumerate() {
            let got = got[i] as u64;
            if got != step {
                let prev = cy.checked_sub(1).map(|p| stim[i][p]);
                return Err(format!(
                    "cycle {cy}, set {i} ({s:?}): u_step {got:#x}, expected {step:#x} (the step of cycle {}'s inputs {prev:x?})",
                    cy as i64 - 1
                ));
            }
            st.compared += 1;
            // The edge: the step of this cycle's v for the selected tensor,
            // with that tensor's current draw.
            let t = s.tensor(x.bias);
            let tix = usize::from(x.bias);
            let v = signed(x.v, s.in_w);
            let exact = if t.stoch {
                let b = t.shift.min(32) as u32;
                let (bits, _) = lfsr(lfsr_state[tix], b);
                let r = i128::from(bits) << (t.shift as u32 - b);
                let q = (v + r) >> t.shift;
                if q == v >> t.shift { st.rounded_down += 1 } else { st.rounded_up += 1 }
                q
            } else {
                if t.shift > 0 && v - ((v >> t.shift) << t.shift) == 1i128 << (t.shift - 1) {
                    st.ties += 1;
                }
                nearest(v, t.shift)
            };
            let want = saturate(exact, s.s_w);
            if want != exact {
                st.saturated += 1;
            }
            step = (want as u64) & mask(s.s_w);
            if rst[cy] {
                lfsr_state = [s.seed_w, s.seed_b];
            } else if x.wr && t.stoch {
                lfsr_state[tix] = lfsr(lfsr_state[tix], t.shift.min(32) as u32).1;
                st.draws[tix] += 1;
            }
        }
    }
    Ok(stats)
}

/// The top: rst, then an instance per set, its ports suffixed by the
/// set's index: inputs v, bias and wr, output step.
fn top() -> Top {
    let mut top = Top::default();
    top.input("rst", 1);
    for (i, s) in SETS.iter().enumerate() {
        top.input(format!("v{i}"), s.in_w);
        top.input(format!("bias{i}"), 1);
        top.input(format!("wr{i}"), 1);
        top.output(format!("step{i}"), s.s_w);
        writeln!(
            top.body,
            "fptgen_fb_step #(.IN_W({}), .SHIFT_W({}), .SHIFT_B({}), .S_W({}), .STOCH_W({}), .STOCH_B({}), .SEED_W(32'h{:08x}), .SEED_B(32'h{:08x})) u{i} (\n    \
             .clk(clk), .rst(rst), .v(v{i}), .u_bias(bias{i}), .u_wr(wr{i}), .u_step(step{i}));",
            s.in_w,
            s.shift_w,
            s.shift_b,
            s.s_w,
            u8::from(s.stoch_w),
            u8::from(s.stoch_b),
            s.seed_w,
            s.seed_b
        )
        .unwrap();
    }
    top
}

#[test]
fn fb_step_matches_the_header() {
    require_tool("verilator", "--version");
    let dir = scratch("rtl_fb_step");
    let mut rng = Rng(0x57e9);
    let (rst, stim) = stimulus(&mut rng);
    // One reset edge with v = 0, then per cycle the stimulus; every
    // u_step is the register as of the last edge.
    let mut rows: Vec<Vec<u128>> = vec![std::iter::once(1).chain(SETS.iter().flat_map(|_| [0, 0, 0])).collect()];
    rows.extend((0..CYCLES).map(|cy| {
        std::iter::once(u128::from(rst[cy])).chain(stim.iter().map(|v| v[cy]).flat_map(|x| [u128::from(x.v), u128::from(x.bias), u128::from(x.wr)])).collect()
    }));
    let out = top().run("step_top", true, &dir, &["fptgen_fb_step.v", "fptgen_round_shift.v", "fptgen_lfsr.v", "fptgen_lfsr_advance.v"], &rows);
    let stats = check(&rst, &stim, &out[1..]).unwrap_or_else(|e| panic!("{e} (files in {})", dir.display()));
    assert!(rst.iter().filter(|&&r| r).count() >= 10, "too few resets");
    for (i, (s, st)) in SETS.iter().zip(&stats).enumerate() {
        assert_eq!(st.compared, CYCLES, "set {i}");
        let nearest_right = [(s.shift_w, s.stoch_w), (s.shift_b, s.stoch_b)].iter().any(|&(k, st)| k > 0 && k < 64 && !st);
        assert!(!nearest_right || st.ties > 200, "set {i} ({s:?}): too few ties: {st:?}");
        if s.stoch_w || s.stoch_b {
            // (set 4's seed 0x80000000 outputs 31 zeros after every reset)
            assert!(st.rounded_up > 50 && st.rounded_down > 50, "set {i} ({s:?}): stochastic rounding one-sided: {st:?}");
        }
        for (t, stoch) in [s.stoch_w, s.stoch_b].into_iter().enumerate() {
            assert!(!stoch || st.draws[t] > 500, "set {i} ({s:?}): tensor {t} drew too little: {st:?}");
        }
    }
    // Saturation where a step can exceed S_W bits (the sets with room).
    for i in [0, 1, 2, 3, 5, 6, 7] {
        assert!(stats[i].saturated > 200, "set {i} ({:?}): too few saturated steps: {:?}", SETS[i], stats[i]);
    }
    let _ = fs::remove_dir_all(&dir);
}
