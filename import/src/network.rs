//! The network as the import maps it, before it is written out: layers
//! with their formats and parameter codes in fptgen's order, what each
//! reads, and the ONNX tensor each one's output must equal.

use fptgen_sim::fixed::Format;

use super::walk::Shape;

/// A network as the import maps it, before it is written out.
#[derive(Debug, Clone, PartialEq)]
pub struct Network {
    /// The input's shape: `[n]` or `[h, w, c]`.
    pub input_shape: Vec<usize>,
    /// The input's format (its `Quant`'s).
    pub input_format: Format,
    /// The ONNX tensor of the quantized input (the input `Quant`'s output).
    pub input_tensor: String,
    /// The layers, input to output, in an order where every layer comes
    /// after the layers it reads.
    pub layers: Vec<Layer>,
    /// The blocks of layers that approximate an ONNX node (`--lower
    /// approximate`; empty in an exact import).
    pub blocks: Vec<Approximation>,
}

/// A block of layers that stands for one ONNX node by a rewrite that
/// changes the function (`fptgen import --lower approximate`): the layers
/// must be retrained to match the node (`fptgen train --teacher`,
/// block-wise distillation).
#[derive(Debug, Clone, PartialEq)]
pub struct Approximation {
    /// The block's layers, indices into [`Network::layers`], a chain from
    /// the first (which reads the block's input) to the last (whose output
    /// stands for the node's output).
    pub layers: Vec<usize>,
    /// The node the block replaces, as `(name, op_type)`.
    pub node: (String, String),
    /// The rewrite, in words.
    pub rewrite: String,
    /// How the new layers were initialized, in words.
    pub init: String,
    /// The ONNX tensor the block reads and its shape as fptgen holds it.
    pub input: (String, Shape),
    /// The ONNX tensor the block's output stands for and its shape.
    pub output: (String, Shape),
}

/// What a layer reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Src {
    /// The network input.
    Input,
    /// The output of layer `k` of [`Network::layers`].
    Layer(usize),
}

/// One layer and the node it came from.
#[derive(Debug, Clone, PartialEq)]
pub struct Layer {
    /// Its name in the model file (`fc1`, `conv2`, `add1_cat`, ...).
    pub name: String,
    /// The node it maps, as `(name, op_type)`.
    pub node: (String, String),
    /// What it reads, gathered in this order.
    pub inputs: Vec<Src>,
    /// What it computes.
    pub kind: Kind,
    /// The ONNX tensor its output equals and that tensor's shape as fptgen
    /// holds it, if one does (a rewrite's inner layer has none).
    pub onnx: Option<(String, Shape)>,
}

impl Layer {
    /// The node as the model file's comment writes it: `Conv 'conv1'`.
    pub fn source(&self) -> String {
        format!("{} '{}'", self.node.1, self.node.0)
    }
}

/// The kinds of layer the import writes.
#[derive(Debug, Clone, PartialEq)]
pub enum Kind {
    /// `dense`.
    Dense(Mac),
    /// `conv2d` 3x3 with this stride, `same` padding if `same`, else `valid`.
    Conv {
        /// The multiply-accumulate part (weights `[filters, 3, 3, channels]`).
        mac: Mac,
        /// 1 or 2.
        stride: usize,
        /// `same` (else `valid`) padding.
        same: bool,
    },
    /// `maxpool2d` 2x2.
    MaxPool,
    /// `flatten`.
    Flatten,
    /// `batchnorm`.
    BatchNorm(Bn),
    /// `concat` of the layer's inputs.
    Concat,
    /// `add` of its two inputs (fptgen lowers it at load), cast to `output`
    /// (`None`: the exact sum's format).
    Add {
        /// The output format, if not the exact sum's.
        output: Option<Format>,
    },
}

/// The parameters and formats of a dense or conv layer.
#[derive(Debug, Clone, PartialEq)]
pub struct Mac {
    /// Inputs per output (dense) or input channels (conv).
    pub inputs: usize,
    /// Outputs (dense) or filters (conv).
    pub outputs: usize,
    /// Whether a `Relu` follows.
    pub relu: bool,
    /// Weight format.
    pub weight: Format,
    /// Bias format.
    pub bias: Format,
    /// Accumulator format (wide enough that nothing rounds or saturates).
    pub accum: Format,
    /// Output format (the activation `Quant`'s, or the accumulator's).
    pub output: Format,
    /// Weight codes in fptgen's order, C order.
    pub w: Vec<i128>,
    /// Bias codes.
    pub b: Vec<i128>,
    /// Folding `[pe, simd]` if the import sets it (a rewrite's layer, folded
    /// as fptgen folds its own lowering of the same operator); else
    /// fptgen's default.
    pub fold: Option<[usize; 2]>,
}

/// The parameters and formats of a batch norm: per channel
/// `y = cast<output>(act(shift + scale * x))`.
#[derive(Debug, Clone, PartialEq)]
pub struct Bn {
    /// Channels (the last dimension).
    pub channels: usize,
    /// Whether a `Relu` follows.
    pub relu: bool,
    /// Scale format.
    pub scale: Format,
    /// Shift format.
    pub shift: Format,
    /// Accumulator format (holds every `shift + scale * x` exactly).
    pub accum: Format,
    /// Output format.
    pub output: Format,
    /// Scale codes.
    pub scale_codes: Vec<i128>,
    /// Shift codes.
    pub shift_codes: Vec<i128>,
}

impl Kind {
    /// The format of the layer's output, given its input's.
    pub fn output_format(&self, input: Format) -> Format {
        match self {
            Kind::Dense(m) | Kind::Conv { mac: m, .. } => m.output,
            Kind::BatchNorm(b) => b.output,
            Kind::Add { output } => output.unwrap_or_else(|| fptgen_sim::layers::add::sum_format(input).unwrap_or(input)),
            Kind::MaxPool | Kind::Flatten | Kind::Concat => input,
        }
    }
}
