//! `rtl/fptgen_bn.v`, the per-channel scale and shift (batch norm) of a
//! stream, in Verilator against a model written here from the definition
//! (sim/src/layers/batchnorm.rs, docs/numerics.md "batchnorm"): per channel
//! `acc = A.cast_from(shift, H)`, `acc = A.add(acc, A.mul_from(scale, S, x,
//! X))`, relu if asked (`acc < 0` becomes 0), `y = Y.cast_from(acc, A)`,
//! with `fptgen_sim`'s `Format` arithmetic as the oracle of each value (the
//! specification of the numerics, not the layer code under test):
//!
//! * `bn_outputs_and_cycles`: hand-picked and seeded random parameter sets
//!   in one build (C 1 to 8; input, scale, shift formats signed and
//!   unsigned, 1 to 64 bits, fraction counts below 0 and beyond the width;
//!   accumulators of 1 to 64 bits, signed and unsigned, every quantization
//!   and every overflow mode, so every pair of the two at least once;
//!   output formats likewise; relu and linear; scale and shift as ROM or
//!   RAM), 256 beats of random codes each (a fifth of the codes extremes:
//!   0, the largest, the two around the sign boundary), also in the
//!   parameter images. (a) Input always offered, output always ready: every
//!   output bit compared with the model (the first difference fails, naming
//!   the beat and channel), and the cycle of every beat accepted and every
//!   result output with the module's cycle model (its header): beat k on
//!   cycle k, its result on cycle k + 2. (b) The same beats with random
//!   input gaps and output back-pressure (four seeded runs): every bit
//!   compared, nothing lost, nothing extra, and the handshake of the header
//!   replayed cycle by cycle on the logged signals: in_ready and out_valid
//!   in every cycle as its formulas give.
//! * `bn_trainer_port_updates_parameters`: trainable instances (both
//!   tensors writable, or one of them: writes to the other are ignored and
//!   its `tr_rdata` stays 0) driven cycle by cycle from a script: a
//!   full-rate start; new values for every scale and shift written between
//!   beats, one channel at a time, the stream idle in the write's cycle
//!   and the next (2 cycles), full rate again after each (from then on the
//!   outputs use the new values); one write while the stream runs at full
//!   rate (the beat accepted the cycle after the write still uses the old
//!   value, the next one the new); every parameter read back while the
//!   stream runs; then random writes, reads, input gaps and output stalls.
//!   The model keeps the memories' contents cycle by cycle: a beat accepted
//!   on cycle t uses the values written on cycles up to t - 2 (the module's
//!   header), a read in cycle t returns the value before that cycle's write
//!   (read-first). Every output bit, every read, the cycle of every beat
//!   and result of the full-rate phases are compared.
//! * `bn_illegal_parameters_stop_elaboration`: `verilator --lint-only
//!   -Wall` is silent on legal sets and fails on every kind of illegal one
//!   (C 0; each width 0 or 65; each signedness, RELU and WRITABLE flag 2;
//!   each mode code out of range), naming the failed check's module
//!   `fptgen_param_error_bn_<reason>`.
//! * `bn_synthesizes_for_ultrascale`: yosys `synth_xilinx -family xcu` on a
//!   trainable and a frozen instance: the channels' arithmetic maps to
//!   multipliers (DSP48E2) and LUTs, no parameter memory becomes a RAM
//!   primitive (one word), and the flip-flops are no more than the
//!   registers; prints the cell counts.
//!
//! Verilator and yosys are required: without them these tests fail (they
//! never skip).

use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use fptgen_sim::fixed::{Format, Overflow, Quant};

use crate::pixel_stream;
use crate::common::{require_tool, run, scratch, verilate_and_run, Rng};
use crate::pixel_stream::{cells, field, pack, to_hex, Dut, Log};

const SEED: u64 = 0x626e_0000_0000_0001;
/// Random parameter sets of `bn_outputs_and_cycles`, besides the
/// hand-picked ones: 28 = every accumulator quantization x overflow pair.
const RANDOM_CFGS: usize = 28;
/// Beats streamed into every parameter set.
const BEATS: usize = 256;

/// fptgen_cast's codes (its header): QUANT 0..6 and OVF 0..3.
const QUANTS: [Quant; 7] = [Quant::Trn, Quant::TrnZero, Quant::Rnd, Quant::RndZero, Quant::RndMinInf, Quant::RndInf, Quant::RndConv];
const OVFS: [Overflow; 4] = [Overflow::Wrap, Overflow::Sat, Overflow::SatZero, Overflow::SatSym];

/// A fixed-point format as the module's parameters: width, fraction bits,
/// signedness, and (accumulator and output only) the mode codes.
#[derive(Debug, Clone, Copy)]
struct Fx {
    w: u32,
    f: i32,
    s: bool,
    q: usize,
    o: usize,
}

const fn fx(w: u32, f: i32, s: bool) -> Fx {
    Fx { w, f, s, q: 0, o: 0 }
}

const fn fxm(w: u32, f: i32, s: bool, q: usize, o: usize) -> Fx {
    Fx { w, f, s, q, o }
}

impl Fx {
    fn format(&self) -> Format {
        Format::new(self.s, self.w, self.w as i32 - self.f, QUANTS[self.q], OVFS[self.o]).expect("format")
    }

    fn params(&self, p: &str, modes: bool) -> String {
        let mut s = format!(".{p}_W({}), .{p}_F({}), .{p}_S({})", self.w, self.f, u8::from(self.s));
        if modes {
            write!(s, ", .{p}_Q({}), .{p}_O({})", self.q, self.o).unwrap();
        }
        s
    }

    fn mask(&self) -> u64 {
        if self.w == 64 {
            u64::MAX
        } else {
            (1u64 << self.w) - 1
        }
    }

    /// A random code, a fifth of them extremes.
    fn code(&self, rng: &mut Rng) -> u64 {
        let half = 1u64 << (self.w - 1);
        let extremes = [0, self.mask(), half, half - 1];
        if rng.chance(20) {
            extremes[(rng.next() % 4) as usize]
        } else {
            rng.next() & self.mask()
        }
    }
}

#[derive(Debug, Clone, Copy)]
struct Cfg {
    c: usize,
    x: Fx,
    /// Scale
    s: Fx,
    /// Shift
    h: Fx,
    a: Fx,
    y: Fx,
    relu: bool,
    s_writable: bool,
    h_writable: bool,
}

/// clog2 as `rtl/fptgen_clog2.vh` defines it: the bits of 0 .. n - 1, at
/// least 1.
fn clog2(n: usize) -> usize {
    let mut b = 1;
    while (1usize << b) < n {
        b += 1;
    }
    b
}

impl Cfg {
    fn params(&self, s_file: &str, h_file: &str) -> String {
        format!(
            ".C({}), {}, {}, {}, {}, {}, .RELU({}), .S_WRITABLE({}), .S_FILE(\"{s_file}\"), .H_WRITABLE({}), .H_FILE(\"{h_file}\")",
            self.c,
            self.x.params("X", false),
            self.s.params("S", false),
            self.h.params("H", false),
            self.a.params("A", true),
            self.y.params("Y", true),
            u8::from(self.relu),
            u8::from(self.s_writable),
            u8::from(self.h_writable),
        )
    }

    /// The output code of channel value `x` with scale `scale` and shift
    /// `shift` (codes): the simulator's definition, step by step.
    fn value(&self, scale: u64, shift: u64, x: u64) -> u64 {
        let (xf, sf, hf, af, yf) = (self.x.format(), self.s.format(), self.h.format(), self.a.format(), self.y.format());
        let mut acc = af.cast_from(hf.from_bits(shift), &hf);
        acc = af.add(acc, af.mul_from(sf.from_bits(scale), &sf, xf.from_bits(x), &xf));
        if self.relu && acc < 0 {
            acc = 0;
        }
        yf.bits(yf.cast_from(acc, &af))
    }

    /// The expected output beat: one code per channel.
    fn beat(&self, scale: &[u64], shift: &[u64], x: &[u64]) -> Vec<u64> {
        (0..self.c).map(|c| self.value(scale[c], shift[c], x[c])).collect()
    }

    fn beat_codes(&self, rng: &mut Rng) -> Vec<u64> {
        (0..self.c).map(|_| self.x.code(rng)).collect()
    }

    /// A `$readmemh` image of one word of C columns.
    fn image(codes: &[u64], w: u32) -> String {
        format!("{}\n", to_hex(&pack(codes, w)))
    }
}

#[rustfmt::skip]
fn hand_picked() -> Vec<Cfg> {
    vec![
        // A typical 8-bit layer: saturating, rounding accumulator, relu
        Cfg { c: 4, x: fx(8, 4, true), s: fx(8, 6, true), h: fx(8, 4, true), a: fxm(20, 10, true, 2, 1), y: fxm(8, 4, true, 6, 1), relu: true, s_writable: false, h_writable: false },
        // All unsigned, wrapping, one channel
        Cfg { c: 1, x: fx(8, 8, false), s: fx(6, 3, false), h: fx(7, 2, false), a: fxm(12, 6, false, 0, 0), y: fxm(8, 4, false, 0, 0), relu: false, s_writable: true, h_writable: false },
        // 1-bit everything
        Cfg { c: 3, x: fx(1, 0, true), s: fx(1, 0, true), h: fx(1, 0, false), a: fxm(1, 0, true, 5, 1), y: fxm(1, 0, false, 2, 1), relu: false, s_writable: false, h_writable: true },
        Cfg { c: 2, x: fx(1, 1, false), s: fx(1, -1, false), h: fx(1, 2, true), a: fxm(2, 1, true, 6, 3), y: fxm(1, 0, true, 4, 3), relu: true, s_writable: true, h_writable: true },
        // 64-bit input, scale, accumulator and output: a 130-bit product
        Cfg { c: 2, x: fx(64, 32, true), s: fx(64, 40, true), h: fx(64, 10, false), a: fxm(64, 30, true, 3, 1), y: fxm(64, 20, true, 5, 3), relu: false, s_writable: false, h_writable: false },
        Cfg { c: 1, x: fx(64, 0, false), s: fx(64, 64, false), h: fx(64, 70, true), a: fxm(64, 40, false, 6, 0), y: fxm(64, 66, false, 1, 2), relu: true, s_writable: true, h_writable: true },
        // A narrow saturating accumulator: the sum overflows often
        Cfg { c: 5, x: fx(8, 3, true), s: fx(8, 3, true), h: fx(8, 1, true), a: fxm(6, 2, true, 2, 1), y: fxm(4, 1, true, 3, 2), relu: false, s_writable: false, h_writable: false },
        // An unsigned accumulator under signed operands, relu (a no-op on it)
        Cfg { c: 3, x: fx(6, 2, true), s: fx(5, 2, true), h: fx(6, 3, true), a: fxm(10, 4, false, 1, 3), y: fxm(6, 3, true, 4, 1), relu: true, s_writable: false, h_writable: true },
        // Fractions outside the word: negative and beyond the width
        Cfg { c: 8, x: fx(5, -2, true), s: fx(4, 7, true), h: fx(6, -3, false), a: fxm(16, 3, true, 6, 2), y: fxm(7, -1, true, 2, 0), relu: false, s_writable: false, h_writable: false },
        // Signed AP_SAT_SYM everywhere
        Cfg { c: 2, x: fx(8, 7, true), s: fx(8, 7, true), h: fx(8, 7, true), a: fxm(9, 8, true, 0, 3), y: fxm(5, 4, true, 2, 3), relu: false, s_writable: true, h_writable: false },
    ]
}

/// Random parameter set `i`: the accumulator's modes are pair `i` of the
/// 7 x 4, the output's another pair; the rest seeded random.
fn random_cfg(rng: &mut Rng, i: usize) -> Cfg {
    let pick = |rng: &mut Rng, xs: &[u32]| xs[(rng.next() % xs.len() as u64) as usize];
    let fmt = |rng: &mut Rng, xs: &[u32]| {
        let w = pick(rng, xs);
        fx(w, rng.range(-3, i64::from(w) + 3) as i32, rng.coin())
    };
    let widths = [1, 2, 3, 4, 5, 6, 7, 8, 10, 12, 16, 24];
    let x = fmt(rng, &widths);
    let s = fmt(rng, &widths);
    let h = fmt(rng, &widths);
    let a_w = match rng.next() % 8 {
        0 => 64,
        1 => rng.range(1, 6) as u32,
        _ => rng.range(6, 40) as u32,
    };
    let pf = i64::from(x.f + s.f);
    let a_f = rng.range(pf - 6, pf + 2) as i32;
    let y_w = rng.range(1, 16) as u32;
    let y_f = rng.range(i64::from(a_f) - 8, i64::from(a_f) + 1) as i32;
    Cfg {
        c: [1, 2, 3, 4, 5, 8][(rng.next() % 6) as usize],
        x,
        s,
        h,
        a: fxm(a_w, a_f, rng.coin(), i % 7, (i / 7) % 4),
        y: fxm(y_w, y_f, rng.coin(), (3 * i + 1) % 7, (i + 2) % 4),
        relu: rng.coin(),
        s_writable: rng.chance(25),
        h_writable: rng.chance(25),
    }
}

/// One instance's data: its parameter codes and input beats.
struct Data {
    scale: Vec<u64>,
    shift: Vec<u64>,
    beats: Vec<Vec<u64>>,
}

struct Bench {
    dir: PathBuf,
    cfgs: Vec<Cfg>,
    data: Vec<Data>,
    duts: Vec<Dut>,
    full_rate: Vec<Log>,
}

fn bench(name: &str) -> Bench {
    require_tool("verilator", "--version");
    let mut rng = Rng(SEED);
    let mut cfgs = hand_picked();
    for i in 0..RANDOM_CFGS {
        let c = random_cfg(&mut rng, i);
        cfgs.push(c);
    }
    let data: Vec<Data> = cfgs
        .iter()
        .map(|c| Data {
            scale: (0..c.c).map(|_| c.s.code(&mut rng)).collect(),
            shift: (0..c.c).map(|_| c.h.code(&mut rng)).collect(),
            beats: (0..BEATS).map(|_| c.beat_codes(&mut rng)).collect(),
        })
        .collect();
    let duts: Vec<Dut> = cfgs
        .iter()
        .zip(&data)
        .enumerate()
        .map(|(i, (c, d))| {
            let cw = clog2(c.c);
            Dut {
                params: c.params(&format!("s{i}.hex"), &format!("h{i}.hex")),
                in_bits: c.c * c.x.w as usize,
                out_bits: c.c * c.y.w as usize,
                beats: d.beats.iter().map(|b| pack(b, c.x.w)).collect(),
                outputs: BEATS,
                // The trainer ports, tied off.
                decls: format!("wire [{}:0] unused_s_rdata{i};\nwire [{}:0] unused_h_rdata{i};", c.s.w - 1, c.h.w - 1),
                ports: format!(
                    ".s_tr_en(1'b0), .s_tr_we(1'b0), .s_tr_addr(1'b0), .s_tr_col({{{cw}{{1'b0}}}}), .s_tr_wdata({{{}{{1'b0}}}}), .s_tr_rdata(unused_s_rdata{i}),\n    \
                     .h_tr_en(1'b0), .h_tr_we(1'b0), .h_tr_addr(1'b0), .h_tr_col({{{cw}{{1'b0}}}}), .h_tr_wdata({{{}{{1'b0}}}}), .h_tr_rdata(unused_h_rdata{i})",
                    c.s.w, c.h.w
                ),
                files: vec![(format!("s{i}.hex"), Cfg::image(&d.scale, c.s.w)), (format!("h{i}.hex"), Cfg::image(&d.shift, c.h.w))],
            }
        })
        .collect();
    let dir = scratch(name);
    let full_rate = pixel_stream::build_and_run_with(&dir, "bn_top", "fptgen_bn", &["fptgen_cast.v", "fptgen_param_mem.v"], &duts);
    Bench { dir, cfgs, data, duts, full_rate }
}

/// Every result beat of every instance against the model, bit for bit;
/// fails on the first difference.
fn check_outputs(b: &Bench, logs: &[Log], run: &str) {
    for (i, (cfg, d)) in b.cfgs.iter().zip(&b.data).enumerate() {
        let log = &logs[i];
        let ctx = format!("{run}, parameter set {i} {cfg:?}");
        log.check_counts(&ctx, BEATS, BEATS, ["beats", "results"]);
        for (k, (t, bits)) in log.outputs.iter().enumerate() {
            let want = cfg.beat(&d.scale, &d.shift, &d.beats[k]);
            for (c, &v) in want.iter().enumerate() {
                let got = field(bits, c, cfg.y.w);
                assert_eq!(
                    got, v,
                    "{ctx}: beat {k}, channel {c} (x {:#x}, scale {:#x}, shift {:#x}) output on cycle {t}: got {got:#x}, want {v:#x}",
                    d.beats[k][c], d.scale[c], d.shift[c]
                );
            }
        }
    }
}

/// Edges from a beat's acceptance to its result's output (the module
/// header's cycle model: two stages).
const LATENCY: usize = 2;

/// The handshake of the module's header, replayed on the signals of every
/// cycle of a traced run: `en = in_ready = !out_valid || out_ready`; on an
/// edge with `en` stage 1's valid takes in_valid and out_valid takes stage
/// 1's.
fn check_handshake(log: &Log, ctx: &str) {
    assert!(!log.cycles.is_empty(), "{ctx}: no trace");
    let mut valid = [false; LATENCY];
    for (t, c) in log.cycles.iter().enumerate() {
        let ov = valid[LATENCY - 1];
        let en = !ov || c.out_ready;
        assert_eq!(c.out_valid, ov, "{ctx}: out_valid on cycle {t}, model {ov}");
        assert_eq!(c.in_ready, en, "{ctx}: in_ready on cycle {t} (out_valid {ov}, out_ready {}), model {en}", c.out_ready);
        if en {
            valid.rotate_right(1);
            valid[0] = c.in_valid;
        }
    }
}

#[test]
fn bn_outputs_and_cycles() {
    let b = bench("rtl_bn");
    // Every accumulator mode pair is exercised.
    for q in 0..7 {
        for o in 0..4 {
            assert!(b.cfgs.iter().any(|c| c.a.q == q && c.a.o == o), "no accumulator with QUANT {q}, OVF {o}");
        }
    }

    // (a) Full rate: bits and cycles. The first beat after reset is
    // accepted on cycle 0, beat k on cycle k, its result output on k + 2.
    check_outputs(&b, &b.full_rate, "full rate");
    for (i, cfg) in b.cfgs.iter().enumerate() {
        let log = &b.full_rate[i];
        for k in 0..BEATS {
            let ctx = format!("full rate, parameter set {i} {cfg:?}, beat {k}");
            assert_eq!(log.accepted[k], k as u64, "{ctx}: accepted on cycle {}, model {k}", log.accepted[k]);
            let want = (k + LATENCY) as u64;
            assert_eq!(log.outputs[k].0, want, "{ctx}: result output on cycle {}, model {want}", log.outputs[k].0);
        }
    }

    // (b) Random input gaps and output back-pressure: bits, and the
    // handshake cycle by cycle.
    for (gap, stall, seed) in [(30, 30, 1), (10, 70, 2), (60, 10, 3), (0, 90, 4)] {
        let logs = pixel_stream::rerun_traced(&b.dir, &b.duts, gap, stall, seed);
        let run = format!("{gap}% input gaps, {stall}% output stalls, seed {seed}");
        check_outputs(&b, &logs, &run);
        for (i, cfg) in b.cfgs.iter().enumerate() {
            check_handshake(&logs[i], &format!("{run}, parameter set {i} {cfg:?}"));
        }
    }
    fs::remove_dir_all(&b.dir).ok();
}

// ---------------------------------------------------------------------------
// The trainer ports

/// One trainer port's inputs in one cycle.
#[derive(Debug, Clone, Copy, Default)]
struct Tr {
    en: bool,
    we: bool,
    col: usize,
    data: u64,
}

/// One cycle of the script: offer the next beat (the bench holds an offered
/// beat until it is taken), out_ready, and the two trainer ports.
#[derive(Debug, Clone, Copy, Default)]
struct Step {
    offer: bool,
    ready: bool,
    s: Tr,
    h: Tr,
}

/// Streams at full rate, no trainer access.
fn full(n: usize) -> Vec<Step> {
    vec![Step { offer: true, ready: true, ..Default::default() }; n]
}

#[rustfmt::skip]
const TRAIN_CFGS: &[Cfg] = &[
    Cfg { c: 1, x: fx(8, 4, true), s: fx(8, 6, true), h: fx(8, 4, true), a: fxm(20, 10, true, 2, 1), y: fxm(8, 4, true, 6, 1), relu: false, s_writable: true, h_writable: true },
    Cfg { c: 3, x: fx(6, 6, false), s: fx(7, 5, true), h: fx(10, 8, true), a: fxm(16, 11, true, 1, 0), y: fxm(8, 5, false, 2, 2), relu: true, s_writable: true, h_writable: true },
    Cfg { c: 4, x: fx(16, 8, true), s: fx(12, 10, true), h: fx(5, 2, false), a: fxm(32, 18, true, 0, 3), y: fxm(16, 8, true, 5, 1), relu: false, s_writable: true, h_writable: false },
    Cfg { c: 2, x: fx(4, 2, true), s: fx(3, 1, false), h: fx(6, 3, true), a: fxm(9, 4, false, 3, 1), y: fxm(4, 2, false, 0, 0), relu: true, s_writable: false, h_writable: true },
];

/// One trainable instance's stimulus and the cycles of its phases.
struct TrainRun {
    cfg: Cfg,
    scale: Vec<u64>,
    shift: Vec<u64>,
    beats: Vec<Vec<u64>>,
    script: Vec<Step>,
    /// The first cycle after the full-rate phases (before it: out_ready
    /// always high, every offered beat taken on its cycle).
    random_from: usize,
    /// The cycle of the write during full-rate streaming.
    live_write: usize,
    /// The first cycle after the writes between beats.
    updated_from: usize,
    /// The values those writes wrote, per channel.
    new_scale: Vec<u64>,
    new_shift: Vec<u64>,
}

/// A code of `f` other than `old`.
fn changed(rng: &mut Rng, f: &Fx, old: u64) -> u64 {
    loop {
        let v = f.code(rng);
        if v != old {
            return v;
        }
    }
}

fn train_run(rng: &mut Rng, cfg: Cfg) -> TrainRun {
    let c = cfg.c;
    let scale: Vec<u64> = (0..c).map(|_| cfg.s.code(rng)).collect();
    let shift: Vec<u64> = (0..c).map(|_| cfg.h.code(rng)).collect();
    let mut script = full(10);
    // New values between beats: channel k's scale and channel C-1-k's
    // shift in one cycle, the stream idle in it and the next, then three
    // beats at full rate.
    let mut new_scale = scale.clone();
    let mut new_shift = shift.clone();
    for k in 0..c {
        let hk = c - 1 - k;
        new_scale[k] = changed(rng, &cfg.s, scale[k]);
        new_shift[hk] = changed(rng, &cfg.h, shift[hk]);
        script.push(Step {
            offer: false,
            ready: true,
            s: Tr { en: true, we: true, col: k, data: new_scale[k] },
            h: Tr { en: true, we: true, col: hk, data: new_shift[hk] },
        });
        script.push(Step { offer: false, ready: true, ..Default::default() });
        script.extend(full(3));
    }
    // The first cycle after the last update's idle cycle.
    let updated_from = script.len() - 3;
    // A write while the stream runs at full rate.
    script.extend(full(8));
    let live_write = script.len() - 8;
    script[live_write].s = Tr { en: true, we: true, col: 0, data: changed(rng, &cfg.s, new_scale[0]) };
    script[live_write].h = Tr { en: true, we: true, col: c - 1, data: changed(rng, &cfg.h, new_shift[c - 1]) };
    // Read every parameter back while the stream runs.
    for k in 0..c {
        script.push(Step {
            offer: true,
            ready: true,
            s: Tr { en: true, we: false, col: k, data: rng.next() & cfg.s.mask() },
            h: Tr { en: true, we: false, col: k, data: rng.next() & cfg.h.mask() },
        });
    }
    let random_from = script.len();
    // Random traffic, reads and writes.
    for _ in 0..300 {
        let tr = |rng: &mut Rng, f: &Fx| {
            let r = rng.next() % 100;
            Tr { en: r < 25, we: r < 12, col: (rng.next() % c as u64) as usize, data: f.code(rng) }
        };
        let s = tr(rng, &cfg.s);
        let h = tr(rng, &cfg.h);
        script.push(Step { offer: rng.chance(70), ready: rng.chance(75), s, h });
    }
    let offered_early = script[..random_from].iter().filter(|s| s.offer).count();
    let n = offered_early + 150;
    script.extend(full(n));
    let beats = (0..n).map(|_| cfg.beat_codes(rng)).collect();
    TrainRun { cfg, scale, shift, beats, script, random_from, live_write, updated_from, new_scale, new_shift }
}

/// The model's memory contents at the start of every cycle (after the
/// writes of all earlier cycles; a read-only memory never changes).
fn contents(init: &[u64], writable: bool, script: &[Step], port: fn(&Step) -> Tr, cycles: usize) -> Vec<Vec<u64>> {
    let mut mem = init.to_vec();
    let mut out = vec![mem.clone()];
    for t in 0..cycles {
        if let Some(st) = script.get(t) {
            let tr = port(st);
            if writable && tr.en && tr.we {
                mem[tr.col] = tr.data;
            }
        }
        out.push(mem.clone());
    }
    out
}

fn train_top(runs: &[TrainRun]) -> String {
    let mut v = String::from("// Generated by generator/tests/rtl/bn.rs\n`timescale 1ns / 1ps\n`default_nettype none\n\nmodule bn_train_top (\n    input  wire clk,\n    input  wire rst");
    for (i, r) in runs.iter().enumerate() {
        let c = &r.cfg;
        let cw = clog2(c.c);
        write!(
            v,
            ",\n    input  wire [{}:0] in_data{i},\n    input  wire in_valid{i},\n    output wire in_ready{i},\n    \
             output wire [{}:0] out_data{i},\n    output wire out_valid{i},\n    input  wire out_ready{i},\n    \
             input  wire s_tr_en{i},\n    input  wire s_tr_we{i},\n    input  wire [{}:0] s_tr_col{i},\n    input  wire [{}:0] s_tr_wdata{i},\n    output wire [{}:0] s_tr_rdata{i},\n    \
             input  wire h_tr_en{i},\n    input  wire h_tr_we{i},\n    input  wire [{}:0] h_tr_col{i},\n    input  wire [{}:0] h_tr_wdata{i},\n    output wire [{}:0] h_tr_rdata{i}",
            c.c * c.x.w as usize - 1,
            c.c * c.y.w as usize - 1,
            cw - 1,
            c.s.w - 1,
            c.s.w - 1,
            cw - 1,
            c.h.w - 1,
            c.h.w - 1
        )
        .unwrap();
    }
    v += "\n);\n\n";
    for (i, r) in runs.iter().enumerate() {
        writeln!(
            v,
            "fptgen_bn #({}) u{i} (\n    .clk(clk), .rst(rst),\n    .in_data(in_data{i}), .in_valid(in_valid{i}), .in_ready(in_ready{i}),\n    \
             .out_data(out_data{i}), .out_valid(out_valid{i}), .out_ready(out_ready{i}),\n    \
             .s_tr_en(s_tr_en{i}), .s_tr_we(s_tr_we{i}), .s_tr_addr(1'b0), .s_tr_col(s_tr_col{i}), .s_tr_wdata(s_tr_wdata{i}), .s_tr_rdata(s_tr_rdata{i}),\n    \
             .h_tr_en(h_tr_en{i}), .h_tr_we(h_tr_we{i}), .h_tr_addr(1'b0), .h_tr_col(h_tr_col{i}), .h_tr_wdata(h_tr_wdata{i}), .h_tr_rdata(h_tr_rdata{i})\n);\n",
            r.cfg.params(&format!("ts{i}.hex"), &format!("th{i}.hex"))
        )
        .unwrap();
    }
    v += "endmodule\n\n`default_nettype wire\n";
    v
}

/// The C++ bench: every signal of these instances is at most 64 bits wide.
/// Each cycle: the script's inputs, evaluate, log the transfers ("A i t",
/// "O i t data"), clock, then log the trainer ports' read data of the
/// cycles with tr_en ("RS i t data", "RH i t data").
fn train_main(runs: &[TrainRun]) -> String {
    let mut c = String::from(
        r#"// Generated by generator/tests/rtl/bn.rs
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>
#include "Vbn_train_top.h"
#include "verilated.h"

struct Step { uint64_t v[10]; };  // offer ready s_en s_we s_col s_wdata h_en h_we h_col h_wdata

static std::vector<Step> read_script(const char* name) {
    std::vector<Step> out;
    std::ifstream f(name);
    std::string line;
    while (std::getline(f, line)) {
        if (line.empty()) continue;
        std::istringstream is(line);
        Step s;
        for (int k = 0; k < 10; ++k) is >> s.v[k];
        out.push_back(s);
    }
    return out;
}

static std::vector<uint64_t> read_beats(const char* name) {
    std::vector<uint64_t> out;
    std::ifstream f(name);
    uint64_t v;
    while (f >> v) out.push_back(v);
    return out;
}

int main() {
    VerilatedContext ctx;
    Vbn_train_top top(&ctx);
"#,
    );
    let n = runs.len();
    writeln!(c, "    const int n = {n};\n    std::vector<std::vector<Step>> sc(n);\n    std::vector<std::vector<uint64_t>> bt(n);\n    std::vector<std::size_t> next(n, 0);\n    std::vector<int> valid(n, 0);\n    std::size_t len = 0;\n    uint64_t garbage = 0x0123456789abcdefull;").unwrap();
    for i in 0..n {
        writeln!(c, "    sc[{i}] = read_script(\"script{i}.txt\"); bt[{i}] = read_beats(\"beats{i}.txt\"); if (sc[{i}].size() > len) len = sc[{i}].size();").unwrap();
    }
    c += "    top.clk = 0;\n    top.rst = 1;\n";
    for i in 0..n {
        writeln!(c, "    top.in_valid{i} = 0; top.out_ready{i} = 0; top.s_tr_en{i} = 0; top.s_tr_we{i} = 0; top.h_tr_en{i} = 0; top.h_tr_we{i} = 0;").unwrap();
    }
    c += "    for (int k = 0; k < 3; ++k) { top.eval(); top.clk = 1; top.eval(); top.clk = 0; }\n    top.rst = 0;\n    top.eval();\n";
    c += "    for (long t = 0; t < static_cast<long>(len) + 40; ++t) {\n        std::vector<Step> st(n);\n        for (int i = 0; i < n; ++i) {\n            Step idle = {{0, 1, 0, 0, 0, 0, 0, 0, 0, 0}};\n            st[i] = t < static_cast<long>(sc[i].size()) ? sc[i][t] : idle;\n            if (!valid[i] && next[i] < bt[i].size() && st[i].v[0]) valid[i] = 1;\n        }\n        garbage = garbage * 6364136223846793005ull + 1442695040888963407ull;\n";
    for (i, r) in runs.iter().enumerate() {
        let in_bits = r.cfg.c * r.cfg.x.w as usize;
        let mask = if in_bits == 64 { u64::MAX } else { (1u64 << in_bits) - 1 };
        writeln!(
            c,
            "        top.in_valid{i} = valid[{i}];\n        top.in_data{i} = (valid[{i}] ? bt[{i}][next[{i}]] : garbage) & 0x{mask:x}ull;\n        \
             top.out_ready{i} = st[{i}].v[1];\n        \
             top.s_tr_en{i} = st[{i}].v[2]; top.s_tr_we{i} = st[{i}].v[3]; top.s_tr_col{i} = st[{i}].v[4]; top.s_tr_wdata{i} = st[{i}].v[5];\n        \
             top.h_tr_en{i} = st[{i}].v[6]; top.h_tr_we{i} = st[{i}].v[7]; top.h_tr_col{i} = st[{i}].v[8]; top.h_tr_wdata{i} = st[{i}].v[9];"
        )
        .unwrap();
    }
    c += "        top.eval();\n";
    for i in 0..n {
        writeln!(
            c,
            "        if (valid[{i}] && top.in_ready{i}) {{ std::printf(\"A {i} %ld\\n\", t); valid[{i}] = 0; ++next[{i}]; }}\n        \
             if (top.out_valid{i} && st[{i}].v[1]) std::printf(\"O {i} %ld %\" PRIx64 \"\\n\", t, static_cast<uint64_t>(top.out_data{i}));"
        )
        .unwrap();
    }
    c += "        top.clk = 1;\n        top.eval();\n        top.clk = 0;\n        top.eval();\n";
    for i in 0..n {
        writeln!(
            c,
            "        if (st[{i}].v[2]) std::printf(\"RS {i} %ld %\" PRIx64 \"\\n\", t, static_cast<uint64_t>(top.s_tr_rdata{i}));\n        \
             if (st[{i}].v[6]) std::printf(\"RH {i} %ld %\" PRIx64 \"\\n\", t, static_cast<uint64_t>(top.h_tr_rdata{i}));"
        )
        .unwrap();
    }
    c += "    }\n    top.final();\n    return 0;\n}\n";
    c
}

/// What one trainable instance did.
#[derive(Default)]
struct TrainLog {
    accepted: Vec<usize>,
    outputs: Vec<(usize, u64)>,
    s_reads: Vec<(usize, u64)>,
    h_reads: Vec<(usize, u64)>,
}

#[test]
fn bn_trainer_port_updates_parameters() {
    require_tool("verilator", "--version");
    let dir = scratch("rtl_bn_train");
    let mut rng = Rng(SEED ^ 0x7472_6169_6e00_0000);
    let runs: Vec<TrainRun> = TRAIN_CFGS.iter().map(|&c| train_run(&mut rng, c)).collect();
    for (i, r) in runs.iter().enumerate() {
        let c = &r.cfg;
        assert!(c.c * c.x.w as usize <= 64 && c.c * c.y.w as usize <= 64, "the bench passes beats as 64-bit words");
        fs::write(dir.join(format!("ts{i}.hex")), Cfg::image(&r.scale, c.s.w)).unwrap();
        fs::write(dir.join(format!("th{i}.hex")), Cfg::image(&r.shift, c.h.w)).unwrap();
        let beats: String = r.beats.iter().map(|b| format!("{}\n", pixel_stream::field(&pack(b, c.x.w), 0, (c.c * c.x.w as usize) as u32))).collect();
        fs::write(dir.join(format!("beats{i}.txt")), beats).unwrap();
        let mut script = String::new();
        for s in &r.script {
            let b = |x: bool| u8::from(x);
            writeln!(
                script,
                "{} {} {} {} {} {} {} {} {} {}",
                b(s.offer),
                b(s.ready),
                b(s.s.en),
                b(s.s.we),
                s.s.col,
                s.s.data,
                b(s.h.en),
                b(s.h.we),
                s.h.col,
                s.h.data
            )
            .unwrap();
        }
        fs::write(dir.join(format!("script{i}.txt")), script).unwrap();
    }
    fs::write(dir.join("bn_train_top.v"), train_top(&runs)).unwrap();
    fs::write(dir.join("main.cpp"), train_main(&runs)).unwrap();
    let out = verilate_and_run(&dir, "bn_train_top", &["fptgen_bn.v", "fptgen_cast.v", "fptgen_param_mem.v"]);

    let mut logs: Vec<TrainLog> = runs.iter().map(|_| TrainLog::default()).collect();
    for line in out.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        let num = |s: &str| s.parse::<usize>().unwrap();
        let hex = |s: &str| u64::from_str_radix(s, 16).unwrap();
        match f.as_slice() {
            ["A", i, t] => logs[num(i)].accepted.push(num(t)),
            ["O", i, t, d] => logs[num(i)].outputs.push((num(t), hex(d))),
            ["RS", i, t, d] => logs[num(i)].s_reads.push((num(t), hex(d))),
            ["RH", i, t, d] => logs[num(i)].h_reads.push((num(t), hex(d))),
            _ => panic!("unexpected bench output line: {line}"),
        }
    }

    let mut boundary_differs = [false, false];
    for (i, (r, log)) in runs.iter().zip(&logs).enumerate() {
        let cfg = &r.cfg;
        let ctx = format!("trainable instance {i} {cfg:?}");
        let cycles = r.script.len() + 40;
        let smem = contents(&r.scale, cfg.s_writable, &r.script, |s| s.s, cycles);
        let hmem = contents(&r.shift, cfg.h_writable, &r.script, |s| s.h, cycles);
        // The values a beat accepted on cycle t uses: written on cycles up
        // to t - 2, the contents at the start of cycle t - 1.
        let used = |t: usize| (&smem[t.saturating_sub(1)], &hmem[t.saturating_sub(1)]);
        let result = |k: usize, (s, h): (&Vec<u64>, &Vec<u64>)| -> u64 {
            let y = cfg.beat(s, h, &r.beats[k]);
            pixel_stream::field(&pack(&y, cfg.y.w), 0, (cfg.c * cfg.y.w as usize) as u32)
        };

        assert_eq!(log.accepted.len(), r.beats.len(), "{ctx}: beats accepted");
        assert_eq!(log.outputs.len(), r.beats.len(), "{ctx}: results output");
        for (k, &(t, got)) in log.outputs.iter().enumerate() {
            let ta = log.accepted[k];
            let (s, h) = used(ta);
            let want = result(k, (s, h));
            assert_eq!(got, want, "{ctx}: beat {k} accepted on cycle {ta} (scale {s:x?}, shift {h:x?}), output on cycle {t}: got {got:#x}, want {want:#x}");
        }

        // The full-rate phases: every offered beat taken on its cycle, its
        // result output on the next (when that is still in these phases).
        let offered: Vec<usize> = (0..r.random_from).filter(|&t| r.script[t].offer).collect();
        let early: Vec<usize> = log.accepted.iter().copied().filter(|&t| t < r.random_from).collect();
        assert_eq!(early, offered, "{ctx}: beats accepted before cycle {}", r.random_from);
        for (k, &ta) in early.iter().enumerate().filter(|&(_, &ta)| ta + LATENCY < r.random_from) {
            assert_eq!(log.outputs[k].0, ta + LATENCY, "{ctx}: beat {k} accepted on cycle {ta}: result output on cycle {}, model {}", log.outputs[k].0, ta + LATENCY);
        }

        // After the writes between beats every channel uses the new values
        // (the writes of the writable tensors took effect, the others'
        // were ignored).
        let first = log.accepted.iter().position(|&t| t >= r.updated_from).unwrap();
        let (s, h) = used(log.accepted[first]);
        let want_s = if cfg.s_writable { &r.new_scale } else { &r.scale };
        let want_h = if cfg.h_writable { &r.new_shift } else { &r.shift };
        assert_eq!((s, h), (want_s, want_h), "{ctx}: the parameters the model uses after the updates");

        // The write while streaming: the beat accepted on the next cycle
        // uses the old values, the one after the new.
        let w = r.live_write;
        for (n, differs) in boundary_differs.iter_mut().enumerate() {
            let t = w + 1 + n;
            let k = log.accepted.iter().position(|&a| a == t).unwrap();
            let other = result(k, if n == 0 { used(t + 1) } else { used(t - 1) });
            *differs |= other != result(k, used(t));
        }

        // Read-back: the value before the cycle's write; 0 for a ROM.
        for (name, reads, mem, writable, port) in [
            ("scale", &log.s_reads, &smem, cfg.s_writable, (|s: &Step| s.s) as fn(&Step) -> Tr),
            ("shift", &log.h_reads, &hmem, cfg.h_writable, |s: &Step| s.h),
        ] {
            let want_reads = r.script.iter().filter(|s| port(s).en).count();
            assert_eq!(reads.len(), want_reads, "{ctx}: {name} reads");
            for &(t, got) in reads {
                let col = port(&r.script[t]).col;
                let want = if writable { mem[t][col] } else { 0 };
                assert_eq!(got, want, "{ctx}: {name} read of channel {col} in cycle {t}: got {got:#x}, want {want:#x}");
            }
        }
    }
    assert!(
        boundary_differs.iter().all(|&d| d),
        "the beats around the write while streaming give the same results with old and new values in every instance: the test does not see the timing"
    );
    fs::remove_dir_all(&dir).ok();
}

#[test]
fn bn_illegal_parameters_stop_elaboration() {
    require_tool("verilator", "--version");
    let dir = scratch("rtl_bn_illegal");
    let legal: &[&[(&str, i64)]] = &[
        &[],
        &[("C", 1)],
        &[("C", 3), ("S_WRITABLE", 1), ("H_WRITABLE", 1)],
        &[("X_W", 1), ("S_W", 1), ("H_W", 1), ("A_W", 1), ("Y_W", 1), ("X_S", 0), ("A_S", 0), ("RELU", 1)],
        &[("X_W", 64), ("S_W", 64), ("H_W", 64), ("A_W", 64), ("Y_W", 64), ("A_Q", 6), ("A_O", 3), ("Y_Q", 6), ("Y_O", 3)],
        &[("X_F", -5), ("S_F", 70), ("H_F", -1), ("A_F", 100), ("Y_F", -9)],
    ];
    let mut illegal: Vec<(Vec<(&str, i64)>, &str)> = vec![(vec![("C", 0)], "fptgen_param_error_bn_c_below_1")];
    for p in ["X_W", "S_W", "H_W", "A_W", "Y_W"] {
        illegal.push((vec![(p, 0)], "fptgen_param_error_bn_width_not_1_to_64"));
        illegal.push((vec![(p, 65)], "fptgen_param_error_bn_width_not_1_to_64"));
    }
    for p in ["X_S", "S_S", "H_S", "A_S", "Y_S", "RELU", "S_WRITABLE", "H_WRITABLE"] {
        illegal.push((vec![(p, 2)], "fptgen_param_error_bn_flag_not_0_or_1"));
        illegal.push((vec![(p, -1)], "fptgen_param_error_bn_flag_not_0_or_1"));
    }
    for (p, max) in [("A_Q", 6), ("Y_Q", 6), ("A_O", 3), ("Y_O", 3)] {
        illegal.push((vec![(p, max + 1)], "fptgen_param_error_bn_mode_out_of_range"));
        illegal.push((vec![(p, -1)], "fptgen_param_error_bn_mode_out_of_range"));
    }
    let illegal: Vec<(&[(&str, i64)], &str)> = illegal.iter().map(|(p, m)| (p.as_slice(), *m)).collect();
    pixel_stream::check_parameters("fptgen_bn", &dir, legal, &illegal);
    fs::remove_dir_all(&dir).ok();
}

#[test]
fn bn_synthesizes_for_ultrascale() {
    require_tool("yosys", "-V");
    let dir = scratch("rtl_bn_synth");
    let rtl = Path::new(env!("CARGO_MANIFEST_DIR")).join("../rtl");
    let mut rng = Rng(SEED ^ 0x7379_6e74_6800_0000);
    // (name, C, writable): 8-bit input, scale and shift, a 20-bit
    // accumulator, 8-bit outputs, relu
    let sets = [("4ch_trainable", 4usize, 1), ("16ch_frozen", 16, 0)];
    let mut report = String::new();
    for (name, c, writable) in sets {
        let codes: Vec<u64> = (0..c).map(|_| 1 + rng.next() % 255).collect();
        fs::write(dir.join(format!("{name}_s.hex")), Cfg::image(&codes, 8)).unwrap();
        fs::write(dir.join(format!("{name}_h.hex")), Cfg::image(&codes, 8)).unwrap();
        let script = format!(
            "read_verilog -defer -I{rtl} {rtl}/fptgen_bn.v {rtl}/fptgen_cast.v {rtl}/fptgen_param_mem.v\n\
             chparam -set C {c} -set X_W 8 -set X_F 4 -set S_W 8 -set S_F 6 -set H_W 8 -set H_F 4 \
             -set A_W 20 -set A_F 10 -set A_Q 2 -set A_O 1 -set Y_W 8 -set Y_F 4 -set Y_Q 6 -set Y_O 1 -set RELU 1 \
             -set S_WRITABLE {writable} -set H_WRITABLE {writable} -set S_FILE \"{name}_s.hex\" -set H_FILE \"{name}_h.hex\" fptgen_bn\n\
             synth_xilinx -family xcu -top fptgen_bn -flatten -noiopad\ntee -q -o {name}.txt stat\n",
            rtl = rtl.display()
        );
        fs::write(dir.join(format!("{name}.ys")), script).unwrap();
        run(Command::new("yosys").args(["-q", "-s", &format!("{name}.ys")]), "yosys synth_xilinx", &dir);
        let stat = fs::read_to_string(dir.join(format!("{name}.txt"))).unwrap();
        let cells = cells(&stat);
        let count = |pred: &dyn Fn(&str) -> bool| cells.iter().filter(|(c, _)| pred(c)).map(|(_, n)| n).sum::<u64>();
        let dsps = count(&|c| c.starts_with("DSP"));
        let luts = count(&|c| c.starts_with("LUT"));
        let rams = count(&|c| c.starts_with("RAM"));
        let ffs = count(&|c| c.starts_with("FD"));
        let list: Vec<String> = cells.iter().map(|(c, n)| format!("{c} {n}")).collect();
        writeln!(report, "  {name}: {}", list.join(", ")).unwrap();
        assert!(luts > 0, "{name}: the casts and the add need LUTs:\n{stat}");
        if writable == 1 {
            // Scale a variable: a multiplier per channel.
            assert!(dsps > 0, "{name}: the products of a trainable scale need multipliers:\n{stat}");
        }
        assert_eq!(rams, 0, "{name}: a one-word parameter memory is registers, not a RAM primitive:\n{stat}");
        // The output register (C*8 bits), stage 1's product and shift (2 x
        // 20-bit accumulator values per channel), per memory its read
        // register (C*8) and, when writable, the word itself and the
        // trainer port's read register (2*C*8) and column select; the two
        // valids.
        let per_mem = 8 * c as u64 + if writable == 1 { 16 * c as u64 + clog2(c) as u64 } else { 0 };
        let regs = 8 * c as u64 + 40 * c as u64 + 2 * per_mem + 2;
        assert!(ffs <= regs, "{name}: {ffs} flip-flops, more than the {regs} register bits:\n{stat}");
    }
    eprintln!("rtl_bn: yosys synth_xilinx -family xcu -flatten -noiopad\n{report}");
    fs::remove_dir_all(&dir).ok();
}
