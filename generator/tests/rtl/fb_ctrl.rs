//! `rtl/fptgen_fb_ctrl.v` in Verilator against a cycle model written here
//! from its header and docs/training.md ("Hardware of the feedback rules",
//! and the trainer interface's "Pause and resume" and "Inference while
//! training"): a run (ctl_start when idle or done) waits one cycle for
//! requests in flight, then per sample from a boundary serves the requests
//! that wait (at most SERVE_MAX per boundary, then waits until every answer
//! has left and returns to the boundary), takes a pause there (until
//! ctl_resume, then waits for the answers of requests taken while paused),
//! plays the buffer at sample 0 (one cycle), feeds the sample (x_allow until
//! x_fire), waits for its output (out_fire: err_cap, d_seed), C error cycles
//! (e_scan, k = 0 .. C - 1; h_start in the last when SGM_CYCLES > 0),
//! SGM_CYCLES cycles, for each layer N_OUT[l] * C delta steps (d_step of
//! that layer, k, d_last at C - 1 with a mon event of kind 0 whose index is
//! the delta's position among every layer's outputs), then the walk of
//! every tensor in training order: per parameter one cycle (cur_step) when
//! d_zero, else read, wait, write (a mon event of kind 1, the parameter's
//! index), a layer with ACC > 0 first starting its sum (u_acc) and waiting
//! ACC cycles; u_col, u_row of the parameter's layer on each advance, u_bias
//! and u_layer of the current tensor; after the last sample of an
//! iteration st_iteration counts, and after cfg_iterations the run is done.
//! Every output is compared with the model in every cycle.
//!
//! The environment is fb_top's: a request stream that keeps in_valid until
//! each request fires (in_fire only while ext_accept, with random
//! back-pressure), answers after random latencies and output back-pressure,
//! x_fire at random in x_allow cycles, out_fire a random time after it,
//! d_zero constant over a row (random per row and sample, random outside
//! read cycles), ctl_start pulses during runs, ctl_resume pulses when not
//! paused and ctl_pause pulses when idle, done or paused (all to be
//! ignored, as docs/training.md, "Pause and resume", says), pauses at
//! random times of a run, resumes, runs of 0 to 3 iterations and a reset in
//! the middle. Five configurations in one build: the module's defaults (one
//! dense layer), a conv2d layer (ACC) before a dense one with SGM cycles, one
//! parameter, one sample and one class with SERVE_MAX 1, a layer with only
//! its biases trainable before an output layer with both and five samples,
//! and a mon index that wraps at the end of the walk. The test checks that
//! every configuration completed runs (one of 0 iterations at least), served
//! SERVE_MAX requests at one boundary, paused, skipped, summed and wrote
//! parameters, so it cannot pass vacuously; a second test builds the module
//! serving one request more than SERVE_MAX at a boundary and checks that the
//! comparison catches it. Fails (does not skip) without Verilator.

use std::collections::VecDeque;
use std::fmt::Write as _;
use std::fs;

use crate::common::{bits_for, expect_caught, mask, mutated_rtl, require_tool, scratch, Rng, Top};

/// A trainable tensor: rows, columns, its layer, whether it holds biases.
#[derive(Debug, Clone, Copy)]
struct Tensor {
    rows: usize,
    cols: usize,
    layer: usize,
    bias: bool,
}

#[derive(Debug, Clone)]
struct Cfg {
    tensors: Vec<Tensor>,
    /// Per layer: outputs, ACC.
    n_out: Vec<usize>,
    acc: Vec<usize>,
    m: usize,
    c: usize,
    serve_max: usize,
    ix_w: u32,
    sgm: usize,
}

const fn t(rows: usize, cols: usize, layer: usize, bias: bool) -> Tensor {
    Tensor { rows, cols, layer, bias }
}

fn cfgs() -> Vec<Cfg> {
    vec![
        // The module's defaults: one dense layer 4 -> 3, weights and biases
        Cfg { tensors: vec![t(3, 4, 0, false), t(3, 1, 0, true)], n_out: vec![3], acc: vec![0], m: 4, c: 2, serve_max: 4, ix_w: 4, sgm: 0 },
        // A conv2d layer (2 filters of 3x3x1, P = 4: N_OUT 8, ACC 5) before
        // a dense 8 -> 3 output layer, under sgm (H = C * (8 + C) + 2)
        Cfg {
            tensors: vec![t(2, 9, 0, false), t(2, 1, 0, true), t(3, 8, 1, false), t(3, 1, 1, true)],
            n_out: vec![8, 3],
            acc: vec![5, 0],
            m: 3,
            c: 3,
            serve_max: 3,
            ix_w: 6,
            sgm: 35,
        },
        // One parameter, one sample, one class, SERVE_MAX 1
        Cfg { tensors: vec![t(1, 1, 0, false)], n_out: vec![1], acc: vec![0], m: 1, c: 1, serve_max: 1, ix_w: 1, sgm: 0 },
        // Only the hidden layer's biases trainable, then the output layer's
        // weights and biases; five samples; one SGM cycle
        Cfg {
            tensors: vec![t(4, 1, 0, true), t(2, 4, 1, false), t(2, 1, 1, true)],
            n_out: vec![4, 2],
            acc: vec![0, 0],
            m: 5,
            c: 2,
            serve_max: 2,
            ix_w: 4,
            sgm: 1,
        },
        // 16 parameters in a 4-bit mon index (it wraps to 0 after the
        // walk), a conv2d layer of one pixel (ACC 2), four classes
        Cfg { tensors: vec![t(2, 7, 0, false), t(2, 1, 0, true)], n_out: vec![2], acc: vec![2], m: 2, c: 4, serve_max: 5, ix_w: 4, sgm: 0 },
    ]
}

impl Cfg {
    fn k(&self) -> usize {
        self.tensors.len()
    }
    fn l(&self) -> usize {
        self.n_out.len()
    }
    fn packed(&self, f: impl Fn(&Tensor) -> String) -> String {
        let v: Vec<String> = self.tensors.iter().rev().map(f).collect();
        format!("{{{}}}", v.join(", "))
    }
    fn packed_l(v: &[usize]) -> String {
        let v: Vec<String> = v.iter().rev().map(|x| format!("32'd{x}")).collect();
        format!("{{{}}}", v.join(", "))
    }
}

const CYCLES: usize = 20000;
const RESETS: [usize; 3] = [0, 1, 9973];

/// The outputs of a configuration, in the order of the output rows.
const OUTS: [&str; 30] = [
    "st_busy", "st_paused", "st_done", "st_iteration", "st_sample", "ext_mode", "ext_accept", "ld_enable", "play", "x_allow", "err_cap", "e_rot",
    "e_scan", "k", "h_start", "d_seed", "d_step", "d_last", "u_row", "u_col", "u_bias", "u_acc", "u_layer", "cur_clear", "cur_step", "op_read",
    "op_write", "mon_valid", "mon_kind", "mon_index",
];

#[derive(Debug, Clone, Copy, Default)]
struct In {
    ctl_start: bool,
    ctl_pause: bool,
    ctl_resume: bool,
    cfg_iterations: u32,
    ext_in_valid: bool,
    ext_in_fire: bool,
    ext_out_fire: bool,
    x_fire: bool,
    out_fire: bool,
    d_zero: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum St {
    Idle,
    Done,
    Drain,
    Bound,
    Serve,
    Paused,
    Play,
    Feed,
    Wait,
    Err,
    Sgm,
    Delta,
    Read,
    Acc,
    Hold,
    Write,
}

#[derive(Debug, Default, Clone)]
struct Stats {
    runs_done: usize,
    runs_empty: usize,
    samples: usize,
    served: usize,
    served_full: usize,
    pauses: usize,
    skipped: usize,
    written: usize,
    sums: usize,
}

/// The model's registers.
#[derive(Debug, Clone)]
struct Model {
    st: St,
    it: u32,
    s: usize,
    k: usize,
    l: usize,
    o: usize,
    t: usize,
    row: usize,
    col: usize,
    ix: u64,
    flight: u64,
    served: usize,
    pause: bool,
    sgm_n: usize,
    acc_n: usize,
    summed: bool,
}

impl Model {
    fn new() -> Model {
        Model {
            st: St::Idle,
            it: 0,
            s: 0,
            k: 0,
            l: 0,
            o: 0,
            t: 0,
            row: 0,
            col: 0,
            ix: 0,
            flight: 0,
            served: 0,
            pause: false,
            sgm_n: 0,
            acc_n: 0,
            summed: false,
        }
    }

    fn idle(&self) -> bool {
        matches!(self.st, St::Idle | St::Done)
    }

    fn training(&self) -> bool {
        matches!(self.st, St::Play | St::Feed | St::Wait | St::Err | St::Sgm | St::Delta | St::Read | St::Acc | St::Hold | St::Write)
    }

    fn ext_accept(&self, c: &Cfg) -> bool {
        self.idle() || (self.st == St::Serve && self.served < c.serve_max) || self.st == St::Paused
    }

    /// Combinational facts of this cycle: (skip, sum_first, advance,
    /// col_last, row_last, t_last, k_last).
    fn facts(&self, c: &Cfg, d_zero: bool) -> (bool, bool, bool, bool, bool, bool, bool) {
        let tn = c.tensors[self.t];
        let skip = self.st == St::Read && d_zero;
        let sum_first = self.st == St::Read && !d_zero && c.acc[tn.layer] != 0 && !self.summed;
        let advance = skip || self.st == St::Write;
        (skip, sum_first, advance, self.col + 1 == tn.cols, self.row + 1 == tn.rows, self.t + 1 == c.k(), self.k + 1 == c.c)
    }

    fn outputs(&self, c: &Cfg, x: &In) -> [u64; 30] {
        let b = u64::from;
        let tn = c.tensors[self.t];
        let (_, sum_first, advance, col_last, _, _, k_last) = self.facts(c, x.d_zero);
        let mine = 1u64 << tn.layer;
        let err_cap = self.st == St::Wait && x.out_fire;
        [
            b(!self.idle()),
            b(self.st == St::Paused),
            b(self.st == St::Done),
            u64::from(self.it),
            self.s as u64,
            b(!self.training()),
            b(self.ext_accept(c)),
            b(self.idle()),
            b(self.st == St::Play),
            b(self.st == St::Feed),
            b(err_cap),
            b(matches!(self.st, St::Err | St::Delta)),
            b(self.st == St::Err),
            self.k as u64,
            b(c.sgm > 0 && self.st == St::Err && k_last),
            b(err_cap),
            if self.st == St::Delta { 1u64 << self.l } else { 0 },
            b(k_last),
            if advance && col_last { mine } else { 0 },
            if advance && !tn.bias { mine } else { 0 },
            b(tn.bias),
            if sum_first { mine } else { 0 },
            tn.layer as u64,
            b(self.idle() && x.ctl_start),
            b(advance),
            b(self.st == St::Read && !x.d_zero && !sum_first),
            b(self.st == St::Write),
            b((self.st == St::Delta && k_last) || self.st == St::Write),
            b(self.st == St::Write),
            self.ix,
        ]
    }

    fn edge(&mut self, c: &Cfg, x: &In, st: &mut Stats) {
        let (skip, sum_first, advance, col_last, row_last, t_last, k_last) = self.facts(c, x.d_zero);
        let old = self.clone();
        let ixm = mask(c.ix_w);
        if x.ctl_pause && !old.idle() && old.st != St::Paused {
            self.pause = true;
        }
        match old.st {
            St::Idle | St::Done => {
                if x.ctl_start {
                    self.it = 0;
                    self.s = 0;
                    self.served = 0;
                    self.pause = false;
                    self.st = St::Drain;
                }
            }
            St::Drain => {
                if old.flight == 0 {
                    self.st = St::Bound;
                }
            }
            St::Bound => {
                if old.it == x.cfg_iterations {
                    self.st = St::Done;
                    st.runs_done += 1;
                    st.runs_empty += usize::from(old.it == 0);
                } else if old.pause || x.ctl_pause {
                    self.pause = false;
                    self.st = St::Paused;
                    st.pauses += 1;
                } else if x.ext_in_valid && old.served < c.serve_max {
                    self.st = St::Serve;
                } else {
                    self.served = 0;
                    self.st = if old.s == 0 { St::Play } else { St::Feed };
                }
            }
            St::Serve => {
                if x.ext_in_fire {
                    self.served += 1;
                    st.served += 1;
                    if self.served == c.serve_max {
                        st.served_full += 1;
                    }
                }
                if !x.ext_in_valid || (x.ext_in_fire && old.served + 1 >= c.serve_max) {
                    self.st = St::Drain;
                }
            }
            St::Paused => {
                if x.ctl_resume {
                    self.st = St::Drain;
                }
            }
            St::Play => self.st = St::Feed,
            St::Feed => {
                if x.x_fire {
                    self.st = St::Wait;
                }
            }
            St::Wait => {
                if x.out_fire {
                    self.k = 0;
                    self.st = St::Err;
                }
            }
            St::Err => {
                self.k = if k_last { 0 } else { old.k + 1 };
                if k_last {
                    self.l = 0;
                    self.o = 0;
                    self.ix = 0;
                    self.sgm_n = 0;
                    self.st = if c.sgm > 0 { St::Sgm } else { St::Delta };
                }
            }
            St::Sgm => {
                self.sgm_n = old.sgm_n + 1;
                if old.sgm_n + 1 == c.sgm {
                    self.st = St::Delta;
                }
            }
            St::Delta => {
                self.k = if k_last { 0 } else { old.k + 1 };
                if k_last {
                    let o_last = old.o + 1 == c.n_out[old.l];
                    self.o = if o_last { 0 } else { old.o + 1 };
                    self.ix = (old.ix + 1) & ixm;
                    if o_last {
                        self.l = old.l + 1;
                        if old.l + 1 == c.l() {
                            self.t = 0;
                            self.row = 0;
                            self.col = 0;
                            self.ix = 0;
                            self.st = St::Read;
                        }
                    }
                }
            }
            St::Read => {
                if sum_first {
                    self.acc_n = 0;
                    self.st = St::Acc;
                    st.sums += 1;
                } else if !x.d_zero {
                    self.st = St::Hold;
                }
            }
            St::Acc => {
                self.acc_n = old.acc_n + 1;
                if old.acc_n + 1 == c.acc[c.tensors[old.t].layer] {
                    self.summed = true;
                    self.st = St::Read;
                }
            }
            St::Hold => self.st = St::Write,
            St::Write => {
                self.summed = false;
                self.st = St::Read;
                st.written += 1;
            }
        }
        if skip {
            st.skipped += 1;
        }
        if advance {
            self.ix = (old.ix + 1) & ixm;
            self.col = if col_last { 0 } else { old.col + 1 };
            if col_last {
                self.row = if row_last { 0 } else { old.row + 1 };
                if row_last {
                    self.t = if t_last { 0 } else { old.t + 1 };
                }
            }
            if col_last && row_last && t_last {
                let s_last = old.s + 1 == c.m;
                self.s = if s_last { 0 } else { old.s + 1 };
                if s_last {
                    self.it = old.it.wrapping_add(1);
                }
                self.st = St::Bound;
                st.samples += 1;
            }
        }
        if x.ext_in_fire != x.ext_out_fire {
            self.flight = if x.ext_in_fire { old.flight + 1 } else { old.flight - 1 };
        }
    }
}

/// The environment and the model, cycle by cycle.
struct Gen<'a> {
    c: Cfg,
    rng: &'a mut Rng,
    m: Model,
    ins: Vec<In>,
    want: Vec<[u64; 30]>,
    st: Stats,
    /// Requests waiting to enter, answers due (cycle), the sample's output
    /// due, cfg_iterations, cycles until the next start and resume, the
    /// current row's d_zero (tensor, row, sample count when drawn).
    queue: usize,
    answers: VecDeque<usize>,
    out_due: Option<usize>,
    iters: u32,
    start_in: usize,
    resume_in: usize,
    row_zero: Option<((usize, usize, usize), bool)>,
}

impl Gen<'_> {
    fn cycle(&mut self) {
        let cy = self.ins.len();
        let rst = RESETS.contains(&cy);
        let c = self.c.clone();
        let m = self.m.clone();
        let rng = &mut *self.rng;
        // Requests arrive in bursts (more while idle, done or paused).
        if rng.chance(if m.training() { 2 } else { 6 }) {
            self.queue += rng.range(1, 4) as usize;
        }
        let in_valid = self.queue > 0;
        let in_fire = in_valid && m.ext_accept(&c) && rng.chance(70);
        let out_fire = matches!(self.answers.front(), Some(&due) if due <= cy) && rng.chance(80);
        // The controller's start, pause and resume pulses.
        let mut x = In { ext_in_valid: in_valid, ext_in_fire: in_fire, ext_out_fire: out_fire, cfg_iterations: self.iters, ..In::default() };
        // (ctl_start during a run, ctl_resume when not paused and
        // ctl_pause when idle or done are ignored: some come at random)
        if m.idle() {
            if self.start_in == 0 {
                x.ctl_start = true;
                self.start_in = rng.range(0, 40) as usize;
            } else {
                self.start_in -= 1;
            }
            x.ctl_pause = rng.chance(3);
        } else {
            x.ctl_start = rng.chance(1);
        }
        if m.st == St::Paused {
            // Pauses while paused, to be ignored.
            x.ctl_pause = rng.chance(10);
            if self.resume_in == 0 {
                x.ctl_resume = true;
                self.resume_in = rng.range(0, 30) as usize;
            } else {
                self.resume_in -= 1;
            }
        } else {
            x.ctl_resume = rng.chance(1);
            if !m.idle() && rng.chance(1) && rng.chance(30) {
                x.ctl_pause = true;
            }
        }
        // The training sample: taken at random in x_allow cycles, its
        // output a random latency later.
        if m.st == St::Feed && rng.chance(50) {
            x.x_fire = true;
            self.out_due = Some(cy + rng.range(1, 8) as usize);
        }
        if m.st == St::Wait && self.out_due.is_some_and(|d| d <= cy) {
            x.out_fire = true;
            self.out_due = None;
        }
        // d_zero: per row of the walk, else noise.
        x.d_zero = if m.st == St::Read {
            let key = (m.t, m.row, self.st.samples);
            match self.row_zero {
                Some((k, z)) if k == key => z,
                _ => {
                    let z = rng.chance(40);
                    self.row_zero = Some((key, z));
                    z
                }
            }
        } else {
            rng.coin()
        };
        if rst {
            // The pipeline is reset with the controller: nothing in flight.
            x = In { cfg_iterations: self.iters, ..In::default() };
            self.answers.clear();
            self.out_due = None;
            self.queue = 0;
        }
        if x.ext_in_fire {
            self.queue -= 1;
            self.answers.push_back(cy + rng.range(1, 6) as usize);
        }
        if x.ext_out_fire {
            self.answers.pop_front();
        }
        self.want.push(self.m.outputs(&c, &x));
        if rst {
            self.m = Model::new();
        } else {
            self.m.edge(&c, &x, &mut self.st);
        }
        // A new run's iterations are drawn while idle (held during a run).
        if self.m.idle() && self.rng.chance(20) {
            self.iters = match self.rng.next() % 8 {
                0 | 7 => 0,
                1 | 2 => 2,
                3 => 3,
                _ => 1,
            };
        }
        self.ins.push(x);
    }
}

/// The inputs of a configuration, in `In::row`'s order.
const INS: [&str; 10] =
    ["ctl_start", "ctl_pause", "ctl_resume", "cfg_iterations", "ext_in_valid", "ext_in_fire", "ext_out_fire", "x_fire", "out_fire", "d_zero"];

impl In {
    /// The inputs in `INS`'s order.
    fn row(&self) -> [u128; 10] {
        let b = u128::from;
        [
            b(self.ctl_start),
            b(self.ctl_pause),
            b(self.ctl_resume),
            u128::from(self.cfg_iterations),
            b(self.ext_in_valid),
            b(self.ext_in_fire),
            b(self.ext_out_fire),
            b(self.x_fire),
            b(self.out_fire),
            b(self.d_zero),
        ]
    }
}

/// The top: rst, then an instance per configuration, its ports (`INS` in,
/// `OUTS` out) suffixed by the configuration's index.
fn top(cfgs: &[Cfg]) -> Top {
    let mut top = Top::default();
    top.input("rst", 1);
    for (i, c) in cfgs.iter().enumerate() {
        INS.iter().for_each(|name| top.input(format!("{name}{i}"), if *name == "cfg_iterations" { 32 } else { 1 }));
        let widths = [1, 1, 1, 32, bits_for(c.m), 1, 1, 1, 1, 1, 1, 1, 1, bits_for(c.c), 1, 1, c.l() as u32, 1, c.l() as u32, c.l() as u32, 1, c.l() as u32, bits_for(c.l()), 1, 1, 1, 1, 1, 1, c.ix_w];
        OUTS.iter().zip(widths).for_each(|(name, w)| top.output(format!("{name}{i}"), w));
        write!(
            top.body,
            "fptgen_fb_ctrl #(.K({}), .L({}), .M({}), .C({}), .SERVE_MAX({}), .ROWS({}), .COLS({}), .LAYER({}), .BIAS({}), .N_OUT({}), .ACC({}), \
             .IX_W({}), .SGM_CYCLES({})) u{i} (\n    .clk(clk), .rst(rst)",
            c.k(),
            c.l(),
            c.m,
            c.c,
            c.serve_max,
            c.packed(|t| format!("32'd{}", t.rows)),
            c.packed(|t| format!("32'd{}", t.cols)),
            c.packed(|t| format!("32'd{}", t.layer)),
            c.packed(|t| format!("1'b{}", u8::from(t.bias))),
            Cfg::packed_l(&c.n_out),
            Cfg::packed_l(&c.acc),
            c.ix_w,
            c.sgm
        )
        .unwrap();
        for name in INS.iter().chain(&OUTS) {
            write!(top.body, ", .{name}({name}{i})").unwrap();
        }
        top.body += ");\n";
    }
    top
}

/// Builds the top over `cfgs` (`ctrl_src`: another `fptgen_fb_ctrl.v`, a
/// path), runs the environment's stimulus and compares every output in
/// every cycle.
fn run(name: &str, cfgs: &[Cfg], ctrl_src: Option<String>) -> (Result<Vec<Stats>, String>, std::path::PathBuf) {
    let mut rng = Rng(0xc7_41);
    let (mut ins, mut wants, mut stats) = (Vec::new(), Vec::new(), Vec::new());
    for c in cfgs {
        let mut g = Gen {
            c: c.clone(),
            rng: &mut rng,
            m: Model::new(),
            ins: Vec::new(),
            want: Vec::new(),
            st: Stats::default(),
            queue: 0,
            answers: VecDeque::new(),
            out_due: None,
            iters: 1,
            start_in: 5,
            resume_in: 3,
            row_zero: None,
        };
        while g.ins.len() < CYCLES {
            g.cycle();
        }
        ins.push(g.ins);
        wants.push(g.want);
        stats.push(g.st);
    }
    let dir = scratch(name);
    let stim: Vec<Vec<u128>> =
        (0..CYCLES).map(|cy| std::iter::once(u128::from(RESETS.contains(&cy))).chain(ins.iter().flat_map(|v| v[cy].row())).collect()).collect();
    let ctrl = ctrl_src.unwrap_or_else(|| "fptgen_fb_ctrl.v".to_string());
    let out = top(cfgs).run("ctrl_top", true, &dir, &[ctrl.as_str()], &stim);
    let rows: Vec<Vec<u64>> = out.iter().map(|r| r.iter().map(|&x| x as u64).collect()).collect();
    for (i, c) in cfgs.iter().enumerate() {
        // Before the first reset the registers are unknown.
        for cy in 1..CYCLES {
            let got = &rows[cy][30 * i..30 * i + 30];
            let want = &wants[i][cy];
            for (j, name) in OUTS.iter().enumerate() {
                if got[j] != want[j] {
                    let e = format!(
                        "configuration {i}, cycle {cy}: {name} {:#x}, expected {:#x} (configuration {c:?}; inputs {:?}; files in {})",
                        got[j],
                        want[j],
                        ins[i][cy],
                        dir.display()
                    );
                    return (Err(e), dir);
                }
            }
        }
    }
    (Ok(stats), dir)
}

#[test]
fn fb_ctrl_matches_the_model() {
    require_tool("verilator", "--version");
    let cfgs = cfgs();
    let (result, dir) = run("rtl_fb_ctrl", &cfgs, None);
    let stats = result.unwrap_or_else(|e| panic!("{e}"));
    for (i, (c, st)) in cfgs.iter().zip(&stats).enumerate() {
        let ctx = format!("configuration {i} ({c:?}): {st:?}");
        assert!(st.runs_done >= 3 && st.runs_empty >= 1 && st.samples >= 20, "{ctx}: too few runs (or none of 0 iterations) or samples");
        assert!(st.served >= 20 && st.served_full >= 1, "{ctx}: too few requests served at boundaries");
        assert!(st.pauses >= 2, "{ctx}: too few pauses");
        assert!(st.skipped >= 10 && st.written >= 10, "{ctx}: too few parameters skipped or written");
        if c.acc.iter().any(|&a| a > 0) {
            assert!(st.sums >= 10, "{ctx}: too few sums");
        }
    }
    let _ = fs::remove_dir_all(&dir);
}

/// The comparison catches a boundary that serves one request more than
/// SERVE_MAX.
#[test]
fn fb_ctrl_fails_on_one_request_too_many() {
    require_tool("verilator", "--version");
    // The serving limit.
    let path = mutated_rtl("fptgen_fb_ctrl.v", "served_reg} >= SERVE_MAX;", "served_reg} > SERVE_MAX;", "rtl_fb_ctrl_serve_src");
    let all = cfgs();
    let (result, run_dir) = run("rtl_fb_ctrl_serve", &[all[0].clone(), all[2].clone()], Some(path.display().to_string()));
    expect_caught(result, "one request too many", &["ext_mode", "ext_accept"], &path, &run_dir);
}
