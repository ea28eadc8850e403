//! `rtl/fptgen_dense.v`, the folded matrix-vector unit of the dense,
//! conv2d and int8 dense kinds, in Verilator against a model written here
//! from its header (not from the RTL, nor from the simulator's crates):
//! `acc = cast<A>(b[o])`, then for every input in order `acc = cast<A>(acc +
//! cast<A>(w[o][i] * x[i]))` for the in-order chain (TREE = 0), or the
//! bias's cast plus the exact products shifted to A_F, modulo 2^A_W, for the
//! adder tree (TREE = 1, with or without PACK); relu on the accumulator;
//! `y = cast<Y>(acc)`; every cast quantize-then-overflow with the
//! fptgen_cast modes re-implemented here. Parameters come from `$readmemh`
//! images the test writes (weight `(o, i)` at word `(o / PE) * SF + i /
//! SIMD`, column `(o % PE) * SIMD + i % SIMD`; bias `o` at word `o / PE`,
//! column `o % PE`; banked images where W_BANK_COLS / B_BANK_COLS > 0).
//!
//! Seventeen configurations in one build: PE from 1 to OUT and SIMD from 1
//! to IN, non-dividing PE and SIMD (padding neurons and inputs), chain and
//! tree (tree depths T = 0, 1, 2), packed multipliers with even, odd and
//! single PE, every quantization and overflow mode in the accumulator and
//! the output, signed and unsigned formats of 1 to 40 bits, ROM, block,
//! LUTRAM and banked parameter memories, the extra memory register
//! (MEM_REG) and the rotated input vector (X_ROTATE). Each instance runs a script: a
//! trainer block (reads and writes of single weights and biases through
//! the trainer ports, read-first, checked the cycle after; writes to ROMs
//! are ignored and their read data is 0), then four streams of vectors
//! (full rate; random input gaps; gaps and random output back-pressure;
//! heavy back-pressure at full input rate), each drained and followed by a
//! trainer block, with random trainer reads while vectors are in flight.
//! Checked: every output beat, in order, bit for bit (the first difference
//! names configuration, beat, element and both values); the stream
//! protocol (out_valid held with stable data until taken; nothing lost,
//! repeated or extra); the initiation interval NF*SF (acceptances never
//! closer) and the latency (NF*SF + 1 edges for the chain, NF*SF + 3 + T
//! for the tree, one more with PACK, one more with MEM_REG), and, whenever no back-pressure has
//! occurred since the unit was last empty, in_ready and out_valid in every
//! cycle against that cycle model. Fails (does not skip) without Verilator.

use std::collections::VecDeque;
use std::fmt::Write as _;
use std::fs;

use crate::common::{bits_for, mask, require_tool, scratch, verilate_and_run, Rng};
use crate::pixel_stream::{cpp_prelude, field, from_hex, pack, to_hex};

const SEED: u64 = 0xde45_e000_0000_0001;

/// A fixed-point format: width, fraction bits, signedness, and (where the
/// module has them) quantization and overflow modes (fptgen_cast codes).
#[derive(Debug, Clone, Copy)]
struct Fmt {
    w: u32,
    f: i32,
    s: bool,
    q: u32,
    o: u32,
}

const fn fx(w: u32, f: i32, s: bool) -> Fmt {
    Fmt { w, f, s, q: 0, o: 0 }
}

const fn fm(w: u32, f: i32, s: bool, q: u32, o: u32) -> Fmt {
    Fmt { w, f, s, q, o }
}

impl Fmt {
    /// The integer a code stands for (in LSBs).
    fn int(&self, code: u64) -> i128 {
        let v = i128::from(code & mask(self.w));
        if self.s && (v >> (self.w - 1)) & 1 == 1 { v - (1i128 << self.w) } else { v }
    }

    fn range(&self) -> (i128, i128) {
        if self.s { (-(1i128 << (self.w - 1)), (1i128 << (self.w - 1)) - 1) } else { (0, (1i128 << self.w) - 1) }
    }

    fn code(&self, v: i128) -> u64 {
        (v as u64) & mask(self.w)
    }

    /// A random code, a fifth of them extremes (min, max, -1, 0, 1).
    fn random(&self, rng: &mut Rng) -> u64 {
        let (lo, hi) = self.range();
        if rng.chance(20) {
            let e = [lo, hi, -1, 0, 1];
            self.code(e[(rng.next() % 5) as usize].clamp(lo, hi))
        } else {
            rng.next() & mask(self.w)
        }
    }

    fn params(&self, p: &str, modes: bool) -> String {
        let mut s = format!(".{p}_W({}), .{p}_F({}), .{p}_S({})", self.w, self.f, u8::from(self.s));
        if modes {
            write!(s, ", .{p}_Q({}), .{p}_O({})", self.q, self.o).unwrap();
        }
        s
    }
}

/// `v * 2^-in_f` cast to `to` (fptgen_cast's header: quantize per QUANT,
/// then overflow per OVF), as a code.
fn cast(v: i128, in_f: i32, to: &Fmt) -> u64 {
    let shift = in_f - to.f;
    let q = if shift > 0 {
        assert!(shift < 100, "model: shift {shift} out of the test's range");
        let t = v >> shift; // floor
        let rem = v - (t << shift);
        let half = 1i128 << (shift - 1);
        let qb = rem >= half;
        let r = rem & (half - 1) != 0;
        let s = v < 0;
        let inc = match to.q {
            0 => false,
            1 => s && (qb || r),
            2 => qb,
            3 => qb && (s || r),
            4 => qb && r,
            5 => qb && (!s || r),
            6 => qb && (t & 1 == 1 || r),
            m => panic!("quantization mode {m}"),
        };
        t + i128::from(inc)
    } else {
        assert!(-shift < 40 && v.abs() < (1i128 << 80), "model: left shift out of the test's range");
        v << -shift
    };
    let (lo, hi) = to.range();
    let out = match to.o {
        0 => q,
        1 => q.clamp(lo, hi),
        2 => {
            if q < lo || q > hi {
                0
            } else {
                q
            }
        }
        3 => {
            if q > hi {
                hi
            } else if q < lo || (to.s && q == lo) {
                if to.s { -hi } else { lo }
            } else {
                q
            }
        }
        m => panic!("overflow mode {m}"),
    };
    to.code(out)
}

/// One fptgen_dense instance.
#[derive(Debug, Clone, Copy)]
struct Cfg {
    why: &'static str,
    inp: usize,
    out: usize,
    pe: usize,
    simd: usize,
    x: Fmt,
    w: Fmt,
    b: Fmt,
    a: Fmt,
    y: Fmt,
    relu: bool,
    tree: bool,
    pack: bool,
    /// MEM_REG: the memories' read data registered once more.
    mem_reg: bool,
    /// X_ROTATE: the input vector rotated instead of a fold selected.
    x_rotate: bool,
    /// Writable, STYLE, BANK_COLS of the weight and bias memories.
    w_mem: (bool, &'static str, usize),
    b_mem: (bool, &'static str, usize),
}

impl Cfg {
    fn nf(&self) -> usize {
        self.out.div_ceil(self.pe)
    }
    fn sf(&self) -> usize {
        self.inp.div_ceil(self.simd)
    }
    /// Initiation interval NF*SF.
    fn ii(&self) -> usize {
        self.nf() * self.sf()
    }
    /// The tree's registered stages: ceil(ceil(log2 SIMD) / 2), 0 for SIMD 1.
    fn t(&self) -> usize {
        if self.simd > 1 { (bits_for(self.simd) as usize).div_ceil(2) } else { 0 }
    }
    /// Edges from acceptance to a valid output (the header's latency).
    fn latency(&self) -> usize {
        let base = if self.tree { self.ii() + 3 + self.t() + usize::from(self.pack) } else { self.ii() + 1 };
        base + usize::from(self.mem_reg)
    }
    /// (words, columns, column format) of memory m (0 weights, 1 biases).
    fn mem(&self, m: usize) -> (usize, usize, Fmt) {
        if m == 0 { (self.ii(), self.pe * self.simd, self.w) } else { (self.nf(), self.pe, self.b) }
    }
    fn writable(&self, m: usize) -> bool {
        if m == 0 { self.w_mem.0 } else { self.b_mem.0 }
    }
    fn w_loc(&self, o: usize, i: usize) -> (usize, usize) {
        ((o / self.pe) * self.sf() + i / self.simd, (o % self.pe) * self.simd + i % self.simd)
    }
    fn b_loc(&self, o: usize) -> (usize, usize) {
        (o / self.pe, o % self.pe)
    }

    fn params(&self, i: usize) -> String {
        format!(
            ".IN({}), .OUT({}), .PE({}), .SIMD({}), {}, {}, {}, {}, {}, .RELU({}), .TREE({}), .PACK({}), .MEM_REG({}), .X_ROTATE({}), \
             .W_WRITABLE({}), .W_STYLE(\"{}\"), .W_FILE(\"w{i}.hex\"), .W_BANK_COLS({}), \
             .B_WRITABLE({}), .B_STYLE(\"{}\"), .B_FILE(\"b{i}.hex\"), .B_BANK_COLS({})",
            self.inp,
            self.out,
            self.pe,
            self.simd,
            self.x.params("X", false),
            self.w.params("W", false),
            self.b.params("B", false),
            self.a.params("A", true),
            self.y.params("Y", true),
            u8::from(self.relu),
            u8::from(self.tree),
            u8::from(self.pack),
            u8::from(self.mem_reg),
            u8::from(self.x_rotate),
            u8::from(self.w_mem.0),
            self.w_mem.1,
            self.w_mem.2,
            u8::from(self.b_mem.0),
            self.b_mem.1,
            self.b_mem.2
        )
    }

    /// The accumulator's final value (as an integer of A) for neuron `o`
    /// with weights `w` (codes, input order), bias `b` and input `x`.
    fn acc(&self, w: &[u64], b: u64, x: &[u64], tree: bool) -> i128 {
        let a = &self.a;
        let bias = a.int(cast(self.b.int(b), self.b.f, a));
        if tree {
            // Exact products shifted to A_F, every addition modulo 2^A_W.
            let shift = a.f - (self.w.f + self.x.f);
            assert!(shift >= 0, "{}: a tree needs A_F >= W_F + X_F", self.why);
            let sum = w.iter().zip(x).fold(bias, |s, (&wc, &xc)| s + ((self.w.int(wc) * self.x.int(xc)) << shift));
            a.int(a.code(sum))
        } else {
            w.iter().zip(x).fold(bias, |acc, (&wc, &xc)| {
                let p = a.int(cast(self.w.int(wc) * self.x.int(xc), self.w.f + self.x.f, a));
                a.int(cast(acc + p, a.f, a))
            })
        }
    }

    /// Output code of neuron `o`.
    fn neuron(&self, w: &[u64], b: u64, x: &[u64]) -> u64 {
        let mut acc = self.acc(w, b, x, self.tree);
        if self.tree {
            // The header allows the tree only where the order cannot
            // matter: these configurations must make it the chain's value.
            assert_eq!(acc, self.acc(w, b, x, false), "{}: the tree configuration is not order-free", self.why);
        }
        if self.relu && self.a.s && acc < 0 {
            acc = 0;
        }
        cast(acc, self.a.f, &self.y)
    }

    /// The output vector (codes) of input `x` under memories `mem`.
    fn forward(&self, mem: &[Vec<Vec<u64>>; 2], x: &[u64]) -> Vec<u64> {
        (0..self.out)
            .map(|o| {
                let w: Vec<u64> = (0..self.inp).map(|i| self.w_loc(o, i)).map(|(a, c)| mem[0][a][c]).collect();
                let (a, c) = self.b_loc(o);
                self.neuron(&w, mem[1][a][c], x)
            })
            .collect()
    }
}

#[rustfmt::skip]
const CFGS: &[Cfg] = &[
    Cfg { why: "chain, PE 1 x SIMD 1 (fully folded), saturating accumulator that overflows, rounded products, quantized_relu output, trainable weights and biases",
          inp: 5, out: 3, pe: 1, simd: 1, x: fx(8, 4, true), w: fx(8, 6, true), b: fx(8, 4, true), a: fm(12, 8, true, 6, 1), y: fm(8, 5, false, 6, 1),
          relu: true, tree: false, pack: false, mem_reg: false, x_rotate: false, w_mem: (true, "block", 0), b_mem: (true, "auto", 0) },
    Cfg { why: "chain, PE = OUT and SIMD = IN (one fold, II 1), wrapping accumulator, frozen (ROM) parameters",
          inp: 6, out: 4, pe: 4, simd: 6, x: fx(6, 3, true), w: fx(5, 2, true), b: fx(6, 2, true), a: fm(10, 5, true, 0, 0), y: fm(7, 3, true, 1, 0),
          relu: false, tree: false, pack: false, mem_reg: false, x_rotate: false, w_mem: (false, "auto", 0), b_mem: (false, "auto", 0) },
    Cfg { why: "chain, PE 2 and SIMD 3 dividing neither OUT 5 nor IN 7, unsigned inputs and biases, SAT_SYM accumulator, banked LUTRAM weights",
          inp: 7, out: 5, pe: 2, simd: 3, x: fx(6, 6, false), w: fx(5, 3, true), b: fx(4, 1, false), a: fm(10, 7, true, 2, 3), y: fm(6, 2, true, 3, 2),
          relu: true, tree: false, pack: false, mem_reg: false, x_rotate: false, w_mem: (true, "distributed", 4), b_mem: (true, "block", 1) },
    Cfg { why: "tree over SIMD = IN = 8 (T 2), PE 3 of OUT 6, 12-bit wrapping accumulator narrower than the tree (TW = A_W - SHIFT), trainable biases",
          inp: 8, out: 6, pe: 3, simd: 8, x: fx(6, 2, true), w: fx(6, 3, true), b: fx(8, 3, true), a: fm(12, 6, true, 5, 0), y: fm(8, 2, true, 5, 1),
          relu: false, tree: true, pack: false, mem_reg: false, x_rotate: false, w_mem: (false, "block", 0), b_mem: (true, "block", 0) },
    Cfg { why: "tree, packed multipliers, PE 4 of OUT 7 (a padding neuron), SIMD 3 of IN 9 (T 1), saturating accumulator that cannot overflow, unsigned inputs",
          inp: 9, out: 7, pe: 4, simd: 3, x: fx(8, 8, false), w: fx(8, 7, true), b: fx(8, 4, true), a: fm(32, 15, true, 6, 1), y: fm(8, 4, false, 6, 1),
          relu: true, tree: true, pack: true, mem_reg: false, x_rotate: false, w_mem: (true, "block", 0), b_mem: (false, "auto", 0) },
    Cfg { why: "tree, packed multipliers, odd PE 3 = OUT (the last pair single), SIMD 1 (T 0), 9-bit wrapping accumulator, bias rounded into it",
          inp: 4, out: 3, pe: 3, simd: 1, x: fx(4, 2, true), w: fx(6, 3, true), b: fx(10, 7, true), a: fm(9, 5, true, 4, 0), y: fm(5, 1, true, 6, 3),
          relu: false, tree: true, pack: true, mem_reg: false, x_rotate: false, w_mem: (false, "auto", 0), b_mem: (true, "distributed", 0) },
    Cfg { why: "tree, SIMD 2 of IN 5 (T 1, a padding input), unsigned weights, inputs, biases and wrapping accumulator, one-bank weight images",
          inp: 5, out: 2, pe: 1, simd: 2, x: fx(4, 2, false), w: fx(4, 4, false), b: fx(5, 2, false), a: fm(8, 6, false, 0, 0), y: fm(6, 3, false, 2, 1),
          relu: true, tree: true, pack: false, mem_reg: false, x_rotate: false, w_mem: (true, "block", 2), b_mem: (true, "auto", 0) },
    Cfg { why: "tree, packed multipliers, SIMD 5 of IN 10 (3 levels with pass-through nodes, T 2), PE 2 of OUT 4, 24-bit wrapping accumulator, banked weights",
          inp: 10, out: 4, pe: 2, simd: 5, x: fx(8, 4, true), w: fx(8, 6, true), b: fx(12, 6, true), a: fm(24, 12, true, 0, 0), y: fm(10, 6, true, 2, 1),
          relu: false, tree: true, pack: true, mem_reg: false, x_rotate: false, w_mem: (true, "block", 3), b_mem: (true, "block", 0) },
    Cfg { why: "smallest: IN 1, OUT 1, a 1-bit signed input, a 1-bit unsigned weight, TRN_ZERO / SAT_SYM accumulator, 1-bit output",
          inp: 1, out: 1, pe: 1, simd: 1, x: fx(1, 0, true), w: fx(1, 1, false), b: fx(2, 1, true), a: fm(2, 1, true, 1, 3), y: fm(1, 0, false, 5, 1),
          relu: true, tree: false, pack: false, mem_reg: false, x_rotate: false, w_mem: (true, "block", 0), b_mem: (true, "block", 0) },
    Cfg { why: "chain, wide formats (16-bit inputs and weights, 40-bit accumulator), PE = OUT 2, SIMD 2 of IN 3",
          inp: 3, out: 2, pe: 2, simd: 2, x: fx(16, 8, true), w: fx(16, 12, true), b: fx(16, 8, true), a: fm(40, 18, true, 6, 1), y: fm(16, 8, true, 2, 1),
          relu: false, tree: false, pack: false, mem_reg: false, x_rotate: false, w_mem: (true, "block", 0), b_mem: (true, "block", 0) },
    Cfg { why: "chain, unsigned saturating accumulator fed signed products (clamped at 0), RND_ZERO products, PE = OUT 3, SIMD 2 of IN 4",
          inp: 4, out: 3, pe: 3, simd: 2, x: fx(6, 3, true), w: fx(6, 3, true), b: fx(6, 3, true), a: fm(8, 5, false, 3, 1), y: fm(6, 3, false, 4, 2),
          relu: true, tree: false, pack: false, mem_reg: false, x_rotate: false, w_mem: (false, "block", 0), b_mem: (false, "auto", 0) },
    Cfg { why: "chain, OUT 5 over PE 4 (a partial last fold), truncated products, SAT_ZERO accumulator, bias and output casts shifting left",
          inp: 3, out: 5, pe: 4, simd: 1, x: fx(5, 1, true), w: fx(5, 2, true), b: fx(4, 0, true), a: fm(7, 2, true, 0, 2), y: fm(8, 4, true, 0, 1),
          relu: false, tree: false, pack: false, mem_reg: false, x_rotate: false, w_mem: (true, "distributed", 0), b_mem: (false, "auto", 0) },
    Cfg { why: "conv-like: IN 18 = 9 taps x 2 channels, SIMD 9 (4 levels, T 2), PE 2 of OUT 4, tree with a saturating accumulator that cannot overflow",
          inp: 18, out: 4, pe: 2, simd: 9, x: fx(8, 8, false), w: fx(4, 3, true), b: fx(8, 4, true), a: fm(20, 11, true, 3, 1), y: fm(8, 4, false, 4, 1),
          relu: true, tree: true, pack: false, mem_reg: false, x_rotate: false, w_mem: (false, "block", 0), b_mem: (false, "auto", 0) },
    Cfg { why: "tree, packed multipliers with PE 1 (no pair), SIMD = IN 4 (T 1), OUT 1, 6-bit wrapping accumulator narrower than the tree, trainable weights",
          inp: 4, out: 1, pe: 1, simd: 4, x: fx(3, 1, true), w: fx(3, 1, true), b: fx(3, 0, true), a: fm(6, 2, true, 0, 0), y: fm(4, 1, true, 2, 0),
          relu: true, tree: true, pack: true, mem_reg: false, x_rotate: false, w_mem: (true, "block", 0), b_mem: (false, "auto", 0) },
    Cfg { why: "MEM_REG: chain, PE 2 of OUT 3, SIMD 1 of IN 5, parameters registered once more after the block RAM read, trainable weights and biases",
          inp: 5, out: 3, pe: 2, simd: 1, x: fx(8, 4, true), w: fx(8, 6, true), b: fx(8, 4, true), a: fm(12, 8, true, 6, 1), y: fm(8, 5, false, 6, 1),
          relu: true, tree: false, pack: false, mem_reg: true, x_rotate: true, w_mem: (true, "block", 0), b_mem: (true, "block", 0) },
    Cfg { why: "MEM_REG: tree, packed multipliers, SIMD 3 of IN 7 (T 1), PE 3 of OUT 5, wrapping accumulator, banked block RAM weights",
          inp: 7, out: 5, pe: 3, simd: 3, x: fx(6, 3, true), w: fx(6, 4, true), b: fx(8, 4, true), a: fm(20, 7, true, 0, 0), y: fm(8, 4, true, 2, 1),
          relu: false, tree: true, pack: true, mem_reg: true, x_rotate: true, w_mem: (true, "block", 3), b_mem: (true, "auto", 0) },
    Cfg { why: "X_ROTATE alone: chain, SIMD 2 of IN 7 (4 folds, a padding input), PE 2 of OUT 5 (3 neuron folds over the rotated vector), LUTRAM weights",
          inp: 7, out: 5, pe: 2, simd: 2, x: fx(6, 3, true), w: fx(5, 3, true), b: fx(6, 3, true), a: fm(12, 6, true, 2, 1), y: fm(6, 3, true, 2, 1),
          relu: true, tree: false, pack: false, mem_reg: false, x_rotate: true, w_mem: (true, "distributed", 0), b_mem: (true, "auto", 0) },
];

/// One step of an instance's script (run by the C++ bench, one after
/// another): stream settings (input gap, output stall, trainer reads while
/// streaming, in percent), a vector to offer, a drain (wait until every
/// accepted vector's output is taken), one trainer cycle, idle cycles.
#[derive(Debug, Clone)]
enum Op {
    P(u32, u32, u32),
    V(Vec<u64>),
    D,
    T { m: usize, we: bool, addr: usize, col: usize, data: u64 },
    I(usize),
}

/// A block of trainer operations between vectors: reads and writes of
/// real (non-padding) parameters, some of them of parameters written
/// before (read-first shows the old value, a later read the new one).
fn trainer_block(c: &Cfg, rng: &mut Rng, ops: &mut Vec<Op>, written: &mut Vec<(usize, usize, usize)>) {
    for k in 0..rng.range(4, 10) {
        // The first two: a write of a weight, then of a bias.
        let (m, addr, col) = if k >= 2 && !written.is_empty() && rng.chance(40) {
            written[(rng.next() % written.len() as u64) as usize]
        } else if k == 0 || (k >= 2 && rng.coin()) {
            let (a, cc) = c.w_loc(rng.range(0, c.out as i64 - 1) as usize, rng.range(0, c.inp as i64 - 1) as usize);
            (0, a, cc)
        } else {
            let (a, cc) = c.b_loc(rng.range(0, c.out as i64 - 1) as usize);
            (1, a, cc)
        };
        let we = k < 2 || rng.chance(60);
        if we {
            written.push((m, addr, col));
        }
        ops.push(Op::T { m, we, addr, col, data: c.mem(m).2.random(rng) });
        if rng.chance(40) {
            ops.push(Op::I(rng.range(1, 3) as usize));
        }
    }
}

/// One cycle of one instance, as logged by the bench (after evaluation,
/// before the edge).
#[derive(Debug, Clone)]
struct Row {
    in_valid: bool,
    in_ready: bool,
    out_valid: bool,
    out_ready: bool,
    out_data: Vec<bool>,
    /// tr_rdata of the weight and bias memories.
    rdata: [u64; 2],
    /// Trainer port inputs per memory: en, we, addr, col, wdata.
    tr: [[u64; 5]; 2],
}

fn main_cpp(top: &str) -> String {
    let mut c = cpp_prelude(top);
    write!(
        c,
        r#"
struct Op {{
    char kind = 0;
    int a = 0, b = 0, c = 0;
    uint64_t addr = 0, col = 0, data = 0;
    Words vec;
}};

struct Inst {{
    std::vector<Op> ops;
    std::size_t pc = 0, acc = 0, outs = 0;
    int gap = 0, stall = 0, rd = 0, idle = 0, in_bits = 0;
    bool valid = false, ready = true;
    uint64_t words[2], cols[2], amask[2], cmask[2], dmask[2];
    uint64_t tr[2][5];
    Rng rng{{0}};
    // Settings and satisfied drains take no cycle.
    void skip() {{
        while (pc < ops.size()) {{
            const Op& o = ops[pc];
            if (o.kind == 'P') {{ gap = o.a; stall = o.b; rd = o.c; ++pc; }}
            else if (o.kind == 'D' && outs == acc) ++pc;
            else break;
        }}
    }}
    const Op* cur() const {{ return pc < ops.size() ? &ops[pc] : nullptr; }}
    Words garbage() {{
        Words w((in_bits + 31) / 32, 0);
        for (std::size_t k = 0; k < w.size(); ++k) w[k] = static_cast<uint32_t>(rng.next());
        if (in_bits % 32) w.back() &= (1u << (in_bits % 32)) - 1;
        return w;
    }}
    // This cycle's inputs (before evaluation).
    void drive() {{
        skip();
        const Op* o = cur();
        if (o && o->kind == 'V' && !valid && !rng.chance(gap)) valid = true;
        ready = !rng.chance(stall);
        for (int m = 0; m < 2; ++m) {{
            tr[m][0] = 0; tr[m][1] = rng.next() & 1; tr[m][2] = rng.next() & amask[m];
            tr[m][3] = rng.next() & cmask[m]; tr[m][4] = rng.next() & dmask[m];
        }}
        if (o && o->kind == 'T') {{
            uint64_t* t = tr[o->a];
            t[0] = 1; t[1] = o->b; t[2] = o->addr; t[3] = o->col; t[4] = o->data;
        }} else if (o && (o->kind == 'V' || o->kind == 'D') && rng.chance(rd)) {{
            const int m = static_cast<int>(rng.next() & 1);
            uint64_t* t = tr[m];
            t[0] = 1; t[1] = 0; t[2] = rng.next() % words[m]; t[3] = rng.next() % cols[m];
        }}
    }}
    // After evaluation: the transfers of this cycle.
    void advance(bool in_ready, bool out_valid) {{
        const Op* o = cur();
        if (valid && in_ready) {{ valid = false; ++acc; ++pc; }}
        else if (o && o->kind == 'T') ++pc;
        else if (o && o->kind == 'I' && ++idle >= o->a) {{ idle = 0; ++pc; }}
        if (out_valid && ready) ++outs;
    }}
}};

static void load(Inst& q, const char* name, int in_bits) {{
    std::ifstream f(name);
    std::string line;
    while (std::getline(f, line)) {{
        if (line.empty()) continue;
        Op o;
        o.kind = line[0];
        const std::string rest = line.substr(1);
        if (o.kind == 'V') {{
            std::size_t s = rest.find_first_not_of(' ');
            o.vec = parse_hex(rest.substr(s), in_bits);
        }} else if (o.kind == 'T') {{
            unsigned long long addr, col, data;
            std::sscanf(rest.c_str(), "%d %d %llx %llx %llx", &o.a, &o.b, &addr, &col, &data);
            o.addr = addr; o.col = col; o.data = data;
        }} else {{
            std::sscanf(rest.c_str(), "%d %d %d", &o.a, &o.b, &o.c);
        }}
        q.ops.push_back(o);
    }}
    q.in_bits = in_bits;
}}

int main(int argc, char** argv) {{
    VerilatedContext ctx;
    ctx.commandArgs(argc, argv);
    V{top} top(&ctx);
    std::vector<Inst> p({n});
"#,
        n = CFGS.len()
    )
    .unwrap();
    for (i, cfg) in CFGS.iter().enumerate() {
        writeln!(c, "    load(p[{i}], \"script{i}.txt\", {}); p[{i}].rng.s = {}ull;", cfg.inp as u32 * cfg.x.w, SEED ^ (i as u64 * 0x1000_0001)).unwrap();
        for m in 0..2 {
            let (words, cols, f) = cfg.mem(m);
            writeln!(
                c,
                "    p[{i}].words[{m}] = {words}; p[{i}].cols[{m}] = {cols}; p[{i}].amask[{m}] = {}ull; p[{i}].cmask[{m}] = {}ull; p[{i}].dmask[{m}] = {}ull;",
                mask(bits_for(words)),
                mask(bits_for(cols)),
                mask(f.w)
            )
            .unwrap();
        }
    }
    c += "    top.clk = 0;\n    top.rst = 1;\n";
    for i in 0..CFGS.len() {
        writeln!(c, "    top.in_valid{i} = 0; top.out_ready{i} = 0; top.w_en{i} = 0; top.b_en{i} = 0;").unwrap();
    }
    c += "    for (int k = 0; k < 3; ++k) { top.eval(); top.clk = 1; top.eval(); top.clk = 0; }\n    top.rst = 0;\n    top.eval();\n    long tail = -1;\n    for (long t = 0; ; ++t) {\n        if (t > 200000) { std::printf(\"T %ld\\n\", t); break; }\n";
    for i in 0..CFGS.len() {
        writeln!(
            c,
            "        {{\n            Inst& q = p[{i}];\n            q.drive();\n            top.in_valid{i} = q.valid;\n            \
             set_sig(top.in_data{i}, q.valid ? q.cur()->vec : q.garbage());\n            top.out_ready{i} = q.ready;\n            \
             top.w_en{i} = q.tr[0][0]; top.w_we{i} = q.tr[0][1]; top.w_addr{i} = q.tr[0][2]; top.w_col{i} = q.tr[0][3]; top.w_wdata{i} = q.tr[0][4];\n            \
             top.b_en{i} = q.tr[1][0]; top.b_we{i} = q.tr[1][1]; top.b_addr{i} = q.tr[1][2]; top.b_col{i} = q.tr[1][3]; top.b_wdata{i} = q.tr[1][4];\n        }}"
        )
        .unwrap();
    }
    c += "        top.eval();\n";
    for (i, cfg) in CFGS.iter().enumerate() {
        writeln!(
            c,
            "        {{\n            Inst& q = p[{i}];\n            \
             std::printf(\"C {i} %ld %d %d %d %d %s %llx %llx\", t, q.valid ? 1 : 0, top.in_ready{i} ? 1 : 0, top.out_valid{i} ? 1 : 0, q.ready ? 1 : 0, \
             to_hex(get_sig(top.out_data{i}, {ob}), {ob}).c_str(), (unsigned long long)top.w_rdata{i}, (unsigned long long)top.b_rdata{i});\n            \
             for (int m = 0; m < 2; ++m) for (int k = 0; k < 5; ++k) std::printf(\" %llx\", (unsigned long long)q.tr[m][k]);\n            \
             std::printf(\"\\n\");\n            q.advance(top.in_ready{i}, top.out_valid{i});\n        }}",
            ob = cfg.out as u32 * cfg.y.w
        )
        .unwrap();
    }
    c += "        top.clk = 1;\n        top.eval();\n        top.clk = 0;\n        top.eval();\n        bool all = true;\n        \
          for (Inst& q : p) { q.skip(); all = all && q.pc == q.ops.size(); }\n        \
          if (all && tail < 0) tail = t + 40;\n        if (tail >= 0 && t >= tail) break;\n    }\n    top.final();\n    return 0;\n}\n";
    c
}

#[test]
fn dense_outputs_handshake_and_trainer_ports_as_specified() {
    require_tool("verilator", "--version");
    let mut rng = Rng(SEED);
    let dir = scratch("rtl_dense");

    // Initial memories (padding zero), their images, and the scripts.
    let mut mems0: Vec<[Vec<Vec<u64>>; 2]> = Vec::new();
    let mut scripts: Vec<Vec<Op>> = Vec::new();
    for (i, c) in CFGS.iter().enumerate() {
        let mut mem: [Vec<Vec<u64>>; 2] = [0, 1].map(|m| {
            let (words, cols, _) = c.mem(m);
            vec![vec![0u64; cols]; words]
        });
        for o in 0..c.out {
            for k in 0..c.inp {
                let (a, cc) = c.w_loc(o, k);
                mem[0][a][cc] = c.w.random(&mut rng);
            }
            let (a, cc) = c.b_loc(o);
            mem[1][a][cc] = c.b.random(&mut rng);
        }
        for (m, (name, bank_cols)) in [(format!("w{i}.hex"), c.w_mem.2), (format!("b{i}.hex"), c.b_mem.2)].into_iter().enumerate() {
            let (_, cols, f) = c.mem(m);
            let banks: Vec<(usize, usize)> =
                if bank_cols == 0 { vec![(0, cols)] } else { (0..cols.div_ceil(bank_cols)).map(|b| (b * bank_cols, ((b + 1) * bank_cols).min(cols))).collect() };
            for (b, &(lo, hi)) in banks.iter().enumerate() {
                let text: String = mem[m].iter().map(|word| to_hex(&pack(&word[lo..hi], f.w)) + "\n").collect();
                let file = if bank_cols == 0 { name.clone() } else { format!("{name}.bank{b:04}.hex") };
                fs::write(dir.join(file), text).unwrap();
            }
        }
        mems0.push(mem);

        let vector = |rng: &mut Rng| Op::V((0..c.inp).map(|_| c.x.random(rng)).collect());
        let mut ops = Vec::new();
        let mut written = Vec::new();
        trainer_block(c, &mut rng, &mut ops, &mut written);
        for (n, gap, stall, rd) in [(8, 0, 0, 0), (10, 35, 0, 25), (12, 25, 45, 25), (10, 0, 75, 10)] {
            ops.push(Op::P(gap, stall, rd));
            for _ in 0..n {
                ops.push(vector(&mut rng));
            }
            ops.push(Op::D);
            trainer_block(c, &mut rng, &mut ops, &mut written);
        }
        let mut text = String::new();
        for op in &ops {
            match op {
                Op::P(g, s, r) => writeln!(text, "P {g} {s} {r}"),
                Op::V(x) => writeln!(text, "V {}", to_hex(&pack(x, c.x.w))),
                Op::D => writeln!(text, "D"),
                Op::T { m, we, addr, col, data } => writeln!(text, "T {m} {} {addr:x} {col:x} {data:x}", u8::from(*we)),
                Op::I(n) => writeln!(text, "I {n}"),
            }
            .unwrap();
        }
        fs::write(dir.join(format!("script{i}.txt")), text).unwrap();
        scripts.push(ops);
    }

    // The top: one instance per configuration, every port on the top.
    let mut top = String::from("// Generated by generator/tests/rtl/dense.rs\n`timescale 1ns / 1ps\n`default_nettype none\nmodule dense_top (\n    input wire clk,\n    input wire rst");
    for (i, c) in CFGS.iter().enumerate() {
        write!(
            top,
            ",\n    input wire [{}:0] in_data{i}, input wire in_valid{i}, output wire in_ready{i}, output wire [{}:0] out_data{i}, output wire out_valid{i}, input wire out_ready{i}",
            c.inp as u32 * c.x.w - 1,
            c.out as u32 * c.y.w - 1
        )
        .unwrap();
        for (m, p) in ["w", "b"].iter().enumerate() {
            let (words, cols, f) = c.mem(m);
            write!(
                top,
                ",\n    input wire {p}_en{i}, input wire {p}_we{i}, input wire [{}:0] {p}_addr{i}, input wire [{}:0] {p}_col{i}, input wire [{dw}:0] {p}_wdata{i}, output wire [{dw}:0] {p}_rdata{i}",
                bits_for(words) - 1,
                bits_for(cols) - 1,
                dw = f.w - 1
            )
            .unwrap();
        }
    }
    top += "\n);\n";
    for (i, c) in CFGS.iter().enumerate() {
        write!(
            top,
            "// {}\nfptgen_dense #({}) u{i} (\n    .clk(clk), .rst(rst), .in_data(in_data{i}), .in_valid(in_valid{i}), .in_ready(in_ready{i}), \
             .out_data(out_data{i}), .out_valid(out_valid{i}), .out_ready(out_ready{i}),\n    \
             .w_tr_en(w_en{i}), .w_tr_we(w_we{i}), .w_tr_addr(w_addr{i}), .w_tr_col(w_col{i}), .w_tr_wdata(w_wdata{i}), .w_tr_rdata(w_rdata{i}),\n    \
             .b_tr_en(b_en{i}), .b_tr_we(b_we{i}), .b_tr_addr(b_addr{i}), .b_tr_col(b_col{i}), .b_tr_wdata(b_wdata{i}), .b_tr_rdata(b_rdata{i}));\n",
            c.why,
            c.params(i)
        )
        .unwrap();
    }
    top += "endmodule\n`default_nettype wire\n";
    fs::write(dir.join("dense_top.v"), top).unwrap();
    fs::write(dir.join("main.cpp"), main_cpp("dense_top")).unwrap();

    let out = verilate_and_run(&dir, "dense_top", &["fptgen_dense.v", "fptgen_param_mem.v", "fptgen_cast.v"]);
    let mut rows: Vec<Vec<Row>> = vec![Vec::new(); CFGS.len()];
    for line in out.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        assert!(f[0] != "T", "the bench hit its cycle limit (a deadlock?), files in {}", dir.display());
        assert!(f[0] == "C" && f.len() == 20, "unexpected bench output line: {line}");
        let i: usize = f[1].parse().unwrap();
        assert_eq!(f[2].parse::<usize>().unwrap(), rows[i].len(), "trace lines out of order");
        let h = |k: usize| u64::from_str_radix(f[k], 16).unwrap();
        let c = &CFGS[i];
        rows[i].push(Row {
            in_valid: f[3] == "1",
            in_ready: f[4] == "1",
            out_valid: f[5] == "1",
            out_ready: f[6] == "1",
            out_data: from_hex(f[7], c.out * c.y.w as usize),
            rdata: [h(8), h(9)],
            tr: [[h(10), h(11), h(12), h(13), h(14)], [h(15), h(16), h(17), h(18), h(19)]],
        });
    }

    for (i, c) in CFGS.iter().enumerate() {
        let ctx = format!("configuration {i} ({}; fptgen_dense #({}))", c.why, c.params(i));
        let vectors: Vec<&Vec<u64>> = scripts[i].iter().filter_map(|op| if let Op::V(x) = op { Some(x) } else { None }).collect();
        let (ii, lat) = (c.ii(), c.latency());
        let mut mem = mems0[i].clone();
        // Per accepted vector: its cycle and expected output.
        let mut accepted: Vec<(usize, Vec<u64>)> = Vec::new();
        let mut taken = 0usize;
        // The cycle model, exact while `synced` (no back-pressure since the
        // unit was last empty): the cycle of the last acceptance and the
        // cycles of the outputs due.
        let mut synced = true;
        let mut last_acc: Option<usize> = None;
        let mut due: VecDeque<usize> = VecDeque::new();
        let mut pending_rd: [Option<u64>; 2] = [None, None];
        let (mut synced_cycles, mut backpressure, mut rd_checked, mut writes) = (0, 0, [0; 2], [0; 2]);
        for (t, r) in rows[i].iter().enumerate() {
            // Trainer ports: read-first data the cycle after a read; 0 for a ROM.
            for m in 0..2 {
                let name = ["w_tr_rdata", "b_tr_rdata"][m];
                if !c.writable(m) {
                    assert_eq!(r.rdata[m], 0, "{ctx}: {name} of a read-only memory at cycle {t}");
                } else if let Some(v) = pending_rd[m].take() {
                    assert_eq!(r.rdata[m], v, "{ctx}: {name} at cycle {t}, the cycle after a trainer read of word {:x} column {:x}: got {:x}, want {v:x}", rows[i][t - 1].tr[m][2], rows[i][t - 1].tr[m][3], r.rdata[m]);
                    rd_checked[m] += 1;
                }
            }
            for m in 0..2 {
                let [en, we, addr, col, data] = r.tr[m];
                if en == 1 && c.writable(m) {
                    pending_rd[m] = Some(mem[m][addr as usize][col as usize]);
                    if we == 1 {
                        assert!(!r.in_valid && accepted.len() == taken, "{ctx}: test bug: a trainer write at cycle {t} with a vector in flight");
                        mem[m][addr as usize][col as usize] = data;
                        writes[m] += 1;
                    }
                }
            }
            // The cycle model.
            if synced {
                synced_cycles += 1;
                let want_ov = due.front() == Some(&t);
                assert_eq!(r.out_valid, want_ov, "{ctx}: out_valid at cycle {t} (outputs due at cycles {due:?}; latency {lat} edges after acceptance)");
                if r.out_valid && !r.out_ready {
                    synced = false;
                } else {
                    let want_ir = last_acc.is_none_or(|a| t >= a + ii);
                    assert_eq!(r.in_ready, want_ir, "{ctx}: in_ready at cycle {t} (last acceptance at cycle {last_acc:?}, initiation interval {ii})");
                }
                if r.out_valid && r.out_ready {
                    due.pop_front();
                }
            }
            // Acceptance: never closer than the initiation interval.
            if r.in_valid && r.in_ready {
                let k = accepted.len();
                assert!(k < vectors.len(), "{ctx}: an extra vector accepted at cycle {t}");
                if let Some(&(p, _)) = accepted.last() {
                    assert!(t >= p + ii, "{ctx}: vector {k} accepted at cycle {t}, {} cycles after the previous one (initiation interval {ii})", t - p);
                }
                accepted.push((t, c.forward(&mem, vectors[k])));
                if synced {
                    last_acc = Some(t);
                    due.push_back(t + 1 + lat);
                }
            }
            // Outputs: in order, bit for bit, no earlier than the latency.
            if r.out_valid {
                assert!(taken < accepted.len(), "{ctx}: out_valid at cycle {t} with no vector in flight ({taken} outputs taken of {} accepted)", accepted.len());
                if !r.out_ready {
                    backpressure += 1;
                    let n = rows[i].get(t + 1).unwrap_or_else(|| panic!("{ctx}: the run ended with an output not taken"));
                    assert!(n.out_valid, "{ctx}: out_valid dropped at cycle {} before output {taken} was taken", t + 1);
                    assert_eq!(to_hex(&n.out_data), to_hex(&r.out_data), "{ctx}: out_data changed at cycle {} before output {taken} was taken", t + 1);
                } else {
                    let (acc_t, want) = &accepted[taken];
                    for (o, &w) in want.iter().enumerate() {
                        let got = field(&r.out_data, o, c.y.w);
                        assert_eq!(
                            got,
                            w,
                            "{ctx}: out_data of output beat {taken} (cycle {t}), element {o}: got {got:x}, want {w:x}; input {:x?}, whole beat got {} want {}",
                            vectors[taken],
                            to_hex(&r.out_data),
                            to_hex(&pack(want, c.y.w))
                        );
                    }
                    assert!(t >= acc_t + 1 + lat, "{ctx}: output {taken} at cycle {t}, vector accepted at cycle {acc_t}: earlier than the latency {lat}");
                    taken += 1;
                }
            }
            // Empty again: the cycle model restarts.
            if taken == accepted.len() && !synced {
                synced = true;
                last_acc = None;
                due.clear();
            }
        }
        assert_eq!(accepted.len(), vectors.len(), "{ctx}: vectors accepted");
        assert_eq!(taken, vectors.len(), "{ctx}: outputs taken");
        // The stimulus is worth something.
        assert!(synced_cycles > rows[i].len() / 3 && backpressure >= 10, "{ctx}: cycles checked against the cycle model {synced_cycles}, back-pressured {backpressure}");
        for m in 0..2 {
            assert!(!c.writable(m) || (rd_checked[m] >= 5 && writes[m] >= 2), "{ctx}: trainer reads checked {rd_checked:?}, writes {writes:?}");
        }
    }
    let _ = fs::remove_dir_all(&dir);
}
