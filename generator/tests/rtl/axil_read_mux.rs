//! `rtl/fptgen_axil_read_mux.v`, the AXI wrapper's register read
//! multiplexer, in Verilator against a model written here from the
//! module's header, not from the RTL: for a word address, the value of the
//! register at it (register k at `ADDRS[k*AW +: AW]`, its value at
//! `values[k*32 +: 32]`), 0 for an address no register has.
//!
//! Parameter sets in one build: the register maps of tiny's wrapper
//! without and with a trainer (as the generator lays them out), one
//! register, registers in no order with gaps, and 32-bit addresses at the
//! extremes. Every address of the spaces of up to 11 bits (and for the
//! 32-bit one every register's address, its neighbours and random ones),
//! each with fresh random values in every register; every output of every
//! instance compared for every address (`common::Built::check`; the
//! module is combinational). The illegal parameter sets (a duplicate
//! address among them) are in `param_checks.rs`. Fails (never skips)
//! without Verilator.


use crate::common::{input, mask_u128 as mask, output, require_tool, scratch, Inst, Model, Rng, Top};

/// A register map: address bits, and the word address of each register
/// (register k the k-th).
struct Map {
    aw: u32,
    addrs: Vec<u128>,
}

fn maps() -> Vec<Map> {
    vec![
        // tiny's wrapper without a trainer: ID to TRAINER at words 0 to 8
        Map { aw: 6, addrs: (0..9).collect() },
        // with one: then STATUS to LOADED at words 17 to 26 (CONTROL, at
        // 16, is write-only)
        Map { aw: 11, addrs: (0..9).chain(17..27).collect() },
        Map { aw: 1, addrs: vec![1] },
        Map { aw: 4, addrs: vec![15, 3, 9, 0, 7] },
        Map { aw: 32, addrs: vec![0xffff_ffff, 0x8000_0000, 0, 12345] },
    ]
}

const CYCLES: usize = 4096;

// inputs: addr, v0 .. v(N-1); outputs: rdata
impl Model for Map {
    fn outputs(&self, x: &[u128]) -> Vec<u128> {
        vec![self.addrs.iter().position(|&a| a == x[0]).map_or(0, |k| x[1 + k])]
    }

    fn edge(&mut self, _: &[u128]) {}
}

fn address(m: &Map, t: usize, rng: &mut Rng) -> u128 {
    if m.aw <= 11 {
        return t as u128 & mask(m.aw);
    }
    let near = m.addrs[rng.next() as usize % m.addrs.len()];
    match rng.next() % 4 {
        0 | 1 => near,
        2 => near.wrapping_add(if rng.coin() { 1 } else { u128::MAX }) & mask(m.aw),
        _ => rng.u128() & mask(m.aw),
    }
}

#[test]
fn axil_read_mux_matches_its_header_for_every_address() {
    let maps = maps();
    require_tool("verilator", "--version");
    let insts: Vec<Inst> = maps
        .iter()
        .enumerate()
        .map(|(i, m)| {
            let n = m.addrs.len();
            // ADDRS and values: register k at [k*AW +: AW] and [k*32 +: 32],
            // so the concatenations list the last register first.
            let addrs: Vec<String> = m.addrs.iter().rev().map(|a| format!("{}'d{a}", m.aw)).collect();
            let values: Vec<String> = (0..n).rev().map(|k| format!("u{i}_v{k}")).collect();
            let mut ports = vec![input("addr", m.aw)];
            ports.extend((0..n).map(|k| input(format!("v{k}"), 32)));
            ports.push(output("rdata", 32));
            Inst {
                label: format!("N {n} AW {} ADDRS {:?}", m.aw, m.addrs),
                params: format!(".N({n}), .AW({}), .ADDRS({{{}}})", m.aw, addrs.join(", ")),
                ports,
                wiring: Some(format!(".addr(u{i}_addr), .values({{{}}}), .rdata(u{i}_rdata)", values.join(", "))),
            }
        })
        .collect();
    let top = Top::of_instances("fptgen_axil_read_mux", insts);
    let bench = top.build("mux_top", false, &scratch("rtl_axil_read_mux"), &["fptgen_axil_read_mux.v"]);
    let mut rng = Rng(0x7265_6164_0000_0001);
    let stim: Vec<Vec<Vec<u128>>> = (0..CYCLES)
        .map(|t| {
            maps.iter()
                .map(|m| {
                    let mut x = vec![address(m, t, &mut rng)];
                    x.extend((0..m.addrs.len()).map(|_| u128::from(rng.next() as u32)));
                    x
                })
                .collect()
        })
        .collect();
    let mut models = maps;
    bench.check("every address", &stim, &mut models);
    // Every register was read, and an address with none.
    for (i, m) in models.iter().enumerate() {
        for a in &m.addrs {
            assert!(stim.iter().any(|c| c[i][0] == *a), "AW {}: register at {a} never read", m.aw);
        }
        assert!(stim.iter().any(|c| !m.addrs.contains(&c[i][0])), "AW {}: no unmapped address read", m.aw);
    }
    bench.done();
}
