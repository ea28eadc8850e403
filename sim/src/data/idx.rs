//! The IDX format of MNIST (LeCun et al.): a 4-byte magic number (two zero
//! bytes, a type code, the number of dimensions), one big-endian `u32` per
//! dimension, then the values in row-major order, big-endian. Files may be
//! gzip-compressed (recognized by their first two bytes, `1f 8b`).
//!
//! Every problem is an error that names the file and the byte offset (in
//! the uncompressed data): a bad magic number, an unsupported type, a
//! dimension of zero, too few bytes for the dimensions (a truncated file),
//! bytes after the data, or a corrupt gzip stream.

use std::io::Read;
use std::path::{Path, PathBuf};

/// Why an IDX file could not be read.
#[derive(Debug, thiserror::Error)]
pub enum IdxError {
    /// The file could not be opened or read.
    #[error("{}: {err}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The error.
        err: std::io::Error,
    },
    /// The contents are not a valid IDX file.
    #[error("{}: byte {offset}: {msg}", path.display())]
    Format {
        /// The file.
        path: PathBuf,
        /// Offset in the (uncompressed) data.
        offset: usize,
        /// What is wrong.
        msg: String,
    },
}

/// The element types of IDX (`0x08` .. `0x0E`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IdxType {
    /// `0x08`: unsigned byte.
    U8,
    /// `0x09`: signed byte.
    I8,
    /// `0x0B`: 16-bit signed integer.
    I16,
    /// `0x0C`: 32-bit signed integer.
    I32,
    /// `0x0D`: 32-bit float.
    F32,
    /// `0x0E`: 64-bit float.
    F64,
}

impl IdxType {
    fn from_code(c: u8) -> Option<IdxType> {
        Some(match c {
            0x08 => IdxType::U8,
            0x09 => IdxType::I8,
            0x0B => IdxType::I16,
            0x0C => IdxType::I32,
            0x0D => IdxType::F32,
            0x0E => IdxType::F64,
            _ => return None,
        })
    }

    /// Bytes per value.
    pub fn size(self) -> usize {
        match self {
            IdxType::U8 | IdxType::I8 => 1,
            IdxType::I16 => 2,
            IdxType::I32 | IdxType::F32 => 4,
            IdxType::F64 => 8,
        }
    }
}

/// An IDX array, its values widened to `f64` (exact for every IDX type).
#[derive(Debug, Clone, PartialEq)]
pub struct IdxArray {
    /// Element type in the file.
    pub kind: IdxType,
    /// Dimensions, outermost first.
    pub shape: Vec<usize>,
    /// Values, row-major.
    pub values: Vec<f64>,
}

impl IdxArray {
    /// The number of items (the first dimension).
    pub fn len(&self) -> usize {
        self.shape.first().copied().unwrap_or(0)
    }

    /// True if there are no items.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Values per item (the product of the other dimensions).
    pub fn item_len(&self) -> usize {
        self.shape.iter().skip(1).product()
    }
}

/// The most bytes of IDX data fptgen reads (1 GiB; MNIST's largest file
/// is 47 MB): a gzip-compressed file that would decompress to more, or a
/// raw file longer than this, is refused before more is held in memory.
pub const MAX_DECOMPRESSED: u64 = 1 << 30;

/// Reads an IDX file, raw or gzip-compressed.
pub fn read(path: &Path) -> Result<IdxArray, IdxError> {
    let io = |err| IdxError::Io { path: path.to_path_buf(), err };
    let mut raw = Vec::new();
    std::fs::File::open(path).and_then(|f| f.take(MAX_DECOMPRESSED + 1).read_to_end(&mut raw)).map_err(io)?;
    if raw.len() as u64 > MAX_DECOMPRESSED {
        return Err(IdxError::Format {
            path: path.to_path_buf(),
            offset: 0,
            msg: format!("is longer than {MAX_DECOMPRESSED} bytes (1 GiB, fptgen's budget for an IDX file)"),
        });
    }
    decode(path, &raw)
}

/// Parses the bytes of an IDX file, raw or gzip-compressed (`path` names
/// it in errors), within [`MAX_DECOMPRESSED`].
pub fn decode(path: &Path, raw: &[u8]) -> Result<IdxArray, IdxError> {
    let decompressed;
    let bytes = if raw.starts_with(&[0x1f, 0x8b]) {
        let mut out = Vec::new();
        flate2::read::GzDecoder::new(raw).take(MAX_DECOMPRESSED + 1).read_to_end(&mut out).map_err(|e| IdxError::Format {
            path: path.to_path_buf(),
            offset: out.len(),
            msg: format!("corrupt or truncated gzip data: {e}"),
        })?;
        if out.len() as u64 > MAX_DECOMPRESSED {
            return Err(IdxError::Format {
                path: path.to_path_buf(),
                offset: 0,
                msg: format!("decompresses to more than {MAX_DECOMPRESSED} bytes (1 GiB, fptgen's budget for an IDX file)"),
            });
        }
        decompressed = out;
        &decompressed[..]
    } else {
        raw
    };
    parse(bytes).map_err(|(offset, msg)| IdxError::Format { path: path.to_path_buf(), offset, msg })
}

/// Parses IDX bytes; an error is (offset, message).
pub fn parse(b: &[u8]) -> Result<IdxArray, (usize, String)> {
    if b.len() < 4 {
        return Err((b.len(), format!("{} bytes, too short for the 4-byte magic number", b.len())));
    }
    if b[0] != 0 || b[1] != 0 {
        return Err((0, format!("magic number starts {:02x} {:02x}, not 00 00: not an IDX file", b[0], b[1])));
    }
    let kind = IdxType::from_code(b[2]).ok_or((2, format!("type code 0x{:02x} is not an IDX type (08, 09, 0B, 0C, 0D, 0E)", b[2])))?;
    let ndim = usize::from(b[3]);
    if ndim == 0 {
        return Err((3, "zero dimensions".into()));
    }
    let header = 4 + 4 * ndim;
    if b.len() < header {
        return Err((b.len(), format!("truncated: the {ndim} dimensions need {header} header bytes, the file has {}", b.len())));
    }
    let mut shape = Vec::with_capacity(ndim);
    let mut count: usize = 1;
    for d in 0..ndim {
        let o = 4 + 4 * d;
        let n = u32::from_be_bytes([b[o], b[o + 1], b[o + 2], b[o + 3]]) as usize;
        if n == 0 {
            return Err((o, format!("dimension {d} is 0")));
        }
        count = count.checked_mul(n).ok_or((o, "the dimensions overflow".to_string()))?;
        shape.push(n);
    }
    let need = count.checked_mul(kind.size()).and_then(|n| n.checked_add(header)).ok_or((header, "the data size overflows".to_string()))?;
    if b.len() < need {
        return Err((b.len(), format!("truncated: shape {shape:?} needs {need} bytes, the file has {}", b.len())));
    }
    if b.len() > need {
        return Err((need, format!("{} bytes after the data of shape {shape:?}", b.len() - need)));
    }
    let data = &b[header..];
    let values: Vec<f64> = match kind {
        IdxType::U8 => data.iter().map(|&v| f64::from(v)).collect(),
        IdxType::I8 => data.iter().map(|&v| f64::from(v as i8)).collect(),
        IdxType::I16 => data.chunks_exact(2).map(|c| f64::from(i16::from_be_bytes([c[0], c[1]]))).collect(),
        IdxType::I32 => data.chunks_exact(4).map(|c| f64::from(i32::from_be_bytes([c[0], c[1], c[2], c[3]]))).collect(),
        IdxType::F32 => data.chunks_exact(4).map(|c| f64::from(f32::from_be_bytes([c[0], c[1], c[2], c[3]]))).collect(),
        IdxType::F64 => data
            .chunks_exact(8)
            .map(|c| f64::from_be_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]))
            .collect(),
    };
    Ok(IdxArray { kind, shape, values })
}

/// The four MNIST files of a directory (raw or `.gz`): training images and
/// labels, test images and labels.
#[derive(Debug, Clone, PartialEq)]
pub struct Mnist {
    /// 60,000 x 28 x 28 training images.
    pub train_images: IdxArray,
    /// 60,000 training labels.
    pub train_labels: IdxArray,
    /// 10,000 x 28 x 28 test images.
    pub test_images: IdxArray,
    /// 10,000 test labels.
    pub test_labels: IdxArray,
}

/// Reads MNIST from `dir` (`train-images-idx3-ubyte[.gz]` and so on) and
/// checks that images and labels agree: counts, 28 x 28 bytes, labels 0..9.
pub fn read_mnist(dir: &Path) -> Result<Mnist, IdxError> {
    let find = |stem: &str| -> Result<PathBuf, IdxError> {
        let raw = dir.join(stem);
        let gz = dir.join(format!("{stem}.gz"));
        if raw.is_file() {
            Ok(raw)
        } else if gz.is_file() {
            Ok(gz)
        } else {
            Err(IdxError::Io { path: gz, err: std::io::Error::new(std::io::ErrorKind::NotFound, format!("no {stem} or {stem}.gz in this directory")) })
        }
    };
    let load = |stem: &str, rank: usize| -> Result<(PathBuf, IdxArray), IdxError> {
        let p = find(stem)?;
        let a = read(&p)?;
        let bad = |msg: String| IdxError::Format { path: p.clone(), offset: 0, msg };
        if a.kind != IdxType::U8 || a.shape.len() != rank || (rank == 3 && a.shape[1..] != [28, 28]) {
            return Err(bad(format!("expected unsigned bytes of shape [N{}], found {:?} {:?}", if rank == 3 { ", 28, 28" } else { "" }, a.kind, a.shape)));
        }
        if rank == 1 {
            if let Some(i) = a.values.iter().position(|&v| v > 9.0) {
                return Err(IdxError::Format { path: p, offset: 8 + i, msg: format!("label {i} is {}, not a digit", a.values[i]) });
            }
        }
        Ok((p, a))
    };
    let (_, train_images) = load("train-images-idx3-ubyte", 3)?;
    let (tl, train_labels) = load("train-labels-idx1-ubyte", 1)?;
    let (_, test_images) = load("t10k-images-idx3-ubyte", 3)?;
    let (sl, test_labels) = load("t10k-labels-idx1-ubyte", 1)?;
    for (p, labels, images) in [(tl, &train_labels, &train_images), (sl, &test_labels, &test_images)] {
        if labels.len() != images.len() {
            return Err(IdxError::Format {
                path: p,
                offset: 4,
                msg: format!("{} labels for {} images", labels.len(), images.len()),
            });
        }
    }
    Ok(Mnist { train_images, train_labels, test_images, test_labels })
}
