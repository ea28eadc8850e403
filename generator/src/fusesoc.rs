//! The design's FuseSoC core (`<name>.core`, CAPI2; issue 39): the RTL,
//! its include file and the memory images as filesets, with the targets
//! `lint` (Verilator), `sim` (Icarus Verilog with the cocotb bench of the
//! AXI wrapper, [`crate::cocotb`], when the design has one), and `synth`
//! (Vivado, the model's part, with the design's XDC) or, for a Lattice
//! ECP5 part, `pnr` (edalize's trellis flow: yosys, nextpnr-ecp5, ecppack).
//!
//! The file lists come from the files rendered for the design, so the core
//! names every generated RTL file and memory image (tests/fusesoc.rs reads
//! it back as YAML and compares).

use askama::Template;

use crate::plan::NetworkPlan;
use crate::render::{GenInfo, GeneratedFile};

/// The cocotb bench's part of the core.
#[derive(Debug, Clone)]
pub struct BenchFiles {
    /// The Python module (`test_<name>_axi`).
    pub module: String,
    /// Its files under `cocotb/` (the module and its expected data).
    pub files: Vec<String>,
}

/// An ECP5 part's nextpnr options.
#[derive(Debug, Clone)]
pub struct Ecp5Options {
    /// nextpnr-ecp5's device option without dashes (`85k`).
    pub size: &'static str,
    /// Package (`CABGA381`).
    pub package: &'static str,
    /// Speed grade.
    pub speed: u8,
    /// The model's clock in MHz.
    pub mhz: String,
}

/// What the core template needs.
#[derive(Debug, Clone)]
pub struct CorePlan {
    /// The design's name (its top without the wrapper).
    pub design: String,
    /// `fptgen:design:<name>:<fptgen version>`.
    pub vlnv: String,
    /// The simulated and linted top: the AXI wrapper, else the design.
    pub top: String,
    /// Include files (`rtl/*.vh`).
    pub includes: Vec<String>,
    /// Verilog modules in compile order (`rtl/*.v`).
    pub rtl: Vec<String>,
    /// Memory images (`mem/...`).
    pub mem: Vec<String>,
    /// The cocotb bench (designs with the AXI wrapper).
    pub bench: Option<BenchFiles>,
    /// The model's part.
    pub part: String,
    /// The model's clock period in ns.
    pub period: String,
    /// The ECP5 options when the part is an ECP5 that nextpnr serves.
    pub ecp5: Option<Ecp5Options>,
    /// The bench's module name (for the header).
    pub module_py: String,
}

#[derive(Template)]
#[template(path = "fusesoc.core", escape = "none")]
struct CoreTemplate<'a> {
    gen: &'a GenInfo,
    c: &'a CorePlan,
}

/// The core's file name: `<name>.core`.
pub fn core_path(n: &NetworkPlan) -> String {
    format!("{}.core", n.name)
}

/// Plans the core of design `n` from its rendered `files` (the wrapper's
/// module is `top` when it has one, with the bench `bench`).
pub fn plan(n: &NetworkPlan, files: &[GeneratedFile], top: Option<&str>, bench: Option<BenchFiles>) -> CorePlan {
    let paths: Vec<String> = files.iter().map(|f| f.path.to_string_lossy().replace('\\', "/")).collect();
    let under = |dir: &str, ext: &str| -> Vec<String> { paths.iter().filter(|p| p.starts_with(dir) && p.ends_with(ext)).cloned().collect() };
    let mut mem = under("mem/", "");
    mem.sort();
    let ecp5 = crate::part::ecp5(&n.part).ok().flatten().map(|p| Ecp5Options {
        size: p.size,
        package: p.package,
        speed: p.speed,
        mhz: format!("{:.2}", 1000.0 / n.clock_period_ns),
    });
    CorePlan {
        design: n.name.clone(),
        vlnv: format!("fptgen:design:{}:{}", n.name, crate::VERSION),
        top: top.unwrap_or(&n.name).to_string(),
        includes: under("rtl/", ".vh"),
        rtl: under("rtl/", ".v"),
        mem,
        module_py: bench.as_ref().map_or(String::new(), |b| b.module.clone()),
        bench,
        part: n.part.clone(),
        period: format!("{}", n.clock_period_ns),
        ecp5,
    }
}

/// Renders `<name>.core`.
pub fn render(c: &CorePlan, gen: &GenInfo) -> Result<GeneratedFile, askama::Error> {
    Ok(GeneratedFile::text(format!("{}.core", c.design), CoreTemplate { gen, c }.render()?))
}
