//! `rtl/fptgen_swg.v`, the sliding-window generator of a 3x3 convolution, in
//! Verilator against a model written here from the definition (Keras
//! `valid`/`same` padding, windows in row-major order, value (ky, kx, c) at
//! element (ky*3 + kx)*C + c), not from the RTL:
//!
//! * `swg_windows_and_cycles`: every parameter set in one build, three
//!   images of random nonzero codes back to back. (a) Input always offered,
//!   output always ready: every output bit is compared with the model (the
//!   first difference fails, naming image, oy, ox, ky, kx, c), and the cycle
//!   of every pixel accepted and of every window output with the module's
//!   cycle model (its header), implemented here. (b) The same images with
//!   random input gaps and random output back-pressure (three seeded runs):
//!   every output bit compared, nothing lost, nothing extra.
//! * `swg_illegal_parameters_stop_elaboration`: `verilator --lint-only
//!   -Wall` is silent on legal sets and fails on illegal ones (stride 3,
//!   valid padding with H < 3 or W < 3, PAD 2, C 0), naming the failed
//!   check's module `fptgen_param_error_swg_<reason>`.
//! * `swg_synthesizes_to_ram_for_ultrascale`: yosys `synth_xilinx -family
//!   xcu` on two sizes: the line buffer maps to RAM primitives and the
//!   flip-flops are the window registers (15 pixels), not an image; prints
//!   the cell counts.
//!
//! Verilator and yosys are required: without them these tests fail (they
//! never skip).

use std::fs;

use crate::pixel_stream;
use crate::common::{require_tool, scratch, Rng};
use crate::pixel_stream::{field, line_buffer_synth, pack, Dut, Images, Log};

/// Images streamed back to back into every parameter set.
const IMAGES: usize = 3;
const SEED: u64 = 0x5316_3c0a_0000_0001;

#[derive(Debug, Clone, Copy)]
struct Cfg {
    h: usize,
    w: usize,
    c: usize,
    stride: usize,
    same: bool,
    x_w: u32,
}

#[rustfmt::skip]
const CFGS: &[Cfg] = &[
    // valid padding
    Cfg { h: 5, w: 7, c: 1, stride: 1, same: false, x_w: 8 },
    Cfg { h: 6, w: 3, c: 3, stride: 1, same: false, x_w: 5 },   // W = 3
    Cfg { h: 3, w: 8, c: 2, stride: 2, same: false, x_w: 4 },   // H = 3
    Cfg { h: 7, w: 6, c: 2, stride: 2, same: false, x_w: 8 },
    Cfg { h: 8, w: 9, c: 1, stride: 2, same: false, x_w: 6 },
    Cfg { h: 3, w: 3, c: 2, stride: 1, same: false, x_w: 3 },   // one window
    // same padding, stride 1
    Cfg { h: 4, w: 5, c: 3, stride: 1, same: true, x_w: 6 },
    Cfg { h: 5, w: 4, c: 1, stride: 1, same: true, x_w: 8 },
    Cfg { h: 6, w: 2, c: 2, stride: 1, same: true, x_w: 7 },    // two columns
    Cfg { h: 1, w: 6, c: 1, stride: 1, same: true, x_w: 5 },    // one row
    Cfg { h: 3, w: 1, c: 2, stride: 1, same: true, x_w: 4 },    // one column
    Cfg { h: 9, w: 10, c: 4, stride: 1, same: true, x_w: 1 },
    // same padding, stride 2
    Cfg { h: 6, w: 6, c: 2, stride: 2, same: true, x_w: 8 },    // even: pad 0 before, 1 after
    Cfg { h: 7, w: 5, c: 1, stride: 2, same: true, x_w: 7 },    // odd: pad 1 and 1
    Cfg { h: 4, w: 7, c: 3, stride: 2, same: true, x_w: 5 },
    Cfg { h: 2, w: 2, c: 1, stride: 2, same: true, x_w: 8 },
    Cfg { h: 1, w: 1, c: 3, stride: 2, same: true, x_w: 6 },
    Cfg { h: 5, w: 2, c: 1, stride: 2, same: true, x_w: 4 },
];

impl Cfg {
    fn params(&self) -> String {
        format!(
            ".H({}), .W({}), .C({}), .STRIDE({}), .PAD({}), .X_W({})",
            self.h,
            self.w,
            self.c,
            self.stride,
            u8::from(self.same),
            self.x_w
        )
    }

    /// Output size and padding before, along an axis of `n` pixels (Keras).
    fn axis(&self, n: usize) -> (usize, usize) {
        if self.same {
            let o = n.div_ceil(self.stride);
            let total = ((o - 1) * self.stride + 3).saturating_sub(n);
            (o, total / 2)
        } else {
            ((n - 3) / self.stride + 1, 0)
        }
    }

    fn out_size(&self) -> (usize, usize) {
        (self.axis(self.h).0, self.axis(self.w).0)
    }

    /// The window of output pixel (oy, ox) of `img` (H*W*C values, row-major,
    /// channel fastest): value (ky, kx, c) at (ky*3 + kx)*C + c, 0 outside.
    fn window(&self, img: &[u64], oy: usize, ox: usize) -> Vec<u64> {
        let (pt, pl) = (self.axis(self.h).1 as isize, self.axis(self.w).1 as isize);
        let mut v = Vec::with_capacity(9 * self.c);
        for ky in 0..3 {
            for kx in 0..3 {
                let iy = (oy * self.stride + ky) as isize - pt;
                let ix = (ox * self.stride + kx) as isize - pl;
                let inside = (0..self.h as isize).contains(&iy) && (0..self.w as isize).contains(&ix);
                for c in 0..self.c {
                    v.push(if inside { img[(iy as usize * self.w + ix as usize) * self.c + c] } else { 0 });
                }
            }
        }
        v
    }

    /// The cycle model of the module's header, with the input always offered
    /// and the output always ready: the cycles between images, and the cycle
    /// of each window (row-major) after the one on which pixel (0, 0) is
    /// accepted. Window (oy, ox) is output the cycle after the step that
    /// completes it, the step of the last pixel it needs (the bottom padding
    /// step row y = H for the last window row of same padding with stride 1),
    /// or the cycle after the previous window if later.
    fn cycle_model(&self) -> (usize, Vec<usize>) {
        let (oh, pt) = self.axis(self.h);
        let (ow, pl) = self.axis(self.w);
        let pad_row = self.same && self.stride == 1;
        let period = (self.h + usize::from(pad_row)) * self.w;
        let mut cycles: Vec<usize> = Vec::new();
        for oy in 0..oh {
            for ox in 0..ow {
                let sx = (ox * self.stride + 2 - pl).min(self.w - 1);
                let sy = if pad_row && oy == oh - 1 { self.h } else { (oy * self.stride + 2 - pt).min(self.h - 1) };
                let t = sy * self.w + sx + 1;
                let t = cycles.last().map_or(t, |&p| t.max(p + 1));
                cycles.push(t);
            }
        }
        (period, cycles)
    }
}

/// Random images of nonzero codes (so a pixel lost to padding shows),
/// except for 1-bit codes, which are random bits.
fn images(rng: &mut Rng, cfg: &Cfg) -> Vec<Vec<u64>> {
    let max = (1u64 << cfg.x_w) - 1;
    (0..IMAGES)
        .map(|_| (0..cfg.h * cfg.w * cfg.c).map(|_| if max == 1 { rng.next() & 1 } else { 1 + rng.next() % max }).collect())
        .collect()
}

fn bench(name: &str) -> Images {
    require_tool("verilator", "--version");
    let mut rng = Rng(SEED);
    let imgs: Vec<Vec<Vec<u64>>> = CFGS.iter().map(|c| images(&mut rng, c)).collect();
    pixel_stream::image_bench(name, "swg_top", "fptgen_swg", imgs, |i, im| {
        let c = &CFGS[i];
        let (oh, ow) = c.out_size();
        Dut {
            params: c.params(),
            in_bits: c.c * c.x_w as usize,
            out_bits: 9 * c.c * c.x_w as usize,
            beats: im.iter().flat_map(|img| img.chunks(c.c).map(|p| pack(p, c.x_w))).collect(),
            outputs: IMAGES * oh * ow,
            ..Default::default()
        }
    })
}

/// Every output of every instance against the model, bit for bit; fails on
/// the first difference.
fn check_windows(b: &Images, logs: &[Log], run: &str) {
    for (i, cfg) in CFGS.iter().enumerate() {
        let (oh, ow) = cfg.out_size();
        let log = &logs[i];
        let ctx = format!("{run}, parameter set {i} {cfg:?}");
        log.check_counts(&ctx, IMAGES * cfg.h * cfg.w, IMAGES * oh * ow, ["pixels", "windows"]);
        for (j, (t, bits)) in log.outputs.iter().enumerate() {
            let (n, oy, ox) = (j / (oh * ow), j % (oh * ow) / ow, j % ow);
            let want = cfg.window(&b.imgs[i][n], oy, ox);
            for (k, &v) in want.iter().enumerate() {
                let got = field(bits, k, cfg.x_w);
                assert_eq!(
                    got,
                    v,
                    "{ctx}: image {n}, window (oy {oy}, ox {ox}), value (ky {}, kx {}, c {}) output on cycle {t}: got {got}, want {v}",
                    k / cfg.c / 3,
                    k / cfg.c % 3,
                    k % cfg.c
                );
            }
        }
    }
}

#[test]
fn swg_windows_and_cycles() {
    let b = bench("rtl_swg");

    // (a) Full rate: bits and cycles.
    check_windows(&b, &b.full_rate, "full rate");
    for (i, cfg) in CFGS.iter().enumerate() {
        let (period, windows) = cfg.cycle_model();
        let ctx = format!("full rate, parameter set {i} {cfg:?}");
        pixel_stream::check_cycles(&b.full_rate[i], &ctx, IMAGES, period, &windows, (cfg.h * cfg.w, cfg.w), cfg.out_size().1, "window");
    }

    // (b) Random input gaps and output back-pressure: bits.
    for (gap, stall, seed) in [(30, 30, 1), (10, 70, 2), (60, 10, 3)] {
        let logs = pixel_stream::rerun(&b.dir, &b.duts, gap, stall, seed);
        check_windows(&b, &logs, &format!("{gap}% input gaps, {stall}% output stalls, seed {seed}"));
    }
    fs::remove_dir_all(&b.dir).ok();
}

#[test]
fn swg_illegal_parameters_stop_elaboration() {
    require_tool("verilator", "--version");
    let dir = scratch("rtl_swg_illegal");
    let legal: &[&[(&str, i64)]] = &[
        &[],
        &[("PAD", 0), ("H", 3), ("W", 3)],
        &[("PAD", 1), ("STRIDE", 2), ("H", 1), ("W", 1)],
        &[("PAD", 1), ("STRIDE", 1), ("W", 1)],
    ];
    let illegal: &[(&[(&str, i64)], &str)] = &[
        (&[("STRIDE", 3)], "fptgen_param_error_swg_stride_not_1_or_2"),
        (&[("PAD", 0), ("H", 2)], "fptgen_param_error_swg_valid_image_below_3x3"),
        (&[("PAD", 0), ("W", 2)], "fptgen_param_error_swg_valid_image_below_3x3"),
        (&[("PAD", 2)], "fptgen_param_error_swg_pad_not_0_or_1"),
        (&[("C", 0)], "fptgen_param_error_swg_size_below_1"),
    ];
    pixel_stream::check_parameters("fptgen_swg", &dir, legal, illegal);
    fs::remove_dir_all(&dir).ok();
}

#[test]
fn swg_synthesizes_to_ram_for_ultrascale() {
    // (name, parameters, pixel bits, RAM style)
    let sets = [
        ("32x32x16_same_s1", "-set H 32 -set W 32 -set C 16 -set STRIDE 1 -set PAD 1 -set X_W 8", 128, "auto"),
        ("112x112x16_same_s2", "-set H 112 -set W 112 -set C 16 -set STRIDE 2 -set PAD 1 -set X_W 8", 128, "block"),
        ("224x224x3_valid_s1", "-set H 224 -set W 224 -set C 3 -set STRIDE 1 -set PAD 0 -set X_W 8", 24, "auto"),
    ];
    // Two column registers and the output register (15 pixels), the
    // RAM's read register when it is LUT RAM (2 pixels), counters.
    line_buffer_synth("rtl_swg", "fptgen_swg", &sets, 17, "window registers");
}
