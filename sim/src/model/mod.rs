//! The network description: what a model file says, validated.
//!
//! [`load`] reads and checks a model file; the resulting [`Model`] can only
//! describe a consistent network (shapes chain, folding divides nothing it
//! cannot, formats are valid), so code downstream never re-checks it.
//!
//! A model is a directed acyclic graph in topological order: each layer
//! takes the [`Gather`] of its [`Layer::inputs`] (by default the previous
//! layer's output), and the network's output is the last layer's. A chain
//! is the graph in which every layer takes the previous one.

mod load;
mod split;
pub mod schema;

pub use load::{load, parse};
pub(crate) use load::Checker;

pub use crate::layers::{
    Activation, Affine, BatchNorm, Concat, Conv2d, Dense, DenseInt8, Flatten, LayerKind, LayerOp, MaxPool2d, Precision, Requantize, Slice,
    Trainable,
};

use std::borrow::Cow;
use std::path::PathBuf;

use crate::fixed::Format;
use crate::weights::{LayerParams, Params};

/// The FPGA part used when a model file names none (seed 003's device).
pub const DEFAULT_PART: &str = "xcku035-fbva676-3-e";
/// The clock period used when a model file gives none, in ns (hls4ml's default).
pub const DEFAULT_CLOCK_PERIOD_NS: f64 = 5.0;
/// `max_channels` when a model file gives none.
pub const DEFAULT_MAX_CHANNELS: usize = 512;
/// Largest folding factor or layer dimension accepted.
pub const MAX_DIM: usize = 1 << 20;
/// The most values one layer's parameter tensor may hold (2^24, the bound
/// of the largest layer fptgen lowers itself), checked at load before
/// anything is drawn, read or simulated (docs/errors.md, "Budgets").
pub const MAX_TENSOR_VALUES: u64 = 1 << 24;

/// A validated network.
#[derive(Debug, Clone, PartialEq)]
pub struct Model {
    /// Network name, a valid Verilog identifier.
    pub name: String,
    /// FPGA part number.
    pub part: String,
    /// Target clock period in ns (finite, > 0).
    pub clock_period_ns: f64,
    /// `target_ii`: the cycles per input vector that `pe: auto` and
    /// `simd: auto` were chosen for (`docs/hardware.md`, "Folding").
    pub target_ii: Option<u64>,
    /// Shape of one input sample.
    pub input_shape: Vec<usize>,
    /// Format of every input value.
    pub input_format: Format,
    /// Weights archive, resolved relative to the model file.
    pub weights_path: PathBuf,
    /// The model file this came from.
    pub source: PathBuf,
    /// `training: sgm:`, resolved relative to the model file: the archive
    /// of the synthetic-gradient modules of `rule: sgm`
    /// ([`crate::train::sgm`]). It need not exist yet (`fptgen train --sgm`
    /// writes it).
    pub sgm_path: Option<PathBuf>,
    /// Where the model file writes `training: rule:`, for errors about the
    /// rule that other inputs trigger (e.g. `drtp` on data without labels).
    pub rule_at: Option<crate::error::Pos>,
    /// Most channels into or out of one conv2d layer, out of one dense
    /// layer (`max_channels`, default [`DEFAULT_MAX_CHANNELS`]); larger
    /// ones were split at load (`split`, [`PartOf`]).
    pub max_channels: usize,
    /// Layers, input to output (a topological order of the graph); never empty.
    pub layers: Vec<Layer>,
    /// On-device training, when the model file has a `training:` section
    /// (then at least one layer has trainable parameters).
    pub training: Option<Training>,
    /// The int8 interface, when the model file has an `interface:`
    /// section: the quantization of the network input, which every int8
    /// layer fed by the input matches bit for bit (checked at load).
    pub interface: Option<Interface>,
}

/// The int8 interface contract (issue 15): the quantization of the frozen
/// prefix's output, which is the network input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Interface {
    /// The scale and zero point.
    pub quantization: Affine,
    /// Where they come from, for summaries: `the model file` or
    /// `tensor 'x' of prefix.tflite`.
    pub from: String,
}

/// Where a layer's input comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Source {
    /// The network input (`input` in the model file).
    Input,
    /// The output of an earlier layer, by its index in [`Model::layers`].
    Layer(usize),
}

/// How a layer's inputs are gathered into the one vector its kind
/// receives: pixel by pixel, the values of input 0's pixel, then input 1's,
/// and so on (for images `[h, w, c_k]` of equal `h`, `w`: channel
/// concatenation, giving `[h, w, sum c_k]` in the streaming C order; for
/// vectors, one "pixel" holding each whole vector: plain concatenation).
/// One input is gathered as itself.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Gather {
    /// Per input, its values per pixel (channels of an image, the length of
    /// a vector).
    pub widths: Vec<usize>,
    /// Pixels of every input (1 for vectors).
    pub pixels: usize,
}

impl Gather {
    /// The gather of one input of `len` values.
    pub fn single(len: usize) -> Gather {
        Gather { widths: vec![len], pixels: 1 }
    }

    /// Values per gathered pixel.
    pub fn width(&self) -> usize {
        self.widths.iter().sum()
    }

    /// Number of gathered values.
    pub fn len(&self) -> usize {
        self.width() * self.pixels
    }

    /// True if there is nothing to gather.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Where value `j` of input `k` lands in the gathered vector.
    pub fn index(&self, k: usize, j: usize) -> usize {
        let w = self.widths[k];
        let offset: usize = self.widths[..k].iter().sum();
        (j / w) * self.width() + offset + j % w
    }

    /// The gathered vector of `parts` (one slice per input, in order).
    pub fn gather<T: Copy>(&self, parts: &[&[T]]) -> Vec<T> {
        let mut out = Vec::with_capacity(self.len());
        for p in 0..self.pixels {
            for (part, &w) in parts.iter().zip(&self.widths) {
                out.extend_from_slice(&part[p * w..(p + 1) * w]);
            }
        }
        out
    }

    /// The inverse of [`Gather::gather`]: input `k`'s values out of a
    /// gathered vector (for gradients flowing back).
    pub fn part<T: Copy>(&self, x: &[T], k: usize) -> Vec<T> {
        let (w, width) = (self.widths[k], self.width());
        let offset: usize = self.widths[..k].iter().sum();
        (0..self.pixels).flat_map(|p| x[p * width + offset..p * width + offset + w].iter().copied()).collect()
    }
}

/// What a layer that the model file wrote as another kind was lowered from
/// (seed 004's rewrites, done at load): its constant parameters, which are
/// generated from the definition, never read from the weights archive nor
/// trained.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Lowered {
    /// The model file's `type` (`add`).
    pub from: &'static str,
    /// The parameters of the layer it became, one vector per tensor.
    pub params: LayerParams,
}

/// A part of a conv2d or dense layer split at load by `max_channels`.
///
/// A layer with more output channels than `max_channels` becomes parts
/// `<name>_part<k>` over the same input, each with a contiguous range of
/// the filters (outputs), and a `concat` named `<name>` (exact: every
/// output channel is computed on its own).
///
/// A conv2d with more input channels than `max_channels` also splits its
/// input channels into groups ([`PartOf::inputs`]): `slice` layers take
/// each group, a partial convolution per group and filter range computes
/// the group's share of the sum in the layer's accumulator format (linear,
/// the bias in group 0 only), and a lowered 3x3 convolution (`from:
/// "sum"`) adds the partial sums and applies the layer's activation and
/// output cast. It is exact because the split is made only when the
/// layer's accumulation is (`crate::layers::dense::exact_accumulation`).
///
/// The parts' tensors are slices of the original layer's tensors, which the
/// weights archive holds under the original name: rows `first..` of every
/// tensor and, for the weights of a part of an input split, channels
/// `inputs.first..` of their last dimension; the bias of a part of a later
/// input group is the constant 0, in no archive.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct PartOf {
    /// The model file's layer name (that of the concat after the parts).
    pub layer: String,
    /// The first output channel of the part.
    pub first: usize,
    /// The original layer's output channels.
    pub total: usize,
    /// For a part of an input split, its input channels.
    pub inputs: Option<InputRange>,
}

/// The input channels of a part of a split layer ([`PartOf`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct InputRange {
    /// The first input channel.
    pub first: usize,
    /// Input channels of the part.
    pub count: usize,
    /// The original layer's input channels.
    pub total: usize,
}

impl PartOf {
    /// True for the part that draws the original layer's whole tensors
    /// when weights are made at random (the first in model order).
    pub fn is_first(&self) -> bool {
        self.first == 0 && self.inputs.is_none_or(|r| r.first == 0)
    }

    /// Where value `i` of the part's tensor number `tensor` (shaped
    /// `shape`) sits in the original layer's whole tensor (flat, C
    /// order), or None for a constant 0 (the bias of a later input group).
    /// Tensor 0 is the weights, whose last dimension is the input
    /// channels; the others have one value per output channel.
    pub fn whole_index(&self, tensor: usize, shape: &[usize], i: usize) -> Option<usize> {
        let rows = shape[0];
        let row = shape.iter().product::<usize>() / rows.max(1);
        match self.inputs {
            None => Some(self.first * row + i),
            Some(r) if tensor == 0 => {
                // [rows, taps.., count] within [total, taps.., r.total].
                let (c, rest) = (i % r.count, i / r.count);
                let taps = row / r.count;
                let (o, tap) = (rest / taps, rest % taps);
                Some(((self.first + o) * taps + tap) * r.total + r.first + c)
            }
            Some(r) if r.first == 0 => Some(self.first * row + i),
            Some(_) => None,
        }
    }

    /// The shape of the original layer's whole tensor number `tensor`,
    /// of which the part's is shaped `shape`.
    pub fn whole_shape(&self, tensor: usize, shape: &[usize]) -> Vec<usize> {
        let mut whole = shape.to_vec();
        whole[0] = self.total;
        if let (Some(r), 0) = (self.inputs, tensor) {
            *whole.last_mut().expect("a weight tensor has dimensions") = r.total;
        }
        whole
    }
}

/// One layer of the network.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Layer {
    /// Name, a valid Verilog identifier, unique in the model.
    pub name: String,
    /// What the layer computes.
    pub op: LayerOp,
    /// Format of the values the layer receives (the format every one of
    /// its inputs has).
    pub input_format: Format,
    /// What feeds the layer, in gather order (the model file's `inputs:`;
    /// by default the previous layer, or the network input for the first).
    /// Never empty; every source is earlier than the layer.
    pub inputs: Vec<Source>,
    /// How [`Layer::inputs`] are gathered into the kind's input.
    pub gather: Gather,
    /// Set when the layer was lowered from another kind at load.
    pub lowered: Option<Lowered>,
    /// Set when the layer is a part of a split layer.
    pub part_of: Option<PartOf>,
    /// The model file's layer whose channel split made this layer
    /// (`max_channels`, [`PartOf`]); None for the split's last layer, which
    /// keeps that name, and for every layer not made by a split.
    pub split_from: Option<String>,
}

impl Layer {
    /// The layer's kind.
    pub fn kind(&self) -> &dyn LayerKind {
        self.op.kind()
    }

    /// True if the layer takes only the previous layer's output (or, as
    /// layer `index` 0, the network input): a link of a chain.
    pub fn is_chained(&self, index: usize) -> bool {
        let prev = if index == 0 { Source::Input } else { Source::Layer(index - 1) };
        self.inputs == [prev]
    }

    /// The kind's description ([`LayerKind::describe`]), saying what a
    /// lowered layer was written as.
    pub fn describe(&self) -> String {
        match &self.lowered {
            None => self.kind().describe(),
            Some(l) => {
                let shape: Vec<String> = self.kind().output_shape().iter().map(usize::to_string).collect();
                let how = match &self.op {
                    LayerOp::Conv2d(c) => format!("concat + conv3x3 {}->{}", c.input[2], c.filters),
                    LayerOp::Dense(d) => format!("concat + dense {}->{}", d.inputs, d.outputs),
                    _ => self.kind().describe(),
                };
                format!("{} {} (lowered: {how})", l.from, shape.join("x"))
            }
        }
    }

    /// The layer as a dense layer, if it is one.
    pub fn as_dense(&self) -> Option<&Dense> {
        match &self.op {
            LayerOp::Dense(d) => Some(d),
            _ => None,
        }
    }

    /// Name of the tensor `key` (`w`, `b`, ...) in the weights archive:
    /// `<layer>/<key>`.
    pub fn tensor_name(&self, key: &str) -> String {
        format!("{}/{key}", self.name)
    }

    /// Name and shape in the weights archive of the layer's tensor number
    /// `index`, `t`: the layer's own ([`Layer::tensor_name`]) or, for a
    /// part of a split layer, the original layer's whole tensor (of which
    /// the part's is a slice, [`PartOf::whole_index`]).
    pub fn archive_tensor(&self, index: usize, t: &crate::layers::TensorSpec) -> (String, Vec<usize>) {
        match &self.part_of {
            None => (self.tensor_name(t.key), t.shape.clone()),
            Some(p) => (format!("{}/{}", p.layer, t.key), p.whole_shape(index, &t.shape)),
        }
    }

    /// True if the layer's tensor number `index` is a constant that
    /// fptgen makes, never read nor trained: every tensor of a lowered
    /// layer, and the zero bias of a part of a later input group
    /// ([`PartOf`]).
    pub fn is_constant(&self, index: usize) -> bool {
        self.lowered.is_some() || (index > 0 && self.part_of.as_ref().and_then(|p| p.inputs).is_some_and(|r| r.first > 0))
    }

    /// Name of the weight tensor in the weights archive.
    pub fn weight_tensor(&self) -> String {
        self.tensor_name("w")
    }

    /// Name of the bias tensor in the weights archive.
    pub fn bias_tensor(&self) -> String {
        self.tensor_name("b")
    }
}

/// LFSR width of the noise sources (`noise.width`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LfsrWidth {
    /// 8 bits, taps `0xB8`.
    W8,
    /// 16 bits, taps `0xB400`.
    W16,
    /// 32 bits, taps `0xA3000000`.
    W32,
}

impl LfsrWidth {
    /// The width in bits.
    pub fn bits(self) -> u32 {
        match self {
            LfsrWidth::W8 => 8,
            LfsrWidth::W16 => 16,
            LfsrWidth::W32 => 32,
        }
    }

    /// The width of `bits` bits, if it is a supported one.
    pub fn from_bits(bits: u64) -> Option<LfsrWidth> {
        match bits {
            8 => Some(LfsrWidth::W8),
            16 => Some(LfsrWidth::W16),
            32 => Some(LfsrWidth::W32),
            _ => None,
        }
    }
}

/// Distribution of one noise value (`noise.distribution`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Distribution {
    /// One fresh LFSR bit `o`: `e = o ? +1 : -1`.
    Rademacher,
    /// `b` fresh LFSR bits, the first as the least significant, read as a
    /// `b`-bit two's complement number.
    Uniform,
}

impl std::fmt::Display for Distribution {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Distribution::Rademacher => "rademacher",
            Distribution::Uniform => "uniform",
        })
    }
}

/// The noise sources of the training blocks (`noise:`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Noise {
    /// LFSR width.
    pub width: LfsrWidth,
    /// Distribution of a value.
    pub distribution: Distribution,
    /// Fresh bits per `uniform` value, `1..=width` (unused by `rademacher`).
    pub bits: u32,
}

/// The loss function (`loss`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Loss {
    /// Sum over samples and outputs of `|y - t|` in raw output codes, in an
    /// unsigned 32-bit accumulator that saturates.
    Mae,
}

impl std::fmt::Display for Loss {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("mae")
    }
}

/// How member losses become the signal that scales the noise (`fitness`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Fitness {
    /// Mirrored pairs `(+e, -e)`; signal `L(+e) - L(-e)`.
    Antithetic,
    /// Signal `L_m - L_base`, with `L_base` the unperturbed loss of the group.
    Baseline,
    /// Signal `L_m` (the paper's literal rule).
    Plain,
    /// Mirrored pairs `(+e, -e)` as [`Fitness::Antithetic`], the losses
    /// replaced by centered ranks (Salimans et al. 2017, fitness shaping):
    /// member `m`'s rank signal is `r_m = #{k : L_k < L_m} - #{k : L_k >
    /// L_m}` over the group's N members (twice its centered rank, ties
    /// sharing their mean rank), and a pair's signal is `r(+e) - r(-e)`;
    /// the step no longer depends on the loss's scale, and one outlier
    /// moves it no more than any other member ([`crate::train::fitness`]).
    Ranks,
}

impl Fitness {
    /// Whether the odd members mirror the member before (`(+e, -e)`
    /// pairs), which needs an even population.
    pub fn mirrored(self) -> bool {
        matches!(self, Fitness::Antithetic | Fitness::Ranks)
    }
}

impl std::fmt::Display for Fitness {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Fitness::Antithetic => "antithetic",
            Fitness::Baseline => "baseline",
            Fitness::Plain => "plain",
            Fitness::Ranks => "ranks",
        })
    }
}

/// How the fitness signal is quantized (`loss_quantization`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LossQuantization {
    /// `Q(s) = sign(s) * 2^floor(log2 |s|)`, `Q(0) = 0`: a shift, no multiplier.
    Po2,
    /// `Q(s) = s`.
    Exact,
}

impl std::fmt::Display for LossQuantization {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            LossQuantization::Po2 => "po2",
            LossQuantization::Exact => "exact",
        })
    }
}

/// The validated `training:` section: how the trainable parameters are
/// retrained on the device with evolution strategies (`docs/training.md`).
///
/// Invariants (checked by [`load`]): `population`, `blocks` and `buffer` are
/// between 1 and [`MAX_DIM`]; `iterations` is between 1 and `u32::MAX`;
/// `population` is even with a mirrored fitness ([`Fitness::mirrored`]); `noise.bits` is in
/// `1..=noise.width`; `perturb_shift` is at most 31 and `|lr_shift|` at most 31.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Training {
    /// The training rule: evolution strategies (the default) or a
    /// forward-only feedback rule (`docs/training.md`, "Feedback rules").
    pub rule: Rule,
    /// N, members per group.
    pub population: usize,
    /// k, passes over all groups.
    pub iterations: u64,
    /// P, incremental-training blocks (parameters perturbed at once).
    pub blocks: usize,
    /// M, training samples held on chip.
    pub buffer: usize,
    /// The noise sources.
    pub noise: Noise,
    /// sigma: a noise value `e` moves a parameter by `e << sigma` codes.
    pub perturb_shift: u32,
    /// The model file gave no `perturb_shift` (or `auto`): ES then derives
    /// it from the trained tensor's format
    /// ([`crate::train::steps::auto_perturb_shift`], by [`Training::resolve`]).
    pub perturb_shift_auto: bool,
    /// The update is the gradient accumulator divided by `2^lr_shift`, or
    /// multiplied by `2^-lr_shift` when `lr_shift` is negative (for wide
    /// parameter formats, whose codes are small).
    pub lr_shift: i32,
    /// The model file gave no `lr_shift` (or `auto`): [`Training::resolve`]
    /// derives it, for ES from the formats, N, M, the noise and the loss
    /// quantization ([`crate::train::steps::auto_lr_shift`]), for the
    /// feedback rules from the output format
    /// ([`crate::train::feedback::auto_lr_shift`]).
    pub lr_shift_auto: bool,
    /// The loss function.
    pub loss: Loss,
    /// The fitness signal.
    pub fitness: Fitness,
    /// Quantization of the fitness signal.
    pub loss_quantization: LossQuantization,
    /// Seeds every LFSR.
    pub seed: u64,
    /// How the feedback rules round a parameter's step (ES rounds to
    /// nearest).
    pub step_rounding: StepRounding,
    /// How the ES hardware evaluates a member (the generator's choice; the
    /// results are the same bits either way).
    pub evaluation: Evaluation,
}

/// How the ES trainer's hardware evaluates a member (`training:
/// evaluation:`, docs/training.md, "Evaluation by difference in
/// hardware"). Every mode gives the same losses; they differ in cycles.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Evaluation {
    /// [`Evaluation::Difference`] where the design allows it and the
    /// generator's cycle model finds it faster, else [`Evaluation::Full`].
    #[default]
    Auto,
    /// Every member on all M buffered samples through the whole pipeline.
    Full,
    /// Only the samples whose trained layer's output a member changes go
    /// through the pipeline; the others keep their committed losses.
    Difference,
}

impl Evaluation {
    /// The model file's name.
    pub fn name(self) -> &'static str {
        match self {
            Evaluation::Auto => "auto",
            Evaluation::Full => "full",
            Evaluation::Difference => "difference",
        }
    }
}

/// How a feedback rule rounds a parameter's step `v / 2^k`
/// (`training: step_rounding:`, `docs/training.md`, "Stochastic rounding").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum StepRounding {
    /// [`StepRounding::Stochastic`] for a trained tensor of at most 256
    /// codes (8 bits), where a step rounded to nearest is mostly 0;
    /// [`StepRounding::Nearest`] for wider ones.
    #[default]
    Auto,
    /// To the nearest integer, ties to even.
    Nearest,
    /// `floor((v + r) / 2^k)` with `r` fresh bits of an LFSR per tensor:
    /// unbiased, so steps below half a code still move the parameter on
    /// average.
    Stochastic,
}

impl StepRounding {
    /// The model file's name.
    pub fn name(self) -> &'static str {
        match self {
            StepRounding::Auto => "auto",
            StepRounding::Nearest => "nearest",
            StepRounding::Stochastic => "stochastic",
        }
    }

    /// Whether a tensor whose codes span `range` (inclusive) rounds its
    /// steps stochastically.
    pub fn stochastic(self, range: (i128, i128)) -> bool {
        match self {
            StepRounding::Auto => range.1 - range.0 < 256,
            StepRounding::Nearest => false,
            StepRounding::Stochastic => true,
        }
    }
}

/// How the device trains (`training: rule:`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Rule {
    /// Evolution strategies: perturbed members, loss differences, updates
    /// ([`crate::train::Trainer`]).
    #[default]
    Es,
    /// Direct random target projection: each trainable hidden layer's
    /// delta is a fixed random projection of the target class
    /// ([`crate::train::feedback`]).
    Drtp,
    /// Direct feedback alignment: a fixed random projection of the output
    /// error ([`crate::train::feedback`]).
    Dfa,
    /// Static synthetic-gradient modules: each trainable hidden layer's
    /// `g` is a small fixed linear network of its output and the target,
    /// pretrained on the host ([`crate::train::sgm`]).
    Sgm,
}

impl Rule {
    /// The model file's name of the rule.
    pub fn name(self) -> &'static str {
        match self {
            Rule::Es => "es",
            Rule::Drtp => "drtp",
            Rule::Dfa => "dfa",
            Rule::Sgm => "sgm",
        }
    }
}

impl Default for Training {
    /// The defaults of `docs/training.md`'s table.
    fn default() -> Self {
        Training {
            rule: Rule::Es,
            population: 100,
            iterations: 100,
            blocks: 1,
            buffer: 64,
            noise: Noise { width: LfsrWidth::W8, distribution: Distribution::Rademacher, bits: 4 },
            perturb_shift: 0,
            perturb_shift_auto: false,
            lr_shift: 4,
            lr_shift_auto: false,
            loss: Loss::Mae,
            fitness: Fitness::Antithetic,
            loss_quantization: LossQuantization::Po2,
            seed: 1,
            step_rounding: StepRounding::Auto,
            evaluation: Evaluation::Auto,
        }
    }
}

impl Training {
    /// Largest accepted `perturb_shift` and `|lr_shift|`.
    pub const MAX_SHIFT: u32 = 31;

    /// With `rule`, and the automatic steps resolved for it
    /// ([`Training::resolve`]).
    pub fn with_rule(self, rule: Rule, basis: Option<&crate::train::steps::StepBasis>) -> Training {
        Training { rule, ..self }.resolve(basis)
    }

    /// The automatic steps (`perturb_shift_auto`, `lr_shift_auto`)
    /// computed again for the rule, N, M, noise and loss quantization the
    /// section has now, on the network of `basis`
    /// ([`crate::train::steps::StepBasis::of`]); written steps are kept.
    /// ES: [`crate::train::steps`]; a feedback rule:
    /// [`crate::train::feedback::auto_lr_shift`] (its `perturb_shift` is
    /// unused and left as it is). Without a basis (no trainable tensor)
    /// nothing changes.
    pub fn resolve(self, basis: Option<&crate::train::steps::StepBasis>) -> Training {
        let Some(b) = basis else { return self };
        let mut t = self;
        if t.rule == Rule::Es {
            if t.perturb_shift_auto {
                t.perturb_shift = crate::train::steps::auto_perturb_shift(b);
            }
            if t.lr_shift_auto {
                t.lr_shift = crate::train::steps::auto_lr_shift(&t, b);
            }
        } else if t.lr_shift_auto {
            t.lr_shift = crate::train::feedback::auto_lr_shift_frac(b.feedback_output_frac);
        }
        t
    }

    /// Checks the invariants [`load`] guarantees, for a `Training` built in
    /// code; the message names the offending field.
    pub fn check(&self) -> Result<(), String> {
        let dim = 1..=MAX_DIM;
        if !dim.contains(&self.population) {
            return Err(format!("population is {}; it must be between 1 and {MAX_DIM}", self.population));
        }
        if self.fitness.mirrored() && self.population % 2 == 1 {
            return Err(format!("population is {}; fitness {} needs an even population", self.population, self.fitness));
        }
        if !(1..=u64::from(u32::MAX)).contains(&self.iterations) {
            return Err(format!("iterations is {}; it must be between 1 and {}", self.iterations, u32::MAX));
        }
        if !dim.contains(&self.blocks) {
            return Err(format!("blocks is {}; it must be between 1 and {MAX_DIM}", self.blocks));
        }
        if !dim.contains(&self.buffer) {
            return Err(format!("buffer is {}; it must be between 1 and {MAX_DIM}", self.buffer));
        }
        if !(1..=self.noise.width.bits()).contains(&self.noise.bits) {
            return Err(format!(
                "noise bits is {}; it must be between 1 and {} (the noise width)",
                self.noise.bits,
                self.noise.width.bits()
            ));
        }
        if self.perturb_shift > Self::MAX_SHIFT {
            return Err(format!("perturb_shift is {}; it must be between 0 and {}", self.perturb_shift, Self::MAX_SHIFT));
        }
        if self.lr_shift.unsigned_abs() > Self::MAX_SHIFT {
            return Err(format!("lr_shift is {}; it must be between -{m} and {m}", self.lr_shift, m = Self::MAX_SHIFT));
        }
        Ok(())
    }

    /// G, the number of groups for `trainable` parameters: `ceil(T / P)`.
    pub fn groups(&self, trainable: u64) -> u64 {
        trainable.div_ceil(self.blocks.max(1) as u64)
    }

    /// Forward passes over each buffered sample in one iteration with
    /// `trainable` parameters: `G * N`, plus `G` unperturbed passes with
    /// [`Fitness::Baseline`].
    pub fn passes_per_iteration(&self, trainable: u64) -> u64 {
        let per_group = self.population as u64 + u64::from(self.fitness == Fitness::Baseline);
        self.groups(trainable).saturating_mul(per_group)
    }
}

impl Model {
    /// The input of layer `l`: the gather of its sources' values, each
    /// given by `get` (borrowed when the layer has one input).
    pub fn layer_input<'a, T: Copy>(&self, l: usize, get: impl Fn(Source) -> &'a [T]) -> Cow<'a, [T]> {
        let layer = &self.layers[l];
        match layer.inputs.as_slice() {
            [one] => Cow::Borrowed(get(*one)),
            many => {
                let parts: Vec<&[T]> = many.iter().map(|&s| get(s)).collect();
                Cow::Owned(layer.gather.gather(&parts))
            }
        }
    }

    /// Per layer, the layers that take its output, increasing.
    pub fn consumers(&self) -> Vec<Vec<usize>> {
        let mut out = vec![Vec::new(); self.layers.len()];
        for (l, layer) in self.layers.iter().enumerate() {
            for s in &layer.inputs {
                if let Source::Layer(j) = *s {
                    if out[j].last() != Some(&l) {
                        out[j].push(l);
                    }
                }
            }
        }
        out
    }

    /// Per layer, the last layer that reads its output (the number of
    /// layers for the last layer, whose output is the network's).
    pub fn last_use(&self) -> Vec<usize> {
        let n = self.layers.len();
        let mut out: Vec<usize> = self.consumers().iter().map(|c| c.last().copied().unwrap_or(0)).collect();
        if let Some(last) = out.last_mut() {
            *last = n;
        }
        out
    }

    /// True if every layer takes the previous layer's output (a chain).
    pub fn is_chain(&self) -> bool {
        self.layers.iter().enumerate().all(|(l, layer)| layer.is_chained(l))
    }

    /// Every layer's output (raw codes) on input codes `x`, each kind's
    /// exact forward pass on its gathered input: the definition the fast
    /// paths are checked against.
    pub fn forward_all(&self, params: &Params, x: &[i128]) -> Vec<Vec<i128>> {
        let mut outs: Vec<Vec<i128>> = Vec::with_capacity(self.layers.len());
        for (l, layer) in self.layers.iter().enumerate() {
            let y = {
                let xin = self.layer_input(l, |s| match s {
                    Source::Input => x,
                    Source::Layer(j) => &outs[j],
                });
                layer.kind().forward(layer.input_format, &params.layers[l], &xin)
            };
            outs.push(y);
        }
        outs
    }

    /// Number of values in one input sample.
    pub fn input_len(&self) -> usize {
        self.input_shape.iter().product()
    }

    /// Number of values the network outputs.
    pub fn output_len(&self) -> usize {
        self.layers.last().map(|l| l.kind().output_len()).unwrap_or(0)
    }

    /// Format of the network's outputs.
    pub fn output_format(&self) -> Format {
        self.layers.last().map(|l| l.kind().output_format()).unwrap_or(self.input_format)
    }

    /// Multiply-accumulates per inference.
    pub fn macs(&self) -> u64 {
        self.layers.iter().map(|l| l.kind().macs()).sum()
    }

    /// The channel splits (`max_channels`): per split layer of the model
    /// file, in model order, its name and the names of the layers it
    /// became (the last one keeps its name).
    pub fn splits(&self) -> Vec<(String, Vec<String>)> {
        let mut out: Vec<(String, Vec<String>)> = Vec::new();
        for l in &self.layers {
            match &l.split_from {
                Some(from) => match out.last_mut() {
                    Some((name, parts)) if name == from => parts.push(l.name.clone()),
                    _ => out.push((from.clone(), vec![l.name.clone()])),
                },
                None => {
                    if let Some((name, parts)) = out.last_mut().filter(|(n, _)| *n == l.name) {
                        if parts.last() != Some(name) {
                            parts.push(l.name.clone());
                        }
                    }
                }
            }
        }
        out
    }

    /// Number of parameters (constants that fptgen makes,
    /// [`Layer::is_constant`], not counted).
    pub fn params(&self) -> u64 {
        self.layers
            .iter()
            .flat_map(|l| l.kind().tensors().into_iter().enumerate().filter(|(i, _)| !l.is_constant(*i)).map(|(_, t)| t.len() as u64))
            .sum()
    }

    /// Number of retrainable parameters.
    pub fn trainable_params(&self) -> u64 {
        self.layers.iter().flat_map(|l| l.kind().tensors()).filter(|t| t.trainable).map(|t| t.len() as u64).sum()
    }
}
