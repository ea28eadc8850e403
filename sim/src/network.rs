//! The bit-accurate inference simulator: the executable specification of the
//! hardware's arithmetic.
//!
//! A network runs its layers in order (the model file's order, a
//! topological order of its graph), each on the gather of its inputs
//! ([`crate::model::Gather`]) with its kind's exact forward pass ([`crate::layers`]; a dense layer's arithmetic is specified in
//! [`crate::layers::dense`] and `docs/numerics.md`).

use rayon::prelude::*;

use crate::fast::kernel::{byte_range, extend_i64};
use crate::fast::{i64_range, FastDense};
use crate::fixed::Format;
use crate::layers::dense::Narrow;
use crate::model::{LayerOp, Model, Source};
use crate::weights::Params;

pub use crate::layers::dense::{
    dense_forward, dense_neuron, dense_neuron_reference, dot_product_bits, exact_accumulation, exact_product_shift,
};

/// Samples per task of [`Network::infer_batch`]'s batched path.
const CHUNK: usize = 64;

/// Why a simulator call was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SimError {
    /// Parameters do not match the model's shapes.
    #[error("layer '{layer}': {what} has {got} values but the model needs {want}")]
    ParamShape {
        /// Layer name.
        layer: String,
        /// The tensor's role ("weights", "biases", ...) or "tensors".
        what: &'static str,
        /// Values given.
        got: usize,
        /// Values needed.
        want: usize,
    },
    /// A raw parameter code is outside its format.
    #[error("layer '{layer}': {what}[{index}] = {raw} is not a code of {format}")]
    ParamRange {
        /// Layer name.
        layer: String,
        /// The tensor's role ("weights", "biases", ...).
        what: &'static str,
        /// Flat index.
        index: usize,
        /// The code.
        raw: i128,
        /// The format.
        format: Format,
    },
    /// A layer kind refuses a parameter code ([`crate::layers::LayerKind::check_params`]).
    #[error("layer '{layer}': {what}[{index}]: {message}")]
    Param {
        /// Layer name.
        layer: String,
        /// The tensor's role ("weights", "biases", ...).
        what: &'static str,
        /// Flat index.
        index: usize,
        /// What is wrong.
        message: String,
    },
    /// An input vector has the wrong length.
    #[error("input sample {sample} has {got} values but the network takes {want}")]
    InputLen {
        /// Sample number.
        sample: usize,
        /// Values given.
        got: usize,
        /// Values needed.
        want: usize,
    },
    /// The network's codes do not all fit `i64`, which
    /// [`Network::infer_rows`] needs.
    #[error("the network's codes do not all fit 64 bits: run it with infer_batch")]
    Wide,
    /// A raw input code is outside the input format.
    #[error("input sample {sample}, value {index}: raw code {raw} is not a code of {format}")]
    InputRange {
        /// Sample number.
        sample: usize,
        /// Index within the sample.
        index: usize,
        /// The code.
        raw: i128,
        /// The input format.
        format: Format,
    },
}

/// A model with its parameters, ready to run.
#[derive(Debug, Clone)]
pub struct Network {
    model: Model,
    params: Params,
    /// Per layer, a dense layer's `i32` fast path when [`Narrow::new`] applies.
    narrow: Vec<Option<Narrow>>,
    /// Per layer, a dense layer's batched path when [`FastDense::new`] applies.
    fast: Vec<Option<FastDense>>,
    /// Every activation's codes fit `i64`, so batches run layer by layer
    /// on `i64` matrices.
    batched: bool,
    /// Per layer, the last layer that reads its output ([`Model::last_use`]).
    last_use: Vec<usize>,
}

impl Network {
    /// Pairs a model with parameters, checking their shapes and codes.
    pub fn new(model: Model, params: Params) -> Result<Network, SimError> {
        if params.layers.len() != model.layers.len() {
            return Err(SimError::ParamShape {
                layer: model.name.clone(),
                what: "weights",
                got: params.layers.len(),
                want: model.layers.len(),
            });
        }
        for (layer, p) in model.layers.iter().zip(&params.layers) {
            let specs = layer.kind().tensors();
            if p.tensors.len() != specs.len() {
                return Err(SimError::ParamShape { layer: layer.name.clone(), what: "tensors", got: p.tensors.len(), want: specs.len() });
            }
            for (t, vals) in specs.iter().zip(&p.tensors) {
                let (what, want, fmt) = (t.role, t.len(), t.format);
                if vals.len() != want {
                    return Err(SimError::ParamShape { layer: layer.name.clone(), what, got: vals.len(), want });
                }
                if let Some((index, &raw)) = vals.iter().enumerate().find(|(_, &r)| !fmt.contains_raw(r)) {
                    return Err(SimError::ParamRange { layer: layer.name.clone(), what, index, raw, format: fmt });
                }
            }
            if let Err((t, index, message)) = layer.kind().check_params(p) {
                return Err(SimError::Param { layer: layer.name.clone(), what: specs[t].role, index, message });
            }
        }
        let narrow = model
            .layers
            .iter()
            .zip(&params.layers)
            .map(|(layer, p)| match &layer.op {
                LayerOp::Dense(d) => Narrow::new(d, layer.input_format, p),
                _ => None,
            })
            .collect();
        let fast = model
            .layers
            .iter()
            .zip(&params.layers)
            .map(|(layer, p)| match &layer.op {
                LayerOp::Dense(d) => FastDense::new(d, layer.input_format, p, true),
                _ => None,
            })
            .collect();
        let batched = i64_range(model.input_format).is_some()
            && model.layers.iter().all(|l| i64_range(l.kind().output_format()).is_some());
        let last_use = model.last_use();
        Ok(Network { model, params, narrow, fast, batched, last_use })
    }

    /// Per layer, the kernel of its batched path ([`Network::infer_batch`]),
    /// or `None` where the layer runs sample by sample.
    pub fn batch_kernels(&self) -> Vec<Option<crate::fast::kernel::Kernel>> {
        self.fast.iter().map(|f| if self.batched { f.as_ref().map(FastDense::kernel) } else { None }).collect()
    }

    /// Layer `l` on one sample, its one-sample path.
    fn layer_forward(&self, l: usize, x: &[i128]) -> Vec<i128> {
        let (layer, p) = (&self.model.layers[l], &self.params.layers[l]);
        match (&self.narrow[l], &layer.op) {
            (Some(n), LayerOp::Dense(d)) => n.forward(d, p, x),
            _ => layer.kind().forward(layer.input_format, p, x),
        }
    }

    /// The network on `m` samples of checked input codes, layer by layer on
    /// `i64` matrices: batched layers in one product, the others sample by
    /// sample. Every layer's matrix is kept until its last reader has run; a
    /// layer with several inputs gets their rows gathered. Returns the
    /// output rows, row-major.
    fn run_rows(&self, rows: Rows<'_>, m: usize) -> Vec<i64> {
        let layers = &self.model.layers;
        let last_use = &self.last_use;
        let (mut bytes, mut input) = match rows {
            Rows::Bytes(b) => (Some(b), Vec::new()),
            Rows::Codes(v) => (None, v),
        };
        let mut acts: Vec<Vec<i64>> = vec![Vec::new(); layers.len()];
        let mut input_last = 0;
        for (l, layer) in layers.iter().enumerate() {
            if layer.inputs.contains(&Source::Input) {
                input_last = l;
            }
        }
        for (l, layer) in layers.iter().enumerate() {
            // Byte codes go to a dense layer's kernel as they are.
            if let (Some(b), [Source::Input], Some(f)) = (bytes, layer.inputs.as_slice(), &self.fast[l]) {
                if let Some(y) = f.forward_u8(b, m) {
                    acts[l] = y;
                    continue;
                }
            }
            if layer.inputs.contains(&Source::Input) {
                if let Some(b) = bytes.take() {
                    input = b.iter().map(|&v| i64::from(v)).collect();
                }
            }
            let n_out: usize = layer.kind().output_shape().iter().product();
            let width = layer.gather.len();
            // The layer's input matrix: a source read for the last time is
            // moved, not copied.
            let x: Vec<i64> = match layer.inputs.as_slice() {
                [Source::Input] if input_last == l => std::mem::take(&mut input),
                [Source::Input] => input.clone(),
                [Source::Layer(j)] if last_use[*j] == l => std::mem::take(&mut acts[*j]),
                [Source::Layer(j)] => acts[*j].clone(),
                many => {
                    let mut x = Vec::with_capacity(m * width);
                    for r in 0..m {
                        let parts: Vec<&[i64]> = many
                            .iter()
                            .zip(&layer.gather.widths)
                            .map(|(s, &w)| {
                                let len = w * layer.gather.pixels;
                                match s {
                                    Source::Input => &input[r * len..(r + 1) * len],
                                    Source::Layer(j) => &acts[*j][r * len..(r + 1) * len],
                                }
                            })
                            .collect();
                        x.extend(layer.gather.gather(&parts));
                    }
                    x
                }
            };
            acts[l] = match &self.fast[l] {
                Some(f) => f.forward(x, m),
                None => {
                    let mut next = Vec::with_capacity(m * n_out);
                    for row in x.chunks_exact(width.max(1)).take(m) {
                        let x: Vec<i128> = row.iter().map(|&v| i128::from(v)).collect();
                        next.extend(self.layer_forward(l, &x).iter().map(|&v| v as i64));
                    }
                    next
                }
            };
        }
        acts.pop().unwrap_or_default()
    }

    /// The model.
    pub fn model(&self) -> &Model {
        &self.model
    }

    /// The parameters.
    pub fn params(&self) -> &Params {
        &self.params
    }

    /// The model and its parameters, taken apart.
    pub fn into_parts(self) -> (Model, Params) {
        (self.model, self.params)
    }

    /// Checks that `input` is one sample of raw input codes.
    pub fn check_input(&self, sample: usize, input: &[i128]) -> Result<(), SimError> {
        let want = self.model.input_len();
        if input.len() != want {
            return Err(SimError::InputLen { sample, got: input.len(), want });
        }
        let f = self.model.input_format;
        if let Some((index, &raw)) = input.iter().enumerate().find(|(_, &r)| !f.contains_raw(r)) {
            return Err(SimError::InputRange { sample, index, raw, format: f });
        }
        Ok(())
    }

    /// Runs one sample (raw codes of the input format) and returns the raw
    /// codes of every layer's output, input to output.
    pub fn trace(&self, input: &[i128]) -> Result<Vec<Vec<i128>>, SimError> {
        self.trace_to(input, self.model.layers.len())
    }

    /// [`Network::trace`] of the first `layers` layers only (all of them
    /// when `layers` exceeds their number).
    pub fn trace_to(&self, input: &[i128], layers: usize) -> Result<Vec<Vec<i128>>, SimError> {
        self.check_input(0, input)?;
        let layers = layers.min(self.model.layers.len());
        let mut outs: Vec<Vec<i128>> = Vec::with_capacity(layers);
        for l in 0..layers {
            let y = {
                let x = self.model.layer_input(l, |s| match s {
                    Source::Input => input,
                    Source::Layer(j) => &outs[j],
                });
                self.layer_forward(l, &x)
            };
            outs.push(y);
        }
        Ok(outs)
    }

    /// Runs one sample and returns the raw codes of the network's output.
    pub fn infer(&self, input: &[i128]) -> Result<Vec<i128>, SimError> {
        Ok(self.trace(input)?.pop().unwrap_or_default())
    }

    /// Runs many samples in parallel (rayon); the result for each sample is
    /// the same as [`Network::infer`]'s. Samples go in chunks of 64 through
    /// the layers, each dense layer that qualifies ([`FastDense`]) as one
    /// exact integer matrix product per chunk (`crate::fast`).
    pub fn infer_batch(&self, inputs: &[Vec<i128>]) -> Result<Vec<Vec<i128>>, SimError> {
        if !self.batched {
            let outs: Vec<Result<Vec<i128>, SimError>> = inputs
                .par_iter()
                .enumerate()
                .map(|(s, x)| {
                    self.check_input(s, x)?;
                    self.infer(x)
                })
                .collect();
            return outs.into_iter().collect();
        }
        let n_in = self.model.input_len();
        let width = self.model.output_len();
        // Chunks checked and run in parallel; the first error in sample
        // order is the one reported, as a sequential check would.
        let chunks: Vec<Result<Vec<Vec<i128>>, SimError>> = inputs
            .par_chunks(CHUNK)
            .enumerate()
            .map(|(c, chunk)| {
                let mut codes: Vec<i64> = Vec::with_capacity(chunk.len() * n_in);
                for (s, x) in chunk.iter().enumerate() {
                    self.check_input(c * CHUNK + s, x)?;
                    extend_i64(x, &mut codes);
                }
                let out = self.run_rows(Rows::Codes(codes), chunk.len());
                Ok(out.chunks_exact(width.max(1)).take(chunk.len()).map(|r| r.iter().map(|&v| i128::from(v)).collect()).collect())
            })
            .collect();
        let mut outs = Vec::with_capacity(inputs.len());
        for c in chunks {
            outs.extend(c?);
        }
        Ok(outs)
    }

    /// Runs a batch of input codes ([`CodeRows`]: whole samples of
    /// [`Model::input_len`] codes, row-major) on the path its type takes:
    /// byte codes through [`Network::infer_rows`] (a first dense layer's
    /// 8-bit kernel), `i64` codes the same way, wider codes one vector per
    /// sample through [`Network::infer_batch`]; a network whose codes do
    /// not all fit `i64` takes the last path whatever the type. Returns the
    /// output codes row-major ([`Model::output_len`] per sample): on every
    /// path the codes [`Network::infer`] gives for each sample. Errors as
    /// [`Network::check_input`]'s, naming the first bad sample.
    pub fn infer_code_rows(&self, rows: &CodeRows) -> Result<Vec<i128>, SimError> {
        let wide = |v: Vec<i64>| v.into_iter().map(i128::from).collect();
        match rows {
            CodeRows::Bytes(b) if self.batched => self.infer_rows(b).map(wide),
            CodeRows::I64(v) if self.batched => self.infer_rows(v).map(wide),
            _ => {
                let n_in = self.model.input_len().max(1);
                let samples: Vec<Vec<i128>> = (0..rows.len() / n_in).map(|s| (s * n_in..(s + 1) * n_in).map(|k| rows.get(k)).collect()).collect();
                Ok(self.infer_batch(&samples)?.concat())
            }
        }
    }

    /// Runs the samples of a row-major matrix of input codes (`x` holds
    /// whole samples of [`Model::input_len`] codes each, in any integer
    /// type of up to 64 bits) in parallel, and returns the output codes as
    /// a row-major matrix ([`Model::output_len`] per sample): the same codes
    /// as [`Network::infer_batch`], without a vector per sample. Byte codes
    /// (`u8`) go to a first dense layer's 8-bit kernel as they are.
    ///
    /// Errors: a partial last sample ([`SimError::InputLen`]), a code
    /// outside the input format (the first in sample order), or a network
    /// whose codes do not all fit `i64` ([`SimError::Wide`]; use
    /// [`Network::infer_batch`]).
    pub fn infer_rows<T: InputCode>(&self, x: &[T]) -> Result<Vec<i64>, SimError> {
        if !self.batched {
            return Err(SimError::Wide);
        }
        let n_in = self.model.input_len();
        if n_in == 0 || !x.len().is_multiple_of(n_in) {
            return Err(SimError::InputLen { sample: x.len() / n_in.max(1), got: x.len() % n_in.max(1), want: n_in });
        }
        let (lo, hi) = i64_range(self.model.input_format).ok_or(SimError::Wide)?;
        let f = self.model.input_format;
        let chunks: Vec<Result<Vec<i64>, SimError>> = x
            .par_chunks(CHUNK * n_in)
            .enumerate()
            .map(|(c, rows)| {
                let m = rows.len() / n_in;
                // A fold the compiler vectorizes; the position only on failure.
                let (min, max) = T::range(rows);
                let bad = min < lo || max > hi;
                if let Some(k) = rows.iter().position(|&v| bad && !(lo..=hi).contains(&v.to_i64())) {
                    let raw = i128::from(rows[k].to_i64());
                    return Err(SimError::InputRange { sample: c * CHUNK + k / n_in, index: k % n_in, raw, format: f });
                }
                Ok(match T::as_bytes(rows) {
                    Some(b) => self.run_rows(Rows::Bytes(b), m),
                    None => self.run_rows(Rows::Codes(rows.iter().map(|&v| v.to_i64()).collect()), m),
                })
            })
            .collect();
        let mut outs = Vec::with_capacity(x.len() / n_in * self.model.output_len());
        for c in chunks {
            outs.extend(c?);
        }
        Ok(outs)
    }
}

/// A batch of input codes as one row-major matrix, in the narrowest type
/// that holds them ([`Network::infer_code_rows`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CodeRows {
    /// Every code in `0..=255`.
    Bytes(Vec<u8>),
    /// Every code within `i64`.
    I64(Vec<i64>),
    /// Any code.
    I128(Vec<i128>),
}

impl CodeRows {
    /// The codes in the narrowest type that holds all of them.
    pub fn narrowest(codes: Vec<i128>) -> CodeRows {
        if codes.iter().all(|&c| (0..=255).contains(&c)) {
            return CodeRows::Bytes(codes.into_iter().map(|c| c as u8).collect());
        }
        if codes.iter().all(|&c| i64::try_from(c).is_ok()) {
            return CodeRows::I64(codes.into_iter().map(|c| c as i64).collect());
        }
        CodeRows::I128(codes)
    }

    /// Float values converted to codes of `format` with its quantization
    /// and overflow modes ([`Format::quantize_f64`]), in parallel, straight
    /// into the type the format's codes need (bytes for an unsigned format
    /// of at most 8 bits). Errors name the first non-finite value's index.
    pub fn quantize(format: Format, values: &[f64]) -> Result<CodeRows, (usize, String)> {
        let mut b = QuantizedRows::new(format);
        b.push(values)?;
        Ok(b.finish())
    }

    /// The number of codes.
    pub fn len(&self) -> usize {
        match self {
            CodeRows::Bytes(v) => v.len(),
            CodeRows::I64(v) => v.len(),
            CodeRows::I128(v) => v.len(),
        }
    }

    /// True if there are no codes.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Codes `range` as a batch of their own (copied).
    pub fn slice(&self, range: std::ops::Range<usize>) -> CodeRows {
        match self {
            CodeRows::Bytes(v) => CodeRows::Bytes(v[range].to_vec()),
            CodeRows::I64(v) => CodeRows::I64(v[range].to_vec()),
            CodeRows::I128(v) => CodeRows::I128(v[range].to_vec()),
        }
    }

    /// Code `k`.
    pub fn get(&self, k: usize) -> i128 {
        match self {
            CodeRows::Bytes(v) => i128::from(v[k]),
            CodeRows::I64(v) => i128::from(v[k]),
            CodeRows::I128(v) => v[k],
        }
    }
}

/// The input of [`Network::run_rows`]: `m` rows of codes.
enum Rows<'a> {
    /// Byte codes, as the caller gave them.
    Bytes(&'a [u8]),
    /// Codes as `i64`.
    Codes(Vec<i64>),
}

/// An integer type of input codes for [`Network::infer_rows`].
pub trait InputCode: Copy + Send + Sync + 'static {
    /// The code as `i64` (exact: every implementing type fits).
    fn to_i64(self) -> i64;
    /// The smallest and largest code as `i64` (`(i64::MAX, i64::MIN)` when empty).
    fn range(codes: &[Self]) -> (i64, i64) {
        codes.iter().fold((i64::MAX, i64::MIN), |(a, b), &v| (a.min(v.to_i64()), b.max(v.to_i64())))
    }
    /// The codes as bytes when `Self` is `u8`.
    fn as_bytes(codes: &[Self]) -> Option<&[u8]> {
        let _ = codes;
        None
    }
}

impl InputCode for u8 {
    fn to_i64(self) -> i64 {
        i64::from(self)
    }
    fn as_bytes(codes: &[u8]) -> Option<&[u8]> {
        Some(codes)
    }
    fn range(codes: &[u8]) -> (i64, i64) {
        if codes.is_empty() {
            return (i64::MAX, i64::MIN);
        }
        let (lo, hi) = byte_range(codes);
        (i64::from(lo), i64::from(hi))
    }
}

macro_rules! input_code {
    ($($t:ty),*) => {$(
        impl InputCode for $t {
            fn to_i64(self) -> i64 {
                i64::from(self)
            }
        }
    )*};
}
input_code!(i8, i16, u16, i32, u32, i64);

/// A [`CodeRows`] batch built from float values that arrive in pieces
/// (`fptgen simulate` quantizes a `.npy` file block by block as it reads
/// it): every piece converted to codes of one format, in the type that
/// format's codes need.
#[derive(Debug, Clone)]
pub struct QuantizedRows {
    format: Format,
    rows: CodeRows,
}

impl QuantizedRows {
    /// An empty batch of codes of `format`.
    pub fn new(format: Format) -> QuantizedRows {
        // Every code of the format is within [min_raw, max_raw].
        let (lo, hi) = (format.min_raw(), format.max_raw());
        let rows = if lo >= 0 && hi <= 255 {
            CodeRows::Bytes(Vec::new())
        } else if i64::try_from(lo).is_ok() && i64::try_from(hi).is_ok() {
            CodeRows::I64(Vec::new())
        } else {
            CodeRows::I128(Vec::new())
        };
        QuantizedRows { format, rows }
    }

    /// Appends `values` converted with the format's quantization and
    /// overflow modes ([`Format::quantize_f64_into`]), in parallel. Errors:
    /// the index within `values` of the first non-finite value (nothing of
    /// this piece is appended then).
    pub fn push(&mut self, values: &[f64]) -> Result<(), (usize, String)> {
        const CHUNK_VALUES: usize = 1 << 16;
        fn each<T: Send>(format: Format, values: &[f64], out: &mut Vec<T>, cast: impl Fn(i128) -> T + Sync) -> Result<(), (usize, String)> {
            let chunks: Vec<Result<Vec<T>, (usize, String)>> = values
                .par_chunks(CHUNK_VALUES)
                .enumerate()
                .map(|(c, xs)| {
                    let mut part = Vec::new();
                    format.quantize_f64_into(xs, &mut part, &cast).map_err(|(i, e)| (c * CHUNK_VALUES + i, e.to_string()))?;
                    Ok(part)
                })
                .collect();
            let parts = chunks.into_iter().collect::<Result<Vec<_>, _>>()?;
            out.reserve(values.len());
            for p in parts {
                out.extend(p);
            }
            Ok(())
        }
        // The casts cannot lose bits: `new` chose the type from the
        // format's range.
        match &mut self.rows {
            CodeRows::Bytes(v) => each(self.format, values, v, |c| c as u8),
            CodeRows::I64(v) => each(self.format, values, v, |c| c as i64),
            CodeRows::I128(v) => each(self.format, values, v, |c| c),
        }
    }

    /// The batch.
    pub fn finish(self) -> CodeRows {
        self.rows
    }
}

/// Converts float input values to raw codes of the model's input format,
/// with that format's quantization and overflow modes (as the sensor
/// interface would). Errors name the first non-finite value's index.
pub fn quantize_input(model: &Model, values: &[f64]) -> Result<Vec<i128>, (usize, String)> {
    values
        .iter()
        .enumerate()
        .map(|(i, &x)| model.input_format.quantize_f64(x).map_err(|e| (i, e.to_string())))
        .collect()
}
