//! Labelled classification data for host training and experiments: inputs
//! as raw codes of a model's input format, one class label per sample.
//!
//! A data directory holds either MNIST's four IDX files
//! (`train-images-idx3-ubyte[.gz]`, `train-labels-idx1-ubyte[.gz]`,
//! `t10k-images-idx3-ubyte[.gz]`, `t10k-labels-idx1-ubyte[.gz]`), or four
//! numpy arrays named as Keras's `mnist.load_data()` returns them:
//! `x_train.npy`, `y_train.npy`, `x_test.npy`, `y_test.npy`.
//!
//! Input values: an unsigned-byte array (every IDX image, or a `uint8`
//! `.npy`) holds bytes `b` that mean `b / 256`, the fraction of full scale
//! (exact in an 8-bit unsigned fraction format such as `ap_ufixed<8,0>`);
//! any other array holds real values. Either way a value becomes a raw code
//! of the model's input format with that format's quantization and overflow
//! modes, as `fptgen simulate` converts floats. Labels are integer class
//! indices below the model's number of outputs.

use std::path::{Path, PathBuf};

use crate::data::idx::{self, IdxArray, IdxError, IdxType};
use crate::model::Model;
use crate::tensor::{self, unravel, Array, Values};
use crate::{Error, TensorError};

/// Why a data directory could not be read.
#[derive(Debug, thiserror::Error)]
pub enum DataError {
    /// An IDX file is missing, unreadable or malformed.
    #[error(transparent)]
    Idx(#[from] IdxError),
    /// A `.npy` file is unreadable or malformed, or a value or label is bad
    /// (the error names the file, and the index where one value is at fault).
    #[error(transparent)]
    Tensor(#[from] Error),
    /// The directory holds neither data set.
    #[error("{}: no MNIST IDX files (train-images-idx3-ubyte[.gz], ...) and no x_train.npy, y_train.npy, x_test.npy, y_test.npy", dir.display())]
    Missing {
        /// The directory.
        dir: PathBuf,
    },
}

impl From<TensorError> for DataError {
    fn from(e: TensorError) -> Self {
        DataError::Tensor(e.into())
    }
}

/// Samples of one split: raw input codes and labels.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Dataset {
    /// Values per sample (the model's `input_len`).
    input_len: usize,
    /// Raw codes of the model's input format, sample after sample.
    codes: Vec<i128>,
    /// Class index per sample.
    labels: Vec<usize>,
}

impl Dataset {
    /// A data set from flat codes (`labels.len()` samples of `input_len`
    /// codes each). Returns `None` if the lengths disagree.
    pub fn new(input_len: usize, codes: Vec<i128>, labels: Vec<usize>) -> Option<Dataset> {
        (codes.len() == labels.len() * input_len).then_some(Dataset { input_len, codes, labels })
    }

    /// Number of samples.
    pub fn len(&self) -> usize {
        self.labels.len()
    }

    /// True when there are no samples.
    pub fn is_empty(&self) -> bool {
        self.labels.is_empty()
    }

    /// Input codes of sample `i` (panics if `i >= len()`).
    pub fn input(&self, i: usize) -> &[i128] {
        &self.codes[i * self.input_len..(i + 1) * self.input_len]
    }

    /// Label of sample `i` (panics if `i >= len()`).
    pub fn label(&self, i: usize) -> usize {
        self.labels[i]
    }

    /// All labels.
    pub fn labels(&self) -> &[usize] {
        &self.labels
    }

    /// Values per sample.
    pub fn input_len(&self) -> usize {
        self.input_len
    }

    /// Every sample's input codes, one vector per sample (for
    /// [`crate::network::Network::infer_batch`]).
    pub fn inputs(&self) -> Vec<Vec<i128>> {
        self.codes.chunks(self.input_len.max(1)).map(<[i128]>::to_vec).collect()
    }

    /// Samples `range` as a new data set (panics if out of bounds).
    pub fn slice(&self, range: std::ops::Range<usize>) -> Dataset {
        Dataset {
            input_len: self.input_len,
            codes: self.codes[range.start * self.input_len..range.end * self.input_len].to_vec(),
            labels: self.labels[range].to_vec(),
        }
    }

    /// Splits off the last `n` samples: `(first len - n, last n)`. Returns
    /// `None` if `n > len()`.
    pub fn split_last(&self, n: usize) -> Option<(Dataset, Dataset)> {
        let k = self.len().checked_sub(n)?;
        Some((self.slice(0..k), self.slice(k..self.len())))
    }
}

/// A data directory's training and test sets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Splits {
    /// The training set (`train-*` or `*_train.npy`).
    pub train: Dataset,
    /// The test set (`t10k-*` or `*_test.npy`).
    pub test: Dataset,
    /// Which files they came from, for messages.
    pub source: Source,
}

/// The kind of data directory that was read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// MNIST's IDX files.
    Idx,
    /// `x_train.npy` and its three companions.
    Npy,
}

/// Reads `dir` for `model`: MNIST's IDX files if present, else the four
/// `.npy` arrays. Every input sample must have the model's input length
/// (`[S, ...]` with the trailing dimensions multiplying to it); every label
/// must be below the model's number of outputs.
pub fn load_dir(model: &Model, dir: &Path) -> Result<Splits, DataError> {
    let has = |stem: &str| dir.join(stem).is_file() || dir.join(format!("{stem}.gz")).is_file();
    if has("train-images-idx3-ubyte") {
        let m = idx::read_mnist(dir)?;
        let train = from_idx(model, dir, &m.train_images, &m.train_labels, "train")?;
        let test = from_idx(model, dir, &m.test_images, &m.test_labels, "t10k")?;
        return Ok(Splits { train, test, source: Source::Idx });
    }
    let npy = ["x_train.npy", "y_train.npy", "x_test.npy", "y_test.npy"].map(|f| dir.join(f));
    if npy.iter().any(|p| p.is_file()) {
        let train = from_npy(model, &npy[0], &npy[1])?;
        let test = from_npy(model, &npy[2], &npy[3])?;
        return Ok(Splits { train, test, source: Source::Npy });
    }
    Err(DataError::Missing { dir: dir.to_path_buf() })
}

fn from_idx(model: &Model, dir: &Path, images: &IdxArray, labels: &IdxArray, stem: &str) -> Result<Dataset, DataError> {
    let path = dir.join(format!("{stem}-images-idx3-ubyte"));
    let arr = Array {
        shape: images.shape.clone(),
        values: Values::Int(images.values.iter().map(|&v| v as i128).collect()),
        dtype: "|u1".into(),
    };
    let codes = input_codes(model, &path, &arr, images.kind == IdxType::U8)?;
    let labels = labels.values.iter().map(|&v| v as usize).collect::<Vec<_>>();
    check_labels(model, &dir.join(format!("{stem}-labels-idx1-ubyte")), &labels)?;
    Ok(Dataset { input_len: model.input_len(), codes, labels })
}

fn from_npy(model: &Model, x_path: &Path, y_path: &Path) -> Result<Dataset, DataError> {
    let x = tensor::read_npy(x_path)?;
    let y = tensor::read_npy(y_path)?;
    let bytes = x.dtype.ends_with("u1");
    let codes = input_codes(model, x_path, &x, bytes)?;
    let n = x.shape[0];
    if y.shape != [n] {
        return Err(TensorError::file(y_path, format!("has shape {:?}; expected [{n}], one label per sample of {}", y.shape, x_path.display())).into());
    }
    let Values::Int(raw) = &y.values else {
        return Err(TensorError::file(y_path, format!("is {}; labels must be an integer array", y.dtype)).into());
    };
    let mut labels = Vec::with_capacity(n);
    for (i, &l) in raw.iter().enumerate() {
        let l = usize::try_from(l).map_err(|_| TensorError::value(y_path, "labels", vec![i], format!("label {l} is negative")))?;
        labels.push(l);
    }
    check_labels(model, y_path, &labels)?;
    Ok(Dataset { input_len: model.input_len(), codes, labels })
}

/// Converts an input array `[S, ...]` to raw codes; `bytes`: values are
/// bytes meaning `b / 256`.
fn input_codes(model: &Model, path: &Path, x: &Array, bytes: bool) -> Result<Vec<i128>, DataError> {
    let n_in = model.input_len();
    let per_sample: usize = x.shape.iter().skip(1).product();
    if x.shape.len() < 2 || per_sample != n_in || x.shape[0] == 0 {
        return Err(TensorError::file(
            path,
            format!("has shape {:?}; expected [S, ...] with S > 0 samples of {n_in} values (model '{}', input {:?})", x.shape, model.name, model.input_shape),
        )
        .into());
    }
    let value = |i: usize| -> f64 {
        match &x.values {
            Values::Float(v) => v[i],
            Values::Int(v) if bytes => v[i] as f64 / 256.0,
            Values::Int(v) => v[i] as f64,
        }
    };
    let f = model.input_format;
    (0..x.values.len())
        .map(|i| {
            let v = value(i);
            f.quantize_f64(v).map_err(|e| TensorError::value(path, "x", unravel(i, &x.shape), format!("value {v}: {e}")).into())
        })
        .collect()
}

fn check_labels(model: &Model, path: &Path, labels: &[usize]) -> Result<(), DataError> {
    let n_out = model.output_len();
    match labels.iter().position(|&l| l >= n_out) {
        Some(i) => Err(TensorError::value(path, "labels", vec![i], format!("label {} is not below the model's {n_out} outputs", labels[i])).into()),
        None => Ok(()),
    }
}
