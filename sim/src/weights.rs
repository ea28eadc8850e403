//! A model's parameters: loading them from the weights archive, checking
//! each value against its declared format, and making seeded random ones.
//!
//! The archive is a numpy `.npz` with one array per tensor of every layer,
//! named `<layer>/<key>` (a dense layer: `w` shaped `[outputs, inputs]` and
//! `b` shaped `[outputs]`; see each kind's tensors), float32 or float64
//! values. Arrays whose names start with `meta/` are ignored (fptgen
//! records the seed of random weights there); any other unexpected array is an
//! error, so a misspelled tensor name cannot go unnoticed.
//!
//! A layer lowered at load (`type: add`, [`crate::model::Lowered`]) has
//! constant tensors that fptgen generates: they are not read, not drawn by
//! [`random`] and not written by [`save`]. An archive may still hold them
//! (an export of the lowered network), but then with exactly the generated
//! values; any other value is an error naming the tensor.
//!
//! The parts of a layer split at load (`max_channels`,
//! [`crate::model::PartOf`]) read, draw and write the original layer's
//! whole tensors: each part is its slice of them
//! ([`crate::model::PartOf::whole_index`]); the zero bias of a part of a
//! later input group is a constant, neither read nor written.

use std::path::Path;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::error::{Error, TensorError};
use crate::fixed::Format;
use crate::model::Model;
use crate::tensor::{self, unravel, Array, NamedArray, OutValues, Values};

/// Raw codes of one layer's parameters: one vector per tensor of its kind
/// ([`crate::layers::LayerKind::tensors`], in that order; none for a kind
/// without parameters), each in C order in its tensor's format.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct LayerParams {
    /// The tensors' codes.
    pub tensors: Vec<Vec<i128>>,
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
    from_arrays(model, path, tensor::read_npz(path)?, conversion)
}

/// Converts the arrays of an archive (as [`tensor::read_npz`] returns them)
/// into parameters for `model`, exactly as [`load_from`] does; `path` names
/// the archive in errors. `fptgen import` uses it on the archive it is about
/// to write.
pub fn from_arrays(
    model: &Model,
    path: &Path,
    mut arrays: std::collections::BTreeMap<String, Array>,
    conversion: Conversion,
) -> Result<Params, Error> {
    let mut layers = Vec::new();
    // The whole tensors of split layers, by archive name.
    let mut whole: std::collections::HashMap<String, Vec<i128>> = std::collections::HashMap::new();
    for layer in &model.layers {
        if let Some(c) = &layer.lowered {
            // Generated at load, not read; an archive that holds the
            // tensors anyway (an export of the lowered network) must hold
            // exactly these values.
            for (t, want) in layer.kind().tensors().iter().zip(&c.params.tensors) {
                let name = layer.tensor_name(t.key);
                if arrays.contains_key(&name) {
                    let a = take(&mut arrays, path, &name, &t.shape)?;
                    let got = convert(path, &name, &a, t.format, Conversion::Exact)?;
                    if let Some(i) = got.iter().zip(want).position(|(g, w)| g != w) {
                        return Err(TensorError::value(
                            path,
                            &name,
                            unravel(i, &t.shape),
                            format!(
                                "is {} but layer '{}' is made by fptgen at load (lowered from {}), its tensors are fixed ({} here); \
                                 remove the tensor from the archive",
                                t.format.to_f64(got[i]),
                                layer.name,
                                c.from,
                                t.format.to_f64(want[i])
                            ),
                        )
                        .into());
                    }
                }
            }
            layers.push(c.params.clone());
            continue;
        }
        let mut tensors = Vec::new();
        for (ti, t) in layer.kind().tensors().into_iter().enumerate() {
            let (name, shape) = layer.archive_tensor(ti, &t);
            let Some(part) = &layer.part_of else {
                let a = take(&mut arrays, path, &name, &shape)?;
                tensors.push(convert(path, &name, &a, t.format, conversion)?);
                continue;
            };
            // A part of a split layer: its slice of the original tensor.
            if layer.is_constant(ti) {
                tensors.push(vec![0; t.len()]);
                continue;
            }
            if !whole.contains_key(&name) {
                let a = take(&mut arrays, path, &name, &shape)?;
                whole.insert(name.clone(), convert(path, &name, &a, t.format, conversion)?);
            }
            let all = &whole[&name];
            tensors.push((0..t.len()).map(|i| part.whole_index(ti, &t.shape, i).map_or(0, |j| all[j])).collect());
        }
        let lp = LayerParams { tensors };
        if let Err((ti, i, message)) = layer.kind().check_params(&lp) {
            let specs = layer.kind().tensors();
            let (name, shape) = layer.archive_tensor(ti, &specs[ti]);
            return Err(TensorError::value(path, &name, unravel(i, &shape), message).into());
        }
        layers.push(lp);
    }
    if let Some(extra) = arrays.keys().find(|k| !k.starts_with("meta/")) {
        let mut expected: Vec<String> = model
            .layers
            .iter()
            .filter(|l| l.lowered.is_none())
            .flat_map(|l| l.kind().tensors().into_iter().enumerate().map(move |(i, t)| l.archive_tensor(i, &t).0))
            .collect();
        expected.dedup();
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
/// Each value is drawn uniformly from the codes of its format within
/// ±sqrt(6 / (inputs + outputs)) of its layer (Glorot-uniform bounds,
/// clipped to the format's range; at least ±one step so no layer is all
/// zero) for a layer's first tensor (its weights), and within ±one eighth
/// of that bound for the others (biases). The stream is ChaCha8 seeded with
/// `seed`, one draw per value in archive order (layer by layer, tensor by
/// tensor, C order), so equal seeds give equal bits. A lowered layer gets
/// its constants and takes no draw.
pub fn random(model: &Model, seed: u64) -> Params {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    // The whole tensors of the split layer being drawn.
    let mut whole: Vec<Vec<i128>> = Vec::new();
    let layers = model
        .layers
        .iter()
        .map(|l| {
            if let Some(c) = &l.lowered {
                return c.params.clone();
            }
            let k = l.kind();
            let Some(part) = &l.part_of else {
                let bound = (6.0 / (k.input_len() + k.output_len()) as f64).sqrt();
                let tensors = k
                    .tensors()
                    .iter()
                    .enumerate()
                    .map(|(i, t)| {
                        let b = if i == 0 { bound } else { bound / 8.0 };
                        (0..t.len()).map(|_| draw(&mut rng, t.format, b)).collect()
                    })
                    .collect();
                return LayerParams { tensors };
            };
            // A part of a split layer: the first part draws the original
            // layer's whole tensors, as the unsplit layer would; every part
            // takes its slice.
            let specs = k.tensors();
            if part.is_first() {
                let wholes: Vec<Vec<usize>> = specs.iter().enumerate().map(|(i, t)| part.whole_shape(i, &t.shape)).collect();
                let out_len = k.output_len() / specs[0].shape[0] * part.total;
                let in_len = part.inputs.map_or(k.input_len(), |r| k.input_len() / r.count * r.total);
                let bound = (6.0 / (in_len + out_len) as f64).sqrt();
                whole = specs
                    .iter()
                    .zip(&wholes)
                    .enumerate()
                    .map(|(i, (t, shape))| {
                        let b = if i == 0 { bound } else { bound / 8.0 };
                        (0..shape.iter().product()).map(|_| draw(&mut rng, t.format, b)).collect()
                    })
                    .collect();
            }
            let tensors = specs
                .iter()
                .zip(&whole)
                .enumerate()
                .map(|(ti, (t, all))| (0..t.len()).map(|i| part.whole_index(ti, &t.shape, i).map_or(0, |j| all[j])).collect())
                .collect();
            LayerParams { tensors }
        })
        .collect();
    Params { layers }
}

/// The parameters of `model` taken from TFLite files: every layer with
/// parameters must be a `dense_int8` layer that names its operator
/// (`tflite:`), whose int8 weight and int32 bias codes it takes (a missing
/// bias is zeros). Errors name the file and tensor at fault, or the layer
/// that names no operator.
pub fn from_tflite(model: &Model) -> Result<Params, Error> {
    let mut layers = Vec::with_capacity(model.layers.len());
    for l in &model.layers {
        let p = match &l.op {
            crate::model::LayerOp::DenseInt8(d) if d.tflite.is_some() => d.tflite.as_ref().map(|t| t.params()).transpose()?.unwrap_or_default(),
            _ if l.kind().tensors().is_empty() => LayerParams::default(),
            _ => {
                return Err(crate::error::ModelError::whole(
                    &model.source,
                    format!("layer '{}' has parameters but names no TFLite operator (only dense_int8 layers with `tflite:` do)", l.name),
                )
                .into())
            }
        };
        if let Err((t, i, message)) = l.kind().check_params(&p) {
            let specs = l.kind().tensors();
            return Err(TensorError::value(&model.source, &l.tensor_name(specs[t].key), unravel(i, &specs[t].shape), message).into());
        }
        layers.push(p);
    }
    Ok(Params { layers })
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
    for (layer, p) in model.layers.iter().zip(&params.layers).filter(|(l, _)| l.lowered.is_none()) {
        for (ti, (t, raw)) in layer.kind().tensors().iter().zip(&p.tensors).enumerate() {
            if layer.is_constant(ti) {
                continue;
            }
            let (name, shape) = layer.archive_tensor(ti, t);
            // A part of a split layer writes its slice of the original
            // tensor, which the first part creates.
            let at = |i: usize| layer.part_of.as_ref().map_or(Some(i), |part| part.whole_index(ti, &t.shape, i));
            let k = match arrays.iter().position(|(n, _, _)| *n == name) {
                Some(k) => k,
                None => {
                    let len = shape.iter().product();
                    arrays.push((name.clone(), shape.clone(), vec![0.0; len]));
                    arrays.len() - 1
                }
            };
            let values = &mut arrays[k].2;
            let fmt = t.format;
            for (i, &r) in raw.iter().enumerate() {
                let Some(j) = at(i) else { continue };
                let x = fmt.to_f64(r);
                if fmt.exact_f64(x).ok() != Some(r) {
                    return Err(TensorError::value(path, &name, unravel(j, &shape), format!("raw code {r} of {fmt} has no exact float64 value")).into());
                }
                values[j] = x;
            }
        }
    }
    let mut arrays: Vec<NamedArray> =
        arrays.into_iter().map(|(name, shape, values)| NamedArray { name, shape, values: OutValues::F64(values) }).collect();
    arrays.extend(meta.iter().cloned());
    tensor::write_npz(path, &arrays)
}
