//! `rtl/fptgen_axis_gather.v`, the AXI wrapper's s_axis (K transfers of
//! IN_W bits gathered into a beat of BEAT_W bits), in Verilator against a
//! model written here from the module's header, not from the RTL: with
//! K = 1 wires; otherwise a transfer counter k, transfers 0 to K - 2
//! stored in slot k of a register that reset does not clear, the last one
//! going through with them (`in_ready = !last || out_ready`,
//! `out_valid = last && in_valid`, `out_data` the concatenation in every
//! cycle).
//!
//! Parameter sets in one build: one transfer per beat (exact and padded),
//! 2 to 5 transfers with and without padding (a last transfer of padding
//! only, a 1-bit bus, beats wider than 64 bits). Seeded random stimulus in
//! phases (full rate, random valid and ready, long stalls, long gaps) with
//! random data and rare resets; every output of every instance compared in
//! every cycle (`common::Built::check`), and at least 100 beats through
//! each instance per run. Fails (never skips) without Verilator.

use crate::common;

use crate::common::{input, mask_u128 as mask, output, require_tool, scratch, Inst, Model, Rng, Top};

/// (IN_W, BEAT_W, K)
const SETS: &[(u32, u32, usize)] = &[(16, 16, 1), (24, 17, 1), (8, 16, 2), (8, 17, 3), (40, 120, 3), (1, 5, 5), (32, 100, 4), (13, 13, 2)];
const CYCLES: usize = 4000;

/// The header's model: the transfer counter and the stored transfers
/// (Verilator starts every register at 0).
struct Gather {
    in_w: u32,
    beat_w: u32,
    k: usize,
    count: usize,
    slots: Vec<u128>,
    /// beats taken (out_valid && out_ready)
    beats: usize,
}

impl Gather {
    fn new(&(in_w, beat_w, k): &(u32, u32, usize)) -> Gather {
        Gather { in_w, beat_w, k, count: 0, slots: vec![0; k - 1], beats: 0 }
    }

    fn last(&self) -> bool {
        self.count == self.k - 1
    }
}

// inputs: rst, in_data, in_valid, out_ready; outputs: in_ready, out_data, out_valid
impl Model for Gather {
    fn outputs(&self, x: &[u128]) -> Vec<u128> {
        let (data, valid, ready) = (x[1], x[2] == 1, x[3] == 1);
        if self.k == 1 {
            return vec![u128::from(ready), data & mask(self.beat_w), u128::from(valid)];
        }
        let mut beat = data << ((self.k - 1) as u32 * self.in_w);
        for (j, s) in self.slots.iter().enumerate() {
            beat |= s << (j as u32 * self.in_w);
        }
        vec![u128::from(!self.last() || ready), beat & mask(self.beat_w), u128::from(self.last() && valid)]
    }

    fn edge(&mut self, x: &[u128]) {
        let out = self.outputs(x);
        if out[2] == 1 && x[3] == 1 {
            self.beats += 1;
        }
        if x[0] == 1 {
            self.count = 0;
        } else if x[2] == 1 && out[0] == 1 && self.k > 1 {
            if self.last() {
                self.count = 0;
            } else {
                self.slots[self.count] = x[1];
                self.count += 1;
            }
        }
    }
}

fn stimulus(rng: &mut Rng) -> Vec<Vec<Vec<u128>>> {
    let widths: Vec<u32> = SETS.iter().map(|&(in_w, _, _)| in_w).collect();
    common::stream_stimulus(rng, CYCLES, &widths)
}

#[test]
fn axis_gather_matches_its_header_on_every_cycle() {
    require_tool("verilator", "--version");
    let insts: Vec<Inst> = SETS
        .iter()
        .map(|&(in_w, beat_w, k)| Inst {
            label: format!("IN_W {in_w} BEAT_W {beat_w} K {k}"),
            params: format!(".IN_W({in_w}), .BEAT_W({beat_w}), .K({k})"),
            ports: vec![
                input("rst", 1),
                input("in_data", in_w),
                input("in_valid", 1),
                output("in_ready", 1),
                output("out_data", beat_w),
                output("out_valid", 1),
                input("out_ready", 1),
            ],
            wiring: None,
        })
        .collect();
    let top = Top::of_instances("fptgen_axis_gather", insts);
    let bench = top.build("gather_top", true, &scratch("rtl_axis_gather"), &["fptgen_axis_gather.v"]);
    for seed in 1..=3u64 {
        let mut rng = Rng(0x6761_7468_0000_0000 + seed);
        let stim = stimulus(&mut rng);
        let mut models: Vec<Gather> = SETS.iter().map(Gather::new).collect();
        bench.check(&format!("seed {seed}"), &stim, &mut models);
        for (m, s) in models.iter().zip(SETS) {
            assert!(m.beats >= 100, "seed {seed}, {s:?}: only {} beats went through", m.beats);
        }
    }
    bench.done();
}
