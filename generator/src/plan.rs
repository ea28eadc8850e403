//! Lowering: from a validated model to a hardware plan with exact cycle
//! counts.
//!
//! Each layer becomes its kind's hardware ([`crate::layers`]), planned as a
//! kind-neutral [`LayerPlan`]: its cycles per vector (the layer's
//! initiation interval: it can accept a vector every that many cycles),
//! its latency (the edges from accepting an input vector to its output
//! being valid), and its parameter memories. Layers are chained by
//! valid/ready streams through a skid buffer (a registered ready,
//! `rtl/fptgen_skid.v`), and each hand-over between layers takes one edge
//! and the buffer one more. For a chain of dense layers, the network's
//! initiation interval is the largest layer's cycles per vector, and its
//! latency is `sum(latency) + 2 * (layers - 1)` cycles, from the edge that accepts an input vector to the
//! edge after which its output is valid (with the output always ready).
//! Image layers stream pixels in bursts, so in general both come from the
//! exact handshake model of [`crate::timing`], run as the co-simulation
//! harness runs the hardware; co-simulation measures both.

use fptgen_sim::fixed::{Format, Overflow, Quant};
use fptgen_sim::model::{Model, Source};
use serde::Serialize;

use crate::layers::{self, KindPlan, LayerHw, TensorMem};
use crate::timing::{self, blocks};
use crate::wiring::Wiring;
use crate::train_plan::{train_plan, TrainHwPlan};

/// Smallest width that can hold `0..n` (at least 1): `ceil(log2(n))`. The
/// RTL library's modules derive their widths with the same function
/// (`rtl/fptgen_clog2.vh`); the generator uses this one where a generated
/// port or wire has such a width.
pub fn clog2(n: u64) -> usize {
    let mut w = 1;
    while w < 64 && (1u64 << w) < n {
        w += 1;
    }
    w
}

/// A fixed-point format as the RTL library's parameters spell it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct HwFormat {
    /// Total width W.
    pub width: u32,
    /// Fraction bits F = W - I.
    pub frac: i32,
    /// 1 for two's complement, 0 for unsigned.
    pub signed: u32,
    /// Quantization mode code (see `rtl/fptgen_cast.v`).
    pub quant: u32,
    /// Overflow mode code (see `rtl/fptgen_cast.v`).
    pub ovf: u32,
    /// The canonical `ap_fixed` spelling, for comments and reports.
    pub name: String,
}

/// `fptgen_cast`'s code for a quantization mode.
pub fn quant_code(q: Quant) -> u32 {
    match q {
        Quant::Trn => 0,
        Quant::TrnZero => 1,
        Quant::Rnd => 2,
        Quant::RndZero => 3,
        Quant::RndMinInf => 4,
        Quant::RndInf => 5,
        Quant::RndConv => 6,
    }
}

/// `fptgen_cast`'s code for an overflow mode.
pub fn ovf_code(o: Overflow) -> u32 {
    match o {
        Overflow::Wrap => 0,
        Overflow::Sat => 1,
        Overflow::SatZero => 2,
        Overflow::SatSym => 3,
    }
}

impl std::fmt::Display for MemKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            MemKind::Rom => "ROM",
            MemKind::Ram => "RAM",
        })
    }
}

impl From<Format> for HwFormat {
    fn from(f: Format) -> Self {
        HwFormat {
            width: f.width(),
            frac: f.frac_bits(),
            signed: u32::from(f.signed()),
            quant: quant_code(f.quant()),
            ovf: ovf_code(f.overflow()),
            name: f.to_string(),
        }
    }
}

/// How a parameter memory is implemented.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum MemKind {
    /// Read-only, initialised with `$readmemh` (frozen parameters).
    Rom,
    /// RAM with a write port (trainable parameters).
    Ram,
}

/// One parameter memory: `depth` words of `cols` columns of `col_width` bits.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MemPlan {
    /// Number of words.
    pub depth: usize,
    /// Columns per word (one parameter each).
    pub cols: usize,
    /// Bits per column.
    pub col_width: u32,
    /// ROM or writable RAM.
    pub kind: MemKind,
    /// Vivado `ram_style`/`rom_style`: "block"; "distributed" for shallow
    /// trainable memories; "auto" for small frozen tables.
    pub style: &'static str,
    /// Image file, relative to the output directory.
    pub file: String,
    /// Columns per bank (`fptgen_param_mem`'s `BANK_COLS`): 0 for one
    /// memory read from `file`; otherwise banks of this many columns (the
    /// last may hold fewer), bank `b` read from [`MemPlan::bank_file`].
    pub bank_cols: usize,
}

/// The widest word of a bank, in bits: a block RAM's widest port (RAMB36E2
/// in simple dual-port mode, 72 bits).
pub const BANK_MAX_BITS: usize = 72;

impl MemPlan {
    /// Total bits stored.
    pub fn bits(&self) -> u64 {
        self.depth as u64 * self.cols as u64 * u64::from(self.col_width)
    }

    /// Banks of a trainable memory whose word is wider than
    /// [`BANK_MAX_BITS`]: as many columns per bank as fit (at least one).
    /// yosys cannot elaborate one memory with a write port per column when
    /// the word is thousands of bits wide (docs/hardware.md, "Parameter
    /// memories").
    pub fn bank_for_writes(&mut self) {
        let word = self.cols * self.col_width as usize;
        self.bank_cols = if word > BANK_MAX_BITS { (BANK_MAX_BITS / self.col_width as usize).max(1) } else { 0 };
    }

    /// Number of banks (1 for one memory).
    pub fn banks(&self) -> usize {
        if self.bank_cols == 0 { 1 } else { self.cols.div_ceil(self.bank_cols) }
    }

    /// Bank `b`'s columns.
    pub fn bank_range(&self, b: usize) -> std::ops::Range<usize> {
        if self.bank_cols == 0 {
            0..self.cols
        } else {
            b * self.bank_cols..((b + 1) * self.bank_cols).min(self.cols)
        }
    }

    /// Bank `b`'s image file: `<file>.bank<bbbb>.hex`, as `fptgen_param_mem`
    /// names it.
    pub fn bank_file(&self, b: usize) -> String {
        format!("{}.bank{b:04}.hex", self.file)
    }
}

/// The hardware plan of one layer, whatever its kind: what the rest of the
/// generator (the top level, the trainer, the reports) needs to know.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LayerPlan {
    /// Layer name from the model.
    pub name: String,
    /// Generated module name (`<network>_<layer>`).
    pub module: String,
    /// The kind: the model file's `type` (`dense`).
    pub kind: &'static str,
    /// Shape and operation (`dense 64x16`).
    pub op: String,
    /// Values per input vector.
    pub inputs: usize,
    /// Values per output vector.
    pub outputs: usize,
    /// Shape of the input (`[n]`, or an image `[h, w, c]`).
    pub input_shape: Vec<usize>,
    /// Shape of the output.
    pub output_shape: Vec<usize>,
    /// Multiply-accumulates per vector.
    pub macs: u64,
    /// Cycles per input vector: the layer's initiation interval.
    pub cycles: u64,
    /// Edges from accepting an input vector to its output being valid.
    pub latency: u64,
    /// Input format.
    pub x: HwFormat,
    /// Output format.
    pub y: HwFormat,
    /// The parameter memories, one per tensor of the kind, in the kind's
    /// tensor order.
    pub memories: Vec<TensorMem>,
    /// The kind-specific part (its fields appear next to these in
    /// `report.json`).
    #[serde(flatten)]
    pub kind_plan: KindPlan,
}

impl LayerPlan {
    /// The kind's hardware.
    pub fn hw(&self) -> &dyn LayerHw {
        self.kind_plan.hw()
    }

    /// The trainable tensors' memories, in the kind's tensor order.
    pub fn trainable(&self) -> Vec<&TensorMem> {
        self.memories.iter().filter(|m| m.trainable).collect()
    }

    /// Beats per input vector (docs/hardware.md, "Streams of images").
    pub fn in_beats(&self) -> usize {
        beats(&self.input_shape)
    }

    /// Beats per output vector.
    pub fn out_beats(&self) -> usize {
        beats(&self.output_shape)
    }

    /// Width of the input stream (one beat) in bits.
    pub fn in_beat_bits(&self) -> usize {
        self.inputs / self.in_beats() * self.x.width as usize
    }

    /// Width of the output stream (one beat) in bits.
    pub fn out_beat_bits(&self) -> usize {
        self.outputs / self.out_beats() * self.y.width as usize
    }
}

/// Beats of a stream of values shaped `shape`: an image `[h, w, c]` streams
/// one pixel (its `c` values) per beat, a vector is one beat.
pub fn beats(shape: &[usize]) -> usize {
    match shape {
        [h, w, _] => h * w,
        _ => 1,
    }
}

/// The training schedule of a model with a `training:` section.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TrainingPlan {
    /// T, trainable parameters.
    pub trainable_params: u64,
    /// P, incremental-training blocks.
    pub blocks: usize,
    /// N, population per group.
    pub population: usize,
    /// G = ceil(T / P), groups per iteration.
    pub groups: u64,
    /// Forward passes per iteration per buffered image: G * N (plus G
    /// unperturbed passes with baseline fitness); seed 003's Table II figure.
    pub forward_passes_per_iteration_per_image: u64,
    /// Clock cycles of one iteration on the generated trainer, every
    /// overhead included (`crate::train_plan`); co-simulation measures it.
    pub cycles_per_iteration: u64,
    /// One iteration in microseconds at the model's clock.
    pub iteration_us: f64,
}

/// A layer of the model file split by the channel limit (docs/numerics.md,
/// "Channel split").
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SplitNote {
    /// The model file's layer.
    pub layer: String,
    /// The layers it became, in order; the last keeps its name.
    pub parts: Vec<String>,
}

/// The hardware plan of a whole network.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NetworkPlan {
    /// Network (top module) name.
    pub name: String,
    /// FPGA part.
    pub part: String,
    /// Clock period in ns.
    pub clock_period_ns: f64,
    /// Values per input vector.
    pub inputs: usize,
    /// Values per output vector.
    pub outputs: usize,
    /// Input format.
    pub x: HwFormat,
    /// Output format.
    pub y: HwFormat,
    /// Layers, input to output.
    pub layers: Vec<LayerPlan>,
    /// Initiation interval in cycles (largest layer cycles).
    pub ii: u64,
    /// Latency in cycles (see the module documentation).
    pub latency: u64,
    /// Beats per input vector of the layer chain (`<name>_net` with a
    /// trainer): an image's pixels, or 1.
    pub in_beats: usize,
    /// Beats per input vector at the top level's port: `in_beats`, or 1
    /// when the trainer's top takes whole vectors and serializes them
    /// (`rtl/fptgen_serialize.v`).
    pub in_port_beats: usize,
    /// Beats per output vector.
    pub out_beats: usize,
    /// Vectors the co-simulation streams at full rate to measure II and
    /// latency: enough for the interval between outputs to be constant in
    /// the second half ([`crate::timing::settle`]).
    pub timing_vectors: usize,
    /// The top level's streams, forks and joins.
    pub wiring: Wiring,
    /// Batch norms after a dense or conv2d layer: folded into it, or kept
    /// and why ([`crate::fold`]; empty when the plan was made without
    /// folding).
    pub folds: Vec<crate::fold::FoldNote>,
    /// The model's channel limit (`max_channels`).
    pub max_channels: usize,
    /// The layers of the model file split by `max_channels`
    /// (`fptgen_sim::model::Model::splits`): each with the layers it became.
    pub splits: Vec<SplitNote>,
    /// The training schedule, if the model has a `training:` section.
    pub training: Option<TrainingPlan>,
    /// The on-chip ES trainer, if the model has a `training:` section with
    /// rule `es`.
    pub trainer: Option<TrainHwPlan>,
    /// The on-chip feedback-rule trainer, if the model has a `training:`
    /// section with rule `dfa`, `drtp` or `sgm` (at most one of the two trainers).
    pub feedback: Option<crate::fb_plan::FbHwPlan>,
    /// The trainer's added area, when `fptgen synth --trainer-only` has
    /// measured it with yosys (report.md then gives it; None after
    /// `generate`, which runs no synthesis).
    #[serde(skip)]
    pub trainer_area: Option<crate::part::Resources>,
}

impl NetworkPlan {
    /// Width of the input bus in bits.
    pub fn in_bits(&self) -> usize {
        self.inputs * self.x.width as usize
    }

    /// Width of the output bus in bits.
    pub fn out_bits(&self) -> usize {
        self.outputs * self.y.width as usize
    }

    /// Width of the layer chain's input stream (one beat) in bits.
    pub fn in_beat_bits(&self) -> usize {
        self.in_bits() / self.in_beats
    }

    /// Width of the top level's input port (one beat) in bits.
    pub fn in_port_bits(&self) -> usize {
        self.in_bits() / self.in_port_beats
    }

    /// Width of the output stream (one beat) in bits.
    pub fn out_beat_bits(&self) -> usize {
        self.out_bits() / self.out_beats
    }

    /// Inferences per second at the model's clock.
    pub fn inferences_per_second(&self) -> f64 {
        1e9 / (self.ii as f64 * self.clock_period_ns)
    }

    /// Initiation interval in ns at the model's clock.
    pub fn ii_ns(&self) -> f64 {
        self.ii as f64 * self.clock_period_ns
    }

    /// The model's clock frequency in MHz.
    pub fn clock_mhz(&self) -> f64 {
        1000.0 / self.clock_period_ns
    }

    /// Latency in ns at the model's clock.
    pub fn latency_ns(&self) -> f64 {
        self.latency as f64 * self.clock_period_ns
    }
}

/// Lowers a validated model to its hardware plan. Panics on a layer kind
/// without hardware: callers check [`crate::design::supported`] first.
pub fn plan(model: &Model) -> NetworkPlan {
    let mut layers: Vec<LayerPlan> = Vec::with_capacity(model.layers.len());
    for l in &model.layers {
        // The gathered input: channels concatenated per pixel, or vectors.
        let shapes: Vec<&[usize]> = l
            .inputs
            .iter()
            .map(|s| match *s {
                Source::Input => model.input_shape.as_slice(),
                Source::Layer(j) => layers[j].output_shape.as_slice(),
            })
            .collect();
        let shape = match shapes[..] {
            [one] => one.to_vec(),
            _ if shapes.iter().all(|s| s.len() == 3) => vec![shapes[0][0], shapes[0][1], shapes.iter().map(|s| s[2]).sum()],
            _ => vec![shapes.iter().map(|s| s.iter().product::<usize>()).sum()],
        };
        layers.push(layers::plan(model, l, &shape).expect("a layer kind with hardware (checked by design::supported)"));
    }
    let shape = layers.last().map_or(model.input_shape.clone(), |l| l.output_shape.clone());
    let in_beats = beats(&model.input_shape);
    let out_beats = beats(&shape);
    // The pipeline as the top level's ports see it: with a trainer, an
    // image input arrives as whole vectors through the serializer.
    let in_port_beats = if model.training.is_some() { 1 } else { in_beats };
    let serializer = (in_port_beats != in_beats).then(|| blocks::Serialize::new(in_beats).into());
    let in_bits = model.input_len() / in_beats * model.input_format.width() as usize;
    let mut wiring = Wiring::new(&layers, &sources(model), in_bits);
    let min_vectors = 2 * layers.len() + 8;
    wiring.size_fifos(&layers, serializer.clone(), in_port_beats, out_beats, min_vectors);
    let (timing_vectors, m) = timing::settle_graph(&wiring.graph(&layers, serializer), in_port_beats, out_beats, min_vectors);
    let (ii, latency) = (m.ii.unwrap_or(0), m.latency);
    let mut n = NetworkPlan {
        name: model.name.clone(),
        part: model.part.clone(),
        clock_period_ns: model.clock_period_ns,
        inputs: model.input_len(),
        outputs: model.output_len(),
        x: model.input_format.into(),
        y: model.output_format().into(),
        layers,
        ii,
        latency,
        in_beats,
        in_port_beats,
        out_beats,
        timing_vectors,
        wiring,
        folds: Vec::new(),
        max_channels: model.max_channels,
        splits: model.splits().into_iter().map(|(layer, parts)| SplitNote { layer, parts }).collect(),
        training: model.training.as_ref().map(|t| {
            let trainable = model.trainable_params();
            TrainingPlan {
                trainable_params: trainable,
                blocks: t.blocks,
                population: t.population,
                groups: t.groups(trainable),
                forward_passes_per_iteration_per_image: t.passes_per_iteration(trainable),
                cycles_per_iteration: 0,
                iteration_us: 0.0,
            }
        }),
        trainer: None,
        feedback: None,
        trainer_area: None,
    };
    n.trainer = train_plan(model, &n);
    n.feedback = crate::fb_plan::fb_plan(model, &n);
    let cycles = n.trainer.as_ref().map(|hw| hw.cycles_per_iteration).or(n.feedback.as_ref().map(|hw| hw.cycles_per_iteration_max));
    if let (Some(t), Some(cycles)) = (n.training.as_mut(), cycles) {
        t.cycles_per_iteration = cycles;
        t.iteration_us = cycles as f64 * model.clock_period_ns / 1000.0;
    }
    n
}

/// What feeds each layer of `model`, in gather order.
fn sources(model: &Model) -> Vec<Vec<crate::wiring::Source>> {
    model
        .layers
        .iter()
        .map(|l| {
            l.inputs
                .iter()
                .map(|s| match *s {
                    Source::Input => None,
                    Source::Layer(j) => Some(j),
                })
                .collect()
        })
        .collect()
}
