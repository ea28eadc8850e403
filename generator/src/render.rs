//! Rendering a plan into files: Verilog from askama templates, the RTL
//! library verbatim, memory images, the Verilator harness and the reports.


use askama::Template;
use fptgen_sim::weights::Params;

use crate::plan::{LayerPlan, NetworkPlan};
use crate::rtl::{self, RtlFile};
use crate::fb_plan::FbHwPlan;
use crate::train_plan::TrainHwPlan;

pub use fptgen_sim::files::GeneratedFile;

/// The library files a design uses, each once: the shared include file,
/// the files its layers' kinds name, in layer order, and the trainer's.
pub fn library(n: &NetworkPlan) -> Vec<RtlFile> {
    let mut v = vec![rtl::CLOG2];
    for f in n.layers.iter().flat_map(|l| l.hw().library()) {
        if !v.iter().any(|x| x.0 == f.0) {
            v.push(*f);
        }
    }
    if !n.wiring.forks.is_empty() {
        v.push(rtl::FORK);
    }
    if !n.wiring.joins.is_empty() {
        v.push(rtl::CONCAT);
    }
    if n.wiring.layers.iter().any(|w| w.skid.is_some()) {
        v.push(rtl::SKID);
    }
    if n.training.is_some() {
        v.extend_from_slice(if n.feedback.is_some() { rtl::FEEDBACK } else { rtl::TRAINER });
        if n.feedback.as_ref().is_some_and(|f| f.has_sgm()) {
            v.push(rtl::SGM);
        }
        if n.trainer.as_ref().is_some_and(|t| t.diff.is_some()) {
            for f in std::iter::once(&rtl::CAST).chain(rtl::DIFF) {
                if !v.iter().any(|x| x.0 == f.0) {
                    v.push(*f);
                }
            }
        }
        // A conv2d's module sees its output image as one vector.
        if n.feedback.as_ref().is_some_and(|f| f.layers.iter().any(|l| l.sgm.is_some() && l.conv.is_some())) {
            for f in crate::layers::flatten::LIBRARY {
                if !v.iter().any(|x| x.0 == f.0) {
                    v.push(*f);
                }
            }
        }
        if n.in_port_beats != n.in_beats {
            v.push(rtl::SERIALIZE);
        }
    }
    v
}

/// What every generated file's header says about its origin.
#[derive(Debug, Clone)]
pub struct GenInfo {
    /// fptgen's version.
    pub version: &'static str,
    /// The model file, as given.
    pub source: String,
}

/// A layer and its connections, as the top level wires it.
#[derive(Debug, Clone)]
pub struct LayerView<'a> {
    /// The layer's plan.
    pub l: &'a LayerPlan,
    /// The streams it takes and gives.
    pub w: &'a crate::wiring::LayerWires,
}

fn views(n: &NetworkPlan) -> Vec<LayerView<'_>> {
    n.layers.iter().zip(&n.wiring.layers).map(|(l, w)| LayerView { l, w }).collect()
}

#[derive(Template)]
#[template(path = "top.v")]
struct TopTemplate<'a> {
    gen: &'a GenInfo,
    n: &'a NetworkPlan,
    module_name: String,
    layers: &'a [LayerView<'a>],
}

#[derive(Template)]
#[template(path = "es_top.v")]
struct EsTopTemplate<'a> {
    gen: &'a GenInfo,
    n: &'a NetworkPlan,
    t: &'a TrainHwPlan,
}

#[derive(Template)]
#[template(path = "fb_top.v")]
struct FbTopTemplate<'a> {
    gen: &'a GenInfo,
    n: &'a NetworkPlan,
    t: &'a FbHwPlan,
}

#[derive(Template)]
#[template(path = "harness_common.h")]
struct HarnessCommonTemplate<'a> {
    gen: &'a GenInfo,
    n: &'a NetworkPlan,
}

#[derive(Template)]
#[template(path = "harness.cpp")]
struct HarnessTemplate<'a> {
    gen: &'a GenInfo,
    n: &'a NetworkPlan,
    tied_inputs: Vec<String>,
    /// The stream ports' names.
    p: HarnessPorts,
    /// Output beats per vector of the design's top.
    core_out_beats: usize,
    /// Port transfers per beat and their bits.
    in_per: usize,
    out_per: usize,
    in_bus: usize,
    out_bus: usize,
    /// The AXI wrapper, when the harness drives it.
    axi: Option<&'a crate::axi::AxiPlan>,
}

/// The names of the stream ports a harness drives.
struct HarnessPorts {
    in_data: &'static str,
    in_valid: &'static str,
    in_ready: &'static str,
    out_data: &'static str,
    out_valid: &'static str,
    out_ready: &'static str,
}

/// Inputs the inference harness holds at 0: the trainer ports of a design
/// without a trainer, or the trainer's controls.
fn tied_inputs(n: &NetworkPlan) -> Vec<String> {
    if n.training.is_some() {
        ["ld_valid", "ctl_start", "ctl_pause", "ctl_resume", "cfg_iterations", "host_en"].map(String::from).to_vec()
    } else {
        n.layers
            .iter()
            .flat_map(|l| l.trainable().into_iter().map(move |m| (l, m)))
            .flat_map(|(l, m)| ["tr_en", "tr_we", "tr_addr", "tr_col", "tr_wdata"].map(|s| format!("{}_{}_{s}", l.name, m.key)))
            .collect()
    }
}

/// The inference harness (`sim/harness.cpp`), or with `axi` the same
/// harness through the AXI wrapper (`sim/axi_harness.cpp`).
pub fn harness_cpp(n: &NetworkPlan, gen: &GenInfo, axi: Option<&crate::axi::AxiPlan>) -> Result<String, askama::Error> {
    let t = match axi {
        None => HarnessTemplate {
            gen,
            n,
            tied_inputs: tied_inputs(n),
            p: HarnessPorts {
                in_data: "in_data",
                in_valid: "in_valid",
                in_ready: "in_ready",
                out_data: "out_data",
                out_valid: "out_valid",
                out_ready: "out_ready",
            },
            core_out_beats: n.out_beats,
            in_per: 1,
            out_per: 1,
            in_bus: n.in_bits() / n.in_port_beats,
            out_bus: n.out_bits() / n.out_beats,
            axi,
        },
        Some(a) => HarnessTemplate {
            gen,
            n,
            tied_inputs: Vec::new(),
            p: HarnessPorts {
                in_data: "s_axis_tdata",
                in_valid: "s_axis_tvalid",
                in_ready: "s_axis_tready",
                out_data: "m_axis_tdata",
                out_valid: "m_axis_tvalid",
                out_ready: "m_axis_tready",
            },
            core_out_beats: a.core_out_beats,
            in_per: a.in_k,
            out_per: a.out_k,
            in_bus: a.bus_in,
            out_bus: a.bus_out,
            axi,
        },
    };
    t.render()
}

#[derive(Template)]
#[template(path = "train_harness.cpp")]
struct TrainHarnessTemplate<'a> {
    gen: &'a GenInfo,
    n: &'a NetworkPlan,
    h: TrainHarness,
}

/// What the training harness needs of either trainer.
struct TrainHarness {
    /// The feedback trainer (its events and status), else ES.
    feedback: bool,
    /// Buffered samples, words per input vector and their width.
    m: usize,
    words: usize,
    word_w: usize,
    /// Bits of the logged value (`mon_param` or `mon_value`).
    value_w: u32,
    /// An upper bound on an iteration's cycles.
    iteration_cycles: u64,
}

impl TrainHarness {
    fn of(n: &NetworkPlan) -> Option<TrainHarness> {
        if let Some(t) = &n.trainer {
            return Some(TrainHarness {
                feedback: false,
                m: t.m,
                words: t.words,
                word_w: t.word_w,
                value_w: t.param_w,
                iteration_cycles: t.cycles_per_iteration,
            });
        }
        n.feedback.as_ref().map(|t| TrainHarness {
            feedback: true,
            m: t.m,
            words: t.words,
            word_w: t.word_w,
            value_w: t.value_w,
            iteration_cycles: t.cycles_per_iteration_max,
        })
    }
}

#[derive(Template)]
#[template(path = "build.sh")]
struct BuildTemplate<'a> {
    gen: &'a GenInfo,
    n: &'a NetworkPlan,
    rtl_files: Vec<String>,
    /// With the AXI wrapper's builds.
    axi: bool,
    /// The AXI wrapper's RTL files (its library modules and the wrapper).
    axi_files: Vec<String>,
}

#[derive(Template)]
#[template(path = "design.xdc")]
struct XdcTemplate<'a> {
    gen: &'a GenInfo,
    n: &'a NetworkPlan,
    io_percent: u32,
    io_delay_ns: f64,
}

impl XdcTemplate<'_> {
    fn fmt1(&self, x: impl std::borrow::Borrow<f64>) -> String {
        format!("{:.1}", x.borrow())
    }

    fn fmt3(&self, x: impl std::borrow::Borrow<f64>) -> String {
        format!("{:.3}", x.borrow())
    }
}

#[derive(Template)]
#[template(path = "vivado_build.tcl")]
struct VivadoTemplate<'a> {
    gen: &'a GenInfo,
    n: &'a NetworkPlan,
    rtl_files: Vec<String>,
}

#[derive(Template)]
#[template(path = "synth.ys")]
struct YosysTemplate<'a> {
    gen: &'a GenInfo,
    n: &'a NetworkPlan,
    rtl_files: Vec<String>,
    trainer_only: bool,
    script: &'a str,
    prefix: &'a str,
}

/// A yosys estimate `fptgen synth` can run: the whole design, or the ES
/// trainer alone (the inference pipeline a black box).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SynthScope {
    /// Everything.
    Design,
    /// The trainer without the pipeline it wraps (designs with a trainer).
    Trainer,
}

impl SynthScope {
    /// The script, relative to the design directory.
    pub fn script(self) -> &'static str {
        match self {
            SynthScope::Design => "synth/synth.ys",
            SynthScope::Trainer => "synth/trainer.ys",
        }
    }

    /// Prefix of the files the script writes (`stat.txt`, `ltp.txt`,
    /// `netlist.json`) and of the reports.
    pub fn prefix(self) -> &'static str {
        match self {
            SynthScope::Design => "synth/",
            SynthScope::Trainer => "synth/trainer_",
        }
    }

    /// The report's base name under `reports/`.
    pub fn report(self) -> &'static str {
        match self {
            SynthScope::Design => "synth",
            SynthScope::Trainer => "synth_trainer",
        }
    }
}

/// Share of the clock period that the XDC leaves to the logic outside an
/// out-of-context block, on each side (input and output delay).
pub const IO_DELAY_PERCENT: u32 = 20;

#[derive(Template)]
#[template(path = "report.md")]
struct ReportMdTemplate<'a> {
    gen: &'a GenInfo,
    n: &'a NetworkPlan,
}

impl ReportMdTemplate<'_> {
    fn fmt1(&self, x: f64) -> String {
        format!("{x:.1}")
    }

    fn fmt0(&self, x: f64) -> String {
        format!("{x:.0}")
    }

    /// Microseconds of `cycles` at the model's clock.
    fn us(&self, cycles: impl std::borrow::Borrow<u64>) -> f64 {
        *cycles.borrow() as f64 * self.n.clock_period_ns / 1000.0
    }
}

#[derive(Template)]
#[template(path = "report.json")]
struct ReportJsonTemplate {
    json: String,
}

/// The machine-readable report (`report.json`).
#[derive(Debug, serde::Serialize)]
pub struct Report<'a> {
    /// fptgen version that wrote it.
    pub fptgen_version: &'a str,
    /// Model file.
    pub model: &'a str,
    /// Inferences per second at the model's clock.
    pub inferences_per_second: f64,
    /// Latency in ns at the model's clock.
    pub latency_ns: f64,
    /// The full plan (layers, formats, folding, cycles, memories, and the
    /// trainer with its schedule).
    pub network: &'a NetworkPlan,
}

/// Names of the RTL files of a design (its modules; not the include file
/// `fptgen_clog2.vh`), in compile order.
pub fn rtl_files(n: &NetworkPlan) -> Vec<String> {
    let mut v: Vec<String> = library(n).iter().map(|(f, _)| f.to_string()).filter(|f| rtl::is_module(f)).collect();
    v.extend(n.layers.iter().map(|l| format!("{}.v", l.module)));
    if n.training.is_some() {
        v.push(format!("{}_net.v", n.name));
    }
    v.push(format!("{}.v", n.name));
    v
}

/// The design's `report.md` alone (as [`render`] writes it).
pub fn report_md(n: &NetworkPlan, gen: &GenInfo) -> Result<GeneratedFile, askama::Error> {
    Ok(GeneratedFile::text("report.md", ReportMdTemplate { gen, n }.render()?))
}

/// Renders every file of the output directory for the plan `n` of a model
/// with `params`.
pub fn render(params: &Params, n: &NetworkPlan, gen: &GenInfo) -> Result<Vec<GeneratedFile>, askama::Error> {
    render_with(params, n, gen, None)
}

/// [`render`], with the AXI wrapper's files ([`crate::axi::render`]) when
/// `axi` is given.
pub fn render_with(params: &Params, n: &NetworkPlan, gen: &GenInfo, axi: Option<&crate::axi::AxiPlan>) -> Result<Vec<GeneratedFile>, askama::Error> {
    let mut files = Vec::new();
    for (name, text) in library(n) {
        files.push(GeneratedFile::text(format!("rtl/{name}"), text.to_string()));
    }
    let views = views(n);
    for l in &n.layers {
        files.push(GeneratedFile::text(format!("rtl/{}.v", l.module), l.hw().module(l, gen)?));
    }
    let trainer = n.trainer.as_ref();
    let has_trainer = n.training.is_some();
    let module_name = if has_trainer { format!("{}_net", n.name) } else { n.name.clone() };
    files.push(GeneratedFile::text(
        format!("rtl/{module_name}.v"),
        TopTemplate { gen, n, module_name: module_name.clone(), layers: &views }.render()?,
    ));
    if let Some(t) = trainer {
        files.push(GeneratedFile::text(format!("rtl/{}.v", n.name), EsTopTemplate { gen, n, t }.render()?));
    }
    if let Some(t) = &n.feedback {
        files.push(GeneratedFile::text(format!("rtl/{}.v", n.name), FbTopTemplate { gen, n, t }.render()?));
        for l in t.layers.iter().filter_map(|l| l.sgm.as_ref()) {
            let images = l.images().ok_or_else(|| askama::Error::Custom("rule sgm: a synthetic-gradient module's codes were not attached (fb_plan::attach_sgm)".into()))?;
            for (file, text) in images {
                files.push(GeneratedFile::text(file, text));
            }
        }
    }
    for (l, p) in n.layers.iter().zip(&params.layers) {
        for m in &l.memories {
            for (file, text) in m.image_files(&p.tensors[m.tensor]) {
                files.push(GeneratedFile::text(file, text));
            }
        }
    }
    files.push(GeneratedFile::text("sim/harness_common.h", HarnessCommonTemplate { gen, n }.render()?));
    files.push(GeneratedFile::text("sim/harness.cpp", harness_cpp(n, gen, None)?));
    if let Some(a) = axi {
        files.extend(crate::axi::render(n, a, gen)?);
    }
    if let Some(h) = TrainHarness::of(n) {
        files.push(GeneratedFile::text("sim/train_harness.cpp", TrainHarnessTemplate { gen, n, h }.render()?));
    }
    let io_delay_ns = n.clock_period_ns * f64::from(IO_DELAY_PERCENT) / 100.0;
    files.push(GeneratedFile::text(
        format!("constraints/{}.xdc", n.name),
        XdcTemplate { gen, n, io_percent: IO_DELAY_PERCENT, io_delay_ns }.render()?,
    ));
    files.push(GeneratedFile::text("vivado/build.tcl", VivadoTemplate { gen, n, rtl_files: rtl_files(n) }.render()?));
    for scope in [SynthScope::Design, SynthScope::Trainer] {
        if scope == SynthScope::Trainer && !has_trainer {
            continue;
        }
        let mut files_read = rtl_files(n);
        if scope == SynthScope::Trainer {
            files_read.retain(|f| *f != format!("{}_net.v", n.name));
        }
        let t = YosysTemplate {
            gen,
            n,
            rtl_files: files_read,
            trainer_only: scope == SynthScope::Trainer,
            script: scope.script(),
            prefix: scope.prefix(),
        };
        files.push(GeneratedFile::text(scope.script(), t.render()?));
    }
    let mut build = GeneratedFile::text("sim/build.sh", BuildTemplate { gen, n, rtl_files: rtl_files(n), axi: axi.is_some(), axi_files: axi.map(|a| a.rtl_files()).unwrap_or_default() }.render()?);
    build.executable = true;
    files.push(build);
    let report = Report {
        fptgen_version: gen.version,
        model: &gen.source,
        inferences_per_second: n.inferences_per_second(),
        latency_ns: n.latency_ns(),
        network: n,
    };
    let json = serde_json::to_string_pretty(&report).map_err(|e| askama::Error::Custom(Box::new(e)))?;
    files.push(GeneratedFile::text("report.json", ReportJsonTemplate { json }.render()?));
    files.push(report_md(n, gen)?);
    Ok(files)
}
