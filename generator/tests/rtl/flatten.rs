//! `rtl/fptgen_flatten.v`, a stream of pixels to one whole vector, in
//! Verilator against a model written here from the definition (the
//! `flatten` layer: an image `[h, w, c]` as the vector of its values in C
//! order, value `c` of pixel `p = y*w + x` at element `p*c + c`, codes
//! unchanged), not from the RTL:
//!
//! * `flatten_outputs_and_cycles`: every parameter set (BEATS 1, 2, 3 and
//!   larger, beats of 1 to 96 bits) in one build, four images of random
//!   codes (a fifth of them extremes) back to back. (a) Input always
//!   offered, output always ready: every bit of every vector is compared
//!   with the model (the first difference fails, naming image, pixel,
//!   channel), and the cycle of every pixel accepted and of every vector
//!   output with the module's cycle model (its header), implemented here.
//!   (b) The same images with random input gaps and random output
//!   back-pressure (four seeded runs, one with the output stalled most of
//!   the time): every bit compared, nothing lost, nothing extra, and the
//!   handshake of the header replayed cycle by cycle on the logged
//!   signals: in_ready and out_valid in every cycle as its formulas give.
//! * `flatten_illegal_parameters_stop_elaboration`: `verilator --lint-only
//!   -Wall` is silent on legal sets and fails on illegal ones (BEATS 0,
//!   BEAT_W 0), naming the failed check's module
//!   `fptgen_param_error_flatten_<reason>`.
//! * `flatten_synthesizes_for_ultrascale`: yosys `synth_xilinx -family xcu`
//!   on three sizes: no RAM and no shift-register primitives, and the
//!   flip-flops are the collecting and output registers (`2*BEATS - 1`
//!   beats) plus the counter; prints the cell counts.
//!
//! Verilator and yosys are required: without them these tests fail (they
//! never skip).

use std::fs;

use crate::pixel_stream;
use crate::common::{require_tool, scratch, Rng};
use crate::pixel_stream::{field, pack, synth_runs, Dut, Images, Log};

/// Images streamed back to back into every parameter set.
const IMAGES: usize = 4;
const SEED: u64 = 0x666c_6174_0000_0001;

/// An image `[h, w, c]` of `x_w`-bit codes: BEATS = h*w, BEAT_W = c*x_w.
#[derive(Debug, Clone, Copy)]
struct Cfg {
    h: usize,
    w: usize,
    c: usize,
    x_w: u32,
}

#[rustfmt::skip]
const CFGS: &[Cfg] = &[
    Cfg { h: 1, w: 1, c: 1, x_w: 8 },     // BEATS 1: a register stage
    Cfg { h: 1, w: 1, c: 5, x_w: 3 },     // BEATS 1, 15-bit beats
    Cfg { h: 1, w: 2, c: 1, x_w: 1 },     // BEATS 2, 1-bit beats
    Cfg { h: 2, w: 1, c: 3, x_w: 4 },     // BEATS 2
    Cfg { h: 1, w: 3, c: 2, x_w: 8 },     // BEATS 3
    Cfg { h: 2, w: 2, c: 1, x_w: 16 },
    Cfg { h: 3, w: 3, c: 2, x_w: 6 },
    Cfg { h: 4, w: 5, c: 3, x_w: 5 },     // 300-bit vectors
    Cfg { h: 7, w: 7, c: 1, x_w: 8 },     // 49 beats
    Cfg { h: 2, w: 3, c: 8, x_w: 12 },    // 96-bit beats
    Cfg { h: 5, w: 3, c: 4, x_w: 1 },
];

impl Cfg {
    fn beats(&self) -> usize {
        self.h * self.w
    }

    fn beat_w(&self) -> usize {
        self.c * self.x_w as usize
    }

    fn params(&self) -> String {
        format!(".BEATS({}), .BEAT_W({})", self.beats(), self.beat_w())
    }

    /// The cycle model of the module's header, with the input always offered
    /// and the output always ready: images every BEATS cycles, the vector
    /// output on the cycle after the last pixel is accepted (BEATS cycles
    /// after pixel 0).
    fn cycle_model(&self) -> (usize, Vec<usize>) {
        (self.beats(), vec![self.beats()])
    }
}

/// Random codes (h*w*c per image, C order), a fifth of them extremes.
fn images(rng: &mut Rng, cfg: &Cfg) -> Vec<Vec<u64>> {
    pixel_stream::random_images(rng, IMAGES, cfg.h * cfg.w * cfg.c, cfg.x_w)
}

fn bench(name: &str) -> Images {
    require_tool("verilator", "--version");
    let mut rng = Rng(SEED);
    let imgs: Vec<Vec<Vec<u64>>> = CFGS.iter().map(|c| images(&mut rng, c)).collect();
    pixel_stream::image_bench(name, "flatten_top", "fptgen_flatten", imgs, |i, im| {
        let c = &CFGS[i];
        Dut {
            params: c.params(),
            in_bits: c.beat_w(),
            out_bits: c.beats() * c.beat_w(),
            // One pixel per beat, channel k at bits [k*x_w +: x_w].
            beats: im.iter().flat_map(|img| img.chunks(c.c).map(|p| pack(p, c.x_w))).collect(),
            outputs: IMAGES,
            ..Default::default()
        }
    })
}

/// Every vector of every instance against the model, bit for bit: element
/// `(y*w + x)*c + k` of the vector is value `k` of pixel `(y, x)`, the
/// image's C order. Fails on the first difference.
fn check_outputs(b: &Images, logs: &[Log], run: &str) {
    for (i, cfg) in CFGS.iter().enumerate() {
        let log = &logs[i];
        let ctx = format!("{run}, parameter set {i} {cfg:?}");
        log.check_counts(&ctx, IMAGES * cfg.beats(), IMAGES, ["pixels", "vectors"]);
        for (n, (t, bits)) in log.outputs.iter().enumerate() {
            assert_eq!(bits.len(), cfg.h * cfg.w * cfg.c * cfg.x_w as usize);
            for y in 0..cfg.h {
                for x in 0..cfg.w {
                    for k in 0..cfg.c {
                        let e = (y * cfg.w + x) * cfg.c + k;
                        let want = b.imgs[i][n][e];
                        let got = field(bits, e, cfg.x_w);
                        assert_eq!(got, want, "{ctx}: image {n} output on cycle {t}, element {e} (pixel y {y}, x {x}, channel {k}): got {got}, want {want}");
                    }
                }
            }
        }
    }
}

/// The handshake of the module's header, replayed on the signals of every
/// cycle of a traced run: `in_ready = !(last && out_valid && !out_ready)`
/// with `last` the image's beat BEATS-1 being next; out_valid rises on the
/// edge that accepts a last beat and otherwise falls on an edge with
/// out_ready.
fn check_handshake(cfg: &Cfg, log: &Log, ctx: &str) {
    assert!(!log.cycles.is_empty(), "{ctx}: no trace");
    let (mut k, mut ov) = (0, false);
    for (t, c) in log.cycles.iter().enumerate() {
        let last = k == cfg.beats() - 1;
        let ir = !(last && ov && !c.out_ready);
        assert_eq!(c.out_valid, ov, "{ctx}: out_valid on cycle {t}, model {ov}");
        assert_eq!(c.in_ready, ir, "{ctx}: in_ready on cycle {t} (beat {k} next, out_valid {ov}, out_ready {}), model {ir}", c.out_ready);
        let accept = c.in_valid && ir;
        ov = (accept && last) || (ov && !c.out_ready);
        if accept {
            k = if last { 0 } else { k + 1 };
        }
    }
}

#[test]
fn flatten_outputs_and_cycles() {
    let b = bench("rtl_flatten");

    // (a) Full rate: bits and cycles.
    check_outputs(&b, &b.full_rate, "full rate");
    for (i, cfg) in CFGS.iter().enumerate() {
        let (period, outputs) = cfg.cycle_model();
        let ctx = format!("full rate, parameter set {i} {cfg:?}");
        pixel_stream::check_cycles(&b.full_rate[i], &ctx, IMAGES, period, &outputs, (cfg.beats(), cfg.w), 1, "vector");
    }

    // (b) Random input gaps and output back-pressure: bits, and the
    // handshake cycle by cycle.
    for (gap, stall, seed) in [(30, 30, 1), (10, 70, 2), (60, 10, 3), (0, 90, 4)] {
        let logs = pixel_stream::rerun_traced(&b.dir, &b.duts, gap, stall, seed);
        let run = format!("{gap}% input gaps, {stall}% output stalls, seed {seed}");
        check_outputs(&b, &logs, &run);
        for (i, cfg) in CFGS.iter().enumerate() {
            check_handshake(cfg, &logs[i], &format!("{run}, parameter set {i} {cfg:?}"));
        }
    }
    fs::remove_dir_all(&b.dir).ok();
}

#[test]
fn flatten_illegal_parameters_stop_elaboration() {
    require_tool("verilator", "--version");
    let dir = scratch("rtl_flatten_illegal");
    let legal: &[&[(&str, i64)]] = &[&[], &[("BEATS", 1)], &[("BEATS", 2), ("BEAT_W", 1)], &[("BEATS", 3), ("BEAT_W", 1)], &[("BEATS", 784), ("BEAT_W", 8)]];
    let illegal: &[(&[(&str, i64)], &str)] = &[
        (&[("BEATS", 0)], "fptgen_param_error_flatten_size_below_1"),
        (&[("BEATS", -1)], "fptgen_param_error_flatten_size_below_1"),
        (&[("BEAT_W", 0)], "fptgen_param_error_flatten_size_below_1"),
        (&[("BEATS", 0), ("BEAT_W", 0)], "fptgen_param_error_flatten_size_below_1"),
    ];
    pixel_stream::check_parameters("fptgen_flatten", &dir, legal, illegal);
    fs::remove_dir_all(&dir).ok();
}

#[test]
fn flatten_synthesizes_for_ultrascale() {
    // (name, BEATS, BEAT_W)
    let sets = [("1x8", 1, 8), ("3x16", 3, 16), ("7x7x8_8bit", 49, 64)];
    let runs = sets.map(|(name, beats, beat_w)| (name.to_string(), format!("-set BEATS {beats} -set BEAT_W {beat_w}"), format!("{name} (BEATS {beats}, BEAT_W {beat_w})")));
    synth_runs("rtl_flatten", "fptgen_flatten", &runs, |i, syn| {
        let (name, beats, beat_w) = sets[i];
        let stat = &syn.stat;
        let rams = syn.count(|c| c.starts_with("RAM") || c.starts_with("SRL"));
        let ffs = syn.count(|c| c.starts_with("FD"));
        assert_eq!(rams, 0, "{name}: the vector is needed whole, no RAM or shift-register primitives:\n{stat}");
        // The collecting register (BEATS - 1 beats), the output register,
        // the counter, its last flag and out_valid.
        let regs = (2 * beats - 1) * beat_w;
        assert!(ffs >= regs && ffs <= regs + 16, "{name}: {ffs} flip-flops, the registers are {regs} bits:\n{stat}");
    });
}
