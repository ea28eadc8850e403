//! `rtl/fptgen_es_ctrl.v` (the ES trainer's controller) in Verilator against
//! a model of the schedule its header comment and docs/training.md
//! ("Schedule", "Interface", "Evaluation by difference in hardware")
//! document, written here: the fill sweep (DIFF = 1: GROUP, READ, READ_WAIT,
//! FILL, FIN mode 2, every group), then per group GROUP (cur_save), READ
//! (tg reads, the last rewinding), READ_WAIT, the committed evaluation
//! (baseline fitness or DIFF: EVAL_START, EVAL, LOSS_WAIT, BASE_DONE,
//! ev_base at the next BOUNDARY), N members (BOUNDARY; PERTURB, a pass of
//! P + 1 cycles: the lead, then block j's write in cycle j + 1 for j < tg,
//! P rotations, draws for even antithetic members or every member, clears
//! for member 0, the previous member's pending accumulation; DIFF: FIN
//! mode 0; EVAL_START, EVAL until the M-th (or ch_count-th, none for 0)
//! training output, LOSS_WAIT cycles, SIGNAL (s by the fitness, 33-bit),
//! PO2, ev_loss; the last member's ACCUM pass of P), the (N+1)-th
//! BOUNDARY, UPDATE (P + 1, the cursor moving on), DIFF: FIN mode 1, and
//! NEXT_GROUP over groups and iterations to DONE; the cursor strobes of
//! every serial phase (step, or rewind after the last block); the
//! arbitration (ext_mode, ext_accept, ld_enable per state, a waiting request
//! served at a BOUNDARY up to SERVE_MAX while it keeps coming, RESTORE
//! first when a perturbation is in memory, DRAIN until every accepted
//! request is answered); pause at the next BOUNDARY, resume, start (from
//! IDLE or DONE, cfg_iterations sampled in INIT, 0 iterations) and resets
//! in the middle of runs. The environment is driven as the trainer's top
//! level drives it, reacting to the model's outputs: random requests (in
//! bursts), acceptance and answer delays, training outputs with random
//! delays after `play`, random fin_busy lengths after `fin_start` with
//! ch_count settling when it falls (random meanwhile, and wherever the
//! header says it is unused), random losses with extremes, random pulses of
//! the control inputs (also where they are ignored). Every output is
//! compared every cycle with the model (`blk` where the header defines it:
//! the serial phases and passes; `blk_next` every cycle with the next
//! cycle's `blk`; `blk_ahead` with the `blk` two cycles later wherever
//! that cycle writes a perturbation or an update), and every uninterrupted group's length with the header's
//! cycle counts (N * (P + E + 5) + 2 * P + tg + 5, + E + 2 for the
//! committed evaluation, + FIN's cycles with DIFF; the fill's 2 * tg + FIN
//! + 3). Several configurations in one build, fixed seeds. Fails (does not
//! skip) without Verilator.

use std::collections::VecDeque;
use std::fmt::Write as _;
use std::fs;

use crate::common::{bits_for, mask, require_tool, scratch, verilate_and_run, Rng};

/// One controller: T parameters, P blocks, population N, M samples,
/// FITNESS (0 antithetic, 1 baseline, 2 plain), SERVE_MAX, LOSS_WAIT, DIFF;
/// and the environment's request and pause rates (per mille per cycle).
#[derive(Debug, Clone, Copy)]
struct Cfg {
    t: usize,
    p: usize,
    n: usize,
    m: usize,
    fitness: u8,
    serve_max: usize,
    loss_wait: usize,
    diff: bool,
    req_rate: u64,
    pause_rate: u64,
}

impl Cfg {
    fn groups(&self) -> usize {
        self.t.div_ceil(self.p)
    }

    fn tg(&self, g: usize) -> usize {
        self.p.min(self.t - g * self.p)
    }

    fn ch_w(&self) -> u32 {
        bits_for(self.m + 1)
    }

    /// Whether the group evaluates the committed parameters first.
    fn committed_eval(&self) -> bool {
        self.fitness == 1 || self.diff
    }
}

/// One cycle's inputs of one controller.
#[derive(Debug, Clone, Copy, Default)]
struct In {
    rst: bool,
    start: bool,
    pause: bool,
    resume: bool,
    iters: u32,
    in_valid: bool,
    in_fire: bool,
    out_fire: bool,
    train_fire: bool,
    loss: u32,
    fin_busy: bool,
    ch_count: u64,
}

/// The 1-bit outputs, in the order of the packed word the harness prints
/// (bit k = FLAGS[k]).
const FLAGS: [&str; 28] = [
    "st_busy", "st_paused", "st_done", "ev_loss", "ev_base", "ext_mode", "ext_accept", "ld_enable", "play", "loss_clear", "cur_clear", "cur_rewind", "cur_step", "cur_save",
    "seed", "rot", "draw", "clear", "acc_en", "op_read", "op_perturb", "op_restore", "op_update", "negate", "op_fill", "fin_start", "sub", "l_capture",
];

/// The wider outputs, printed after the flags.
const WORDS: [&str; 10] = ["st_iteration", "st_group", "st_member", "st_last_loss", "active", "blk", "blk_next", "signal", "fin_mode", "blk_ahead"];
const BLK: usize = 5;
const BLK_NEXT: usize = 6;
const BLK_AHEAD: usize = 9;
/// FLAGS' op_perturb and op_update.
const OP_PERTURB: usize = 20;
const OP_UPDATE: usize = 22;

/// Where DRAIN goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum After {
    Init,
    Boundary,
}

/// The documented states, with their counters: a serial phase's block, a
/// pass's cycle (0 the lead), outputs taken, loss-wait cycles, requests
/// served.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ph {
    Idle,
    Done,
    Drain(After),
    Init,
    Group,
    Read(usize),
    ReadWait,
    Fill(usize),
    FinGap,
    FinStart,
    FinWait,
    EvalStart,
    Eval(usize),
    LossWait(usize),
    BaseDone,
    Boundary,
    Restore(usize),
    Paused,
    Serve(usize),
    Perturb(usize),
    Signal,
    Po2,
    Accum(usize),
    Update(usize),
    NextGroup,
}

/// How often the interesting cases happened (the stimulus is worth something).
#[derive(Debug, Default, Clone, Copy)]
struct Seen {
    runs: usize,
    zero_runs: usize,
    pauses: usize,
    serves: usize,
    serve_max: usize,
    restores: usize,
    pending: usize,
    no_samples: usize,
    groups_checked: usize,
}

/// The model: the state and what the controller keeps.
#[derive(Debug, Clone)]
struct Model {
    ph: Ph,
    iteration: u32,
    iters: u32,
    group: usize,
    member: usize,
    pause: bool,
    busy: bool,
    done: bool,
    last_loss: u32,
    prev_loss: u32,
    base_loss: u32,
    signal: u64,
    /// this boundary has served its requests
    served: bool,
    /// memory holds a perturbation
    dirty: bool,
    /// a member's Q(s) * e waits for the next PERTURB pass
    pend: bool,
    /// the running evaluation (and the BOUNDARY after it) is the committed one
    base_eval: bool,
    /// the fill sweep runs (DIFF)
    fill: bool,
    fin_mode: u64,
    /// accepted requests not yet answered
    outstanding: i64,
    seen: Seen,
}

impl Model {
    fn new() -> Model {
        Model {
            ph: Ph::Idle,
            iteration: 0,
            iters: 0,
            group: 0,
            member: 0,
            pause: false,
            busy: false,
            done: false,
            last_loss: 0,
            prev_loss: 0,
            base_loss: 0,
            signal: 0,
            served: false,
            dirty: false,
            pend: false,
            base_eval: false,
            fill: false,
            fin_mode: 0,
            outstanding: 0,
            seen: Seen::default(),
        }
    }

    fn ext_accept(&self) -> bool {
        matches!(self.ph, Ph::Idle | Ph::Done | Ph::Paused | Ph::Serve(_))
    }

    fn sub(&self, c: &Cfg) -> bool {
        c.diff && !self.base_eval
    }

    /// Antithetic: the odd members mirror the even member's noise.
    fn odd_antithetic(&self, c: &Cfg) -> bool {
        c.fitness == 0 && self.member % 2 == 1
    }

    /// The outputs in a cycle with inputs `x`: the flags, and the words
    /// (None: not defined by the header in this state).
    fn outputs(&self, c: &Cfg, x: &In) -> ([bool; 28], [Option<u64>; 10]) {
        let tg = c.tg(self.group);
        let ph = self.ph;
        // The serial operation of this cycle: (block, which).
        let op: Option<(usize, &str)> = match ph {
            Ph::Read(j) => Some((j, "read")),
            Ph::Restore(j) => Some((j, "restore")),
            Ph::Fill(j) => Some((j, "fill")),
            Ph::Perturb(k) if k >= 1 && k - 1 < tg => Some((k - 1, "perturb")),
            Ph::Update(k) if k >= 1 && k - 1 < tg => Some((k - 1, "update")),
            _ => None,
        };
        let blk = match ph {
            Ph::Read(j) | Ph::Restore(j) | Ph::Fill(j) | Ph::Accum(j) => Some(j),
            Ph::Perturb(k) | Ph::Update(k) => Some(k.saturating_sub(1)),
            _ => None,
        };
        // After the last block the cursor returns to the group's first
        // parameter, except after the update and the fill.
        let rewind = op.is_some_and(|(j, w)| j + 1 == tg && w != "update" && w != "fill");
        let step = op.is_some() && !rewind;
        let is = |w: &str| op.is_some_and(|(_, o)| o == w);
        let perturb = matches!(ph, Ph::Perturb(_));
        let pass_rot = match ph {
            Ph::Perturb(k) | Ph::Update(k) => k < c.p,
            Ph::Accum(_) => true,
            _ => false,
        };
        let sub = self.sub(c);
        let flags = [
            self.busy,
            ph == Ph::Paused,
            self.done,
            ph == Ph::Po2,
            ph == Ph::Boundary && self.base_eval && c.fitness == 1,
            matches!(ph, Ph::Idle | Ph::Done | Ph::Paused | Ph::Serve(_) | Ph::Drain(_)),
            self.ext_accept(),
            matches!(ph, Ph::Idle | Ph::Done | Ph::Paused),
            ph == Ph::EvalStart && !(sub && x.ch_count == 0),
            ph == Ph::EvalStart,
            ph == Ph::Init,
            rewind,
            step,
            ph == Ph::Group,
            ph == Ph::Init,
            pass_rot,
            perturb && !self.odd_antithetic(c),
            perturb && self.member == 0,
            matches!(ph, Ph::Accum(_)) || (perturb && self.pend),
            is("read"),
            is("perturb"),
            is("restore"),
            is("update"),
            self.odd_antithetic(c),
            is("fill"),
            ph == Ph::FinStart,
            sub,
            c.diff && self.base_eval,
        ];
        let words = [
            Some(u64::from(self.iteration)),
            Some(self.group as u64),
            Some(self.member as u64),
            Some(u64::from(self.last_loss)),
            Some(tg as u64),
            blk.map(|b| b as u64),
            None,
            Some(self.signal),
            Some(self.fin_mode),
            None,
        ];
        (flags, words)
    }

    /// The rising edge after a cycle with inputs `x`.
    fn edge(&mut self, c: &Cfg, x: &In) {
        if x.rst {
            let seen = self.seen;
            *self = Model::new();
            self.seen = seen;
            return;
        }
        let outstanding = self.outstanding;
        self.outstanding += i64::from(x.in_fire) - i64::from(x.out_fire);
        assert!(self.outstanding >= 0, "the environment answered a request that was not accepted");
        // A pause request counts while a run is in progress; a BOUNDARY
        // acts on the ones of earlier cycles.
        let pause = self.pause;
        self.pause |= x.pause && self.busy;
        let tg = c.tg(self.group);
        let sub = self.sub(c);
        self.ph = match self.ph {
            Ph::Idle | Ph::Done => {
                if x.start {
                    Ph::Drain(After::Init)
                } else {
                    self.ph
                }
            }
            Ph::Drain(a) => {
                if outstanding == 0 {
                    match a {
                        After::Init => Ph::Init,
                        After::Boundary => Ph::Boundary,
                    }
                } else {
                    self.ph
                }
            }
            Ph::Init => {
                self.iteration = 0;
                self.iters = x.iters;
                self.group = 0;
                self.done = false;
                self.pause = false;
                self.fill = c.diff;
                if x.iters == 0 {
                    self.done = true;
                    self.seen.zero_runs += 1;
                    Ph::Done
                } else {
                    self.busy = true;
                    Ph::Group
                }
            }
            Ph::Group => {
                self.member = 0;
                self.served = false;
                Ph::Read(0)
            }
            Ph::Read(j) => {
                if j + 1 == tg {
                    Ph::ReadWait
                } else {
                    Ph::Read(j + 1)
                }
            }
            Ph::ReadWait => {
                if self.fill {
                    Ph::Fill(0)
                } else if c.committed_eval() {
                    self.base_eval = true;
                    Ph::EvalStart
                } else {
                    Ph::Boundary
                }
            }
            Ph::EvalStart => {
                if sub && x.ch_count == 0 {
                    self.seen.no_samples += 1;
                    Ph::LossWait(0)
                } else {
                    Ph::Eval(0)
                }
            }
            Ph::Eval(o) => {
                let samples = if sub { x.ch_count as usize } else { c.m };
                if !x.train_fire {
                    Ph::Eval(o)
                } else if o + 1 == samples {
                    Ph::LossWait(0)
                } else {
                    Ph::Eval(o + 1)
                }
            }
            Ph::LossWait(w) => {
                if w + 1 < c.loss_wait {
                    Ph::LossWait(w + 1)
                } else if self.base_eval {
                    Ph::BaseDone
                } else {
                    Ph::Signal
                }
            }
            Ph::BaseDone => {
                self.base_loss = x.loss;
                if c.fitness == 1 {
                    self.last_loss = x.loss;
                }
                Ph::Boundary
            }
            Ph::Boundary => {
                self.base_eval = false;
                let request = x.in_valid && !self.served;
                if self.dirty && (pause || request) {
                    self.seen.restores += 1;
                    Ph::Restore(0)
                } else if pause {
                    self.pause = false;
                    self.seen.pauses += 1;
                    Ph::Paused
                } else if request {
                    self.seen.serves += 1;
                    Ph::Serve(0)
                } else {
                    self.served = false;
                    if self.member == c.n {
                        Ph::Update(0)
                    } else {
                        Ph::Perturb(0)
                    }
                }
            }
            Ph::Restore(j) => {
                if j + 1 == tg {
                    self.dirty = false;
                    Ph::Boundary
                } else {
                    Ph::Restore(j + 1)
                }
            }
            Ph::Paused => {
                self.pause = false;
                if x.resume {
                    Ph::Drain(After::Boundary)
                } else {
                    Ph::Paused
                }
            }
            Ph::Serve(k) => {
                let full = x.in_fire && k + 1 == c.serve_max;
                if !x.in_valid || full {
                    self.seen.serve_max += usize::from(full);
                    self.served = true;
                    Ph::Drain(After::Boundary)
                } else {
                    Ph::Serve(k + usize::from(x.in_fire))
                }
            }
            Ph::Perturb(k) => {
                self.dirty = true;
                if k == 0 && self.pend {
                    self.seen.pending += 1;
                }
                if k == c.p {
                    self.pend = false;
                    self.fin_mode = 0;
                    if c.diff {
                        Ph::FinGap
                    } else {
                        Ph::EvalStart
                    }
                } else {
                    Ph::Perturb(k + 1)
                }
            }
            Ph::Signal => {
                let (l, prev, base) = (u64::from(x.loss), u64::from(self.prev_loss), u64::from(self.base_loss));
                self.signal = match c.fitness {
                    0 => prev.wrapping_sub(l),
                    1 => l.wrapping_sub(base),
                    _ => l,
                } & mask(33);
                self.prev_loss = x.loss;
                self.last_loss = x.loss;
                Ph::Po2
            }
            Ph::Po2 => {
                if self.member + 1 == c.n {
                    Ph::Accum(0)
                } else {
                    // antithetic: the odd members accumulate; otherwise all
                    self.pend = !(c.fitness == 0 && self.member % 2 == 0);
                    self.member += 1;
                    Ph::Boundary
                }
            }
            Ph::Accum(j) => {
                if j + 1 == c.p {
                    self.member += 1;
                    Ph::Boundary
                } else {
                    Ph::Accum(j + 1)
                }
            }
            Ph::Update(k) => {
                self.dirty = false;
                if k == c.p {
                    self.fin_mode = 1;
                    if c.diff {
                        Ph::FinGap
                    } else {
                        Ph::NextGroup
                    }
                } else {
                    Ph::Update(k + 1)
                }
            }
            Ph::Fill(j) => {
                if j + 1 == tg {
                    self.fin_mode = 2;
                    Ph::FinGap
                } else {
                    Ph::Fill(j + 1)
                }
            }
            Ph::FinGap => Ph::FinStart,
            Ph::FinStart => Ph::FinWait,
            Ph::FinWait => {
                if x.fin_busy {
                    Ph::FinWait
                } else if self.fin_mode == 0 {
                    Ph::EvalStart
                } else {
                    Ph::NextGroup
                }
            }
            Ph::NextGroup => {
                let last = self.group + 1 == c.groups();
                if self.fill {
                    if last {
                        self.fill = false;
                        self.group = 0;
                    } else {
                        self.group += 1;
                    }
                    Ph::Group
                } else if last {
                    self.group = 0;
                    self.iteration = self.iteration.wrapping_add(1);
                    if self.iteration == self.iters {
                        self.busy = false;
                        self.done = true;
                        self.seen.runs += 1;
                        Ph::Done
                    } else {
                        Ph::Group
                    }
                } else {
                    self.group += 1;
                    Ph::Group
                }
            }
        };
    }
}

/// The environment of one controller: the trainer's top level and its user.
struct Env {
    rng: Rng,
    iters: u32,
    /// a request is waiting (in_valid, held until taken)
    req: bool,
    /// when each accepted request's answer can leave
    answers: VecDeque<usize>,
    /// the cycles of the training outputs to come
    outputs: VecDeque<usize>,
    /// fin_busy is high before this cycle (from the one after fin_start)
    busy_until: usize,
    /// ch_count once the unit is idle
    ch_final: u64,
}

impl Env {
    fn permille(&mut self, p: u64) -> bool {
        self.rng.next() % 1000 < p
    }

    fn loss(&mut self) -> u32 {
        match self.rng.next() % 10 {
            0 | 1 => 0,
            2 => u32::MAX,
            3 => self.rng.range(0, 40) as u32,
            _ => self.rng.next() as u32,
        }
    }

    fn changed(&mut self, c: &Cfg) -> u64 {
        match self.rng.next() % 5 {
            0 => 0,
            1 => c.m as u64,
            _ => self.rng.range(0, c.m as i64) as u64,
        }
    }

    /// This cycle's inputs, from what the controller shows (the model's state).
    fn inputs(&mut self, c: &Cfg, m: &Model, t: usize, rst: bool) -> In {
        let loss = self.loss();
        if rst {
            // Control inputs and requests low during a reset; nothing in flight after it.
            self.req = false;
            self.answers.clear();
            self.outputs.clear();
            self.busy_until = 0;
            return In { rst, iters: self.iters, loss, ch_count: self.rng.next() & mask(c.ch_w()), ..In::default() };
        }
        let ph = m.ph;
        let start = if matches!(ph, Ph::Idle | Ph::Done) { self.rng.chance(5) } else { self.permille(2) };
        // cfg_iterations held from ctl_start until INIT has sampled it.
        if !start && !matches!(ph, Ph::Drain(After::Init) | Ph::Init) && self.permille(10) {
            self.iters = [0, 1, 1, 1, 2, 2, 3][self.rng.range(0, 6) as usize];
        }
        let pause = if m.busy { self.permille(c.pause_rate) } else { self.permille(3) };
        let resume = if ph == Ph::Paused { self.rng.chance(8) } else { self.permille(3) };
        if !self.req && self.permille(c.req_rate) {
            self.req = true;
        }
        let in_valid = self.req;
        let in_fire = in_valid && m.ext_accept() && self.rng.chance(80);
        if in_fire {
            // requests often come in bursts
            self.req = self.rng.chance(60);
            let at = (t + self.rng.range(1, 10) as usize).max(self.answers.back().copied().unwrap_or(0));
            self.answers.push_back(at);
        }
        let out_fire = self.answers.front().is_some_and(|&a| a <= t) && self.rng.chance(75);
        if out_fire {
            self.answers.pop_front();
        }
        let train_fire = self.outputs.front() == Some(&t);
        if train_fire {
            self.outputs.pop_front();
        }
        let (fin_busy, ch_count) = if c.diff {
            let busy = t < self.busy_until;
            // ch_count is the unit's count once it is idle; random while it
            // works, and during the committed evaluation (sub low: unused)
            let ch = if busy || !m.sub(c) { self.rng.next() & mask(c.ch_w()) } else { self.ch_final };
            (busy, ch)
        } else {
            // DIFF = 0: unused
            (self.rng.coin(), self.rng.next() & mask(c.ch_w()))
        };
        In { rst, start, pause, resume, iters: self.iters, in_valid, in_fire, out_fire, train_fire, loss, fin_busy, ch_count }
    }

    /// Reacts to the controller's outputs of cycle `t`.
    fn react(&mut self, c: &Cfg, x: &In, flags: &[bool; 28], t: usize) {
        let flag = |name: &str| flags[FLAGS.iter().position(|f| *f == name).unwrap()];
        if flag("play") {
            // The buffer plays `count` (sub) or M samples; their outputs
            // come back with random delays, never before the next cycle.
            let n = if flag("sub") { x.ch_count as usize } else { c.m };
            let mut at = t + self.rng.range(1, 8) as usize;
            for _ in 0..n {
                self.outputs.push_back(at);
                at += if self.rng.chance(15) { self.rng.range(5, 20) } else { self.rng.range(1, 4) } as usize;
            }
        }
        if flag("fin_start") && c.diff {
            let k = if self.rng.chance(10) { self.rng.range(20, 40) } else { self.rng.range(0, 10) } as usize;
            self.busy_until = t + 1 + k;
            self.ch_final = self.changed(c);
        }
    }
}

/// A group's cycles, counted on the model's trace.
#[derive(Debug, Default)]
struct GroupRec {
    cycles: usize,
    evals: usize,
    /// EVAL and LOSS_WAIT cycles (the evaluations' E)
    e: usize,
    /// FIN_GAP, FIN_START, FIN_WAIT cycles
    fin: usize,
    fill: bool,
    interrupted: bool,
}

#[allow(clippy::too_many_arguments)]
const fn cfg(t: usize, p: usize, n: usize, m: usize, fitness: u8, serve_max: usize, loss_wait: usize, diff: bool, req_rate: u64, pause_rate: u64) -> Cfg {
    Cfg { t, p, n, m, fitness, serve_max, loss_wait, diff, req_rate, pause_rate }
}

#[test]
fn es_controller_follows_its_documented_schedule() {
    require_tool("verilator", "--version");
    let cfgs = [
        // the module's defaults: three groups of 2, antithetic
        cfg(6, 2, 4, 4, 0, 4, 1, false, 8, 4),
        // baseline; groups of 3, 3 and 1; P = 3 (blk's range is not a power of two)
        cfg(7, 3, 3, 5, 1, 2, 3, false, 8, 4),
        // P = T (one group), the smallest population, one sample, one request per boundary
        cfg(5, 5, 1, 1, 2, 1, 2, false, 15, 6),
        // one parameter, one block
        cfg(1, 1, 2, 1, 0, 1, 1, false, 10, 5),
        // one block, nine groups, baseline
        cfg(9, 1, 2, 2, 1, 3, 1, false, 6, 3),
        // powers of two: 4 groups of 4 (active = 4), N + 1 = 8 members' indices
        cfg(16, 4, 7, 3, 2, 8, 4, false, 4, 2),
        // the longest loss wait
        cfg(2, 1, 2, 2, 0, 2, 255, false, 1, 1),
        // P = T = 8
        cfg(8, 8, 6, 2, 0, 3, 2, false, 8, 4),
        // by difference: groups of 4, 4 and 2, antithetic
        cfg(10, 4, 2, 6, 0, 4, 2, true, 8, 4),
        // by difference: one group, baseline, N = 1
        cfg(3, 3, 1, 3, 1, 2, 1, true, 8, 5),
        // by difference: plain, groups of 2, 2 and 1
        cfg(5, 2, 3, 2, 2, 5, 3, true, 8, 4),
        // by difference: one parameter, one block
        cfg(1, 1, 2, 1, 0, 1, 1, true, 10, 5),
    ];
    let cycles = 16_000;
    let resets = [0, 1, 6203, 11_111, 11_112];
    let mut rng = Rng(0xe5c7_2026);

    // The stimulus and the expected outputs: the environment reacts to the
    // model's outputs (the RTL must show the same ones, or the comparison
    // fails at the first difference before anything depends on it).
    let mut stim: Vec<Vec<In>> = Vec::new();
    let mut want: Vec<Vec<([bool; 28], [Option<u64>; 10])>> = Vec::new();
    let mut trace: Vec<Vec<(Ph, usize)>> = Vec::new();
    let mut seen: Vec<Seen> = Vec::new();
    for c in &cfgs {
        let mut env = Env { rng: Rng(rng.next()), iters: 1, req: false, answers: VecDeque::new(), outputs: VecDeque::new(), busy_until: 0, ch_final: 0 };
        let mut m = Model::new();
        let (mut xs, mut ws, mut tr) = (Vec::new(), Vec::new(), Vec::new());
        for t in 0..cycles {
            let x = env.inputs(c, &m, t, resets.contains(&t));
            let o = m.outputs(c, &x);
            env.react(c, &x, &o.0, t);
            tr.push((m.ph, m.group));
            xs.push(x);
            ws.push(o);
            m.edge(c, &x);
        }
        stim.push(xs);
        want.push(ws);
        trace.push(tr);
        seen.push(m.seen);
    }

    let dir = scratch("rtl_es_ctrl");
    let word_w = |c: &Cfg| -> [u32; 10] { [32, bits_for(c.groups()), bits_for(c.n + 1), 32, bits_for(c.p) + 1, bits_for(c.p), bits_for(c.p), 33, 2, bits_for(c.p)] };
    let mut top = String::from("`timescale 1ns / 1ps\n`default_nettype none\nmodule ctrl_top (\n    input wire clk,\n    input wire rst");
    for (i, c) in cfgs.iter().enumerate() {
        write!(
            top,
            ",\n    input wire ctl_start{i}, input wire ctl_pause{i}, input wire ctl_resume{i}, input wire [31:0] cfg_iterations{i}, input wire ext_in_valid{i}, \
             input wire ext_in_fire{i}, input wire ext_out_fire{i}, input wire train_out_fire{i}, input wire [31:0] loss{i}, input wire fin_busy{i}, \
             input wire [{}:0] ch_count{i}",
            c.ch_w() - 1
        )
        .unwrap();
        for f in FLAGS {
            write!(top, ", output wire {f}{i}").unwrap();
        }
        for (w, name) in word_w(c).iter().zip(WORDS) {
            write!(top, ", output wire [{}:0] {name}{i}", w - 1).unwrap();
        }
    }
    top += "\n);\n";
    for (i, c) in cfgs.iter().enumerate() {
        write!(
            top,
            "fptgen_es_ctrl #(.T({}), .P({}), .N({}), .M({}), .FITNESS({}), .SERVE_MAX({}), .LOSS_WAIT({}), .DIFF({})) u{i} (\n    .clk(clk), .rst(rst), \
             .ctl_start(ctl_start{i}), .ctl_pause(ctl_pause{i}), .ctl_resume(ctl_resume{i}), .cfg_iterations(cfg_iterations{i}), .ext_in_valid(ext_in_valid{i}), \
             .ext_in_fire(ext_in_fire{i}), .ext_out_fire(ext_out_fire{i}), .train_out_fire(train_out_fire{i}), .loss(loss{i}), .fin_busy(fin_busy{i}), .ch_count(ch_count{i})",
            c.t,
            c.p,
            c.n,
            c.m,
            c.fitness,
            c.serve_max,
            c.loss_wait,
            u8::from(c.diff)
        )
        .unwrap();
        for name in FLAGS.iter().chain(WORDS.iter()) {
            write!(top, ", .{name}({name}{i})").unwrap();
        }
        top += ");\n";
    }
    top += "endmodule\n`default_nettype wire\n";
    fs::write(dir.join("ctrl_top.v"), top).unwrap();

    let mut text = String::new();
    for t in 0..cycles {
        write!(text, "{} ", u8::from(resets.contains(&t))).unwrap();
        for v in &stim {
            let x = v[t];
            let b = |f: bool| u8::from(f);
            write!(
                text,
                "{} {} {} {:x} {} {} {} {} {:x} {} {:x} ",
                b(x.start),
                b(x.pause),
                b(x.resume),
                x.iters,
                b(x.in_valid),
                b(x.in_fire),
                b(x.out_fire),
                b(x.train_fire),
                x.loss,
                b(x.fin_busy),
                x.ch_count
            )
            .unwrap();
        }
        text.push('\n');
    }
    fs::write(dir.join("stim.txt"), text).unwrap();
    let mut cpp = String::from(
        "#include \"Vctrl_top.h\"\n#include \"verilated.h\"\n#include <cstdio>\nint main(int argc, char** argv) {\n    \
         VerilatedContext ctx; ctx.commandArgs(argc, argv);\n    Vctrl_top top(&ctx);\n    FILE* f = std::fopen(\"stim.txt\", \"r\");\n    \
         top.clk = 0; top.eval();\n",
    );
    writeln!(cpp, "    for (int t = 0; t < {cycles}; ++t) {{\n        unsigned long long r[11];\n        if (std::fscanf(f, \"%llx\", &r[0]) != 1) return 3;\n        top.rst = r[0];").unwrap();
    for i in 0..cfgs.len() {
        writeln!(
            cpp,
            "        for (int k = 0; k < 11; ++k) if (std::fscanf(f, \"%llx\", &r[k]) != 1) return 3;\n        \
             top.ctl_start{i} = r[0]; top.ctl_pause{i} = r[1]; top.ctl_resume{i} = r[2]; top.cfg_iterations{i} = r[3]; top.ext_in_valid{i} = r[4]; \
             top.ext_in_fire{i} = r[5]; top.ext_out_fire{i} = r[6]; top.train_out_fire{i} = r[7]; top.loss{i} = r[8]; top.fin_busy{i} = r[9]; top.ch_count{i} = r[10];"
        )
        .unwrap();
    }
    cpp += "        top.eval();\n";
    for i in 0..cfgs.len() {
        let flags: Vec<String> = FLAGS.iter().enumerate().map(|(k, f)| format!("((unsigned long long)top.{f}{i} << {k})")).collect();
        cpp += "        std::printf(\"%llx";
        cpp += &" %llx".repeat(WORDS.len());
        write!(cpp, " \", {}", flags.join(" | ")).unwrap();
        for name in WORDS {
            write!(cpp, ", (unsigned long long)top.{name}{i}").unwrap();
        }
        cpp += ");\n";
    }
    cpp += "        std::printf(\"\\n\");\n        top.clk = 1; top.eval(); top.clk = 0; top.eval();\n    }\n    return 0;\n}\n";
    fs::write(dir.join("main.cpp"), cpp).unwrap();
    let out = verilate_and_run(&dir, "ctrl_top", &["fptgen_es_ctrl.v"]);
    let rows: Vec<Vec<u64>> = out.lines().map(|l| l.split_whitespace().map(|x| u64::from_str_radix(x, 16).unwrap()).collect()).collect();
    assert_eq!(rows.len(), cycles);
    let per = 1 + WORDS.len();
    let mut ahead_checked = 0usize;

    for (i, c) in cfgs.iter().enumerate() {
        let ctx = |t: usize| format!("configuration {i} {c:?}, cycle {t} (model state {:?}, group {}; inputs {:?})", trace[i][t].0, trace[i][t].1, stim[i][t]);
        // Before the first reset the controller's registers are unknown.
        for t in 1..cycles {
            let got = &rows[t][per * i..per * (i + 1)];
            let (flags, words) = &want[i][t];
            for (k, name) in FLAGS.iter().enumerate() {
                let g = (got[0] >> k) & 1 == 1;
                assert_eq!(g, flags[k], "{}: {name}: RTL {}, model {}", ctx(t), u8::from(g), u8::from(flags[k]));
            }
            for (k, name) in WORDS.iter().enumerate() {
                if let Some(w) = words[k] {
                    assert_eq!(got[1 + k], w, "{}: {name}: RTL {:#x}, model {w:#x}", ctx(t), got[1 + k]);
                }
            }
            // blk_next is the next cycle's blk.
            if t + 1 < cycles && !stim[i][t].rst {
                let next = rows[t + 1][per * i + 1 + BLK];
                assert_eq!(got[1 + BLK_NEXT], next, "{}: blk_next: RTL {:#x}, RTL's blk in the next cycle {next:#x}", ctx(t), got[1 + BLK_NEXT]);
            }
            // blk_ahead is the blk of a perturbation's or update's write two
            // cycles later.
            if t + 2 < cycles && !stim[i][t].rst && !stim[i][t + 1].rst {
                let later = &rows[t + 2][per * i..per * (i + 1)];
                if (later[0] >> OP_PERTURB) & 1 == 1 || (later[0] >> OP_UPDATE) & 1 == 1 {
                    ahead_checked += 1;
                    assert_eq!(
                        got[1 + BLK_AHEAD],
                        later[1 + BLK],
                        "{}: blk_ahead: RTL {:#x}, the blk of the write two cycles later {:#x}",
                        ctx(t),
                        got[1 + BLK_AHEAD],
                        later[1 + BLK]
                    );
                }
            }
        }

        // Every uninterrupted group takes the header's cycles: N * (P + E + 5)
        // + 2 * P + tg + 5, + E + 2 for the committed evaluation, + FIN's
        // cycles (DIFF: a member P + (M * R + 9) + E(c) + 14, the commit's
        // FIN after UPDATE); the fill's groups 2 * tg + FIN + 3.
        let mut rec: Option<GroupRec> = None;
        for t in 1..cycles {
            let (ph, g) = trace[i][t];
            if ph == Ph::Group {
                rec = Some(GroupRec::default());
            }
            if let Some(r) = rec.as_mut() {
                r.cycles += 1;
                match ph {
                    Ph::EvalStart => r.evals += 1,
                    Ph::Eval(_) | Ph::LossWait(_) => r.e += 1,
                    Ph::FinGap | Ph::FinStart | Ph::FinWait => r.fin += 1,
                    Ph::Fill(_) => r.fill = true,
                    Ph::Restore(_) | Ph::Serve(_) | Ph::Paused | Ph::Drain(_) => r.interrupted = true,
                    _ => {}
                }
                if ph == Ph::NextGroup && !r.interrupted {
                    let (n, p, tg) = (c.n, c.p, c.tg(g));
                    let expected = if r.fill {
                        2 * tg + r.fin + 3
                    } else {
                        let base = usize::from(c.committed_eval());
                        assert_eq!(r.evals, n + base, "{}: evaluations in group {g}", ctx(t));
                        n * (p + 5) + r.e + r.fin + 2 * p + tg + 5 + 2 * base
                    };
                    assert_eq!(r.cycles, expected, "{}: cycles of group {g} ({r:?})", ctx(t));
                    seen[i].groups_checked += 1;
                }
            }
            if ph == Ph::NextGroup || stim[i][t].rst {
                rec = None;
            }
        }
    }
    // The stimulus is worth something: every configuration finished runs,
    // paused, served (restoring first), filled SERVE_MAX, and a DIFF
    // controller skipped the play of a member that changes nothing.
    for (i, (c, s)) in cfgs.iter().zip(&seen).enumerate() {
        let ok = s.runs >= 3
            && s.zero_runs >= 1
            && s.pauses >= 3
            && s.serves >= 3
            && s.restores >= 2
            && s.serve_max >= 1
            && s.groups_checked >= 5
            && (c.n < if c.fitness == 0 { 4 } else { 2 } || s.pending >= 1)
            && (!c.diff || s.no_samples >= 1);
        assert!(ok, "configuration {i} {c:?}: too little of the schedule exercised: {s:?}");
    }
    assert!(ahead_checked > 1000, "writes whose blk_ahead was compared: {ahead_checked}");
    let _ = fs::remove_dir_all(&dir);
}
