//! The network as the import maps it, before it is written out: layers
//! with their formats and parameter codes in fptgen's order.

use fptgen_sim::fixed::Format;

/// A network as the import maps it, before it is written out.
#[derive(Debug, Clone, PartialEq)]
pub struct Network {
    /// The input's shape: `[n]` or `[h, w, c]`.
    pub input_shape: Vec<usize>,
    /// The input's format (its `Quant`'s).
    pub input_format: Format,
    /// The layers, input to output.
    pub layers: Vec<Layer>,
}

/// One layer and the node it came from.
#[derive(Debug, Clone, PartialEq)]
pub struct Layer {
    /// The node's operator and name, for the model file's comment.
    pub source: String,
    /// What it computes.
    pub kind: Kind,
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
}
