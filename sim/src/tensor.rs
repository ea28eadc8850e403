//! Reading and writing numpy `.npy` arrays and `.npz` archives.
//!
//! Arrays come back in C (row-major) order whatever order the file used, as
//! either floating-point values or integers, so callers decide what a value
//! means. Writes never replace an existing file and never leave a partial one
//! (see [`crate::files::write_new`]).

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{self, Read, Seek, Write};
use std::path::Path;

use npyz::{DType, NpyFile, Order, TypeChar, WriterBuilder};

use crate::error::{Error, TensorError};

/// Values of an array, in C order.
#[derive(Debug, Clone, PartialEq)]
pub enum Values {
    /// From a float16/32/64 array (converted exactly to f64).
    Float(Vec<f64>),
    /// From a signed or unsigned integer array (any width up to 64 bits).
    Int(Vec<i128>),
}

impl Values {
    /// Number of values.
    pub fn len(&self) -> usize {
        match self {
            Values::Float(v) => v.len(),
            Values::Int(v) => v.len(),
        }
    }

    /// True if there are no values.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// An n-dimensional array read from a file.
#[derive(Debug, Clone, PartialEq)]
pub struct Array {
    /// Dimensions; empty for a scalar.
    pub shape: Vec<usize>,
    /// The values in C order.
    pub values: Values,
    /// numpy's type string, e.g. `<f4`, for messages.
    pub dtype: String,
}

/// Converts a flat C-order position into a multi-dimensional index.
pub fn unravel(mut flat: usize, shape: &[usize]) -> Vec<usize> {
    let mut idx = vec![0; shape.len()];
    for (d, &n) in shape.iter().enumerate().rev() {
        if n > 0 {
            idx[d] = flat % n;
            flat /= n;
        }
    }
    idx
}

fn to_c_order<T: Clone>(v: Vec<T>, shape: &[usize]) -> Vec<T> {
    if shape.len() < 2 {
        return v;
    }
    // In Fortran order the first index varies fastest.
    let n = v.len();
    let mut out = Vec::with_capacity(n);
    for flat in 0..n {
        let idx = unravel(flat, shape);
        let mut f = 0;
        for d in (0..shape.len()).rev() {
            f = f * shape[d] + idx[d];
        }
        out.push(v[f].clone());
    }
    out
}

fn read_array<R: Read>(npy: NpyFile<R>, file: &Path, name: Option<&str>) -> Result<Array, TensorError> {
    let mk = |m: String| match name {
        Some(t) => TensorError::tensor(file, t, m),
        None => TensorError::file(file, m),
    };
    let shape: Vec<usize> = npy.shape().iter().map(|&d| d as usize).collect();
    let order = npy.order();
    let dtype = npy.dtype();
    let ts = match &dtype {
        DType::Plain(ts) => ts.clone(),
        other => return Err(mk(format!("unsupported array type {}; expected a plain float or integer array", other.descr()))),
    };
    let descr = ts.to_string();
    let size = ts.size_field();
    let bad = |e: io::Error| mk(format!("cannot read the {descr} data: {e}"));
    let values = match (ts.type_char(), size) {
        (TypeChar::Float, 4) => Values::Float(npy.into_vec::<f32>().map_err(bad)?.into_iter().map(f64::from).collect()),
        (TypeChar::Float, 8) => Values::Float(npy.into_vec::<f64>().map_err(bad)?),
        (TypeChar::Int, 1) => Values::Int(npy.into_vec::<i8>().map_err(bad)?.into_iter().map(i128::from).collect()),
        (TypeChar::Int, 2) => Values::Int(npy.into_vec::<i16>().map_err(bad)?.into_iter().map(i128::from).collect()),
        (TypeChar::Int, 4) => Values::Int(npy.into_vec::<i32>().map_err(bad)?.into_iter().map(i128::from).collect()),
        (TypeChar::Int, 8) => Values::Int(npy.into_vec::<i64>().map_err(bad)?.into_iter().map(i128::from).collect()),
        (TypeChar::Uint, 1) => Values::Int(npy.into_vec::<u8>().map_err(bad)?.into_iter().map(i128::from).collect()),
        (TypeChar::Uint, 2) => Values::Int(npy.into_vec::<u16>().map_err(bad)?.into_iter().map(i128::from).collect()),
        (TypeChar::Uint, 4) => Values::Int(npy.into_vec::<u32>().map_err(bad)?.into_iter().map(i128::from).collect()),
        (TypeChar::Uint, 8) => Values::Int(npy.into_vec::<u64>().map_err(bad)?.into_iter().map(i128::from).collect()),
        _ => return Err(mk(format!("unsupported array type {descr}; expected float32, float64 or an integer type"))),
    };
    let expected: usize = shape.iter().product();
    if values.len() != expected {
        return Err(mk(format!("holds {} values but its shape {:?} needs {expected}", values.len(), shape)));
    }
    let values = if order == Order::Fortran {
        match values {
            Values::Float(v) => Values::Float(to_c_order(v, &shape)),
            Values::Int(v) => Values::Int(to_c_order(v, &shape)),
        }
    } else {
        values
    };
    Ok(Array { shape, values, dtype: descr })
}

/// Reads one `.npy` file.
pub fn read_npy(path: &Path) -> Result<Array, Error> {
    let f = open_file(path)?;
    let npy = NpyFile::new(io::BufReader::new(f))
        .map_err(|e| TensorError::file(path, format!("not a valid .npy file: {e}")))?;
    Ok(read_array(npy, path, None)?)
}

/// Opens a file to read, with a clear error for a directory.
fn open_file(path: &Path) -> Result<File, Error> {
    if path.is_dir() {
        return Err(TensorError::file(path, "is a directory, not a numpy file").into());
    }
    File::open(path).map_err(|e| Error::io(path, e))
}

/// Reads every array of a `.npz` archive, by name.
///
/// Every member is read to its end, so a member whose data does not match
/// its CRC-32 is an error (not only the bytes a parser happens to use), and
/// two members with the same name are an error (not "the later one wins").
pub fn read_npz(path: &Path) -> Result<BTreeMap<String, Array>, Error> {
    let f = open_file(path)?;
    let mut zip = zip::ZipArchive::new(io::BufReader::new(f))
        .map_err(|e| TensorError::file(path, format!("not a valid .npz archive (a zip file of .npy arrays): {e}")))?;
    let mut out = BTreeMap::new();
    for i in 0..zip.len() {
        let mut member = zip
            .by_index(i)
            .map_err(|e| TensorError::file(path, format!("member {i} of the archive cannot be read: {e}")))?;
        let member_name = member.name().to_string();
        let Some(name) = member_name.strip_suffix(".npy") else {
            if member.is_dir() {
                continue;
            }
            return Err(TensorError::file(path, format!("member '{member_name}' is not a .npy array")).into());
        };
        let name = name.to_string();
        let mut bytes = Vec::with_capacity(member.size().min(1 << 30) as usize);
        member
            .read_to_end(&mut bytes)
            .map_err(|e| TensorError::tensor(path, &name, format!("its data is corrupt: {e}")))?;
        if out.contains_key(&name) {
            return Err(TensorError::tensor(path, &name, "appears twice in the archive").into());
        }
        let npy = NpyFile::new(io::Cursor::new(bytes))
            .map_err(|e| TensorError::tensor(path, &name, format!("not a valid .npy array: {e}")))?;
        let arr = read_array(npy, path, Some(&name))?;
        out.insert(name, arr);
    }
    Ok(out)
}

/// An array to write: name, shape and C-order values.
#[derive(Debug, Clone, PartialEq)]
pub struct NamedArray {
    /// Name inside the archive.
    pub name: String,
    /// Dimensions.
    pub shape: Vec<usize>,
    /// Values in C order.
    pub values: OutValues,
}

/// Values to write, with their numpy type.
#[derive(Debug, Clone, PartialEq)]
pub enum OutValues {
    /// Written as `<f8`.
    F64(Vec<f64>),
    /// Written as `<i8`.
    I64(Vec<i64>),
    /// Written as `<u8`.
    U64(Vec<u64>),
}

fn write_npy_to<W: Write + Seek>(w: W, shape: &[usize], values: &OutValues) -> io::Result<()> {
    let shape: Vec<u64> = shape.iter().map(|&d| d as u64).collect();
    match values {
        OutValues::F64(v) => {
            let mut wr = npyz::WriteOptions::<f64>::new().default_dtype().shape(&shape).writer(w).begin_nd()?;
            wr.extend(v.iter().copied())?;
            wr.finish()
        }
        OutValues::I64(v) => {
            let mut wr = npyz::WriteOptions::<i64>::new().default_dtype().shape(&shape).writer(w).begin_nd()?;
            wr.extend(v.iter().copied())?;
            wr.finish()
        }
        OutValues::U64(v) => {
            let mut wr = npyz::WriteOptions::<u64>::new().default_dtype().shape(&shape).writer(w).begin_nd()?;
            wr.extend(v.iter().copied())?;
            wr.finish()
        }
    }
}

/// Writes one array as a new `.npy` file (see [`write_new`]).
pub fn write_npy(path: &Path, shape: &[usize], values: &OutValues) -> Result<(), Error> {
    let mut buf = io::Cursor::new(Vec::new());
    write_npy_to(&mut buf, shape, values).map_err(|e| Error::io(path, e))?;
    write_new(path, |mut f| f.write_all(buf.get_ref()).and_then(|()| f.sync_all()))
}

/// Writes arrays as a new `.npz` archive (see [`write_new`]).
pub fn write_npz(path: &Path, arrays: &[NamedArray]) -> Result<(), Error> {
    // The archive is assembled in memory, so the only write to the file
    // system is one plain write whose error (a full disk, a file-size
    // limit) is reported as it is.
    let bytes = npz_bytes(arrays).map_err(|e| Error::io(path, e))?;
    write_new(path, |mut f| f.write_all(&bytes).and_then(|()| f.sync_all()))
}

/// The bytes of an `.npz` archive holding `arrays`.
pub fn npz_bytes(arrays: &[NamedArray]) -> io::Result<Vec<u8>> {
    let mut zip = zip::ZipWriter::new(io::Cursor::new(Vec::new()));
    // A fixed timestamp (1980-01-01, zip's epoch): the same arrays give
    // the same bytes, whenever they are written.
    let opts = zip::write::FileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated)
        .last_modified_time(zip::DateTime::default());
    for a in arrays {
        zip.start_file(format!("{}.npy", a.name), opts)?;
        let mut buf = io::Cursor::new(Vec::new());
        write_npy_to(&mut buf, &a.shape, &a.values)?;
        zip.write_all(buf.get_ref())?;
    }
    Ok(zip.finish()?.into_inner())
}

pub use crate::files::write_new;
