//! Layer kinds: one module per kind, owning everything the simulator knows
//! about it.
//!
//! A kind (today [`dense`]) is a type that implements [`LayerKind`]: its
//! fields (validated when the model file is read, by the kind's own
//! `from_file`), its shapes, its parameter tensors ([`TensorSpec`]: names,
//! shapes, formats, which are trainable; none for a kind without
//! parameters), its exact forward pass and the recomputation of a few of
//! its outputs (for the cached ES evaluator, with [`LayerKind::affected`]
//! telling which outputs a parameter reaches), its float reference and its
//! quantization-aware backward pass. [`LayerOp`] is the closed set of
//! kinds, made from the one list of [`layer_kinds!`] below; code that is
//! not about one kind goes through the trait and never names a kind. The
//! generator crate holds the other half of a kind (its hardware plan,
//! template and RTL files).
//!
//! Adding a kind: a module here with its type, `impl LayerKind`, its
//! reader `from_file` and its model-file `TYPE` and `WHAT`; a `pub mod`
//! and one line in the list; and its generator half (docs/hardware.md,
//! "Layer kinds", walks through it).

pub mod add;
pub mod fold;
pub mod batchnorm;
pub mod concat;
pub mod conv2d;
pub mod dense;
pub mod dense_int8;
pub mod flatten;
pub mod maxpool2d;
pub mod requantize;
pub mod slice;

pub use batchnorm::BatchNorm;
pub use concat::Concat;
pub use conv2d::Conv2d;
pub use dense::{Dense, Precision, Trainable};
pub use dense_int8::{Affine, DenseInt8, Int8Activation};
pub use requantize::Requantize;
pub use flatten::Flatten;
pub use maxpool2d::MaxPool2d;
pub use slice::Slice;

use serde_saphyr::{Location, Spanned};

use crate::error::ModelError;
use crate::fixed::Format;
use crate::model::schema::{ActivationFile, InputsFile, LayerFile};
use crate::model::Checker;
use crate::weights::LayerParams;

/// Makes the registry of the kinds from one list: [`LayerOp`] (a variant
/// per kind, holding the kind's type of the same name),
/// [`LayerOp::kind`], the model file's types ([`file_types`]) and the
/// reader of an entry ([`LayerOp::read`]). A line is `Kind from module;`
/// for a kind a model file names (`module::TYPE`, `module::WHAT`,
/// `Kind::from_file`), `Kind;` for one only the loader makes.
macro_rules! layer_kinds {
    ($($(#[$doc:meta])* $kind:ident $(from $module:ident)?;)*) => {
        /// The operation a layer performs: the closed set of layer kinds.
        #[derive(Debug, Clone, PartialEq, Eq, Hash)]
        pub enum LayerOp {
            $($(#[$doc])* $kind($kind),)*
        }

        impl LayerOp {
            /// The kind, for code that is not about one kind.
            pub fn kind(&self) -> &dyn LayerKind {
                match self {
                    $(LayerOp::$kind(k) => k,)*
                }
            }

            /// The layer an entry of the model file's type `type_name`
            /// describes, or None for a type no kind reads.
            pub(crate) fn read(type_name: &str, input: &LayerInput) -> Option<Result<LayerOp, ModelError>> {
                $($(if type_name == $module::TYPE {
                    return Some($kind::from_file(input).map(LayerOp::$kind));
                })?)*
                None
            }
        }

        /// The model file's types of the kinds, with what each is.
        const KIND_TYPES: &[(&str, &str)] = &[$($(($module::TYPE, $module::WHAT),)?)*];
    };
}

layer_kinds! {
    /// Fully connected.
    Dense from dense;
    /// 3x3 convolution.
    Conv2d from conv2d;
    /// 2x2 max-pooling.
    MaxPool2d from maxpool2d;
    /// Per-channel scale and shift.
    BatchNorm from batchnorm;
    /// An image as a vector.
    Flatten from flatten;
    /// Several inputs as one (the gather itself, unchanged).
    Concat from concat;
    /// A range of an image's channels (made by a split, never written).
    Slice;
    /// Fully connected on affine int8 values (TFLite's int8 kernel).
    DenseInt8 from dense_int8;
    /// int8 to int8 with another scale and zero point.
    Requantize from requantize;
}

/// The types a model file's layer may name, with what each is: the
/// kinds' and `add` (lowered at load into kinds, [`add`]).
pub fn file_types() -> impl Iterator<Item = (&'static str, &'static str)> {
    KIND_TYPES.iter().copied().chain([(add::TYPE, add::WHAT)])
}

/// Operators outside the core set that seed 004 rewrites into it: the
/// model file's `type` a user might write, and the rewrite.
pub const REWRITES: &[(&str, &str)] = &[
    ("conv1x1", "a conv2d with kernel 3 whose weights are zero outside the centre"),
    ("avgpool2d", "a conv2d (stride 2) whose weights average each window, or a maxpool2d"),
    ("layernorm", "a batchnorm (retrain with fptgen train)"),
    ("embedding", "a dense layer on one-hot inputs"),
    ("depthwise_conv2d", "a conv2d whose weights are zero across channels"),
    ("linear", "a dense layer"),
    ("conv", "a conv2d (kernel 3, stride 1 or 2)"),
    ("relu", "the activation of the layer before (activation: relu)"),
];

/// What a kind's reader gets: the model file's entry, the checker and
/// what feeds the layer.
pub(crate) struct LayerInput<'a> {
    /// Positions and checks of values.
    pub c: &'a Checker<'a>,
    /// The entry as written.
    pub lf: &'a LayerFile,
    /// The layer's (checked) name.
    pub name: &'a str,
    /// The shape of the layer's (gathered) input (`[n]` or `[h, w, c]`).
    pub shape: &'a [usize],
    /// The shape of each of its inputs, in gather order.
    pub parts: &'a [Vec<usize>],
    /// What feeds it, for messages ("the network input", "the previous
    /// layer 'x'", "its inputs 'a' and 'b' gathered").
    pub from: &'a str,
    /// The format of the layer's input values.
    pub format: Format,
    /// The int8 quantization of what feeds the layer: `None` when that is
    /// not int8 (an `ap_fixed` layer, or several inputs gathered),
    /// `Some(None)` for the network input of a model without `interface:`,
    /// `Some(Some(q))` for the interface or an int8 layer's output.
    pub feed: Option<Option<Affine>>,
}

impl LayerInput<'_> {
    /// An error at the layer's `type`.
    pub fn err_at_type(&self, message: impl Into<String>) -> ModelError {
        self.c.err(&self.lf.kind, message)
    }

    /// An error at the layer's `inputs:` (at its `type` when it has none).
    pub fn err_at_inputs(&self, message: impl Into<String>) -> ModelError {
        match &self.lf.inputs {
            Some(i) => self.c.err(i, message),
            None => self.err_at_type(message),
        }
    }

    /// The dense count `inputs: N`, if the entry gives one.
    pub fn input_count(&self) -> Option<Spanned<u64>> {
        match &self.lf.inputs {
            Some(Spanned { value: InputsFile::Count(n), referenced, defined }) => {
                Some(Spanned { value: *n, referenced: *referenced, defined: *defined })
            }
            _ => None,
        }
    }

    /// The field `field` (as the model file spells it), or an error at the
    /// layer's `type` saying the kind needs it.
    pub fn require<'v, T>(&self, v: &'v Option<Spanned<T>>, field: &str) -> Result<&'v Spanned<T>, ModelError> {
        v.as_ref().ok_or_else(|| self.err_at_type(format!("a {} layer needs `{field}`", self.lf.kind.value)))
    }

    /// Refuses every field the entry gives that is not in `allowed`
    /// (besides `name` and `type`), and every `precision` entry not in
    /// `formats`.
    pub fn only(&self, allowed: &[&str], formats: &[&str]) -> Result<(), ModelError> {
        let lf = self.lf;
        // A list of names applies to every kind; only a count is a field.
        let count: Option<&Location> = lf.inputs.as_ref().filter(|i| matches!(i.value, InputsFile::Count(_))).map(|s| &s.referenced);
        if let (Some(at), false) = (count, allowed.contains(&"inputs")) {
            return Err(self.c.err_at(
                at,
                format!(
                    "`inputs` does not apply to {} layer as a number (a number counts a dense layer's inputs); \
                     as a list it names the layers that feed it, e.g. `inputs: [a, b]`",
                    a(&lf.kind.value)
                ),
            ));
        }
        let given: [(&str, Option<&Location>); 15] = [
            ("inputs", count),
            ("outputs", lf.outputs.as_ref().map(|s| &s.referenced)),
            ("filters", lf.filters.as_ref().map(|s| &s.referenced)),
            ("kernel", lf.kernel.as_ref().map(|s| &s.referenced)),
            ("stride", lf.stride.as_ref().map(|s| &s.referenced)),
            ("padding", lf.padding.as_ref().map(|s| &s.referenced)),
            ("pool", lf.pool.as_ref().map(|s| &s.referenced)),
            ("activation", lf.activation.as_ref().map(|s| &s.referenced)),
            ("precision", lf.precision.as_ref().map(|s| &s.referenced)),
            ("pe", lf.pe.as_ref().map(|s| &s.referenced)),
            ("simd", lf.simd.as_ref().map(|s| &s.referenced)),
            ("trainable", lf.trainable.as_ref().map(|s| &s.referenced)),
            ("quantization", lf.quantization.as_ref().map(|s| &s.referenced)),
            ("rounding", lf.rounding.as_ref().map(|s| &s.referenced)),
            ("tflite", lf.tflite.as_ref().map(|s| &s.referenced)),
        ];
        let kind = &lf.kind.value;
        for (field, at) in given {
            if let Some(at) = at {
                if !allowed.contains(&field) {
                    return Err(self.c.err_at(at, format!("`{field}` does not apply to {} layer; it takes {}", a(kind), list(allowed))));
                }
            }
        }
        if let Some(p) = &lf.precision {
            let p = &p.value;
            for (field, v) in
                [("weight", &p.weight), ("bias", &p.bias), ("scale", &p.scale), ("shift", &p.shift), ("accum", &p.accum), ("output", &p.output)]
            {
                if let Some(v) = v {
                    if !formats.contains(&field) {
                        return Err(self.c.err(v, format!("{} layer has no {field} format; its precision takes {}", a(kind), list(formats))));
                    }
                }
            }
        }
        Ok(())
    }

    /// The formats `names` of `precision`, each required.
    pub fn formats<const N: usize>(&self, names: [&str; N]) -> Result<[Format; N], ModelError> {
        let p = &self.require(&self.lf.precision, "precision")?.value;
        let mut out = [self.format; N];
        for (slot, name) in out.iter_mut().zip(names) {
            let v = match name {
                "weight" => &p.weight,
                "bias" => &p.bias,
                "scale" => &p.scale,
                "shift" => &p.shift,
                "accum" => &p.accum,
                _ => &p.output,
            };
            let v = v.as_ref().ok_or_else(|| {
                self.c.err(self.lf.precision.as_ref().expect("checked"), format!("a {} layer's precision needs `{name}`", self.lf.kind.value))
            })?;
            *slot = self.c.format(v, if name == "accum" { "accumulator" } else { name })?;
        }
        Ok(out)
    }

    /// The entry's `multipliers:` for the matrix-vector unit `d` fed this
    /// input (default `dsp`); `packed` only where
    /// [`dense::packing_refusal`] finds nothing against it.
    pub fn multipliers(&self, d: &dense::Dense) -> Result<dense::Multipliers, ModelError> {
        use crate::model::schema::MultipliersFile;
        let Some(m) = &self.lf.multipliers else { return Ok(dense::Multipliers::Dsp) };
        match m.value {
            MultipliersFile::Dsp => Ok(dense::Multipliers::Dsp),
            MultipliersFile::Packed => match dense::packing_refusal(d, self.format) {
                None => Ok(dense::Multipliers::Packed),
                Some(why) => Err(self.c.err(m, format!("multipliers: packed does not apply to layer '{}': {why}", self.name))),
            },
        }
    }

    /// The activation (default `linear` when `optional`).
    pub fn activation(&self, optional: bool) -> Result<Activation, ModelError> {
        let a = match (&self.lf.activation, optional) {
            (None, true) => return Ok(Activation::Linear),
            (a, _) => self.require(a, "activation")?,
        };
        Ok(match a.value {
            ActivationFile::Relu => Activation::Relu,
            ActivationFile::Linear => Activation::Linear,
            ActivationFile::Relu6 => {
                return Err(self.c.err(a, format!("relu6 applies to int8 layers (dense_int8) only; {} layer takes relu or linear", a_kind(&self.lf.kind.value))))
            }
        })
    }

    /// Which of `roles` the entry's `trainable:` lists, each at most once.
    pub fn trainable<const N: usize>(&self, roles: [&str; N]) -> Result<[bool; N], ModelError> {
        let mut out = [false; N];
        let Some(t) = &self.lf.trainable else { return Ok(out) };
        for item in &t.value {
            let role = item.role();
            let Some(i) = roles.iter().position(|r| *r == role) else {
                return Err(self.c.err(t, format!("a {} layer has no {role} to train; it has {}", self.lf.kind.value, list(&roles))));
            };
            if out[i] {
                return Err(self.c.err(t, format!("trainable lists {role} twice")));
            }
            out[i] = true;
        }
        Ok(out)
    }

    /// The input as an image `[h, w, c]`, or an error.
    pub fn image(&self) -> Result<[usize; 3], ModelError> {
        match self.shape {
            [h, w, c] => Ok([*h, *w, *c]),
            s => Err(self.err_at_type(format!(
                "a {} layer takes an image [height, width, channels], but {} is shaped {s:?}",
                self.lf.kind.value, self.from
            ))),
        }
    }
}

/// The kind with its indefinite article: `a conv2d`, `an add`.
pub(crate) fn a_kind(kind: &str) -> String {
    a(kind)
}

/// The kind with its indefinite article: `a conv2d`, `an add`.
fn a(kind: &str) -> String {
    let an = kind.starts_with(['a', 'e', 'i', 'o', 'u']);
    format!("{} {kind}", if an { "an" } else { "a" })
}

/// `a`, `a or b`, `a, b or c`, with backquotes.
fn list(items: &[&str]) -> String {
    let q: Vec<String> = items.iter().map(|s| format!("`{s}`")).collect();
    match q.len() {
        0 => "nothing".into(),
        1 => q[0].clone(),
        n => format!("{} or {}", q[..n - 1].join(", "), q[n - 1]),
    }
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

/// One parameter tensor of a layer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TensorSpec {
    /// Its key in the weights archive, after `<layer>/` (`w`, `b`, ...).
    pub key: &'static str,
    /// What it is, plural, as the model file's `trainable:` names it
    /// (`weights`, `biases`, ...).
    pub role: &'static str,
    /// Its shape in the archive (C order).
    pub shape: Vec<usize>,
    /// The format of every value.
    pub format: Format,
    /// True if it is retrained on the device.
    pub trainable: bool,
    /// The codes a trained value is clamped to (ES, on the host and in the
    /// hardware): by default the format's ([`crate::train::order::clamp_range`]);
    /// a kind narrows it where its arithmetic needs it (`dense_int8`'s
    /// biases: no int32 accumulator may overflow).
    pub range: (i128, i128),
}

impl TensorSpec {
    /// The tensor `key` (`role`) of `shape` in `format`, clamped to the
    /// format's range when trained.
    pub fn new(key: &'static str, role: &'static str, shape: Vec<usize>, format: Format, trainable: bool) -> TensorSpec {
        TensorSpec { key, role, shape, format, trainable, range: crate::train::order::clamp_range(&format) }
    }

    /// Number of values.
    pub fn len(&self) -> usize {
        self.shape.iter().product()
    }

    /// True if the tensor holds no value.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Gradients and the values they refer to, for one layer of
/// quantization-aware training (see [`LayerKind::backward`]).
#[derive(Debug)]
pub struct Backward<'a> {
    /// The layer's input, real values.
    pub x: &'a [f32],
    /// The layer's quantized parameters as real values, one vector per tensor.
    pub params: &'a [Vec<f32>],
    /// The loss gradient with respect to the layer's output (after the
    /// straight-through mask).
    pub delta: &'a [f32],
    /// Where the parameter gradients are added, one vector per tensor.
    pub grads: &'a mut [Vec<f32>],
    /// Whether the gradient with respect to the input is wanted.
    pub want_input: bool,
}

/// What the simulator needs of a layer kind.
pub trait LayerKind: std::fmt::Debug {
    /// The model file's `type` of the kind.
    fn type_name(&self) -> &'static str;

    /// A short description of shape and operation for summaries
    /// (`dense 784x200`).
    fn describe(&self) -> String;

    /// Number of input values.
    fn input_len(&self) -> usize;

    /// Number of output values.
    fn output_len(&self) -> usize {
        self.output_shape().iter().product()
    }

    /// The shape of the output: `[n]`, or an image `[h, w, c]` (streamed
    /// pixel by pixel in row-major order, a pixel's channels together:
    /// docs/hardware.md, "Streams").
    fn output_shape(&self) -> Vec<usize>;

    /// The format of every output value.
    fn output_format(&self) -> Format;

    /// The lowest output code the layer can produce (above the format's
    /// lowest where the activation clips, e.g. 0 after a ReLU). By
    /// default the lowest code the output format holds exactly.
    fn output_floor(&self) -> i128 {
        self.output_format().lossless_min_raw()
    }

    /// Whether quantization-aware training's straight-through estimator
    /// stops the gradient where an output sits at a bound of its format
    /// (true for kinds that quantize their result; false for kinds that
    /// only move codes, such as pooling and flatten).
    fn ste_mask(&self) -> bool {
        true
    }

    /// The parameter tensors, in the order of [`LayerParams::tensors`] and of
    /// training (`docs/training.md`, "Order of the trainable parameters").
    /// By default none (a kind that only moves codes).
    fn tensors(&self) -> Vec<TensorSpec> {
        Vec::new()
    }

    /// Multiply-accumulates per inference (by default none).
    fn macs(&self) -> u64 {
        0
    }

    /// The exact forward pass on raw codes: `x` in `input_format`, the
    /// result in [`LayerKind::output_format`]. Callers guarantee that `x`
    /// has [`LayerKind::input_len`] values and `p` the kind's tensors.
    fn forward(&self, input_format: Format, p: &LayerParams, x: &[i128]) -> Vec<i128>;

    /// Recomputes the outputs `outputs` (sorted, unique) of `out`, which
    /// holds the layer's outputs for `x` under other parameters: exactly
    /// the values [`LayerKind::forward`] gives for those outputs.
    fn recompute(&self, input_format: Format, p: &LayerParams, x: &[i128], outputs: &[usize], out: &mut [i128]);

    /// Appends to `out` the outputs that value `index` of tensor `tensor`
    /// enters (for the cached evaluator: only they change when it does).
    /// By default none: a kind without tensors is never asked.
    fn affected(&self, _tensor: usize, _index: usize, _out: &mut Vec<usize>) {}

    /// The float reference in `f64`: the layer on real values with no
    /// quantization between operations; `params` are the parameters' real
    /// values, one vector per tensor.
    fn forward_f64(&self, params: &[Vec<f64>], x: &[f64]) -> Vec<f64>;

    /// The float reference in `f32`, operation for operation as
    /// [`LayerKind::forward_f64`].
    fn forward_f32(&self, params: &[Vec<f32>], x: &[f32]) -> Vec<f32>;

    /// Quantization-aware training's backward pass through the layer:
    /// adds the parameter gradients into `b.grads` and returns the
    /// gradient with respect to the input (empty if not `b.want_input`).
    fn backward(&self, b: Backward<'_>) -> Vec<f32>;

    /// The real value of one code of each parameter of tensor `tensor`
    /// relative to its format's value, for quantization-aware training's
    /// step sizes (a step of `lr` in real units is `lr / scale` in the
    /// format's units); `None` when the format's value is the real value
    /// (every `ap_fixed` kind). `dense_int8`: `s_w[c]` for weights,
    /// `s_in * s_w[c]` for biases.
    fn param_scales(&self, _tensor: usize) -> Option<Vec<f32>> {
        None
    }

    /// The real value of output code `code`: by default the output format's
    /// value; an int8 kind's `(code - z_out) * s_out`.
    fn output_real(&self, code: i128) -> f64 {
        self.output_format().to_f64(code)
    }

    /// The largest output code: the upper bound of quantization-aware
    /// training's straight-through mask (by default the output format's
    /// `max_raw`; an int8 layer's activation clamp).
    fn output_ceiling(&self) -> i128 {
        self.output_format().max_raw()
    }

    /// The initial master values of quantization-aware training, one vector
    /// per tensor, drawn from `draw(bound)` (a uniform value in `±bound`).
    /// By default none (no tensors).
    fn init_masters(&self, _draw: &mut dyn FnMut(f32) -> f32) -> Vec<Vec<f32>> {
        Vec::new()
    }

    /// The layer's formats by the model file's `precision:` names
    /// (`weight`, `bias`, `accum`, `output`, ...), for summaries. By
    /// default the output format alone.
    fn formats(&self) -> Vec<(&'static str, Format)> {
        vec![("output", self.output_format())]
    }

    /// The folding, as `check` prints it (`pe/simd`; by default `-`).
    fn folding(&self) -> String {
        "-".into()
    }

    /// The layer's activation, if it has one (by default none).
    fn activation(&self) -> Option<Activation> {
        None
    }

    /// The affine int8 quantization of the layer's output, for an int8
    /// kind (`dense_int8`, `requantize`); `None` for `ap_fixed` kinds.
    fn output_quantization(&self) -> Option<Affine> {
        None
    }

    /// The affine int8 quantization the layer expects of its input, for an
    /// int8 kind; `None` for `ap_fixed` kinds.
    fn input_quantization(&self) -> Option<Affine> {
        None
    }

    /// Checks parameter codes beyond their formats (e.g. int8 weight codes
    /// in `-127..=127`): `Err((tensor, index, message))` names the first
    /// value at fault by its tensor's position in [`LayerKind::tensors`]
    /// and its flat (C order) index. The default accepts every code.
    fn check_params(&self, _p: &LayerParams) -> Result<(), (usize, usize, String)> {
        Ok(())
    }
}
