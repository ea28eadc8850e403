//! `rtl/fptgen_axis_scatter.v`, the AXI wrapper's m_axis (a beat of BEAT_W
//! bits as K transfers of OUT_W bits, TLAST on the last transfer of every
//! BATCH-th vector of BEATS beats), in Verilator against a model written
//! here from the module's header, not from the RTL: with K = 1 wires;
//! otherwise a shift register that reset does not clear, a transfer
//! counter and a busy flag (`out_valid = busy`, `in_ready = !busy ||
//! (last && out_ready)`, the next beat loaded on the edge that takes the
//! last transfer of the one before); the beat and vector counters of TLAST.
//!
//! Parameter sets in one build: one transfer per beat (exact and padded),
//! 2 to 5 transfers with and without padding (a last transfer of padding
//! only, a 1-bit bus, beats wider than 64 bits), vectors of 1 to 4 beats,
//! TLAST every 1 to 5 vectors. Seeded random stimulus in phases (full rate,
//! random valid and ready, long stalls, long gaps) with random data and
//! rare resets; every output of every instance compared in every cycle
//! (`common::Built::check`), and at least 100 transfers and 10 TLASTs
//! through each instance per run. Fails (never skips) without Verilator.

use crate::common;

use crate::common::{input, mask_u128 as mask, output, require_tool, scratch, Inst, Model, Rng, Top};

/// (BEAT_W, OUT_W, K, BEATS, BATCH)
const SETS: &[(u32, u32, usize, usize, usize)] =
    &[(16, 16, 1, 1, 1), (17, 24, 1, 3, 2), (16, 8, 2, 1, 3), (17, 8, 3, 2, 1), (100, 32, 4, 1, 1), (5, 1, 5, 3, 4), (120, 40, 3, 2, 5), (8, 8, 2, 4, 2)];
const CYCLES: usize = 4000;

/// The header's model (Verilator starts every register at 0).
struct Scatter {
    out_w: u32,
    k: usize,
    beats: usize,
    batch: usize,
    shift: u128,
    count: usize,
    busy: bool,
    beat: usize,
    vector: usize,
    /// transfers and TLASTs taken
    transfers: usize,
    lasts: usize,
}

impl Scatter {
    fn new(&(_, out_w, k, beats, batch): &(u32, u32, usize, usize, usize)) -> Scatter {
        Scatter { out_w, k, beats, batch, shift: 0, count: 0, busy: false, beat: 0, vector: 0, transfers: 0, lasts: 0 }
    }

    /// The transfer on the output is its beat's last.
    fn last_part(&self) -> bool {
        self.k == 1 || self.count == self.k - 1
    }
}

// inputs: rst, in_data, in_valid, out_ready; outputs: in_ready, out_data, out_valid, out_last
impl Model for Scatter {
    fn outputs(&self, x: &[u128]) -> Vec<u128> {
        let (data, valid, ready) = (x[1], x[2] == 1, x[3] == 1);
        let (in_ready, out_data, out_valid) = if self.k == 1 {
            (ready, data, valid)
        } else {
            (!self.busy || (self.last_part() && ready), self.shift & mask(self.out_w), self.busy)
        };
        let last = self.last_part() && self.beat == self.beats - 1 && self.vector == self.batch - 1;
        vec![u128::from(in_ready), out_data, u128::from(out_valid), u128::from(last)]
    }

    fn edge(&mut self, x: &[u128]) {
        let out = self.outputs(x);
        let (in_fire, out_fire) = (x[2] == 1 && out[0] == 1, out[2] == 1 && x[3] == 1);
        if out_fire {
            self.transfers += 1;
            self.lasts += usize::from(out[3] == 1);
        }
        if x[0] == 1 {
            (self.count, self.busy, self.beat, self.vector) = (0, false, 0, 0);
            return;
        }
        if out_fire && self.last_part() {
            if self.beat == self.beats - 1 {
                self.beat = 0;
                self.vector = if self.vector == self.batch - 1 { 0 } else { self.vector + 1 };
            } else {
                self.beat += 1;
            }
        }
        if self.k > 1 {
            if in_fire {
                (self.shift, self.count, self.busy) = (x[1], 0, true);
            } else if self.busy && x[3] == 1 {
                self.shift >>= self.out_w;
                if self.last_part() {
                    self.busy = false;
                } else {
                    self.count += 1;
                }
            }
        }
    }
}

fn stimulus(rng: &mut Rng) -> Vec<Vec<Vec<u128>>> {
    let widths: Vec<u32> = SETS.iter().map(|&(beat_w, ..)| beat_w).collect();
    common::stream_stimulus(rng, CYCLES, &widths)
}

#[test]
fn axis_scatter_matches_its_header_on_every_cycle() {
    require_tool("verilator", "--version");
    let insts: Vec<Inst> = SETS
        .iter()
        .map(|&(beat_w, out_w, k, beats, batch)| Inst {
            label: format!("BEAT_W {beat_w} OUT_W {out_w} K {k} BEATS {beats} BATCH {batch}"),
            params: format!(".BEAT_W({beat_w}), .OUT_W({out_w}), .K({k}), .BEATS({beats}), .BATCH({batch})"),
            ports: vec![
                input("rst", 1),
                input("in_data", beat_w),
                input("in_valid", 1),
                output("in_ready", 1),
                output("out_data", out_w),
                output("out_valid", 1),
                input("out_ready", 1),
                output("out_last", 1),
            ],
            wiring: None,
        })
        .collect();
    let top = Top::of_instances("fptgen_axis_scatter", insts);
    let bench = top.build("scatter_top", true, &scratch("rtl_axis_scatter"), &["fptgen_axis_scatter.v"]);
    for seed in 1..=3u64 {
        let mut rng = Rng(0x7363_6174_0000_0000 + seed);
        let stim = stimulus(&mut rng);
        let mut models: Vec<Scatter> = SETS.iter().map(Scatter::new).collect();
        bench.check(&format!("seed {seed}"), &stim, &mut models);
        for (m, s) in models.iter().zip(SETS) {
            assert!(m.transfers >= 100 && m.lasts >= 10, "seed {seed}, {s:?}: only {} transfers, {} with TLAST", m.transfers, m.lasts);
        }
    }
    bench.done();
}
