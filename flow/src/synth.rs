//! Resource estimates with yosys (`synth_xilinx -family xcu`): runs the
//! script `fptgen generate` writes (`synth/synth.ys`), and reads its
//! statistics back, per module and in total, with the longest
//! combinational path as a timing proxy, and a timing estimate of the
//! worst register-to-register path ([`crate::sta`]) on the flattened
//! netlist yosys writes as JSON.
//!
//! yosys keeps the hierarchy, so `stat` lists every (parameterized) module
//! once with its own cells, and a `design hierarchy` section with the
//! instance tree and the totals. Modules are reported by their base name
//! (`$paramod$<hash>\fptgen_cast` is `fptgen_cast`), summed over their
//! parameterizations and instances.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde::Serialize;

pub use fptgen_generator::part::Resources;

use fptgen_generator::part::Part;
use fptgen_generator::render::SynthScope;

/// One module of the design, summed over its instances (and
/// parameterizations).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ModuleUse {
    /// Base module name.
    pub name: String,
    /// Instances in the design.
    pub instances: u64,
    /// Its own primitives (submodules excluded), over all instances.
    pub own: Resources,
    /// Its primitives with those of its submodules, over all instances
    /// (what Vivado's hierarchical utilization report shows).
    pub inclusive: Resources,
}

/// Shares of the part's capacity, in percent.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Shares {
    /// LUTs (LUT and LUTRAM primitives).
    pub luts: f64,
    /// Flip-flops.
    pub ffs: f64,
    /// Carry chains, in CARRY8 units (a CARRY4 is half of one).
    pub carry8: f64,
    /// DSP slices.
    pub dsps: f64,
    /// Block RAM (36 Kb units).
    pub bram36: f64,
}

/// What `fptgen synth` reports.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SynthReport {
    /// yosys's version line.
    pub yosys: String,
    /// The script that ran.
    pub script: String,
    /// True if the inference pipeline was a black box (the trainer alone).
    pub trainer_only: bool,
    /// Top module.
    pub top: String,
    /// Per module, largest inclusive LUT count first.
    pub modules: Vec<ModuleUse>,
    /// The whole design (yosys's `design hierarchy` totals).
    pub total: Resources,
    /// Carry primitive yosys used ("CARRY4" or "CARRY8").
    pub carry_cell: String,
    /// Cells on the longest combinational path between sequential cells
    /// (flip-flops, RAMs, DSPs) of the flattened netlist.
    pub logic_levels: u64,
    /// The timing estimate of the worst register-to-register path of the
    /// flattened netlist ([`crate::sta`]: LUT levels, carry and MUXF cells,
    /// delay and fmax under a documented delay model). An estimate, not
    /// Vivado's timing.
    pub timing: crate::sta::Estimate,
    /// The model's clock period, ns.
    pub clock_period_ns: f64,
    /// Whether the estimated delay fits in the clock period. Reported only:
    /// nothing fails when it does not.
    pub meets_clock: bool,
    /// The part's capacity, if known.
    pub part: Option<Part>,
    /// Shares of it.
    pub shares: Option<Shares>,
}

/// Why an estimate could not be made.
#[derive(Debug, thiserror::Error)]
pub enum SynthError {
    /// yosys is not installed.
    #[error("yosys not found on PATH; install it (Debian: apt-get install yosys)")]
    MissingYosys,
    /// yosys failed.
    #[error("yosys failed ({how}) in {}, see {}:\n{tail}", dir.display(), log.display())]
    Yosys {
        /// How it ended: its exit code, or the signal that killed it (a
        /// crash or the kernel's out-of-memory killer leaves nothing in
        /// the log).
        how: String,
        /// Design directory.
        dir: PathBuf,
        /// yosys's log.
        log: PathBuf,
        /// The log's last lines.
        tail: String,
    },
    /// The timing estimate failed (a combinational loop, or no path).
    #[error("{}: timing estimate: {source}", path.display())]
    Timing {
        /// The netlist.
        path: PathBuf,
        /// Why.
        source: crate::sta::StaError,
    },
    /// yosys's output could not be read.
    #[error("{}: {msg}", path.display())]
    Parse {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        msg: String,
    },
}

/// The base name of a yosys module name: `$paramod$<hash>\name`, or
/// `$paramod\name\P=value` (yosys spells out a single parameter), is
/// `name`.
fn base_name(m: &str) -> String {
    match m.strip_prefix("$paramod") {
        Some(rest) => rest.split('\\').nth(1).unwrap_or(rest).to_string(),
        None => m.trim_start_matches('\\').to_string(),
    }
}

/// Parses yosys's text `stat` output: per-module own primitives, and the
/// design hierarchy (instance counts and totals).
pub fn parse_stat(text: &str, top: &str) -> Result<(Vec<ModuleUse>, Resources, String), String> {
    // Sections "=== name ===".
    let mut sections: Vec<(String, Vec<&str>)> = Vec::new();
    for line in text.lines() {
        let t = line.trim();
        if let Some(name) = t.strip_prefix("=== ").and_then(|s| s.strip_suffix(" ===")) {
            sections.push((name.to_string(), Vec::new()));
        } else if let Some(s) = sections.last_mut() {
            s.1.push(line);
        }
    }
    let cells = |lines: &[&str]| -> Vec<(String, u64)> {
        // The cell list follows "Number of cells:", indented further.
        let mut out = Vec::new();
        let mut inside = false;
        for l in lines {
            let t = l.trim();
            if t.starts_with("Number of cells:") {
                inside = true;
                continue;
            }
            if inside {
                let mut w = t.split_whitespace();
                match (w.next(), w.next(), w.next()) {
                    (Some(c), Some(n), None) if n.parse::<u64>().is_ok() => out.push((c.to_string(), n.parse().unwrap_or(0))),
                    _ if t.is_empty() => {}
                    _ => inside = false,
                }
            }
        }
        out
    };
    let mut own: BTreeMap<String, Resources> = BTreeMap::new();
    let mut hierarchy: Option<&Vec<&str>> = None;
    for (name, lines) in &sections {
        if name == "design hierarchy" {
            hierarchy = Some(lines);
            continue;
        }
        let mut r = Resources::default();
        for (c, n) in cells(lines) {
            r.add_cell(&c, n);
        }
        own.insert(name.clone(), r);
    }
    let carry_cell = if text.contains("CARRY8") { "CARRY8" } else { "CARRY4" }.to_string();
    // Without submodules yosys prints no hierarchy section.
    let Some(h) = hierarchy else {
        let r = own.get(top).copied().ok_or_else(|| format!("no statistics for the top module {top}"))?;
        return Ok((vec![ModuleUse { name: base_name(top), instances: 1, own: r, inclusive: r }], r, carry_cell));
    };
    // The instance tree: "  name  count", two more spaces per level; a
    // count is per instance of the parent.
    let mut instances: BTreeMap<String, u64> = BTreeMap::new();
    let mut children: BTreeMap<String, BTreeMap<String, u64>> = BTreeMap::new();
    let mut stack: Vec<(usize, u64, String)> = Vec::new();
    for l in h.iter() {
        let t = l.trim();
        if t.is_empty() {
            if !instances.is_empty() {
                break;
            }
            continue;
        }
        if t.starts_with("Number of") {
            break;
        }
        let indent = l.len() - l.trim_start().len();
        let mut w = t.split_whitespace();
        let (Some(name), Some(n)) = (w.next(), w.next().and_then(|n| n.parse::<u64>().ok())) else { break };
        while stack.last().is_some_and(|(i, _, _)| *i >= indent) {
            stack.pop();
        }
        let total = stack.last().map(|(_, k, _)| *k).unwrap_or(1) * n;
        if let Some((_, _, parent)) = stack.last() {
            children.entry(parent.clone()).or_default().insert(name.to_string(), n);
        }
        *instances.entry(name.to_string()).or_default() += total;
        stack.push((indent, total, name.to_string()));
    }
    fn inclusive(
        m: &str,
        own: &BTreeMap<String, Resources>,
        children: &BTreeMap<String, BTreeMap<String, u64>>,
        depth: usize,
    ) -> Result<Resources, String> {
        if depth > 64 {
            return Err(format!("module hierarchy too deep at {m}"));
        }
        let mut r = *own.get(m).ok_or_else(|| format!("module {m} in the hierarchy has no statistics"))?;
        for (c, k) in children.get(m).into_iter().flatten() {
            r = r.plus(&inclusive(c, own, children, depth + 1)?.scaled(*k));
        }
        Ok(r)
    }
    let mut by_base: BTreeMap<String, ModuleUse> = BTreeMap::new();
    for (name, k) in &instances {
        let r = own.get(name).ok_or_else(|| format!("module {name} in the hierarchy has no statistics"))?;
        let inc = inclusive(name, &own, &children, 0)?;
        let e = by_base.entry(base_name(name)).or_insert(ModuleUse {
            name: base_name(name),
            instances: 0,
            own: Resources::default(),
            inclusive: Resources::default(),
        });
        e.instances += k;
        e.own = e.own.plus(&r.scaled(*k));
        e.inclusive = e.inclusive.plus(&inc.scaled(*k));
    }
    let mut total = Resources::default();
    for (c, n) in cells(h) {
        total.add_cell(&c, n);
    }
    let mut modules: Vec<ModuleUse> = by_base.into_values().collect();
    modules.sort_by(|a, b| b.inclusive.luts.cmp(&a.inclusive.luts).then(a.name.cmp(&b.name)));
    Ok((modules, total, carry_cell))
}

/// Parses `ltp`'s "Longest topological path in X (length=N):".
pub fn parse_ltp(text: &str) -> Option<u64> {
    text.lines().find_map(|l| {
        let rest = &l[l.find("(length=")? + 8..];
        rest[..rest.find(')')?].parse().ok()
    })
}

/// How a process ended, for an error message: "exit code N", or "killed by
/// signal N (SIGSEGV)" on Unix.
pub fn exit_description(status: &std::process::ExitStatus) -> String {
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(sig) = status.signal() {
            let name = match sig {
                6 => " (SIGABRT)",
                9 => " (SIGKILL: out of memory?)",
                11 => " (SIGSEGV)",
                _ => "",
            };
            return format!("killed by signal {sig}{name}");
        }
    }
    match status.code() {
        Some(c) => format!("exit code {c}"),
        None => "no exit code".into(),
    }
}

/// The last 20 lines of a tool's log, for an error message.
pub fn log_tail(text: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(20)..].join("\n")
}

/// yosys's version line (`yosys -V`), or [`SynthError::MissingYosys`].
pub fn yosys_version() -> Result<String, SynthError> {
    let version = Command::new("yosys").arg("-V").output().map_err(|_| SynthError::MissingYosys)?;
    if !version.status.success() {
        return Err(SynthError::MissingYosys);
    }
    Ok(String::from_utf8_lossy(&version.stdout).trim().to_string())
}

/// Runs `synth/synth.ys` in the design directory `dir` (written by
/// `fptgen generate`) and reads the estimate; `clock_period_ns` is the
/// model's clock, which the timing estimate is compared with.
pub fn run(
    dir: &Path,
    top: &str,
    part: Option<Part>,
    scope: SynthScope,
    clock_period_ns: f64,
) -> Result<SynthReport, SynthError> {
    let version = yosys_version()?;
    let log_name = format!("{}yosys.log", scope.prefix());
    let log = dir.join(&log_name);
    let out = Command::new("yosys")
        .args(["-q", "-l", &log_name, "-s", scope.script()])
        .current_dir(dir)
        .output()
        .map_err(|_| SynthError::MissingYosys)?;
    if !out.status.success() {
        let text = std::fs::read_to_string(&log).unwrap_or_else(|_| String::from_utf8_lossy(&out.stderr).into_owned());
        return Err(SynthError::Yosys { how: exit_description(&out.status), dir: dir.to_path_buf(), log, tail: log_tail(&text) });
    }
    let read = |name: &str| -> Result<(PathBuf, String), SynthError> {
        let path = dir.join(name);
        let text = std::fs::read_to_string(&path).map_err(|e| SynthError::Parse { path: path.clone(), msg: e.to_string() })?;
        Ok((path, text))
    };
    let (stat_path, stat) = read(&format!("{}stat.txt", scope.prefix()))?;
    let (modules, total, carry_cell) =
        parse_stat(&stat, top).map_err(|msg| SynthError::Parse { path: stat_path.clone(), msg })?;
    let (ltp_path, ltp) = read(&format!("{}ltp.txt", scope.prefix()))?;
    let logic_levels =
        parse_ltp(&ltp).ok_or_else(|| SynthError::Parse { path: ltp_path, msg: "no longest-path line".into() })?;
    let (net_path, netlist) = read(&format!("{}netlist.json", scope.prefix()))?;
    let timing =
        crate::sta::analyze(&netlist, Some(top)).map_err(|source| SynthError::Timing { path: net_path.clone(), source })?;
    // The netlist is large (tens of MB for the examples, more in a sweep's
    // cache of designs); once read, it goes. `yosys -s synth/synth.ys`
    // writes it again.
    let _ = std::fs::remove_file(&net_path);
    let shares = part.map(|p| {
        let pct = |used: f64, cap: u64| 100.0 * used / cap as f64;
        let carry8 = if carry_cell == "CARRY4" { total.carry as f64 / 2.0 } else { total.carry as f64 };
        Shares {
            luts: pct((total.luts + total.lutram) as f64, p.luts),
            ffs: pct(total.ffs as f64, p.ffs),
            carry8: pct(carry8, p.carry8),
            dsps: pct(total.dsps as f64, p.dsps),
            bram36: pct(total.bram36(), p.bram36),
        }
    });
    Ok(SynthReport {
        yosys: version,
        script: scope.script().to_string(),
        trainer_only: scope == SynthScope::Trainer,
        top: top.to_string(),
        modules,
        total,
        carry_cell,
        logic_levels,
        meets_clock: timing.delay_ns <= clock_period_ns,
        timing,
        clock_period_ns,
        part,
        shares,
    })
}

#[derive(askama::Template)]
#[template(path = "synth_report.md")]
struct ReportMd<'a> {
    gen: &'a fptgen_generator::render::GenInfo,
    r: &'a SynthReport,
    part_name: &'a str,
}

impl ReportMd<'_> {
    fn pct(&self, x: impl std::borrow::Borrow<f64>) -> String {
        format!("{:.2}%", x.borrow())
    }

    fn fmt2(&self, x: impl std::borrow::Borrow<f64>) -> String {
        format!("{:.2}", x.borrow())
    }

    fn fmt0(&self, x: impl std::borrow::Borrow<f64>) -> String {
        format!("{:.0}", x.borrow())
    }

    /// The model's clock in MHz.
    fn clock_mhz(&self) -> String {
        format!("{:.0}", 1000.0 / self.r.clock_period_ns)
    }
}

/// The report files: `reports/synth.md` and `reports/synth.json`
/// (`synth_trainer.*` for the trainer alone).
pub fn report_files(
    r: &SynthReport,
    gen: &fptgen_generator::render::GenInfo,
    part_name: &str,
) -> Result<Vec<fptgen_generator::render::GeneratedFile>, askama::Error> {
    use askama::Template;
    let md = ReportMd { gen, r, part_name }.render()?;
    let json = serde_json::to_string_pretty(r).map_err(|e| askama::Error::Custom(Box::new(e)))?;
    let base = if r.trainer_only { SynthScope::Trainer } else { SynthScope::Design }.report();
    Ok(vec![
        fptgen_generator::render::GeneratedFile::text(format!("reports/{base}.md"), md),
        fptgen_generator::render::GeneratedFile::text(format!("reports/{base}.json"), json),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A crash leaves nothing in yosys's log, so the error says how the
    /// process ended: real processes that exit with a code and that die of
    /// a signal.
    #[test]
    fn exit_descriptions_name_codes_and_signals() {
        let run = |script: &str| Command::new("sh").args(["-c", script]).status().unwrap();
        assert_eq!(exit_description(&run("exit 3")), "exit code 3");
        assert_eq!(exit_description(&run("kill -SEGV $$")), "killed by signal 11 (SIGSEGV)");
        assert_eq!(exit_description(&run("kill -KILL $$")), "killed by signal 9 (SIGKILL: out of memory?)");
    }

    /// A hand-written `stat` output in yosys 0.23's layout: `top` holds two
    /// `leaf` (one parameterization) and one `mid`, which holds three `leaf`
    /// of another parameterization.
    const STAT: &str = r"
=== $paramod$aaa\leaf ===

   Number of wires:                  3
   Number of cells:                  3
     FDRE                            2
     LUT2                            1

=== $paramod$bbb\leaf ===

   Number of cells:                  2
     CARRY4                          1
     LUT6                            1

=== mid ===

   Number of cells:                  5
     $paramod$bbb\leaf               3
     RAMB18E2                        1
     RAM32M16                        1

=== top ===

   Number of cells:                  4
     $paramod$aaa\leaf               2
     DSP48E2                         1
     mid                             1

=== design hierarchy ===

   top                               1
     $paramod$aaa\leaf               2
     mid                             1
       $paramod$bbb\leaf             3

   Number of wires:                 10
   Number of cells:                 14
     CARRY4                          3
     DSP48E2                         1
     FDRE                            4
     LUT2                            2
     LUT6                            3
     RAM32M16                        1
     RAMB18E2                        1
";

    #[test]
    fn stat_is_read_per_module_and_in_total() {
        let (modules, total, carry) = parse_stat(STAT, "top").unwrap();
        assert_eq!(carry, "CARRY4");
        let get = |n: &str| modules.iter().find(|m| m.name == n).unwrap().clone();
        // leaf: 2 of the first kind (2 FF, 1 LUT each) and 3 of the second (1 carry, 1 LUT).
        let leaf = get("leaf");
        assert_eq!(leaf.instances, 5);
        assert_eq!((leaf.own.ffs, leaf.own.luts, leaf.own.carry), (4, 2 + 3, 3));
        assert_eq!(leaf.inclusive, leaf.own);
        // mid: one RAMB18, one RAM32M16 (8 LUTs), plus three leaves inside.
        let mid = get("mid");
        assert_eq!((mid.instances, mid.own.ramb18, mid.own.lutram, mid.own.luts), (1, 1, 8, 0));
        assert_eq!((mid.inclusive.luts, mid.inclusive.carry, mid.inclusive.ramb18), (3, 3, 1));
        // top: its DSP, with everything below it: the design's totals.
        let top = get("top");
        assert_eq!((top.own.dsps, top.own.luts), (1, 0));
        assert_eq!(top.inclusive, total);
        assert_eq!((total.luts, total.ffs, total.carry, total.dsps, total.ramb18, total.lutram), (5, 4, 3, 1, 1, 8));
        assert_eq!(total.bram36(), 0.5);
    }

    #[test]
    fn a_design_without_submodules_has_no_hierarchy_section() {
        let text = "=== top ===\n\n   Number of cells:   2\n     LUT1   1\n     FDSE   1\n";
        let (modules, total, _) = parse_stat(text, "top").unwrap();
        assert_eq!((modules.len(), total.luts, total.ffs), (1, 1, 1));
    }

    #[test]
    fn parameterized_modules_have_their_base_names() {
        assert_eq!(base_name("$paramod$0123abcd\\fptgen_cast"), "fptgen_cast");
        assert_eq!(base_name("$paramod\\fptgen_po2\\S_W=s32'00000000000000000000000000100001"), "fptgen_po2");
        assert_eq!(base_name("tiny_fc1"), "tiny_fc1");
        assert_eq!(base_name("\\tiny"), "tiny");
    }

    #[test]
    fn ltp_length_is_read() {
        assert_eq!(parse_ltp("\n2. Executing LTP pass.\nLongest topological path in top (length=35):\n  0: x\n"), Some(35));
        assert_eq!(parse_ltp("nothing here"), None);
    }
}
