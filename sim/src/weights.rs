//! A model's parameters: loading them from the weights archive, checking
//! each value against its declared format, and making seeded random ones.
//!
//! The archive is a numpy `.npz` with one array per tensor: `<layer>/w`
//! shaped `[outputs, inputs]` and `<layer>/b` shaped `[outputs]`, float32 or
//! float64 values. Arrays whose names start with `meta/` are ignored (fptgen
//! records the seed of random weights there); any other unexpected array is an
//! error, so a misspelled tensor name cannot go unnoticed.

use std::path::Path;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::error::{Error, TensorError};
use crate::fixed::Format;
use crate::model::Model;
use crate::tensor::{self, unravel, Array, NamedArray, OutValues, Values};

/// Raw codes of one layer's parameters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LayerParams {
    /// Weights in the layer's weight format, row-major `[outputs][inputs]`.
    pub weights: Vec<i128>,
    /// Biases in the layer's bias format, `[outputs]`.
    pub biases: Vec<i128>,
}

/// Raw codes of all of a model's parameters, one entry per layer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Params {
    /// Per layer, in model order.
    pub layers: Vec<LayerParams>,
}

/// What to do with a value that its format cannot represent exactly.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Conversion {
    /// Reject it, naming tensor and index (the default).
    #[default]
    Exact,
    /// Convert it with the format's own quantization and overflow modes.
    Quantize,
}

/// Loads the weights archive named by `model`.
pub fn load(model: &Model, conversion: Conversion) -> Result<Params, Error> {
    load_from(model, &model.weights_path, conversion)
}

/// Loads parameters for `model` from the archive at `path`.
pub fn load_from(model: &Model, path: &Path, conversion: Conversion) -> Result<Params, Error> {
    if !path.exists() {
        return Err(TensorError::file(
            path,
            format!("weights archive not found (named by {})", model.source.display()),
        )
        .into());
    }
    let mut arrays = tensor::read_npz(path)?;
    let mut layers = Vec::new();
    for layer in &model.layers {
        let d = layer.dense();
        let w = take(&mut arrays, path, &layer.weight_tensor(), &[d.outputs, d.inputs])?;
        let b = take(&mut arrays, path, &layer.bias_tensor(), &[d.outputs])?;
        layers.push(LayerParams {
            weights: convert(path, &layer.weight_tensor(), &w, d.precision.weight, conversion)?,
            biases: convert(path, &layer.bias_tensor(), &b, d.precision.bias, conversion)?,
        });
    }
    if let Some(extra) = arrays.keys().find(|k| !k.starts_with("meta/")) {
        let expected: Vec<String> =
            model.layers.iter().flat_map(|l| [l.weight_tensor(), l.bias_tensor()]).collect();
        return Err(TensorError::tensor(
            path,
            extra,
            format!("is not a tensor of this model; expected only {}", expected.join(", ")),
        )
        .into());
    }
    Ok(Params { layers })
}

fn take(
    arrays: &mut std::collections::BTreeMap<String, Array>,
    path: &Path,
    name: &str,
    shape: &[usize],
) -> Result<Array, Error> {
    let arr = arrays
        .remove(name)
        .ok_or_else(|| TensorError::tensor(path, name, "is missing from the archive"))?;
    if arr.shape != shape {
        return Err(TensorError::tensor(
            path,
            name,
            format!("has shape {:?} but the model needs {:?}", arr.shape, shape),
        )
        .into());
    }
    Ok(arr)
}

/// Converts an array's values to raw codes of `format`.
pub fn convert(path: &Path, name: &str, arr: &Array, format: Format, conversion: Conversion) -> Result<Vec<i128>, Error> {
    let Values::Float(values) = &arr.values else {
        return Err(TensorError::tensor(
            path,
            name,
            format!("has integer type {}; weights must be float32 or float64 values", arr.dtype),
        )
        .into());
    };
    let mut out = Vec::with_capacity(values.len());
    for (i, &x) in values.iter().enumerate() {
        let at = || unravel(i, &arr.shape);
        if !x.is_finite() {
            return Err(TensorError::value(path, name, at(), format!("value {x} is not finite")).into());
        }
        let raw = match conversion {
            Conversion::Quantize => format.quantize_f64(x).map_err(|e| TensorError::value(path, name, at(), e.to_string()))?,
            Conversion::Exact => format.exact_f64(x).map_err(|e| {
                TensorError::value(
                    path,
                    name,
                    at(),
                    format!("value {x} is not representable in {format}: {e} (pass --quantize to convert with the format's rounding and overflow modes)"),
                )
            })?,
        };
        out.push(raw);
    }
    Ok(out)
}

/// Seeded random parameters for `model`, for bring-up before training.
///
/// Each weight is drawn uniformly from the codes of its format within
/// ±sqrt(6 / (inputs + outputs)) (Glorot-uniform bounds, clipped to the
/// format's range; at least ±one step so no layer is all zero); biases are
/// drawn the same way within ±one eighth of that bound. The stream is
/// ChaCha8 seeded with `seed`, one draw per value in archive order (layer by
/// layer, weights row-major then biases), so equal seeds give equal bits.
pub fn random(model: &Model, seed: u64) -> Params {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let layers = model
        .layers
        .iter()
        .map(|l| {
            let d = l.dense();
            let bound = (6.0 / (d.inputs + d.outputs) as f64).sqrt();
            let weights = (0..d.macs()).map(|_| draw(&mut rng, d.precision.weight, bound)).collect();
            let biases = (0..d.outputs).map(|_| draw(&mut rng, d.precision.bias, bound / 8.0)).collect();
            LayerParams { weights, biases }
        })
        .collect();
    Params { layers }
}

fn draw(rng: &mut ChaCha8Rng, f: Format, bound: f64) -> i128 {
    let step = f.to_f64(1);
    let k = ((bound / step).floor() as i128).max(1);
    let lo = (-k).max(f.lossless_min_raw());
    let hi = k.min(f.max_raw());
    if lo >= hi {
        return lo;
    }
    rng.random_range(lo..=hi)
}

/// Writes `params` as a new weights archive for `model` at `path`
/// (float64 arrays; fails if a value needs more than 53 significant bits).
/// `meta` arrays (e.g. `meta/seed`) are written beside the tensors.
pub fn save(model: &Model, params: &Params, path: &Path, meta: &[NamedArray]) -> Result<(), Error> {
    let mut arrays = Vec::new();
    for (layer, p) in model.layers.iter().zip(&params.layers) {
        let d = layer.dense();
        for (name, shape, raw, fmt) in [
            (layer.weight_tensor(), vec![d.outputs, d.inputs], &p.weights, d.precision.weight),
            (layer.bias_tensor(), vec![d.outputs], &p.biases, d.precision.bias),
        ] {
            let mut values = Vec::with_capacity(raw.len());
            for (i, &r) in raw.iter().enumerate() {
                let x = fmt.to_f64(r);
                if fmt.exact_f64(x).ok() != Some(r) {
                    return Err(TensorError::value(path, &name, unravel(i, &shape), format!("raw code {r} of {fmt} has no exact float64 value")).into());
                }
                values.push(x);
            }
            arrays.push(NamedArray { name, shape, values: OutValues::F64(values) });
        }
    }
    arrays.extend(meta.iter().cloned());
    tensor::write_npz(path, &arrays)
}
