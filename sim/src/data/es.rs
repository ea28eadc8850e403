//! Training data of the on-device evolution-strategies trainer (`fptgen
//! train-es`, `fptgen sweep --data`): an `.npz` archive of float inputs
//! `x` and float targets `t` and/or integer class `labels`, read as raw
//! codes of the model's formats; the training buffer (its first M
//! samples); and the accuracy of a network on the labelled samples.
//!
//! Every problem with the archive is a [`TensorError`] naming the file,
//! the array and, where one value is at fault, its index.

use std::collections::BTreeMap;
use std::path::Path;

use crate::fixed::Format;
use crate::layers::dense_int8::Affine;
use crate::model::{Model, Rule, Training};
use crate::network::{Network, SimError};
use crate::qat::argmax;
use crate::tensor::{self, unravel, Array, Values};
use crate::train::feedback::{feedback_layers, Feedback};
use crate::train::{Buffer, TrainError};
use crate::{Error, ModelError, TensorError};

/// The training data: every sample's raw input codes and raw target codes,
/// and the class labels when the archive has them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Data {
    /// Raw codes of the input format, one vector per sample.
    pub inputs: Vec<Vec<i128>>,
    /// Raw codes of the output format, one vector per sample.
    pub targets: Vec<Vec<i128>>,
    /// Class index per sample, if the archive has `labels`.
    pub labels: Option<Vec<usize>>,
}

/// Why the training buffer could not be made from the data.
#[derive(Debug, thiserror::Error)]
pub enum BufferError {
    /// The data holds fewer samples than the buffer (the error names `x`).
    #[error(transparent)]
    TooFew(#[from] TensorError),
    /// The trainer refused the samples.
    #[error(transparent)]
    Train(#[from] TrainError),
}

/// The model's `training:` section, or the error for a model without one.
pub fn training_section(model: &Model) -> Result<Training, ModelError> {
    model.training.ok_or_else(|| {
        ModelError::whole(
            &model.source,
            "the model file has no `training:` section; add one to train (see docs/training.md)",
        )
    })
}

/// Reads the training data archive: `x` (float inputs `[S, ...input
/// shape]` or `[S, inputs]`, converted to the input format with its
/// quantization and overflow modes), and `t` (float targets `[S, outputs]`)
/// or `labels` (integer class indices, one per sample; one-hot targets 1.0/0.0) or
/// both (then `t` are the targets and `labels` only score accuracy).
///
/// For an int8 output (a `dense_int8` or `requantize` last layer), `x` and
/// `t` hold int8 codes (the real value of an `ap_fixed<8,8>` code is the
/// code) and the one-hot targets of `labels` are the codes of 1.0 and 0.0
/// in the output's affine quantization.
///
/// Targets are converted to the output format with its quantization mode; a
/// target outside the format's range is an error rather than wrapped or
/// saturated. `meta/...` arrays are ignored; any other array is an error.
pub fn read_data(model: &Model, path: &Path) -> Result<Data, Error> {
    let arrays = tensor::read_npz(path)?;
    Ok(from_arrays(model, path, arrays)?)
}

/// Refuses `data` for `training` when it cannot serve the rule: DRTP's
/// feedback to a hidden layer is a projection of the label (the target
/// class), so a hidden layer trained by DRTP needs `labels` in the archive
/// at `path`; float targets alone (a regression) have none. The error is
/// located at the model file's `rule:` when the file gives one.
pub fn check_for_rule(model: &Model, training: &Training, data: &Data, path: &Path) -> Result<(), ModelError> {
    let hidden_drtp = training.rule == Rule::Drtp
        && feedback_layers(model, training).map(|ls| ls.iter().any(|l| l.feedback == Feedback::Drtp)).unwrap_or(false);
    if !hidden_drtp || data.labels.is_some() {
        return Ok(());
    }
    let msg = format!(
        "rule drtp projects the target class, but {} has no 'labels' array (class indices); add them, or use rule dfa or sgm, which take the targets",
        path.display()
    );
    Err(match model.rule_at {
        Some(at) => ModelError::at(&model.source, at, msg),
        None => ModelError::whole(&model.source, msg),
    })
}

/// The training data in `arrays`, as [`read_data`] reads them from the
/// archive at `path` (which the errors name).
pub fn from_arrays(model: &Model, path: &Path, mut arrays: BTreeMap<String, Array>) -> Result<Data, TensorError> {
    let n_in = model.input_len();
    let n_out = model.output_len();
    let x = arrays.remove("x").ok_or_else(|| {
        TensorError::tensor(path, "x", format!("is missing from the archive; it holds the input samples [S, {n_in}]"))
    })?;
    let per_sample_ok = x.shape.len() >= 2
        && (x.shape[1..] == model.input_shape[..] || (x.shape.len() == 2 && x.shape[1] == n_in));
    if !per_sample_ok {
        return Err(TensorError::tensor(
            path,
            "x",
            format!("has shape {:?}; expected [S, {n_in}] or [S, {:?}] for model '{}'", x.shape, model.input_shape, model.name),
        ));
    }
    let s = x.shape[0];
    if s == 0 {
        return Err(TensorError::tensor(path, "x", "holds no samples"));
    }
    let xv = floats(path, "x", &x)?;
    let mut inputs = Vec::with_capacity(s);
    for (si, chunk) in xv.chunks(n_in).enumerate() {
        let mut raw = Vec::with_capacity(n_in);
        for (i, &v) in chunk.iter().enumerate() {
            let r = model.input_format.quantize_f64(v).map_err(|e| {
                TensorError::value(path, "x", unravel(si * n_in + i, &x.shape), format!("value {v}: {e}"))
            })?;
            raw.push(r);
        }
        inputs.push(raw);
    }
    let labels = match arrays.remove("labels") {
        None => None,
        Some(a) => Some(read_labels(path, &a, s, n_out)?),
    };
    let out = model.output_format();
    let targets = match arrays.remove("t") {
        Some(t) => read_targets(path, &t, s, n_out, out)?,
        None => {
            let Some(labels) = &labels else {
                return Err(TensorError::file(
                    path,
                    format!("has neither 't' (float targets [S, {n_out}]) nor 'labels' (integer class indices [S])"),
                ));
            };
            match model.layers.last().and_then(|l| l.kind().output_quantization()) {
                Some(q) => one_hot_int8(labels, n_out, q),
                None => one_hot(path, labels, n_out, out)?,
            }
        }
    };
    if let Some(extra) = arrays.keys().find(|k| !k.starts_with("meta/")) {
        return Err(TensorError::tensor(path, extra, "is not a training data array; expected x, t and/or labels (and meta/...)"));
    }
    Ok(Data { inputs, targets, labels })
}

/// One-hot targets of class `labels` as raw codes of `model`'s output
/// (as `from_arrays` makes them from a `labels` array); `path` names the
/// data in errors.
pub fn label_targets(model: &Model, path: &Path, labels: &[usize]) -> Result<Vec<Vec<i128>>, TensorError> {
    let n_out = model.output_len();
    match model.layers.last().and_then(|l| l.kind().output_quantization()) {
        Some(q) => Ok(one_hot_int8(labels, n_out, q)),
        None => one_hot(path, labels, n_out, model.output_format()),
    }
}

/// The float targets `t` of `s` samples of `n_out` outputs as raw codes
/// of the output format `out`.
fn read_targets(path: &Path, t: &Array, s: usize, n_out: usize, out: Format) -> Result<Vec<Vec<i128>>, TensorError> {
    if t.shape != [s, n_out] {
        return Err(TensorError::tensor(path, "t", format!("has shape {:?}; expected [{s}, {n_out}] (samples of x, outputs)", t.shape)));
    }
    let tv = floats(path, "t", t)?;
    let mut targets = Vec::with_capacity(s);
    for (si, chunk) in tv.chunks(n_out).enumerate() {
        let mut raw = Vec::with_capacity(n_out);
        for (o, &v) in chunk.iter().enumerate() {
            let r = target_code(out, v).map_err(|m| TensorError::value(path, "t", vec![si, o], m))?;
            raw.push(r);
        }
        targets.push(raw);
    }
    Ok(targets)
}

/// One-hot targets of `labels`: 1.0 at the label's output, 0.0 elsewhere,
/// as raw codes of the output format.
fn one_hot(path: &Path, labels: &[usize], n_out: usize, out: Format) -> Result<Vec<Vec<i128>>, TensorError> {
    let one = target_code(out, 1.0).map_err(|m| {
        TensorError::tensor(path, "labels", format!("one-hot targets need 1.0 in the output format, but {m}; give float targets in 't' instead"))
    })?;
    let zero = target_code(out, 0.0).map_err(|m| TensorError::tensor(path, "labels", format!("one-hot targets need 0.0: {m}")))?;
    Ok(labels.iter().map(|&l| (0..n_out).map(|o| if o == l { one } else { zero }).collect()).collect())
}

/// One-hot targets of `labels` for an int8 output quantized by `q`: the
/// codes of the real values 1.0 and 0.0, `clamp(round(1 / s) + z)` and `z`
/// (ties away from zero, as TFLite quantizes).
fn one_hot_int8(labels: &[usize], n_out: usize, q: Affine) -> Vec<Vec<i128>> {
    let z = i128::from(q.zero_point());
    let one = ((1.0 / f64::from(q.scale())).round() as i128).saturating_add(z).clamp(-128, 127);
    labels.iter().map(|&l| (0..n_out).map(|o| if o == l { one } else { z }).collect()).collect()
}

/// An array's float values, or an error naming it.
fn floats<'a>(path: &Path, name: &str, a: &'a Array) -> Result<&'a [f64], TensorError> {
    match &a.values {
        Values::Float(v) => {
            if let Some(i) = v.iter().position(|x| !x.is_finite()) {
                return Err(TensorError::value(path, name, unravel(i, &a.shape), format!("value {} is not finite", v[i])));
            }
            Ok(v)
        }
        Values::Int(_) => {
            Err(TensorError::tensor(path, name, format!("has integer type {}; give float32 or float64 values", a.dtype)))
        }
    }
}

/// A target value as a raw code of the output format `f`: quantized with
/// its quantization mode; out of its range is an error.
fn target_code(f: Format, v: f64) -> Result<i128, String> {
    let c = f.convert_f64(v).map_err(|e| format!("value {v}: {e}"))?;
    if c.overflowed {
        return Err(format!(
            "value {v} is outside the range of the output format {f} [{}, {}]",
            f.to_decimal(f.lossless_min_raw()),
            f.to_decimal(f.max_raw())
        ));
    }
    Ok(c.raw)
}

/// The class labels of `s` samples: integers below `n_out`.
fn read_labels(path: &Path, a: &Array, s: usize, n_out: usize) -> Result<Vec<usize>, TensorError> {
    if a.shape != [s] {
        return Err(TensorError::tensor(path, "labels", format!("has shape {:?}; expected [{s}] (one class index per sample of x)", a.shape)));
    }
    let Values::Int(v) = &a.values else {
        return Err(TensorError::tensor(path, "labels", format!("has float type {}; labels must be integer class indices", a.dtype)));
    };
    v.iter()
        .enumerate()
        .map(|(i, &l)| {
            usize::try_from(l).ok().filter(|&l| l < n_out).ok_or_else(|| {
                TensorError::value(path, "labels", vec![i], format!("class {l} is not an output index (0 to {})", n_out - 1))
            })
        })
        .collect()
}

/// The training buffer: the first `m` samples of `data` (read from
/// `data_path`), or an error naming `x` if there are fewer.
pub fn buffer(model: &Model, m: usize, data: &Data, data_path: &Path) -> Result<Buffer, BufferError> {
    if data.inputs.len() < m {
        return Err(TensorError::tensor(
            data_path,
            "x",
            format!("holds {} samples but the training buffer needs {m} (training: buffer)", data.inputs.len()),
        )
        .into());
    }
    Ok(Buffer::new(model, data.inputs[..m].to_vec(), data.targets[..m].to_vec())?)
}

/// Correct argmax predictions of `net` on all samples, and the number of
/// samples, when there are labels. The argmax is over raw output codes; a
/// tie goes to the lowest index.
pub fn accuracy(net: &Network, data: &Data) -> Result<Option<(usize, usize)>, SimError> {
    let Some(labels) = &data.labels else {
        return Ok(None);
    };
    let outs = net.infer_batch(&data.inputs)?;
    let right = outs.iter().zip(labels).filter(|(y, &l)| argmax(y) == Some(l)).count();
    Ok(Some((right, labels.len())))
}

/// Correct over all, as a fraction (0 for no samples).
pub fn ratio((right, total): (usize, usize)) -> f64 {
    right as f64 / total.max(1) as f64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::weights::{LayerParams, Params};

    /// The tiny example: 2 inputs in ap_fixed<8,3> (steps of 1/32,
    /// truncated, wrapped), one dense layer to 2 outputs in
    /// ap_fixed<8,3,AP_RND_CONV,AP_SAT> (-4 to 3.96875), relu; its training
    /// section (buffer 4) only if `training`.
    fn model(training: bool) -> Model {
        let yaml = include_str!("../../../examples/tiny/model.yaml");
        let mut m = crate::model::parse(yaml, Path::new("tiny.yaml")).expect("valid model");
        if !training {
            m.training = None;
        }
        m
    }

    fn floats(shape: &[usize], v: &[f64]) -> Array {
        Array { shape: shape.to_vec(), values: Values::Float(v.to_vec()), dtype: "<f8".into() }
    }

    fn ints(shape: &[usize], v: &[i128]) -> Array {
        Array { shape: shape.to_vec(), values: Values::Int(v.to_vec()), dtype: "<i8".into() }
    }

    /// Reads `arrays` as the archive `d.npz`.
    fn read(arrays: Vec<(&str, Array)>) -> Result<Data, TensorError> {
        let map = arrays.into_iter().map(|(k, a)| (k.to_string(), a)).collect();
        from_arrays(&model(true), Path::new("d.npz"), map)
    }

    /// Two samples, (0.5, -1.25) and (0.51, 5.0).
    fn x() -> Array {
        floats(&[2, 2], &[0.5, -1.25, 0.51, 5.0])
    }

    fn message(r: Result<Data, TensorError>) -> String {
        r.expect_err("refused").to_string()
    }

    #[test]
    fn targets_from_t_and_inputs_in_the_input_format() {
        let d = read(vec![("x", x()), ("t", floats(&[2, 2], &[1.0, 0.25, -4.0, 3.96875])), ("meta/seed", ints(&[1], &[7]))])
            .expect("valid");
        // 0.5 and -1.25 are 16 and -40 32nds; 0.51 truncates to 16; 5.0
        // (160) wraps to 160 - 256.
        assert_eq!(d.inputs, [vec![16, -40], vec![16, -96]]);
        assert_eq!(d.targets, [vec![32, 8], vec![-128, 127]]);
        assert_eq!(d.labels, None);
    }

    #[test]
    fn targets_from_labels_are_one_hot() {
        let d = read(vec![("x", x()), ("labels", ints(&[2], &[1, 0]))]).expect("valid");
        assert_eq!(d.targets, [vec![0, 32], vec![32, 0]]);
        assert_eq!(d.labels, Some(vec![1, 0]));
    }

    #[test]
    fn with_t_and_labels_t_are_the_targets() {
        let d = read(vec![("x", x()), ("t", floats(&[2, 2], &[0.5, 0.5, 0.0, 0.0])), ("labels", ints(&[2], &[0, 1]))])
            .expect("valid");
        assert_eq!(d.targets, [vec![16, 16], vec![0, 0]]);
        assert_eq!(d.labels, Some(vec![0, 1]));
    }

    #[test]
    fn x_is_required() {
        assert_eq!(
            message(read(vec![("labels", ints(&[2], &[0, 1]))])),
            "d.npz: tensor 'x': is missing from the archive; it holds the input samples [S, 2]"
        );
    }

    #[test]
    fn x_of_the_wrong_shape_is_refused() {
        for shape in [vec![4], vec![2, 3], vec![1, 2, 2]] {
            let n: usize = shape.iter().product();
            let e = message(read(vec![("x", floats(&shape, &vec![0.0; n])), ("labels", ints(&[shape[0]], &vec![0; shape[0]]))]));
            let dims = shape.iter().map(|d| d.to_string()).collect::<Vec<_>>().join(", ");
            assert_eq!(e, format!("d.npz: tensor 'x': has shape [{dims}]; expected [S, 2] or [S, [2]] for model 'tiny'"));
        }
    }

    #[test]
    fn x_without_samples_is_refused() {
        assert_eq!(message(read(vec![("x", floats(&[0, 2], &[])), ("labels", ints(&[0], &[]))])), "d.npz: tensor 'x': holds no samples");
    }

    #[test]
    fn x_must_be_finite_floats() {
        let e = message(read(vec![("x", floats(&[2, 2], &[0.0, 0.0, f64::NAN, 0.0])), ("labels", ints(&[2], &[0, 1]))]));
        assert_eq!(e, "d.npz: tensor 'x' at index [1, 0]: value NaN is not finite");
        let e = message(read(vec![("x", ints(&[2, 2], &[0, 0, 1, 1])), ("labels", ints(&[2], &[0, 1]))]));
        assert_eq!(e, "d.npz: tensor 'x': has integer type <i8; give float32 or float64 values");
    }

    #[test]
    fn labels_must_be_output_indices() {
        let e = message(read(vec![("x", x()), ("labels", ints(&[2], &[0, 2]))]));
        assert_eq!(e, "d.npz: tensor 'labels' at index [1]: class 2 is not an output index (0 to 1)");
        let e = message(read(vec![("x", x()), ("labels", ints(&[2], &[-1, 0]))]));
        assert_eq!(e, "d.npz: tensor 'labels' at index [0]: class -1 is not an output index (0 to 1)");
    }

    #[test]
    fn labels_must_be_one_integer_per_sample() {
        let e = message(read(vec![("x", x()), ("labels", ints(&[3], &[0, 1, 0]))]));
        assert_eq!(e, "d.npz: tensor 'labels': has shape [3]; expected [2] (one class index per sample of x)");
        let e = message(read(vec![("x", x()), ("labels", floats(&[2], &[0.0, 1.0]))]));
        assert_eq!(e, "d.npz: tensor 'labels': has float type <f8; labels must be integer class indices");
    }

    #[test]
    fn targets_must_fit_the_output_format() {
        let e = message(read(vec![("x", x()), ("t", floats(&[2, 2], &[0.0, 0.0, 0.0, 4.0]))]));
        assert_eq!(
            e,
            "d.npz: tensor 't' at index [1, 1]: value 4 is outside the range of the output format \
             ap_fixed<8,3,AP_RND_CONV,AP_SAT> [-4, 3.96875]"
        );
        let e = message(read(vec![("x", x()), ("t", floats(&[2, 3], &[0.0; 6]))]));
        assert_eq!(e, "d.npz: tensor 't': has shape [2, 3]; expected [2, 2] (samples of x, outputs)");
    }

    #[test]
    fn targets_or_labels_are_required() {
        assert_eq!(
            message(read(vec![("x", x())])),
            "d.npz: has neither 't' (float targets [S, 2]) nor 'labels' (integer class indices [S])"
        );
    }

    #[test]
    fn other_arrays_are_refused() {
        let e = message(read(vec![("x", x()), ("labels", ints(&[2], &[0, 1])), ("y", ints(&[2], &[0, 1]))]));
        assert_eq!(e, "d.npz: tensor 'y': is not a training data array; expected x, t and/or labels (and meta/...)");
    }

    #[test]
    fn a_missing_archive_names_the_file() {
        let e = read_data(&model(true), Path::new("/nonexistent/d.npz")).expect_err("no file");
        assert!(e.to_string().starts_with("/nonexistent/d.npz: "), "{e}");
    }

    #[test]
    fn the_training_section_is_required() {
        assert_eq!(training_section(&model(true)).expect("section").buffer, 4);
        assert_eq!(
            training_section(&model(false)).expect_err("none").to_string(),
            "tiny.yaml: the model file has no `training:` section; add one to train (see docs/training.md)"
        );
    }

    #[test]
    fn the_buffer_is_the_first_m_samples() {
        let m = model(true);
        let d = read(vec![("x", x()), ("labels", ints(&[2], &[1, 0]))]).expect("valid");
        assert!(buffer(&m, 2, &d, Path::new("d.npz")).is_ok());
        assert!(buffer(&m, 1, &d, Path::new("d.npz")).is_ok(), "fewer samples than there are is fine");
        let e = buffer(&m, 4, &d, Path::new("d.npz")).expect_err("too few");
        assert_eq!(e.to_string(), "d.npz: tensor 'x': holds 2 samples but the training buffer needs 4 (training: buffer)");
    }

    #[test]
    fn accuracy_counts_argmax_hits_ties_to_the_lowest_index() {
        let m = model(true);
        // Identity weights (1.0 is 64 in ap_fixed<8,2>), no biases: the
        // outputs are relu of the inputs.
        let params = Params { layers: vec![LayerParams { tensors: vec![vec![64, 0, 0, 64], vec![0, 0]] }] };
        let net = Network::new(m.clone(), params).expect("net");
        // (0.5, 0.25): 0; (-1, 0.5): 1; (1, 1): a tie, 0.
        let x = floats(&[3, 2], &[0.5, 0.25, -1.0, 0.5, 1.0, 1.0]);
        let d = from_arrays(&m, Path::new("d.npz"), [("x".to_string(), x), ("labels".to_string(), ints(&[3], &[0, 1, 1]))].into())
            .expect("valid");
        assert_eq!(accuracy(&net, &d).expect("runs"), Some((2, 3)));
        let unlabelled = Data { labels: None, ..d };
        assert_eq!(accuracy(&net, &unlabelled).expect("runs"), None);
    }

    #[test]
    fn ratios() {
        for (counts, want) in [((2, 4), 0.5), ((3, 3), 1.0), ((0, 0), 0.0)] {
            assert_eq!(ratio(counts), want, "{counts:?}");
        }
    }
}
