//! `rtl/fptgen_maxpool.v`, 2x2 max-pooling with stride 2, in Verilator
//! against a model written here from the definition (output pixel (oy, ox)
//! is the channel-wise maximum of input pixels (2oy + dy, 2ox + dx),
//! dy, dx = 0..1, codes compared as signed or unsigned integers; a last odd
//! row or column is dropped), not from the RTL:
//!
//! * `maxpool_outputs_and_cycles`: every parameter set in one build, three
//!   images of random codes (a fifth of them extremes: 0, the largest and
//!   the two codes around the sign boundary) back to back. (a) Input always
//!   offered, output always ready: every output bit is compared with the
//!   model (the first difference fails, naming image, oy, ox, c), and the
//!   cycle of every pixel accepted and of every output pixel with the
//!   module's cycle model (its header), implemented here. (b) The same images
//!   with random input gaps and random output back-pressure (three seeded
//!   runs): every output bit compared, nothing lost, nothing extra.
//! * `maxpool_illegal_parameters_stop_elaboration`: `verilator --lint-only
//!   -Wall` is silent on legal sets and fails on illegal ones (H or W < 2,
//!   X_S 2, C 0), naming the failed check's module
//!   `fptgen_param_error_maxpool_<reason>`.
//! * `maxpool_synthesizes_to_ram_for_ultrascale`: yosys `synth_xilinx
//!   -family xcu` on two sizes: the line buffer maps to RAM primitives and
//!   the flip-flops are a few pixel registers, not a row; prints the cell
//!   counts.
//!
//! Verilator and yosys are required: without them these tests fail (they
//! never skip).

use std::fs;

use crate::pixel_stream;
use crate::common::{require_tool, scratch, Rng};
use crate::pixel_stream::{field, line_buffer_synth, pack, Dut, Images, Log};

/// Images streamed back to back into every parameter set.
const IMAGES: usize = 3;
const SEED: u64 = 0x6d61_7870_0000_0001;

#[derive(Debug, Clone, Copy)]
struct Cfg {
    h: usize,
    w: usize,
    c: usize,
    x_w: u32,
    signed: bool,
}

#[rustfmt::skip]
const CFGS: &[Cfg] = &[
    Cfg { h: 4, w: 4, c: 1, x_w: 8, signed: true },
    Cfg { h: 5, w: 6, c: 3, x_w: 6, signed: false },    // odd H: last row dropped
    Cfg { h: 6, w: 5, c: 2, x_w: 8, signed: true },     // odd W: last column dropped
    Cfg { h: 7, w: 9, c: 2, x_w: 5, signed: false },
    Cfg { h: 2, w: 2, c: 4, x_w: 4, signed: false },    // one output pixel
    Cfg { h: 3, w: 3, c: 1, x_w: 3, signed: true },
    Cfg { h: 2, w: 8, c: 1, x_w: 16, signed: true },
    Cfg { h: 9, w: 2, c: 3, x_w: 1, signed: true },
    Cfg { h: 8, w: 7, c: 2, x_w: 1, signed: false },
    Cfg { h: 4, w: 10, c: 5, x_w: 7, signed: true },
    Cfg { h: 6, w: 4, c: 8, x_w: 12, signed: true },    // 96-bit pixels
    Cfg { h: 3, w: 2, c: 1, x_w: 2, signed: false },
];

impl Cfg {
    fn params(&self) -> String {
        format!(".H({}), .W({}), .C({}), .X_W({}), .X_S({})", self.h, self.w, self.c, self.x_w, u8::from(self.signed))
    }

    fn out_size(&self) -> (usize, usize) {
        (self.h / 2, self.w / 2)
    }

    /// The integer a code stands for.
    fn value(&self, code: u64) -> i64 {
        if self.signed && (code >> (self.x_w - 1)) & 1 == 1 {
            code as i64 - (1i64 << self.x_w)
        } else {
            code as i64
        }
    }

    /// Output pixel (oy, ox) of `img` (H*W*C codes, row-major, channel
    /// fastest): per channel the code of the largest value of the 2x2 block.
    fn pool(&self, img: &[u64], oy: usize, ox: usize) -> Vec<u64> {
        (0..self.c)
            .map(|c| {
                let block = [(0, 0), (0, 1), (1, 0), (1, 1)].map(|(dy, dx)| img[((2 * oy + dy) * self.w + 2 * ox + dx) * self.c + c]);
                *block.iter().max_by_key(|&&code| self.value(code)).unwrap()
            })
            .collect()
    }

    /// The cycle model of the module's header, with the input always offered
    /// and the output always ready: the cycles between images, and the cycle
    /// of each output pixel (row-major) after the one on which pixel (0, 0)
    /// is accepted: the cycle after its last pixel, (2oy + 1, 2ox + 1), is
    /// accepted.
    fn cycle_model(&self) -> (usize, Vec<usize>) {
        let (oh, ow) = self.out_size();
        let cycles = (0..oh * ow).map(|j| (2 * (j / ow) + 1) * self.w + 2 * (j % ow) + 1 + 1).collect();
        (self.h * self.w, cycles)
    }
}

/// Random codes, a fifth of them extremes.
fn images(rng: &mut Rng, cfg: &Cfg) -> Vec<Vec<u64>> {
    pixel_stream::random_images(rng, IMAGES, cfg.h * cfg.w * cfg.c, cfg.x_w)
}

fn bench(name: &str) -> Images {
    require_tool("verilator", "--version");
    let mut rng = Rng(SEED);
    let imgs: Vec<Vec<Vec<u64>>> = CFGS.iter().map(|c| images(&mut rng, c)).collect();
    pixel_stream::image_bench(name, "maxpool_top", "fptgen_maxpool", imgs, |i, im| {
        let c = &CFGS[i];
        let (oh, ow) = c.out_size();
        Dut {
            params: c.params(),
            in_bits: c.c * c.x_w as usize,
            out_bits: c.c * c.x_w as usize,
            beats: im.iter().flat_map(|img| img.chunks(c.c).map(|p| pack(p, c.x_w))).collect(),
            outputs: IMAGES * oh * ow,
            ..Default::default()
        }
    })
}

/// Every output of every instance against the model, bit for bit; fails on
/// the first difference.
fn check_outputs(b: &Images, logs: &[Log], run: &str) {
    for (i, cfg) in CFGS.iter().enumerate() {
        let (oh, ow) = cfg.out_size();
        let log = &logs[i];
        let ctx = format!("{run}, parameter set {i} {cfg:?}");
        log.check_counts(&ctx, IMAGES * cfg.h * cfg.w, IMAGES * oh * ow, ["pixels", "pixels"]);
        for (j, (t, bits)) in log.outputs.iter().enumerate() {
            let (n, oy, ox) = (j / (oh * ow), j % (oh * ow) / ow, j % ow);
            let want = cfg.pool(&b.imgs[i][n], oy, ox);
            for (c, &v) in want.iter().enumerate() {
                let got = field(bits, c, cfg.x_w);
                assert_eq!(got, v, "{ctx}: image {n}, output pixel (oy {oy}, ox {ox}), channel {c} output on cycle {t}: got {got}, want {v}");
            }
        }
    }
}

#[test]
fn maxpool_outputs_and_cycles() {
    let b = bench("rtl_maxpool");

    // (a) Full rate: bits and cycles.
    check_outputs(&b, &b.full_rate, "full rate");
    for (i, cfg) in CFGS.iter().enumerate() {
        let (period, outputs) = cfg.cycle_model();
        let ctx = format!("full rate, parameter set {i} {cfg:?}");
        pixel_stream::check_cycles(&b.full_rate[i], &ctx, IMAGES, period, &outputs, (cfg.h * cfg.w, cfg.w), cfg.out_size().1, "output pixel");
    }

    // (b) Random input gaps and output back-pressure: bits.
    for (gap, stall, seed) in [(30, 30, 1), (10, 70, 2), (60, 10, 3)] {
        let logs = pixel_stream::rerun(&b.dir, &b.duts, gap, stall, seed);
        check_outputs(&b, &logs, &format!("{gap}% input gaps, {stall}% output stalls, seed {seed}"));
    }
    fs::remove_dir_all(&b.dir).ok();
}

#[test]
fn maxpool_illegal_parameters_stop_elaboration() {
    require_tool("verilator", "--version");
    let dir = scratch("rtl_maxpool_illegal");
    let legal: &[&[(&str, i64)]] = &[&[], &[("H", 2), ("W", 2), ("X_S", 0)], &[("H", 3), ("W", 3), ("X_W", 1)]];
    let illegal: &[(&[(&str, i64)], &str)] = &[
        (&[("H", 1)], "fptgen_param_error_maxpool_image_below_2x2"),
        (&[("W", 1)], "fptgen_param_error_maxpool_image_below_2x2"),
        (&[("X_S", 2)], "fptgen_param_error_maxpool_x_s_not_0_or_1"),
        (&[("C", 0)], "fptgen_param_error_maxpool_size_below_1"),
    ];
    pixel_stream::check_parameters("fptgen_maxpool", &dir, legal, illegal);
    fs::remove_dir_all(&dir).ok();
}

#[test]
fn maxpool_synthesizes_to_ram_for_ultrascale() {
    // (name, parameters, pixel bits, RAM style)
    let sets = [
        ("32x32x16_signed", "-set H 32 -set W 32 -set C 16 -set X_W 8 -set X_S 1", 128, "auto"),
        ("224x224x16_unsigned", "-set H 224 -set W 224 -set C 16 -set X_W 8 -set X_S 0", 128, "block"),
    ];
    // The held pixel, the output register, the RAM's read register when
    // it is LUT RAM (3 pixels), counters.
    line_buffer_synth("rtl_maxpool", "fptgen_maxpool", &sets, 3, "pixel registers");
}
