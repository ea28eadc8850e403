//! A static timing *estimate* on a yosys JSON netlist (the flattened
//! design after `synth_xilinx -family xcu`): the worst register-to-register
//! path, its LUT levels, carry and MUXF cells, and its delay under a simple
//! delay model of UltraScale -3 logic. It is an estimate, not Vivado's
//! timing: there is no placement, every net gets one average delay, and a
//! cell's delay does not depend on which input pin a signal uses. The model
//! and the source of each number are in docs/hardware.md ("Timing
//! estimate") and beside the constants below.
//!
//! The netlist is a graph whose nodes are nets (yosys's bit numbers) and
//! whose edges are the combinational arcs of cells. A path starts at a
//! sequential output (a flip-flop's Q, a block RAM's, a registered DSP's or
//! an SRL's outputs, a LUTRAM's read outputs) or a primary input, runs
//! through combinational cells (LUTs, INV, CARRY4/CARRY8, MUXF7/8/9, a DSP
//! without registers, a LUTRAM's read address to its outputs, and any other
//! library cell as if it were a LUT), and ends at a sequential input (a
//! flip-flop's D, CE, R/S/CLR/PRE, a block RAM's, DSP's, SRL's or LUTRAM's
//! write inputs) or a primary output. The arrival times are propagated in
//! topological order; a combinational loop is an error.

use std::collections::{BTreeMap, HashMap};

use serde::{Deserialize, Serialize};
use serde_json::Value;

// --- The delay model (ns). UltraScale -3 unless said otherwise. ---------
//
// AMD's UltraScale data sheets (DS892 for Kintex UltraScale) no longer
// list the CLB's switching characteristics (T_ILO, T_CKO, carry delays)
// as the 7-series data sheets did; Vivado's speed files hold them. The
// CLB numbers below are therefore read from published Vivado timing
// reports of UltraScale+ parts (16 nm, -1 and -2: about the speed of a
// 20 nm UltraScale -3), and the rest are stated as assumptions.

/// Clock-to-out of a CLB flip-flop (FDRE/FDSE/FDCE/FDPE C -> Q): 0.096 ns,
/// `Prop_HFF_SLICEL_C_Q` in a routed Vivado 2021.2 report for xczu3eg -1
/// (gussmith23/lakeroad-evaluation,
/// `runs/2022-07-06-1704-full/vivado-eval/xilinx-ultrascale-plus-vivado-eval/vivado-synth-opt-place-route/if.futil-ultrascale-timing-route.v`;
/// 0.093 ns `Prop_FDRE_C_Q` in the same runs' synthesis reports).
pub const T_CKO_FF: f64 = 0.096;

/// Setup of a flip-flop's D input: 0.03 ns. The same report gives
/// `Setup_DFF_SLICEL_C_D` as -0.027 ns (it adds to the required time);
/// the model keeps its size as a small positive setup.
pub const T_SETUP_FF_D: f64 = 0.03;

/// Setup of a flip-flop's CE, R, S, CLR or PRE input: 0.15 ns.
/// ASSUMPTION (no UltraScale figure found; 7-series CE setup is 0.109 ns
/// and SR setup 0.404 ns on Artix-7 -1, yosys's `cells_sim.v` from
/// prjxray-db).
pub const T_SETUP_FF_CTRL: f64 = 0.15;

/// A LUT (LUT1..LUT6, INV), any input to O: 0.15 ns. The report above
/// shows 0.039 to 0.202 ns depending on the pin (`Prop_B5LUT_SLICEL_I1_O`
/// 0.202, `Prop_C6LUT_SLICEL_I0_O` 0.174, `Prop_D6LUT_SLICEL_I0_O` 0.039);
/// another (AutoBridge's U250 example, `Prop_E6LUT_SLICEM_I0_O`) 0.124.
/// 0.15 ns is a representative value: an ASSUMPTION within that range.
pub const T_LUT: f64 = 0.15;

/// Carry (CARRY8, and CARRY4, which Vivado places in half a CARRY8) from
/// S, DI, CYINIT or AX to an output: 0.196 ns, `Prop_CARRY8_SLICEL_S[2]_CO[7]`
/// in the report above.
pub const T_CARRY_S: f64 = 0.196;

/// Carry from CI to an output: 0.030 ns, `Prop_CARRY8_SLICEL_CI_CO[7]`
/// (0.023 to 0.030 ns) in the report above. The sum outputs O take the
/// same in the model (an ASSUMPTION: the XOR after the chain is small).
pub const T_CARRY_CI: f64 = 0.030;

/// A MUXF7/MUXF8/MUXF9, any input to O: 0.10 ns. ASSUMPTION: no UltraScale
/// figure found; on Artix-7 -1 (yosys `cells_sim.v`, prjxray-db) MUXF7 is
/// 0.217 to 0.296 ns and MUXF8 0.094 to 0.273 ns, on a slower process.
pub const T_MUXF: f64 = 0.10;

/// A routed net between two cells: 0.25 ns. ASSUMPTION. Routed nets in the
/// report above are 0.058 to 0.289 ns between slices, and AutoBridge's
/// estimated nets 0.478 to 0.572 ns for longer distances; a typical
/// UltraScale net is a few hundred picoseconds.
pub const T_NET: f64 = 0.25;

/// A dedicated connection inside or between adjacent slices: carry
/// cascade CO -> CI, and a LUT or MUXF into a MUXF's data input: 0.028 ns,
/// the carry-cascade net in the report above.
pub const T_NET_DEDICATED: f64 = 0.028;

/// Block RAM clock-to-out without the output register
/// (RAMB18E2/RAMB36E2 CLK -> DOUT): 0.830 ns,
/// `Prop_RAMB36E2_RAMB36_CLKARDCLK_DOUTBDOUT` in AutoBridge's U250
/// (UltraScale+ -2) report example (Licheng Guo's AutoBridge,
/// `autobridge` timing-report parser docstring). Versal's DS958 gives
/// 0.797 to 0.967 ns for the same arc.
pub const T_CKO_BRAM: f64 = 0.830;

/// Block RAM clock-to-out with the output register (DOA_REG/DOB_REG = 1):
/// 0.30 ns. ASSUMPTION, after DS958's ratio (T_RCKO_DO_REG 0.262 ns
/// against T_RCKO_DO 0.901 ns).
pub const T_CKO_BRAM_REG: f64 = 0.30;

/// Setup of a block RAM input (address, data, enables): 0.45 ns.
/// ASSUMPTION (no UltraScale figure found).
pub const T_SETUP_BRAM: f64 = 0.45;

/// A DSP48E2 without registers (yosys maps a multiplier so), any input to
/// any output: 1.80 ns. Derived: DS925 (UltraScale+ -3) gives
/// FMAX_NOPIPELINEREG = 483 MHz, 2.07 ns from the input registers through
/// the multiplier and ALU to P; less about 0.27 ns of the registers'
/// clock-to-out and setup. An ESTIMATE, not a data-sheet value.
pub const T_DSP_COMB: f64 = 1.80;

/// Clock-to-out of a DSP48E2 with any register: 0.30 ns. ASSUMPTION. The
/// model treats a DSP with any register as a sequential boundary on both
/// sides, which is optimistic when only some stages are registered.
pub const T_CKO_DSP: f64 = 0.30;

/// Setup of a registered DSP48E2's inputs: 0.30 ns. ASSUMPTION.
pub const T_SETUP_DSP: f64 = 0.30;

/// Clock-to-out of an SRL (SRL16E, SRLC32E) or of a LUTRAM's stored
/// contents: 0.60 ns. ASSUMPTION (a LUTRAM or SRL read is slower than a
/// flip-flop's clock-to-out).
pub const T_CKO_LUTMEM: f64 = 0.60;

/// Setup of an SRL's or LUTRAM's write inputs (D, CE, WE, addresses):
/// 0.30 ns. ASSUMPTION.
pub const T_SETUP_LUTMEM: f64 = 0.30;

/// The worst path and its estimate.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Estimate {
    /// LUTs (and INVs) on the worst path.
    pub lut_levels: u64,
    /// CARRY4/CARRY8 cells on the worst path (a carry chain counts each
    /// cell it runs through).
    pub carry_cells: u64,
    /// MUXF7/8/9 cells on the worst path.
    pub muxf_cells: u64,
    /// Other combinational cells on it (DSPs without registers, LUTRAM
    /// reads, unknown cells).
    pub other_cells: u64,
    /// Estimated delay: clock-to-out of the start, the cells and nets,
    /// and the setup of the end, in ns.
    pub delay_ns: f64,
    /// 1000 / delay_ns.
    pub fmax_mhz: f64,
    /// Where the path starts: the cell type and the net it drives (or the
    /// primary input).
    pub start: String,
    /// Where it ends: the cell type and its output net or name (or the
    /// primary output).
    pub end: String,
}

/// Why the estimate could not be made.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum StaError {
    /// The JSON is not a yosys netlist.
    #[error("not a yosys JSON netlist: {0}")]
    Format(String),
    /// A combinational loop.
    #[error("combinational loop through cell {cell} ({kind})")]
    Loop {
        /// A cell on the loop.
        cell: String,
        /// Its type.
        kind: String,
    },
    /// No path from a start point to an end point.
    #[error("no register-to-register path in module {0}")]
    NoPath(String),
}

/// What an arc's cell counts as on the path.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Kind {
    Lut,
    Carry,
    Muxf,
    Other,
}

/// A combinational arc from an input net to an output net of a cell.
struct Arc {
    from: usize,
    to: usize,
    /// The net's delay into the cell's input pin.
    hop: f64,
    /// The cell's delay.
    delay: f64,
    cell: usize,
    kind: Kind,
}

/// The parts of yosys's JSON netlist the estimate reads (typed, so that
/// the cells' attributes and other large fields are skipped, not kept).
#[derive(Deserialize)]
struct Netlist {
    modules: BTreeMap<String, ModuleJ>,
}

#[derive(Deserialize)]
struct ModuleJ {
    #[serde(default)]
    attributes: BTreeMap<String, Value>,
    #[serde(default)]
    ports: BTreeMap<String, PortJ>,
    #[serde(default)]
    cells: BTreeMap<String, CellJ>,
    #[serde(default)]
    netnames: BTreeMap<String, NetJ>,
}

#[derive(Deserialize)]
struct PortJ {
    direction: String,
    #[serde(default)]
    bits: Vec<Value>,
}

#[derive(Deserialize)]
struct CellJ {
    #[serde(rename = "type")]
    ty: String,
    #[serde(default)]
    parameters: BTreeMap<String, Value>,
    #[serde(default)]
    port_directions: BTreeMap<String, String>,
    #[serde(default)]
    connections: BTreeMap<String, Vec<Value>>,
}

#[derive(Deserialize)]
struct NetJ {
    #[serde(default)]
    hide_name: u64,
    #[serde(default)]
    bits: Vec<Value>,
}

/// The role of a cell in the model.
enum Role {
    /// Ignored (clock buffers, constants).
    Skip,
    /// Outputs are start points with this clock-to-out; inputs (but the
    /// clocks) are end points with the setup `setup(pin)`.
    Seq { cko: f64, setup: fn(&str) -> f64 },
    /// Every input to every output, with `delay(pin)` and the net delay
    /// `hop(pin)`.
    Comb { kind: Kind, delay: fn(&str) -> f64, hop: fn(&str) -> f64 },
    /// A LUTRAM: write inputs are end points, read addresses reach the
    /// outputs combinationally, and the outputs also start (the stored
    /// contents change at the clock).
    LutRam,
}

fn is_clock(pin: &str) -> bool {
    matches!(pin, "C" | "CLK" | "WCLK" | "CLKARDCLK" | "CLKBWRCLK" | "RDCLK" | "WRCLK")
}

fn param_on(cell: &CellJ, name: &str) -> bool {
    match cell.parameters.get(name) {
        Some(Value::String(s)) => s.chars().any(|c| c == '1'),
        Some(v) => v.as_u64().is_some_and(|v| v != 0),
        None => false,
    }
}

fn role(ty: &str, cell: &CellJ, lib_cell: bool) -> Role {
    let net = |_: &str| T_NET;
    match ty {
        t if t.starts_with("LUT") || t == "INV" => Role::Comb { kind: Kind::Lut, delay: |_| T_LUT, hop: net },
        "CARRY4" | "CARRY8" => Role::Comb {
            kind: Kind::Carry,
            delay: |p| if p == "CI" { T_CARRY_CI } else { T_CARRY_S },
            hop: |p| if p == "CI" { T_NET_DEDICATED } else { T_NET },
        },
        "MUXF7" | "MUXF8" | "MUXF9" => Role::Comb {
            kind: Kind::Muxf,
            delay: |_| T_MUXF,
            hop: |p| if p == "S" { T_NET } else { T_NET_DEDICATED },
        },
        t if t.starts_with("FD") => Role::Seq {
            cko: T_CKO_FF,
            setup: |p| if p == "D" { T_SETUP_FF_D } else { T_SETUP_FF_CTRL },
        },
        t if t.starts_with("RAMB") || t.starts_with("FIFO") => {
            let reg = param_on(cell, "DOA_REG") || param_on(cell, "DOB_REG");
            Role::Seq { cko: if reg { T_CKO_BRAM_REG } else { T_CKO_BRAM }, setup: |_| T_SETUP_BRAM }
        }
        t if t.starts_with("DSP48") => {
            let regs = cell.parameters.keys().any(|k| k.ends_with("REG") && param_on(cell, k));
            if regs {
                Role::Seq { cko: T_CKO_DSP, setup: |_| T_SETUP_DSP }
            } else {
                Role::Comb { kind: Kind::Other, delay: |_| T_DSP_COMB, hop: net }
            }
        }
        t if t.starts_with("SRL") => Role::Seq { cko: T_CKO_LUTMEM, setup: |_| T_SETUP_LUTMEM },
        t if t.starts_with("RAM") => Role::LutRam,
        t if t.starts_with("BUFG") || t == "GND" || t == "VCC" => Role::Skip,
        // Any other library primitive: as a LUT (conservative: it is
        // counted and delayed). A user black box (the inference pipeline in
        // `synth --trainer-only`) is a registered interface.
        _ if lib_cell => Role::Comb { kind: Kind::Other, delay: |_| T_LUT, hop: net },
        _ => Role::Seq { cko: T_CKO_FF, setup: |_| T_SETUP_FF_D },
    }
}

/// A LUTRAM's read-address pins (to its outputs) and write pins.
fn lutram_read_addr(pin: &str) -> bool {
    (pin.starts_with("ADDR") && pin != "ADDRH")
        || pin.starts_with("DPRA")
        || (pin.starts_with('A') && pin[1..].parse::<u32>().is_ok())
}

/// Net names for reports: the first visible name of each bit.
fn net_names(module: &ModuleJ) -> HashMap<u64, String> {
    let mut names: HashMap<u64, (bool, String)> = HashMap::new();
    for (name, n) in &module.netnames {
        let hidden = n.hide_name != 0;
        for (i, b) in n.bits.iter().enumerate() {
            let Some(b) = b.as_u64() else { continue };
            let label = if n.bits.len() > 1 { format!("{name}[{i}]") } else { name.clone() };
            let e = names.entry(b).or_insert((hidden, label.clone()));
            if e.0 && !hidden {
                *e = (hidden, label);
            }
        }
    }
    names.into_iter().map(|(b, (_, n))| (b, n)).collect()
}

/// Estimates the worst register-to-register path of module `top` (or of
/// the module marked `top`) in a yosys JSON netlist.
pub fn analyze(json: &str, top: Option<&str>) -> Result<Estimate, StaError> {
    let v: Netlist = serde_json::from_str(json).map_err(|e| StaError::Format(e.to_string()))?;
    let modules = &v.modules;
    let (top_name, module) = match top {
        Some(t) => modules.get_key_value(t).ok_or_else(|| StaError::Format(format!("no module {t}")))?,
        None => modules
            .iter()
            .find(|(_, m)| match m.attributes.get("top") {
                Some(Value::String(s)) => s.contains('1'),
                Some(v) => v.as_u64() == Some(1),
                None => false,
            })
            .ok_or_else(|| StaError::Format("no top module".into()))?,
    };
    let names = net_names(module);

    // Dense net indices.
    let mut index: HashMap<u64, usize> = HashMap::new();
    let mut bits: Vec<u64> = Vec::new();
    let mut idx = |b: u64, index: &mut HashMap<u64, usize>| -> usize {
        *index.entry(b).or_insert_with(|| {
            bits.push(b);
            bits.len() - 1
        })
    };

    let mut arcs: Vec<Arc> = Vec::new();
    // Start points: net -> (clock-to-out, label).
    let mut starts: Vec<(usize, f64, String)> = Vec::new();
    // End points: (net, hop, setup, label).
    let mut ends: Vec<(usize, f64, f64, String)> = Vec::new();
    let mut cell_names: Vec<(String, String)> = Vec::new();

    for (pname, p) in &module.ports {
        for (i, b) in p.bits.iter().enumerate() {
            let Some(b) = b.as_u64() else { continue };
            let label = if p.bits.len() > 1 { format!("{pname}[{i}]") } else { pname.clone() };
            let n = idx(b, &mut index);
            match p.direction.as_str() {
                "input" if !is_clock(pname) && pname != "clk" => starts.push((n, 0.0, format!("input port {label}"))),
                "output" => ends.push((n, 0.0, 0.0, format!("output port {label}"))),
                _ => {}
            }
        }
    }

    for (cname, cell) in &module.cells {
        let ty = cell.ty.trim_start_matches('\\').to_string();
        let lib_cell = modules
            .get(&cell.ty)
            .map(|m| m.attributes.get("src").and_then(|s| s.as_str()).is_some_and(|s| s.contains("/yosys/")))
            .unwrap_or(true);
        let r = role(&ty, cell, lib_cell);
        let pins = |want: &str| -> Vec<(String, u64)> {
            let mut out = Vec::new();
            for (pin, bs) in &cell.connections {
                if cell.port_directions.get(pin).map(String::as_str) != Some(want) {
                    continue;
                }
                for b in bs {
                    if let Some(b) = b.as_u64() {
                        out.push((pin.clone(), b));
                    }
                }
            }
            out
        };
        let (ins, outs) = (pins("input"), pins("output"));
        let ci = cell_names.len();
        // The cell's label: its type and its first visible output net.
        let shown = outs
            .iter()
            .find_map(|(_, b)| names.get(b).filter(|n| !n.starts_with('$')).cloned())
            .unwrap_or_else(|| cname.trim_start_matches('\\').to_string());
        cell_names.push((format!("{ty} {shown}"), ty.clone()));
        match r {
            Role::Skip => {}
            Role::Seq { cko, setup } => {
                for (_, b) in &outs {
                    starts.push((idx(*b, &mut index), cko, cell_names[ci].0.clone()));
                }
                for (pin, b) in &ins {
                    if !is_clock(pin) {
                        ends.push((idx(*b, &mut index), T_NET, setup(pin), cell_names[ci].0.clone()));
                    }
                }
            }
            Role::Comb { kind, delay, hop } => {
                for (pin, b) in &ins {
                    let from = idx(*b, &mut index);
                    for (_, o) in &outs {
                        let to = idx(*o, &mut index);
                        arcs.push(Arc { from, to, hop: hop(pin), delay: delay(pin), cell: ci, kind });
                    }
                }
            }
            Role::LutRam => {
                for (_, b) in &outs {
                    starts.push((idx(*b, &mut index), T_CKO_LUTMEM, cell_names[ci].0.clone()));
                }
                for (pin, b) in &ins {
                    if is_clock(pin) {
                        continue;
                    }
                    let from = idx(*b, &mut index);
                    if lutram_read_addr(pin) {
                        for (_, o) in &outs {
                            let to = idx(*o, &mut index);
                            arcs.push(Arc { from, to, hop: T_NET, delay: T_LUT, cell: ci, kind: Kind::Other });
                        }
                    }
                    ends.push((from, T_NET, T_SETUP_LUTMEM, cell_names[ci].0.clone()));
                }
            }
        }
    }

    // Topological order over nets (Kahn); what is left is on a loop.
    let n = bits.len();
    let mut indeg = vec![0usize; n];
    let mut out_arcs: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (i, a) in arcs.iter().enumerate() {
        indeg[a.to] += 1;
        out_arcs[a.from].push(i);
    }
    // Best arrival per net: (time, arc that set it, start label).
    let mut arrival: Vec<Option<(f64, Option<usize>, usize)>> = vec![None; n];
    for (si, (net, cko, _)) in starts.iter().enumerate() {
        if arrival[*net].is_none_or(|(t, _, _)| *cko > t) {
            arrival[*net] = Some((*cko, None, si));
        }
    }
    let mut queue: Vec<usize> = (0..n).filter(|&i| indeg[i] == 0).collect();
    let mut done = 0usize;
    while let Some(net) = queue.pop() {
        done += 1;
        for &ai in &out_arcs[net] {
            let a = &arcs[ai];
            if let Some((t, _, s)) = arrival[net] {
                let t2 = t + a.hop + a.delay;
                if arrival[a.to].is_none_or(|(u, _, _)| t2 > u) {
                    arrival[a.to] = Some((t2, Some(ai), s));
                }
            }
            indeg[a.to] -= 1;
            if indeg[a.to] == 0 {
                queue.push(a.to);
            }
        }
    }
    if done < n {
        let a = arcs.iter().find(|a| indeg[a.to] > 0 && indeg[a.from] > 0).or_else(|| arcs.iter().find(|a| indeg[a.to] > 0));
        let (cell, kind) = a.map(|a| cell_names[a.cell].clone()).unwrap_or_default();
        return Err(StaError::Loop { cell, kind });
    }

    // The worst end point.
    let mut worst: Option<(f64, usize, usize)> = None;
    for (ei, (net, hop, setup, _)) in ends.iter().enumerate() {
        if let Some((t, _, _)) = arrival[*net] {
            let total = t + hop + setup;
            if worst.is_none_or(|(w, _, _)| total > w) {
                worst = Some((total, ei, *net));
            }
        }
    }
    let Some((delay, ei, net)) = worst else { return Err(StaError::NoPath(top_name.clone())) };
    let mut counts: BTreeMap<&str, u64> = BTreeMap::new();
    let mut cur = net;
    let start;
    loop {
        let (_, pred, s) = arrival[cur].expect("on the path");
        match pred {
            Some(ai) => {
                let a = &arcs[ai];
                let k = match a.kind {
                    Kind::Lut => "lut",
                    Kind::Carry => "carry",
                    Kind::Muxf => "muxf",
                    Kind::Other => "other",
                };
                *counts.entry(k).or_default() += 1;
                cur = a.from;
            }
            None => {
                start = starts[s].2.clone();
                break;
            }
        }
    }
    let c = |k: &str| counts.get(k).copied().unwrap_or(0);
    Ok(Estimate {
        lut_levels: c("lut"),
        carry_cells: c("carry"),
        muxf_cells: c("muxf"),
        other_cells: c("other"),
        delay_ns: delay,
        fmax_mhz: 1000.0 / delay,
        start,
        end: ends[ei].3.clone(),
    })
}

#[cfg(test)]
mod tests {
    use serde_json::{json, Value};

    use super::*;

    /// A yosys JSON netlist of module `top`: cells as (name, type, pins as
    /// (pin, direction, bits)), and ports as (name, direction, bits).
    #[allow(clippy::type_complexity)]
    fn netlist(cells: &[(&str, &str, Vec<(&str, &str, Vec<u64>)>)], ports: &[(&str, &str, Vec<u64>)]) -> String {
        let mut cs = serde_json::Map::new();
        for (name, ty, pins) in cells {
            let dirs: serde_json::Map<String, Value> = pins.iter().map(|(p, d, _)| (p.to_string(), json!(d))).collect();
            let conns: serde_json::Map<String, Value> = pins.iter().map(|(p, _, b)| (p.to_string(), json!(b))).collect();
            cs.insert(name.to_string(), json!({"type": ty, "parameters": {}, "port_directions": dirs, "connections": conns}));
        }
        let ps: serde_json::Map<String, Value> =
            ports.iter().map(|(n, d, b)| (n.to_string(), json!({"direction": d, "bits": b}))).collect();
        json!({"modules": {"top": {"attributes": {"top": "00000000000000000000000000000001"}, "ports": ps, "cells": cs, "netnames": {}}}})
            .to_string()
    }

    fn ff<'a>(name: &'a str, d: u64, q: u64) -> (&'a str, &'a str, Vec<(&'a str, &'a str, Vec<u64>)>) {
        (name, "FDRE", vec![("C", "input", vec![1]), ("CE", "input", vec![]), ("D", "input", vec![d]), ("Q", "output", vec![q])])
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9
    }

    #[test]
    fn ff_lut_lut_ff_is_two_levels_with_the_model_delay() {
        // a.Q = 2 -> LUT2 (2, 3) -> 4 -> LUT1 -> 5 -> b.D; b.Q = 3 -> a.D.
        let n = netlist(
            &[
                ff("a", 3, 2),
                ff("b", 5, 3),
                ("l1", "LUT2", vec![("I0", "input", vec![2]), ("I1", "input", vec![3]), ("O", "output", vec![4])]),
                ("l2", "LUT1", vec![("I0", "input", vec![4]), ("O", "output", vec![5])]),
            ],
            &[("clk", "input", vec![1])],
        );
        let e = analyze(&n, None).unwrap();
        assert_eq!((e.lut_levels, e.carry_cells, e.muxf_cells, e.other_cells), (2, 0, 0, 0), "{e:?}");
        let want = T_CKO_FF + 2.0 * (T_NET + T_LUT) + T_NET + T_SETUP_FF_D;
        assert!(close(e.delay_ns, want), "{} != {want}", e.delay_ns);
        assert!(close(e.fmax_mhz, 1000.0 / want));
        assert!(e.start.starts_with("FDRE") && e.end.starts_with("FDRE b"), "{e:?}");
    }

    #[test]
    fn a_carry_chain_enters_through_s_and_ripples_through_ci() {
        // a.Q = 2 -> LUT1 -> 3 -> c1.S[0]; c1.CO[7] = 4 -> c2.CI; c2.CO[7] = 5 -> c3.CI;
        // c3.O[0] = 6 -> b.D.
        let carry = |name: &'static str, ci: u64, s: u64, co: u64, o: u64| {
            (name, "CARRY8", vec![("CI", "input", vec![ci]), ("S", "input", vec![s]), ("CO", "output", vec![co]), ("O", "output", vec![o])])
        };
        let n = netlist(
            &[
                ff("a", 2, 2),
                ff("b", 6, 7),
                ("l", "LUT1", vec![("I0", "input", vec![2]), ("O", "output", vec![3])]),
                carry("c1", 10, 3, 4, 11),
                carry("c2", 4, 12, 5, 13),
                carry("c3", 5, 14, 15, 6),
            ],
            &[],
        );
        let e = analyze(&n, None).unwrap();
        assert_eq!((e.lut_levels, e.carry_cells), (1, 3), "{e:?}");
        let want = T_CKO_FF + (T_NET + T_LUT) + (T_NET + T_CARRY_S) + 2.0 * (T_NET_DEDICATED + T_CARRY_CI) + T_NET + T_SETUP_FF_D;
        assert!(close(e.delay_ns, want), "{} != {want}", e.delay_ns);
    }

    #[test]
    fn a_block_ram_starts_and_ends_paths() {
        // a.Q = 2 -> LUT1 -> 3 -> ram.ADDR; ram.DOUT = 4 -> LUT1 -> 5 -> b.D.
        let n = netlist(
            &[
                ff("a", 2, 2),
                ff("b", 5, 6),
                ("l1", "LUT1", vec![("I0", "input", vec![2]), ("O", "output", vec![3])]),
                ("ram", "RAMB18E2", vec![
                    ("CLKARDCLK", "input", vec![1]),
                    ("ADDRARDADDR", "input", vec![3]),
                    ("DOUTADOUT", "output", vec![4]),
                ]),
                ("l2", "LUT1", vec![("I0", "input", vec![4]), ("O", "output", vec![5])]),
            ],
            &[],
        );
        let e = analyze(&n, None).unwrap();
        let from_ram = T_CKO_BRAM + T_NET + T_LUT + T_NET + T_SETUP_FF_D;
        let into_ram = T_CKO_FF + T_NET + T_LUT + T_NET + T_SETUP_BRAM;
        assert!(from_ram > into_ram);
        assert!(close(e.delay_ns, from_ram), "{e:?}");
        assert!(e.start.starts_with("RAMB18E2") && e.end.starts_with("FDRE"), "{e:?}");
        assert_eq!(e.lut_levels, 1);
    }

    #[test]
    fn a_dsp_without_registers_is_combinational() {
        let n = netlist(
            &[
                ff("a", 2, 2),
                ff("b", 3, 4),
                ("m", "DSP48E2", vec![("CLK", "input", vec![1]), ("A", "input", vec![2]), ("P", "output", vec![3])]),
            ],
            &[],
        );
        let e = analyze(&n, None).unwrap();
        assert_eq!(e.other_cells, 1);
        assert!(close(e.delay_ns, T_CKO_FF + T_NET + T_DSP_COMB + T_NET + T_SETUP_FF_D), "{e:?}");
    }

    #[test]
    fn a_combinational_loop_is_an_error() {
        // 5 -> LUT2 -> 6 -> LUT1 -> 5, fed by a flip-flop and feeding one.
        let n = netlist(
            &[
                ff("a", 6, 2),
                ("x", "LUT2", vec![("I0", "input", vec![5]), ("I1", "input", vec![2]), ("O", "output", vec![6])]),
                ("y", "LUT1", vec![("I0", "input", vec![6]), ("O", "output", vec![5])]),
            ],
            &[],
        );
        match analyze(&n, None) {
            Err(StaError::Loop { kind, .. }) => assert!(kind.starts_with("LUT"), "{kind}"),
            other => panic!("expected a loop, got {other:?}"),
        }
    }

    #[test]
    fn ports_start_and_end_paths() {
        // in -> LUT1 -> out.
        let n = netlist(
            &[("l", "LUT1", vec![("I0", "input", vec![2]), ("O", "output", vec![3])])],
            &[("in", "input", vec![2]), ("out", "output", vec![3])],
        );
        let e = analyze(&n, None).unwrap();
        assert!(close(e.delay_ns, T_NET + T_LUT), "{e:?}");
        assert_eq!((e.start.as_str(), e.end.as_str()), ("input port in", "output port out"));
    }
}
