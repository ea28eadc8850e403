//! The model file as written: serde structures that mirror the YAML exactly.
//!
//! Unknown fields are rejected everywhere. Values that need checks beyond
//! their type keep their source position ([`Spanned`]) so that
//! [`super::load`] can name the line and column of a bad value.

use serde::Deserialize;
use serde_saphyr::Spanned;

/// Top level of a model file.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelFile {
    /// Network name; becomes the Verilog top-level module's name.
    pub name: Spanned<String>,
    /// FPGA part number.
    #[serde(default)]
    pub part: Option<Spanned<String>>,
    /// Target clock period in nanoseconds.
    #[serde(default)]
    pub clock_period_ns: Option<Spanned<f64>>,
    /// The network's input.
    pub input: InputFile,
    /// Path of the weights archive, relative to the model file.
    pub weights: Spanned<String>,
    /// The layers, input to output.
    pub layers: Spanned<Vec<LayerFile>>,
}

/// The network input.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InputFile {
    /// Shape of one input sample, e.g. `[784]`.
    pub shape: Spanned<Vec<Spanned<u64>>>,
    /// Fixed-point format of every input value.
    pub format: Spanned<String>,
}

/// Layer kinds accepted in a model file.
#[derive(Debug, Deserialize, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum LayerKindFile {
    /// Fully connected layer.
    Dense,
}

/// Activation functions accepted in a model file.
#[derive(Debug, Deserialize, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum ActivationFile {
    /// max(x, 0) on the accumulator.
    Relu,
    /// Identity.
    Linear,
}

/// Parameter groups that can be retrained on the device.
#[derive(Debug, Deserialize, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum TrainableFile {
    /// The weight matrix.
    Weights,
    /// The bias vector.
    Biases,
}

/// Formats of one layer's tensors.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PrecisionFile {
    /// Weight format.
    pub weight: Spanned<String>,
    /// Bias format.
    pub bias: Spanned<String>,
    /// Accumulator format.
    pub accum: Spanned<String>,
    /// Output (activation result) format.
    pub output: Spanned<String>,
}

/// One layer as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LayerFile {
    /// Layer name; names its tensors in the weights archive (`<name>/w`, `<name>/b`).
    pub name: Spanned<String>,
    /// Layer kind.
    #[serde(rename = "type")]
    pub kind: Spanned<LayerKindFile>,
    /// Number of inputs.
    pub inputs: Spanned<u64>,
    /// Number of outputs.
    pub outputs: Spanned<u64>,
    /// Activation function.
    pub activation: ActivationFile,
    /// Formats of weights, bias, accumulator and output.
    pub precision: PrecisionFile,
    /// Output neurons computed in parallel.
    #[serde(default)]
    pub pe: Option<Spanned<u64>>,
    /// Inputs consumed per cycle.
    #[serde(default)]
    pub simd: Option<Spanned<u64>>,
    /// Which parameter groups are retrainable on the device.
    #[serde(default)]
    pub trainable: Option<Spanned<Vec<TrainableFile>>>,
}
