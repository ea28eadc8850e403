//! Lowering: from a validated model to a hardware plan with exact cycle
//! counts.
//!
//! A dense layer becomes a folded matrix-vector unit (in the spirit of FINN's
//! MVAU): `pe` output neurons in parallel, `simd` inputs per cycle, so one
//! input vector takes `NF * SF` cycles with `NF = ceil(outputs / pe)` neuron
//! folds and `SF = ceil(inputs / simd)` synapse folds. The timing model below
//! is the one `rtl/fptgen_dense.v` implements, and co-simulation measures it:
//!
//! * a layer accepts a vector on a clock edge, issues one (neuron fold,
//!   synapse fold) pair per cycle, and can accept the next vector on the edge
//!   that issues the last pair: its initiation interval is `NF * SF` cycles;
//! * the parameter memories are read synchronously (one cycle) and the
//!   accumulation takes one more, so a layer's output is valid `NF * SF + 1`
//!   edges after the edge that accepted its input;
//! * between layers the valid/ready handshake takes one edge.
//!
//! Hence the network's initiation interval is the largest layer's `NF * SF`,
//! and its latency is `sum(NF * SF + 1) + (layers - 1)` cycles, from the
//! edge that accepts an input vector to the edge after which its output is
//! valid (with the output always ready).

use fptgen_sim::fixed::{Format, Overflow, Quant};
use fptgen_sim::model::{Activation, LayerKind, Model, Trainable};
use serde::Serialize;

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
    /// Block RAM with a write port (trainable parameters).
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
    /// Vivado `ram_style`/`rom_style`: "block", or "auto" for small frozen tables.
    pub style: &'static str,
    /// Image file, relative to the output directory.
    pub file: String,
}

impl MemPlan {
    /// Total bits stored.
    pub fn bits(&self) -> u64 {
        self.depth as u64 * self.cols as u64 * u64::from(self.col_width)
    }
}

/// The hardware plan of one dense layer.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LayerPlan {
    /// Layer name from the model.
    pub name: String,
    /// Generated module name (`<network>_<layer>`).
    pub module: String,
    /// Inputs.
    pub inputs: usize,
    /// Outputs.
    pub outputs: usize,
    /// Output neurons in parallel.
    pub pe: usize,
    /// Inputs per cycle.
    pub simd: usize,
    /// Neuron folds `ceil(outputs / pe)`.
    pub nf: usize,
    /// Synapse folds `ceil(inputs / simd)`.
    pub sf: usize,
    /// Multiply-accumulates per vector.
    pub macs: u64,
    /// Cycles per input vector (`nf * sf`): the layer's initiation interval.
    pub cycles: u64,
    /// Cycles from accepting an input to a valid output (`cycles + 1`).
    pub latency: u64,
    /// 1 for relu, 0 for linear.
    pub relu: u32,
    /// Input format.
    pub x: HwFormat,
    /// Weight format.
    pub w: HwFormat,
    /// Bias format.
    pub b: HwFormat,
    /// Accumulator format.
    pub acc: HwFormat,
    /// Output format.
    pub y: HwFormat,
    /// Weight memory.
    pub wmem: MemPlan,
    /// Bias memory.
    pub bmem: MemPlan,
    /// Retrainable parameters.
    #[serde(skip)]
    pub trainable: Trainable,
}

impl LayerPlan {
    /// True if the layer has a parameter write port.
    pub fn writable(&self) -> bool {
        self.trainable.any()
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
    /// The training schedule, if the model has a `training:` section.
    pub training: Option<TrainingPlan>,
    /// The on-chip trainer, if the model has a `training:` section.
    pub trainer: Option<TrainHwPlan>,
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

/// Memories with at least this many bits go to block RAM; smaller frozen
/// ones are left to the tools ("auto"), where a BRAM would be mostly empty.
const BLOCK_MIN_BITS: u64 = 4096;

/// Lowers a validated model to its hardware plan.
pub fn plan(model: &Model) -> NetworkPlan {
    let layers: Vec<LayerPlan> = model
        .layers
        .iter()
        .map(|l| {
            let d = l.dense();
            let nf = d.outputs.div_ceil(d.pe);
            let sf = d.inputs.div_ceil(d.simd);
            let cycles = (nf * sf) as u64;
            let mem = |depth: usize, cols: usize, width: u32, writable: bool, suffix: &str| {
                let mut m = MemPlan {
                    depth,
                    cols,
                    col_width: width,
                    kind: if writable { MemKind::Ram } else { MemKind::Rom },
                    style: "auto",
                    file: format!("mem/{}_{suffix}.hex", l.name),
                };
                if writable || m.bits() >= BLOCK_MIN_BITS {
                    m.style = "block";
                }
                m
            };
            LayerPlan {
                name: l.name.clone(),
                module: format!("{}_{}", model.name, l.name),
                inputs: d.inputs,
                outputs: d.outputs,
                pe: d.pe,
                simd: d.simd,
                nf,
                sf,
                macs: d.macs(),
                cycles,
                latency: cycles + 1,
                relu: u32::from(d.activation == Activation::Relu),
                x: l.input_format.into(),
                w: d.precision.weight.into(),
                b: d.precision.bias.into(),
                acc: d.precision.accum.into(),
                y: d.precision.output.into(),
                wmem: mem(nf * sf, d.pe * d.simd, d.precision.weight.width(), d.trainable.weights, "w"),
                bmem: mem(nf, d.pe, d.precision.bias.width(), d.trainable.biases, "b"),
                trainable: d.trainable,
            }
        })
        .collect();
    let ii = layers.iter().map(|l| l.cycles).max().unwrap_or(1);
    let latency = layers.iter().map(|l| l.latency).sum::<u64>() + layers.len().saturating_sub(1) as u64;
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
    };
    n.trainer = train_plan(model, &n);
    if let (Some(t), Some(hw)) = (n.training.as_mut(), n.trainer.as_ref()) {
        t.cycles_per_iteration = hw.cycles_per_iteration;
        t.iteration_us = hw.cycles_per_iteration as f64 * model.clock_period_ns / 1000.0;
    }
    n
}
