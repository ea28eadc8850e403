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
    /// Target cycles per input vector of every layer whose `pe` or `simd`
    /// is `auto` (`docs/hardware.md`, "Folding").
    #[serde(default)]
    pub target_ii: Option<Spanned<u64>>,
    /// The network's input.
    pub input: InputFile,
    /// Path of the weights archive, relative to the model file.
    pub weights: Spanned<String>,
    /// Most output channels of one conv2d (filters) or dense layer
    /// (outputs); a larger layer is split (default 512).
    #[serde(default)]
    pub max_channels: Option<Spanned<u64>>,
    /// The layers, input to output.
    pub layers: Spanned<Vec<LayerFile>>,
    /// How the trainable parameters are retrained on the device (optional).
    #[serde(default)]
    pub training: Option<Spanned<TrainingFile>>,
    /// The int8 interface: the quantization of the frozen prefix's output,
    /// which the network input carries (optional; issue 15).
    #[serde(default)]
    pub interface: Option<Spanned<InterfaceFile>>,
}

/// The `interface:` section: the frozen prefix's int8 output quantization,
/// given as `scale` and `zero_point`, or read from a `.tflite` file's
/// tensor (`tflite` and `tensor`).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InterfaceFile {
    /// The real value of one code step.
    #[serde(default)]
    pub scale: Option<Spanned<f64>>,
    /// The code of the real value 0.
    #[serde(default)]
    pub zero_point: Option<Spanned<i64>>,
    /// A TFLite model file, relative to the model file.
    #[serde(default)]
    pub tflite: Option<Spanned<String>>,
    /// The name of the int8 tensor of `tflite` whose quantization is the interface.
    #[serde(default)]
    pub tensor: Option<Spanned<String>>,
    /// Never accepted: the interface is fixed (present only to refuse it
    /// with a message).
    #[serde(default)]
    pub trainable: Option<Spanned<serde::de::IgnoredAny>>,
}

/// The affine quantization of an int8 tensor: `real = (code - zero_point) * scale`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AffineFile {
    /// The real value of one code step (positive, a float32).
    pub scale: Spanned<f64>,
    /// The code of the real value 0 (`-128..=127`).
    pub zero_point: Spanned<i64>,
}

/// An int8 layer's `quantization:`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct QuantizationFile {
    /// The input's scale and zero point.
    pub input: Spanned<AffineFile>,
    /// The output's scale and zero point.
    pub output: Spanned<AffineFile>,
    /// The weights' scales: one (per tensor) or one per output channel
    /// (`dense_int8`).
    #[serde(default)]
    pub weight_scales: Option<Spanned<ScalesFile>>,
}

/// One scale or a list of them.
#[derive(Debug)]
pub enum ScalesFile {
    /// A single value: per tensor.
    One(f64),
    /// One per output channel.
    Many(Vec<Spanned<f64>>),
}

impl<'de> Deserialize<'de> for ScalesFile {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = ScalesFile;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a scale, or a list of scales (one per output channel)")
            }
            fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<ScalesFile, E> {
                Ok(ScalesFile::One(v))
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<ScalesFile, E> {
                Ok(ScalesFile::One(v as f64))
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<ScalesFile, E> {
                Ok(ScalesFile::One(v as f64))
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<ScalesFile, A::Error> {
                let mut out = Vec::new();
                while let Some(s) = seq.next_element::<Spanned<f64>>()? {
                    out.push(s);
                }
                Ok(ScalesFile::Many(out))
            }
        }
        d.deserialize_any(V)
    }
}

/// How an int8 layer's requantization rounds.
#[derive(Debug, Deserialize, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum RoundingFile {
    /// TFLite's `TFLITE_SINGLE_ROUNDING` (the default).
    Single,
    /// gemmlowp's double rounding.
    Double,
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

/// How a matrix-vector unit's products are formed in hardware.
#[derive(Debug, Deserialize, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum MultipliersFile {
    /// One multiplier per product.
    Dsp,
    /// Two products that share an input in one multiplier.
    Packed,
}

/// Activation functions accepted in a model file.
#[derive(Debug, Deserialize, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum ActivationFile {
    /// max(x, 0) on the accumulator.
    Relu,
    /// min(max(x, 0), 6), int8 layers only.
    Relu6,
    /// Identity.
    Linear,
}

/// Parameter tensors that can be retrained on the device, by the role
/// names of the layer kinds' tensors.
#[derive(Debug, Deserialize, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum TrainableFile {
    /// A dense or convolution layer's weights.
    Weights,
    /// A dense or convolution layer's biases.
    Biases,
    /// A batch normalization's per-channel scale.
    Scale,
    /// A batch normalization's per-channel shift.
    Shift,
    /// An int8 layer's scales: never trainable (named only to refuse it).
    Scales,
    /// An int8 layer's zero points: never trainable (named only to refuse it).
    ZeroPoints,
}

impl TrainableFile {
    /// The role name, as [`crate::layers::TensorSpec::role`] spells it.
    pub fn role(self) -> &'static str {
        match self {
            TrainableFile::Weights => "weights",
            TrainableFile::Biases => "biases",
            TrainableFile::Scale => "scale",
            TrainableFile::Shift => "shift",
            TrainableFile::Scales => "scales",
            TrainableFile::ZeroPoints => "zero_points",
        }
    }
}

/// Padding of a convolution.
#[derive(Debug, Deserialize, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum PaddingFile {
    /// Zero padding so that the output has `ceil(input / stride)` pixels
    /// per dimension (Keras/TensorFlow `same`).
    Same,
    /// No padding.
    Valid,
}

/// Formats of one layer's tensors; each kind says which it needs.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PrecisionFile {
    /// Weight format (dense, conv2d).
    #[serde(default)]
    pub weight: Option<Spanned<String>>,
    /// Bias format (dense, conv2d).
    #[serde(default)]
    pub bias: Option<Spanned<String>>,
    /// Scale format (batchnorm).
    #[serde(default)]
    pub scale: Option<Spanned<String>>,
    /// Shift format (batchnorm).
    #[serde(default)]
    pub shift: Option<Spanned<String>>,
    /// Accumulator format.
    #[serde(default)]
    pub accum: Option<Spanned<String>>,
    /// Output (activation result) format.
    #[serde(default)]
    pub output: Option<Spanned<String>>,
}

/// One layer as written. Which fields a layer takes depends on its `type`;
/// its kind checks that the ones it needs are there and that no other is
/// (`crate::layers`).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LayerFile {
    /// Layer name; names its tensors in the weights archive (`<name>/w`, `<name>/b`).
    pub name: Spanned<String>,
    /// Layer kind: `dense`, `conv2d`, `maxpool2d`, `batchnorm`, `flatten`,
    /// `concat`, `add` (lowered at load), `dense_int8`, `requantize`.
    #[serde(rename = "type")]
    pub kind: Spanned<String>,
    /// What feeds the layer: a list of earlier layers' names (or `input`,
    /// the network input), any kind; or, for a dense layer, the number of
    /// its inputs (the chain's check of the previous layer's length).
    #[serde(default)]
    pub inputs: Option<Spanned<InputsFile>>,
    /// Number of outputs (dense, dense_int8).
    #[serde(default)]
    pub outputs: Option<Spanned<u64>>,
    /// Output channels (conv2d).
    #[serde(default)]
    pub filters: Option<Spanned<u64>>,
    /// Kernel size (conv2d: 3).
    #[serde(default)]
    pub kernel: Option<Spanned<u64>>,
    /// Stride (conv2d: 1 or 2).
    #[serde(default)]
    pub stride: Option<Spanned<u64>>,
    /// Padding (conv2d).
    #[serde(default)]
    pub padding: Option<Spanned<PaddingFile>>,
    /// Pooling window and stride (maxpool2d: 2).
    #[serde(default)]
    pub pool: Option<Spanned<u64>>,
    /// Activation function.
    #[serde(default)]
    pub activation: Option<Spanned<ActivationFile>>,
    /// Formats of the layer's tensors.
    #[serde(default)]
    pub precision: Option<Spanned<PrecisionFile>>,
    /// Output neurons (channels) computed in parallel, or `auto` (chosen
    /// for the model's `target_ii`).
    #[serde(default)]
    pub pe: Option<Spanned<ShiftFile>>,
    /// Inputs consumed per cycle, or `auto`.
    #[serde(default)]
    pub simd: Option<Spanned<ShiftFile>>,
    /// How a matrix-vector unit forms its products (`dsp`, the default, or
    /// `packed`: two to a DSP48E2).
    #[serde(default)]
    pub multipliers: Option<Spanned<MultipliersFile>>,
    /// Which parameter tensors are retrainable on the device.
    #[serde(default)]
    pub trainable: Option<Spanned<Vec<TrainableFile>>>,
    /// The affine quantization of an int8 layer (`dense_int8`, `requantize`).
    #[serde(default)]
    pub quantization: Option<Spanned<QuantizationFile>>,
    /// How an int8 layer's requantization rounds (default `single`).
    #[serde(default)]
    pub rounding: Option<Spanned<RoundingFile>>,
    /// A `dense_int8` layer's quantization read from a TFLite operator
    /// instead of `quantization:`.
    #[serde(default)]
    pub tflite: Option<Spanned<TfliteOpFile>>,
}

/// A FULLY_CONNECTED operator of a `.tflite` file, by its output tensor.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TfliteOpFile {
    /// The `.tflite` file, relative to the model file.
    pub file: Spanned<String>,
    /// The name of the operator's output tensor.
    pub output: Spanned<String>,
}

/// A layer's `inputs:` as written: a count (dense) or a list of names.
#[derive(Debug)]
pub enum InputsFile {
    /// `inputs: 784`: a dense layer's number of inputs.
    Count(u64),
    /// `inputs: [a, b]` (or `inputs: a`): the names of the layers (or
    /// `input`) whose outputs are gathered into the layer's input.
    Names(Vec<Spanned<String>>),
}

impl<'de> Deserialize<'de> for InputsFile {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = InputsFile;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a list of layer names (or `input`), or for a dense layer the number of inputs")
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<InputsFile, E> {
                Ok(InputsFile::Count(v))
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<InputsFile, E> {
                u64::try_from(v)
                    .map(InputsFile::Count)
                    .map_err(|_| E::custom(format!("inputs is {v}; give a positive number or a list of layer names")))
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<InputsFile, E> {
                Ok(InputsFile::Names(vec![Spanned::new(v.to_string(), serde_saphyr::Location::UNKNOWN, serde_saphyr::Location::UNKNOWN)]))
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<InputsFile, A::Error> {
                let mut names = Vec::new();
                while let Some(n) = seq.next_element::<Spanned<String>>()? {
                    names.push(n);
                }
                Ok(InputsFile::Names(names))
            }
        }
        d.deserialize_any(V)
    }
}

/// A number, or `auto`: a step shift of the `training:` section, a layer's
/// `pe` or `simd`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ShiftFile {
    /// `auto`: derived by the rule (`docs/training.md`, "Update").
    Auto,
    /// A written shift.
    Value(i64),
}

impl<'de> Deserialize<'de> for ShiftFile {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = ShiftFile;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("an integer or `auto`")
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<ShiftFile, E> {
                i64::try_from(v).map(ShiftFile::Value).map_err(|_| E::custom(format!("{v} is too large")))
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<ShiftFile, E> {
                Ok(ShiftFile::Value(v))
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<ShiftFile, E> {
                if v == "auto" {
                    Ok(ShiftFile::Auto)
                } else {
                    Err(E::custom(format!("expected an integer or `auto`, not {v:?}")))
                }
            }
        }
        d.deserialize_any(V)
    }
}

/// The `training:` section: evolution-strategies training on the device
/// (`docs/training.md`). Every field is optional; absent ones take the
/// defaults listed there.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TrainingFile {
    /// The training rule: `es`, `drtp`, `dfa` or `sgm`.
    #[serde(default)]
    pub rule: Option<Spanned<RuleFile>>,
    /// `rule: sgm`: the archive of the synthetic-gradient modules (written
    /// by `fptgen train --sgm`), relative to the model file.
    #[serde(default)]
    pub sgm: Option<Spanned<String>>,
    /// N, members per group.
    #[serde(default)]
    pub population: Option<Spanned<u64>>,
    /// k, passes over all groups.
    #[serde(default)]
    pub iterations: Option<Spanned<u64>>,
    /// P, incremental-training blocks (parameters perturbed at once).
    #[serde(default)]
    pub blocks: Option<Spanned<u64>>,
    /// M, training samples held on chip.
    #[serde(default)]
    pub buffer: Option<Spanned<u64>>,
    /// The noise sources.
    #[serde(default)]
    pub noise: Option<Spanned<NoiseFile>>,
    /// sigma: a noise value moves a parameter by `e << sigma` codes
    /// (`auto`: derived, as when absent).
    #[serde(default)]
    pub perturb_shift: Option<Spanned<ShiftFile>>,
    /// The update is the gradient accumulator divided by `2^lr_shift`
    /// (multiplied by `2^-lr_shift` when negative; `auto`: derived, as
    /// when absent).
    #[serde(default)]
    pub lr_shift: Option<Spanned<ShiftFile>>,
    /// The loss function.
    #[serde(default)]
    pub loss: Option<LossFile>,
    /// How member losses become a gradient estimate.
    #[serde(default)]
    pub fitness: Option<Spanned<FitnessFile>>,
    /// How the fitness signal is quantized before it scales the noise.
    #[serde(default)]
    pub loss_quantization: Option<LossQuantizationFile>,
    /// Seeds every LFSR.
    #[serde(default)]
    pub seed: Option<u64>,
    /// How the feedback rules round a step: `nearest`, `stochastic` or
    /// `auto` (as when absent).
    #[serde(default)]
    pub step_rounding: Option<Spanned<StepRoundingFile>>,
    /// How the ES hardware evaluates a member: `full`, `difference` or
    /// `auto` (as when absent).
    #[serde(default)]
    pub evaluation: Option<Spanned<EvaluationFile>>,
}

/// `evaluation:` values accepted in a model file.
#[derive(Debug, Deserialize, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum EvaluationFile {
    /// Difference where the design allows it and it is faster.
    Auto,
    /// Every member on every buffered sample.
    Full,
    /// By difference (an error where the design does not allow it).
    Difference,
}

/// `step_rounding:` values accepted in a model file.
#[derive(Debug, Deserialize, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum StepRoundingFile {
    /// Stochastic for tensors of at most 256 codes, else nearest.
    Auto,
    /// To nearest, ties to even.
    Nearest,
    /// Stochastic (unbiased), from an LFSR per tensor.
    Stochastic,
}

/// Training rules accepted in a model file.
#[derive(Debug, Deserialize, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum RuleFile {
    /// Evolution strategies.
    Es,
    /// Direct random target projection.
    Drtp,
    /// Direct feedback alignment.
    Dfa,
    /// Static synthetic-gradient modules.
    Sgm,
}

/// The `noise:` subsection of `training:`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NoiseFile {
    /// LFSR width in bits: 8, 16 or 32.
    #[serde(default)]
    pub width: Option<Spanned<u64>>,
    /// Distribution of a noise value.
    #[serde(default)]
    pub distribution: Option<DistributionFile>,
    /// b, fresh bits per `uniform` value.
    #[serde(default)]
    pub bits: Option<Spanned<u64>>,
}

/// Noise distributions accepted in a model file.
#[derive(Debug, Deserialize, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum DistributionFile {
    /// One fresh bit per value: +1 or -1.
    Rademacher,
    /// b fresh bits per value, read as a b-bit two's complement number.
    Uniform,
}

/// Loss functions accepted in a model file.
#[derive(Debug, Deserialize, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum LossFile {
    /// Sum of absolute differences in raw output codes.
    Mae,
}

/// Fitness modes accepted in a model file.
#[derive(Debug, Deserialize, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum FitnessFile {
    /// Mirrored pairs: the signal is the loss difference of a pair.
    Antithetic,
    /// The signal is a member's loss minus the unperturbed loss.
    Baseline,
    /// The signal is a member's loss (the paper's literal rule).
    Plain,
    /// Mirrored pairs whose signal is the difference of their centered ranks.
    Ranks,
}

/// Loss quantizations accepted in a model file.
#[derive(Debug, Deserialize, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum LossQuantizationFile {
    /// Sign times the power of two of the leading one.
    Po2,
    /// The signal itself.
    Exact,
}
