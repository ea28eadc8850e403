//! `rtl/fptgen_axil_trainer.v`, the trainer's registers in the AXI
//! wrapper's register map (CONTROL, ITERATIONS, STATUS, the event counters,
//! LOADED) and when the weight windows may be served, in Verilator against
//! a model written here from the module's header (and driver/registers.md:
//! CONTROL's bits 0 to 2 start, pause and resume as one-cycle pulses;
//! STATUS = busy, paused, done, weights readable now, weights writable
//! now), not from the RTL.
//!
//! Parameter sets in one build: tiny's map (CONTROL and ITERATIONS at words
//! 16 and 18 of 11-bit word addresses), a narrow and a 1-bit address, and
//! 32-bit addresses. Seeded random stimulus in phases (register writes to
//! CONTROL, ITERATIONS and elsewhere with data that sets one bit, none or
//! random ones; the trainer's status idle, busy, paused, done; events of
//! every kind, 3 included, which counts nowhere; sample-load transfers;
//! rare resets); every output of every instance compared in every cycle
//! (`common::Built::check`). The test also counts that starts with and
//! without iterations, the starting window (weights refused before the
//! trainer is busy), paused reads and events of every kind happened. Fails
//! (never skips) without Verilator.


use crate::common::{input, mask_u128 as mask, output, require_tool, scratch, Inst, Model, Rng, Top};

/// (AW, CONTROL, ITERATIONS)
const SETS: [(u32, u128, u128); 4] = [(11, 16, 18), (6, 63, 0), (1, 0, 1), (32, 0x7fff_ffff, 5)];
const CYCLES: usize = 6000;

/// What the run exercised.
#[derive(Debug, Default)]
struct Seen {
    starts: usize,
    empty_starts: usize,
    starting: usize,
    paused_reads: usize,
    events: [usize; 4],
}

/// The header's model, from reset.
#[derive(Default)]
struct Regs {
    control: u128,
    iterations_at: u128,
    start: bool,
    pause: bool,
    resume: bool,
    iterations: u128,
    starting: bool,
    events: [u128; 3],
    loaded: u128,
    seen: Seen,
}

// inputs: rst, reg_we, reg_addr, reg_wdata, st_busy, st_paused, st_done,
// mon_valid, mon_kind, ld_fire
// outputs: ctl_start, ctl_pause, ctl_resume, iterations, host_wr_ok,
// host_rd_ok, status, events0, events1, events2, loaded
impl Model for Regs {
    fn outputs(&self, x: &[u128]) -> Vec<u128> {
        let (busy, paused, done) = (x[4] == 1, x[5] == 1, x[6] == 1);
        let wr_ok = !busy && !self.starting && !self.start;
        let rd_ok = wr_ok || (paused && !self.start);
        let b = u128::from;
        let status = b(busy) | b(paused) << 1 | b(done) << 2 | b(rd_ok) << 3 | b(wr_ok) << 4;
        vec![b(self.start), b(self.pause), b(self.resume), self.iterations, b(wr_ok), b(rd_ok), status, self.events[0], self.events[1], self.events[2], self.loaded]
    }

    fn edge(&mut self, x: &[u128]) {
        let (we, addr, data, busy, paused) = (x[1] == 1, x[2], x[3], x[4] == 1, x[5] == 1);
        let (mon_valid, kind, ld) = (x[7] == 1, x[8] as usize, x[9] == 1);
        let out = self.outputs(x);
        if self.start {
            self.seen.starts += 1;
            self.seen.empty_starts += usize::from(self.iterations == 0);
        }
        self.seen.starting += usize::from(self.starting && !busy);
        self.seen.paused_reads += usize::from(out[5] == 1 && out[4] == 0 && paused);
        if mon_valid {
            self.seen.events[kind] += 1;
        }
        if x[0] == 1 {
            *self = Regs { control: self.control, iterations_at: self.iterations_at, seen: std::mem::take(&mut self.seen), ..Regs::default() };
            return;
        }
        let start = self.start;
        let control = we && addr == self.control;
        (self.start, self.pause, self.resume) = (control && data & 1 == 1, control && data & 2 == 2, control && data & 4 == 4);
        if start && self.iterations != 0 {
            self.starting = true;
        } else if busy {
            self.starting = false;
        }
        if we && addr == self.iterations_at {
            self.iterations = data;
        }
        if start {
            self.events = [0; 3];
        } else if mon_valid && kind < 3 {
            self.events[kind] = (self.events[kind] + 1) & mask(32);
        }
        if ld {
            self.loaded = (self.loaded + 1) & mask(32);
        }
    }
}

/// The trainer's status by phase of 300 cycles: (busy, paused, done) in
/// percent of cycles, each phase's busy level held for runs of cycles.
const PHASES: [(u64, u64, u64); 5] = [(0, 0, 0), (100, 0, 0), (100, 100, 0), (0, 0, 100), (50, 50, 50)];

fn stimulus(rng: &mut Rng) -> Vec<Vec<Vec<u128>>> {
    (0..CYCLES)
        .map(|t| {
            let (busy, paused, done) = PHASES[(t / 300) % PHASES.len()];
            SETS.iter()
                .map(|&(aw, control, iterations)| {
                    let rst = t == 0 || rng.chance(1) && rng.chance(20);
                    let addr = match rng.next() % 4 {
                        0 | 1 => control,
                        2 => iterations,
                        _ => rng.u128() & mask(aw),
                    };
                    let data = match rng.next() % 4 {
                        0 => 0,
                        1 => 1 << (rng.next() % 3),
                        2 => u128::from(rng.next() % 4),
                        _ => u128::from(rng.next() as u32),
                    };
                    let kind = u128::from(rng.next() % 4);
                    let mut c = |p| u128::from(rng.chance(p));
                    vec![u128::from(rst), c(15), addr, data, c(busy), c(paused), c(done), c(40), kind, c(30)]
                })
                .collect()
        })
        .collect()
}

#[test]
fn axil_trainer_matches_its_header_on_every_cycle() {
    require_tool("verilator", "--version");
    let insts: Vec<Inst> = SETS
        .iter()
        .map(|&(aw, control, iterations)| Inst {
            label: format!("AW {aw} CONTROL {control} ITERATIONS {iterations}"),
            params: format!(".AW({aw}), .CONTROL({control}), .ITERATIONS({iterations})"),
            ports: vec![
                input("rst", 1),
                input("reg_we", 1),
                input("reg_addr", aw),
                input("reg_wdata", 32),
                output("ctl_start", 1),
                output("ctl_pause", 1),
                output("ctl_resume", 1),
                output("iterations", 32),
                input("st_busy", 1),
                input("st_paused", 1),
                input("st_done", 1),
                input("mon_valid", 1),
                input("mon_kind", 2),
                input("ld_fire", 1),
                output("host_wr_ok", 1),
                output("host_rd_ok", 1),
                output("status", 32),
                output("events0", 32),
                output("events1", 32),
                output("events2", 32),
                output("loaded", 32),
            ],
            wiring: None,
        })
        .collect();
    let top = Top::of_instances("fptgen_axil_trainer", insts);
    let bench = top.build("trainer_top", true, &scratch("rtl_axil_trainer"), &["fptgen_axil_trainer.v"]);
    for seed in 1..=3u64 {
        let mut rng = Rng(0x7472_6169_0000_0000 + seed);
        let stim = stimulus(&mut rng);
        let mut models: Vec<Regs> = SETS.iter().map(|&(_, control, iterations_at)| Regs { control, iterations_at, ..Regs::default() }).collect();
        bench.check(&format!("seed {seed}"), &stim, &mut models);
        for (m, s) in models.iter().zip(SETS) {
            let n = &m.seen;
            assert!(n.starts >= 20 && n.empty_starts >= 5 && n.starting >= 20 && n.paused_reads >= 20, "seed {seed}, {s:?}: {n:?}");
            assert!(n.events.iter().all(|&e| e >= 50), "seed {seed}, {s:?}: {n:?}");
        }
    }
    bench.done();
}
