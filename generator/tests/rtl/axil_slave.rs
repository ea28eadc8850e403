//! `rtl/fptgen_axil_slave.v`, the AXI wrapper's AXI4-Lite slave (one
//! transaction at a time behind a register port), in Verilator against a
//! model written here from the module's header (and docs/hardware.md, "AXI
//! wrapper"), not from the RTL: the states IDLE, WRITE, READ, READ_MEM, B
//! and R; a write taken when its address and data are both valid, a read
//! when its address is, in turn when both wait; a write's SLVERR for a
//! partial strobe or the register side's refusal; a read answered at once
//! (SLVERR and 0 when refused) or a cycle later from the late data.
//!
//! Address widths 3, 8, 13 and 32 in one build. Seeded random stimulus in
//! phases (everything busy, a write and a read always waiting together,
//! responses held back, quiet) on every input (including protocol
//! violations: a valid dropped before its ready), random refusals and
//! waits from the register side, partial strobes, rare resets; every
//! output of every instance compared in every cycle
//! (`common::Built::check`). The test also counts that every kind of answer happened (writes OKAY and
//! SLVERR for either reason, reads OKAY, refused and late, a read taken
//! first because it was its turn), so it cannot pass vacuously. Fails
//! (never skips) without Verilator.


use crate::common::{input, mask_u128 as mask, output, require_tool, scratch, Inst, Model, Rng, Top};

const ADDR_WS: [u32; 4] = [3, 8, 13, 32];
const CYCLES: usize = 6000;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum S {
    Idle,
    Write,
    Read,
    ReadMem,
    B,
    R,
}

/// The inputs, by name (the order of the ports below).
struct In {
    rst: bool,
    awaddr: u128,
    awvalid: bool,
    wdata: u128,
    wstrb: u128,
    wvalid: bool,
    bready: bool,
    araddr: u128,
    arvalid: bool,
    rready: bool,
    werr: bool,
    rwait: bool,
    rerr: bool,
    rdata: u128,
    rdata_late: u128,
}

fn unpack(x: &[u128]) -> In {
    In {
        rst: x[0] == 1,
        awaddr: x[1],
        awvalid: x[3] == 1,
        wdata: x[4],
        wstrb: x[5],
        wvalid: x[6] == 1,
        bready: x[7] == 1,
        araddr: x[8],
        arvalid: x[10] == 1,
        rready: x[11] == 1,
        werr: x[12] == 1,
        rwait: x[13] == 1,
        rerr: x[14] == 1,
        rdata: x[15],
        rdata_late: x[16],
    }
}

/// What the run exercised.
#[derive(Debug, Default)]
struct Seen {
    writes_ok: usize,
    writes_partial: usize,
    writes_refused: usize,
    reads_ok: usize,
    reads_refused: usize,
    reads_late: usize,
    read_turns: usize,
}

/// The header's model, from reset.
struct Slave {
    s: S,
    addr: u128,
    wdata: u128,
    wstrb: u128,
    rdata: u128,
    bresp: bool,
    rresp: bool,
    read_turn: bool,
    seen: Seen,
}

impl Slave {
    fn new() -> Slave {
        Slave { s: S::Idle, addr: 0, wdata: 0, wstrb: 0, rdata: 0, bresp: false, rresp: false, read_turn: false, seen: Seen::default() }
    }

    /// (take_write, take_read)
    fn takes(&self, i: &In) -> (bool, bool) {
        let w = self.s == S::Idle && i.awvalid && i.wvalid && !(i.arvalid && self.read_turn);
        (w, self.s == S::Idle && !w && i.arvalid)
    }
}

// outputs: awready, wready, bresp, bvalid, arready, rdata, rresp, rvalid,
// reg_addr, reg_wdata, reg_write, reg_wfull, reg_read
impl Model for Slave {
    fn outputs(&self, x: &[u128]) -> Vec<u128> {
        let i = unpack(x);
        let (w, r) = self.takes(&i);
        let b = u128::from;
        vec![
            b(w),
            b(w),
            b(self.bresp) << 1,
            b(self.s == S::B),
            b(r),
            self.rdata,
            b(self.rresp) << 1,
            b(self.s == S::R),
            self.addr,
            self.wdata,
            b(self.s == S::Write),
            b(self.wstrb == 0xf),
            b(self.s == S::Read),
        ]
    }

    fn edge(&mut self, x: &[u128]) {
        let i = unpack(x);
        if i.rst {
            *self = Slave { seen: std::mem::take(&mut self.seen), ..Slave::new() };
            return;
        }
        let (w, r) = self.takes(&i);
        match self.s {
            S::Idle if w => {
                (self.read_turn, self.addr, self.wdata, self.wstrb, self.s) = (true, i.awaddr, i.wdata, i.wstrb, S::Write);
            }
            S::Idle if r => {
                if i.awvalid && i.wvalid {
                    self.seen.read_turns += 1;
                }
                (self.read_turn, self.addr, self.s) = (false, i.araddr, S::Read);
            }
            S::Idle => {}
            S::Write => {
                let full = self.wstrb == 0xf;
                self.bresp = !full || i.werr;
                match (full, i.werr) {
                    (false, _) => self.seen.writes_partial += 1,
                    (true, true) => self.seen.writes_refused += 1,
                    (true, false) => self.seen.writes_ok += 1,
                }
                self.s = S::B;
            }
            S::Read if i.rwait => {
                (self.rresp, self.s) = (false, S::ReadMem);
                self.seen.reads_late += 1;
            }
            S::Read => {
                self.rresp = i.rerr;
                self.rdata = if i.rerr { 0 } else { i.rdata };
                if i.rerr {
                    self.seen.reads_refused += 1;
                } else {
                    self.seen.reads_ok += 1;
                }
                self.s = S::R;
            }
            S::ReadMem => (self.rdata, self.s) = (i.rdata_late, S::R),
            S::B if i.bready => self.s = S::Idle,
            S::R if i.rready => self.s = S::Idle,
            S::B | S::R => {}
        }
    }
}

/// Percent of cycles with (awvalid and wvalid, arvalid, bready and rready)
/// by phase of 500 cycles: busy, writes and reads always together,
/// responses held back, quiet.
const PHASES: [(u64, u64, u64); 4] = [(70, 70, 70), (100, 100, 100), (60, 60, 10), (10, 10, 60)];

fn stimulus(rng: &mut Rng) -> Vec<Vec<Vec<u128>>> {
    (0..CYCLES)
        .map(|t| {
            let (wv, rv, ready) = PHASES[(t / 500) % PHASES.len()];
            ADDR_WS
                .iter()
                .map(|&aw| {
                    let rst = t == 0 || rng.chance(1) && rng.chance(20);
                    let wstrb = if rng.chance(80) { 0xf } else { rng.next() & 0xf };
                    let mut c = |p| u128::from(rng.chance(p));
                    let (awvalid, wvalid, bready, arvalid, rready) = (c(wv), c(wv), c(ready), c(rv), c(ready));
                    let (werr, rwait, rerr) = (c(25), c(30), c(25));
                    vec![
                        u128::from(rst),
                        rng.u128() & mask(aw),
                        u128::from(rng.next() & 7),
                        awvalid,
                        u128::from(rng.next() as u32),
                        u128::from(wstrb),
                        wvalid,
                        bready,
                        rng.u128() & mask(aw),
                        u128::from(rng.next() & 7),
                        arvalid,
                        rready,
                        werr,
                        rwait,
                        rerr,
                        u128::from(rng.next() as u32),
                        u128::from(rng.next() as u32),
                    ]
                })
                .collect()
        })
        .collect()
}

#[test]
fn axil_slave_matches_its_header_on_every_cycle() {
    require_tool("verilator", "--version");
    let insts: Vec<Inst> = ADDR_WS
        .iter()
        .map(|&aw| Inst {
            label: format!("ADDR_W {aw}"),
            params: format!(".ADDR_W({aw})"),
            ports: vec![
                input("rst", 1),
                input("s_axil_awaddr", aw),
                input("s_axil_awprot", 3),
                input("s_axil_awvalid", 1),
                output("s_axil_awready", 1),
                input("s_axil_wdata", 32),
                input("s_axil_wstrb", 4),
                input("s_axil_wvalid", 1),
                output("s_axil_wready", 1),
                output("s_axil_bresp", 2),
                output("s_axil_bvalid", 1),
                input("s_axil_bready", 1),
                input("s_axil_araddr", aw),
                input("s_axil_arprot", 3),
                input("s_axil_arvalid", 1),
                output("s_axil_arready", 1),
                output("s_axil_rdata", 32),
                output("s_axil_rresp", 2),
                output("s_axil_rvalid", 1),
                input("s_axil_rready", 1),
                output("reg_addr", aw),
                output("reg_wdata", 32),
                output("reg_write", 1),
                output("reg_wfull", 1),
                input("reg_werr", 1),
                output("reg_read", 1),
                input("reg_rwait", 1),
                input("reg_rerr", 1),
                input("reg_rdata", 32),
                input("reg_rdata_late", 32),
            ],
            wiring: None,
        })
        .collect();
    let top = Top::of_instances("fptgen_axil_slave", insts);
    let bench = top.build("slave_top", true, &scratch("rtl_axil_slave"), &["fptgen_axil_slave.v"]);
    for seed in 1..=3u64 {
        let mut rng = Rng(0x6178_696c_0000_0000 + seed);
        let stim = stimulus(&mut rng);
        let mut models: Vec<Slave> = ADDR_WS.iter().map(|_| Slave::new()).collect();
        bench.check(&format!("seed {seed}"), &stim, &mut models);
        for (m, aw) in models.iter().zip(ADDR_WS) {
            let s = &m.seen;
            let least = [s.writes_ok, s.writes_partial, s.writes_refused, s.reads_ok, s.reads_refused, s.reads_late, s.read_turns];
            assert!(least.iter().all(|&n| n >= 20), "seed {seed}, ADDR_W {aw}: too few of some answer: {s:?}");
        }
    }
    bench.done();
}
