//! The network description: what a model file says, validated.
//!
//! [`load`] reads and checks a model file; the resulting [`Model`] can only
//! describe a consistent network (shapes chain, folding divides nothing it
//! cannot, formats are valid), so code downstream never re-checks it.

mod load;
pub mod schema;

pub use load::{load, parse};

use std::path::PathBuf;

use crate::fixed::Format;

/// The FPGA part used when a model file names none (seed 003's device).
pub const DEFAULT_PART: &str = "xcku035-fbva676-3-e";
/// The clock period used when a model file gives none, in ns (hls4ml's default).
pub const DEFAULT_CLOCK_PERIOD_NS: f64 = 5.0;
/// Largest folding factor or layer dimension accepted.
pub const MAX_DIM: usize = 1 << 20;

/// A validated network.
#[derive(Debug, Clone, PartialEq)]
pub struct Model {
    /// Network name, a valid Verilog identifier.
    pub name: String,
    /// FPGA part number.
    pub part: String,
    /// Target clock period in ns (finite, > 0).
    pub clock_period_ns: f64,
    /// Shape of one input sample.
    pub input_shape: Vec<usize>,
    /// Format of every input value.
    pub input_format: Format,
    /// Weights archive, resolved relative to the model file.
    pub weights_path: PathBuf,
    /// The model file this came from.
    pub source: PathBuf,
    /// Layers, input to output; never empty.
    pub layers: Vec<Layer>,
}

/// Activation function of a layer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Activation {
    /// max(x, 0), applied to the accumulator before the output cast.
    Relu,
    /// Identity.
    Linear,
}

impl std::fmt::Display for Activation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Activation::Relu => "relu",
            Activation::Linear => "linear",
        })
    }
}

/// Which of a layer's parameters are retrainable on the device.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Trainable {
    /// The weight matrix is retrainable (kept in BRAM with a write port).
    pub weights: bool,
    /// The bias vector is retrainable.
    pub biases: bool,
}

impl Trainable {
    /// True if anything in the layer is retrainable.
    pub fn any(&self) -> bool {
        self.weights || self.biases
    }
}

impl std::fmt::Display for Trainable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match (self.weights, self.biases) {
            (false, false) => "-",
            (true, false) => "weights",
            (false, true) => "biases",
            (true, true) => "weights+biases",
        })
    }
}

/// Formats of a dense layer's tensors.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Precision {
    /// Weight format.
    pub weight: Format,
    /// Bias format.
    pub bias: Format,
    /// Accumulator format.
    pub accum: Format,
    /// Output format.
    pub output: Format,
}

/// A fully connected layer `y = act(W x + b)`, `W` shaped `[outputs, inputs]`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Dense {
    /// Number of inputs (>= 1).
    pub inputs: usize,
    /// Number of outputs (>= 1).
    pub outputs: usize,
    /// Activation function.
    pub activation: Activation,
    /// Formats.
    pub precision: Precision,
    /// Output neurons computed in parallel, 1..=outputs.
    pub pe: usize,
    /// Inputs consumed per cycle, 1..=inputs.
    pub simd: usize,
    /// Retrainable parameters.
    pub trainable: Trainable,
}

impl Dense {
    /// Multiply-accumulates per inference.
    pub fn macs(&self) -> u64 {
        self.inputs as u64 * self.outputs as u64
    }

    /// Number of parameters (weights and biases).
    pub fn params(&self) -> u64 {
        self.macs() + self.outputs as u64
    }

    /// Number of parameters that are retrainable.
    pub fn trainable_params(&self) -> u64 {
        (if self.trainable.weights { self.macs() } else { 0 })
            + (if self.trainable.biases { self.outputs as u64 } else { 0 })
    }
}

/// The operation a layer performs.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum LayerOp {
    /// Fully connected.
    Dense(Dense),
}

/// One layer of the network.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Layer {
    /// Name, a valid Verilog identifier, unique in the model.
    pub name: String,
    /// What the layer computes.
    pub op: LayerOp,
    /// Format of the values the layer receives (the previous layer's output format).
    pub input_format: Format,
}

impl Layer {
    /// The layer as a dense layer (the only kind so far).
    pub fn dense(&self) -> &Dense {
        match &self.op {
            LayerOp::Dense(d) => d,
        }
    }

    /// Name of the weight tensor in the weights archive.
    pub fn weight_tensor(&self) -> String {
        format!("{}/w", self.name)
    }

    /// Name of the bias tensor in the weights archive.
    pub fn bias_tensor(&self) -> String {
        format!("{}/b", self.name)
    }
}

impl Model {
    /// Number of values in one input sample.
    pub fn input_len(&self) -> usize {
        self.input_shape.iter().product()
    }

    /// Number of values the network outputs.
    pub fn output_len(&self) -> usize {
        self.layers.last().map(|l| l.dense().outputs).unwrap_or(0)
    }

    /// Format of the network's outputs.
    pub fn output_format(&self) -> Format {
        self.layers.last().map(|l| l.dense().precision.output).unwrap_or(self.input_format)
    }

    /// Multiply-accumulates per inference.
    pub fn macs(&self) -> u64 {
        self.layers.iter().map(|l| l.dense().macs()).sum()
    }

    /// Number of parameters.
    pub fn params(&self) -> u64 {
        self.layers.iter().map(|l| l.dense().params()).sum()
    }

    /// Number of retrainable parameters.
    pub fn trainable_params(&self) -> u64 {
        self.layers.iter().map(|l| l.dense().trainable_params()).sum()
    }
}
