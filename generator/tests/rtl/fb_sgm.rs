//! `rtl/fptgen_fb_sgm.v` (with its real `fptgen_param_mem` ROMs and
//! `fptgen_round_shift`) in Verilator against a model written here from
//! its header and docs/training.md ("Synthetic-gradient modules"): with
//! W = N_OUT + C, the u ring holds [a << SHIFT_A, t << SHIFT_T] (a_cap
//! loads the output codes, t_cap the targets, each A_S / Y_S signed);
//! h_start in cycle c makes h[k] = sat_E_W(R(c[k] + sum_i v[k][i] * u[i],
//! SHIFT_H)) (R to nearest, ties to even), one product per cycle from
//! cycle c + 1, h[k] pushed into the h ring two cycles after its last
//! product (at the edge ending cycle c + (k + 1) * W + 2), so the ring is
//! complete C * W + 2 cycles after the cycle following h_start; in the
//! delta loop d_seed reads u[0][0] and each d_step moves to the next code
//! of u (wrapping after N_OUT * C) and rotates the h ring, so s_u =
//! u[o][k] and s_h = h[k] at step o * C + k.
//!
//! Seven parameter sets in one build (MNIST fc1's 200 outputs of 4-bit
//! relu codes against a 16-bit output, 10 classes; one output and one
//! class with 1-bit codes; 3 classes over 8-bit codes with SHIFT_H = 1,
//! where ties are common; unsigned codes with large shifts; 24- and 32-bit
//! codes into a 34-bit h; a 3-bit h that saturates nearly always; SHIFT_H
//! = 31) with random ROM images and c (extremes included), random legal
//! stimulus (captures of either part, repeated h computations on held
//! codes, delta loops of N_OUT * C steps with random gaps, partial and
//! wrapping ones, d_seed at random times, input data changing without
//! captures), a reset at the start and one in the middle. s_h and s_u are
//! compared every cycle whenever the model knows them (s_h from the first
//! complete h computation after a reset, s_u from the first d_seed after
//! one); the test also checks that the stimulus saturated h both ways,
//! hit rounding ties, wrapped u and compared most cycles, so it cannot
//! pass vacuously; a second test builds the module with s_u read one code
//! late and checks that the comparison catches it. Fails (does not skip)
//! without Verilator.

use std::collections::VecDeque;
use std::fmt::Write as _;
use std::fs;

use crate::common::{expect_caught, mask, mutated_rtl, require_tool, scratch, Rng, Top};

/// One instance's parameters (the ROM images and c are drawn per set).
#[derive(Debug, Clone, Copy)]
struct Set {
    n: usize,
    c: usize,
    a_w: u32,
    a_s: bool,
    y_w: u32,
    y_s: bool,
    sh_a: u32,
    sh_t: u32,
    sh_h: u32,
    e_w: u32,
}

#[allow(clippy::too_many_arguments)]
const fn set(n: usize, c: usize, a_w: u32, a_s: bool, y_w: u32, y_s: bool, sh_a: u32, sh_t: u32, sh_h: u32, e_w: u32) -> Set {
    Set { n, c, a_w, a_s, y_w, y_s, sh_a, sh_t, sh_h, e_w }
}

const SETS: [Set; 7] = [
    // MNIST's fc1 under sgm: 200 outputs quantized_relu(4,2) (F_a = 2),
    // output ap_fixed<16,8> (F_y = 8): sa = 6, st = 0, E = 18
    set(200, 10, 4, false, 16, true, 6, 0, 9, 18),
    // The smallest: one output, one class, 1-bit codes (W = 2)
    set(1, 1, 1, false, 1, true, 0, 0, 0, 10),
    // Three classes (k wraps before a power of two), W = 8, ties common
    set(5, 3, 8, true, 8, true, 0, 0, 1, 10),
    // Unsigned codes, large alignment shifts, U_DEPTH = 10
    set(2, 5, 4, false, 8, false, 7, 3, 4, 10),
    // Wide codes: a 24-bit signed output shifted by 8, 32-bit targets,
    // a 34-bit h
    set(3, 2, 24, true, 32, true, 8, 0, 7, 34),
    // A 3-bit h: saturates nearly always (SHIFT_H = 0: no rounding)
    set(4, 2, 8, true, 1, false, 2, 9, 0, 3),
    // The largest SHIFT_H
    set(6, 4, 16, true, 12, true, 0, 4, 31, 12),
];

const CYCLES: usize = 26000;
/// Reset cycles: the start, and one in the middle of every set's traffic.
const RESETS: [usize; 3] = [0, 1, 13001];

/// The value of a `w`-bit code, two's complement if `signed`.
fn value(bits: u64, w: u32, signed: bool) -> i128 {
    let v = i128::from(bits & mask(w));
    if signed && (v >> (w - 1)) & 1 == 1 { v - (1i128 << w) } else { v }
}

/// R(v, k): v / 2^k to nearest, ties to even (v for k = 0). Returns the
/// value and whether it was a tie.
fn round_shift(v: i128, k: u32) -> (i128, bool) {
    if k == 0 {
        return (v, false);
    }
    let q = v >> k;
    let rem = v - (q << k);
    let half = 1i128 << (k - 1);
    let up = rem > half || (rem == half && q & 1 == 1);
    (q + i128::from(up), rem == half)
}

/// The drawn contents of one set: v (C x W), u (N x C), c.
struct Tables {
    v: Vec<i64>,
    u: Vec<i64>,
    cv: Vec<i64>,
}

fn code8(rng: &mut Rng) -> i64 {
    match rng.next() % 10 {
        0 => 127,
        1 => -127,
        2 => -128,
        3 => 0,
        _ => rng.range(-128, 127),
    }
}

fn tables(s: &Set, rng: &mut Rng) -> Tables {
    let w = s.n + s.c;
    let v = (0..s.c * w).map(|_| code8(rng)).collect();
    let u = (0..s.n * s.c).map(|_| code8(rng)).collect();
    // c[0] within a few of h's steps of 0 (so a set of one class does
    // not saturate h by c alone), the others also extreme
    let near = 1i64 << (s.e_w - 2 + s.sh_h).min(31);
    let cv = (0..s.c)
        .map(|k| match if k == 0 { 3 } else { rng.next() % 8 } {
            0 => i64::from(i32::MAX),
            1 => i64::from(i32::MIN),
            2 => 0,
            3 => rng.range(-near, near - 1),
            _ => i64::from(rng.next() as u32 as i32),
        })
        .collect();
    Tables { v, u, cv }
}

/// One set's inputs in one cycle (a, t: new data on the port, else held).
#[derive(Debug, Clone, Default)]
struct In {
    a_cap: bool,
    t_cap: bool,
    h_start: bool,
    d_seed: bool,
    d_step: bool,
    a: Option<Vec<u64>>,
    t: Option<Vec<u64>>,
}

/// A random code of `w` bits, extremes often.
fn pick(rng: &mut Rng, w: u32, signed: bool) -> u64 {
    match rng.next() % 8 {
        0 => 0,
        1 => mask(w),
        2 if signed => mask(w) >> 1,
        2 => 1,
        3 if signed => 1u64 << (w - 1),
        _ => rng.next() & mask(w),
    }
}

/// The stimulus of one set: episodes of captures, one h computation, the
/// wait the controller keeps (C * W + 2 cycles after the one following
/// h_start, nothing but d_seed and data changes), then a delta loop. No
/// control input is high in a reset cycle; after a reset both parts of u
/// are captured again before the next h_start.
fn stimulus(s: &Set, rng: &mut Rng) -> Vec<In> {
    let w = s.n + s.c;
    let mut seq: Vec<In> = Vec::with_capacity(CYCLES + 4 * w * s.c);
    let new_a = |rng: &mut Rng| Some((0..s.n).map(|_| pick(rng, s.a_w, s.a_s)).collect::<Vec<u64>>());
    let new_t = |rng: &mut Rng| Some((0..s.c).map(|_| pick(rng, s.y_w, s.y_s)).collect::<Vec<u64>>());
    // Appends x, after idle cycles in place of reset cycles.
    let push = |seq: &mut Vec<In>, x: In| {
        while RESETS.contains(&seq.len()) {
            seq.push(In::default());
        }
        seq.push(x);
    };
    // Data changes without a capture, and d_seed at random.
    let noise = |rng: &mut Rng, seed_ok: bool| In {
        a: if rng.chance(10) { new_a(rng) } else { None },
        t: if rng.chance(10) { new_t(rng) } else { None },
        d_seed: seed_ok && rng.chance(3),
        ..In::default()
    };
    let (mut last_a, mut last_t) = (None::<usize>, None::<usize>);
    let reset_since = |last: Option<usize>, now: usize| last.is_none_or(|l| RESETS.iter().any(|&r| r > l && r <= now));
    while seq.len() < CYCLES {
        // Captures (either part, or both, in one cycle or two), gaps.
        for _ in 0..rng.range(0, 4) {
            push(&mut seq, noise(rng, true));
        }
        let now = seq.len() + 8;
        let cap_a = reset_since(last_a, now) || rng.chance(70);
        let cap_t = reset_since(last_t, now) || rng.chance(60);
        let together = cap_a && cap_t && rng.coin();
        let mut caps: Vec<(bool, bool)> = Vec::new();
        if together {
            caps.push((true, true));
        } else {
            if cap_a {
                caps.push((true, false));
            }
            if cap_t {
                caps.push((false, true));
            }
            if caps.len() == 2 && rng.coin() {
                caps.swap(0, 1);
            }
        }
        for (ca, ct) in caps {
            let x = In {
                a_cap: ca,
                t_cap: ct,
                a: if ca { new_a(rng) } else { None },
                t: if ct { new_t(rng) } else { None },
                // fb_top's t_cap is its d_seed
                d_seed: ct && rng.coin(),
                ..In::default()
            };
            push(&mut seq, x);
            if ca {
                last_a = Some(seq.len() - 1);
            }
            if ct {
                last_t = Some(seq.len() - 1);
            }
            for _ in 0..rng.range(0, 2) {
                push(&mut seq, noise(rng, true));
            }
        }
        // h, and the controller's wait.
        push(&mut seq, In { h_start: true, d_seed: rng.chance(20), a: if rng.chance(20) { new_a(rng) } else { None }, ..In::default() });
        for _ in 0..s.c * w + 2 {
            push(&mut seq, noise(rng, true));
        }
        // The delta loop: seeded (mostly), N * C steps (or fewer, or
        // wrapping past the end), random gaps with data changes.
        if rng.chance(70) {
            push(&mut seq, In { d_seed: true, ..noise(rng, false) });
        }
        let full = s.n * s.c;
        let steps = match rng.next() % 10 {
            0 => rng.range(0, full as i64) as usize,
            1 => 2 * full + rng.range(1, 5) as usize,
            _ => full,
        };
        let gaps = rng.chance(50);
        for _ in 0..steps {
            while gaps && rng.chance(25) {
                let mut x = noise(rng, true);
                // Captures of the next sample may come during the loop.
                if rng.chance(3) {
                    x.a_cap = true;
                    x.a = new_a(rng);
                    last_a = Some(seq.len());
                }
                push(&mut seq, x);
            }
            push(&mut seq, In { d_step: true, ..noise(rng, false) });
        }
    }
    seq.truncate(CYCLES);
    seq
}

/// The top: rst, then an instance per set, its ports suffixed by the
/// set's index: inputs a_cap, t_cap, h_start, d_seed, d_step, a per output
/// and t per class, outputs s_h and s_u.
fn top(sets: &[Set], tabs: &[Tables]) -> Top {
    let mut top = Top::default();
    top.input("rst", 1);
    for (i, (s, tb)) in sets.iter().zip(tabs).enumerate() {
        ["a_cap", "t_cap", "h_start", "d_seed", "d_step"].iter().for_each(|n| top.input(format!("{n}{i}"), 1));
        (0..s.n).for_each(|j| top.input(format!("a{i}_{j}"), s.a_w));
        (0..s.c).for_each(|j| top.input(format!("t{i}_{j}"), s.y_w));
        top.output(format!("s_h{i}"), s.e_w);
        top.output(format!("s_u{i}"), 8);
        let a: Vec<String> = (0..s.n).rev().map(|j| format!("a{i}_{j}")).collect();
        let t: Vec<String> = (0..s.c).rev().map(|j| format!("t{i}_{j}")).collect();
        let cv: Vec<String> = tb.cv.iter().rev().map(|&c| format!("32'h{:08x}", c as u64 & 0xffff_ffff)).collect();
        writeln!(
            top.body,
            "fptgen_fb_sgm #(.N_OUT({}), .C({}), .A_W({}), .A_S({}), .Y_W({}), .Y_S({}), .SHIFT_A({}), .SHIFT_T({}), .SHIFT_H({}), .E_W({}),\n    \
             .C_VALUES({{{}}}), .V_FILE(\"sgm{i}_v.hex\"), .U_FILE(\"sgm{i}_u.hex\")) u{i} (\n    \
             .clk(clk), .rst(rst), .a_cap(a_cap{i}), .a_data({{{}}}), .t_cap(t_cap{i}), .t_data({{{}}}), .h_start(h_start{i}),\n    \
             .d_seed(d_seed{i}), .d_step(d_step{i}), .s_h(s_h{i}), .s_u(s_u{i}));",
            s.n,
            s.c,
            s.a_w,
            u8::from(s.a_s),
            s.y_w,
            u8::from(s.y_s),
            s.sh_a,
            s.sh_t,
            s.sh_h,
            s.e_w,
            cv.join(", "),
            a.join(", "),
            t.join(", ")
        )
        .unwrap();
    }
    top
}

/// The stimulus rows in `top`'s input order; a and t hold their last new
/// data (0 before the first).
fn stim_rows(sets: &[Set], stim: &[Vec<In>]) -> Vec<Vec<u128>> {
    let mut held: Vec<Vec<u64>> = sets.iter().map(|s| vec![0; s.n + s.c]).collect();
    (0..CYCLES)
        .map(|cy| {
            let mut row = vec![u128::from(RESETS.contains(&cy))];
            for ((s, v), held) in sets.iter().zip(stim).zip(&mut held) {
                let x = &v[cy];
                row.extend([x.a_cap, x.t_cap, x.h_start, x.d_seed, x.d_step].map(u128::from));
                if let Some(a) = &x.a {
                    held[..s.n].copy_from_slice(a);
                }
                if let Some(t) = &x.t {
                    held[s.n..].copy_from_slice(t);
                }
                row.extend(held.iter().map(|&d| u128::from(d)));
            }
            row
        })
        .collect()
}

/// What the stimulus exercised, per set.
#[derive(Debug, Default, Clone)]
struct Stats {
    /// h computations completed with known codes
    computed: usize,
    /// h values saturated to the largest and the smallest code
    sat_hi: usize,
    sat_lo: usize,
    /// h values neither saturated nor 0
    inside: usize,
    /// h values whose rounding was a tie
    ties: usize,
    /// s_h and s_u values compared
    cmp_h: usize,
    cmp_u: usize,
    /// d_step from u's last code back to its first
    u_wraps: usize,
}

/// One set's model: the captured parts of u (None: unknown), the h ring
/// (head first), pushes scheduled (the edge ending that cycle, value), and
/// the position in u of the delta loop.
struct Model {
    ua: Option<Vec<i128>>,
    ut: Option<Vec<i128>>,
    ring: Vec<Option<u64>>,
    pushes: VecDeque<(usize, Option<u64>)>,
    upos: Option<usize>,
}

fn describe(i: usize, s: &Set) -> String {
    format!("set {i} ({s:?})")
}

fn check(sets: &[Set], tabs: &[Tables], stim: &[Vec<In>], out: &[Vec<u128>]) -> Result<Vec<Stats>, String> {
    let rows: Vec<Vec<u64>> = out.iter().map(|r| r.iter().map(|&x| x as u64).collect()).collect();
    let mut stats = vec![Stats::default(); sets.len()];
    for (i, (s, tb)) in sets.iter().zip(tabs).enumerate() {
        let st = &mut stats[i];
        let w = s.n + s.c;
        let mut m = Model { ua: None, ut: None, ring: vec![None; s.c], pushes: VecDeque::new(), upos: None };
        for (cy, row) in rows.iter().enumerate() {
            let x = &stim[i][cy];
            let rst = RESETS.contains(&cy);
            let (got_h, got_u) = (row[2 * i], row[2 * i + 1]);
            // Outputs as of the last edge (unknown before the first reset).
            if cy > 0 {
                if let Some(h) = m.ring[0] {
                    if got_h != h {
                        return Err(format!(
                            "{}, cycle {cy}: s_h {got_h:#x}, expected {h:#x} (h ring head first: {:x?}; inputs {x:?})",
                            describe(i, s),
                            m.ring
                        ));
                    }
                    st.cmp_h += 1;
                }
                if let Some(p) = m.upos {
                    let want = tb.u[p] as u64 & 0xff;
                    if got_u != want {
                        return Err(format!(
                            "{}, cycle {cy}: s_u {got_u:#x}, expected {want:#x} (u[{}][{}], code {} of the delta loop)",
                            describe(i, s),
                            p / s.c,
                            p % s.c,
                            p
                        ));
                    }
                    st.cmp_u += 1;
                }
            }
            // The edge ending cycle cy.
            if rst {
                // The header promises nothing of a reset's effect on the
                // rings; the controller captures and computes again.
                m = Model { ua: None, ut: None, ring: vec![None; s.c], pushes: VecDeque::new(), upos: None };
                continue;
            }
            let push = match m.pushes.front() {
                Some(&(e, h)) if e == cy => {
                    m.pushes.pop_front();
                    Some(h)
                }
                _ => None,
            };
            assert!(!(push.is_some() && x.d_step), "stimulus: d_step in a push cycle");
            if push.is_some() || x.d_step {
                let head = m.ring.remove(0);
                m.ring.push(push.unwrap_or(head));
            }
            if x.h_start {
                assert!(m.pushes.is_empty() && !x.a_cap && !x.t_cap, "stimulus: h_start while busy or with a capture");
                let hs: Vec<Option<u64>> = (0..s.c)
                    .map(|k| {
                        let (ua, ut) = (m.ua.as_ref()?, m.ut.as_ref()?);
                        let sum: i128 = i128::from(tb.cv[k])
                            + ua.iter().chain(ut.iter()).enumerate().map(|(j, &u)| i128::from(tb.v[k * w + j]) * u).sum::<i128>();
                        let (r, tie) = round_shift(sum, s.sh_h);
                        let (lo, hi) = (-(1i128 << (s.e_w - 1)), (1i128 << (s.e_w - 1)) - 1);
                        st.ties += usize::from(tie);
                        st.sat_hi += usize::from(r > hi);
                        st.sat_lo += usize::from(r < lo);
                        st.inside += usize::from(r != 0 && (lo..=hi).contains(&r));
                        Some((r.clamp(lo, hi) as u64) & mask(s.e_w))
                    })
                    .collect();
                st.computed += usize::from(hs[0].is_some());
                for (k, h) in hs.into_iter().enumerate() {
                    m.pushes.push_back((cy + (k + 1) * w + 2, h));
                }
            }
            if x.a_cap {
                let a = x.a.as_ref().expect("a with a_cap");
                m.ua = Some(a.iter().map(|&b| value(b, s.a_w, s.a_s) << s.sh_a).collect());
            }
            if x.t_cap {
                let t = x.t.as_ref().expect("t with t_cap");
                m.ut = Some(t.iter().map(|&b| value(b, s.y_w, s.y_s) << s.sh_t).collect());
            }
            if x.d_seed {
                assert!(!x.d_step, "stimulus: d_seed with d_step");
                m.upos = Some(0);
            } else if x.d_step {
                if m.upos == Some(s.n * s.c - 1) {
                    st.u_wraps += 1;
                }
                m.upos = m.upos.map(|p| (p + 1) % (s.n * s.c));
            }
        }
    }
    Ok(stats)
}

/// Builds the top over `sets` (`sgm_src`: another `fptgen_fb_sgm.v`, a
/// path), runs the stimulus and compares every cycle.
fn run(name: &str, sets: &[Set], sgm_src: Option<String>) -> (Result<Vec<Stats>, String>, std::path::PathBuf) {
    let mut rng = Rng(0x5_6a1_0e);
    let tabs: Vec<Tables> = sets.iter().map(|s| tables(s, &mut rng)).collect();
    let stim: Vec<Vec<In>> = sets.iter().map(|s| stimulus(s, &mut rng)).collect();
    let dir = scratch(name);
    for (i, tb) in tabs.iter().enumerate() {
        let hex = |codes: &[i64]| codes.iter().map(|&c| format!("{:02x}\n", c as u64 & 0xff)).collect::<String>();
        fs::write(dir.join(format!("sgm{i}_v.hex")), hex(&tb.v)).unwrap();
        fs::write(dir.join(format!("sgm{i}_u.hex")), hex(&tb.u)).unwrap();
    }
    let sgm = sgm_src.unwrap_or_else(|| "fptgen_fb_sgm.v".to_string());
    let out = top(sets, &tabs).run("sgm_top", true, &dir, &[sgm.as_str(), "fptgen_param_mem.v", "fptgen_round_shift.v"], &stim_rows(sets, &stim));
    (check(sets, &tabs, &stim, &out).map_err(|e| format!("{e} (files in {})", dir.display())), dir)
}

#[test]
fn fb_sgm_matches_the_model() {
    require_tool("verilator", "--version");
    let (result, dir) = run("rtl_fb_sgm", &SETS, None);
    let stats = result.unwrap_or_else(|e| panic!("{e}"));
    for (i, (s, st)) in SETS.iter().zip(&stats).enumerate() {
        let ctx = format!("{}: {st:?}", describe(i, s));
        assert!(st.computed >= 4, "{ctx}: too few h computations");
        assert!(st.cmp_h >= CYCLES / 2 && st.cmp_u >= CYCLES / 3, "{ctx}: too few cycles compared");
        assert!(st.u_wraps >= 2, "{ctx}: u never wrapped");
        if s.e_w > 3 {
            assert!(st.inside >= 4, "{ctx}: too few h values neither saturated nor 0");
        }
        // (one class has one c, which may saturate h alone)
        if s.e_w <= 3 && s.c > 1 {
            assert!(st.sat_hi > 0 && st.sat_lo > 0, "{ctx}: h never saturated both ways");
        }
        if (1..=4).contains(&s.sh_h) {
            assert!(st.ties > 0, "{ctx}: no rounding tie");
        }
    }
    let sat: usize = stats.iter().map(|st| st.sat_hi.min(st.sat_lo)).sum();
    assert!(sat > 0, "no set saturated h both ways: {stats:?}");
    let _ = fs::remove_dir_all(&dir);
}

/// The comparison catches s_u one code behind (the u memory read at the
/// current address instead of the next).
#[test]
fn fb_sgm_fails_on_a_late_u() {
    require_tool("verilator", "--version");
    // The u memory's read address.
    let path = mutated_rtl("fptgen_fb_sgm.v", ".rd_addr(d_seed ? {UD_W{1'b0}} : ua_next)", ".rd_addr(d_seed ? {UD_W{1'b0}} : ua_reg)", "rtl_fb_sgm_late_u_src");
    let (result, run_dir) = run("rtl_fb_sgm_late_u", &[SETS[2], SETS[3]], Some(path.display().to_string()));
    expect_caught(result, "s_u one code behind", &["s_u"], &path, &run_dir);
}
