//! Calibration data for fptgen's timing estimate (flow/src/sta.rs)
//! against published routed Vivado reports of UltraScale+ designs (issue
//! 37, item 3, part b). The numbers and the method are in
//! docs/results/calibration.md; this program regenerates them.
//!
//! Two steps:
//!
//! * `extract` reads the routed `report_timing` files of
//!   gussmith23/lakeroad-evaluation (a git directory, read with
//!   `git show`, nothing written to it) and writes
//!   docs/results/calibration/lakeroad.json: for each design the report's
//!   worst path (data path delay, its logic/route split, logic levels and
//!   every cell and net on it), the part and speed grade, and the Verilog
//!   source it came from, each with its path and commit.
//! * `table` (the default) re-runs our method on the same Verilog: yosys
//!   `synth_xilinx -family xcu -noiopad`, `flatten`, `write_json`, and
//!   `fptgen_flow::sta::analyze` on the netlist with the top module's
//!   ports removed (Vivado's reports are out of context, where the ports are
//!   unconstrained, so only register-to-register paths are compared). It
//!   prints the table of estimate against routed delay, and fits the
//!   proposed net-delay models on a seeded half of the designs and checks
//!   them on the other half.
//!
//! Run (the first run synthesizes 38 designs, 4 to 10 minutes on one core;
//! the netlists are cached in `--cache`, and later runs take about 20 s):
//!
//!     git clone https://github.com/gussmith23/lakeroad-evaluation /tmp/lre
//!     cargo run --release --example calibrate_sta -- table \
//!         --lakeroad /tmp/lre/.git --cache /tmp/calib-cache
//!
//! The output is deterministic (yosys is, and the split is a fixed-seed
//! shuffle).

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, Context, Result};
use clap::{Parser, Subcommand};
use fptgen_flow::sta;
use serde_json::{json, Value};

/// The lakeroad-evaluation commit every number and source is read from.
const LAKEROAD_COMMIT: &str = "4efb34249397abd14d31954de802cc9905edc685";
const LAKEROAD_REPO: &str = "gussmith23/lakeroad-evaluation";
const FULL_RUN: &str = "runs/2022-07-06-1704-full/vivado-eval/xilinx-ultrascale-plus-vivado-eval/vivado-synth-opt-place-route";
const DOT_RUN: &str = "runs/2022-06-29-initial-dot-product-results";

/// The yosys script, run in the cache directory on `SRC.v` (the design's
/// Verilog without its `initial` blocks, see [`strip_initial_blocks`]).
/// `-family xcu` as fptgen's own synth/synth.ys; yosys 0.23 maps `xcup`
/// to the same cells (the netlists are identical), so the UltraScale+
/// reports are compared with the netlist fptgen would analyze.
const YOSYS_SCRIPT: &str = "read_verilog -sv -defer SRC.v; synth_xilinx -family xcu -top TOP -noiopad; flatten; write_json SRC.json.tmp";

#[derive(Parser)]
#[command(about = "Calibrate fptgen's timing estimate against routed Vivado reports")]
struct Cli {
    #[command(subcommand)]
    cmd: Option<Cmd>,
}

#[derive(Subcommand)]
enum Cmd {
    /// Read the routed reports and write the data file.
    Extract {
        /// lakeroad-evaluation's git directory (a clone's .git or a bare repository).
        #[arg(long)]
        lakeroad: PathBuf,
        #[arg(long, default_value = "docs/results/calibration/lakeroad.json")]
        out: PathBuf,
    },
    /// Run yosys and the estimate on the designs and print the table and the fits.
    Table {
        #[arg(long)]
        lakeroad: PathBuf,
        #[arg(long, default_value = "docs/results/calibration/lakeroad.json")]
        data: PathBuf,
        /// Where the synthesized netlists are kept between runs.
        #[arg(long)]
        cache: PathBuf,
        /// The seed of the fit/check split (by source test, so the two
        /// variants of a test fall on the same side).
        #[arg(long, default_value_t = 37)]
        seed: u64,
    },
}

// --- Reading a Vivado report_timing file ---------------------------------

/// One step of a routed path: a cell arc and the net after it.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
struct Hop {
    /// The cell's type (FDRE, LUT6, CARRY8, DSP_ALU, ...).
    cell: String,
    /// Its timing arc (`Prop_B5LUT_SLICEL_I1_O`).
    arc: String,
    cell_ns: f64,
    /// The net driven by the cell: its fanout and delay.
    net_fo: u32,
    net_ns: f64,
}

/// The first (worst) path of a `report_timing` file.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
struct Report {
    device: String,
    speed_grade: String,
    vivado: String,
    /// "clk" for a clocked path, "(none)" for an unconstrained one.
    path_group: String,
    source: String,
    destination: String,
    period_ns: Option<f64>,
    slack_ns: Option<f64>,
    data_path_ns: f64,
    logic_ns: f64,
    route_ns: f64,
    logic_levels: u32,
    /// As the report gives them: `CARRY8=4 LUT4=1 LUT6=2`.
    levels: String,
    /// The end point's setup check and its increment to the required time
    /// (`Setup_DFF_SLICEL_C_D`, 0.027 ns: negative setup).
    setup_arc: Option<String>,
    setup_incr_ns: Option<f64>,
    hops: Vec<Hop>,
}

fn num_before(s: &str, unit: &str) -> Option<f64> {
    let i = s.find(unit)?;
    let head = &s[..i];
    let start = head.rfind(|c: char| !(c.is_ascii_digit() || c == '.' || c == '-')).map_or(0, |j| j + 1);
    head[start..].parse().ok()
}

fn field<'a>(text: &'a str, key: &str) -> Option<&'a str> {
    text.lines().find_map(|l| l.trim_start().strip_prefix(key)).map(str::trim)
}

/// Parses the first path of a Vivado `report_timing` text.
fn parse_report(text: &str) -> Result<Report> {
    let device = field(text, "| Device").and_then(|s| s.strip_prefix(':')).context("no Device")?.trim().to_string();
    let speed = field(text, "| Speed File").and_then(|s| s.strip_prefix(':')).context("no Speed File")?;
    let speed_grade = speed.split_whitespace().next().unwrap_or("").to_string();
    let tool = field(text, "| Tool Version").and_then(|s| s.strip_prefix(':')).unwrap_or("");
    let vivado = tool.split_whitespace().nth(1).unwrap_or("").trim_start_matches("v.").to_string();
    let path_group = field(text, "Path Group:").context("no Path Group")?.to_string();
    let source = field(text, "Source:").context("no Source")?.to_string();
    let destination = field(text, "Destination:").context("no Destination")?.to_string();
    let dpd = field(text, "Data Path Delay:").context("no Data Path Delay")?;
    let data_path_ns = num_before(dpd, "ns").context("data path delay")?;
    let logic_ns = dpd.split("logic ").nth(1).and_then(|s| num_before(s, "ns")).context("logic delay")?;
    let route_ns = dpd.split("route ").nth(1).and_then(|s| num_before(s, "ns")).context("route delay")?;
    let ll = field(text, "Logic Levels:").context("no Logic Levels")?;
    let logic_levels = ll.split_whitespace().next().unwrap_or("0").parse()?;
    let levels = ll.split_once('(').map(|(_, r)| r.trim_end_matches(')').to_string()).unwrap_or_default();
    let slack_ns = text.lines().find(|l| l.starts_with("Slack")).and_then(|l| l.split(':').nth(1)).and_then(|s| num_before(s, "ns"));
    let period_ns = text.lines().find_map(|l| l.split("period=").nth(1)).and_then(|s| num_before(s, "ns"));

    // The data path: between the second and the third rule of the path
    // table (the first section is the launch clock's path).
    let rule = "-------------------------------------------------------------------";
    let body: Vec<&str> = text.lines().collect();
    let table = body.iter().position(|l| l.trim_start().starts_with("Location")).context("no path table")?;
    let rules: Vec<usize> =
        body.iter().enumerate().skip(table).filter(|(_, l)| l.trim_start().starts_with(rule)).map(|(i, _)| i).collect();
    if rules.len() < 3 {
        bail!("no path table");
    }
    let numbers = |s: &str| -> Vec<f64> { s.split_whitespace().filter_map(|t| t.parse::<f64>().ok()).collect() };
    let mut hops: Vec<Hop> = Vec::new();
    let mut i = rules[1] + 1;
    while i < rules[2] {
        let l = body[i];
        if let Some(rest) = l.split("net (fo=").nth(1) {
            let fo: u32 = rest.split(|c: char| !c.is_ascii_digit()).next().unwrap_or("0").parse()?;
            let after = rest.split_once(')').map(|(_, r)| r).unwrap_or("");
            let ns = *numbers(after).first().context("net delay")?;
            let h = hops.last_mut().context("a net before any cell")?;
            h.net_fo = fo;
            h.net_ns = ns;
        } else if let Some((head, rest)) = l.split_once("(Prop_") {
            let cell = head.split_whitespace().last().context("cell type")?.to_string();
            let (arc, after) = rest.split_once(')').context("arc")?;
            let mut ns = numbers(after);
            if ns.is_empty() {
                i += 1;
                ns = numbers(body.get(i).copied().unwrap_or(""));
            }
            let cell_ns = *ns.first().context("cell delay")?;
            hops.push(Hop { cell, arc: format!("Prop_{arc}"), cell_ns, net_fo: 0, net_ns: 0.0 });
        }
        i += 1;
    }
    // The end point's setup, after the third rule.
    let (mut setup_arc, mut setup_incr_ns) = (None, None);
    let mut j = rules[2] + 1;
    while j < body.len() && !body[j].contains("required time") {
        if let Some(rest) = body[j].split("(Setup_").nth(1) {
            let (arc, after) = rest.split_once(')').unwrap_or((rest, ""));
            let mut ns = numbers(after);
            if ns.is_empty() {
                ns = numbers(body.get(j + 1).copied().unwrap_or(""));
            }
            setup_arc = Some(format!("Setup_{arc}"));
            setup_incr_ns = ns.first().copied();
            break;
        }
        j += 1;
    }
    Ok(Report {
        device,
        speed_grade,
        vivado,
        path_group,
        source,
        destination,
        period_ns,
        slack_ns,
        data_path_ns,
        logic_ns,
        route_ns,
        logic_levels,
        levels,
        setup_arc,
        setup_incr_ns,
        hops,
    })
}

fn git_show(git_dir: &Path, path: &str) -> Result<Vec<u8>> {
    let out = Command::new("git")
        .arg("--git-dir")
        .arg(git_dir)
        .args(["show", &format!("{LAKEROAD_COMMIT}:{path}")])
        .output()
        .context("running git")?;
    if !out.status.success() {
        bail!("git show {path}: {}", String::from_utf8_lossy(&out.stderr));
    }
    Ok(out.stdout)
}

fn git_blob_id(git_dir: &Path, path: &str) -> Result<String> {
    let out = Command::new("git")
        .arg("--git-dir")
        .arg(git_dir)
        .args(["rev-parse", &format!("{LAKEROAD_COMMIT}:{path}")])
        .output()?;
    if !out.status.success() {
        bail!("git rev-parse {path}");
    }
    Ok(String::from_utf8(out.stdout)?.trim().to_string())
}

fn git_ls(git_dir: &Path, dir: &str) -> Result<Vec<String>> {
    let out = Command::new("git")
        .arg("--git-dir")
        .arg(git_dir)
        .args(["ls-tree", "-r", "--name-only", LAKEROAD_COMMIT, dir])
        .output()?;
    Ok(String::from_utf8(out.stdout)?.lines().map(String::from).collect())
}

fn extract(git_dir: &Path, out: &Path) -> Result<()> {
    // (name, group, variant, report, verilog)
    let mut designs: Vec<(String, String, String, String, String)> = Vec::new();
    for f in git_ls(git_dir, FULL_RUN)? {
        let Some(base) = f.strip_suffix("-timing-route.v") else { continue };
        let name = base.rsplit('/').next().unwrap().to_string();
        let (group, variant) = name.split_once(".futil-").context("design name")?;
        designs.push((name.clone(), group.to_string(), variant.to_string(), f.clone(), format!("{base}.v")));
    }
    for v in ["calyx", "lakeroad"] {
        designs.push((
            format!("dot-product-{v}"),
            "dot-product".into(),
            v.into(),
            format!("{DOT_RUN}/dot-product-{v}-timing-post-synth-post-opt-post-place-post-route.txt"),
            format!("{DOT_RUN}/dot-product-{v}.v"),
        ));
    }
    let mut rows = Vec::new();
    let mut skipped = Vec::new();
    for (name, group, variant, report, verilog) in designs {
        let text = String::from_utf8(git_show(git_dir, &report)?)?;
        // report_timing_summary (the dot product's file) lists its paths
        // after "Max Delay Paths"; report_timing's first path is the worst.
        let text = match text.find("Max Delay Paths") {
            Some(i) => format!("{}{}", &text[..text.find("Timing Summary Report").unwrap_or(i)], &text[i..]),
            None => text,
        };
        let path_group = field(&text, "Path Group:").unwrap_or("");
        if path_group != "clk" {
            let (from, to) = (field(&text, "Source:").unwrap_or(""), field(&text, "Destination:").unwrap_or(""));
            let why = format!("worst path unconstrained (path group {path_group}, {from} -> {to}): no clocked path");
            skipped.push(json!({"name": name, "report": report, "why": why}));
            continue;
        }
        let r = parse_report(&text).with_context(|| report.clone())?;
        let hop_sum: f64 = r.hops.iter().map(|h| h.cell_ns + h.net_ns).sum();
        if (hop_sum - r.data_path_ns).abs() > 0.002 {
            bail!("{report}: the path's steps sum to {hop_sum}, not {}", r.data_path_ns);
        }
        rows.push(json!({
            "name": name,
            "group": group,
            "variant": variant,
            "report": report,
            "verilog": verilog,
            "verilog_blob": git_blob_id(git_dir, &verilog)?,
            "top": "main",
            "routed": r,
        }));
    }
    let doc = json!({
        "about": "Worst setup paths of routed Vivado designs (xczu3eg -1, UltraScale+), read from the reports named; every number is the report's. Written by `cargo run --release --example calibrate_sta -- extract`.",
        "repository": LAKEROAD_REPO,
        "commit": LAKEROAD_COMMIT,
        "designs": rows,
        "skipped": skipped,
    });
    if let Some(d) = out.parent() {
        std::fs::create_dir_all(d)?;
    }
    std::fs::write(out, serde_json::to_string_pretty(&doc)? + "\n")?;
    eprintln!("wrote {} designs ({} skipped) to {}", doc["designs"].as_array().unwrap().len(), doc["skipped"].as_array().unwrap().len(), out.display());
    Ok(())
}

// --- Our method on the same Verilog ---------------------------------------

/// Removes `initial begin ... end` blocks (Calyx's simulation-only zero
/// assignments to every internal signal, including the outputs of
/// sub-module instances, which yosys then reports as output ports driven
/// by constants and refuses to flatten). Vivado ignores them on wires.
fn strip_initial_blocks(src: &str) -> String {
    let mut out = String::with_capacity(src.len());
    let mut skip: Option<String> = None;
    for line in src.lines() {
        if let Some(indent) = &skip {
            if line.trim_end() == format!("{indent}end") {
                skip = None;
            }
            continue;
        }
        if line.trim() == "initial begin" {
            let indent: String = line.chars().take_while(|c| c.is_whitespace()).collect();
            skip = Some(indent);
            continue;
        }
        out.push_str(line);
        out.push('\n');
    }
    out
}

fn netlist(git_dir: &Path, cache: &Path, verilog: &str, blob: &str, top: &str) -> Result<String> {
    std::fs::create_dir_all(cache)?;
    let json_path = cache.join(format!("{blob}.json"));
    if !json_path.exists() {
        let src = String::from_utf8(git_show(git_dir, verilog)?)?;
        std::fs::write(cache.join(format!("{blob}.v")), strip_initial_blocks(&src))?;
        let script = YOSYS_SCRIPT.replace("SRC", blob).replace("TOP", top);
        eprintln!("yosys: {verilog}");
        let st = Command::new("yosys").args(["-q", "-l", &format!("{blob}.log"), "-p", &script]).current_dir(cache).output()?;
        if !st.status.success() {
            bail!("yosys failed on {verilog}: see {}", cache.join(format!("{blob}.log")).display());
        }
        std::fs::rename(cache.join(format!("{blob}.json.tmp")), &json_path)?;
    }
    Ok(std::fs::read_to_string(json_path)?)
}

/// The netlist with the top module's ports removed: no path starts at an
/// input or ends at an output, so `sta::analyze` reports the worst
/// register-to-register path, as Vivado's out-of-context reports do.
fn without_ports(json: &str, top: &str) -> Result<String> {
    let mut v: Value = serde_json::from_str(json)?;
    let m = v["modules"].get_mut(top).context("no top module")?;
    m["ports"] = json!({});
    Ok(v.to_string())
}

/// A delay model with the net delay by fanout. `sta.rs`'s is
/// `net_a = T_NET, net_b = 0`, with every other constant its own.
#[derive(Debug, Clone, Copy)]
struct Model {
    /// Net delay: `net_a + net_b * log2(fanout)`, ns.
    net_a: f64,
    net_b: f64,
    /// Added once per path (a distance allowance), ns.
    path_c: f64,
}

impl Model {
    fn current() -> Self {
        Model { net_a: sta::T_NET, net_b: 0.0, path_c: 0.0 }
    }
    fn net(&self, fo: u32) -> f64 {
        self.net_a + self.net_b * f64::from(fo.max(1)).log2()
    }
}

#[derive(Clone, Copy, PartialEq)]
enum Cls {
    Lut,
    Carry,
    Muxf,
    Other,
}

/// A combinational arc; `dedicated` hops take `T_NET_DEDICATED`.
struct Arc {
    from: usize,
    to: usize,
    dedicated: bool,
    delay: f64,
    cls: Cls,
}

/// A netlist as a timing graph (the same roles as sta.rs; only
/// register-to-register paths).
struct Graph {
    arcs: Vec<Arc>,
    order: Vec<usize>,
    out_arcs: Vec<Vec<usize>>,
    fanout: Vec<u32>,
    starts: Vec<(usize, f64)>,
    /// (net, setup)
    ends: Vec<(usize, f64)>,
}

/// The worst path under a model.
#[derive(Debug, Clone, Default)]
struct PathEst {
    delay: f64,
    luts: u32,
    carry: u32,
    muxf: u32,
    other: u32,
    /// Routed (not dedicated) nets on the path, and their fanouts.
    nets: u32,
    fanouts: Vec<u32>,
    /// The delay without the routed nets and the per-path allowance: the
    /// cells, dedicated nets, clock-to-out and setup.
    fixed: f64,
}

impl PathEst {
    /// This path's delay under another model.
    fn under(&self, m: &Model) -> f64 {
        self.fixed + self.fanouts.iter().map(|&f| m.net(f)).sum::<f64>() + m.path_c
    }
    fn levels(&self) -> u32 {
        self.luts + self.carry + self.muxf + self.other
    }
}

fn is_clock(pin: &str) -> bool {
    matches!(pin, "C" | "CLK" | "WCLK" | "CLKARDCLK" | "CLKBWRCLK" | "RDCLK" | "WRCLK")
}

fn param_on(cell: &Value, name: &str) -> bool {
    match cell["parameters"].get(name) {
        Some(Value::String(s)) => s.chars().any(|c| c == '1'),
        Some(v) => v.as_u64().is_some_and(|v| v != 0),
        None => false,
    }
}

fn lutram_read_addr(pin: &str) -> bool {
    (pin.starts_with("ADDR") && pin != "ADDRH")
        || pin.starts_with("DPRA")
        || (pin.starts_with('A') && pin[1..].parse::<u32>().is_ok())
}

impl Graph {
    fn build(json: &str, top: &str) -> Result<Graph> {
        let v: Value = serde_json::from_str(json)?;
        let modules = v["modules"].as_object().context("modules")?;
        let m = modules.get(top).context("top")?;
        let mut index: HashMap<u64, usize> = HashMap::new();
        let mut idx = |b: u64| -> usize {
            let n = index.len();
            *index.entry(b).or_insert(n)
        };
        let mut arcs = Vec::new();
        let mut starts = Vec::new();
        let mut ends = Vec::new();
        let mut sinks: Vec<usize> = Vec::new();
        for cell in m["cells"].as_object().context("cells")?.values() {
            let raw = cell["type"].as_str().unwrap_or("");
            let ty = raw.trim_start_matches('\\');
            let lib_cell = modules
                .get(raw)
                .map(|mm| mm["attributes"]["src"].as_str().is_some_and(|s| s.contains("/yosys/")))
                .unwrap_or(true);
            let mut ins: Vec<(String, u64)> = Vec::new();
            let mut outs: Vec<u64> = Vec::new();
            for (pin, bits) in cell["connections"].as_object().into_iter().flatten() {
                let dir = cell["port_directions"][pin].as_str().unwrap_or("");
                for b in bits.as_array().into_iter().flatten().filter_map(Value::as_u64) {
                    match dir {
                        "input" => ins.push((pin.clone(), b)),
                        "output" => outs.push(b),
                        _ => {}
                    }
                }
            }
            for (pin, b) in &ins {
                if !is_clock(pin) {
                    sinks.push(idx(*b));
                }
            }
            let comb = |arcs: &mut Vec<Arc>, idx: &mut dyn FnMut(u64) -> usize, cls: Cls, delay: &dyn Fn(&str) -> f64, ded: &dyn Fn(&str) -> bool| {
                for (pin, b) in &ins {
                    let from = idx(*b);
                    for o in &outs {
                        let to = idx(*o);
                        arcs.push(Arc { from, to, dedicated: ded(pin), delay: delay(pin), cls });
                    }
                }
            };
            let mut seq = |cko: f64, setup: &dyn Fn(&str) -> f64, idx: &mut dyn FnMut(u64) -> usize| {
                for o in &outs {
                    starts.push((idx(*o), cko));
                }
                for (pin, b) in &ins {
                    if !is_clock(pin) {
                        ends.push((idx(*b), setup(pin)));
                    }
                }
            };
            match ty {
                t if t.starts_with("LUT") || t == "INV" => comb(&mut arcs, &mut idx, Cls::Lut, &|_| sta::T_LUT, &|_| false),
                "CARRY4" | "CARRY8" => comb(
                    &mut arcs,
                    &mut idx,
                    Cls::Carry,
                    &|p| if p == "CI" { sta::T_CARRY_CI } else { sta::T_CARRY_S },
                    &|p| p == "CI",
                ),
                "MUXF7" | "MUXF8" | "MUXF9" => comb(&mut arcs, &mut idx, Cls::Muxf, &|_| sta::T_MUXF, &|p| p != "S"),
                t if t.starts_with("FD") => seq(sta::T_CKO_FF, &|p| if p == "D" { sta::T_SETUP_FF_D } else { sta::T_SETUP_FF_CTRL }, &mut idx),
                t if t.starts_with("RAMB") || t.starts_with("FIFO") => {
                    let reg = param_on(cell, "DOA_REG") || param_on(cell, "DOB_REG");
                    seq(if reg { sta::T_CKO_BRAM_REG } else { sta::T_CKO_BRAM }, &|_| sta::T_SETUP_BRAM, &mut idx)
                }
                t if t.starts_with("DSP48") => {
                    let regs = cell["parameters"].as_object().is_some_and(|p| p.keys().any(|k| k.ends_with("REG") && param_on(cell, k)));
                    if regs {
                        seq(sta::T_CKO_DSP, &|_| sta::T_SETUP_DSP, &mut idx)
                    } else {
                        comb(&mut arcs, &mut idx, Cls::Other, &|_| sta::T_DSP_COMB, &|_| false)
                    }
                }
                t if t.starts_with("SRL") => seq(sta::T_CKO_LUTMEM, &|_| sta::T_SETUP_LUTMEM, &mut idx),
                t if t.starts_with("RAM") => {
                    for o in &outs {
                        starts.push((idx(*o), sta::T_CKO_LUTMEM));
                    }
                    for (pin, b) in &ins {
                        if is_clock(pin) {
                            continue;
                        }
                        let from = idx(*b);
                        if lutram_read_addr(pin) {
                            for o in &outs {
                                let to = idx(*o);
                                arcs.push(Arc { from, to, dedicated: false, delay: sta::T_LUT, cls: Cls::Other });
                            }
                        }
                        ends.push((from, sta::T_SETUP_LUTMEM));
                    }
                }
                t if t.starts_with("BUFG") || t == "GND" || t == "VCC" => {}
                _ if lib_cell => comb(&mut arcs, &mut idx, Cls::Other, &|_| sta::T_LUT, &|_| false),
                _ => seq(sta::T_CKO_FF, &|_| sta::T_SETUP_FF_D, &mut idx),
            }
        }
        let n = index.len();
        let mut fanout = vec![0u32; n];
        for s in sinks {
            fanout[s] += 1;
        }
        let mut indeg = vec![0usize; n];
        let mut out_arcs: Vec<Vec<usize>> = vec![Vec::new(); n];
        for (i, a) in arcs.iter().enumerate() {
            indeg[a.to] += 1;
            out_arcs[a.from].push(i);
        }
        let mut queue: Vec<usize> = (0..n).filter(|&i| indeg[i] == 0).collect();
        let mut order = Vec::with_capacity(n);
        while let Some(x) = queue.pop() {
            order.push(x);
            for &ai in &out_arcs[x] {
                let t = arcs[ai].to;
                indeg[t] -= 1;
                if indeg[t] == 0 {
                    queue.push(t);
                }
            }
        }
        if order.len() < n {
            bail!("combinational loop");
        }
        Ok(Graph { arcs, order, out_arcs, fanout, starts, ends })
    }

    fn hop(&self, m: &Model, net: usize, dedicated: bool) -> f64 {
        if dedicated {
            sta::T_NET_DEDICATED
        } else {
            m.net(self.fanout[net])
        }
    }

    fn worst(&self, m: &Model) -> Option<PathEst> {
        let n = self.fanout.len();
        let mut arr: Vec<Option<(f64, Option<usize>)>> = vec![None; n];
        for &(net, cko) in &self.starts {
            if arr[net].is_none_or(|(t, _)| cko > t) {
                arr[net] = Some((cko, None));
            }
        }
        for &net in &self.order {
            let Some((t, _)) = arr[net] else { continue };
            for &ai in &self.out_arcs[net] {
                let a = &self.arcs[ai];
                let t2 = t + self.hop(m, a.from, a.dedicated) + a.delay;
                if arr[a.to].is_none_or(|(u, _)| t2 > u) {
                    arr[a.to] = Some((t2, Some(ai)));
                }
            }
        }
        let mut best: Option<(f64, usize)> = None;
        for &(net, setup) in &self.ends {
            if let Some((t, _)) = arr[net] {
                let total = t + self.hop(m, net, false) + setup;
                if best.is_none_or(|(w, _)| total > w) {
                    best = Some((total, net));
                }
            }
        }
        let (delay, end) = best?;
        let mut p = PathEst { delay: delay + m.path_c, nets: 1, fanouts: vec![self.fanout[end]], ..Default::default() };
        let mut cur = end;
        while let Some((_, Some(ai))) = arr[cur] {
            let a = &self.arcs[ai];
            match a.cls {
                Cls::Lut => p.luts += 1,
                Cls::Carry => p.carry += 1,
                Cls::Muxf => p.muxf += 1,
                Cls::Other => p.other += 1,
            }
            if !a.dedicated {
                p.nets += 1;
                p.fanouts.push(self.fanout[a.from]);
            }
            cur = a.from;
        }
        p.fixed = p.delay - p.fanouts.iter().map(|&f| m.net(f)).sum::<f64>() - m.path_c;
        Some(p)
    }
}

// --- The table and the fits -----------------------------------------------

struct Row {
    name: String,
    group: String,
    /// DSP-internal worst path in Vivado (the model has no such path).
    dsp: bool,
    routed: Report,
    graph: Graph,
    current: PathEst,
}

/// Error of an estimate against the routed delay, in % (negative =
/// optimistic: the estimate is faster than the routed design).
fn err_pct(est: f64, routed: f64) -> f64 {
    100.0 * (est - routed) / routed
}

struct Stats {
    n: usize,
    median_abs: f64,
    max_optimistic: f64,
    within15: f64,
    optimistic_gt10: usize,
}

fn stats(errs: &[f64]) -> Stats {
    let mut a: Vec<f64> = errs.iter().map(|e| e.abs()).collect();
    a.sort_by(f64::total_cmp);
    let median_abs = if a.is_empty() {
        f64::NAN
    } else if a.len() % 2 == 1 {
        a[a.len() / 2]
    } else {
        (a[a.len() / 2 - 1] + a[a.len() / 2]) / 2.0
    };
    Stats {
        n: errs.len(),
        median_abs,
        max_optimistic: errs.iter().copied().fold(0.0, |m: f64, e| m.max(-e)),
        within15: 100.0 * errs.iter().filter(|e| e.abs() <= 15.0).count() as f64 / errs.len().max(1) as f64,
        optimistic_gt10: errs.iter().filter(|&&e| e < -10.0).count(),
    }
}

fn show(label: &str, s: &Stats) {
    println!(
        "| {label} | {} | {:.1} | {:.1} | {:.0} | {} |",
        s.n, s.median_abs, s.max_optimistic, s.within15, s.optimistic_gt10
    );
}

/// A fixed-seed shuffle (splitmix64), so the split needs no RNG crate and
/// never changes between versions.
fn shuffle<T>(v: &mut [T], seed: u64) {
    let mut s = seed;
    let mut next = || {
        s = s.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = s;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    };
    for i in (1..v.len()).rev() {
        let j = (next() % (i as u64 + 1)) as usize;
        v.swap(i, j);
    }
}

/// A grid of values from `lo` to `hi` by `step`.
fn grid((lo, hi): (f64, f64), step: f64) -> Vec<f64> {
    if hi <= lo {
        return vec![lo];
    }
    let n = ((hi - lo) / step).round() as usize;
    (0..=n).map(|i| lo + step * i as f64).collect()
}

/// Fits the model's free parameters (ranges `a`, `b`, `c`; a range with
/// `hi <= lo` is fixed at `lo`) to minimize the sum of squared log errors
/// of the designs' worst paths. The worst path depends on the model, so
/// the fit keeps a set of candidate paths per design (the worst under
/// each model tried) and searches the grid on them, then adds each
/// design's worst path under the best model, until no design's worst path
/// is new: the loss it minimizes is then the true one at its optimum.
fn fit(rows: &[&Row], a: (f64, f64), b: (f64, f64), c: (f64, f64), step: f64) -> Model {
    let mut cands: Vec<Vec<PathEst>> = rows.iter().map(|r| vec![r.current.clone()]).collect();
    let est = |cs: &[PathEst], m: &Model| cs.iter().map(|p| p.under(m)).fold(f64::MIN, f64::max);
    let mut m = Model::current();
    for _ in 0..50 {
        let mut best = (f64::INFINITY, m);
        for &na in &grid(a, step) {
            for &nb in &grid(b, step) {
                for &pc in &grid(c, step) {
                    let t = Model { net_a: na, net_b: nb, path_c: pc };
                    let l: f64 = rows.iter().zip(&cands).map(|(r, cs)| (est(cs, &t) / r.routed.data_path_ns).ln().powi(2)).sum();
                    if l < best.0 - 1e-12 {
                        best = (l, t);
                    }
                }
            }
        }
        m = best.1;
        let mut new = false;
        for (r, cs) in rows.iter().zip(cands.iter_mut()) {
            let p = r.graph.worst(&m).expect("a path");
            if p.delay > est(cs, &m) + 1e-9 {
                cs.push(p);
                new = true;
            }
        }
        if !new {
            break;
        }
    }
    m
}

// --- The delay model on Vivado's own paths ---------------------------------

/// sta.rs's delay for one cell arc of a routed Vivado path, or None for
/// cells the model has no arc for (the DSP's internal stages).
fn model_cell(h: &Hop) -> Option<f64> {
    let c = h.cell.as_str();
    Some(if c.starts_with("FD") {
        sta::T_CKO_FF
    } else if c.starts_with("LUT") {
        sta::T_LUT
    } else if c == "CARRY8" || c == "CARRY4" {
        if h.arc.contains("_CI_") {
            sta::T_CARRY_CI
        } else {
            sta::T_CARRY_S
        }
    } else if c.starts_with("MUXF") {
        sta::T_MUXF
    } else {
        return None;
    })
}

/// Whether the net after hop `i` is a dedicated connection in sta.rs's
/// terms (into a carry's CI, or into a MUXF's data input).
fn dedicated_after(hops: &[Hop], i: usize) -> bool {
    hops.get(i + 1).is_some_and(|n| (n.cell.starts_with("CARRY") && n.arc.contains("_CI_")) || (n.cell.starts_with("MUXF") && !n.arc.contains("_S_")))
}

/// sta.rs's method applied to the routed path's own cells and nets (no
/// setup: Vivado's data path delay has none): the delay model alone,
/// without yosys's different synthesis. None for DSP-internal paths.
fn on_routed_path(r: &Report, m: &Model) -> Option<f64> {
    let mut t = m.path_c;
    for (i, h) in r.hops.iter().enumerate() {
        t += model_cell(h)?;
        if i + 1 < r.hops.len() || h.net_fo > 0 {
            t += if dedicated_after(&r.hops, i) { sta::T_NET_DEDICATED } else { m.net(h.net_fo) };
        }
    }
    Some(t)
}

/// Least-squares line `net_ns = a + b * log2(fo)` through the routed nets
/// (not the dedicated ones) of the given paths.
fn fit_nets(reports: &[&Report]) -> (f64, f64, usize) {
    let mut pts: Vec<(f64, f64)> = Vec::new();
    for r in reports {
        for (i, h) in r.hops.iter().enumerate() {
            if h.net_fo > 0 && !dedicated_after(&r.hops, i) {
                pts.push((f64::from(h.net_fo).log2(), h.net_ns));
            }
        }
    }
    let n = pts.len() as f64;
    let (mx, my) = (pts.iter().map(|p| p.0).sum::<f64>() / n, pts.iter().map(|p| p.1).sum::<f64>() / n);
    let sxy: f64 = pts.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
    let sxx: f64 = pts.iter().map(|p| (p.0 - mx).powi(2)).sum();
    let b = sxy / sxx;
    (my - b * mx, b, pts.len())
}

fn table(git_dir: &Path, data: &Path, cache: &Path, seed: u64) -> Result<()> {
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(data)?)?;
    if doc["commit"].as_str() != Some(LAKEROAD_COMMIT) {
        bail!("{} is for another commit", data.display());
    }
    let mut rows: Vec<Row> = Vec::new();
    for d in doc["designs"].as_array().context("designs")? {
        let name = d["name"].as_str().unwrap_or("").to_string();
        let top = d["top"].as_str().unwrap_or("main");
        let routed: Report = serde_json::from_value(d["routed"].clone())?;
        let json = netlist(git_dir, cache, d["verilog"].as_str().unwrap(), d["verilog_blob"].as_str().unwrap(), top)?;
        let stripped = without_ports(&json, top)?;
        let est = sta::analyze(&stripped, Some(top)).with_context(|| format!("sta on {name}"))?;
        let graph = Graph::build(&stripped, top)?;
        let current = graph.worst(&Model::current()).context("no path")?;
        // The re-implementation must be sta.rs's estimate under its own constants.
        if (current.delay - est.delay_ns).abs() > 1e-9
            || (current.luts, current.carry, current.muxf, current.other)
                != (est.lut_levels as u32, est.carry_cells as u32, est.muxf_cells as u32, est.other_cells as u32)
        {
            bail!("{name}: the parametric model ({:.4} ns) differs from sta::analyze ({:.4} ns)", current.delay, est.delay_ns);
        }
        let dsp = routed.levels.contains("DSP_");
        rows.push(Row { name, group: d["group"].as_str().unwrap_or("").to_string(), dsp, routed, graph, current });
    }

    println!("## Designs: routed worst path against sta.rs's estimate (current model)\n");
    println!("Error = (estimate - routed) / routed; negative is optimistic.\n");
    println!("| design | routed ns (logic / route) | routed levels | estimate ns | error % | our levels (LUT, carry, MUXF, other) | routed nets: fo | our nets: fo |");
    println!("|---|---|---|---|---|---|---|---|");
    for r in &rows {
        let rf: Vec<String> = r.routed.hops.iter().filter(|h| h.net_fo > 0).map(|h| h.net_fo.to_string()).collect();
        let mut of = r.current.fanouts.clone();
        of.reverse();
        let of: Vec<String> = of.iter().map(u32::to_string).collect();
        println!(
            "| {}{} | {:.3} ({:.3} / {:.3}) | {} ({}) | {:.3} | {:+.1} | {} ({}, {}, {}, {}) | {} | {} |",
            r.name,
            if r.dsp { " (DSP)" } else { "" },
            r.routed.data_path_ns,
            r.routed.logic_ns,
            r.routed.route_ns,
            r.routed.logic_levels,
            r.routed.levels,
            r.current.delay,
            err_pct(r.current.delay, r.routed.data_path_ns),
            r.current.levels(),
            r.current.luts,
            r.current.carry,
            r.current.muxf,
            r.current.other,
            rf.join(","),
            of.join(","),
        );
    }

    // Per-hop data of the routed paths (Vivado's own netlists).
    println!("\n## Routed nets by fanout (the worst paths of all 23 designs without a DSP path; routed nets only)\n");
    println!("| fanout | nets | mean ns | max ns |");
    println!("|---|---|---|---|");
    let mut by_fo: BTreeMap<u32, Vec<f64>> = BTreeMap::new();
    for r in rows.iter().filter(|r| !r.dsp) {
        for (i, h) in r.routed.hops.iter().enumerate() {
            // Dedicated connections (carry CO -> CI, into a MUXF's data
            // input) are not routed nets.
            if h.net_fo == 0 || dedicated_after(&r.routed.hops, i) {
                continue;
            }
            let class = match h.net_fo {
                1 => 1,
                2..=3 => 2,
                4..=7 => 4,
                8..=15 => 8,
                16..=63 => 16,
                _ => 64,
            };
            by_fo.entry(class).or_default().push(h.net_ns);
        }
    }
    for (fo, v) in &by_fo {
        let label = match fo {
            1 => "1".to_string(),
            2 => "2-3".into(),
            4 => "4-7".into(),
            8 => "8-15".into(),
            16 => "16-63".into(),
            _ => "64+".into(),
        };
        println!("| {label} | {} | {:.3} | {:.3} |", v.len(), v.iter().sum::<f64>() / v.len() as f64, v.iter().copied().fold(0.0, f64::max));
    }

    // The split: by source test (the two variants of one test together).
    let mut groups: Vec<String> = rows.iter().map(|r| r.group.clone()).collect();
    groups.sort();
    groups.dedup();
    shuffle(&mut groups, seed);
    let fit_groups: Vec<&String> = groups.iter().take(groups.len().div_ceil(2)).collect();
    let in_fit = |r: &Row| fit_groups.contains(&&r.group);
    let lut_rows: Vec<&Row> = rows.iter().filter(|r| !r.dsp).collect();
    let train: Vec<&Row> = lut_rows.iter().copied().filter(|r| in_fit(r)).collect();
    let held: Vec<&Row> = lut_rows.iter().copied().filter(|r| !in_fit(r)).collect();
    println!("\n## Fit and check (seed {seed})\n");
    let mut fg: Vec<&str> = fit_groups.iter().map(|s| s.as_str()).collect();
    fg.sort();
    println!("Fitted on the tests {} ({} designs without a DSP-internal worst path); checked on the other {} designs.\n", fg.join(", "), train.len(), held.len());

    let errs = |rows: &[&Row], m: &Model| -> Vec<f64> {
        rows.iter().map(|r| err_pct(r.graph.worst(m).map_or(f64::NAN, |p| p.delay), r.routed.data_path_ns)).collect()
    };
    let m1 = fit(&train, (0.02, 0.80), (0.0, 0.0), (0.0, 0.0), 0.01);
    let m2 = fit(&train, (0.0, 0.60), (0.0, 0.30), (0.0, 0.0), 0.01);
    let m3 = fit(&train, (0.0, 0.60), (0.0, 0.30), (0.0, 1.50), 0.01);
    // The net model fitted on the routed nets of the fit half's own paths.
    let train_reports: Vec<&Report> = train.iter().map(|r| &r.routed).collect();
    let (ha, hb, hn) = fit_nets(&train_reports);
    let m4 = Model { net_a: (ha * 1000.0).round() / 1000.0, net_b: (hb * 1000.0).round() / 1000.0, path_c: 0.0 };
    println!("| model | designs | median abs error % | max optimistic % | within 15 % | optimistic > 10 % |");
    println!("|---|---|---|---|---|---|");
    let all: Vec<&Row> = rows.iter().collect();
    show("current (T_NET 0.25), all designs incl. DSP", &stats(&errs(&all, &Model::current())));
    show("current, designs without DSP paths", &stats(&errs(&lut_rows, &Model::current())));
    show("current, fit half", &stats(&errs(&train, &Model::current())));
    show("current, held-out half", &stats(&errs(&held, &Model::current())));
    let describe = |m: &Model| format!("net {:.3} + {:.3} log2(fo), path + {:.2}", m.net_a, m.net_b, m.path_c);
    for (label, m) in [
        ("M1 constant net", m1),
        ("M2 net by fanout", m2),
        ("M3 net by fanout + per-path allowance", m3),
        ("M4 net by fanout, fitted on the routed nets", m4),
    ] {
        show(&format!("{label} ({}), fit half", describe(&m)), &stats(&errs(&train, &m)));
        show(&format!("{label} ({}), held-out half", describe(&m)), &stats(&errs(&held, &m)));
    }

    println!("\n## Held-out designs under each model\n");
    println!("| design | routed ns | current | M1 | M2 | M3 | M4 |");
    println!("|---|---|---|---|---|---|---|");
    for r in &held {
        let e = |m: &Model| r.graph.worst(m).map_or(f64::NAN, |p| p.delay);
        let c = |m: &Model| format!("{:.3} ({:+.0} %)", e(m), err_pct(e(m), r.routed.data_path_ns));
        println!("| {} | {:.3} | {} | {} | {} | {} | {} |", r.name, r.routed.data_path_ns, c(&Model::current()), c(&m1), c(&m2), c(&m3), c(&m4));
    }

    // The delay model alone: sta.rs's constants on Vivado's own routed
    // paths (same cells, same nets, same fanouts).
    println!("\n## The delay model on the routed paths themselves\n");
    println!("sta.rs's cell constants and a net model applied to each routed path's own cells and nets");
    println!("(the path's structure is Vivado's, so only the delays are compared; no setup on either side).");
    println!("M4 is the least-squares line through the {hn} routed nets of the fit half's paths.\n");
    println!("| design | routed ns (logic / route) | current model | M4 |");
    println!("|---|---|---|---|");
    let mut e_cur = (Vec::new(), Vec::new());
    let mut e_m4 = (Vec::new(), Vec::new());
    for r in &lut_rows {
        let (Some(c), Some(f)) = (on_routed_path(&r.routed, &Model::current()), on_routed_path(&r.routed, &m4)) else { continue };
        let routed = r.routed.data_path_ns;
        println!(
            "| {}{} | {:.3} ({:.3} / {:.3}) | {:.3} ({:+.0} %) | {:.3} ({:+.0} %) |",
            r.name,
            if in_fit(r) { " (fit)" } else { "" },
            routed,
            r.routed.logic_ns,
            r.routed.route_ns,
            c,
            err_pct(c, routed),
            f,
            err_pct(f, routed)
        );
        let side = |e: &mut (Vec<f64>, Vec<f64>), v: f64| if in_fit(r) { e.0.push(v) } else { e.1.push(v) };
        side(&mut e_cur, err_pct(c, routed));
        side(&mut e_m4, err_pct(f, routed));
    }
    println!("\n| model on the routed paths | designs | median abs error % | max optimistic % | within 15 % | optimistic > 10 % |");
    println!("|---|---|---|---|---|---|");
    show("current, fit half", &stats(&e_cur.0));
    show("current, held-out half", &stats(&e_cur.1));
    show(&format!("M4 ({}), fit half", describe(&m4)), &stats(&e_m4.0));
    show(&format!("M4 ({}), held-out half", describe(&m4)), &stats(&e_m4.1));
    Ok(())
}

fn main() -> Result<()> {
    let cli = Cli::parse();
    match cli.cmd {
        Some(Cmd::Extract { lakeroad, out }) => extract(&lakeroad, &out),
        Some(Cmd::Table { lakeroad, data, cache, seed }) => table(&lakeroad, &data, &cache, seed),
        None => bail!("say `extract` or `table` (see --help)"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A path in the layout of Vivado 2021.2's report_timing (shortened).
    const REPORT: &str = "\
----------------------------------------------------------------------------------------------------
| Tool Version      : Vivado v.2021.2 (lin64) Build 3367213 Tue Oct 19 02:47:39 MDT 2021
| Device            : xczu3eg-sbva484
| Speed File        : -1  PRODUCTION 1.29 08-03-2020

Slack (MET) :             3.000ns  (required time - arrival time)
  Source:                 a_reg/C
                            (rising edge-triggered cell FDRE clocked by clk  {rise@0.000ns fall@2.500ns period=5.000ns})
  Destination:            b_reg/D
  Path Group:             clk
  Data Path Delay:        0.500ns  (logic 0.300ns (60.000%)  route 0.200ns (40.000%))
  Logic Levels:           1  (LUT4=1)

    Location             Delay type                Incr(ns)  Path(ns)    Netlist Resource(s)
  -------------------------------------------------------------------    -------------------
                         (clock clk rise edge)        0.000     0.000 r
                         net (fo=3, unset)            0.036     0.036    clk
    SLICE_X26Y91         FDRE                                         r  a_reg/C
  -------------------------------------------------------------------    -------------------
    SLICE_X26Y91         FDRE (Prop_HFF_SLICEL_C_Q)
                                                      0.100     0.136 r  a_reg/Q
                         net (fo=9, routed)           0.150     0.286    q
    SLICE_X26Y91         LUT4 (Prop_B5LUT_SLICEL_I1_O)        0.200     0.486 f  l/O
                         net (fo=1, routed)           0.050     0.536    d
    SLICE_X26Y91         FDRE                                         r  b_reg/D
  -------------------------------------------------------------------    -------------------

                         (clock clk rise edge)        5.000     5.000 r
    SLICE_X26Y91         FDRE (Setup_DFF_SLICEL_C_D)
                                                      0.027     5.016    b_reg
  -------------------------------------------------------------------
                         required time                          5.016
";

    #[test]
    fn parses_a_report_timing_path() {
        let r = parse_report(REPORT).unwrap();
        assert_eq!((r.device.as_str(), r.speed_grade.as_str(), r.vivado.as_str()), ("xczu3eg-sbva484", "-1", "2021.2"));
        assert_eq!((r.path_group.as_str(), r.source.as_str(), r.destination.as_str()), ("clk", "a_reg/C", "b_reg/D"));
        assert_eq!((r.data_path_ns, r.logic_ns, r.route_ns), (0.5, 0.3, 0.2));
        assert_eq!((r.logic_levels, r.levels.as_str()), (1, "LUT4=1"));
        assert_eq!((r.period_ns, r.slack_ns), (Some(5.0), Some(3.0)));
        assert_eq!(r.hops.len(), 2);
        assert_eq!(r.hops[0], Hop { cell: "FDRE".into(), arc: "Prop_HFF_SLICEL_C_Q".into(), cell_ns: 0.1, net_fo: 9, net_ns: 0.15 });
        assert_eq!((r.hops[1].cell.as_str(), r.hops[1].cell_ns, r.hops[1].net_fo, r.hops[1].net_ns), ("LUT4", 0.2, 1, 0.05));
        assert_eq!((r.setup_arc.as_deref(), r.setup_incr_ns), (Some("Setup_DFF_SLICEL_C_D"), Some(0.027)));
    }

    #[test]
    fn strips_initial_blocks_only() {
        let src = "module m;\n  logic a;\n  initial begin\n    a = 1'd0;\n  end\n  always_ff @(posedge c) begin\n    a <= 1;\n  end\nendmodule\n";
        let out = strip_initial_blocks(src);
        assert_eq!(out, "module m;\n  logic a;\n  always_ff @(posedge c) begin\n    a <= 1;\n  end\nendmodule\n");
    }

    #[test]
    fn the_split_is_deterministic() {
        let mut a: Vec<u32> = (0..10).collect();
        let mut b = a.clone();
        shuffle(&mut a, 37);
        shuffle(&mut b, 37);
        assert_eq!(a, b);
        assert_ne!(a, (0..10).collect::<Vec<_>>());
    }
}
