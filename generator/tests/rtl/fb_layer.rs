//! `rtl/fptgen_fb_layer.v` (with its real `fptgen_fb_fprime`,
//! `fptgen_fb_delta`, `fptgen_fb_step`, `fptgen_lfsr` and
//! `fptgen_round_shift`) in Verilator against a model written here from
//! its header and docs/training.md ("Feedback rules", "Stochastic
//! rounding", "Hardware of the feedback rules"): the input ring (x_cap
//! loads it, u_col moves its head to the next column), f' of the captured
//! outputs (FP_MODE 0, 1: a > A_MIN, 2: A_MIN < a < A_MAX), the deltas of
//! every mode (0: e[o] at k = o; 1: B[o][k] e[k]; 2: -B[o][k] at k*; 3:
//! u[o][k] h[k], then R(g, SHIFT_G)), B from the 32-bit Galois LFSR of
//! docs/training.md ("Noise") reloaded with SEED by d_seed, one bit per step
//! in modes 1 and 2; the delta ring (each delta pushed at d_last enters at
//! the top, u_row moves the head to the next row), d_zero, and u_step, the
//! step of the heads two cycles earlier: R(delta * (x - X_OFF), SHIFT_W) or
//! R(delta, SHIFT_B) saturated to S_W bits, to nearest with ties to even or
//! stochastically (floor((v + r) / 2^k), r = min(k, 32) fresh bits of the
//! tensor's rounding LFSR, reset to SEED_W / SEED_B, moved on by u_wr of its
//! tensor, shifted left by the rest of k).
//!
//! The stimulus is a controller's (fptgen_fb_ctrl's order): per sample,
//! captures (sometimes reusing the last), d_seed, the N_OUT * C delta steps
//! with random gaps (other layers' turns: random d_k, d_e, d_last, u_bias
//! meanwhile), then the update walk of the weights and the biases, which
//! skips a row whose delta the model says is 0 (d_zero) and otherwise
//! reads, waits and writes (u_wr), with random stalls; random data on every
//! port whenever it is not used, and a reset in the middle of the run.
//! Every cycle d_zero and u_step (whenever the heads two cycles before and
//! u_bias since are known and held) and, at every d_last step, d_value are
//! compared with the model. Eight parameter sets in one build: each mode,
//! each f', input offsets at both ends of their range (dense_int8's zero
//! point), left and right shifts, shifts above 32 with stochastic rounding,
//! one input, output and class, 2-bit errors and steps. The test checks
//! that deltas were nonzero and zero (by f' and by value), steps saturated,
//! rounding drew and rows were skipped, so it cannot pass vacuously; a
//! second test builds the module with the input offset added instead of
//! subtracted and checks that the comparison catches it. Fails (does not
//! skip) without Verilator.

use std::fmt::Write as _;
use std::fs;

use crate::common::{expect_caught, mutated_rtl, require_tool, scratch, Rng, Top};
use crate::fb_layer_model::{code, compare, lfsr_bits, step, value, In, Rules, Want};

/// One instance's parameters.
#[derive(Debug, Clone, Copy)]
struct Set {
    n_in: usize,
    n_out: usize,
    c: usize,
    x_w: u32,
    x_s: bool,
    a_w: u32,
    a_s: bool,
    fp_mode: u32,
    a_min: i64,
    a_max: i64,
    x_off: i64,
    mode: u32,
    seed: u32,
    e_w: u32,
    d_w: u32,
    shift_w: i32,
    shift_b: i32,
    shift_g: u32,
    s_w: u32,
    stoch_w: bool,
    stoch_b: bool,
    seed_w: u32,
    seed_b: u32,
}

const BASE: Set = Set {
    n_in: 4,
    n_out: 3,
    c: 2,
    x_w: 8,
    x_s: true,
    a_w: 8,
    a_s: true,
    fp_mode: 1,
    a_min: 0,
    a_max: 0,
    x_off: 0,
    mode: 1,
    seed: 0x1234_5678,
    e_w: 10,
    d_w: 12,
    shift_w: 3,
    shift_b: 2,
    shift_g: 0,
    s_w: 10,
    stoch_w: false,
    stoch_b: false,
    seed_w: 1,
    seed_b: 1,
};

fn sets() -> Vec<Set> {
    vec![
        // A hidden dense layer under dfa (examples/tiny's shape), relu
        BASE,
        // The output layer (g = e): linear, unsigned 4-bit inputs, a left
        // shift of the weights' steps, 6-bit steps that saturate
        Set { n_in: 5, n_out: 3, c: 3, x_w: 4, x_s: false, fp_mode: 0, mode: 0, e_w: 9, d_w: 12, shift_w: -2, shift_b: 0, s_w: 6, seed: 0xffff_ffff, ..BASE },
        // One input, output and class under drtp; both tensors round
        // stochastically; 2-bit steps
        Set {
            n_in: 1,
            n_out: 1,
            c: 1,
            mode: 2,
            e_w: 2,
            d_w: 3,
            shift_w: 5,
            shift_b: 1,
            s_w: 2,
            stoch_w: true,
            stoch_b: true,
            seed_w: 0x8000_0001,
            seed_b: 0x0bad_cafe,
            ..BASE
        },
        // dense_int8 under sgm: zero point -128, relu6 between codes, the
        // int8 weights' steps stochastic at shift 17 (examples/int8_head)
        Set {
            n_in: 5,
            n_out: 4,
            c: 3,
            fp_mode: 2,
            a_min: -100,
            a_max: 50,
            x_off: -128,
            mode: 3,
            e_w: 9,
            d_w: 20,
            shift_w: 17,
            shift_b: 4,
            shift_g: 3,
            s_w: 10,
            stoch_w: true,
            seed_w: 0x1357_9bdf,
            ..BASE
        },
        // 16-bit inputs, ten classes, relu above act_min 5, a stochastic
        // shift above 32, a left shift of the biases
        Set {
            n_in: 7,
            n_out: 5,
            c: 10,
            x_w: 16,
            a_w: 16,
            a_min: 5,
            e_w: 18,
            d_w: 23,
            shift_w: 40,
            shift_b: -3,
            s_w: 18,
            stoch_w: true,
            seed_w: 0xdead_beef,
            ..BASE
        },
        // The largest input offset (2^X_W - 1) with unsigned inputs, relu
        // above -3 of signed 4-bit outputs, drtp, steps unshifted in 4 bits
        Set {
            n_in: 3,
            n_out: 6,
            c: 4,
            x_w: 8,
            x_s: false,
            a_w: 4,
            a_min: -3,
            x_off: 255,
            mode: 2,
            e_w: 6,
            d_w: 9,
            shift_w: 0,
            shift_b: 0,
            s_w: 4,
            ..BASE
        },
        // The smallest input offset (-2^X_W), sgm with SHIFT_G 0, 1-bit
        // unsigned outputs, biases stochastic at shift 31
        Set {
            n_in: 2,
            n_out: 2,
            c: 2,
            x_w: 8,
            a_w: 1,
            a_s: false,
            x_off: -256,
            mode: 3,
            e_w: 5,
            d_w: 14,
            shift_w: 6,
            shift_b: 31,
            shift_g: 0,
            s_w: 12,
            stoch_b: true,
            seed_b: 0x7fff_ffff,
            ..BASE
        },
        // dfa with 2-bit errors, 1-bit signed inputs, 3-bit steps (a left
        // shift of the biases' saturates them)
        Set { n_in: 3, n_out: 2, c: 2, x_w: 1, x_s: true, e_w: 2, d_w: 4, shift_w: 0, shift_b: -1, s_w: 3, ..BASE },
    ]
}

impl Set {
    /// The parameters of f', the deltas and the input codes.
    fn rules(&self) -> Rules {
        let Set { c, x_w, x_s, a_w, a_s, fp_mode, a_min, a_max, mode, e_w, d_w, shift_g, .. } = *self;
        Rules { c, x_w, x_s, a_w, a_s, fp_mode, a_min, a_max, mode, e_w, d_w, shift_g }
    }
}

const CYCLES: usize = 24000;
const RESETS: [usize; 3] = [0, 1, 11017];

#[derive(Debug, Default, Clone)]
struct Stats {
    deltas_nonzero: usize,
    deltas_fp_zero: usize,
    deltas_value_zero: usize,
    skipped: usize,
    written: usize,
    steps_saturated: usize,
    ties: usize,
    draws: usize,
    cmp_step: usize,
    cmp_zero: usize,
}

/// The model of one instance (None: unknown).
struct Model {
    s: Set,
    x: Vec<Option<u64>>,
    fp: Vec<Option<bool>>,
    d: Vec<Option<i128>>,
    fb: Option<u32>,
    o: Option<usize>,
    g: Option<i128>,
    /// Rounding LFSRs: weights, biases.
    rl: [Option<u32>; 2],
    /// The registered product (its value, u_bias of its cycle) and the
    /// registered step.
    prod: Option<(i128, bool)>,
    step: Option<u64>,
}

impl Model {
    fn new(s: Set) -> Model {
        Model {
            s,
            x: vec![None; s.n_in],
            fp: vec![None; s.n_out],
            d: vec![None; s.n_out],
            fb: None,
            o: None,
            g: None,
            rl: [None, None],
            prod: None,
            step: None,
        }
    }

    fn fprime(&self, a: u64) -> bool {
        self.s.rules().fprime(a)
    }

    fn d_zero(&self) -> Option<bool> {
        self.d[0].map(|d| d == 0)
    }

    /// This step's term of g, and the feedback LFSR after it.
    fn term(&self, x: &In) -> (Option<i128>, Option<u32>) {
        self.s.rules().term(x, self.o, self.fb)
    }

    /// g including this step, and the delta at d_last (f' applied).
    fn delta(&self, x: &In) -> Option<i128> {
        self.s.rules().delta(self.g? + self.term(x).0?, self.fp[0])
    }

    fn outputs(&self, x: &In) -> Want {
        Want {
            d_value: if x.d_step && x.d_last { self.delta(x).map(|d| code(d, self.s.d_w)) } else { None },
            d_zero: self.d_zero(),
            u_step: self.step,
        }
    }

    /// The edge ending a cycle with inputs `x`.
    fn edge(&mut self, x: &In, rst: bool, st: &mut Stats) {
        let s = self.s;
        // The step: from the registered product, u_bias held, the tensor's
        // rounding draw as of this cycle.
        let t = usize::from(x.u_bias);
        let (shift, stoch) = if x.u_bias { (s.shift_b, s.stoch_b) } else { (s.shift_w, s.stoch_w) };
        self.step = match self.prod {
            Some((v, b)) if b == x.u_bias => {
                let rnd = if stoch {
                    self.rl[t].map(|r| {
                        let b = (shift as u32).min(32);
                        (lfsr_bits(r, b).0 as i128) << (shift as u32 - b)
                    })
                } else {
                    None
                };
                if stoch && rnd.is_none() {
                    None
                } else {
                    let (c, sat, tie) = step(v, shift, rnd, s.s_w);
                    st.steps_saturated += usize::from(sat);
                    st.ties += usize::from(tie);
                    Some(c)
                }
            }
            _ => None,
        };
        if x.u_wr && stoch {
            st.draws += 1;
            let b = (shift as u32).min(32);
            self.rl[t] = self.rl[t].map(|r| lfsr_bits(r, b).1);
        }
        // The product of the heads.
        let xh = self.x[0].map(|c| value(c, s.x_w, s.x_s) - i128::from(s.x_off));
        self.prod = match (self.d[0], xh) {
            (Some(d), _) if x.u_bias => Some((d, true)),
            (Some(d), Some(xv)) => Some((d * xv, false)),
            _ => None,
        };
        // Deltas
        if x.d_step {
            let (term, fb) = self.term(x);
            if x.d_last {
                let dv = self.delta(x);
                match (dv, self.fp[0]) {
                    (Some(0), Some(false)) => st.deltas_fp_zero += 1,
                    (Some(0), _) => st.deltas_value_zero += 1,
                    (Some(_), _) => st.deltas_nonzero += 1,
                    _ => {}
                }
                self.d.remove(0);
                self.d.push(dv);
                self.g = Some(0);
                self.o = self.o.map(|o| o + 1);
                if !x.a_cap {
                    self.fp.rotate_left(1);
                }
            } else {
                self.g = self.g.and_then(|g| Some(g + term?));
            }
            self.fb = fb;
        } else if x.u_row {
            self.d.rotate_left(1);
        }
        if x.d_seed {
            self.fb = Some(s.seed);
            self.o = Some(0);
            self.g = Some(0);
        }
        if x.x_cap {
            self.x = x.x.iter().map(|&c| Some(c)).collect();
        } else if x.u_col {
            self.x.rotate_left(1);
        }
        if x.a_cap {
            self.fp = x.a.iter().map(|&a| Some(self.fprime(a))).collect();
        }
        if rst {
            // The header promises the rounding LFSRs' reset (fb_step:
            // "reset to SEED_*"); the rest is known again after captures,
            // d_seed and pushes.
            let rl = [Some(s.seed_w), Some(s.seed_b)];
            *self = Model::new(s);
            self.rl = rl;
        }
    }
}

/// The stimulus generator: a controller that consults the model for
/// d_zero, and the model's expectations cycle by cycle.
struct Gen<'a> {
    s: Set,
    rng: &'a mut Rng,
    m: Model,
    ins: Vec<In>,
    want: Vec<Want>,
    st: Stats,
}

impl Gen<'_> {
    fn noise(&mut self) -> In {
        let s = self.s;
        s.rules().noise(self.rng, s.n_in, s.n_out)
    }

    /// One cycle (an idle one first in place of a reset cycle).
    fn cycle(&mut self, x: In) {
        while RESETS.contains(&self.ins.len()) {
            let n = self.noise();
            self.one(n);
        }
        self.one(x);
    }

    fn one(&mut self, x: In) {
        let rst = RESETS.contains(&self.ins.len());
        self.want.push(self.m.outputs(&x));
        self.m.edge(&x, rst, &mut self.st);
        self.ins.push(x);
    }

    fn gap(&mut self, lo: i64, hi: i64) {
        for _ in 0..self.rng.range(lo, hi) {
            let n = self.noise();
            self.cycle(n);
        }
    }

    fn sample(&mut self) {
        let s = self.s;
        // Captures (x before a, as the pipeline passes), sometimes reused.
        let first = self.ins.len() < 4;
        if first || self.rng.chance(85) {
            self.gap(0, 3);
            let x = In { x_cap: true, ..self.noise() };
            self.cycle(x);
        }
        if first || self.rng.chance(85) {
            self.gap(0, 3);
            let x = In { a_cap: true, ..self.noise() };
            self.cycle(x);
        }
        // d_seed (the error unit's capture), C cycles finding k*.
        self.gap(0, 2);
        let x = In { d_seed: true, ..self.noise() };
        self.cycle(x);
        self.gap(s.c as i64, s.c as i64);
        let kstar = self.rng.range(0, s.c as i64 - 1) as u64;
        let gaps = self.rng.chance(40);
        for _ in 0..s.n_out {
            for k in 0..s.c {
                while gaps && self.rng.chance(20) {
                    let n = self.noise();
                    self.cycle(n);
                }
                let x = In { d_step: true, d_k: k as u64, d_last: k + 1 == s.c, d_kstar: k as u64 == kstar, ..self.noise() };
                self.cycle(x);
            }
        }
        self.gap(0, 3);
        // The update walk: weights, then biases (either may be frozen).
        for bias in [false, true] {
            if self.rng.chance(10) {
                continue;
            }
            let cols = if bias { 1 } else { s.n_in };
            let stalls = self.rng.chance(30);
            for _ in 0..s.n_out {
                for i in 0..cols {
                    let last = i + 1 == cols;
                    let zero = self.m.d_zero().unwrap_or_else(|| self.rng.coin());
                    let walk = |g: &mut Gen, row: bool, col: bool, wr: bool| In { u_bias: bias, u_row: row, u_col: col, u_wr: wr, ..g.noise() };
                    if zero {
                        self.st.skipped += 1;
                        let x = walk(self, last, !bias, false);
                        self.cycle(x);
                    } else {
                        self.st.written += 1;
                        for _ in 0..2 {
                            let x = walk(self, false, false, false);
                            self.cycle(x);
                        }
                        while stalls && self.rng.chance(20) {
                            let x = walk(self, false, false, false);
                            self.cycle(x);
                        }
                        let x = walk(self, last, !bias, true);
                        self.cycle(x);
                    }
                }
            }
        }
    }
}

/// The top: rst, then an instance per set, its ports suffixed by the
/// set's index: the strobes, d_k, d_e, s_h, s_u, x per input and a per
/// output in; d_value, d_zero and u_step out.
fn top(sets: &[Set]) -> Top {
    let mut top = Top::default();
    top.input("rst", 1);
    for (i, s) in sets.iter().enumerate() {
        s.rules().ports(&mut top, i, false, s.n_in, s.n_out, s.s_w);
        writeln!(
            top.body,
            "fptgen_fb_layer #(.N_IN({}), .N_OUT({}), .C({}), .X_W({}), .X_S({}), .A_W({}), .A_S({}), .FP_MODE({}), .A_MIN({}), .A_MAX({}), \
             .X_OFF({}), .MODE({}), .SEED(32'h{:08x}), .E_W({}), .D_W({}), .SHIFT_W({}), .SHIFT_B({}), .SHIFT_G({}), .S_W({}), .STOCH_W({}), \
             .STOCH_B({}), .SEED_W(32'h{:08x}), .SEED_B(32'h{:08x})) u{i} (\n    .clk(clk), .rst(rst), {});",
            s.n_in,
            s.n_out,
            s.c,
            s.x_w,
            u8::from(s.x_s),
            s.a_w,
            u8::from(s.a_s),
            s.fp_mode,
            s.a_min,
            s.a_max,
            s.x_off,
            s.mode,
            s.seed,
            s.e_w,
            s.d_w,
            s.shift_w,
            s.shift_b,
            s.shift_g,
            s.s_w,
            u8::from(s.stoch_w),
            u8::from(s.stoch_b),
            s.seed_w,
            s.seed_b,
            s.rules().connections(i, false, s.n_in, s.n_out)
        )
        .unwrap();
    }
    top
}

/// Builds the top over `sets` (`layer_src`: another `fptgen_fb_layer.v`,
/// a path), runs the stimulus and compares every cycle.
fn run(name: &str, sets: &[Set], layer_src: Option<String>) -> (Result<Vec<Stats>, String>, std::path::PathBuf) {
    let mut rng = Rng(0xfb_1a7e);
    let (mut ins, mut wants, mut stats) = (Vec::new(), Vec::new(), Vec::new());
    for s in sets {
        let mut g = Gen { s: *s, rng: &mut rng, m: Model::new(*s), ins: Vec::new(), want: Vec::new(), st: Stats::default() };
        while g.ins.len() < CYCLES {
            g.sample();
        }
        g.ins.truncate(CYCLES);
        g.want.truncate(CYCLES);
        ins.push(g.ins);
        wants.push(g.want);
        stats.push(g.st);
    }
    let dir = scratch(name);
    let stim: Vec<Vec<u128>> =
        (0..CYCLES).map(|cy| std::iter::once(u128::from(RESETS.contains(&cy))).chain(ins.iter().flat_map(|v| v[cy].row(false))).collect()).collect();
    let layer = layer_src.unwrap_or_else(|| "fptgen_fb_layer.v".to_string());
    let rtl = [layer.as_str(), "fptgen_fb_fprime.v", "fptgen_fb_delta.v", "fptgen_fb_step.v", "fptgen_lfsr.v", "fptgen_lfsr_advance.v", "fptgen_round_shift.v"];
    let out = top(sets).run("layer_top", true, &dir, &rtl, &stim);
    for (i, s) in sets.iter().enumerate() {
        match compare(i, s, &out, &wants[i], &ins[i], &dir) {
            Ok([_, z, u]) => (stats[i].cmp_zero, stats[i].cmp_step) = (z, u),
            Err(e) => return (Err(e), dir),
        }
    }
    (Ok(stats), dir)
}

#[test]
fn fb_layer_matches_the_model() {
    require_tool("verilator", "--version");
    let sets = sets();
    let (result, dir) = run("rtl_fb_layer", &sets, None);
    let stats = result.unwrap_or_else(|e| panic!("{e}"));
    for (i, (s, st)) in sets.iter().zip(&stats).enumerate() {
        let ctx = format!("set {i} ({s:?}): {st:?}");
        assert!(st.deltas_nonzero >= 20 && st.deltas_value_zero + st.deltas_fp_zero >= 5, "{ctx}: too few nonzero or zero deltas");
        if s.fp_mode != 0 {
            assert!(st.deltas_fp_zero >= 5, "{ctx}: f' never zeroed a delta");
        }
        assert!(st.skipped >= 5 && st.written >= 50, "{ctx}: too few rows skipped or parameters written");
        assert!(st.cmp_step >= CYCLES / 3 && st.cmp_zero >= CYCLES / 2, "{ctx}: too few cycles compared");
        if s.stoch_w || s.stoch_b {
            assert!(st.draws >= 20, "{ctx}: too few stochastic draws");
        }
        if s.s_w <= 6 {
            assert!(st.steps_saturated > 0, "{ctx}: no step saturated");
        }
    }
    let _ = fs::remove_dir_all(&dir);
}

/// The comparison catches an input offset added instead of subtracted
/// (dense_int8's zero point).
#[test]
fn fb_layer_fails_on_a_wrong_offset() {
    require_tool("verilator", "--version");
    // The input offset.
    let path = mutated_rtl("fptgen_fb_layer.v", "x_wide - OFF32[XE_W-1:0]", "x_wide + OFF32[XE_W-1:0]", "rtl_fb_layer_wrong_offset_src");
    let all = sets();
    let (result, run_dir) = run("rtl_fb_layer_wrong_offset", &[all[3], all[5]], Some(path.display().to_string()));
    expect_caught(result, "the wrong input offset", &["u_step"], &path, &run_dir);
}
