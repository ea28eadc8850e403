//! `rtl/fptgen_fb_conv.v` (with its real `fptgen_fb_fprime`,
//! `fptgen_fb_delta`, `fptgen_fb_step`, `fptgen_lfsr` and
//! `fptgen_round_shift`) in Verilator against a model written here from
//! its header and docs/training.md ("Feedback rules", "Hardware of the
//! feedback rules"): the input image written pixel by pixel (x_cap, in
//! order, wrapping after H * W), f' shifted in a pixel at a time (a_cap), the
//! deltas of every mode (as fptgen_fb_layer's: 0: e[o] at k = o; 1: B[o][k]
//! e[k] with B from the 32-bit Galois LFSR reloaded with SEED by d_seed; 2:
//! -B[o][k] at k*; 3: u[o][k] h[k], then R(g, SHIFT_G)) for the N_OUT = P * F
//! outputs in pixel-major order, d_zero = no delta of the current row's
//! filter is nonzero, and the step: from u_acc, the exact sum over the P
//! output pixels of delta[p][f] * x (the input at window position (ky, kx,
//! c) of pixel p, stride and padding applied, 0 in the padding) or of
//! delta[p][f] (u_bias), the walk's row f and column (ky, kx, c) moved by
//! u_row and u_col; u_step = R(sum, SHIFT_W or SHIFT_B) saturated to S_W
//! bits (to nearest, ties to even, or stochastically from the tensor's
//! rounding LFSR, which u_wr moves on) in every cycle from P + 4 cycles
//! after u_acc until the next u_acc.
//!
//! The stimulus is a controller's (fptgen_fb_ctrl's order, ACC = P + 1):
//! per sample, the input and output image streams with random gaps
//! (sometimes not captured again), d_seed, the N_OUT * C delta steps with
//! random gaps, then the walk of the weights (F rows of 9 * CIN) and the
//! biases (F rows of 1), each parameter skipped when the model's d_zero is
//! 1, else u_acc, P + 1 cycles, read, wait, write (u_wr), with random stalls
//! between parameters; some samples zero whole filters (f' or errors 0) so
//! that rows are skipped; random data on every unused port; a reset in the
//! middle. Every cycle d_zero and u_step (in its window) and, at every
//! d_last step, d_value are compared. Six geometries in one build: 3x3
//! windows at stride 1 and 2, padding 0, 1 and 2 (windows mostly in the
//! padding), non-square images, CIN of 1 to 3, F of 1 to 4, one pixel, one class,
//! every mode, every f', left and right shifts, stochastic shifts above 32
//! and 1-bit inputs into 2-bit steps. The test checks that deltas were
//! nonzero and zero, sums were taken, rows skipped, rounding drew and steps
//! saturated, so it cannot pass vacuously; a second test builds the module
//! with its window row offset by PAD_L instead of PAD_T and checks that the
//! comparison catches it. Fails (does not skip) without Verilator.

use std::fmt::Write as _;
use std::fs;

use crate::common::{expect_caught, mutated_rtl, require_tool, scratch, Rng, Top};
use crate::fb_layer_model::{code, compare, lfsr_bits, step, value, In, Rules, Want};

#[derive(Debug, Clone, Copy)]
struct Set {
    h: usize,
    w: usize,
    cin: usize,
    oh: usize,
    ow: usize,
    f: usize,
    stride: usize,
    pad_t: usize,
    pad_l: usize,
    c: usize,
    x_w: u32,
    x_s: bool,
    a_w: u32,
    a_s: bool,
    fp_mode: u32,
    a_min: i64,
    a_max: i64,
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
    h: 4,
    w: 4,
    cin: 1,
    oh: 4,
    ow: 4,
    f: 2,
    stride: 1,
    pad_t: 1,
    pad_l: 1,
    c: 2,
    x_w: 8,
    x_s: true,
    a_w: 8,
    a_s: true,
    fp_mode: 1,
    a_min: 0,
    a_max: 0,
    mode: 1,
    seed: 0x0c0f_fee1,
    e_w: 10,
    d_w: 12,
    shift_w: 6,
    shift_b: 3,
    shift_g: 0,
    s_w: 10,
    stoch_w: false,
    stoch_b: false,
    seed_w: 1,
    seed_b: 1,
};

fn sets() -> Vec<Set> {
    vec![
        // 4x4x1 -> 4x4x2, "same" padding, dfa, relu (the module's defaults)
        BASE,
        // 7x7x3 -> 3x3x3 at stride 2, no padding, drtp, unsigned 4-bit
        // inputs, the weights' steps stochastic
        Set {
            h: 7,
            w: 7,
            cin: 3,
            oh: 3,
            ow: 3,
            f: 3,
            stride: 2,
            pad_t: 0,
            pad_l: 0,
            c: 4,
            x_w: 4,
            x_s: false,
            mode: 2,
            e_w: 6,
            d_w: 9,
            shift_w: 6,
            shift_b: 0,
            s_w: 6,
            stoch_w: true,
            seed_w: 0x2468_ace1,
            ..BASE
        },
        // One pixel, one filter, one class: the output layer, linear
        Set { h: 1, w: 1, oh: 1, ow: 1, f: 1, c: 1, fp_mode: 0, mode: 0, e_w: 9, d_w: 11, shift_w: 0, shift_b: 0, s_w: 8, ..BASE },
        // 5x6x2 -> 3x3x4 at stride 2, padding only on top, sgm, relu6-like
        // f', a left shift of the weights, the biases stochastic
        Set {
            h: 5,
            w: 6,
            cin: 2,
            oh: 3,
            ow: 3,
            f: 4,
            stride: 2,
            pad_t: 1,
            pad_l: 0,
            c: 3,
            fp_mode: 2,
            a_min: -5,
            a_max: 40,
            mode: 3,
            e_w: 8,
            d_w: 18,
            shift_w: -1,
            shift_b: 3,
            shift_g: 2,
            s_w: 14,
            stoch_b: true,
            seed_b: 0x7654_3210,
            ..BASE
        },
        // 3x3x3 -> 5x5x2 with padding 2 (windows mostly in the padding),
        // ten classes, 16-bit inputs, a stochastic shift above 32, relu
        // above act_min
        Set {
            h: 3,
            w: 3,
            cin: 3,
            oh: 5,
            ow: 5,
            f: 2,
            pad_t: 2,
            pad_l: 2,
            c: 10,
            x_w: 16,
            a_w: 16,
            a_min: 7,
            e_w: 18,
            d_w: 23,
            shift_w: 40,
            shift_b: -3,
            s_w: 20,
            stoch_w: true,
            seed_w: 0xfeed_f00d,
            ..BASE
        },
        // 8x2x1 -> 8x2x3, 1-bit signed inputs, unsigned 2-bit outputs,
        // 2-bit steps that saturate
        Set { h: 8, w: 2, oh: 8, ow: 2, f: 3, x_w: 1, a_w: 2, a_s: false, e_w: 4, d_w: 6, shift_w: 0, shift_b: 1, s_w: 2, ..BASE },
    ]
}

const CYCLES: usize = 30000;
const RESETS: [usize; 3] = [0, 1, 14011];

impl Set {
    /// The parameters of f', the deltas and the input codes.
    fn rules(&self) -> Rules {
        let Set { c, x_w, x_s, a_w, a_s, fp_mode, a_min, a_max, mode, e_w, d_w, shift_g, .. } = *self;
        Rules { c, x_w, x_s, a_w, a_s, fp_mode, a_min, a_max, mode, e_w, d_w, shift_g }
    }

    fn p(&self) -> usize {
        self.oh * self.ow
    }
    fn n_out(&self) -> usize {
        self.p() * self.f
    }
}

#[derive(Debug, Default, Clone)]
struct Stats {
    deltas_nonzero: usize,
    deltas_zero: usize,
    sums: usize,
    sums_nonzero: usize,
    skipped: usize,
    steps_saturated: usize,
    draws: usize,
    cmp_step: usize,
    cmp_zero: usize,
    cmp_value: usize,
}

/// The walk's position: filter, channel, kx, ky.
#[derive(Debug, Clone, Copy)]
struct Walk {
    f: usize,
    ci: usize,
    kx: usize,
    ky: usize,
}

struct Model {
    s: Set,
    /// The input image, its write position.
    img: Vec<Option<Vec<u64>>>,
    xw: Option<usize>,
    /// f' of every output, output 0 first (rotated as deltas are made).
    fp: Vec<Option<bool>>,
    /// The deltas written, per pixel per filter.
    dmem: Vec<Vec<Option<i128>>>,
    /// The current pixel's deltas so far, the next delta's pixel, and per
    /// filter whether a nonzero delta was made (since d_seed).
    drow: Vec<Option<i128>>,
    dp: Option<usize>,
    nz: Option<Vec<bool>>,
    fb: Option<u32>,
    o: Option<usize>,
    g: Option<i128>,
    walk: Option<Walk>,
    rl: [Option<u32>; 2],
    /// The sum started by u_acc: (cycle it is complete from, value).
    acc: Option<(usize, Option<i128>)>,
    step: Option<u64>,
}

impl Model {
    fn new(s: Set) -> Model {
        Model {
            s,
            img: vec![None; s.h * s.w],
            xw: None,
            fp: vec![None; s.n_out()],
            dmem: vec![vec![None; s.f]; s.p()],
            drow: Vec::new(),
            dp: None,
            nz: None,
            fb: None,
            o: None,
            g: None,
            walk: None,
            rl: [None, None],
            acc: None,
            step: None,
        }
    }

    fn fprime(&self, a: u64) -> bool {
        self.s.rules().fprime(a)
    }

    fn d_zero(&self) -> Option<bool> {
        Some(!self.nz.as_ref()?[self.walk?.f])
    }

    /// This step's term of g, and the feedback LFSR after it.
    fn term(&self, x: &In) -> (Option<i128>, Option<u32>) {
        self.s.rules().term(x, self.o, self.fb)
    }

    /// g including this step, and the delta at d_last (f' applied).
    fn delta(&self, x: &In) -> Option<i128> {
        self.s.rules().delta(self.g? + self.term(x).0?, self.fp[0])
    }

    /// The sum u_acc starts now: over the pixels, delta[p][f] times the
    /// input at the window position (or 1 for a bias).
    fn sum(&self, bias: bool) -> Option<i128> {
        let s = &self.s;
        let w = self.walk?;
        let mut total = 0i128;
        for oy in 0..s.oh {
            for ox in 0..s.ow {
                let d = self.dmem[oy * s.ow + ox][w.f]?;
                let iy = (oy * s.stride + w.ky) as i64 - s.pad_t as i64;
                let ix = (ox * s.stride + w.kx) as i64 - s.pad_l as i64;
                let inside = (0..s.h as i64).contains(&iy) && (0..s.w as i64).contains(&ix);
                total += if bias {
                    d
                } else if inside {
                    let px = self.img[iy as usize * s.w + ix as usize].as_ref()?;
                    d * value(px[w.ci], s.x_w, s.x_s)
                } else {
                    0
                };
            }
        }
        Some(total)
    }

    fn outputs(&self, x: &In) -> Want {
        Want {
            d_value: if x.d_step && x.d_last { self.delta(x).map(|d| code(d, self.s.d_w)) } else { None },
            d_zero: self.d_zero(),
            u_step: self.step,
        }
    }

    fn edge(&mut self, cy: usize, x: &In, rst: bool, st: &mut Stats) {
        let s = self.s;
        let t = usize::from(x.u_bias);
        let (shift, stoch) = if x.u_bias { (s.shift_b, s.stoch_b) } else { (s.shift_w, s.stoch_w) };
        // The step register: R of the sum as of this cycle, while the sum
        // is complete and no u_acc has come since.
        let acc_now = match self.acc {
            Some((from, v)) if cy >= from => v,
            _ => None,
        };
        self.step = acc_now.and_then(|v| {
            let rnd = if stoch {
                let b = (shift as u32).min(32);
                Some((lfsr_bits(self.rl[t]?, b).0 as i128) << (shift as u32 - b))
            } else {
                None
            };
            let (c, sat, _) = step(v, shift, rnd, s.s_w);
            st.steps_saturated += usize::from(sat);
            Some(c)
        });
        if x.u_wr && stoch {
            st.draws += 1;
            let b = (shift as u32).min(32);
            self.rl[t] = self.rl[t].map(|r| lfsr_bits(r, b).1);
        }
        if x.u_acc {
            let v = self.sum(x.u_bias);
            st.sums += 1;
            st.sums_nonzero += usize::from(v.is_some_and(|v| v != 0));
            // (the sum is complete in cycle u_acc + P + 3: u_step from
            // P + 4 cycles after u_acc)
            self.acc = Some((cy + s.p() + 3, v));
        }
        // Deltas
        if x.d_step {
            let (term, fb) = self.term(x);
            if x.d_last {
                let dv = self.delta(x);
                match dv {
                    Some(0) => st.deltas_zero += 1,
                    Some(_) => st.deltas_nonzero += 1,
                    None => {}
                }
                let f = self.drow.len();
                if let (Some(nz), Some(d)) = (self.nz.as_mut(), dv) {
                    nz[f] |= d != 0;
                } else {
                    self.nz = None;
                }
                self.drow.push(dv);
                if self.drow.len() == s.f {
                    if let Some(p) = self.dp {
                        self.dmem[p] = std::mem::take(&mut self.drow);
                        self.dp = Some(p + 1);
                    } else {
                        self.drow.clear();
                    }
                }
                self.g = Some(0);
                self.o = self.o.map(|o| o + 1);
                if !x.a_cap {
                    self.fp.rotate_left(1);
                }
            } else {
                self.g = self.g.and_then(|g| Some(g + term?));
            }
            self.fb = fb;
        }
        if let Some(w) = self.walk.as_mut() {
            if x.u_row {
                w.f = (w.f + 1) % s.f;
            }
            if x.u_col {
                w.ci += 1;
                if w.ci == s.cin {
                    w.ci = 0;
                    w.kx += 1;
                    if w.kx == 3 {
                        w.kx = 0;
                        w.ky = (w.ky + 1) % 3;
                    }
                }
            }
        }
        if x.d_seed {
            self.fb = Some(s.seed);
            self.o = Some(0);
            self.g = Some(0);
            self.drow.clear();
            self.dp = Some(0);
            self.nz = Some(vec![false; s.f]);
            self.walk = Some(Walk { f: 0, ci: 0, kx: 0, ky: 0 });
        }
        if x.x_cap {
            if let Some(a) = self.xw {
                self.img[a] = Some(x.x.clone());
                self.xw = Some((a + 1) % (s.h * s.w));
            }
        }
        if x.a_cap {
            let beat: Vec<Option<bool>> = x.a.iter().map(|&a| Some(self.fprime(a))).collect();
            self.fp.drain(..s.f);
            self.fp.extend(beat);
        }
        if rst {
            // The captured image and f' stay (memories and a register
            // without reset); the write position restarts at 0, the
            // rounding LFSRs at their seeds; the rest is known again after
            // d_seed and a complete sum.
            let (img, fp, dmem) = (std::mem::take(&mut self.img), std::mem::take(&mut self.fp), std::mem::take(&mut self.dmem));
            *self = Model { img, fp, dmem, xw: Some(0), rl: [Some(s.seed_w), Some(s.seed_b)], ..Model::new(s) };
        }
    }
}

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
        s.rules().noise(self.rng, s.cin, s.f)
    }

    fn cycle(&mut self, x: In) {
        while RESETS.contains(&self.ins.len()) {
            let n = self.noise();
            self.one(n);
        }
        self.one(x);
    }

    fn one(&mut self, x: In) {
        let cy = self.ins.len();
        let rst = RESETS.contains(&cy);
        self.want.push(self.m.outputs(&x));
        self.m.edge(cy, &x, rst, &mut self.st);
        self.ins.push(x);
    }

    fn gap(&mut self, lo: i64, hi: i64) {
        for _ in 0..self.rng.range(lo, hi) {
            let n = self.noise();
            self.cycle(n);
        }
    }

    /// A code of the output for which f' is 0 (None for FP_MODE 0).
    fn fp_zero(&self) -> Option<u64> {
        let s = self.s;
        let lo = if s.a_s { -(1i64 << (s.a_w - 1)) } else { 0 };
        match s.fp_mode {
            0 => None,
            _ if s.a_min >= lo => Some(code(i128::from(s.a_min), s.a_w)),
            _ => Some(code(i128::from(s.a_max), s.a_w)),
        }
    }

    fn sample(&mut self) {
        let s = self.s;
        // Filters whose deltas this sample makes 0 (f' 0, or errors 0).
        let quiet: Vec<bool> = if self.rng.chance(35) { (0..s.f).map(|_| self.rng.coin()).collect() } else { vec![false; s.f] };
        let zero_code = self.fp_zero();
        let all_quiet = quiet.iter().all(|&q| q);
        // The streams: input pixels and output pixels, random gaps (output
        // beats after the first input beats), sometimes not captured.
        let first = self.ins.len() < 4;
        let (mut nx, mut na) = (0, 0);
        let (want_x, want_a) = (if first || self.rng.chance(85) { s.h * s.w } else { 0 }, if first || self.rng.chance(85) || quiet.contains(&true) { s.p() } else { 0 });
        while nx < want_x || na < want_a {
            let mut x = self.noise();
            if nx < want_x && self.rng.chance(70) {
                x.x_cap = true;
                nx += 1;
            }
            if na < want_a && (nx > 2 || nx == want_x) && self.rng.chance(60) {
                x.a_cap = true;
                na += 1;
                if let Some(z) = zero_code {
                    for (f, a) in x.a.iter_mut().enumerate() {
                        if quiet[f] {
                            *a = z;
                        }
                    }
                }
            }
            self.cycle(x);
        }
        self.gap(0, 2);
        let x = In { d_seed: true, ..self.noise() };
        self.cycle(x);
        self.gap(s.c as i64, s.c as i64);
        let kstar = self.rng.range(0, s.c as i64 - 1) as u64;
        let gaps = self.rng.chance(40);
        // Without f' the whole sample is quiet or not: errors 0.
        let e_zero = zero_code.is_none() && all_quiet;
        for _ in 0..s.n_out() {
            for k in 0..s.c {
                while gaps && self.rng.chance(20) {
                    let n = self.noise();
                    self.cycle(n);
                }
                let mut x = In { d_step: true, d_k: k as u64, d_last: k + 1 == s.c, d_kstar: k as u64 == kstar, ..self.noise() };
                if e_zero {
                    x.d_e = 0;
                    x.s_h = 0;
                }
                self.cycle(x);
            }
        }
        self.gap(0, 3);
        // The walk: weights (F rows of 9 * CIN), then biases (F rows of 1).
        for bias in [false, true] {
            if self.rng.chance(10) {
                continue;
            }
            let cols = if bias { 1 } else { 9 * s.cin };
            let stalls = self.rng.chance(30);
            let walk = |g: &mut Gen, row: bool, col: bool, wr: bool, acc: bool| In { u_bias: bias, u_row: row, u_col: col, u_wr: wr, u_acc: acc, ..g.noise() };
            for _ in 0..s.f {
                for i in 0..cols {
                    let last = i + 1 == cols;
                    let zero = self.m.d_zero().unwrap_or_else(|| self.rng.coin());
                    if zero {
                        self.st.skipped += 1;
                        let x = walk(self, last, !bias, false, false);
                        self.cycle(x);
                    } else {
                        let x = walk(self, false, false, false, true);
                        self.cycle(x);
                        // ACC = P + 1, read, wait
                        for _ in 0..s.p() + 3 {
                            let x = walk(self, false, false, false, false);
                            self.cycle(x);
                        }
                        let x = walk(self, last, !bias, true, false);
                        self.cycle(x);
                    }
                    while stalls && self.rng.chance(20) {
                        let x = walk(self, false, false, false, false);
                        self.cycle(x);
                    }
                }
            }
        }
    }
}

/// The top: rst, then an instance per set, its ports suffixed by the
/// set's index: the strobes, d_k, d_e, s_h, s_u, x per input channel and
/// a per filter in; d_value, d_zero and u_step out.
fn top(sets: &[Set]) -> Top {
    let mut top = Top::default();
    top.input("rst", 1);
    for (i, s) in sets.iter().enumerate() {
        s.rules().ports(&mut top, i, true, s.cin, s.f, s.s_w);
        writeln!(
            top.body,
            "fptgen_fb_conv #(.H({}), .W({}), .CIN({}), .OH({}), .OW({}), .F({}), .STRIDE({}), .PAD_T({}), .PAD_L({}), .C({}), .X_W({}), \
             .X_S({}), .A_W({}), .A_S({}), .FP_MODE({}), .A_MIN({}), .A_MAX({}), .MODE({}), .SEED(32'h{:08x}), .E_W({}), .D_W({}), \
             .SHIFT_W({}), .SHIFT_B({}), .SHIFT_G({}), .S_W({}), .STOCH_W({}), .STOCH_B({}), .SEED_W(32'h{:08x}), .SEED_B(32'h{:08x})) u{i} (\n    .clk(clk), .rst(rst), {});",
            s.h,
            s.w,
            s.cin,
            s.oh,
            s.ow,
            s.f,
            s.stride,
            s.pad_t,
            s.pad_l,
            s.c,
            s.x_w,
            u8::from(s.x_s),
            s.a_w,
            u8::from(s.a_s),
            s.fp_mode,
            s.a_min,
            s.a_max,
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
            s.rules().connections(i, true, s.cin, s.f)
        )
        .unwrap();
    }
    top
}

/// Builds the top over `sets` with the library (`conv_src`: another
/// `fptgen_fb_conv.v`, a path), runs the stimulus and compares every cycle;
/// returns what the stimulus exercised, or the first difference.
fn run(name: &str, sets: &[Set], conv_src: Option<String>) -> (Result<Vec<Stats>, String>, std::path::PathBuf) {
    let mut rng = Rng(0xc0_4f_b0);
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
        (0..CYCLES).map(|cy| std::iter::once(u128::from(RESETS.contains(&cy))).chain(ins.iter().flat_map(|v| v[cy].row(true))).collect()).collect();
    let conv = conv_src.unwrap_or_else(|| "fptgen_fb_conv.v".to_string());
    let rtl = [conv.as_str(), "fptgen_fb_fprime.v", "fptgen_fb_delta.v", "fptgen_fb_step.v", "fptgen_lfsr.v", "fptgen_lfsr_advance.v", "fptgen_round_shift.v"];
    let out = top(sets).run("conv_top", true, &dir, &rtl, &stim);
    for (i, s) in sets.iter().enumerate() {
        match compare(i, s, &out, &wants[i], &ins[i], &dir) {
            Ok([v, z, u]) => (stats[i].cmp_value, stats[i].cmp_zero, stats[i].cmp_step) = (v, z, u),
            Err(e) => return (Err(e), dir),
        }
    }
    (Ok(stats), dir)
}

#[test]
fn fb_conv_matches_the_model() {
    require_tool("verilator", "--version");
    let sets = sets();
    let (result, dir) = run("rtl_fb_conv", &sets, None);
    let stats = result.unwrap_or_else(|e| panic!("{e}"));
    for (i, (s, st)) in sets.iter().zip(&stats).enumerate() {
        let ctx = format!("set {i} ({s:?}): {st:?}");
        assert!(st.deltas_nonzero >= 20 && st.deltas_zero >= 5, "{ctx}: too few nonzero or zero deltas");
        assert!(st.sums >= 30 && st.sums_nonzero >= 10, "{ctx}: too few sums");
        assert!(st.skipped >= 5, "{ctx}: too few rows skipped");
        assert!(st.cmp_step >= CYCLES / 4 && st.cmp_zero >= CYCLES / 2, "{ctx}: too few cycles compared");
        if s.stoch_w || s.stoch_b {
            assert!(st.draws >= 10, "{ctx}: too few stochastic draws");
        }
        if s.s_w <= 6 {
            assert!(st.steps_saturated > 0, "{ctx}: no step saturated");
        }
    }
    let _ = fs::remove_dir_all(&dir);
}

/// The comparison catches a window row offset by the left padding instead
/// of the top padding (the window address mutation of
/// docs/training.md's co-simulation, here in the unit).
#[test]
fn fb_conv_fails_on_a_wrong_window_row() {
    require_tool("verilator", "--version");
    // The window row's address.
    let path = mutated_rtl("fptgen_fb_conv.v", "{30'd0, ky_reg} - PAD_T;", "{30'd0, ky_reg} - PAD_L;", "rtl_fb_conv_wrong_row_src");
    // Set 3 is the one whose top and left padding differ.
    let sets = [sets()[3]];
    let (result, run_dir) = run("rtl_fb_conv_wrong_row", &sets, Some(path.display().to_string()));
    expect_caught(result, "the wrong window row", &["u_step"], &path, &run_dir);
}
