//! `rtl/fptgen_axil_window.v`, one trainable tensor's window in the AXI
//! wrapper's AXI4-Lite address space, in Verilator against a model written
//! here from the module's header (docs/hardware.md, "AXI wrapper": column
//! `c` of word `w` at `base + ((w << col_bits) | c) * 4`), not from the RTL:
//! the hit (the window's high address bits, a word below DEPTH, a column
//! below COLS), the tensor, word and column it selects (zero without a
//! hit, so that windows combine by OR) and the read parameter sign- or
//! zero-extended to 32 bits.
//!
//! Parameter sets in one build: tiny's two windows as the generator places
//! them, a depth and a column count that are not powers of two, 32-bit
//! and 1-bit parameters, signed and unsigned, host ports wider than the
//! tensor's, and address spaces of 10 to 31 bits. Every address of the
//! spaces of up to 13 bits, in order; for the wider ones addresses in and
//! around the window and random ones; random host data. Every output of
//! every instance compared for every address (`common::Built::check`; the
//! module is combinational). Fails (never skips) without Verilator.


use crate::common::{input, mask_u128 as mask, output, require_tool, scratch, Inst, Model, Rng, Top};

/// One window's parameters.
#[derive(Debug, Clone, Copy)]
struct Win {
    addr_w: u32,
    base: u128,
    a_w: u32,
    c_w: u32,
    depth: u128,
    cols: u128,
    index: u128,
    sel_w: u32,
    host_a_w: u32,
    host_c_w: u32,
    data_w: u32,
    width: u32,
    signed: bool,
}

#[allow(clippy::too_many_arguments)]
const fn win(addr_w: u32, base: u128, a_w: u32, c_w: u32, depth: u128, cols: u128, index: u128, sel_w: u32, host_a_w: u32, host_c_w: u32, data_w: u32, width: u32, signed: bool) -> Win {
    Win { addr_w, base, a_w, c_w, depth, cols, index, sel_w, host_a_w, host_c_w, data_w, width, signed }
}

const WINS: [Win; 7] = [
    // tiny: fc1's weights (1 word of 4) and biases (1 word of 2), 8-bit signed
    win(13, 0x1000, 1, 2, 1, 4, 0, 1, 1, 2, 8, 8, true),
    win(13, 0x1020, 1, 1, 1, 2, 1, 1, 1, 2, 8, 8, true),
    // 5 words of 3 unsigned 12-bit parameters, wider host ports
    win(12, 0x800, 3, 2, 5, 3, 2, 2, 4, 3, 16, 12, false),
    // 32-bit parameters, full depth and columns
    win(16, 0x8000, 4, 3, 16, 8, 3, 2, 5, 3, 32, 32, true),
    // 1-bit signed parameters
    win(10, 0x200, 2, 1, 3, 2, 0, 1, 2, 1, 4, 1, true),
    // a large tensor in a 24-bit space, unsigned 20-bit parameters
    win(24, 0x40_0000, 10, 8, 1000, 200, 5, 3, 10, 8, 20, 20, false),
    // the widest space the module takes
    win(31, 0x4000_0000, 2, 2, 4, 4, 1, 1, 2, 2, 8, 8, true),
];

const CYCLES: usize = 8192;

impl Win {
    fn shift(&self) -> u32 {
        self.a_w + self.c_w + 2
    }
}

// inputs: addr, host_rdata; outputs: hit, host_sel, host_addr, host_col, rdata
impl Model for Win {
    fn outputs(&self, x: &[u128]) -> Vec<u128> {
        let (addr, data) = (x[0], x[1]);
        let word = (addr >> (self.c_w + 2)) & mask(self.a_w);
        let col = (addr >> 2) & mask(self.c_w);
        let hit = addr >> self.shift() == self.base >> self.shift() && word < self.depth && col < self.cols;
        if !hit {
            return vec![0; 5];
        }
        let p = data & mask(self.width);
        let negative = self.signed && (p >> (self.width - 1)) & 1 == 1;
        let rdata = if negative { p | (mask(32) & !mask(self.width)) } else { p };
        vec![1, self.index, word, col, rdata]
    }

    fn edge(&mut self, _: &[u128]) {}
}

fn address(w: &Win, t: usize, rng: &mut Rng) -> u128 {
    if w.addr_w <= 13 {
        return t as u128 & mask(w.addr_w);
    }
    let size = 1u128 << w.shift();
    let a = match rng.next() % 10 {
        0..=5 => w.base + u128::from(rng.next()) % size,
        6 => w.base.wrapping_sub(u128::from(rng.next() % 64)),
        7 => w.base + size + u128::from(rng.next() % 64),
        _ => rng.u128(),
    };
    a & mask(w.addr_w)
}

#[test]
fn axil_window_matches_its_header_for_every_address() {
    require_tool("verilator", "--version");
    let insts: Vec<Inst> = WINS
        .iter()
        .map(|w| Inst {
            label: format!("{w:?}"),
            params: format!(
                ".ADDR_W({}), .BASE({}), .A_W({}), .C_W({}), .DEPTH({}), .COLS({}), .INDEX({}), .SEL_W({}), .HOST_A_W({}), .HOST_C_W({}), .DATA_W({}), .WIDTH({}), .SIGNED({})",
                w.addr_w,
                w.base,
                w.a_w,
                w.c_w,
                w.depth,
                w.cols,
                w.index,
                w.sel_w,
                w.host_a_w,
                w.host_c_w,
                w.data_w,
                w.width,
                u8::from(w.signed)
            ),
            ports: vec![
                input("addr", w.addr_w),
                output("hit", 1),
                output("host_sel", w.sel_w),
                output("host_addr", w.host_a_w),
                output("host_col", w.host_c_w),
                input("host_rdata", w.data_w),
                output("rdata", 32),
            ],
            wiring: None,
        })
        .collect();
    let top = Top::of_instances("fptgen_axil_window", insts);
    let bench = top.build("window_top", false, &scratch("rtl_axil_window"), &["fptgen_axil_window.v"]);
    let mut rng = Rng(0x7769_6e64_0000_0001);
    let stim: Vec<Vec<Vec<u128>>> = (0..CYCLES).map(|t| WINS.iter().map(|w| vec![address(w, t, &mut rng), rng.u128() & mask(w.data_w)]).collect()).collect();
    let mut models = WINS.to_vec();
    bench.check("every address", &stim, &mut models);
    // Both sides of every window were seen: hits, and misses by word,
    // column and high address bits.
    for (i, w) in WINS.iter().enumerate() {
        let outs: Vec<Vec<u128>> = stim.iter().map(|c| w.outputs(&c[i])).collect();
        let hits = outs.iter().filter(|o| o[0] == 1).count();
        let near_misses = stim.iter().zip(&outs).filter(|(c, o)| o[0] == 0 && c[i][0] >> w.shift() == w.base >> w.shift()).count();
        assert!(near_misses >= 1 || (w.depth == 1u128 << w.a_w && w.cols == 1u128 << w.c_w), "{w:?}: {hits} hits, {near_misses} misses inside the window");
        assert!(hits >= 4 && hits + 4 <= CYCLES, "{w:?}: {hits} hits of {CYCLES}");
    }
    bench.done();
}
