//! `rtl/fptgen_param_cursor.v` in Verilator against a model written here
//! from its specification: K tensors, each a matrix of ROWS x COLS
//! parameters folded PE x SIMD, walked in C order, tensor after tensor;
//! random cursor strobes (clear, rewind, step, save; at most one per cycle,
//! as the module requires), random reads and writes for random blocks,
//! random read data, and two resets. Every cycle, every output is
//! compared with the model: the trainer ports' enables, every tensor's word
//! address and column (word `(r / PE) * SF + c / SIMD`, column
//! `(r % PE) * SIMD + c % SIMD` of parameter `(r, c)`), the selected block's
//! committed value (the read data of the cycle after an `op_read`, sign- or
//! zero-extended) and the current tensor's bounds, and param_ahead,
//! lo_ahead and hi_ahead (the committed value of the previous cycle's
//! random blk_ahead and the bounds of the tensor it was read from, as they
//! were before the edge: a read landing on that edge is not forwarded, and
//! the stimulus often makes it land on that block; AHEAD = 1 with
//! PREFETCH = 1, as the ES trainer has them, else the three are 0). Several configurations in one build, with
//! PREFETCH 0 (param read at blk) and 1 (param registered from blk_next,
//! the next cycle's blk, as the ES trainer uses it: the same values, one
//! register earlier). Fails (does not skip) without Verilator.

use std::fmt::Write as _;
use std::fs;

use crate::common::{bits_for, mask, require_tool, scratch, verilate_and_run, Rng};

/// One tensor: rows x cols folded pe x simd, width-bit codes.
#[derive(Debug, Clone, Copy)]
struct Tensor {
    rows: usize,
    cols: usize,
    pe: usize,
    simd: usize,
    width: u32,
    signed: bool,
}

/// One cursor: its tensors, P blocks, PW-bit values.
#[derive(Debug, Clone)]
struct Cfg {
    tensors: Vec<Tensor>,
    p: usize,
    pw: u32,
    /// PREFETCH: param registered from blk_next (the next cycle's blk).
    prefetch: bool,
}

impl Tensor {
    fn count(&self) -> usize {
        self.rows * self.cols
    }

    fn words(&self) -> usize {
        self.rows.div_ceil(self.pe) * self.cols.div_ceil(self.simd)
    }

    fn addr_w(&self) -> u32 {
        bits_for(self.words())
    }

    fn col_w(&self) -> u32 {
        bits_for(self.pe * self.simd)
    }

    /// Word and column of the parameter at flat index `i`.
    fn location(&self, i: usize) -> (u64, u64) {
        let (r, c) = (i / self.cols, i % self.cols);
        let sf = self.cols.div_ceil(self.simd);
        (((r / self.pe) * sf + c / self.simd) as u64, ((r % self.pe) * self.simd + c % self.simd) as u64)
    }

    /// The clamp bounds of a `width`-bit code (any distinct values would do;
    /// these are the format's).
    fn bounds(&self) -> (i64, i64) {
        if self.signed {
            (-(1i64 << (self.width - 1)), (1i64 << (self.width - 1)) - 1)
        } else {
            (0, (1i64 << self.width) - 1)
        }
    }
}

impl Cfg {
    /// AHEAD: with PREFETCH, as the ES trainer has both; without, the
    /// three outputs are 0.
    fn ahead(&self) -> bool {
        self.prefetch
    }

    fn k(&self) -> usize {
        self.tensors.len()
    }

    fn sum(&self, f: impl Fn(&Tensor) -> u32) -> u32 {
        self.tensors.iter().map(f).sum()
    }

    /// A per-tensor parameter as a Verilog literal, tensor 0 last.
    fn packed(&self, f: impl Fn(&Tensor) -> String) -> String {
        let v: Vec<String> = self.tensors.iter().rev().map(f).collect();
        format!("{{{}}}", v.join(", "))
    }

    fn code(&self, v: i64) -> String {
        format!("{}'h{:x}", self.pw, (v as u64) & mask(self.pw))
    }
}

/// One cycle's inputs of one cursor.
#[derive(Debug, Clone, Copy, Default)]
struct In {
    clear: bool,
    rewind: bool,
    step: bool,
    save: bool,
    read: bool,
    write: bool,
    blk: usize,
    /// The next cycle's blk (PREFETCH = 1 reads the committed value ahead).
    blk_next: usize,
    /// The block param_ahead reads (in the next cycle).
    blk_ahead: usize,
    rdata: u64,
}

/// One cycle's outputs: en, we, addr, col, param (None: not written since
/// the start), lo, hi.
type Out = (u64, u64, u64, u64, Option<u64>, u64, u64);

/// The model: the cursor (current tensor, each tensor's flat position) and
/// its saved copy, the committed values, the read in flight.
struct Model {
    tid: usize,
    pos: Vec<usize>,
    saved_tid: usize,
    saved: Vec<usize>,
    committed: Vec<Option<u64>>,
    /// The tensor each committed value was read from.
    committed_tid: Vec<usize>,
    rd: Option<(usize, usize)>,
}

impl Model {
    fn new(c: &Cfg) -> Model {
        Model { tid: 0, pos: vec![0; c.k()], saved_tid: 0, saved: vec![0; c.k()], committed: vec![None; c.p], committed_tid: vec![0; c.p], rd: None }
    }

    fn outputs(&self, c: &Cfg, x: &In) -> Out {
        let (mut addr, mut col, mut a_off, mut c_off) = (0u64, 0u64, 0, 0);
        for (k, t) in c.tensors.iter().enumerate() {
            let (w, cc) = t.location(self.pos[k]);
            addr |= w << a_off;
            col |= cc << c_off;
            a_off += t.addr_w();
            c_off += t.col_w();
        }
        let sel = 1u64 << self.tid;
        let en = if x.read || x.write { sel } else { 0 };
        let we = if x.write { sel } else { 0 };
        let (lo, hi) = c.tensors[self.tid].bounds();
        (en, we, addr, col, self.committed[x.blk], (lo as u64) & mask(c.pw), (hi as u64) & mask(c.pw))
    }

    /// The rising edge after a cycle with inputs `x` (and `rst`).
    fn edge(&mut self, c: &Cfg, x: &In, rst: bool) {
        // The read in flight lands: tensor t's field of rdata, extended.
        if let Some((blk, t)) = self.rd {
            let off = c.tensors[..t].iter().map(|t| t.width).sum::<u32>();
            let tt = &c.tensors[t];
            let raw = (x.rdata >> off) & mask(tt.width);
            let v = if tt.signed && (raw >> (tt.width - 1)) & 1 == 1 { raw | !mask(tt.width) } else { raw };
            self.committed[blk] = Some(v & mask(c.pw));
            self.committed_tid[blk] = t;
        }
        self.rd = x.read.then_some((x.blk, self.tid));
        if rst || x.clear {
            self.tid = 0;
            self.saved_tid = 0;
            self.pos.iter_mut().for_each(|p| *p = 0);
            self.saved.iter_mut().for_each(|p| *p = 0);
        } else if x.rewind {
            self.tid = self.saved_tid;
            self.pos.clone_from(&self.saved);
        } else if x.step {
            let t = self.tid;
            let last = self.pos[t] + 1 == c.tensors[t].count();
            self.pos[t] = if last { 0 } else { self.pos[t] + 1 };
            if last {
                self.tid = (t + 1) % c.k();
            }
        } else if x.save {
            self.saved_tid = self.tid;
            self.saved.clone_from(&self.pos);
        }
    }
}

const fn t(rows: usize, cols: usize, pe: usize, simd: usize, width: u32, signed: bool) -> Tensor {
    Tensor { rows, cols, pe, simd, width, signed }
}

#[test]
fn param_cursor_walks_reads_and_bounds_as_specified() {
    require_tool("verilator", "--version");
    let cfgs = [
        // examples/tiny: weights 2x2 folded 2x2, biases 2x1 folded 2x1
        Cfg { tensors: vec![t(2, 2, 2, 2, 8, true), t(2, 1, 2, 1, 8, true)], p: 2, pw: 9, prefetch: false },
        // PE and SIMD that do not divide; unsigned and signed of different widths
        Cfg { tensors: vec![t(5, 7, 2, 3, 6, false), t(5, 1, 2, 1, 4, true), t(3, 4, 3, 4, 12, true)], p: 3, pw: 13, prefetch: true },
        // one parameter, one block
        Cfg { tensors: vec![t(1, 1, 1, 1, 1, false)], p: 1, pw: 2, prefetch: false },
        // five tensors (the tensor index wraps before its power of two)
        Cfg {
            tensors: vec![t(2, 3, 1, 1, 3, true), t(3, 1, 3, 1, 5, false), t(1, 6, 1, 4, 2, true), t(4, 2, 2, 1, 7, true), t(2, 2, 1, 2, 9, true)],
            p: 4,
            pw: 10,
            prefetch: false,
        },
        // the widest value fills PW exactly
        Cfg { tensors: vec![t(3, 5, 2, 2, 16, true), t(3, 1, 1, 1, 15, false)], p: 5, pw: 16, prefetch: true },
        // examples/tiny's, as the ES trainer instantiates it (PREFETCH = 1)
        Cfg { tensors: vec![t(2, 2, 2, 2, 8, true), t(2, 1, 2, 1, 8, true)], p: 2, pw: 9, prefetch: true },
        // one block, prefetched
        Cfg { tensors: vec![t(1, 1, 1, 1, 1, false)], p: 1, pw: 2, prefetch: true },
    ];
    let cycles = 3000;
    let resets = [0, 1, 1700];
    let mut rng = Rng(0xc0_5e_a1);
    let stim: Vec<Vec<In>> = cfgs
        .iter()
        .map(|c| {
            (0..cycles)
                .map(|_| {
                    let r = rng.next() % 100;
                    In {
                        clear: r < 3,
                        rewind: (3..12).contains(&r),
                        step: (12..75).contains(&r),
                        save: (75..85).contains(&r),
                        read: rng.chance(40),
                        write: rng.chance(30),
                        blk: (rng.next() % c.p as u64) as usize,
                        blk_next: 0,
                        blk_ahead: (rng.next() % c.p as u64) as usize,
                        rdata: rng.next() & mask(c.sum(|t| t.width)),
                    }
                })
                .collect::<Vec<In>>()
        })
        .map(|mut v| {
            for cy in 0..cycles - 1 {
                v[cy].blk_next = v[cy + 1].blk;
            }
            // Often the block whose read lands on the edge (the read of
            // the cycle before), which param_ahead does not forward.
            for cy in 1..cycles {
                if v[cy - 1].read && cy % 3 == 0 {
                    v[cy].blk_ahead = v[cy - 1].blk;
                }
            }
            v
        })
        .collect();

    let dir = scratch("rtl_param_cursor");
    let mut top = String::from("`timescale 1ns / 1ps\n`default_nettype none\nmodule cursor_top (\n    input wire clk,\n    input wire rst");
    for (i, c) in cfgs.iter().enumerate() {
        write!(
            top,
            ",\n    input wire clear{i}, input wire rewind{i}, input wire step{i}, input wire save{i}, input wire rd{i}, input wire wr{i}, \
             input wire [{}:0] blk{i}, input wire [{bw}:0] blkn{i}, input wire [{bw}:0] blka{i}, input wire [{}:0] rdata{i}, output wire [{}:0] en{i}, output wire [{}:0] we{i}, \
             output wire [{}:0] addr{i}, output wire [{}:0] col{i}, output wire [{pm}:0] param{i}, output wire [{pm}:0] lo{i}, output wire [{pm}:0] hi{i}, \
             output wire [{pm}:0] pa{i}, output wire [{pm}:0] loa{i}, output wire [{pm}:0] hia{i}",
            bits_for(c.p) - 1,
            c.sum(|t| t.width) - 1,
            c.k() - 1,
            c.k() - 1,
            c.sum(Tensor::addr_w) - 1,
            c.sum(Tensor::col_w) - 1,
            pm = c.pw - 1,
            bw = bits_for(c.p) - 1
        )
        .unwrap();
    }
    top += "\n);\n";
    for (i, c) in cfgs.iter().enumerate() {
        write!(
            top,
            "fptgen_param_cursor #(.K({}), .P({}), .PW({}), .PREFETCH({}), .AHEAD({}), .ROWS({}), .COLS({}), .PE({}), .SIMD({}), .WIDTH({}), .SIGNED({}), .LO({}), .HI({})) u{i} (\n    \
             .clk(clk), .rst(rst), .clear(clear{i}), .rewind(rewind{i}), .step(step{i}), .save(save{i}), .op_read(rd{i}), .op_write(wr{i}), .blk(blk{i}), .blk_next(blkn{i}), .blk_ahead(blka{i}),\n    \
             .tr_en(en{i}), .tr_we(we{i}), .tr_addr(addr{i}), .tr_col(col{i}), .tr_rdata(rdata{i}), .param(param{i}), .lo(lo{i}), .hi(hi{i}), \
             .param_ahead(pa{i}), .lo_ahead(loa{i}), .hi_ahead(hia{i}));\n",
            c.k(),
            c.p,
            c.pw,
            u8::from(c.prefetch),
            u8::from(c.ahead()),
            c.packed(|t| format!("32'd{}", t.rows)),
            c.packed(|t| format!("32'd{}", t.cols)),
            c.packed(|t| format!("32'd{}", t.pe)),
            c.packed(|t| format!("32'd{}", t.simd)),
            c.packed(|t| format!("32'd{}", t.width)),
            c.packed(|t| format!("1'b{}", u8::from(t.signed))),
            c.packed(|t| c.code(t.bounds().0)),
            c.packed(|t| c.code(t.bounds().1)),
        )
        .unwrap();
    }
    top += "endmodule\n`default_nettype wire\n";
    fs::write(dir.join("cursor_top.v"), top).unwrap();

    let mut text = String::new();
    for cy in 0..cycles {
        write!(text, "{} ", u8::from(resets.contains(&cy))).unwrap();
        for v in &stim {
            let x = v[cy];
            let b = |f: bool| u8::from(f);
            write!(text, "{} {} {} {} {} {} {:x} {:x} {:x} {:x} ", b(x.clear), b(x.rewind), b(x.step), b(x.save), b(x.read), b(x.write), x.blk, x.rdata, x.blk_next, x.blk_ahead)
                .unwrap();
        }
        text.push('\n');
    }
    fs::write(dir.join("stim.txt"), text).unwrap();
    let mut cpp = String::from(
        "#include \"Vcursor_top.h\"\n#include \"verilated.h\"\n#include <cstdio>\nint main(int argc, char** argv) {\n    \
         VerilatedContext ctx; ctx.commandArgs(argc, argv);\n    Vcursor_top top(&ctx);\n    FILE* f = std::fopen(\"stim.txt\", \"r\");\n    \
         top.clk = 0; top.eval();\n",
    );
    writeln!(cpp, "    for (int t = 0; t < {cycles}; ++t) {{\n        unsigned long long r[10];\n        if (std::fscanf(f, \"%llx\", &r[0]) != 1) return 3;\n        top.rst = r[0];").unwrap();
    for i in 0..cfgs.len() {
        writeln!(
            cpp,
            "        for (int k = 0; k < 10; ++k) if (std::fscanf(f, \"%llx\", &r[k]) != 1) return 3;\n        \
             top.clear{i} = r[0]; top.rewind{i} = r[1]; top.step{i} = r[2]; top.save{i} = r[3]; top.rd{i} = r[4]; top.wr{i} = r[5]; top.blk{i} = r[6]; top.rdata{i} = r[7]; top.blkn{i} = r[8]; top.blka{i} = r[9];"
        )
        .unwrap();
    }
    cpp += "        top.eval();\n";
    for i in 0..cfgs.len() {
        writeln!(
            cpp,
            "        std::printf(\"%llx %llx %llx %llx %llx %llx %llx %llx %llx %llx \", (unsigned long long)top.en{i}, (unsigned long long)top.we{i}, \
             (unsigned long long)top.addr{i}, (unsigned long long)top.col{i}, (unsigned long long)top.param{i}, (unsigned long long)top.lo{i}, (unsigned long long)top.hi{i}, \
             (unsigned long long)top.pa{i}, (unsigned long long)top.loa{i}, (unsigned long long)top.hia{i});"
        )
        .unwrap();
    }
    cpp += "        std::printf(\"\\n\");\n        top.clk = 1; top.eval(); top.clk = 0; top.eval();\n    }\n    return 0;\n}\n";
    fs::write(dir.join("main.cpp"), cpp).unwrap();
    let out = verilate_and_run(&dir, "cursor_top", &["fptgen_param_cursor.v", "fptgen_param_walk.v"]);
    let rows: Vec<Vec<u64>> = out.lines().map(|l| l.split_whitespace().map(|x| u64::from_str_radix(x, 16).unwrap()).collect()).collect();
    assert_eq!(rows.len(), cycles);

    let mut steps_past_last = vec![0; cfgs.len()];
    let mut ahead_unforwarded = vec![0; cfgs.len()];
    for (i, c) in cfgs.iter().enumerate() {
        let mut m = Model::new(c);
        // param_ahead, lo_ahead, hi_ahead in the next cycle: the value and
        // its tensor's bounds before the edge
        let mut ahead: Option<(u64, u64, u64)> = None;
        for cy in 0..cycles {
            let x = &stim[i][cy];
            let rst = resets.contains(&cy);
            let got = &rows[cy][10 * i..10 * i + 10];
            let want = m.outputs(c, x);
            let ctx = format!("configuration {i} {c:?}, cycle {cy}, inputs {x:?}");
            // Before the first reset the cursor is unknown; compare after it.
            if cy > 0 {
                assert_eq!((got[0], got[1], got[2], got[3]), (want.0, want.1, want.2, want.3), "{ctx}: tr_en, tr_we, tr_addr, tr_col");
                if let Some(p) = want.4 {
                    assert_eq!(got[4], p, "{ctx}: param (block {})", x.blk);
                }
                assert_eq!((got[5], got[6]), (want.5, want.6), "{ctx}: lo, hi");
                if !c.ahead() {
                    assert_eq!((got[7], got[8], got[9]), (0, 0, 0), "{ctx}: param_ahead, lo_ahead, hi_ahead without AHEAD");
                } else if let Some(p) = ahead {
                    assert_eq!((got[7], got[8], got[9]), p, "{ctx}: param_ahead, lo_ahead, hi_ahead (block {} of the previous cycle)", stim[i][cy - 1].blk_ahead);
                }
            }
            if x.step && !rst && m.pos[m.tid] + 1 == c.tensors[m.tid].count() {
                steps_past_last[i] += 1;
            }
            if m.rd.is_some_and(|(b, _)| b == x.blk_ahead) {
                ahead_unforwarded[i] += 1;
            }
            ahead = m.committed[x.blk_ahead].map(|v| {
                let (lo, hi) = c.tensors[m.committed_tid[x.blk_ahead]].bounds();
                (v, (lo as u64) & mask(c.pw), (hi as u64) & mask(c.pw))
            });
            m.edge(c, x, rst);
        }
    }
    assert!(
        cfgs.iter().zip(&ahead_unforwarded).all(|(c, &n)| !c.ahead() || n >= 50),
        "reads landing on param_ahead's block: {ahead_unforwarded:?}"
    );
    // The stimulus is worth something: every configuration moved from one
    // tensor to the next many times.
    assert!(steps_past_last.iter().all(|&n| n >= 10), "steps past a tensor's last parameter: {steps_past_last:?}");
    let _ = fs::remove_dir_all(&dir);
}
