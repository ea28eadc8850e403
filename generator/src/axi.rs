//! The AXI wrapper of a design (`fptgen generate --axi`): AXI4-Stream data
//! ports, an AXI4-Stream sample-load port (designs with a trainer) and an
//! AXI4-Lite register map, planned here from the network's plan and the
//! user's options, and rendered from `templates/axi_*` into
//! `rtl/<name>_axi.v`, `driver/` (C header, C driver, markdown register
//! table), `sim/axi_*` (the co-simulation through the wrapper) and
//! `vivado/package_ip.tcl`.

use askama::Template;
use serde::Serialize;

use crate::plan::NetworkPlan;
use crate::render::{GenInfo, GeneratedFile};
use crate::train_plan::TrainTensor;

/// AXI4-Stream's widest TDATA in bits (the AXI4-Stream specification's
/// limit, and the widest a Vivado interface infers).
pub const MAX_TDATA: usize = 1024;

/// `ID`'s value: "FPTG" in ASCII.
pub const ID: u32 = 0x4650_5447;

/// Byte offset of the first trainable tensor's window.
pub const WINDOW_BASE: u64 = 0x1000;

/// The user's AXI options.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AxiOptions {
    /// TDATA bits of the data streams (`--axi-width`, a multiple of 8 up to
    /// [`MAX_TDATA`]); `None`: a beat of the core's stream padded to bytes.
    pub width: Option<usize>,
    /// TLAST after every `batch` vectors (`--axi-batch`, at least 1).
    pub batch: u32,
}

impl Default for AxiOptions {
    fn default() -> Self {
        AxiOptions { width: None, batch: 1 }
    }
}

/// Why AXI options do not fit a design.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AxiError {
    /// A stream's beat is wider than AXI4-Stream allows and no width was given.
    #[error("the AXI4-Stream {stream} would carry {bits} bits per beat (TDATA {tdata} bits), above AXI4-Stream's {MAX_TDATA}-bit limit; give --axi-width W (a multiple of 8 from 8 to {MAX_TDATA}) to split each beat into transfers of W bits")]
    TooWide {
        /// Which stream.
        stream: &'static str,
        /// The core's beat.
        bits: usize,
        /// Its TDATA padded to bytes.
        tdata: usize,
    },
    /// `--axi-width` is not a multiple of 8 from 8 to 1024.
    #[error("--axi-width is {0}; it must be a multiple of 8 from 8 to {MAX_TDATA} (TDATA bits)")]
    BadWidth(usize),
    /// `--axi-batch` is 0.
    #[error("--axi-batch is 0; it must be at least 1 (vectors per TLAST)")]
    ZeroBatch,
    /// The sample-load stream would be wider than 1024 bits.
    #[error("the AXI4-Stream sample-load port would be {0} bits wide (a buffer word and a target, each padded to bytes), above AXI4-Stream's {MAX_TDATA}-bit limit; the AXI wrapper does not split sample words yet")]
    LoadTooWide(usize),
    /// A trainable parameter is wider than an AXI4-Lite word.
    #[error("trainable tensor {0} has {1}-bit parameters; the AXI4-Lite weight window holds parameters of at most 32 bits")]
    ParamTooWide(String, u32),
}

/// One register of the AXI4-Lite map.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Reg {
    /// Name (the C header's `<NAME>_REG_<name>`).
    pub name: &'static str,
    /// Byte offset.
    pub offset: u32,
    /// `R`, `W` or `RW`.
    pub access: &'static str,
    /// What it holds.
    pub desc: String,
}

/// A trainable tensor's window in the AXI4-Lite address space: word `w`,
/// column `c` at `base + ((w << col_w) | c) * 4`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Window {
    /// The tensor (training order, layer, key, widths).
    pub t: TrainTensor,
    /// Byte offset of word 0, column 0.
    pub base: u64,
    /// log2 of the window's size in bytes (`addr_w + col_w + 2`).
    pub shift: usize,
    /// Memory words.
    pub depth: usize,
    /// Parameters per word.
    pub mem_cols: usize,
    /// The memory image's file (`mem/...`).
    pub file: String,
}

impl Window {
    /// `<LAYER>_<KEY>` in capitals (C names).
    pub fn upper(&self) -> String {
        self.t.port().to_uppercase()
    }
}

/// The trainer's part of the wrapper.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AxiTrainer {
    /// A feedback rule's trainer (no member or loss status), else ES.
    pub feedback: bool,
    /// Bits of a buffer word (`ld_x`) and words per input vector.
    pub word_w: usize,
    /// Words per input vector.
    pub words: usize,
    /// Bits of a target (`ld_t`).
    pub target_w: usize,
    /// Bit offset of the target in the sample-load TDATA (the word padded to bytes).
    pub target_at: usize,
    /// Sample-load TDATA bits.
    pub ld_bus: usize,
    /// Buffered samples (M).
    pub m: usize,
    /// Bits of `st_group` (ES) or `st_sample` (feedback).
    pub group_w: usize,
    /// Bits of `st_member` (ES; 0 for feedback).
    pub member_w: usize,
    /// Bits of `mon_index` and of `mon_param` (ES) or `mon_value` (feedback).
    pub mon_index_w: usize,
    /// Bits of the monitored value.
    pub mon_value_w: u32,
    /// The trainable tensors' windows, in training order.
    pub windows: Vec<Window>,
    /// Widths of the trainer top's host port.
    pub host: crate::train_plan::HostWidths,
}

/// The wrapper's plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AxiPlan {
    /// The core's module (the design's top) and the wrapper's (`<name>_axi`).
    pub core: String,
    /// The wrapper's module.
    pub module: String,
    /// Elements and bits of an input and an output vector.
    pub inputs: usize,
    /// Output elements.
    pub outputs: usize,
    /// Element widths and signedness.
    pub in_w: u32,
    /// Output element width.
    pub out_w: u32,
    /// Input format signed (0 or 1).
    pub in_signed: u32,
    /// Output format signed.
    pub out_signed: u32,
    /// Bits of a beat of the core's input and output streams.
    pub core_in: usize,
    /// Bits of an output beat of the core.
    pub core_out: usize,
    /// Core beats per vector.
    pub core_in_beats: usize,
    /// Core output beats per vector.
    pub core_out_beats: usize,
    /// TDATA bits of `s_axis` and `m_axis`.
    pub bus_in: usize,
    /// `m_axis` TDATA bits.
    pub bus_out: usize,
    /// AXI transfers per core beat.
    pub in_k: usize,
    /// AXI output transfers per core beat.
    pub out_k: usize,
    /// TLAST after every `batch` vectors.
    pub batch: u32,
    /// The registers, by offset.
    pub regs: Vec<Reg>,
    /// AXI4-Lite address bits.
    pub addr_w: usize,
    /// The trainer's part.
    pub trainer: Option<AxiTrainer>,
    /// fptgen's version as `major << 16 | minor << 8 | patch`.
    pub version: u32,
    /// Trainer ports of a design without a trainer (trainable memories
    /// with no training section), tied off: `<layer>_<key>`, address,
    /// column and data bits.
    pub tied: Vec<(String, usize, usize, u32)>,
}

fn bytes(bits: usize) -> usize {
    bits.div_ceil(8) * 8
}

fn clog2(x: u64) -> usize {
    let mut w = 0;
    while (1u64 << w) < x {
        w += 1;
    }
    w
}

/// fptgen's version as `major << 16 | minor << 8 | patch`.
pub fn version_word() -> u32 {
    let mut p = crate::VERSION.split('.').map(|s| s.parse::<u32>().unwrap_or(0));
    let (a, b, c) = (p.next().unwrap_or(0), p.next().unwrap_or(0), p.next().unwrap_or(0));
    (a & 0xffff) << 16 | (b & 0xff) << 8 | (c & 0xff)
}

fn bus(stream: &'static str, core: usize, width: Option<usize>) -> Result<(usize, usize), AxiError> {
    match width {
        Some(w) => Ok((w, core.div_ceil(w))),
        None if bytes(core) > MAX_TDATA => Err(AxiError::TooWide { stream, bits: core, tdata: bytes(core) }),
        None => Ok((bytes(core), 1)),
    }
}

impl AxiPlan {
    /// Plans the wrapper of `n` with `opts`, or says which option does not fit.
    pub fn new(n: &NetworkPlan, opts: &AxiOptions) -> Result<AxiPlan, AxiError> {
        if let Some(w) = opts.width {
            if w == 0 || w % 8 != 0 || w > MAX_TDATA {
                return Err(AxiError::BadWidth(w));
            }
        }
        if opts.batch == 0 {
            return Err(AxiError::ZeroBatch);
        }
        let core_in_beats = n.in_port_beats;
        let core_out_beats = if n.training.is_some() { 1 } else { n.out_beats };
        let core_in = n.in_bits() / core_in_beats;
        let core_out = n.out_bits() / core_out_beats;
        let (bus_in, in_k) = bus("input", core_in, opts.width)?;
        let (bus_out, out_k) = bus("output", core_out, opts.width)?;
        let trainer = Self::trainer(n)?;
        let regs = registers(trainer.as_ref());
        let end = trainer.as_ref().and_then(|t| t.windows.last()).map_or(0x100, |w| w.base + (1u64 << w.shift));
        Ok(AxiPlan {
            core: n.name.clone(),
            module: format!("{}_axi", n.name),
            inputs: n.inputs,
            outputs: n.outputs,
            in_w: n.x.width,
            out_w: n.y.width,
            in_signed: n.x.signed,
            out_signed: n.y.signed,
            core_in,
            core_out,
            core_in_beats,
            core_out_beats,
            bus_in,
            bus_out,
            in_k,
            out_k,
            batch: opts.batch,
            regs,
            addr_w: clog2(end),
            tied: if trainer.is_some() {
                Vec::new()
            } else {
                n.layers
                    .iter()
                    .flat_map(|l| l.trainable().into_iter().map(move |m| (format!("{}_{}", l.name, m.key), m.addr_w(), m.col_w(), m.format.width)))
                    .collect()
            },
            trainer,
            version: version_word(),
        })
    }

    fn trainer(n: &NetworkPlan) -> Result<Option<AxiTrainer>, AxiError> {
        let (feedback, tensors, m, words, word_w, group_w, member_w, mon_index_w, mon_value_w) = match (&n.trainer, &n.feedback) {
            (Some(t), _) => (false, &t.tensors, t.m, t.words, t.word_w, t.group_w, t.member_w, t.index_w(), t.param_w),
            (None, Some(f)) => (true, &f.tensors, f.m, f.words, f.word_w, f.sample_w, 0, f.ix_w, f.value_w),
            _ => return Ok(None),
        };
        let target_at = bytes(word_w);
        let ld_bus = target_at + bytes(n.out_bits());
        if ld_bus > MAX_TDATA {
            return Err(AxiError::LoadTooWide(ld_bus));
        }
        let mut windows = Vec::new();
        let mut next = WINDOW_BASE;
        for t in tensors {
            if t.width > 32 {
                return Err(AxiError::ParamTooWide(t.port(), t.width));
            }
            let (depth, mem_cols, file) = n
                .layers
                .iter()
                .find(|l| l.name == t.layer)
                .and_then(|l| l.trainable().into_iter().find(|m| m.key == t.key).map(|m| (m.mem.depth, m.mem.cols, m.mem.file.clone())))
                .unwrap_or((1, 1, String::new()));
            let shift = t.addr_w + t.col_w + 2;
            let base = next.div_ceil(1u64 << shift) << shift;
            next = base + (1u64 << shift);
            windows.push(Window { t: t.clone(), base, shift, depth, mem_cols, file });
        }
        Ok(Some(AxiTrainer {
            feedback,
            word_w,
            words,
            target_w: n.out_bits(),
            target_at,
            ld_bus,
            m,
            group_w,
            member_w,
            mon_index_w,
            mon_value_w,
            host: crate::train_plan::host_widths(tensors),
            windows,
        }))
    }

    /// Cycles per vector through the wrapper at full rate: the design's
    /// initiation interval, or the transfers of a vector on the busier
    /// stream when they take longer (split beats go at one transfer per
    /// cycle, back to back).
    pub fn ii(&self, n: &NetworkPlan) -> u64 {
        let stream_in = (self.in_k * self.core_in_beats) as u64;
        let stream_out = (self.out_k * self.core_out_beats) as u64;
        n.ii.max(stream_in).max(stream_out)
    }

    /// Cycles from the first input transfer taken to the last output
    /// transfer valid: the design's latency, plus the gathering of a beat's
    /// first `in_k - 1` transfers, plus with split outputs the scatter
    /// register (one cycle) and the beat's other `out_k - 1` transfers.
    pub fn latency(&self, n: &NetworkPlan) -> u64 {
        let gather = self.in_k as u64 - 1;
        let scatter = if self.out_k > 1 { self.out_k as u64 } else { 0 };
        n.latency + gather + scatter
    }

    /// Whether [`AxiPlan::ii`] and [`AxiPlan::latency`] are exact (the
    /// co-simulation compares them): every beat one transfer, or each
    /// vector one beat of the design's streams each way. With several
    /// beats per vector split into several transfers, how the design's
    /// own stalls interleave with the gathering is not modelled; they are
    /// then bounds.
    pub fn cycles_exact(&self) -> bool {
        (self.in_k == 1 && self.out_k == 1) || (self.core_in_beats == 1 && self.core_out_beats == 1)
    }

    /// The register called `name`'s offset (the templates' lookups).
    pub fn reg(&self, name: &str) -> u32 {
        self.regs.iter().find(|r| r.name == name).map_or(u32::MAX, |r| r.offset)
    }

    /// `TRAINER`'s value: 0 none, 1 ES, 2 a feedback rule; trainable
    /// tensors in bits [15:8].
    pub fn trainer_word(&self) -> u32 {
        match &self.trainer {
            None => 0,
            Some(t) => (if t.feedback { 2 } else { 1 }) | (t.windows.len() as u32) << 8,
        }
    }

    /// `FORMATS`'s value.
    pub fn formats_word(&self) -> u32 {
        self.in_w | self.out_w << 8 | self.in_signed << 16 | self.out_signed << 17
    }

    /// `STREAM_IN`'s value: transfers per vector [15:0], TDATA bytes [31:16].
    pub fn stream_in_word(&self) -> u32 {
        (self.in_k * self.core_in_beats) as u32 | ((self.bus_in / 8) as u32) << 16
    }

    /// `STREAM_OUT`'s value.
    pub fn stream_out_word(&self) -> u32 {
        (self.out_k * self.core_out_beats) as u32 | ((self.bus_out / 8) as u32) << 16
    }

    /// The readable registers (access `R` or `RW`) as the template's
    /// register read multiplexer takes them: lower-case name (the
    /// template's `rd_<name>` wire) and word address, the last register
    /// first (a Verilog concatenation puts its first element highest).
    pub fn read_regs(&self) -> Vec<(String, u32)> {
        self.regs.iter().rev().filter(|r| r.access.contains('R')).map(|r| (r.name.to_lowercase(), r.offset / 4)).collect()
    }

    /// The library files the wrapper instantiates (`rtl/`), besides the
    /// design's own ([`crate::render::library`]).
    pub fn library(&self) -> Vec<crate::rtl::RtlFile> {
        let mut v = crate::rtl::AXI.to_vec();
        if self.trainer.is_some() {
            v.extend_from_slice(crate::rtl::AXI_TRAINER);
        }
        v
    }

    /// Names of the wrapper's RTL files in compile order: its library
    /// files, then the wrapper.
    pub fn rtl_files(&self) -> Vec<String> {
        let mut v: Vec<String> = self.library().iter().map(|(f, _)| f.to_string()).collect();
        v.push(format!("{}.v", self.module));
        v
    }

    /// The design's name in capitals (the C macros' prefix).
    pub fn upper(&self) -> String {
        self.core.to_uppercase()
    }

    /// A constant register's value as 8 hex digits: `id`, `version`,
    /// `formats`, `stream_in`, `stream_out` or `trainer`.
    pub fn hex32(&self, which: &str) -> String {
        let v = match which {
            "id" => ID,
            "version" => self.version,
            "formats" => self.formats_word(),
            "stream_in" => self.stream_in_word(),
            "stream_out" => self.stream_out_word(),
            _ => self.trainer_word(),
        };
        format!("{v:08x}")
    }
}

/// The register map (offsets in bytes; the trainer's only with a trainer).
fn registers(t: Option<&AxiTrainer>) -> Vec<Reg> {
    let r = |name, offset, access, desc: &str| Reg { name, offset, access, desc: desc.to_string() };
    let mut v = vec![
        r("ID", 0x00, "R", "0x46505447 (\"FPTG\"): an fptgen design"),
        r("VERSION", 0x04, "R", "the fptgen version that generated it: major [31:16], minor [15:8], patch [7:0]"),
        r("INPUTS", 0x08, "R", "elements of an input vector"),
        r("OUTPUTS", 0x0C, "R", "elements of an output vector"),
        r("FORMATS", 0x10, "R", "input element bits [7:0], output element bits [15:8], input signed [16], output signed [17]"),
        r("STREAM_IN", 0x14, "R", "s_axis transfers per input vector [15:0], its TDATA bytes [31:16]"),
        r("STREAM_OUT", 0x18, "R", "m_axis transfers per output vector [15:0], its TDATA bytes [31:16]"),
        r("BATCH", 0x1C, "R", "m_axis TLAST marks the last transfer of every BATCH-th vector"),
        r("TRAINER", 0x20, "R", "0: inference only, 1: ES trainer, 2: feedback-rule trainer [7:0]; trainable tensors [15:8]"),
    ];
    if let Some(t) = t {
        v.extend([
            r("CONTROL", 0x40, "W", "write 1 to bit 0: start (when idle or done), bit 1: pause, bit 2: resume (one-cycle pulses; reads 0)"),
            r("STATUS", 0x44, "R", "busy [0], paused [1], done [2], weights readable now (neither busy nor starting, or paused) [3], weights writable now (neither busy nor starting) [4]"),
            r("ITERATIONS", 0x48, "RW", "iterations a start trains (cfg_iterations; 0 after reset)"),
            r("ITERATION", 0x4C, "R", "iterations completed (st_iteration)"),
            r("GROUP", 0x50, "R", if t.feedback { "the current sample (st_sample)" } else { "the current group (st_group)" }),
            r("MEMBER", 0x54, "R", if t.feedback { "0 (a feedback rule has no population)" } else { "the current member (st_member)" }),
            r("LAST_LOSS", 0x58, "R", if t.feedback { "0 (a feedback rule reports deltas, not losses)" } else { "the last loss measured (st_last_loss)" }),
            r("EVENTS0", 0x5C, "R", if t.feedback { "deltas (mon kind 0) since the last start" } else { "member losses (mon kind 0) since the last start" }),
            r("EVENTS1", 0x60, "R", if t.feedback { "parameters written (mon kind 1) since the last start" } else { "baseline losses (mon kind 1) since the last start" }),
            r("EVENTS2", 0x64, "R", if t.feedback { "0" } else { "updates (mon kind 2) since the last start" }),
            r("LOADED", 0x68, "R", "sample-load transfers accepted since reset"),
        ]);
    }
    v
}

#[derive(Template)]
#[template(path = "axi_top.v")]
struct AxiTopTemplate<'a> {
    gen: &'a GenInfo,
    a: &'a AxiPlan,
}

#[derive(Template)]
#[template(path = "axi_regs.h", escape = "none")]
struct RegsHeaderTemplate<'a> {
    gen: &'a GenInfo,
    a: &'a AxiPlan,
}

#[derive(Template)]
#[template(path = "axi_driver.h", escape = "none")]
struct DriverHeaderTemplate<'a> {
    gen: &'a GenInfo,
    a: &'a AxiPlan,
}

#[derive(Template)]
#[template(path = "axi_driver.c", escape = "none")]
struct DriverTemplate<'a> {
    gen: &'a GenInfo,
    a: &'a AxiPlan,
}

#[derive(Template)]
#[template(path = "axi_registers.md", escape = "none")]
struct RegsMdTemplate<'a> {
    gen: &'a GenInfo,
    a: &'a AxiPlan,
}

#[derive(Template)]
#[template(path = "axi_lite.h", escape = "none")]
struct LiteTemplate<'a> {
    gen: &'a GenInfo,
    a: &'a AxiPlan,
}

#[derive(Template)]
#[template(path = "axi_train_harness.cpp", escape = "none")]
struct TrainHarnessTemplate<'a> {
    gen: &'a GenInfo,
    a: &'a AxiPlan,
    n: &'a NetworkPlan,
    iteration_cycles: u64,
}

#[derive(Template)]
#[template(path = "package_ip.tcl", escape = "none")]
struct PackageIpTemplate<'a> {
    gen: &'a GenInfo,
    a: &'a AxiPlan,
    n: &'a NetworkPlan,
    rtl_files: Vec<String>,
}

/// The wrapper's files: its library modules (`rtl/fptgen_axis_*.v`,
/// `rtl/fptgen_axil_*.v`, [`AxiPlan::library`]), `rtl/<name>_axi.v`, `driver/<name>_regs.h`,
/// `driver/<name>_driver.h`, `driver/<name>_driver.c`,
/// `driver/registers.md`, `sim/axi_lite.h`, `sim/axi_harness.cpp` (the
/// inference harness through the wrapper), with a trainer
/// `sim/axi_train_harness.cpp`, and `vivado/package_ip.tcl`.
pub fn render(n: &NetworkPlan, a: &AxiPlan, gen: &GenInfo) -> Result<Vec<GeneratedFile>, askama::Error> {
    let name = &n.name;
    let mut files: Vec<GeneratedFile> = a.library().iter().map(|(f, text)| GeneratedFile::text(format!("rtl/{f}"), text.to_string())).collect();
    files.extend([
        GeneratedFile::text(format!("rtl/{}.v", a.module), AxiTopTemplate { gen, a }.render()?),
        GeneratedFile::text(format!("driver/{name}_regs.h"), RegsHeaderTemplate { gen, a }.render()?),
        GeneratedFile::text(format!("driver/{name}_driver.h"), DriverHeaderTemplate { gen, a }.render()?),
        GeneratedFile::text(format!("driver/{name}_driver.c"), DriverTemplate { gen, a }.render()?),
        GeneratedFile::text("driver/registers.md", RegsMdTemplate { gen, a }.render()?),
        GeneratedFile::text("sim/axi_lite.h", LiteTemplate { gen, a }.render()?),
        GeneratedFile::text("sim/axi_harness.cpp", crate::render::harness_cpp(n, gen, Some(a))?),
    ]);
    if a.trainer.is_some() {
        files.push(GeneratedFile::text("sim/axi_train_harness.cpp", TrainHarnessTemplate {
                gen,
                a,
                n,
                iteration_cycles: n
                    .trainer
                    .as_ref()
                    .map(|t| t.cycles_per_iteration)
                    .or(n.feedback.as_ref().map(|f| f.cycles_per_iteration_max))
                    .unwrap_or(0),
            }
            .render()?));
    }
    let mut rtl_files = crate::render::rtl_files(n);
    rtl_files.extend(a.rtl_files());
    files.push(GeneratedFile::text("vivado/package_ip.tcl", PackageIpTemplate { gen, a, n, rtl_files }.render()?));
    Ok(files)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tiny() -> NetworkPlan {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/tiny/model.yaml");
        crate::plan::plan(&fptgen_sim::model::load(&path).expect("tiny"))
    }

    #[test]
    fn tiny_streams_windows_and_registers() {
        let a = AxiPlan::new(&tiny(), &AxiOptions::default()).expect("fits");
        // 2 inputs and 2 outputs of 8 bits: one 16-bit transfer each way.
        assert_eq!((a.bus_in, a.in_k, a.bus_out, a.out_k), (16, 1, 16, 1));
        let t = a.trainer.as_ref().expect("trainer");
        // fc1's weights: 1 word of 4 columns (2 address bits for the
        // columns, 1 for the word: 32 bytes); its biases: 1 word of 2 (16 bytes).
        let w: Vec<(u64, usize)> = t.windows.iter().map(|w| (w.base, w.shift)).collect();
        assert_eq!(w, [(0x1000, 5), (0x1020, 4)]);
        // The sample-load stream: a 16-bit word, then the 16-bit target.
        assert_eq!((t.target_at, t.ld_bus), (16, 32));
        assert_eq!(a.addr_w, 13);
        let mut offsets: Vec<u32> = a.regs.iter().map(|r| r.offset).collect();
        assert!(offsets.iter().all(|o| o % 4 == 0 && u64::from(*o) < WINDOW_BASE));
        offsets.dedup();
        assert_eq!(offsets.len(), a.regs.len());
    }

    #[test]
    fn options_that_do_not_fit_are_refused() {
        let n = tiny();
        let split = AxiPlan::new(&n, &AxiOptions { width: Some(8), batch: 3 }).expect("fits");
        assert_eq!((split.bus_in, split.in_k, split.out_k, split.batch), (8, 2, 2, 3));
        for w in [0, 12, 1032] {
            assert_eq!(AxiPlan::new(&n, &AxiOptions { width: Some(w), batch: 1 }), Err(AxiError::BadWidth(w)));
        }
        assert_eq!(AxiPlan::new(&n, &AxiOptions { width: None, batch: 0 }), Err(AxiError::ZeroBatch));
    }

    #[test]
    fn split_transfers_have_their_cycles_in_the_model() {
        let n = tiny();
        // One 16-bit transfer each way: the core's cycles.
        let a = AxiPlan::new(&n, &AxiOptions::default()).expect("fits");
        assert!(a.cycles_exact());
        assert_eq!((a.ii(&n), a.latency(&n)), (n.ii, n.latency));
        // Two 8-bit transfers each way, back to back: II 2 (the streams'
        // rate, above the core's 1); latency + 1 (the gathered transfer)
        // + 2 (the scatter register, then the second transfer). `cosim
        // --axi --axi-width 8` measures the same (tests/axi.rs).
        let a = AxiPlan::new(&n, &AxiOptions { width: Some(8), batch: 1 }).expect("fits");
        assert!(a.cycles_exact());
        assert_eq!((n.ii, a.ii(&n), a.latency(&n)), (1, 2, n.latency + 3));
    }
}
