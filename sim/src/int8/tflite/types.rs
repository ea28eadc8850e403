//! Plain data read from a TFLite model: tensor element types, tensor
//! descriptions and fully-connected operators.

use std::fmt;

/// A tensor's element type (`enum TensorType` of TFLite's schema).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TensorType {
    /// `FLOAT32` (0).
    Float32,
    /// `INT32` (2).
    Int32,
    /// `UINT8` (3).
    Uint8,
    /// `INT64` (4).
    Int64,
    /// `INT16` (7).
    Int16,
    /// `INT8` (9).
    Int8,
    /// Any other code of the schema, kept as it is.
    Other(i8),
}

impl TensorType {
    /// The type of a schema code.
    pub fn from_code(code: i8) -> Self {
        match code {
            0 => TensorType::Float32,
            2 => TensorType::Int32,
            3 => TensorType::Uint8,
            4 => TensorType::Int64,
            7 => TensorType::Int16,
            9 => TensorType::Int8,
            c => TensorType::Other(c),
        }
    }

    /// Bytes per element, for the types whose data fptgen reads.
    pub fn size(&self) -> Option<usize> {
        match self {
            TensorType::Int8 | TensorType::Uint8 => Some(1),
            TensorType::Int16 => Some(2),
            TensorType::Int32 | TensorType::Float32 => Some(4),
            TensorType::Int64 => Some(8),
            TensorType::Other(_) => None,
        }
    }
}

impl fmt::Display for TensorType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TensorType::Float32 => write!(f, "FLOAT32"),
            TensorType::Int32 => write!(f, "INT32"),
            TensorType::Uint8 => write!(f, "UINT8"),
            TensorType::Int64 => write!(f, "INT64"),
            TensorType::Int16 => write!(f, "INT16"),
            TensorType::Int8 => write!(f, "INT8"),
            TensorType::Other(c) => write!(f, "type code {c}"),
        }
    }
}

/// One tensor of the model's main subgraph, as the file describes it.
#[derive(Debug, Clone, PartialEq)]
pub struct TensorInfo {
    /// Its index in the subgraph's tensor list (operators refer to it).
    pub index: usize,
    /// Its name (empty when the file gives none).
    pub name: String,
    /// Its element type.
    pub dtype: TensorType,
    /// Its shape (TFLite's NHWC order for images; `[out, in]` for weights).
    pub shape: Vec<i32>,
    /// The quantization scales: none (not quantized), one (per tensor) or
    /// one per slice along [`TensorInfo::quantized_dimension`].
    pub scales: Vec<f32>,
    /// The zero points, as many as the scales (or none).
    pub zero_points: Vec<i64>,
    /// The axis of per-channel scales.
    pub quantized_dimension: i32,
    /// Index into the model's buffers (0: no data).
    pub buffer: u32,
}

impl TensorInfo {
    /// The number of elements, when every dimension is non-negative and the
    /// product fits in `usize`.
    pub fn num_elements(&self) -> Option<usize> {
        self.shape.iter().try_fold(1usize, |n, &d| n.checked_mul(usize::try_from(d).ok()?))
    }
}

/// TFLite's fused activation (`enum ActivationFunctionType`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Activation {
    /// `NONE` (0).
    None,
    /// `RELU` (1).
    Relu,
    /// `RELU_N1_TO_1` (2).
    ReluN1To1,
    /// `RELU6` (3).
    Relu6,
    /// Another code (`TANH`, `SIGN_BIT`, unknown), not supported on int8.
    Other(i8),
}

impl Activation {
    /// The activation of a schema code.
    pub fn from_code(code: i8) -> Self {
        match code {
            0 => Activation::None,
            1 => Activation::Relu,
            2 => Activation::ReluN1To1,
            3 => Activation::Relu6,
            c => Activation::Other(c),
        }
    }
}

/// A `FULLY_CONNECTED` operator of the main subgraph.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FullyConnectedOp {
    /// Its index in the subgraph's operator list (execution order).
    pub index: usize,
    /// The input tensor's index.
    pub input: usize,
    /// The weights tensor's index.
    pub weights: usize,
    /// The bias tensor's index, if it has one.
    pub bias: Option<usize>,
    /// The output tensor's index.
    pub output: usize,
    /// The fused activation.
    pub activation: Activation,
    /// `weights_format` (0: default; 1: shuffled, not supported).
    pub weights_format: i8,
}
